"""The per-fold statistics of a file with text columns, and the fold models they give.

:class:`TextFoldStatistics` is what :func:`nbcli.workflows.fold_text.collect_text_folds`
returns: the rows' term counts (:class:`TermRows`, kept sparse), the
numeric columns' per-fold statistics, and per text column the per-fold,
per-class term counts and document frequencies, from which each fold model
chooses its vocabulary (see :mod:`nbcli.workflows.fold_text`).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from nbcli.errors import NbcliError
from nbcli.workflows.fold_statistics import FoldStatistics

__all__ = ["TermRows", "TextFoldStatistics"]


class TermRows:
    """The term counts of every document of one text column, chunk after chunk.

    Terms are numbered as they are first seen; :meth:`finish` sorts them by
    code point (the order of a vocabulary) and gives one CSR matrix.

    Parameters
    ----------
    options : nbcli.text.TokenOptions
    """

    def __init__(self, options):
        self.options = options
        self._index: dict[str, int] = {}
        self._doc: list[np.ndarray] = []
        self._term: list[np.ndarray] = []
        self._count: list[np.ndarray] = []
        self.n_docs = 0

    def add(self, texts) -> None:
        """Tokenise one chunk of documents and keep their counts."""
        from nbcli.text.tokens import count_terms

        counts = count_terms(texts, self.options)
        index = self._index
        terms = counts.terms.tolist()
        # Numbers follow no order (finish sorts the terms): new terms are
        # numbered by set and dict operations, without a Python loop.
        new = set(terms).difference(index)
        index.update(zip(new, itertools.count(len(index))))
        ids = np.fromiter(map(index.__getitem__, terms), dtype=np.int64, count=len(terms))
        self._doc.append(counts.doc + self.n_docs)
        self._term.append(ids[counts.term] if counts.term.size else counts.term)
        self._count.append(counts.count)
        self.n_docs += counts.n_docs

    def finish(self):
        """``(terms, X)``: every term seen, sorted by code point, and the counts.

        Returns
        -------
        terms : ndarray of str, shape (n_terms,)
        X : scipy.sparse.csr_array of int64, shape (n_docs, n_terms)
            Sorted indices; column ``j`` counts ``terms[j]``.
        """
        import scipy.sparse as sp

        numbered = np.array(list(self._index), dtype=object)
        order = np.array(sorted(range(numbered.size), key=numbered.__getitem__), dtype=np.int64)
        rank = np.empty_like(order)
        rank[order] = np.arange(order.size)

        def joined(parts):
            return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)

        doc, term, count = joined(self._doc), joined(self._term), joined(self._count)
        self._doc, self._term, self._count = [], [], []
        X = sp.csr_array(
            (count.astype(np.int64), (doc, rank[term])),
            shape=(self.n_docs, numbered.size),
            dtype=np.int64,
        )
        X.sort_indices()
        return numbered[order], X


@dataclass
class _FoldText:
    """One fold model's text side: kept term columns, statistics, vocabularies,
    and (for the model of all rows) feature names."""

    kept: dict
    stats: Any
    vocabularies: dict
    feature_names: list


@dataclass
class TextFoldStatistics(FoldStatistics):
    """:class:`FoldStatistics` of a file with text columns.

    ``stats[r][f]`` holds the statistics of the numeric columns (None
    without any); the term statistics are kept per text column over every
    term of the file, and each fold model chooses its vocabulary from the
    other folds' (see the module notes).

    Attributes
    ----------
    text : TextSettings
    kind : {"multinomial", "complement", "bernoulli"}
        The term statistic of the model type.
    numeric : ndarray of shape (n_samples, n_numeric)
        Validated numeric columns of every row.
    terms : dict of str to (ndarray of str, csr_array)
        Per text column, every term seen (sorted) and each row's counts.
    tables : TableFacts
        What reading decided, for a model file (as ``nbcli fit`` writes it).
    """

    text: Any = None
    kind: str = "multinomial"
    numeric: Any = None
    terms: dict = field(default_factory=dict)
    tables: Any = None
    _term_sums: dict = field(default_factory=dict)
    _fold_text: dict = field(default_factory=dict)

    def hold_by_fold(self) -> None:
        """Nothing to reorder: the rows are gathered per fold from the kept matrices."""

    def _sums(self, repeat: int, column: str):
        """Per fold and class, term counts and documents holding each term, of ``column``.

        Returns two int64 CSR matrices of shape (n_folds * n_classes, n_terms),
        row ``f * n_classes + k`` for class ``k`` in fold ``f``, and the same
        sums over all rows, dense, shape (n_classes, n_terms). Sums of
        integers: exact, in any order.
        """
        key = (repeat, column)
        if key not in self._term_sums:
            X = self.terms[column][1]
            present = X.copy()
            present.data[:] = 1
            k = self.classes.size
            by_fold = _indicator(
                self.folds[repeat].astype(np.int64) * k + self.codes, self.n_folds * k
            )
            total = (None, column)
            if total not in self._term_sums:
                by_class = _indicator(self.codes, k)
                self._term_sums[total] = ((by_class @ X).toarray(), (by_class @ present).toarray())
            self._term_sums[key] = (
                by_fold @ X,
                by_fold @ present,
                *self._term_sums[total],
            )
        return self._term_sums[key]

    def _term_stats(self, repeat: int, leave_out: int | None, column: str):
        """:class:`nbcli.text.TermStats` of the rows outside fold ``leave_out``,
        over the terms those rows hold, and the terms' columns in the kept matrix."""
        from nbcli.text.vocabulary import TermStats

        counts, docs, term_total, doc_total = self._sums(repeat, column)
        k = self.classes.size
        inside = np.ones(self.codes.size, dtype=bool)
        if leave_out is not None:
            rows = slice(leave_out * k, (leave_out + 1) * k)
            term_total = term_total - counts[rows].toarray()
            doc_total = doc_total - docs[rows].toarray()
            inside = self.folds[repeat] != leave_out
        df = doc_total.sum(axis=0)
        # Terms only the left-out fold holds are unseen by its model.
        seen = np.flatnonzero(df > 0)
        stats = TermStats(
            terms=self.terms[column][0][seen],
            n_docs=int(inside.sum()),
            class_count=np.bincount(self.codes[inside], minlength=k).astype(np.float64),
            term_count=term_total[:, seen].astype(np.float64),
            doc_count=doc_total[:, seen].astype(np.float64),
            tf=term_total[:, seen].sum(axis=0).astype(np.int64),
            df=df[seen].astype(np.int64),
        )
        return stats, seen

    def fold_text(self, repeat: int = 0, leave_out: int | None = None) -> _FoldText:
        """The text side of the model of fold ``leave_out`` (None: of all rows), kept.

        Raises
        ------
        NbcliError
            When a text column keeps no term for that model (naming the fold).
        """
        from nbcli.models import ClassCounts
        from nbcli.workflows.text_features import TextChunkStats, finalize_text

        key = (repeat, leave_out)
        if key in self._fold_text:
            return self._fold_text[key]
        numeric = None
        if self.numeric is not None and self.numeric.shape[1]:
            numeric = FoldStatistics.merged(self, repeat, leave_out)
        terms, seen = {}, {}
        for column in self.text.columns:
            terms[column], seen[column] = self._term_stats(repeat, leave_out, column)
        selected: dict = {}
        if leave_out is None:
            # The model a file is written from: fit's own code, names and checks.
            est = type(self.estimator)(**self.estimator.get_params())
            try:
                vocabularies = finalize_text(
                    est, self.text, TextChunkStats(self.classes, numeric, terms), self.feature_names
                )
            except NbcliError as exc:
                raise NbcliError(f"{self.path}: {exc}") from None
            stats, names = est.stats_, list(est.feature_names_in_)
        else:
            # The vocabulary finalize_text would choose (the same call), without
            # the feature names a fold model never shows.
            vocabularies, blocks = {}, [] if numeric is None else [numeric.feature_count]
            for column in self.text.columns:
                try:
                    local = terms[column].select(
                        self.text.min_df, self.text.max_df, self.text.max_features
                    )
                except ValueError as exc:
                    raise NbcliError(
                        f"{self.path}: the model of fold {self._name(leave_out)}: "
                        f"text column {column!r}: {exc}"
                    ) from None
                selected[column] = local
                counts = terms[column].class_counts(local, self.kind)
                blocks.append(counts.feature_count)
                vocabularies[column] = terms[column].terms[local].tolist()
            class_count = counts.class_count if numeric is None else numeric.class_count
            stats = ClassCounts(class_count=class_count, feature_count=np.hstack(blocks))
            names = []
        kept = {}
        for column in self.text.columns:
            # finalize_text's selection, made again (it is cheap) for the columns.
            local = selected.get(column)
            if local is None:
                local = terms[column].select(
                    self.text.min_df, self.text.max_df, self.text.max_features
                )
            kept[column] = seen[column][local]
        out = _FoldText(kept, stats, vocabularies, names)
        self._fold_text[key] = out
        return out

    def merged(self, repeat: int, leave_out: int | None = None):
        """Statistics of the model of fold ``leave_out`` over its own vocabulary (a copy)."""
        return self.fold_text(repeat, leave_out).stats.copy()

    def model(self, params: dict, repeat: int = 0, leave_out: int | None = None):
        """The fitted model of fold ``leave_out`` (None: of all rows) with ``params``.

        Raises
        ------
        NbcliError
            When no model follows from the statistics with these values.
        """
        est = self.estimator
        given = {**est.get_params(), **params}
        stats = self.merged(repeat, leave_out)
        try:
            with np.errstate(over="ignore", invalid="ignore"):
                return type(est).from_stats(
                    stats, self.classes.copy(), given, stats.feature_count.shape[1]
                )
        except ValueError as exc:
            where = "all rows" if leave_out is None else f"fold {self._name(leave_out)}"
            raise NbcliError(f"{self.path}: {where}: {exc}") from None

    def matrix(self, rows: np.ndarray, part: _FoldText):
        """The features of ``rows`` as ``part``'s model sees them: float64 CSR,
        numeric columns first, then each text column's kept terms."""
        import scipy.sparse as sp

        blocks = []
        if self.numeric is not None and self.numeric.shape[1]:
            blocks.append(sp.csr_array(self.numeric[rows]))
        for column in self.text.columns:
            X = self.terms[column][1][rows][:, part.kept[column]]
            blocks.append(X)
        X = blocks[0] if len(blocks) == 1 else sp.hstack(blocks, format="csr")
        X = sp.csr_array(X, dtype=np.float64)
        X.sort_indices()
        return X

    def fold_pieces(self):
        """Yield ``(repeat, fold, rows, X)``: each fold's rows (in file order)
        over the vocabulary of its model."""
        for r in range(self.n_repeats):
            for f in range(self.n_folds):
                rows = np.flatnonzero(self.folds[r] == f)
                if rows.size:
                    yield r, f, rows, self.matrix(rows, self.fold_text(r, f))

    def model_file(self, params: dict, search: dict | None = None):
        """The model of all rows with ``params``, as ``nbcli fit`` writes it, with ``search``."""
        from nbcli.workflows.train import RowsRead, finish_training

        part = self.fold_text(0, None)
        est = type(self.estimator)(**{**self.estimator.get_params(), **params})
        est.classes_ = self.classes.copy()
        est.n_features_in_ = len(part.feature_names)
        est.feature_names_in_ = np.asarray(part.feature_names, dtype=object)
        est.stats_ = part.stats.copy()
        read = RowsRead(
            data=self.path,
            target=self.target,
            feature_names=part.feature_names,
            notes=[],
            n_rows=int(self.codes.size),
            n_chunks=1,
            fingerprint={
                k: v
                for k, v in self.training.items()
                if k not in ("n_samples", "class_counts", "data")
            },
        )
        result = finish_training(
            est,
            read,
            tables=self.tables,
            text=self.text,
            vocabularies=part.vocabularies,
        )
        result.model_file.search = search
        return result.model_file


def _indicator(group: np.ndarray, n_groups: int):
    """CSR of shape (n_groups, n_rows): 1 where row ``i`` is in group ``group[i]``."""
    import scipy.sparse as sp

    n = group.size
    return sp.csr_array((np.ones(n, dtype=np.int64), (group, np.arange(n))), shape=(n_groups, n))
