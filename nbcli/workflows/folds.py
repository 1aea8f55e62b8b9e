"""Per-fold sufficient statistics of a data file: the shared basis of ``cv`` and ``tune``.

:func:`collect_fold_statistics` reads a file, plans the folds (stratified,
grouped, or from a column) and gathers every fold's statistics;
:class:`FoldStatistics` turns them into fold models with any hyperparameters
and scores the out-of-fold rows. See :mod:`nbcli.workflows.cv`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from nbcli.errors import NbcliError
from nbcli.workflows.engine import Reporter
from nbcli.workflows.inputs import ReadOptions

if TYPE_CHECKING:
    from nbcli.models import BayesClassifier

MEMORY_BUDGET = 1 << 30
"""Bytes of feature values kept in memory between passes (1 GiB)."""


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
    _chunks: list | None = None
    _stream: Any = None
    _layouts: list | None = None
    _widths: Any = None
    _row_filter: Any = None
    _merged: dict = field(default_factory=dict)

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
        memory costs more than the copying here.
        """
        if self._chunks is None or self._layouts is not None:
            return
        # Small unsigned fold numbers let the stable sort be a radix sort.
        small = np.min_scalar_type(max(0, self.n_folds - 1))
        layouts: list = []
        start = 0
        for i, X in enumerate(self._chunks):
            stop = start + X.shape[0]
            folds = self.folds[0, start:stop]
            start = stop
            if not isinstance(X, np.ndarray) or X.ndim != 2:
                layouts.append(None)  # sparse rows stay as they are
                continue
            order = np.argsort(folds.astype(small), kind="stable")
            bounds = np.searchsorted(folds[order], np.arange(self.n_folds + 1))
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

    def merged(self, repeat: int, leave_out: int | None = None):
        """Statistics of all folds of ``repeat`` but ``leave_out`` (None: all rows).

        Merged once and kept: every hyperparameter set's model of the fold
        starts from the same sums; each call returns its own copy.
        """
        key = (repeat, leave_out)
        total = self._merged.get(key)
        if total is None:
            for f, s in enumerate(self.stats[repeat]):
                if f == leave_out or s is None:
                    continue
                total = s.copy() if total is None else total.merge(s)
            self._merged[key] = total
        return None if total is None else total.copy()

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
        try:
            with np.errstate(over="ignore", invalid="ignore"):
                return type(est).from_stats(
                    self.merged(repeat, leave_out),
                    self.classes.copy(),
                    given,
                    len(self.feature_names),
                )
        except ValueError as exc:
            where = "all rows" if leave_out is None else f"fold {self._name(leave_out)}"
            raise NbcliError(f"{self.path}: {where}: {exc}") from None

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
        n, k = self.codes.size, self.classes.size
        models: list = []
        with _one_blas_thread(self, param_sets):
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
        live = [j for j in range(len(param_sets)) if models[j] is not None]
        # Every row is in one fold of every repeat, so a live set's rows are all written.
        out = [
            np.empty((self.n_repeats * n, k))
            if m is not None
            else np.full((self.n_repeats * n, k), np.nan)
            for m in models
        ]
        if not live:
            return out
        self.hold_by_fold()
        with _one_blas_thread(self, param_sets):
            for r, f, rows, X in self.fold_pieces():
                at = r * n + rows
                for j in live:
                    out[j][at] = models[j][r][f].predict_log_proba(X)
        return out


def _one_blas_thread(fs: FoldStatistics, param_sets: list[dict]):
    """A context in which every BLAS library the fold models use runs on one thread.

    Building a fold model is work on matrices of n_features squared at most,
    and a fold's rows are scored in blocks of a few thousand rows (on
    several threads of their own when there are enough blocks): there,
    waking BLAS threads costs more than it saves. On one thread QDA's fold
    models build 20 to 50 times faster and its folds score about twice as
    fast; the results are the same. A first model is built before the limit
    is set, so that the libraries it loads (SciPy's BLAS for QDA) are
    limited too.
    """
    from threadpoolctl import threadpool_limits

    if param_sets:
        try:
            fs.model(param_sets[0], 0, 0)
        except NbcliError:
            pass  # the set is refused again, and reported, under the limit
    return threadpool_limits(limits=1, user_api="blas")


def _typed_classes(raw: np.ndarray):
    """Sorted typed classes and, for each raw class, its index among them."""
    from nbcli.io.data import resolve_labels

    typed = resolve_labels(raw) if raw.dtype.kind in "US" else raw
    order = np.argsort(typed, kind="stable")
    position = np.empty_like(order)
    position[order] = np.arange(order.size)
    return typed[order], position


