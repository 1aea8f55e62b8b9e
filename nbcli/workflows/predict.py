"""Predictions for files: one file to a CSV or stdout, or many files into a folder."""

from __future__ import annotations

import contextlib
import glob
import os
import signal
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

from nbcli import interrupts
from nbcli.errors import NbcliError
from nbcli.io.atomic import commit_staged, discard_staged, staging
from nbcli.io.request import DataRequest
from nbcli.workflows.engine import Engine, LocalEngine, Reporter
from nbcli.workflows.scoring import iter_scores
from nbcli.workflows.settings import PredictionColumns

if TYPE_CHECKING:
    from nbcli.reports.runs import BatchReport

_SUFFIXES = (
    ".csv.gz",
    ".tsv.gz",
    ".txt.gz",
    ".arff.gz",
    ".csv",
    ".tsv",
    ".txt",
    ".gz",
    ".npz",
    ".parquet",
    ".feather",
    ".arrow",
    ".arff",
    ".svm",
    ".svmlight",
    ".libsvm",
)


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
    request: DataRequest,
    out_path: str | None,
    columns: PredictionColumns | None = None,
    *,
    reporter: Reporter | None = None,
    summary=None,
) -> int:
    """Write predictions for the data of ``request`` to ``out_path`` (atomically) or
    stdout (None or ``-``).

    Parameters
    ----------
    mf : nbcli.io.modelfile.ModelFile
        A loaded model file.
    request : DataRequest
        The data file (or ``-`` for stdin) and how to read it. The model's
        training target is ignored if present.
    out_path : str or None
        Predictions CSV; None or ``-`` for stdout.
    columns : PredictionColumns, optional
        ``proba``: one ``proba_<label>`` column per class; ``keep``: input
        columns copied next to the predictions; ``digits``: decimal places of
        the probabilities (by default they are written in the shortest form
        that reads back to the same float64).
    summary : nbcli.workflows.summary.PredictionSummary, optional
        Filled in as the rows go: rows written, scored, left empty (a row
        that cannot be scored gets an empty prediction), unseen categories,
        unseen words. Without one, words not in a text model's vocabulary
        are also reported through ``reporter.advise``; with one, the caller
        reports them (the command's summary line), so they are said once.

    Returns
    -------
    int
        The number of rows written.

    Raises
    ------
    NbcliError
        For unreadable data or rows the model refuses; when the output
        streams (stdout, a pipe), the message says how many rows went out.

    Examples
    --------
    >>> from nbcli.io.modelfile import load_model, save_model
    >>> from nbcli.io.request import DataRequest
    >>> from nbcli.models import GaussianNB
    >>> from nbcli.workflows.predict import predict
    >>> from nbcli.workflows.settings import PredictionColumns
    >>> from nbcli.workflows.train import train
    >>> save_model(train(GaussianNB(), DataRequest.of("sample_data/iris_train.csv")).model_file, "iris.npz")
    >>> predict(load_model("iris.npz"), DataRequest.of("sample_data/iris_test.csv"), "predictions.csv",
    ...         PredictionColumns(proba=True))
    30
    >>> open("predictions.csv").readline().strip()
    'prediction,proba_setosa,proba_versicolor,proba_virginica'
    """
    from nbcli.io.atomic import resolve_output
    from nbcli.io.predictions import PredictionWriter
    from nbcli.workflows.summary import PredictionSummary
    from nbcli.workflows.tables import read_options_for

    columns = columns or PredictionColumns()
    in_path, read = request.path, request
    keep = None if columns.keep is None else list(columns.keep)
    writer = PredictionWriter.for_path(
        out_path, mf.classes, proba=columns.proba, digits=columns.digits
    )
    # A caller that passes a summary reports the unseen words with it (the
    # command's summary line); the others are told through the reporter.
    advise_unseen = summary is None
    summary = summary if summary is not None else PredictionSummary()
    policy = read_options_for(mf, missing=read.missing, unseen=read.unseen)
    summary.missing, summary.unseen_policy = policy["missing"], policy["unseen"]
    summary.data, summary.output = in_path, None if out_path in (None, "-") else out_path
    # The labels a file may carry are not needed for predictions.
    scores = iter_scores(
        mf,
        in_path,
        read=read,
        keep=keep,
        reporter=reporter,
        unseen_counts=summary.unseen,
        labels=False,
    )

    unseen = 0

    def write(f, streaming: str | None) -> int:
        nonlocal unseen
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
            summary.rows += chunk.n_rows
            summary.scored += chunk.n_scored
            summary.unseen_words += chunk.unseen_words
            unseen += chunk.unseen_words

    if out_path is None or out_path == "-":
        rows = write(sys.stdout, streaming="stdout")
        sys.stdout.flush()
    else:
        # A device or named pipe is written in place, as it goes, like stdout.
        _, in_place = resolve_output(out_path)
        with writer.opened(out_path) as f:
            rows = write(f, streaming=out_path if in_place else None)
    if mf.text is not None and reporter is not None and unseen and advise_unseen:
        reporter.advise(unseen_words_line(in_path, rows, unseen))
    return rows


