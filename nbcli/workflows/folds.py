"""Per-fold sufficient statistics of a data file: the shared basis of ``cv`` and ``tune``.

:func:`collect_fold_statistics` reads a file, plans the folds (stratified,
grouped, or from a column) and gathers every fold's statistics;
:class:`~nbcli.workflows.fold_statistics.FoldStatistics` turns them into
fold models with any hyperparameters and scores the out-of-fold rows. See
:mod:`nbcli.workflows.cv`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from nbcli.errors import NbcliError
from nbcli.io.cells import as_text, label_codes, text_array
from nbcli.io.limits import check_statistics_size
from nbcli.workflows.engine import Reporter
from nbcli.workflows.fold_statistics import FoldStatistics
from nbcli.workflows.inputs import ReadOptions

if TYPE_CHECKING:
    from nbcli.models import BayesClassifier

MEMORY_BUDGET = 1 << 30
"""Bytes of feature values kept in memory between passes (1 GiB)."""

__all__ = ["MEMORY_BUDGET", "FoldStatistics", "collect_fold_statistics"]


def _typed_classes(raw: np.ndarray):
    """Sorted typed classes and, for each raw class, its index among them."""
    from nbcli.io.data import resolve_labels

    typed = resolve_labels(raw) if raw.dtype.kind in "USO" else raw
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
    text=None,
    na_labels=(),
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
    missing, unseen, na_values, column_types, na_labels
        As for :func:`nbcli.workflows.train.train` (``--missing``,
        ``--unseen``, ``--na-values``, ``--column``, ``--na-labels``): rows
        skipped for a missing label or (``drop``) a missing cell are in no fold.
    reporter : Reporter, optional
        Progress of the reading.
    fingerprint : bool
        Hash the rows for the training fingerprint of a model file
        (``training``); a cross-validation that writes no model skips it.
    text : TextSettings, optional
        Text columns whose word counts are features (count models only), as
        ``nbcli fit --text`` takes them: each fold model chooses its own
        vocabulary from the other folds' rows (see
        :mod:`nbcli.workflows.fold_text`). The rows' counts are kept
        (sparse), whatever ``memory_budget``: the file is read once.

    Raises
    ------
    NbcliError
        For unreadable data, a single class, bad fold options, or a fold
        whose complement lacks a class (or has fewer rows of it than the
        model needs).
    """
    from functools import partial

    from nbcli.io.fingerprint import TrainingFingerprint
    from nbcli.workflows.tables import (
        RowCounts,
        apply_column_types,
        check_column_types,
        choose_missing,
    )
    from nbcli.workflows.train import data_error

    read = read or ReadOptions()
    reporter = reporter or Reporter()
    if fold_column is not None and group_column is not None:
        raise NbcliError("give --fold-column or --group-column, not both")
    if fold_column is not None and n_repeats != 1:
        raise NbcliError("--repeats needs planned folds; a --fold-column gives one plan")
    if text is not None:
        from nbcli.workflows.fold_text import collect_text_folds

        return collect_text_folds(
            estimator,
            data,
            text=text,
            read=read,
            features=features,
            drop=drop,
            n_folds=n_folds,
            fold_column=fold_column,
            group_column=group_column,
            n_repeats=n_repeats,
            seed=seed,
            priors_by_label=priors_by_label,
            missing=missing,
            unseen=unseen,
            na_values=na_values,
            column_types=column_types,
            reporter=reporter,
            fingerprint=fingerprint,
            na_labels=na_labels,
        )
    keep = [c for c in (fold_column, group_column) if c is not None]
    column_types = dict(column_types or {})
    missing = choose_missing(estimator, missing)
    check_column_types(estimator, column_types)
    stream = fold_stream(
        estimator,
        data,
        read,
        features=features,
        drop=drop,
        fold_column=fold_column,
        group_column=group_column,
        missing=missing,
        na_values=na_values,
        column_types=column_types,
        na_labels=na_labels,
    )
    apply_column_types(estimator, stream.plan, column_types, missing, unseen)
    row_counts = RowCounts()
    names = list(stream.feature_names)
    # Models that lay out their columns by type (mixed) read the width from here.
    estimator.n_features_in_ = len(names)
    # Every fold's statistics are held at once, beside those of all rows.
    copies = (1 if fold_column is not None else n_folds * n_repeats) + 1
    check_statistics_size(data, estimator, len(names), copies=copies)
    fp = TrainingFingerprint(legacy=False) if fingerprint else None
    ys, kept = [], []
    chunks: list | None = []
    held, start = 0, 0
    # With a fold column the folds are known row by row: their statistics are
    # gathered in this first pass (classes and folds numbered as they come).
    early = _EarlyFolds(estimator, fold_column) if fold_column is not None else None
    for ds in reporter.progress(stream, f"reading {data}"):
        if fold_column is not None:
            refuse_empty_folds(ds.kept[fold_column], fold_column, data, row_counts.read)
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
    common, raw_classes, position = fold_layout(
        estimator,
        data,
        stream,
        ys,
        kept,
        names=names,
        fingerprint=fp,
        warnings=row_counts.warnings(data, missing),
        priors_by_label=priors_by_label,
        n_folds=n_folds,
        fold_column=fold_column,
        group_column=group_column,
        n_repeats=n_repeats,
        seed=seed,
    )
    fs = FoldStatistics(
        **common,
        _chunks=chunks,
        _stream=stream,
        _row_filter=lambda: partial(RowCounts().filter, missing=missing),
    )
    if na_labels:
        # A model file of all rows (tune) reads evaluate's labels alike.
        fs.training["na_labels"] = [str(v) for v in na_labels]
    if early is not None:
        fold_text = as_text(np.concatenate([k[early.column] for k in kept]))
        fs.stats = [early.final(fs, raw_classes, position, fold_text)]
    else:
        _accumulate_folds(fs)
    check_folds(fs, estimator.min_samples_per_class)
    check_fold_sums(fs)
    fs.warnings.extend(fs.fold_only_categories(stream.categories))
    return fs