def collect_fold_statistics(
    estimator: BayesClassifier,
    data: str,
    *,
    read: ReadOptions | None = None,
    features=None,
    drop=None,
    n_folds: int = 10,
    fold_column: str | None = None,
    group_column: str | None = None,
    n_repeats: int = 1,
    seed: int | None = 0,
    priors_by_label: dict | None = None,
    memory_budget: int = MEMORY_BUDGET,
    missing: str | None = None,
    unseen: str = "error",
    na_values=None,
    column_types: dict | None = None,
    reporter: Reporter | None = None,
    fingerprint: bool = True,
) -> FoldStatistics:
    """Read ``data``, plan the folds and gather every fold's statistics.

    Parameters
    ----------
    estimator : BayesClassifier
        Unfitted, with its hyperparameters set (its type makes the fold models).
    data : str
        Labelled data (CSV, NPZ, Parquet, ``-`` for stdin).
    read : ReadOptions, optional
    features, drop : list of str, optional
        As ``nbcli fit``'s ``--features`` and ``--drop``.
    n_folds : int
        Folds of the stratified (or grouped) split; ignored with ``fold_column``.
    fold_column : str, optional
        Column whose values are the folds (one fold per distinct value).
    group_column : str, optional
        Column of groups kept whole within one fold (stratified as far as possible).
    n_repeats : int
        Independent fold plans, from children of ``SeedSequence(seed)``.
    seed : int or None
        Seed of the fold plan.
    priors_by_label : dict, optional
        ``{label text: prior}``, put in class order once the classes are known.
    memory_budget : int
        Bytes of feature values kept between passes; beyond it the file is
        read again.
    missing, unseen, na_values, column_types
        As for :func:`nbcli.workflows.train.train` (``--missing``,
        ``--unseen``, ``--na-values``, ``--column``): rows skipped for a
        missing label or (``drop``) a missing cell are in no fold.
    reporter : Reporter, optional
        Progress of the reading.
    fingerprint : bool
        Hash the rows for the training fingerprint of a model file
        (``training``); a cross-validation that writes no model skips it.

    Raises
    ------
    NbcliError
        For unreadable data, a single class, bad fold options, or a fold
        whose complement lacks a class (or has fewer rows of it than the
        model needs).
    """
    from functools import partial

    from nbcli.io.data import resolve_labels
    from nbcli.io.fingerprint import TrainingFingerprint
    from nbcli.resampling import folds_from_column, repeated_group_folds, repeated_stratified_folds
    from nbcli.workflows.tables import (
        RowCounts,
        apply_column_types,
        check_column_types,
        choose_missing,
    )
    from nbcli.workflows.train import CATEGORY_MODELS, data_error, order_priors, training_stream

    read = read or ReadOptions()
    reporter = reporter or Reporter()
    if fold_column is not None and group_column is not None:
        raise NbcliError("give --fold-column or --group-column, not both")
    if fold_column is not None and n_repeats != 1:
        raise NbcliError("--repeats needs planned folds; a --fold-column gives one plan")
    keep = [c for c in (fold_column, group_column) if c is not None]
    column_types = dict(column_types or {})
    missing = choose_missing(estimator, missing)
    check_column_types(estimator, column_types)
    # The same column plan and missing-value handling as ``nbcli fit``.
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
        categorical=estimator.name in CATEGORY_MODELS,
        column_types=column_types,
        skip_missing_labels=True,
        model=estimator.name,
    )
    apply_column_types(estimator, stream.plan, column_types, missing, unseen)
    row_counts = RowCounts()
    names = list(stream.feature_names)
    # Models that lay out their columns by type (mixed) read the width from here.
    estimator.n_features_in_ = len(names)
    fp = TrainingFingerprint(legacy=False) if fingerprint else None
    ys, kept = [], []
    chunks: list | None = []
    held, start = 0, 0
    # With a fold column the folds are known row by row: their statistics are
    # gathered in this first pass (classes and folds numbered as they come).
    early = _EarlyFolds(estimator, fold_column) if fold_column is not None else None
    for ds in reporter.progress(stream, f"reading {data}"):
        ds = row_counts.filter(ds, missing)
        if ds.X.shape[0] == 0:
            continue
        if fp is not None:
            fp.update(ds.X, ds.y)
        ys.append(np.asarray(ds.y))
        kept.append({c: np.asarray(ds.kept[c]) for c in keep})
        if chunks is not None or early is not None:
            try:
                X = estimator.validated_rows(ds.X)
                if early is not None:
                    with np.errstate(over="ignore", invalid="ignore"):
                        early.add(X, ds.y, kept[-1][early.column])
            except ValueError as exc:
                raise data_error(data, exc, names, start) from None
        if chunks is not None:
            held += X.nbytes
            if held <= memory_budget:
                chunks.append(X)
            else:
                chunks = None  # read the file again for each later pass
        start += ds.X.shape[0]
    y_raw = np.concatenate(ys)
    raw_classes, raw_codes = np.unique(y_raw, return_inverse=True)
    classes, position = _typed_classes(raw_classes)
    codes = position[raw_codes.reshape(-1)]
    if classes.size < 2:
        raise NbcliError(
            f"{data}: the target {stream.target!r} has a single class; a classifier needs at least two"
        )
    if priors_by_label is not None:
        estimator.set_params(**{estimator.prior_param: order_priors(priors_by_label, classes)})
    try:
        if fold_column is not None:
            values = np.concatenate([k[fold_column] for k in kept])
            if values.dtype.kind in "USO" and all(isinstance(v, str) for v in values):
                # CSV text: whole numbers as numbers, as labels are typed.
                values = resolve_labels(values.astype(str))
            column = folds_from_column(values)
            folds, fold_values, method = column.folds[None, :], column.values, "column"
        elif group_column is not None:
            groups = np.concatenate([k[group_column] for k in kept])
            folds = repeated_group_folds(codes, groups, n_folds, n_repeats, seed=seed)
            fold_values, method = np.arange(n_folds), "group"
        else:
            folds = repeated_stratified_folds(codes, n_folds, n_repeats, seed=seed)
            fold_values, method = np.arange(n_folds), "stratified"
    except ValueError as exc:
        raise NbcliError(f"{data}: {exc}") from None
    plan = {
        "method": method,
        "n_folds": int(fold_values.size),
        "n_repeats": int(folds.shape[0]),
        "seed": None if method == "column" else seed,
        "fold_column": fold_column,
        "group_column": group_column,
        "passes": 1,
    }
    counts = np.bincount(codes, minlength=classes.size)
    training = {
        "n_samples": int(codes.size),
        "class_counts": [int(c) for c in counts],
        **(fp.metadata() if fp is not None else {}),
        "data": data,
    }
    fs = FoldStatistics(
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
        _chunks=chunks,
        _stream=stream,
        _row_filter=lambda: partial(RowCounts().filter, missing=missing),
    )
    if early is not None:
        fold_text = np.concatenate([k[early.column] for k in kept]).astype(str)
        fs.stats = [early.final(fs, raw_classes, position, fold_text)]
    else:
        _accumulate_folds(fs)
    _check_folds(fs, estimator.min_samples_per_class)
    return fs


