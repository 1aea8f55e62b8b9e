"""Training from a file: stream chunks into a model, check the result, describe it."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from nbcli.errors import NbcliError
from nbcli.reports.runs import TrainingReport
from nbcli.models._validation import DataValueError

# Models that estimate a spread per class: one sample cannot give one.
_NEEDS_TWO_PER_CLASS = ("gaussian", "lda", "qda")


def data_error(path: str, exc: ValueError, feature_names, row_offset: int) -> NbcliError:
    """Turn a core ``ValueError`` about a data chunk into a one-line error naming file, column and row."""
    if isinstance(exc, DataValueError) and feature_names is not None:
        col = feature_names[exc.column] if exc.column < len(feature_names) else exc.column
        return NbcliError(f"{path}: column {col!r}, row {row_offset + exc.row + 1}: {exc.reason}")
    return NbcliError(f"{path}: {exc}")


def class_priors(model) -> np.ndarray:
    """Prior probabilities used by any of the five models, in ``classes_`` order."""
    for attr in ("class_prior_", "priors_"):
        if hasattr(model, attr):
            return np.asarray(getattr(model, attr))
    return np.exp(model.class_log_prior_)


@dataclass
class TrainResult:
    model_file: object
    report: TrainingReport
    warnings: list

    def summary(self, output: str) -> TrainingReport:
        self.report.output = output
        return self.report


def _plain(v):
    return v.item() if isinstance(v, np.generic) else v


def train(
    estimator,
    path: str,
    *,
    target=None,
    features=None,
    drop=None,
    delimiter=None,
    chunk_size=None,
    x_key="X",
    y_key="y",
    priors_by_label=None,
    order_priors=None,
    quiet=False,
) -> TrainResult:
    """Fit ``estimator`` on the file at ``path`` chunk by chunk.

    Only one chunk is in memory at a time (the first is kept when it is the
    whole file, to report training accuracy without reading the file twice).
    Labels from CSV are read as text and given their type (integers when
    every label is one) only once all chunks are in, so a class is never
    split by a type that changes between chunks.

    Raises
    ------
    NbcliError
        For unreadable or invalid data, a single class, or a class with one
        sample where the model estimates a spread.
    """
    from nbcli.cli.progress import progress_iter
    from nbcli.io.data import iter_dataset, resolve_labels
    from nbcli.io.fingerprint import DataFingerprint
    from nbcli.io.modelfile import ModelFile

    stream = iter_dataset(
        path,
        chunk_size=chunk_size,
        target=target,
        features=features,
        drop=drop,
        need_target=True,
        delimiter=delimiter,
        x_key=x_key,
        y_key=y_key,
        raw_labels=True,
    )
    warnings = []
    fp = DataFingerprint()
    state = {"first": None, "chunks": 0, "rows": 0}
    model_type = estimator.model_type
    if priors_by_label is not None:
        # Priors given by label can be put in order only once the classes are known.
        prior_key = "class_prior" if model_type in ("multinomial", "bernoulli") else "priors"
        estimator.set_params(**{prior_key: None})

    started = time.perf_counter()
    for attr in ("stats_", "classes_"):
        if hasattr(estimator, attr):
            delattr(estimator, attr)
    for ds in progress_iter(stream, f"reading {path}", quiet=quiet):
        state["chunks"] += 1
        # Keep the first chunk only while it may turn out to be the whole file.
        state["first"] = ds if state["chunks"] == 1 else None
        fp.update(ds.X, ds.y)
        try:
            estimator._accumulate(ds.X, ds.y, None, None)
        except ValueError as exc:
            raise data_error(path, exc, stream.feature_names, state["rows"]) from None
        state["rows"] += ds.X.shape[0]
    if state["rows"] == 0:
        raise NbcliError(f"{path}: no data rows")

    classes = estimator.classes_
    typed = resolve_labels(classes) if classes.dtype.kind in "US" else classes
    counts = estimator.stats_.arrays().get("count", estimator.stats_.arrays().get("class_count"))
    if len(classes) < 2:
        raise NbcliError(
            f"{path}: the target {stream.target!r} has a single class ({_plain(typed[0])!r}); "
            "a classifier needs at least two"
        )
    singles = [str(c) for c, n in zip(typed, counts) if n < 2]
    if singles:
        msg = f"class{'es' if len(singles) > 1 else ''} {', '.join(repr(s) for s in singles)} " \
              f"{'have' if len(singles) > 1 else 'has'} a single sample"
        if model_type in _NEEDS_TWO_PER_CLASS:
            raise NbcliError(
                f"{path}: {msg}; the {model_type} model needs at least two per class to estimate "
                "a spread (remove the class or add samples)"
            )
        warnings.append(f"{path}: {msg}; its probabilities rest on smoothing alone")
    try:
        if typed is not classes:
            estimator.relabel(typed)
        if priors_by_label is not None:
            estimator.set_params(**{prior_key: order_priors(priors_by_label, estimator.classes_)})
        estimator._finalize()
    except ValueError as exc:
        raise NbcliError(f"{path}: {exc}") from None
    seconds = time.perf_counter() - started

    accuracy = None
    first = state["first"]
    if first is not None and state["chunks"] == 1:
        pred = estimator.predict(first.X)
        accuracy = float(np.mean(pred.astype(str) == np.asarray(first.y).astype(str)))

    classes_out = [_plain(c) for c in estimator.classes_.tolist()]
    counts = estimator.stats_.arrays().get("count", estimator.stats_.arrays().get("class_count"))
    counts_out = [int(c) if float(c).is_integer() else float(c) for c in counts]
    training = {
        "n_samples": int(state["rows"]),
        "class_counts": counts_out,
        "data_sha256": fp.hexdigest(),
        "data": path,
    }
    mf = ModelFile(
        model=estimator,
        feature_names=list(stream.feature_names),
        target=stream.target,
        training=training,
    )
    if stream.note and not quiet:
        from nbcli.cli.console import info

        info(stream.note)
    report = TrainingReport(
        model_type=model_type,
        hyperparameters={k: _jsonable(v) for k, v in estimator.get_params().items()},
        data=path,
        target=stream.target,
        n_samples=int(state["rows"]),
        feature_names=list(stream.feature_names),
        classes=classes_out,
        class_counts=counts_out,
        priors=[float(p) for p in class_priors(estimator)],
        seconds=seconds,
        training_accuracy=accuracy,
        n_chunks=state["chunks"],
    )
    return TrainResult(model_file=mf, report=report, warnings=warnings)


def _jsonable(v):
    if isinstance(v, np.ndarray):
        return v.tolist()
    return _plain(v)