def check_fold_sums(fs: FoldStatistics) -> None:
    """Refuse data whose sums or squared spreads overflow float64, as ``fit``
    does (naming the column), rather than score fold models of infinite
    statistics: each fold's sums, and those of all rows, which bound the
    sums of every fold model."""
    from types import SimpleNamespace

    from nbcli.workflows.train_checks import check_finite_statistics

    pieces = [s for s in fs.stats[0] if s is not None] + [fs.merged(0)]
    for stats in pieces:
        if stats is not None:
            check_finite_statistics(fs.path, SimpleNamespace(stats_=stats), fs.feature_names)


def refuse_empty_folds(values, column: str, data: str, offset: int) -> None:
    """Refuse an empty cell of the fold column, naming its data row.

    An empty (or blank) cell is no fold value: as one it would make a fold
    of its own, of rows that belong to none.

    Parameters
    ----------
    values : ndarray of shape (n_rows,)
        The column's cells in this chunk (text, None or NaN where empty).
    column : str
        The ``--fold-column``, for the message.
    data : str
        The file, for the message.
    offset : int
        Data rows of the file before this chunk.

    Raises
    ------
    NbcliError
        For the first empty cell.
    """
    from nbcli.io.cells import missing_labels

    empty = missing_labels(np.asarray(values))
    if empty.any():
        row = offset + int(np.argmax(empty)) + 1
        raise NbcliError(
            f"{data}: the fold column '{column}' has an empty cell at row {row}; "
            "give every row a fold, or leave the row out of the file"
        )


def fold_stream(
    estimator,
    data: str,
    read: ReadOptions,
    *,
    features,
    drop,
    fold_column: str | None,
    group_column: str | None,
    missing: str,
    na_values,
    column_types: dict,
    kinds: dict | None = None,
    na_labels=(),
):
    """The rows of ``data`` as ``nbcli fit`` reads them for ``estimator`` (the
    same column plan and missing-value handling), with ``fold_column`` or
    ``group_column`` carried beside them; ``kinds`` fixes the kind of
    columns such as text ones (``{"notes": "words"}``)."""
    from nbcli.workflows.train import training_stream

    keep = [c for c in (fold_column, group_column) if c is not None]
    return training_stream(
        data,
        estimator,
        chunk_size=read.chunk_size,
        target=read.target,
        features=features,
        drop=drop,
        delimiter=read.delimiter,
        x_key=read.x_key,
        y_key=read.y_key,
        keep=keep or None,
        keep_for=f"for {'--fold-column' if fold_column is not None else '--group-column'}",
        missing=missing,
        na_values=na_values,
        column_types=column_types,
        kinds=kinds,
        na_labels=na_labels,
    )