def unseen_words_line(in_path: str, rows: int, unseen: int) -> str:
    """The summary of words a text model ignored: ``"data.csv: 120 rows scored; 37 words ..."``."""
    word = "word" if unseen == 1 else "words"
    return f"{in_path}: {rows} rows scored; {unseen} {word} not in the model's vocabulary ignored"


OUTPUT_FORMATS = ("csv", "parquet")


def output_name(in_path: str, output_format: str = "csv") -> str:
    """``in/data.csv.gz`` -> ``data.pred.csv`` (``data.pred.parquet`` for ``"parquet"``)."""
    name = Path(in_path).name
    for suffix in _SUFFIXES:
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
            break
    return f"{name}.pred.{output_format}"


def _predict_one(model, in_path: str, out_path: str, options: tuple):
    """One batch task: returns ``(in_path, rows, error message or None, earlier output kept)``.

    ``model`` is a model file's path (loaded here, in the worker) or a
    loaded model file. A failed input's output left from an earlier run is
    left as it was (the caller says so): a run removes nothing it did not
    write. ``options`` is ``(request, columns)`` of :func:`predict`.
    """
    from nbcli.io.modelfile import load_model

    request, columns = options
    try:
        mf = load_model(model) if isinstance(model, str) else model
        rows = predict(mf, request.reading(data=(in_path,)), out_path, columns)
        return in_path, rows, None, False
    except NbcliError as exc:
        error = " ".join(str(exc).split())
    except Exception as exc:  # a bug must not stop the other files
        error = f"internal error ({type(exc).__name__}: {exc})"
    return in_path, 0, error, _regular_file(out_path)


def _predict_part(index: int, part: tuple[str, str], shared: tuple) -> tuple:
    """:func:`_predict_one` as a per-part task of an engine; ``shared`` is
    ``(model file, options)``. A local output is staged, not put in place:
    the result ends with the ``(temporary file, target)`` pairs, which the
    client replaces together once every part is done (an output to a URL is
    uploaded by the worker, and the pairs are empty)."""
    from nbcli.io.remote import is_url

    mf, options = shared
    staged: list = []
    with contextlib.nullcontext() if is_url(part[1]) else staging(staged):
        result = _predict_one(mf, part[0], part[1], options)
    return (*result, staged)


class _Batch:
    """What the threads of one local batch share: the outputs they staged,
    how many tasks are running, and whether the batch was abandoned."""

    def __init__(self):
        self.staged: list = []
        self.cancelled = threading.Event()
        self._running = 0
        self._idle = threading.Condition()

    @contextlib.contextmanager
    def task(self):
        with self._idle:
            self._running += 1
        try:
            yield
        finally:
            with self._idle:
                self._running -= 1
                self._idle.notify_all()

    def abandon(self) -> None:
        """Stop the tasks (each at its next chunk, see
        :func:`nbcli.interrupts.checkpoint`), wait for them, and remove
        every file they staged. A further interruption while waiting is
        raised once they are done."""
        self.cancelled.set()
        interruption: BaseException | None = None
        while True:
            try:
                with self._idle:
                    while self._running:
                        self._idle.wait()
                break
            except BaseException as exc:
                interruption = interruption or exc
        discard_staged(self.staged)
        if interruption is not None:
            raise interruption


