"""Per-fold sufficient statistics of a data file: the shared basis of ``cv`` and ``tune``.

:func:`collect_fold_statistics` reads a file, plans the folds (stratified,
grouped, or from a column) and gathers every fold's statistics;
:class:`~nbcli.workflows.fold_statistics.FoldStatistics` turns them into
fold models with any hyperparameters and scores the out-of-fold rows. See
:mod:`nbcli.workflows.cv`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from nbcli.distinct import LabelCoding
from nbcli.errors import NbcliError
from nbcli.io.cells import aligned_labels, as_text, label_codes, text_array
from nbcli.io.limits import check_statistics_size
from nbcli.workflows.engine import Reporter
from nbcli.workflows.fold_statistics import FoldStatistics, TermRows, TextFoldStatistics
from nbcli.workflows.settings import MEMORY_BUDGET, FoldSettings

if TYPE_CHECKING:
    from nbcli.io.request import DataRequest
    from nbcli.models import BayesClassifier

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
    request: DataRequest,
    folds: FoldSettings | None = None,
    *,
    priors_by_label: dict | None = None,
    reporter: Reporter | None = None,
    fingerprint: bool = True,
) -> FoldStatistics:
    """Read the labelled data of ``request``, plan the folds and gather every fold's statistics.

    Parameters
    ----------
    estimator : BayesClassifier
        Unfitted, with its hyperparameters set (its type makes the fold models).
    request : DataRequest
        The labelled data (CSV, NPZ, Parquet, ``-`` for stdin), read as
        :func:`nbcli.workflows.train.train` reads it: rows skipped for a
        missing label or (``drop``) a missing cell are in no fold. With a
        text block, its columns' word counts are features (count models
        only): each fold model chooses its own vocabulary from the other
        folds' rows (see :mod:`nbcli.workflows.fold_statistics`); the rows' counts
        are kept (sparse), whatever the memory budget: the file is read once.
    folds : FoldSettings, optional
        The fold plan (stratified, grouped or from a column; repeats from
        children of ``SeedSequence(seed)``) and the bytes of feature values
        kept between passes (beyond them the file is read again).
    priors_by_label : dict, optional
        ``{label text: prior}``, put in class order once the classes are known.
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

    from nbcli.io.fingerprint import TrainingFingerprint
    from nbcli.models._missing import checks_of_one_array
    from nbcli.workflows.blocks import check_text_columns, fingerprint_columns
    from nbcli.workflows.tables import (
        RowCounts,
        apply_column_types,
        check_column_types,
        fold_missing,
        missing_remedies,
    )
    from nbcli.workflows.train import TableFacts, data_error

    folds = folds or FoldSettings()
    reporter = reporter or Reporter()
    folds.check()
    text = request.text
    if text is not None and text.weighting is not None:
        from nbcli.workflows.text_features import check_weighting

        # The folds' rows are held: stdin serves as well as a file.
        check_weighting(estimator, text, "")
    kind = "" if text is None else _check_text_folds(estimator, request, folds)
    data, keep, fold_column = request.path, folds.keep, folds.fold_column
    words_of = request.text_columns
    # Term counts are kept (sparse) whatever the budget: text is read once.
    memory_budget = folds.memory_budget if text is None else None
    column_types = dict(request.column_types)
    missing = fold_missing(estimator, request.missing)
    unseen = request.unseen or "error"
    check_column_types(estimator, column_types)
    stream = fold_stream(
        estimator,
        request.reading(missing=missing, missing_remedies=missing_remedies(estimator)),
        folds,
    )
    check_text_columns(data, words_of, stream)
    for column, option in ((fold_column, "--fold-column"), (folds.group_column, "--group-column")):
        if column is not None and column == stream.target:
            # Every fold would hold out whole classes that no fold model has seen.
            raise NbcliError(
                f"{data}: {option} {column} is the target column; the folds must come from "
                "another column (or leave the option out for stratified folds)"
            )
    apply_column_types(estimator, stream.plan, column_types, missing, unseen)
    row_counts = RowCounts()
    names = list(stream.feature_names)
    # Models that lay out their columns by type (mixed) read the width from here.
    estimator.n_features_in_ = len(names)
    # Every fold's statistics are held at once, beside those of all rows.
    copies = (1 if fold_column is not None else folds.n_folds * folds.n_repeats) + 1
    check_statistics_size(data, estimator, len(names), copies=copies)
    classes_seen: set = set()
    fp = TrainingFingerprint(legacy=False) if fingerprint else None
    terms = {} if text is None else {c: TermRows(text.options()) for c in words_of}
    ys, kept, file_rows = [], [], []
    chunks: list | None = []
    held = 0
    # With a fold column the folds are known row by row: their statistics are
    # gathered in this first pass (classes and folds numbered as they come).
    early = _EarlyFolds(estimator, fold_column) if fold_column is not None and not terms else None
    # The row filter and the validation of a chunk sum it for finiteness once.
    with checks_of_one_array():
        for ds in reporter.progress(stream, f"reading {data}"):
            if fold_column is not None:
                refuse_empty_folds(ds.kept[fold_column], fold_column, data, row_counts.read)
            before = row_counts.read
            ds = row_counts.filter(ds, missing)
            n = ds.X.shape[0]
            if n == 0:
                continue
            # Rows the filter dropped (no label) leave their documents too.
            at = row_counts.kept_rows - before
            words = {c: w if len(w) == n else np.asarray(w)[at] for c, w in ds.words.items()}
            # The labels are coded once (by the reader, or here), as fit codes
            # them: the fingerprint and the folds' classes take the same codes.
            coding = ds.y_coding
            if coding is None or not coding.describes(ds.y):
                uniques, codes = label_codes(np.asarray(ds.y))
                coding = LabelCoding(np.asarray(ds.y), uniques, codes)
            if fp is not None:
                fp.update(fingerprint_columns(ds.X, words, words_of), ds.y, coding)
            ys.append(coding)
            kept.append({c: np.asarray(ds.kept[c]) for c in keep})
            file_rows.append(row_counts.kept_rows)
            # Fold statistics grow with the classes and categories met: refused
            # before they are gathered past the limit.
            classes_seen.update(coding.uniques.tolist())
            check_statistics_size(
                data,
                estimator,
                len(names),
                max(2, len(classes_seen)),
                copies=copies,
                dims={"S": sum(len(v) for v in stream.categories.values())},
            )
            if names and (chunks is not None or early is not None):
                try:
                    X = estimator.validated_rows(ds.X)
                    if early is not None:
                        with np.errstate(over="ignore", invalid="ignore"):
                            early.add(X, ds.y, kept[-1][early.column])
                except ValueError as exc:
                    raise data_error(data, exc, names, 0, rows=row_counts.kept_rows) from None
                if chunks is not None:
                    held += X.nbytes
                    if memory_budget is None or held <= memory_budget:
                        chunks.append(X)
                    else:
                        chunks = None  # read the file again for each later pass
            for c, rows in terms.items():
                rows.add(words[c])
    if not ys:
        raise NbcliError(row_counts.none_used(data))
    common, raw_classes, position = fold_layout(
        estimator,
        stream,
        FoldRows(data, ys, kept, names, fp, row_counts.warnings(data, missing)),
        folds,
        priors_by_label,
    )
    if text is not None:
        n_rows = common["codes"].size
        fs: FoldStatistics = TextFoldStatistics(
            **common,
            text=text,
            kind=kind,
            numeric=np.vstack(chunks) if chunks else np.zeros((n_rows, 0)),
            terms={c: t.finish() for c, t in terms.items()},
            tables=TableFacts.of(
                stream.plan, stream.categories, request, (missing, unseen), row_counts
            ),
        )
    else:
        fs = FoldStatistics(
            **common,
            tables=TableFacts.of(stream.plan, stream.categories, request, (missing, unseen)),
            _chunks=chunks,
            _stream=stream,
            _row_filter=lambda: partial(RowCounts().filter, missing=missing),
        )
        if request.na_labels:
            # A model file of all rows (tune) reads evaluate's labels alike.
            fs.training["na_labels"] = [str(v) for v in request.na_labels]
    if early is not None:
        fold_values = as_text(np.concatenate([k[early.column] for k in kept]))
        fs.stats = [early.final(fs, raw_classes, position, fold_values)]
    else:
        fs.accumulate_folds()
    check_folds(fs, estimator.min_samples_per_class)
    fs.file_rows = np.concatenate(file_rows)
    fs.carried = {c: np.concatenate([k[c] for k in kept]) for c in folds.carry}
    fs.warnings.extend(row_counts.lost_classes(data, raw_classes))
    fs.warnings.extend(stream.spelling_warnings())
    fs.warnings.extend(stream.read_warnings())
    fs.checked(stream.categories)
    return fs