def fold_layout(
    estimator,
    data: str,
    stream,
    ys: list,
    kept: list,
    *,
    names,
    fingerprint,
    warnings,
    priors_by_label,
    **folding,
) -> tuple[dict, np.ndarray, np.ndarray]:
    """What every kind of fold statistics is made of, once the labels are read.

    Types the labels (:func:`typed_labels`), orders ``priors_by_label`` by
    class, plans the folds (:func:`plan_folds`, with ``folding``'s
    ``n_folds``, ``fold_column``, ``group_column``, ``n_repeats``, ``seed``)
    and sums up the training rows for a model file.

    Returns
    -------
    (fields, raw_classes, position)
        ``fields``: the keyword arguments of :class:`FoldStatistics` shared by
        its subclasses; ``raw_classes`` and ``position`` as
        :func:`typed_labels` gives them.
    """
    from nbcli.workflows.train import order_priors

    raw_classes, position, classes, codes = typed_labels(data, stream.target, ys)
    if priors_by_label is not None:
        estimator.set_params(**{estimator.prior_param: order_priors(priors_by_label, classes)})
    folds, fold_values, plan = plan_folds(data, codes, kept, **folding)
    counts = np.bincount(codes, minlength=classes.size)
    training = {
        "n_samples": int(codes.size),
        "class_counts": [int(c) for c in counts],
        **(fingerprint.metadata() if fingerprint is not None else {}),
        "data": data,
    }
    fields = {
        "estimator": estimator,
        "classes": classes,
        "codes": codes,
        "labels": classes[codes],
        "folds": folds,
        "fold_values": fold_values,
        "stats": [[None] * int(fold_values.size) for _ in range(folds.shape[0])],
        "feature_names": names,
        "target": stream.target,
        "plan": plan,
        "training": training,
        "path": data,
        "warnings": list(stream.plan.warnings) + list(warnings),
    }
    return fields, raw_classes, position


def typed_labels(data: str, target, ys: list):
    """The classes of the labels read (chunk by chunk), typed as ``nbcli fit`` types them.

    Returns
    -------
    raw_classes : ndarray
        Sorted distinct labels as read.
    position : ndarray of int
        For each raw class, its index among ``classes``.
    classes : ndarray
        Sorted typed classes.
    codes : ndarray of int, shape (n_samples,)
        Class index of every row.

    Raises
    ------
    NbcliError
        For a single class.
    """
    y_raw = np.concatenate(ys)
    raw_classes, raw_codes = label_codes(y_raw)
    classes, position = _typed_classes(raw_classes)
    codes = position[raw_codes.reshape(-1)]
    if classes.size < 2:
        raise NbcliError(
            f"{data}: the target {target!r} has a single class; a classifier needs at least two"
        )
    return raw_classes, position, classes, codes


def plan_folds(
    data: str,
    codes: np.ndarray,
    kept: list,
    *,
    n_folds: int,
    fold_column: str | None,
    group_column: str | None,
    n_repeats: int,
    seed,
):
    """The fold of every row in every repeat, the folds' names and the report's ``plan``.

    ``kept`` holds, per chunk, the values of the fold or group column
    (``{column: values}``).

    Raises
    ------
    NbcliError
        For bad fold options or values (a missing fold value, too few rows).
    """
    from nbcli.io.data import resolve_labels
    from nbcli.resampling import folds_from_column, repeated_group_folds, repeated_stratified_folds

    try:
        if fold_column is not None:
            values = np.concatenate([k[fold_column] for k in kept])
            if values.dtype.kind in "USO" and all(isinstance(v, str) for v in values):
                # CSV text: whole numbers as numbers, as labels are typed.
                values = resolve_labels(as_text(values))
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
    return folds, fold_values, plan


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
        unique, inverse = label_codes(values)
        for u in unique.tolist():
            table.setdefault(u, len(table))
        return np.array([table[u] for u in unique.tolist()], dtype=np.intp)[inverse.reshape(-1)]

    def add(self, X: np.ndarray, y, fold_values) -> None:
        codes = self._number(np.asarray(y), self.labels)
        k = len(self.labels)
        folds = self._number(as_text(fold_values), self.folds)
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
        if seen.dtype.kind == "U":
            seen = text_array(list(self.labels))
        class_of = position[np.searchsorted(raw_classes, seen)]
        unique, codes = label_codes(fold_text)
        first = np.full(unique.size, codes.size, dtype=np.intp)
        np.minimum.at(first, codes, np.arange(codes.size))
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


def check_folds(fs: FoldStatistics, min_per_class: int) -> None:
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
