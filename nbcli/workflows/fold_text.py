"""Cross-validation of count models with text columns: per-fold vocabularies from one pass.

A fit on text chooses its vocabulary (``min_df``, ``max_df``,
``max_features``) from the document frequencies of the rows it is fitted
on, so the model of fold ``f`` must choose its own, from the other folds'
rows. The data are read once:

1. every document is tokenised as it comes and its term counts kept, one
   sparse row per document over every term seen in the file (SciPy CSR;
   memory grows with the non-zeros), numeric columns beside them;
2. once the folds are planned, the per-fold, per-class term counts and
   document frequencies are products of a sparse fold-and-class indicator
   with those rows (sums of integers: exact);
3. the model of fold ``f`` takes the totals minus fold ``f``'s statistics,
   restricted to the terms the other folds hold, and chooses its vocabulary
   from them with the very code ``nbcli fit`` uses
   (:func:`nbcli.workflows.text_features.finalize_text`); fold ``f``'s rows
   are scored on that vocabulary's columns, other words left out, as
   ``nbcli predict`` leaves out words training never kept.

So each fold's posteriors equal ``nbcli fit`` on the other folds then
``nbcli predict`` on the fold, and the model of all rows (``nbcli tune -o``)
is the model ``nbcli fit`` writes. A search over ``alpha`` re-finalises the
same per-fold statistics.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import numpy as np

from nbcli.errors import NbcliError
from nbcli.workflows.engine import Reporter
from nbcli.workflows.fold_statistics import FoldStatistics
from nbcli.workflows.inputs import ReadOptions

__all__ = ["TermRows", "TextFoldStatistics", "collect_text_folds"]


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
        from nbcli.workflows.train import finish_training

        part = self.fold_text(0, None)
        est = type(self.estimator)(**{**self.estimator.get_params(), **params})
        est.classes_ = self.classes.copy()
        est.n_features_in_ = len(part.feature_names)
        est.feature_names_in_ = np.asarray(part.feature_names, dtype=object)
        est.stats_ = part.stats.copy()
        result = finish_training(
            est,
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


def collect_text_folds(
    estimator,
    data: str,
    *,
    text,
    read: ReadOptions,
    features=None,
    drop=None,
    n_folds: int = 10,
    fold_column: str | None = None,
    group_column: str | None = None,
    n_repeats: int = 1,
    seed: int | None = 0,
    priors_by_label: dict | None = None,
    missing: str | None = None,
    unseen: str = "error",
    na_values=None,
    column_types: dict | None = None,
    reporter: Reporter | None = None,
    fingerprint: bool = True,
) -> TextFoldStatistics:
    """:func:`nbcli.workflows.folds.collect_fold_statistics` for a file with text columns.

    The parameters are that function's, and ``text``, the
    :class:`~nbcli.text.settings.TextSettings` of the columns (as
    ``nbcli fit --text`` takes them). Reads the file once, whatever its
    size: the rows' term counts are kept, sparse.

    Raises
    ------
    NbcliError
        As ``nbcli fit --text`` does for the model type and the columns, and
        as :func:`~nbcli.workflows.folds.collect_fold_statistics` for the folds.
    """
    from nbcli.io.fingerprint import TrainingFingerprint
    from nbcli.workflows.folds import check_folds, plan_folds, typed_labels
    from nbcli.workflows.tables import (
        RowCounts,
        apply_column_types,
        check_column_types,
        choose_missing,
    )
    from nbcli.workflows.text_features import check_text_model, fingerprint_columns
    from nbcli.workflows.train import TableFacts, data_error, order_priors, training_stream

    reporter = reporter or Reporter()
    kind = check_text_model(estimator)
    if read.target is not None and read.target in text.columns:
        raise NbcliError(
            f"{data}: --text {read.target}: the column is the target; a text column must be a "
            "feature"
        )
    keep = [c for c in (fold_column, group_column) if c is not None]
    clash = sorted(set(keep) & set(text.columns))
    if clash:
        raise NbcliError(f"{data}: --text {clash[0]}: the column also holds the folds or groups")
    column_types = dict(column_types or {})
    missing = choose_missing(estimator, missing)
    check_column_types(estimator, column_types)
    stream = training_stream(
        data,
        chunk_size=read.chunk_size,
        target=read.target,
        features=features,
        drop=drop,
        delimiter=read.delimiter,
        x_key=read.x_key,
        y_key=read.y_key,
        keep=keep or None,
        missing=missing,
        na_values=None if na_values is None else tuple(str(v) for v in na_values),
        infer=True,
        categorical=False,
        all_categorical=False,
        column_types=column_types,
        skip_missing_labels=True,
        model=estimator.name,
        kinds={c: "words" for c in text.columns},
    )
    outside = [c for c in text.columns if c not in stream.word_columns]
    if outside:
        raise NbcliError(
            f"{data}: --text {outside[0]}: the column is the target or left out of the "
            "features (--features, --drop); a text column must be a feature"
        )
    apply_column_types(estimator, stream.plan, column_types, missing, unseen)
    names = list(stream.feature_names)
    estimator.n_features_in_ = len(names)
    row_counts = RowCounts()
    fp = TrainingFingerprint(legacy=False) if fingerprint else None
    options = text.options()
    term_rows = {c: TermRows(options) for c in text.columns}
    ys, kept, numeric = [], [], []
    start = 0
    for ds in reporter.progress(stream, f"reading {data}"):
        before = row_counts.read
        ds = row_counts.filter(ds, missing)
        n = ds.X.shape[0]
        if n == 0:
            continue
        # Rows the filter dropped (no label) leave their documents too.
        at = row_counts.kept_rows - before
        words = {c: w if len(w) == n else np.asarray(w)[at] for c, w in ds.words.items()}
        if fp is not None:
            fp.update(fingerprint_columns(ds.X, words, text.columns), ds.y)
        ys.append(np.asarray(ds.y))
        kept.append({c: np.asarray(ds.kept[c]) for c in keep})
        if names:
            try:
                numeric.append(estimator.validated_rows(ds.X))
            except ValueError as exc:
                raise data_error(data, exc, names, start, rows=row_counts.kept_rows) from None
        for c in text.columns:
            term_rows[c].add(words[c])
        start += n
    raw_classes, position, classes, codes = typed_labels(data, stream.target, ys)
    if priors_by_label is not None:
        estimator.set_params(**{estimator.prior_param: order_priors(priors_by_label, classes)})
    folds, fold_values, plan = plan_folds(
        data,
        codes,
        kept,
        n_folds=n_folds,
        fold_column=fold_column,
        group_column=group_column,
        n_repeats=n_repeats,
        seed=seed,
    )
    counts = np.bincount(codes, minlength=classes.size)
    training = {
        "n_samples": int(codes.size),
        "class_counts": [int(c) for c in counts],
        **(fp.metadata() if fp is not None else {}),
        "data": data,
    }
    X_numeric = np.vstack(numeric) if numeric else np.zeros((codes.size, 0))
    fs = TextFoldStatistics(
        estimator=estimator,
        classes=classes,
        codes=codes,
        labels=classes[codes],
        folds=folds,
        fold_values=fold_values,
        stats=[[None] * int(fold_values.size) for _ in range(folds.shape[0])],
        feature_names=names,
        target=stream.target,
        plan=plan,
        training=training,
        path=data,
        warnings=list(stream.plan.warnings) + row_counts.warnings(data, missing),
        _row_filter=lambda: partial(RowCounts().filter, missing=missing),
        text=text,
        kind=kind,
        numeric=X_numeric,
        terms={c: t.finish() for c, t in term_rows.items()},
        tables=TableFacts(
            plan=stream.plan,
            categories=stream.categories,
            missing=missing,
            unseen=unseen,
            na_values=na_values,
            row_counts=row_counts,
        ),
    )
    if names:
        _numeric_folds(fs)
    check_folds(fs, estimator.min_samples_per_class)
    # A vocabulary that leaves no term is an error of the data and options,
    # whatever the hyperparameters: found here, not once per combination.
    for r in range(fs.n_repeats):
        for f in range(fs.n_folds):
            fs.fold_text(r, f)
    return fs


def _numeric_folds(fs: TextFoldStatistics) -> None:
    """Each fold's statistics of the numeric columns, in ``fs.stats``."""
    from nbcli.workflows.train import data_error

    k = fs.classes.size
    for r in range(fs.n_repeats):
        for f in range(fs.n_folds):
            rows = np.flatnonzero(fs.folds[r] == f)
            if not rows.size:
                continue
            try:
                with np.errstate(over="ignore", invalid="ignore"):
                    fs.stats[r][f] = fs.estimator.accumulate(
                        fs.numeric[rows], fs.codes[rows], None, k
                    )
            except ValueError as exc:
                raise data_error(fs.path, exc, fs.feature_names, 0, rows=rows) from None