def _predict_staged(model, in_path: str, out_path: str, options: tuple, batch: _Batch):
    """:func:`_predict_one` for a thread of a local batch: the output is staged
    in ``batch`` (the caller replaces the targets once every file is done).
    None when the batch stopped before the file was done."""
    with batch.task():
        if batch.cancelled.is_set() or interrupts.stopping():
            return None
        try:
            with staging(batch.staged):
                return _predict_one(model, in_path, out_path, options)
        except interrupts.Stopped:
            return None


def _regular_file(path) -> bool:
    import stat

    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


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


@dataclass(frozen=True)
class BatchOutput:
    """Where batch predictions go.

    Attributes
    ----------
    folder : str
        The output folder (made if missing).
    format : {"csv", "parquet"}
        ``<name>.pred.csv`` or ``<name>.pred.parquet``.
    force : bool
        Replace an existing output file that is not a predictions file.
    """

    folder: str
    format: str = "csv"
    force: bool = False


def predict_batch(
    model_path: str,
    request: DataRequest,
    output: BatchOutput,
    columns: PredictionColumns | None = None,
    *,
    jobs: int | None = None,
    reporter: Reporter | None = None,
    engine: Engine | None = None,
) -> BatchReport:
    """Predict every input of ``request`` (its files, folders and globs, see
    :func:`nbcli.workflows.parts.expand_parts`) into
    ``output.folder/<name>.pred.csv``, files in parallel.

    On the local engine the files are scored in joblib threads
    (``jobs``); on the Dask engine (``engine.name == "dask"``) the model
    file is sent to every worker once and each input is scored and written
    by a worker, so the workers must see ``output_dir`` at the same path
    (the client puts their outputs in place).

    The model file is checked once up front (a bad model fails the whole
    run with exit code 2). A bad input file is recorded in the report and
    skipped (an output of it from an earlier run is left as it was). Every
    output is written to a temporary file, and they replace their targets
    together once every input is done: an interrupted batch (Ctrl-C,
    SIGTERM) leaves the folder as it was (outputs to URLs, uploaded by the
    Dask workers, excepted).

    Parameters
    ----------
    output : BatchOutput
        The folder, the format of the files and whether to replace other files.
    columns : PredictionColumns, optional
        As for :func:`predict`.

    Returns
    -------
    nbcli.reports.runs.BatchReport
        One row per input, with its error (or None); ``stale`` lists the
        failed inputs whose output from an earlier run is still there.

    Examples
    --------
    Each part file of a folder scored to a file of its own:

    >>> import os, shutil
    >>> from nbcli.io.modelfile import save_model
    >>> from nbcli.io.request import DataRequest
    >>> from nbcli.models import GaussianNB
    >>> from nbcli.workflows.predict import BatchOutput, predict_batch
    >>> from nbcli.workflows.train import train
    >>> save_model(train(GaussianNB(), DataRequest.of("sample_data/iris_train.csv")).model_file, "iris.npz")
    >>> os.makedirs("parts", exist_ok=True)
    >>> _ = shutil.copy("sample_data/iris_test.csv", "parts/a.csv")
    >>> _ = shutil.copy("sample_data/iris_calib.csv", "parts/b.csv")
    >>> report = predict_batch("iris.npz", DataRequest.of("parts"), BatchOutput("preds"))
    >>> sorted(os.listdir("preds"))
    ['a.pred.csv', 'b.pred.csv']
    """
    from nbcli.io.atomic import check_outputs
    from nbcli.io.modelfile import load_model
    from nbcli.io.part_paths import expand_parts
    from nbcli.reports.runs import BatchReport

    reporter = reporter or Reporter()
    engine = engine or LocalEngine()
    columns = columns or PredictionColumns()
    output_dir, output_format, force = output.folder, output.format, output.force
    inputs = expand_parts(request.data)
    options = (request, columns)
    if "-" in inputs:
        raise NbcliError("stdin (-) cannot be used in batch mode; give file paths")
    if jobs is not None and jobs < 1:
        raise NbcliError(f"--jobs must be at least 1, got {jobs}")
    mf = load_model(model_path)
    check_keep(None if columns.keep is None else list(columns.keep), mf, columns.proba)
    if output_format not in OUTPUT_FORMATS:
        raise NbcliError(
            f"--output-format {output_format!r}: choose one of {', '.join(OUTPUT_FORMATS)}"
        )
    if output_format == "parquet":
        from nbcli.io.predictions import require_parquet_writer

        require_parquet_writer()
    from nbcli.io.remote import is_url, join

    out_dir = Path(output_dir)
    if not is_url(os.fspath(output_dir)):
        try:
            out_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise NbcliError(
                f"{output_dir}: cannot create the output folder ({exc.strerror or exc})"
            ) from None

    def target_of(p: str) -> str:
        name = output_name(p, output_format)
        return (
            join(os.fspath(output_dir), name)
            if is_url(os.fspath(output_dir))
            else str(out_dir / name)
        )

    # A glob over the output folder also meets an earlier run's outputs: an
    # input that is another input's output this run is left out (and, if it
    # is not an nbcli predictions file, refused below as any output would be).
    outputs_of = {target_of(p): p for p in inputs}
    earlier = [p for p in inputs if p in outputs_of and outputs_of[p] != p]
    for p in earlier:
        reporter.warn(
            f"{p}: left out of the inputs: it is the output of {outputs_of[p]} in this run"
        )
    inputs = [p for p in inputs if p not in earlier]
    targets: dict[str, str] = {}
    for p in inputs:
        out = target_of(p)
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
    if engine.name == "dask":
        from nbcli.workflows.parts import at_client

        try:
            outcomes = engine.map_write(
                [at_client((p, targets[p]), engine) for p in inputs], _predict_part, (mf, options)
            )
            interrupts.checkpoint()
            # The workers staged their outputs; they replace the earlier ones
            # here, together, so that an interrupted batch leaves the folder
            # as it was (and once the first is replaced, the command finishes).
            commit_staged([pair for o in outcomes if o.ok for pair in o.value[-1]])
        except BaseException:
            # Interrupted (Ctrl-C, SIGTERM): the workers are not waited for,
            # so their temporary files, finished or not, are removed here.
            _remove_temporaries(targets.values())
            raise
        # The engine sent absolute paths; the report names the inputs as given.
        results = [
            (inputs[o.index], *o.value[1:-1]) if o.ok else (inputs[o.index], 0, o.error, False)
            for o in outcomes
        ]
    else:
        # Importing polars takes SIGINT over, which nbcli undoes in the main
        # thread only (nbcli.interrupts): so it is imported here, before the threads.
        import polars  # noqa: F401

        from nbcli.io.csv_format import settle_scan_pieces

        # Before the threads: each file's scan would otherwise set it beside the others'.
        settle_scan_pieces()
        local = cast(LocalEngine, engine)
        batch = _Batch()
        tasks = [(model_path, p, targets[p], options, batch) for p in inputs]
        try:
            results = []
            scored = local.map(_predict_staged, tasks, jobs=jobs)
            for result in reporter.progress(scored, "scoring files", total=len(inputs)):
                # An interruption a finalizer swallowed stops the batch here.
                interrupts.checkpoint()
                results.append(result)
            interrupts.checkpoint()
            if any(result is None for result in results):
                # A file was stopped, so the command was interrupted.
                raise (
                    interrupts.Terminated
                    if interrupts.raised_signal() == signal.SIGTERM
                    else KeyboardInterrupt
                )
            # Every output replaces its earlier one at the end, together: an
            # interrupted batch leaves the folder as it was.
            commit_staged(batch.staged)
        except BaseException:
            batch.abandon()
            raise
    report = BatchReport()
    for in_path, rows, error, stale in results:
        report.rows.append((in_path, targets[in_path], rows, error))
        if stale:
            report.stale.append(in_path)
    return report
