"""The train workflow: stream a data file into a model, check the result, describe it.

:func:`train` never prints and never parses options: the command line
(:mod:`nbcli.cli.fit_cmd`) parses them, calls it, and renders what it returns.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

import numpy as np

from nbcli.errors import NbcliError
from nbcli.workflows.data_errors import data_error, model_message, remedy  # noqa: F401
from nbcli.workflows.train_checks import (
    FIT_CHECKS,
    check_finite_parameters,
    check_finite_statistics,
)

#: Models whose features may be categories: text, boolean and categorical
#: columns become category codes for them instead of being refused.

if TYPE_CHECKING:
    # The reports package loads SciPy's statistics (over half a second);
    # scoring, failing early and ``fit --quiet`` do without it.
    from nbcli.io.modelfile import ModelFile
    from nbcli.io.request import DataRequest
    from nbcli.reports.runs import TrainingReport


def order_priors(priors, classes) -> list | None:
    """Priors as a list in the order of ``classes`` (labels matched by their text).

    ``priors`` is None, a list (already in class order) or a dict
    ``{label text: prior}`` as ``--priors spam=0.4,ham=0.6`` gives it.

    Raises
    ------
    NbcliError
        For a label that is not a class, or a class without a prior.
    """
    if priors is None or isinstance(priors, list):
        return priors
    names = [str(c) for c in classes]
    unknown = sorted(set(priors) - set(names))
    if unknown:
        raise NbcliError(
            f"--priors names labels not in the training data: {', '.join(unknown)} "
            f"(classes: {', '.join(names)})"
        )
    missing = [n for n in names if n not in priors]
    if missing:
        raise NbcliError(f"--priors gives no prior for classes {', '.join(missing)}")
    return [priors[n] for n in names]


def class_priors(model) -> np.ndarray:
    """Prior probabilities of any model type, in ``classes_`` order."""
    for attr in ("class_prior_", "priors_"):
        if hasattr(model, attr):
            return np.asarray(getattr(model, attr))
    return np.exp(model.class_log_prior_)


@dataclass
class TrainResult:
    """What :func:`train` returns: the trained model file, the warnings and
    notes worth showing, and the facts for the training report (the report
    itself is built only when asked for, as its module loads SciPy).

    Attributes
    ----------
    model_file : ModelFile
        Ready for :func:`nbcli.io.modelfile.save_model`.
    facts : dict
        Keyword arguments of :class:`~nbcli.reports.runs.TrainingReport`
        except ``output``.
    warnings : list of str
        Things the user should know about the fit (a class with one sample).
    notes : list of str
        Information about how the data were read (which column is the target).
    """

    model_file: ModelFile
    facts: dict
    warnings: list
    notes: list = field(default_factory=list)

    def summary(self, output: str) -> TrainingReport:
        """The :class:`~nbcli.reports.runs.TrainingReport` of this fit, written to ``output``."""
        from nbcli.reports.runs import TrainingReport

        return TrainingReport(**self.facts, output=output)


@dataclass
class _ReadState:
    """How far reading got: chunks and rows so far, the current chunk's first
    row; the chunks held for the training accuracy (``held``, None once the
    file is too large to hold)."""

    held: list | None = field(default_factory=list)
    chunks: int = 0
    rows: int = 0
    offset: int = 0
    reading: bool = False
    kept: Any = None

    def hold(self, ds, file_rows: int, whole_rows: int) -> None:
        """Keep ``ds`` while the file's rows so far (``file_rows``) are at
        most ``whole_rows``; drop everything held once they are more."""
        if self.held is None:
            return
        if file_rows > whole_rows:
            self.held = None
        elif ds.X.shape[0]:
            self.held.append(ds)

    def whole(self):
        """The rows held, as one ``(X, y, words)`` namespace, or None."""
        if not self.held:
            return None
        if len(self.held) == 1:
            return self.held[0]
        parts = self.held
        return SimpleNamespace(
            X=np.concatenate([p.X for p in parts]),
            y=np.concatenate([np.asarray(p.y) for p in parts]),
            words={k: np.concatenate([p.words[k] for p in parts]) for k in parts[0].words},
        )


def _plain(v):
    return v.item() if isinstance(v, np.generic) else v


def training_stream(path: str, estimator, request: DataRequest, **read):
    """The reader of training data for ``estimator``: one file of a one-file fit,
    one part of a part-wise fit (:mod:`nbcli.workflows.parts`) or the file of a
    cross-validation, so all read through the same column plan.

    ``request`` says how to read ``path`` (its ``missing`` the policy in
    force, its ``categories`` those known before reading, as a second pass
    over parts gives them); ``read`` replaces fields for this read (``keep``,
    ``keep_for``). What follows from the model type and the request's
    feature blocks is derived here, once: kinds decided from the first rows,
    the text blocks' columns read as words, text, boolean and categorical
    columns as categories for a model that takes them (codes only for the
    categorical model), rows without a label skipped.
    """
    from nbcli.io.data import iter_dataset

    kinds = type(estimator).feature_kinds
    words = {c: "words" for c in request.text_columns}
    return iter_dataset(
        path,
        request,
        need_target=True,
        raw_labels=True,
        infer=True,
        categorical="categorical" in kinds,
        all_categorical=kinds == ("categorical",),
        skip_missing_labels=True,
        model=estimator.name,
        kinds={**request.kinds, **words},
        **read,
    )


def _model_warnings(path: str, caught, feature_names) -> list[str]:
    """Warnings the model gave when its statistics became parameters, as
    report lines naming the columns (LDA's collinear directions)."""
    lines = [f"{path}: {model_message(w.message, feature_names)}" for w in caught]
    return list(dict.fromkeys(lines))


def train(
    estimator,
    request: DataRequest,
    *,
    priors_by_label=None,
    progress=None,
) -> TrainResult:
    """Fit ``estimator`` on the data file of ``request``, chunk by chunk.

    Only one chunk is in memory at a time, except that the chunks of a
    small file (at most ``stream.whole_rows`` rows: one chunk of the size
    asked for, or about 8 million values by default) are kept, to report the
    training accuracy without reading the file twice.
    Labels from CSV are read as text and given their type (integers when
    every label is one) only once all chunks are in, so a class is never
    split by a type that changes between chunks.

    Parameters
    ----------
    estimator : BayesClassifier
        Unfitted (or to be refitted), with its hyperparameters set.
    request : DataRequest
        The data file (CSV, NPZ, Parquet, or ``-`` for stdin), how to read
        it and its feature blocks. Its ``missing`` policy: refused (naming
        the row), left out of their feature's statistics (the models that
        can), or their rows skipped and counted; None: the estimator's
        ``missing`` (see :func:`nbcli.workflows.tables.choose_missing`).
        Rows whose label is missing are skipped and counted whatever the
        policy. Its ``unseen`` policy (None: ``error``) is stored in the
        model: what predict does with a category never seen in training.
        Its ``column_types`` (``--column NAME=TYPE``: ``gaussian``,
        ``categorical``, ``bernoulli`` or ``multinomial``) apply to the
        mixed model (``categorical`` also to the categorical model); its text
        block's columns' word counts are features (count models only; see
        :mod:`nbcli.workflows.text_features`).
    priors_by_label : dict, optional
        ``{label text: prior}``: put in class order once the classes are
        known, then used as the estimator's prior (``estimator.prior_param``).
    progress : callable ``(iterable, description) -> iterable``, optional
        Wraps the stream of chunks (a progress bar); default none.

    Returns
    -------
    TrainResult

    Raises
    ------
    NbcliError
        For unreadable or invalid data, a single class, or a class with
        fewer samples than the model needs (``min_samples_per_class``).

    Examples
    --------
    >>> from nbcli.io.request import DataRequest
    >>> from nbcli.models import GaussianNB
    >>> from nbcli.workflows.train import train
    >>> result = train(GaussianNB(), DataRequest.of("sample_data/iris_train.csv"))
    >>> result.model_file.training["n_samples"], result.model_file.model.classes_.tolist()
    (90, ['setosa', 'versicolor', 'virginica'])
    """
    from nbcli.distinct import LabelCoding
    from nbcli.io.cells import label_codes
    from nbcli.io.fingerprint import TrainingFingerprint
    from nbcli.io.limits import check_statistics_size
    from nbcli.models._missing import checks_of_one_array
    from nbcli.workflows.blocks import (
        check_blocks,
        check_text_columns,
        fingerprint_columns,
        fit_blocks,
        model_rows,
        text_terms_beside_table,
    )
    from nbcli.workflows.tables import (
        RowCounts,
        apply_column_types,
        check_column_types,
        choose_missing,
        missing_in_force,
        missing_remedies,
    )

    path, text = request.path, request.text
    unseen = request.unseen or "error"
    check_blocks(estimator, request)
    column_types = dict(request.column_types)
    missing = choose_missing(estimator, request.missing)
    # The rows are counted as the model uses them: a projection drops a row
    # with a missing cell even under "ignore", and it must not be counted in.
    in_force = missing_in_force(estimator, missing)
    check_column_types(estimator, column_types)
    from nbcli.workflows import text_features

    text_features.check_weighting(estimator, text, path)
    stream = training_stream(
        path,
        estimator,
        request.reading(missing=missing, missing_remedies=missing_remedies(estimator)),
    )
    check_text_columns(path, request.text_columns, stream)
    warnings: list[str] = list(stream.plan.warnings)
    apply_column_types(estimator, stream.plan, column_types, missing, unseen)
    check_statistics_size(path, estimator, len(stream.feature_names))
    classes_seen: set = set()
    text_terms_beside_table(estimator, request, stream.plan)
    counts_of_rows = RowCounts()
    fp = TrainingFingerprint(legacy=False)
    state = _ReadState()
    if priors_by_label is not None:
        # Priors given by label can be put in order only once the classes are known.
        estimator.set_params(**{estimator.prior_param: None})

    def chunks():
        wrapped = iter(progress(stream, f"reading {path}") if progress is not None else stream)
        while True:
            # An error of the reader is its own; only the estimator's are data errors.
            state.reading = True
            ds = next(wrapped, None)
            state.reading = False
            if ds is None:
                return
            state.chunks += 1
            ds = counts_of_rows.filter(ds, in_force)
            # Rows are held only while they may turn out to be the whole file.
            state.hold(ds, counts_of_rows.read, stream.whole_rows)
            if ds.X.shape[0] == 0:
                continue
            # Statistics grow with the classes (and categories) met: refused
            # before the chunk that would take them past the limit.
            # The labels are coded once here (or by the reader): the
            # fingerprint and the model's statistics take the same codes.
            coding = ds.y_coding
            if coding is None or not coding.describes(ds.y):
                uniques, codes = label_codes(ds.y)
                coding = LabelCoding(ds.y, uniques, codes)
            classes_seen.update(coding.uniques.tolist())
            check_statistics_size(
                path,
                estimator,
                ds.X.shape[1],
                max(2, len(classes_seen)),
                dims={"S": sum(len(v) for v in stream.categories.values())},
            )
            fp.update(fingerprint_columns(ds.X, ds.words, request.text_columns), ds.y, coding)
            state.offset = state.rows
            state.kept = counts_of_rows.kept_rows
            state.rows += ds.X.shape[0]
            yield ds.X, coding, ds.words

    started = time.perf_counter()
    try:
        # Overflow (squares of values beyond ~1e154) is caught below, by
        # column, rather than printed as NumPy warnings.
        frequencies: dict = {}
        # checks_of_one_array: the row filter and the model's validation of a
        # chunk sum it for finiteness once between them.
        with np.errstate(over="ignore", invalid="ignore"), checks_of_one_array():
            vocabularies, feature_names = fit_blocks(
                estimator, text, chunks(), stream.feature_names, path, frequencies
            )
        if text is not None:
            text = text_features.learnt_frequencies(text, frequencies)
        if text is not None and text.weighting is not None:
            text_features.refit_weighted_words(
                estimator, text, vocabularies, _rows_again(path, estimator, request, missing)
            )
    except ValueError as exc:
        if state.reading:
            raise
        if state.rows == 0:
            raise NbcliError(counts_of_rows.none_used(path)) from None
        raise data_error(path, exc, stream.feature_names, 0, rows=state.kept) from None
    first = state.whole()
    state.held = None
    warnings.extend(stream.spelling_warnings())
    warnings.extend(stream.read_warnings())
    if first is not None:
        first = model_rows(first, text, vocabularies)
    return finish_training(
        estimator,
        RowsRead(
            data=path,
            target=stream.target,
            feature_names=feature_names,
            notes=[stream.note] if stream.note else [],
            n_rows=state.rows,
            n_chunks=state.chunks,
            fingerprint=fp.metadata(),
            started=started,
            first=first,
            warnings=warnings,
        ),
        priors_by_label=priors_by_label,
        text=text,
        vocabularies=vocabularies,
        tables=TableFacts.of(
            stream.plan, stream.categories, request, (missing, unseen), counts_of_rows
        ),
    )


@dataclass
class TableFacts:
    """What reading a table decided, for the model file and the summary.

    Attributes
    ----------
    plan : ColumnPlan
        Column kinds as the reader chose them.
    categories : dict
        ``{column: Categories}`` of the categorical columns.
    missing, unseen : str
        The policies, stored in the model.
    na_values : list of str or None
        Cell texts read as missing, when not the default.
    row_counts : RowCounts
        Rows used, skipped for a missing label, dropped for a missing cell.
    na_labels : tuple of str
        Label texts read as a missing label (``--na-labels``).
    """

    plan: Any
    categories: Any
    missing: str
    unseen: str
    na_values: Any = None
    row_counts: Any = None
    na_labels: tuple = ()

    @classmethod
    def of(cls, plan, categories, request, policies: tuple, row_counts=None) -> TableFacts:
        """The facts of one read of ``request`` (its ``na_values`` and
        ``na_labels``) with ``policies``, ``(missing, unseen)``."""
        missing, unseen = policies
        return cls(
            plan, categories, missing, unseen, request.na_values, row_counts, request.na_labels
        )


def _rows_again(path, estimator, request, missing):
    """The training rows ``(X, y, words)`` read a second time, as the first
    pass used them (rows without a label, or dropped for a missing cell, left out)."""
    from nbcli.workflows.tables import RowCounts, missing_in_force, missing_remedies

    counts = RowCounts()
    in_force = missing_in_force(estimator, missing)
    for ds in training_stream(
        path,
        estimator,
        request.reading(missing=missing, missing_remedies=missing_remedies(estimator)),
    ):
        ds = counts.filter(ds, in_force)
        if ds.X.shape[0]:
            yield ds.X, ds.y, ds.words


@dataclass
class RowsRead:
    """What reading the training rows found, for :func:`finish_training`.

    Attributes
    ----------
    data : str
        What ``--data`` named (a file, folder or pattern), for messages and
        the model file's ``training.data``.
    target, feature_names, notes
        As the reader chose them.
    n_rows, n_chunks : int
        Rows and chunks read.
    fingerprint : dict
        ``TrainingFingerprint.metadata()`` of the rows, in order.
    started : float or None
        The ``time.perf_counter()`` of the start of reading.
    first : Dataset, optional
        The whole data when it was small enough to hold (for the training
        accuracy).
    warnings : list of str
        Warnings already found while reading (the column plan's).
    """

    data: str
    target: str | None
    feature_names: list[str]
    notes: list[str]
    n_rows: int
    n_chunks: int
    fingerprint: dict
    started: float | None = None
    first: Any = None
    warnings: list[str] = field(default_factory=list)


def finish_training(
    estimator,
    read: RowsRead,
    *,
    priors_by_label=None,
    tables: TableFacts | None = None,
    text=None,
    vocabularies: dict | None = None,
) -> TrainResult:
    """Check gathered statistics, make the model from them once, and describe it.

    The second half of :func:`train`, shared with fits whose statistics were
    gathered part by part (:mod:`nbcli.workflows.parts`), so that both
    refuse the same data with the same messages and write the same file.

    Parameters
    ----------
    estimator : BayesClassifier
        With ``stats_``, ``classes_`` (labels as read: text from CSV) and
        ``n_features_in_`` set, not finalized.
    read : RowsRead
        What reading the rows found.
    priors_by_label
        As in :func:`train`.
    tables : TableFacts, optional
        Column kinds, categories, missing-value policies and row counts of a
        table read by :func:`train`; the model file records them.
    text : TextSettings, optional
        The text columns and their tokenisation, with ``vocabularies``
        (``{column: list of terms}``), for the model file.

    Raises
    ------
    NbcliError
        As :func:`train`.
    """
    from nbcli.io.data import resolve_labels
    from nbcli.io.modelfile import ModelFile
    from nbcli.workflows.tables import (
        column_records,
        model_feature_names,
        set_category_counts,
        smoothing_warnings,
    )

    path, target, feature_names = read.data, read.target, read.feature_names
    n_rows, first, notes, fingerprint = read.n_rows, read.first, read.notes, read.fingerprint
    n_chunks = read.n_chunks
    started = time.perf_counter() if read.started is None else read.started
    warnings = list(read.warnings)
    model_type = estimator.name
    check_finite_statistics(path, estimator, feature_names)
    classes = estimator.classes_
    typed = resolve_labels(classes) if classes.dtype.kind in "USO" else classes
    counts = estimator.stats_.class_counts
    if len(classes) < 2:
        raise NbcliError(
            f"{path}: the target {target!r} has a single class ({_plain(typed[0])!r}); "
            "a classifier needs at least two"
        )
    from nbcli.io.cells import missing_spelling_note

    na_values = None if tables is None else tables.na_values
    spelled_missing = missing_spelling_note(typed.tolist(), na_values)
    if spelled_missing:
        warnings.append(f"{path}: {spelled_missing}")
    singles = [str(c) for c, n in zip(typed, counts) if n < 2]
    if singles:
        shown = ", ".join(repr(s) for s in singles[:10])
        if len(singles) > 10:
            shown += f" and {len(singles) - 10} more"
        msg = (
            f"class{'es' if len(singles) > 1 else ''} {shown} "
            f"{'have' if len(singles) > 1 else 'has'} a single sample"
        )
        if estimator.min_samples_per_class >= 2:
            way = "remove the class or add samples"
            if len(singles) > len(classes) / 2:
                # Most classes once each: a measurement, not labels.
                way = (
                    f"most of the {len(classes)} classes have one row: is {target!r} a "
                    "measurement rather than class labels? choose the label column with --target"
                )
            note = missing_spelling_note(singles, na_values)
            raise NbcliError(
                f"{path}: {msg}; the {model_type} model needs at least two per class to estimate "
                f"a spread ({way})" + (f"; {note}" if note else "")
            )
        warnings.append(f"{path}: {msg}; its probabilities rest on smoothing alone")
    for check in type(estimator).fit_checks:
        # What the class declares of its training data (Gaussian spreads).
        FIT_CHECKS[check](path, estimator, feature_names, typed)
    import warnings as python_warnings

    try:
        # relabel and set_params rebuild the parameters too: every warning of
        # the model is collected, and reported once, naming the columns.
        with (
            np.errstate(over="ignore", invalid="ignore"),
            python_warnings.catch_warnings(record=True) as caught,
        ):
            python_warnings.simplefilter("always")
            if tables is not None:
                # Per table column: the word counts of text columns have no categories.
                n_table = len(feature_names) - sum(len(v) for v in (vocabularies or {}).values())
                set_category_counts(estimator, feature_names[:n_table], tables.categories)
            if typed is not classes:
                estimator.relabel(typed)
            if priors_by_label is not None:
                estimator.set_params(
                    **{estimator.prior_param: order_priors(priors_by_label, estimator.classes_)}
                )
            estimator.finalize()
    except ValueError as exc:
        named = model_message(exc, feature_names) + remedy(exc, estimator, feature_names)
        # A class spelled as a missing value is the likelier cause (a column
        # with no value in class 'NA'), and its warning would not be shown.
        raise NbcliError(
            f"{path}: {named}" + (f"; {spelled_missing}" if spelled_missing else "")
        ) from None
    # Under a projection the model's messages are about its components.
    seen = model_feature_names(estimator, feature_names)
    warnings.extend(_model_warnings(path, caught, seen))
    check_finite_parameters(path, estimator)
    warnings.extend(smoothing_warnings(path, estimator, seen))
    if tables is not None and tables.row_counts is not None:
        warnings.extend(tables.row_counts.warnings(path, tables.missing))
        warnings.extend(tables.row_counts.lost_classes(path, classes))
        n_rows = tables.row_counts.used
    seconds = time.perf_counter() - started

    accuracy = None
    if first is not None and first.X.shape[0]:
        # Rows with missing cells count only where the model scores them.
        missing = getattr(estimator, "missing_policy", getattr(estimator, "missing", "error"))
        sparse = hasattr(first.X, "tocsr")  # word counts hold no missing cell
        scored = (
            np.ones(first.X.shape[0], bool)
            if missing == "ignore" or sparse
            else ~np.isnan(first.X).any(axis=1)
        )
        if scored.any():
            pred = estimator.predict(first.X[scored])
            from nbcli.io.cells import same_spelling

            accuracy = float(np.mean(same_spelling(pred, np.asarray(first.y)[scored])))

    classes_out = [_plain(c) for c in estimator.classes_.tolist()]
    counts = estimator.stats_.class_counts
    counts_out = [int(c) if float(c).is_integer() else float(c) for c in counts]
    training = {
        "n_samples": int(n_rows),
        "class_counts": counts_out,
        **fingerprint,
        "data": path,
    }
    if tables is not None:
        from nbcli.workflows.tables import reading_record

        training.update(reading_record(tables))
    mf = ModelFile(
        model=estimator,
        feature_names=list(feature_names),
        target=target,
        training=training,
        columns=None
        if tables is None
        else column_records(estimator, tables.plan, tables.categories),
        vocabularies=vocabularies,
        text=text,
    )
    facts = dict(
        model_type=model_type,
        hyperparameters={k: _jsonable(v) for k, v in estimator.get_params().items()},
        data=path,
        target=target,
        n_samples=int(n_rows),
        feature_names=list(feature_names),
        classes=classes_out,
        class_counts=counts_out,
        priors=[float(p) for p in class_priors(estimator)],
        seconds=seconds,
        training_accuracy=accuracy,
        n_chunks=n_chunks,
    )
    notes = list(notes)
    if tables is not None and tables.row_counts is not None:
        from nbcli.workflows.tables import missing_in_force

        in_force = missing_in_force(estimator, tables.missing)
        notes.extend(
            tables.row_counts.notes(
                path, tables.missing, mf.columns or [], in_force, _code_widths(estimator, mf)
            )
        )
    return TrainResult(model_file=mf, facts=facts, warnings=warnings, notes=notes)


def _code_widths(estimator, mf) -> dict[str, int]:
    """Categories of each categorical column, by name (``n_categories_`` holds
    one per categorical column, in order); the fit summary gives those of
    integer codes, which have no list of texts to count."""
    widths = getattr(estimator, "n_categories_", None)
    categorical = [c["name"] for c in mf.columns or [] if c["type"] == "categorical"]
    if widths is None or len(widths) != len(categorical):
        return {}
    return {name: int(k) for name, k in zip(categorical, widths)}


def _jsonable(v):
    if isinstance(v, np.ndarray):
        return v.tolist()
    return _plain(v)