def _check_text_folds(estimator, request: DataRequest, folds: FoldSettings) -> str:
    """Refuse text columns the fold statistics cannot take; the term statistic
    the model needs (:func:`nbcli.workflows.text_features.check_text_model`)."""
    from nbcli.workflows.blocks import check_text_target
    from nbcli.workflows.text_features import check_text_model

    if getattr(type(estimator), "text_term", None):
        # Its text terms sit beside table columns the fold statistics here do not hold.
        raise NbcliError(
            f"cv and tune do not take text columns under the {estimator.name} model yet; "
            "use --model multinomial, complement or bernoulli for the text, or nbcli fit"
        )
    kind = check_text_model(estimator)
    check_text_target(request)
    clash = sorted(set(folds.keep) & set(request.text_columns))
    if clash:
        raise NbcliError(
            f"{request.path}: --text {clash[0]}: the column also holds the folds or groups"
        )
    return kind


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


def fold_stream(estimator, request: DataRequest, folds: FoldSettings):
    """The rows of ``request`` as ``nbcli fit`` reads them for ``estimator`` (the
    same column plan and missing-value handling, the request's ``missing``
    the policy in force, its text blocks' columns read as words), with the
    fold or group column of ``folds`` carried beside them."""
    from nbcli.workflows.train import training_stream

    keep = folds.keep
    return training_stream(
        request.path,
        estimator,
        request,
        keep=keep or None,
        keep_for=folds.keep_for,
    )


