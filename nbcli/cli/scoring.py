"""Scoring files with a model: the one path every command predicts through.

``nbcli predict``, ``evaluate``, ``calibrate`` and ``compare`` all get their
posteriors from :func:`iter_scores`, so a prediction written by ``predict`` and
one scored by ``evaluate`` can never disagree.
"""

from __future__ import annotations

import glob
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nbcli.errors import NbcliError

_SUFFIXES = (".csv.gz", ".tsv.gz", ".txt.gz", ".csv", ".tsv", ".txt", ".gz", ".npz", ".parquet")


def expand_inputs(patterns: list[str]) -> list[str]:
    """Paths from ``--data`` values: existing files as given, globs expanded (sorted)."""
    out = []
    for p in patterns:
        if p == "-" or os.path.exists(p) or not glob.has_magic(p):
            out.append(p)
            continue
        matches = sorted(glob.glob(p))
        if not matches:
            raise NbcliError(f"{p}: no files match this pattern")
        out.extend(matches)
    seen = set()
    unique = [p for p in out if not (p in seen or seen.add(p))]
    return unique


@dataclass
class ScoredChunk:
    """Posteriors of one chunk of rows, with what the CLI needs around them."""

    log_proba: np.ndarray  # (n_rows, n_classes), calibrated if the model file has a calibrator
    y: np.ndarray | None  # labels from the file, if it has the target column
    kept: dict
    X: np.ndarray

    @property
    def n_rows(self) -> int:
        return self.log_proba.shape[0]


def iter_scores(
    mf,
    path,
    *,
    need_target=False,
    target=None,
    keep=None,
    delimiter=None,
    chunk_size=None,
    x_key="X",
    y_key="y",
    quiet=True,
):
    """Stream a data file through a model; yields :class:`ScoredChunk`.

    Raises
    ------
    NbcliError
        For unreadable data, missing feature columns, or values the model
        refuses (the message names file, column and row).
    """
    from nbcli.cli.progress import progress_iter
    from nbcli.cli.training import data_error
    from nbcli.io.data import iter_dataset

    stream = iter_dataset(
        path,
        chunk_size=chunk_size,
        target=target,
        model_features=list(mf.feature_names),
        need_target=need_target,
        delimiter=delimiter,
        x_key=x_key,
        y_key=y_key,
        keep=keep,
        target_hint=mf.target,
    )
    rows = 0
    for ds in progress_iter(stream, f"scoring {path}", quiet=quiet):
        try:
            # Rows the model cannot score are refused just below, not warned about.
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                logp = mf.model.predict_log_proba(ds.X)
        except ValueError as exc:
            raise data_error(path, exc, mf.feature_names, rows) from None
        # The model's own posteriors are checked before any calibrator sees
        # them, so a row that cannot be scored is named the same way with or
        # without one.
        _check_scored(path, logp, ds.X, mf.feature_names, rows)
        if mf.calibrator is not None:
            try:
                logp = mf.calibrator.transform_log(logp)
            except ValueError as exc:
                raise data_error(path, exc, mf.feature_names, rows) from None
        rows += ds.X.shape[0]
        yield ScoredChunk(log_proba=logp, y=ds.y, kept=ds.kept, X=ds.X)


def _check_scored(path, logp: np.ndarray, X: np.ndarray, feature_names, row_offset: int) -> None:
    """Refuse the first row whose posterior is undefined (NaN).

    That happens when a row lies so far from the training data (by more
    than about 1e154 spreads) that its likelihood underflows to zero under
    every class, or its squared distance overflows: the posterior is then
    0/0. Such a value is almost always a unit or data-entry error.
    """
    undefined = np.isnan(logp).any(axis=1)
    if not undefined.any():
        return
    i = int(np.argmax(undefined))
    j = int(np.argmax(np.abs(X[i])))
    raise NbcliError(
        f"{path}: row {row_offset + i + 1} cannot be scored: its values are so far from the "
        "training data that its likelihood underflows to zero for every class (largest "
        f"value: column {feature_names[j]!r} = {X[i, j]:g}); check that row's values and units"
    )


def output_columns(mf, proba: bool) -> list[str]:
    """The columns nbcli writes itself: ``prediction`` and, with ``proba``,
    ``proba_<label>`` for every class."""
    names = ["prediction"]
    if proba:
        names += [f"proba_{c}" for c in mf.classes.tolist()]
    return names


def check_keep(keep, mf, proba: bool) -> None:
    """Refuse ``--keep`` columns whose names the predictions CSV already uses.

    Raises
    ------
    NbcliError
        Naming the first such column: the kept copy would be lost or
        ambiguous next to nbcli's own column.
    """
    own = set(output_columns(mf, proba))
    for name in keep or []:
        if name in own:
            raise NbcliError(
                f"--keep {name}: the predictions CSV has its own column {name!r}; rename that "
                "column in the input to keep it"
            )


