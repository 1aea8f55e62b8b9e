"""Predictions for files: one file to a CSV or stdout, or many files into a folder."""

from __future__ import annotations

import glob
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from nbcli.errors import NbcliError
from nbcli.workflows.engine import Engine, LocalEngine, Reporter
from nbcli.workflows.inputs import ReadOptions
from nbcli.workflows.scoring import iter_scores

if TYPE_CHECKING:
    from nbcli.reports.runs import BatchReport

_SUFFIXES = (".csv.gz", ".tsv.gz", ".txt.gz", ".csv", ".tsv", ".txt", ".gz", ".npz", ".parquet")


def output_columns(mf, proba: bool) -> list[str]:
    """The columns nbcli writes itself: ``prediction`` and, with ``proba``,
    ``proba_<label>`` for every class."""
    names = ["prediction"]
    if proba:
        names += [f"proba_{c}" for c in mf.classes.tolist()]
    return names


def check_keep(keep: list[str] | None, mf, proba: bool) -> None:
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


def predict(
    mf,
    in_path: str,
    out_path: str | None,
    *,
    proba: bool = False,
    keep: list[str] | None = None,
    read: ReadOptions | None = None,
    reporter: Reporter | None = None,
    digits: int | None = None,
) -> int:
    """Write predictions for ``in_path`` to ``out_path`` (atomically) or stdout (None or ``-``).

    Parameters
    ----------
    mf : nbcli.io.modelfile.ModelFile
        A loaded model file.
    in_path : str
        Data file, or ``-`` for stdin.
    out_path : str or None
        Predictions CSV; None or ``-`` for stdout.
    proba : bool
        Add one ``proba_<label>`` column per class.
    keep : list of str, optional
        Input columns copied next to the predictions.
    digits : int, optional
        Round probabilities to this many decimal places; by default they are
        written in the shortest form that reads back to the same float64.
    read : ReadOptions, optional
        How to read the input. The model's training target is ignored if
        present.

    Returns
    -------
    int
        The number of rows written.

    Raises
    ------
    NbcliError
        For unreadable data or rows the model refuses; when the output
        streams (stdout, a pipe), the message says how many rows went out.
    """
    from nbcli.io.atomic import atomic_write, resolve_output
    from nbcli.io.predictions import PredictionWriter

    writer = PredictionWriter.for_path(out_path, mf.classes, proba=proba, digits=digits)
    scores = iter_scores(mf, in_path, read=read, keep=keep, reporter=reporter)

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


def _predict_one(model_path: str, in_path: str, out_path: str, options: dict):
    """One batch task: returns ``(in_path, rows, error message or None, stale output removed)``.

    A failed input's output left from an earlier run is removed, so that no
    stale predictions sit next to fresh ones (the caller says so).
    """
    from nbcli.io.modelfile import load_model

    try:
        mf = load_model(model_path)
        rows = predict(mf, in_path, out_path, **options)
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


def predict_batch(
    model_path: str,
    inputs: list[str],
    output_dir: str,
    *,
    jobs: int | None = None,
    reporter: Reporter | None = None,
    engine: Engine | None = None,
    force: bool = False,
    **options,
) -> BatchReport:
    """Predict every input into ``output_dir/<name>.pred.csv``, files in parallel.

    The model file is checked once up front (a bad model fails the whole
    run with exit code 2). A bad input file is recorded in the report and
    skipped; each output is written atomically, so a failure leaves no
    partial file.

    Parameters
    ----------
    force : bool
        Replace an existing output file that is not a predictions file.
    options
        The keyword options of :func:`predict` (``proba``, ``keep``, ``read``).

    Returns
    -------
    nbcli.reports.runs.BatchReport
        One row per input, with its error (or None); ``removed`` lists the
        inputs whose output from an earlier run was deleted.
    """
    from nbcli.io.atomic import check_outputs
    from nbcli.io.modelfile import load_model
    from nbcli.reports.runs import BatchReport

    reporter = reporter or Reporter()
    engine = engine or LocalEngine()
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
    targets: dict[str, str] = {}
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
        kinds={"--output-dir": "predictions"},
        force=force,
    )
    tasks = [(model_path, p, targets[p], options) for p in inputs]
    try:
        results = list(
            reporter.progress(
                engine.map(_predict_one, tasks, jobs=jobs), "scoring files", total=len(inputs)
            )
        )
    except BaseException:
        # Interrupted (Ctrl-C, SIGTERM): joblib kills its workers outright,
        # so their unfinished temporary files are removed here.
        _remove_temporaries(targets.values())
        raise
    report = BatchReport()
    for in_path, rows, error, removed in results:
        report.rows.append((in_path, targets[in_path], rows, error))
        if removed:
            report.removed.append(in_path)
    return report