@dataclass
class FoldRows:
    """What reading the rows of a cross-validation gathered, for :func:`fold_layout`.

    Attributes
    ----------
    data : str
        The data as messages name it.
    ys, kept : list
        The labels (arrays, or their :class:`~nbcli.distinct.LabelCoding`)
        and the kept (fold, group) columns, chunk by chunk.
    names : list of str
        The feature names.
    fingerprint : TrainingFingerprint or None
    warnings : list of str
        What reading found (rows skipped).
    """

    data: str
    ys: list
    kept: list
    names: list
    fingerprint: Any
    warnings: list


def fold_layout(
    estimator,
    stream,
    rows: FoldRows,
    folds: FoldSettings,
    priors_by_label=None,
) -> tuple[dict, np.ndarray, np.ndarray]:
    """What every kind of fold statistics is made of, once the labels are read.

    Types the labels (:func:`typed_labels`), orders ``priors_by_label`` by
    class, plans the folds (:func:`plan_folds`, by ``folds``) and sums up
    the training rows for a model file.

    Returns
    -------
    (fields, raw_classes, position)
        ``fields``: the keyword arguments of :class:`FoldStatistics` shared by
        its subclasses; ``raw_classes`` and ``position`` as
        :func:`typed_labels` gives them.
    """
    from nbcli.workflows.train import order_priors

    data, fingerprint = rows.data, rows.fingerprint
    raw_classes, position, classes, codes = typed_labels(data, stream.target, rows.ys)
    if priors_by_label is not None:
        estimator.set_params(**{estimator.prior_param: order_priors(priors_by_label, classes)})
    fold_of, fold_values, plan = plan_folds(data, codes, rows.kept, **folds.planning())
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
        "folds": fold_of,
        "fold_values": fold_values,
        "stats": [[None] * int(fold_values.size) for _ in range(fold_of.shape[0])],
        "feature_names": rows.names,
        "target": stream.target,
        "plan": plan,
        "training": training,
        "path": data,
        "warnings": list(stream.plan.warnings)
        + list(rows.warnings)
        + _thin_classes(data, classes, counts, plan),
    }
    return fields, raw_classes, position


def _thin_classes(data: str, classes, counts, plan: dict) -> list[str]:
    """A warning for classes with fewer rows than stratified folds: some folds
    hold none of their rows, so their per-fold figures leave the class out
    (scikit-learn's ``StratifiedKFold`` warns of it too)."""
    if plan["method"] != "stratified":
        return []
    k = plan["n_folds"]
    thin = [(c, int(n)) for c, n in zip(classes.tolist(), counts) if 0 < n < k]
    if not thin:
        return []
    shown = ", ".join(f"{c!r} ({n} row{'' if n == 1 else 's'})" for c, n in thin[:5])
    more = f" and {len(thin) - 5} more" if len(thin) > 5 else ""
    one = len(thin) == 1
    return [
        f"{data}: {'class' if one else 'classes'} {shown}{more} {'has' if one else 'have'} "
        f"fewer rows than the {k} folds: some folds hold no row of "
        f"{'it' if one else 'them'}, and their per-fold figures leave "
        f"{'it' if one else 'them'} out; the pooled figures hold every row (fewer --folds "
        "gives every fold each class)"
    ]


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
    raw_classes, raw_codes = _joined_codes(ys)
    classes, position = _typed_classes(raw_classes)
    codes = position[raw_codes.reshape(-1)]
    if classes.size < 2:
        raise NbcliError(
            f"{data}: the target {target!r} has a single class; a classifier needs at least two"
        )
    return raw_classes, position, classes, codes


def _joined_codes(ys: list) -> tuple[np.ndarray, np.ndarray]:
    """:func:`~nbcli.io.cells.label_codes` of the chunks' labels joined, from
    the chunks' codings where every chunk has one: only the distinct labels
    of each chunk are coded again, never a row's."""
    if not ys or not all(isinstance(y, LabelCoding) for y in ys):
        return label_codes(np.concatenate(aligned_labels([getattr(y, "labels", y) for y in ys])))
    # Parts of different formats may give one label as 1 and as "1".
    raw_classes, where = label_codes(np.concatenate(aligned_labels([y.uniques for y in ys])))
    starts = np.cumsum([0] + [y.uniques.size for y in ys[:-1]])
    return raw_classes, np.concatenate([where[s + y.codes] for s, y in zip(starts, ys)])


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


def check_folds(fs: FoldStatistics, min_per_class: int) -> None:
    """Refuse a fold whose model would lack a class (or a spread for it)."""
    for r in range(fs.n_repeats):
        # One count of (fold, class) pairs, not a masked pass per fold.
        k = fs.classes.size
        per_fold = np.bincount(fs.folds[r] * k + fs.codes, minlength=fs.n_folds * k).reshape(
            fs.n_folds, k
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
