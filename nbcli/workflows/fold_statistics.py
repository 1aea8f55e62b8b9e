"""The per-fold statistics of a data file, and the fold models and scores they give.

:class:`FoldStatistics` is what :func:`nbcli.workflows.folds.collect_fold_statistics`
returns: every fold's sufficient statistics, the fold plan, and the rows
(kept in memory, or the way to read them again). It turns the statistics into
fold models with any hyperparameters (merges, never refits) and scores the
out-of-fold rows.

With a text block, :class:`TextFoldStatistics` holds, beside the table
columns' per-fold statistics, the rows' term counts (:class:`TermRows`, kept
sparse) and, per text column, the per-fold, per-class term counts and
document frequencies, from which each fold model chooses its vocabulary.

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

import contextlib
import copy
import itertools
import warnings as python_warnings
from dataclasses import dataclass, field
from dataclasses import fields as dataclass_fields
from typing import Any

import numpy as np

from nbcli.distinct import grouped_order
from nbcli.errors import NbcliError

#: Feature values of fold pieces held at once while gathering fold statistics
#: from rows read again (64 MiB of float64 in all, a few reader chunks; see
#: :meth:`FoldStatistics.accumulate_folds`).
_FOLD_BUFFER_VALUES = 1 << 23

#: Feature values of one block of a fold's rows gathered from rows held in
#: memory (128 MiB of float64; see :meth:`FoldStatistics.fold_blocks`): the
#: fold of a file that fits in memory is most often one block.
_FOLD_BLOCK_VALUES = 1 << 24


def _read_only(stats):
    """``stats`` with read-only views of its arrays (no data copied), sharing
    what was derived from them (see :meth:`nbcli.models._stats._Stats.copy`)."""
    out = copy.copy(stats)
    for f in dataclass_fields(stats):
        value = getattr(stats, f.name)
        if isinstance(value, np.ndarray):
            view = value.view()
            view.flags.writeable = False
            setattr(out, f.name, view)
    out.__dict__["_derived"] = stats.__dict__.setdefault("_derived", {})
    return out


@dataclass
class FoldStatistics:
    """Per-fold sufficient statistics of one data file, and the way back to its rows.

    Attributes
    ----------
    estimator : BayesClassifier
        Unfitted template: its type and hyperparameters make the fold models.
    classes : ndarray of shape (n_classes,)
        Sorted class labels (typed as ``nbcli fit`` types them).
    codes : ndarray of int, shape (n_samples,)
        Class index of every row.
    labels : ndarray of shape (n_samples,)
        Class label of every row (``classes[codes]``).
    folds : ndarray of int, shape (n_repeats, n_samples)
        Fold number of every row in every repeat.
    fold_values : ndarray of shape (n_folds,)
        Name of each fold number (its value in the fold column, or the number).
    stats : list of list
        ``stats[r][f]``: statistics of the rows of fold ``f`` in repeat ``r``
        (None for an empty fold).
    feature_names : list of str
    target : str or None
    plan : dict
        What the report's ``plan`` says (method, folds, repeats, seed, columns, passes).
    training : dict
        ``n_samples``, ``class_counts``, fingerprint and data path, for a model file.
    warnings : list of str
        What reading the table said (rows skipped without a label, column plan).
    """

    estimator: Any
    classes: np.ndarray
    codes: np.ndarray
    labels: np.ndarray
    folds: np.ndarray
    fold_values: np.ndarray
    stats: list
    feature_names: list
    target: str | None
    plan: dict
    training: dict
    path: str = ""
    warnings: list = field(default_factory=list)
    #: The 0-based row of the file of every row (None when read as parts),
    #: and the carried columns' values (``FoldSettings.carry``), for the
    #: out-of-fold predictions.
    file_rows: np.ndarray | None = None
    carried: dict = field(default_factory=dict)
    #: What reading decided (column plan, categories, missing-cell policy),
    #: for the model file of all rows, as ``nbcli fit`` writes it.
    tables: Any = None
    _chunks: list | None = None
    _stream: Any = None
    _layouts: list | None = None
    _widths: Any = None
    _row_filter: Any = None
    _merged: dict = field(default_factory=dict)
    #: Warnings the models gave when built, each with the folds that gave it.
    _model_warnings: dict = field(default_factory=dict)

    @property
    def n_repeats(self) -> int:
        return int(self.folds.shape[0])

    @property
    def n_folds(self) -> int:
        return int(self.fold_values.size)

    def rows(self):
        """``(first row, X)`` of every chunk, from memory or from the file again.

        Chunks kept in memory are in :meth:`hold_by_fold`'s order when it ran.
        """
        if self._chunks is not None:
            start = 0
            for X in self._chunks:
                yield start, X
                start += X.shape[0]
            return
        self.plan["passes"] += 1
        start = 0
        skip = self._row_filter() if self._row_filter is not None else None
        for ds in self._stream:
            if skip is not None:
                ds = skip(ds)
            yield start, self.estimator.validated_rows(ds.X)
            start += ds.X.shape[0]

    def hold_by_fold(self) -> None:
        """Reorder the chunks kept in memory so that the rows of each fold (of
        the first repeat) are together, in file order within the fold.

        Every later pass then takes a fold's rows of a chunk as one slice
        instead of gathering them (gathering rows of the column-major arrays
        the reader gives is several times slower), once per pass and not once
        per hyperparameter set. A column-major chunk is reordered in place,
        a column at a time, so no second copy of the data is made: fresh
        memory costs more than the copying here. A row-major chunk stays as
        it is (layout None): its rows are gathered as fast as sliced, and a
        reordered copy would double the memory while the reader's array
        lives.
        """
        if self._chunks is None or self._layouts is not None:
            return
        layouts: list = []
        start = 0
        for i, X in enumerate(self._chunks):
            stop = start + X.shape[0]
            folds = self.folds[0, start:stop]
            start = stop
            if not isinstance(X, np.ndarray) or X.ndim != 2 or X.flags.c_contiguous:
                layouts.append(None)  # sparse and row-major rows stay as they are
                continue
            order, bounds = grouped_order(folds, self.n_folds)
            if X.flags.f_contiguous and X.flags.writeable:
                column = np.empty(X.shape[0], dtype=X.dtype)
                for j in range(X.shape[1]):
                    np.take(X[:, j], order, out=column)
                    X[:, j] = column
            else:
                self._chunks[i] = X[order]
            layouts.append((order, bounds))
        self._layouts = layouts

    def fold_pieces(self):
        """Yield ``(repeat, fold, rows, X)``: every chunk's rows of every fold of
        every repeat, reading the file once (again) if it is not kept.

        ``rows`` are the fold's row numbers in the chunk's part of the file,
        increasing; ``X`` their validated feature values, in that order.
        """
        layouts = self._layouts if self._chunks is not None else None
        for i, (start, X) in enumerate(self.rows()):
            layout = layouts[i] if layouts is not None else None
            if layout is None:
                file_rows = np.arange(start, start + X.shape[0])
            else:
                order, bounds = layout
                file_rows = start + order
            for r in range(self.n_repeats):
                chunk_folds = self.folds[r, file_rows]
                if r == 0 and layout is not None:
                    for f in range(self.n_folds):
                        lo, hi = bounds[f], bounds[f + 1]
                        if hi > lo:
                            # Row-major, as a gather would give the rows: the
                            # same scores to the last bit.
                            yield r, f, file_rows[lo:hi], np.ascontiguousarray(X[lo:hi])
                    continue
                for f in np.unique(chunk_folds).tolist():
                    at = np.flatnonzero(chunk_folds == f)
                    if layout is not None:
                        # Back to file order within the fold.
                        at = at[np.argsort(order[at], kind="stable")]
                    yield r, f, file_rows[at], X[at]

    def fold_blocks(self, limit: int | None = None):
        """Yield ``(repeat, fold, rows, X)``: the rows held in memory, fold by
        fold, each fold's in blocks of about ``limit`` values at most
        (default :data:`_FOLD_BLOCK_VALUES`; one block when the fold is
        smaller), in file order within the fold.

        Statistics whose size does not depend on the rows (a class scatter
        matrix of ``n_features`` squared values) then cost one product per
        class and block, with no merges within a fold, and a fold model
        scores all its rows of a block at once. None when the rows are not
        all held as dense arrays (:meth:`fold_pieces` serves then).
        """
        chunks = self._chunks
        if chunks is None or not all(isinstance(X, np.ndarray) and X.ndim == 2 for X in chunks):
            return None
        self.hold_by_fold()
        return self._fold_blocks(_FOLD_BLOCK_VALUES if limit is None else limit)

    def _fold_blocks(self, limit: int):
        chunks = self._chunks or []
        layouts = self._layouts or [None] * len(chunks)
        starts = np.cumsum([0] + [X.shape[0] for X in chunks])
        for r in range(self.n_repeats):
            # Per fold: (chunk, positions in the chunk, file rows), chunk by chunk.
            pieces: list[list] = [[] for _ in range(self.n_folds)]
            for i, X in enumerate(chunks):
                layout = layouts[i]
                order = np.arange(X.shape[0]) if layout is None else layout[0]
                file_rows = starts[i] + order
                if r == 0 and layout is not None:
                    # Held in this repeat's fold order: each fold's rows one slice.
                    bounds = layout[1]
                    for f in range(self.n_folds):
                        if bounds[f + 1] > bounds[f]:
                            run = slice(bounds[f], bounds[f + 1])
                            pieces[f].append((i, run, file_rows[run]))
                    continue
                # Positions by fold, in file order within each (stable sorts).
                at = np.arange(X.shape[0]) if layout is None else np.argsort(order)
                by_fold, bounds = grouped_order(self.folds[r, file_rows[at]], self.n_folds)
                at = at[by_fold]
                for f in range(self.n_folds):
                    if bounds[f + 1] > bounds[f]:
                        where = at[bounds[f] : bounds[f + 1]]
                        pieces[f].append((i, where, file_rows[where]))
            for f in range(self.n_folds):
                if all(isinstance(p[1], slice) for p in pieces[f]):
                    # Rows held in fold order: each chunk's run of the fold is
                    # taken where it lies (a view), not copied into one block.
                    for i, run, rows in pieces[f]:
                        yield r, f, rows, chunks[i][run]
                    continue
                for group in _balanced(pieces[f], limit, chunks):
                    rows = np.concatenate([p[2] for p in group])
                    yield r, f, rows, _gathered(group, chunks, rows.size)

    def accumulate_folds(self) -> None:
        """Gather every fold's statistics into ``stats`` from the rows, one pass.

        Rows held in memory are taken fold by fold (:meth:`fold_blocks`).
        Rows read again come chunk by chunk, and a chunk's piece of one fold
        is a fraction of the chunk; statistics whose size does not depend on
        the rows (a class scatter matrix of ``n_features`` squared values)
        cost as much to compute and to merge for a few rows as for many. The
        pieces of each fold are therefore held until together they are about
        :data:`_FOLD_BUFFER_VALUES` values (shared among the folds), then
        taken as one block, in file order within the fold. The products run
        on one BLAS thread, as ``fit``'s do.
        """
        from nbcli.models._parallel import one_blas_thread
        from nbcli.workflows.data_errors import data_error

        est, k = self.estimator, self.classes.size
        limit = max(1, _FOLD_BUFFER_VALUES // max(1, self.n_repeats * self.n_folds))
        held: dict = {}
        rows = np.zeros(1, dtype=np.intp)

        def add(r: int, f: int, rows, X) -> None:
            s = est.accumulate(X, self.codes[rows], None, k)
            old = self.stats[r][f]
            self.stats[r][f] = s if old is None else est.merge_statistics(old, s)

        def flush(key) -> np.ndarray:
            pieces = held.pop(key)[1]
            rows = np.concatenate([p[0] for p in pieces])
            X = pieces[0][1] if len(pieces) == 1 else np.concatenate([p[1] for p in pieces])
            add(key[0], key[1], rows, X)
            return rows

        try:
            with np.errstate(over="ignore", invalid="ignore"), one_blas_thread():
                blocks = self.fold_blocks()
                if blocks is not None:
                    for r, f, rows, X in blocks:
                        add(r, f, rows, X)
                    return
                for r, f, rows, X in self.fold_pieces():
                    if not isinstance(X, np.ndarray) or X.ndim != 2:
                        add(r, f, rows, X)  # sparse rows: as they come
                        continue
                    entry = held.setdefault((r, f), [0, []])
                    entry[0] += X.size
                    entry[1].append((rows, X))
                    if entry[0] >= limit:
                        rows = flush((r, f))
                for key in sorted(held):
                    rows = flush(key)
        except ValueError as exc:
            raise data_error(self.path, exc, self.feature_names, 0, rows=rows) from None

    def checked(self, categories: dict) -> None:
        """What the whole set of fold models needs, checked once after gathering.

        Data whose sums or squared spreads overflow float64 are refused, as
        ``fit`` refuses them (naming the column), rather than fold models of
        infinite statistics scored: each fold's sums, and those of all rows,
        which bound the sums of every fold model. Categories only some folds
        hold become warnings.
        """
        from types import SimpleNamespace

        from nbcli.workflows.train_checks import check_finite_statistics

        pieces = [s for s in self.stats[0] if s is not None] + [self.merged(0)]
        for stats in pieces:
            if stats is not None:
                check_finite_statistics(
                    self.path, SimpleNamespace(stats_=stats), self.feature_names
                )
        self.warnings.extend(self.fold_only_categories(categories))

    def merged(self, repeat: int, leave_out: int | None = None):
        """Statistics of all folds of ``repeat`` but ``leave_out`` (None: all rows).

        Merged once and kept: every hyperparameter set's model of the fold
        starts from the same sums. Each call returns its own statistics
        object whose arrays are read-only views of the kept ones (a fold's
        scatter matrices are large; a model never changes its sums in place,
        and one that tried would fail loudly rather than change the others').
        """
        key = (repeat, leave_out)
        if key not in self._merged:
            self._merge_repeat(repeat)
        total = self._merged[key]
        return None if total is None else _read_only(total)

    def _merge_repeat(self, repeat: int) -> None:
        """Every fold's complement in ``repeat``, and all rows, in ``3 K - 5`` merges.

        The complement of fold ``f`` is the merge of the folds before it
        (merged left to right, one more fold at a time) with those after it
        (merged right to left), instead of ``K - 2`` merges of its own
        (``K (K - 2)`` in all). Only merges, never a difference of sums, so
        each is as exact as a fit's merge of chunks.
        """
        from nbcli.workflows.data_errors import data_error

        def merge(a, b):
            if a is None or b is None:
                one = a if b is None else b
                return None if one is None else _read_only(one)
            try:
                # merge makes new arrays: the folds' own are never shared.
                return self.estimator.merge_statistics(a, b)
            except ValueError as exc:  # folds each within a limit, together over it
                raise data_error(self.path, exc, self.feature_names, 0) from None

        folds = self.stats[repeat]
        after: list = [None] * (len(folds) + 1)  # after[f]: folds f, f + 1, ...
        for f in range(len(folds) - 1, 0, -1):
            after[f] = merge(folds[f], after[f + 1])
        before = None  # folds 0 .. f - 1
        for f, s in enumerate(folds):
            self._merged[(repeat, f)] = merge(before, after[f + 1])
            after[f + 1] = None
            before = merge(before, s)
        self._merged[(repeat, None)] = before

    def model(self, params: dict, repeat: int = 0, leave_out: int | None = None):
        """The fitted model of fold ``leave_out`` (None: of all rows) with ``params``.

        Raises
        ------
        NbcliError
            When no model follows from the statistics with these values.
        """
        est = self.estimator
        given = {**est.get_params(), **params}
        widths = self.category_widths()
        if widths is not None:
            own = given.get("min_categories")
            if own is not None:
                widths = np.maximum(widths, np.broadcast_to(np.asarray(own), widths.shape))
            given["min_categories"] = widths
        where = "all rows" if leave_out is None else f"fold {self._name(leave_out)}"
        from nbcli.workflows.data_errors import model_message, remedy

        try:
            # What a model says when built (LDA's collinear directions) is
            # collected for the report, not printed as a Python warning.
            with (
                np.errstate(over="ignore", invalid="ignore"),
                python_warnings.catch_warnings(record=True) as caught,
            ):
                python_warnings.simplefilter("always")
                stats = self.merged(repeat, leave_out)
                model = type(est).from_stats(
                    stats, self.classes.copy(), given, self._n_features(stats)
                )
        except ValueError as exc:
            # Fold models carry no column names: name the columns as fit does.
            named = model_message(exc, self.feature_names) + remedy(exc, est, self.feature_names)
            raise NbcliError(f"{self.path}: {where}: {named}") from None
        # Named once, as the report says it: one line per message.
        for w in caught:
            said = model_message(w.message, self.feature_names)
            seen = self._model_warnings.setdefault(said, [])
            if where not in seen:
                seen.append(where)
        return model

    def model_warnings(self) -> list[str]:
        """The warnings the models built so far gave, one line per message,
        naming the columns and the folds (or all rows) whose model gave it."""
        lines = []
        for message, where in self._model_warnings.items():
            folds = [w.removeprefix("fold ") for w in where if w.startswith("fold ")]
            places = [w for w in where if not w.startswith("fold ")]
            if folds:
                places.insert(0, ("folds " if len(folds) > 1 else "fold ") + ", ".join(folds))
            lines.append(f"{self.path}: {'; '.join(places)}: {message}")
        return lines

    def fit_warnings(self, params: dict | None = None) -> list[str]:
        """What ``nbcli fit`` warns of var_smoothing in the model of all rows
        with ``params`` (its epsilon against the class variances, a variance
        that is epsilon alone), once: the fold models are made of the same
        rows, and saying it per fold would repeat it. Empty for a model
        without ``var_smoothing``."""
        from nbcli.workflows.tables import model_feature_names, smoothing_warnings

        if "var_smoothing" not in self.estimator.get_params():
            return []
        try:
            model = self.model(params or {})
        except NbcliError:
            return []  # the fold models' own errors say why
        return smoothing_warnings(self.path, model, model_feature_names(model, self.feature_names))

    def _n_features(self, stats) -> int:
        """The width of the fold models' input."""
        return len(self.feature_names)

    def model_file(self, params: dict, search: dict | None = None):
        """The model of all rows with ``params`` as a :class:`~nbcli.io.modelfile.ModelFile`,
        with the search summary ``search`` (``nbcli tune -o``).

        Raises
        ------
        NbcliError
            As :meth:`model`.
        """
        from nbcli.io.modelfile import ModelFile
        from nbcli.workflows.tables import column_records, reading_record

        model = self.model(params)
        training = dict(self.training)
        columns = None
        facts = self.tables
        if facts is not None:
            # As fit stores them: predict applies the policies and the columns' kinds.
            training.update(reading_record(facts))
            columns = column_records(model, facts.plan, facts.categories)
        return ModelFile(
            model=model,
            feature_names=list(self.feature_names),
            target=self.target,
            training=training,
            columns=columns,
            search=search,
        )

    def category_widths(self) -> np.ndarray | None:
        """Categories of each feature in the whole data set, shape (n_features,)
        (0 for a feature that is not categorical); None for a model without
        categories.

        A fold model takes them as its ``min_categories``: it has the
        categories one fit on all rows has, so an out-of-fold row never
        carries a category its model cannot score.
        """
        if self._widths is None:
            if "min_categories" not in self.estimator.get_params():
                return None
            total = self.merged(0)
            k = np.asarray(getattr(total, "n_categories", ()), dtype=np.int64)
            d = len(self.feature_names)
            if k.size != d:
                # The mixed model counts categories of its categorical columns only.
                full = np.zeros(d, dtype=np.int64)
                types = self.estimator.get_params().get("column_types") or []
                full[[j for j, t in enumerate(types) if t == "categorical"]] = k
                k = full
            self._widths = k
        return self._widths

    def fold_only_categories(self, categories: dict | None = None) -> list[str]:
        """Warnings naming, per fold, the categories that only its own rows hold.

        Fold models know every category of the data (:meth:`category_widths`),
        so such a category is scored as ``nbcli fit --min-categories`` with
        the data's widths would score it: a zero count, smoothed. ``fit`` on
        the other folds alone, then ``predict``, would refuse it (``--unseen
        error``) or leave it out (``--unseen ignore``), and give the column's
        other categories a little more weight; the warning says so.
        ``categories`` maps a column name to its categories in code order
        (text categories), for naming them.
        """
        from nbcli.models._table_stats import grow_categories

        widths = self.category_widths()
        if widths is None:
            return []
        columns = [j for j in range(len(widths)) if widths[j] > 0]
        starts = np.concatenate(([0], np.cumsum(widths[columns])))

        def seen_in(stats) -> np.ndarray:
            counts = grow_categories(stats.category_count, stats.n_categories, widths[columns])
            return counts.sum(axis=0) > 0

        # A code below the largest that no row holds (codes as given: 1, 2, 3
        # make 0 a category too) is in no fold: no fold holds it alone.
        held = seen_in(self.merged(0))
        out = []
        for f in range(self.n_folds):
            train = self.merged(0, f)
            if train is None:
                continue
            seen = seen_in(train)
            named = []
            for q, j in enumerate(columns):
                missing = np.flatnonzero((held & ~seen)[starts[q] : starts[q + 1]])
                if missing.size == 0:
                    continue
                name = self.feature_names[j]
                values = (categories or {}).get(name)
                shown = [repr(values[c]) if values else str(c) for c in missing[:2].tolist()]
                more = f" and {missing.size - 2} more" if missing.size > 2 else ""
                named.append(f"{name} {', '.join(shown)}{more}")
            if named:
                out.append(
                    f"{self.path}: fold {self._name(f)} holds categories no other fold has "
                    f"({'; '.join(named[:3])}{'; ...' if len(named) > 3 else ''}); its model "
                    "knows every category of the file and counts them as seen zero times, "
                    "where fit on the other folds then predict would refuse them (or leave "
                    "them out with --unseen ignore)"
                )
        return out

    def _name(self, f: int) -> str:
        v = self.fold_values[f]
        return str(v.item() if isinstance(v, np.generic) else v)

    def train_counts(self) -> np.ndarray:
        """Rows each fold's model is built from, shape (n_repeats, n_folds)."""
        sizes = np.stack([np.bincount(r, minlength=self.n_folds) for r in self.folds])
        return self.codes.size - sizes

    def out_of_fold(self, param_sets: list[dict], failed: dict | None = None) -> list[np.ndarray]:
        """Out-of-fold log posteriors for every set of hyperparameters, in one pass.

        Parameters
        ----------
        param_sets : list of dict
            Hyperparameters of each set (the others are the template's).
        failed : dict, optional
            When given, a set whose fold models cannot be built (a singular
            covariance) gets NaN posteriors and ``failed[index]`` the message,
            instead of an error.

        Returns
        -------
        list of ndarray of shape (n_repeats * n_samples, n_classes)
            Entry ``p`` for ``param_sets[p]``; rows repeat after repeat, in file order.

        Raises
        ------
        NbcliError
            When a fold model cannot be built and ``failed`` is None.
        """
        with _one_blas_thread(self, param_sets):
            return self._out_of_fold(param_sets, failed)

    def fold_models(self, param_sets: list[dict], failed: dict | None) -> list:
        """Per hyperparameter set, its fold models ``[repeat][fold]``; None for a set
        whose models cannot be built when ``failed`` is given (which gets the message).

        Raises
        ------
        NbcliError
            When a fold model cannot be built and ``failed`` is None.
        """
        models: list = []
        for i, p in enumerate(param_sets):
            try:
                models.append(
                    [
                        [self.model(p, r, f) for f in range(self.n_folds)]
                        for r in range(self.n_repeats)
                    ]
                )
            except NbcliError as exc:
                if failed is None:
                    raise
                failed[i] = str(exc)
                models.append(None)
        return models

    def _out_of_fold(self, param_sets: list[dict], failed: dict | None) -> list[np.ndarray]:
        n, k = self.codes.size, self.classes.size
        models = self.fold_models(param_sets, failed)
        live = [j for j in range(len(param_sets)) if models[j] is not None]
        total = self.n_repeats * n
        if not live:
            return [np.full((total, k), np.nan) for _ in models]
        from nbcli.models._projection import shared_log_proba

        # The blocks' scores are written one after another (contiguous
        # slices), then each set's are put in file order by one gather with
        # np.take: scattering a fold's rows into a row-major array by fancy
        # indexing costs several times more. A row no block holds reads the
        # NaN row past the end.
        blocked = {j: np.empty((total + 1, k)) for j in live}
        position = np.full(total, total, dtype=np.intp)
        written = 0
        blocks = self.fold_blocks()
        for r, f, rows, X in blocks if blocks is not None else self.fold_pieces():
            scored = shared_log_proba([models[j][r][f] for j in live], X)
            m = len(rows)
            position[r * n + np.asarray(rows)] = np.arange(written, written + m)
            for j, log_proba in zip(live, scored):
                blocked[j][written : written + m] = log_proba
            written += m
        for scores in blocked.values():
            scores[written:] = np.nan
        # Popped as taken: one set's scores are held twice at a time, not all.
        return [
            np.take(blocked.pop(j), position, axis=0)
            if j in blocked
            else np.full((total, k), np.nan)
            for j in range(len(models))
        ]


@contextlib.contextmanager
def _one_blas_thread(fs: FoldStatistics, param_sets: list[dict]):
    """A context in which every BLAS library the fold models use runs on one thread.

    Building a fold model is work on matrices of n_features squared at most,
    and a fold's rows are scored in blocks of a few thousand rows (on
    several threads of their own when there are enough blocks): there,
    waking BLAS threads costs more than it saves. On one thread QDA's fold
    models build 20 to 50 times faster and its folds score about twice as
    fast; the results are the same. The limit is set again once a first
    model is built, so that the libraries that loads (SciPy's BLAS for QDA)
    are limited too.
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):
        if param_sets:
            try:
                fs.model(param_sets[0], 0, 0)
            except NbcliError:
                pass  # refused again, and reported, below
        with threadpool_limits(limits=1, user_api="blas"):
            yield


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
    #: The text settings of this model: with TF-IDF weighting, the document
    #: frequencies of its own training rows.
    settings: Any = None


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

    def with_text(self, settings) -> TextFoldStatistics:
        """These statistics under other vocabulary settings: ``min_df``,
        ``max_df``, ``max_features`` and an n-gram range within the one the
        documents were tokenised with (a term of ``n`` words is an n-gram,
        and is kept where ``n`` lies in the range: the terms such a
        tokenisation would have given). The documents' counts are shared,
        not read again; every statistic derived from them is made anew."""
        from dataclasses import replace

        lo, hi = settings.ngram_range
        terms = {}
        for column, (names, X) in self.terms.items():
            words = np.fromiter((t.count(" ") + 1 for t in names), np.int64, count=names.size)
            keep = np.flatnonzero((words >= lo) & (words <= hi))
            terms[column] = (names[keep], X[:, keep])
        return replace(
            self,
            text=settings,
            terms=terms,
            warnings=list(self.warnings),
            _term_sums={},
            _fold_text={},
            _merged={},
            _model_warnings={},
        )

    def accumulate_folds(self) -> None:
        """Each fold's statistics of the numeric columns (none without any), in ``stats``."""
        from nbcli.workflows.data_errors import data_error

        if not self.feature_names or self.numeric.shape[1] == 0:
            return
        k = self.classes.size
        for r in range(self.n_repeats):
            for f in range(self.n_folds):
                rows = np.flatnonzero(self.folds[r] == f)
                if not rows.size:
                    continue
                try:
                    with np.errstate(over="ignore", invalid="ignore"):
                        self.stats[r][f] = self.estimator.accumulate(
                            self.numeric[rows], self.codes[rows], None, k
                        )
                except ValueError as exc:
                    raise data_error(self.path, exc, self.feature_names, 0, rows=rows) from None

    def checked(self, categories: dict) -> None:
        """A vocabulary that leaves no term is an error of the data and options,
        whatever the hyperparameters: found here, not once per combination.

        Raises
        ------
        NbcliError
            For the first fold whose other folds leave no term.
        """
        for r in range(self.n_repeats):
            for f in range(self.n_folds):
                self.fold_text(r, f)

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
            frequencies: dict = {}
            try:
                vocabularies = finalize_text(
                    est,
                    self.text,
                    TextChunkStats(self.classes, numeric, terms),
                    self.feature_names,
                    frequencies,
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
        settings = self.text
        if settings.weighting is not None:
            settings = self._weighted(stats, repeat, leave_out, kept)
        if leave_out is None:
            # As a fit stores them, for the model file: each kept term's documents.
            settings = settings.learnt([frequencies[c] for c in settings.columns])
        out = _FoldText(kept, stats, vocabularies, names, settings)
        self._fold_text[key] = out
        return out

    def _weighted(self, stats, repeat: int, leave_out, kept: dict):
        """TF-IDF weighting of a fold model (:mod:`nbcli.text.weighting`): its
        settings with the document frequencies of its own training rows, and
        its word statistics (``stats``, replaced in place) the per-class sums
        of those rows' weighted counts, as a fit on them computes them."""
        from dataclasses import replace

        inside = np.ones(self.codes.size, dtype=bool)
        if leave_out is not None:
            inside = self.folds[repeat] != leave_out
        rows = np.flatnonzero(inside)
        columns = self.text.columns
        frequencies = []
        for column in columns:
            X = self.terms[column][1][rows][:, kept[column]]
            present = X.copy()
            present.data[:] = 1
            frequencies.append(np.asarray(present.sum(axis=0)).ravel().astype(np.int64).tolist())
        weighting = self.text.weighting.learnt(rows.size, frequencies)
        settings = replace(self.text, weighting=weighting)
        by_class = _indicator(self.codes[rows], self.classes.size)
        blocks = []
        for i, column in enumerate(columns):
            X = self.terms[column][1][rows][:, kept[column]]
            blocks.append(np.asarray((by_class @ weighting.transform(X, i)).toarray()))
        words = np.hstack(blocks)
        stats.feature_count[:, stats.feature_count.shape[1] - words.shape[1] :] = words
        return settings

    def merged(self, repeat: int, leave_out: int | None = None):
        """Statistics of the model of fold ``leave_out`` over its own vocabulary (a copy)."""
        return self.fold_text(repeat, leave_out).stats.copy()

    def _n_features(self, stats) -> int:
        """The width of a fold model's input: its table columns and its own vocabulary."""
        return int(stats.feature_count.shape[1])

    def matrix(self, rows: np.ndarray, part: _FoldText):
        """The features of ``rows`` as ``part``'s model sees them: float64 CSR,
        numeric columns first, then each text column's kept terms."""
        import scipy.sparse as sp

        blocks = []
        if self.numeric is not None and self.numeric.shape[1]:
            blocks.append(sp.csr_array(self.numeric[rows]))
        for i, column in enumerate(self.text.columns):
            X = self.terms[column][1][rows][:, part.kept[column]]
            weighting = part.settings.weighting if part.settings is not None else None
            blocks.append(X if weighting is None else weighting.transform(X, i))
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
            text=part.settings if part.settings is not None else self.text,
            vocabularies=part.vocabularies,
        )
        result.model_file.search = search
        return result.model_file


def _balanced(pieces: list, limit: int, chunks: list):
    """``pieces`` (of one fold, in file order) in consecutive groups of about
    equal rows, each of about ``limit`` values at most (a piece is never split)."""
    if not pieces:
        return
    width = max(1, chunks[pieces[0][0]].shape[1])
    total = sum(p[2].size for p in pieces)
    n_groups = max(1, -(-total * width // max(1, limit)))
    target = -(-total // n_groups)
    group: list = []
    rows = 0
    for piece in pieces:
        group.append(piece)
        rows += piece[2].size
        if rows >= target:
            yield group
            group, rows = [], 0
    if group:
        yield group


def _gathered(group: list, chunks: list, n_rows: int) -> np.ndarray:
    """The rows of ``group``'s pieces, one row-major array (a view for one slice)."""
    if len(group) == 1 and isinstance(group[0][1], slice):
        i, where, _ = group[0]
        return np.ascontiguousarray(chunks[i][where])
    dtype = np.result_type(*(chunks[i].dtype for i, _, _ in group))
    out = np.empty((n_rows, chunks[group[0][0]].shape[1]), dtype=dtype)
    start = 0
    for i, where, file_rows in group:
        stop = start + file_rows.size
        X = chunks[i]
        if isinstance(where, slice) or X.dtype != dtype:
            out[start:stop] = X[where]
        else:
            # mode="clip": an unbuffered take (the positions are in range).
            np.take(X, where, axis=0, out=out[start:stop], mode="clip")
        start = stop
    return out


def _indicator(group: np.ndarray, n_groups: int):
    """CSR of shape (n_groups, n_rows): 1 where row ``i`` is in group ``group[i]``."""
    import scipy.sparse as sp

    n = group.size
    return sp.csr_array((np.ones(n, dtype=np.int64), (group, np.arange(n))), shape=(n_groups, n))