class _EarlyFolds:
    """Fold statistics gathered before the classes and folds are all known.

    Classes and folds get provisional numbers in the order they first appear;
    :meth:`final` re-indexes the statistics to the sorted classes and folds.
    """

    def __init__(self, estimator, column: str):
        self.estimator = estimator
        self.column = column
        self.labels: dict = {}
        self.folds: dict = {}
        self.stats: dict = {}

    @staticmethod
    def _number(values: np.ndarray, table: dict) -> np.ndarray:
        unique, inverse = np.unique(values, return_inverse=True)
        for u in unique.tolist():
            table.setdefault(u, len(table))
        return np.array([table[u] for u in unique.tolist()], dtype=np.intp)[inverse.reshape(-1)]

    def add(self, X: np.ndarray, y, fold_values) -> None:
        codes = self._number(np.asarray(y), self.labels)
        k = len(self.labels)
        folds = self._number(np.asarray(fold_values).astype(str), self.folds)
        for f in np.unique(folds).tolist():
            at = np.flatnonzero(folds == f)
            s = self.estimator.accumulate(X[at], codes[at], None, k)
            old = self.stats.get(f)
            if old is not None:
                had = old.class_counts.shape[0]
                if had < k:
                    old = old.reindex(np.arange(had), k)
                s = old.merge(s)
            self.stats[f] = s

    def final(self, fs: FoldStatistics, raw_classes, position, fold_text) -> list:
        """The statistics of each final fold, classes in ``fs.classes`` order."""
        seen = np.array(list(self.labels))
        class_of = position[np.searchsorted(raw_classes, seen)]
        unique, first = np.unique(fold_text, return_index=True)
        fold_of = dict(zip(unique.tolist(), fs.folds[0][first].tolist()))
        out: list = [None] * fs.n_folds
        k = fs.classes.size
        for text, f in self.folds.items():
            s = self.stats[f]
            s = s.reindex(class_of[: s.class_counts.shape[0]], k)
            t = fold_of[text]
            out[t] = s if out[t] is None else out[t].merge(s)
        return out


def _accumulate_folds(fs: FoldStatistics) -> None:
    from nbcli.workflows.train import data_error

    est, k = fs.estimator, fs.classes.size
    fs.hold_by_fold()
    rows = np.zeros(1, dtype=np.intp)
    try:
        with np.errstate(over="ignore", invalid="ignore"):
            for r, f, rows, X in fs.fold_pieces():
                s = est.accumulate(X, fs.codes[rows], None, k)
                old = fs.stats[r][f]
                fs.stats[r][f] = s if old is None else old.merge(s)
    except ValueError as exc:
        raise data_error(fs.path, exc, fs.feature_names, 0, rows=rows) from None


def _check_folds(fs: FoldStatistics, min_per_class: int) -> None:
    """Refuse a fold whose model would lack a class (or a spread for it)."""
    for r in range(fs.n_repeats):
        per_fold = np.stack(
            [
                np.bincount(fs.codes[fs.folds[r] == f], minlength=fs.classes.size)
                for f in range(fs.n_folds)
            ]
        )
        outside = per_fold.sum(axis=0) - per_fold
        need = max(1, min_per_class)
        bad = np.argwhere(outside < need)
        if bad.size:
            f, c = bad[0]
            label = fs.classes[c]
            label = label.item() if isinstance(label, np.generic) else label
            raise NbcliError(
                f"{fs.path}: the model of fold {fs._name(int(f))} would have "
                f"{int(outside[f, c])} rows of class {label!r} (it needs at least {need}); "
                "use fewer folds or remove the class"
            )