def score_file(
    mf,
    in_path,
    out_path,
    *,
    proba=False,
    keep=None,
    target=None,
    delimiter=None,
    chunk_size=None,
    x_key="X",
    y_key="y",
    quiet=False,
    digits=None,
) -> int:
    """Write predictions for ``in_path`` to ``out_path`` (atomically) or stdout (None); returns rows."""
    from nbcli.io.atomic import atomic_write, resolve_output
    from nbcli.io.predictions import PredictionWriter

    writer = PredictionWriter.for_path(out_path, mf.classes, proba=proba, digits=digits)

    scores = iter_scores(
        mf,
        in_path,
        target=target,
        keep=keep,
        delimiter=delimiter,
        chunk_size=chunk_size,
        x_key=x_key,
        y_key=y_key,
        quiet=quiet,
    )

    def write(f, streaming: str | None) -> int:
        rows = 0
        chunks = iter(scores)
        while True:
            try:
                chunk = next(chunks, None)
            except NbcliError as exc:
                if not (streaming and rows):
                    raise
                # Predictions stream out chunk by chunk: a bad row further
                # down stops the command after the rows before it went out.
                raise NbcliError(
                    f"{exc} (predictions for the {rows} rows before it were "
                    f"already written to {streaming})",
                    exc.exit_code,
                ) from None
            if chunk is None:
                writer.close(f)
                return rows
            writer.write(f, chunk.kept, chunk.log_proba)
            rows += chunk.n_rows

    if out_path is None or out_path == "-":
        rows = write(sys.stdout, streaming="stdout")
        sys.stdout.flush()
        return rows
    # A device or named pipe is written in place, as it goes, like stdout.
    _, in_place = resolve_output(out_path)
    with atomic_write(out_path, writer.mode) as f:
        return write(f, streaming=out_path if in_place else None)


def output_name(in_path: str) -> str:
    """``in/data.csv.gz`` -> ``data.pred.csv``."""
    name = Path(in_path).name
    for suffix in _SUFFIXES:
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
            break
    return f"{name}.pred.csv"


def _score_one(model_path, in_path, out_path, options):
    """One batch task: returns ``(in_path, rows, error message or None, stale output removed)``.

    A failed input's output left from an earlier run is removed, so that no
    stale predictions sit next to fresh ones (the caller says so).
    """
    from nbcli.io.modelfile import load_model

    try:
        mf = load_model(model_path)
        rows = score_file(mf, in_path, out_path, quiet=True, **options)
        return in_path, rows, None, False
    except NbcliError as exc:
        error = " ".join(str(exc).split())
    except Exception as exc:  # a bug must not stop the other files
        error = f"internal error ({type(exc).__name__}: {exc})"
    return in_path, 0, error, _remove_stale(out_path)


def _remove_stale(path) -> bool:
    """Delete a regular file at ``path``; True if there was one."""
    import stat

    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return False
        os.unlink(path)
    except OSError:
        return False
    return True


def _remove_temporaries(outputs) -> None:
    """Delete the temporary files :func:`nbcli.io.atomic.atomic_write` makes
    next to each of ``outputs`` (``.<name>.<random>.tmp``)."""
    for out in outputs:
        out = Path(out)
        for tmp in out.parent.glob(f".{glob.escape(out.name)}.*.tmp"):
            try:
                tmp.unlink()
            except OSError:
                pass


def batch_jobs(jobs: int | None, n_files: int) -> int:
    """Worker processes for ``n_files`` files: ``jobs`` (default: all cores),
    but never more than the cores available to this process nor the files;
    more processes than cores only compete for them."""
    from joblib import cpu_count

    cores = max(1, cpu_count())
    wanted = cores if jobs is None else jobs
    return max(1, min(wanted, cores, n_files))


def score_batch(model_path, inputs, output_dir, *, jobs=None, quiet=False, **options) -> int:
    """Score every input into ``output_dir/<name>.pred.csv`` in parallel; returns the number that failed.

    The model file is checked once up front (a bad model fails the whole
    command with exit code 2). A bad input file is reported and skipped;
    each output is written atomically, so a failure leaves no partial file.
    """
    from joblib import Parallel, delayed

    from nbcli.cli.console import error_line
    from nbcli.cli.progress import progress_iter
    from nbcli.io.atomic import check_outputs
    from nbcli.io.modelfile import load_model
    from nbcli.reports.runs import BatchReport

    if "-" in inputs:
        raise NbcliError("stdin (-) cannot be used in batch mode; give file paths")
    if jobs is not None and jobs < 1:
        raise NbcliError(f"--jobs must be at least 1, got {jobs}")
    mf = load_model(model_path)
    check_keep(options.get("keep"), mf, options.get("proba", False))
    out_dir = Path(output_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise NbcliError(
            f"{output_dir}: cannot create the output folder ({exc.strerror or exc})"
        ) from None
    targets = {}
    for p in inputs:
        out = str(out_dir / output_name(p))
        if out in targets.values():
            raise NbcliError(
                f"{p}: its output {out} would overwrite another input's; rename one of them"
            )
        targets[p] = out
    check_outputs(
        [("--output-dir", out) for out in targets.values()],
        [("--model", model_path), *(("--data", p) for p in inputs)],
    )
    tasks = (delayed(_score_one)(model_path, p, targets[p], options) for p in inputs)
    parallel = Parallel(n_jobs=batch_jobs(jobs, len(inputs)), return_as="generator")

    try:
        results = list(
            progress_iter(parallel(tasks), "scoring files", quiet=quiet, total=len(inputs))
        )
    except BaseException:
        # Interrupted (Ctrl-C, SIGTERM): joblib kills its workers outright,
        # so their unfinished temporary files are removed here.
        _remove_temporaries(targets.values())
        raise
    report = BatchReport()
    for in_path, rows, error, removed in results:
        if error is not None:
            stale = f"; removed {targets[in_path]}, left from an earlier run" if removed else ""
            error_line(f"{error} (file skipped{stale})")
        report.rows.append((in_path, targets[in_path], rows, error))
    from nbcli.cli.common import emit_report

    emit_report(report, None, quiet=quiet)
    return report.n_failed
