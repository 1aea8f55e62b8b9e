"""Options and output helpers shared by the commands."""

from __future__ import annotations

import contextlib
import os
import sys
from dataclasses import dataclass
from typing import ClassVar, Literal

import typer

from nbcli.io.limits import MAX_CHUNK_ROWS

TARGET = typer.Option(
    "--target",
    "-t",
    help="Target (label) column. Default: a column named label, target, class or y, else the last column.",
)
SCORING_TARGET = typer.Option(
    "--target",
    "-t",
    help="Target (label) column. Default: the model's own target column (the name it had "
    "at training time), if the file has it; else a column named label, target, class or y, "
    "else the last column that is not a feature.",
)
FEATURES = typer.Option(
    "--features",
    help="Feature columns to use (comma-separated or repeated). Default: all but the target.",
)
DROP = typer.Option("--drop", help="Columns to leave out (comma-separated or repeated).")
DELIMITER = typer.Option("--delimiter", help="CSV delimiter. Default: detected among , ; tab |.")
CHUNK_SIZE = typer.Option(
    "--chunk-size",
    min=1,
    max=MAX_CHUNK_ROWS,
    help="Rows read at a time from CSV files (at most 10,000,000). Default: about 2 million "
    "values (16 MB) per chunk.",
)


def pos_label_option(says: str):
    """``--pos-label LABEL``, with what the positive class decides in this
    command (``says``), and what it does to ROC AUC, the same in every command."""
    return typer.Option(
        "--pos-label",
        metavar="LABEL",
        help=f"With two classes, the positive one: {says} (ROC AUC is ranked by its posterior "
        "too; either class gives the same AUC unless posteriors rounded to 1 tie). Default: "
        "the second in sorted order.",
    )


def data_option(help: str):
    """The ``--data``/``-d`` option of a command, with that command's help."""
    return typer.Option("--data", "-d", help=help)


def output_option(help: str):
    """The ``--output``/``-o`` option of a command, with that command's help."""
    return typer.Option("--output", "-o", help=help)


X_KEY = typer.Option("--x-key", help="Name of the feature array in .npz input.")
Y_KEY = typer.Option("--y-key", help="Name of the label array in .npz input.")
JSON = typer.Option(
    "--json",
    help="Also write the report as JSON to this file, or - for stdout (then nothing else goes to stdout).",
)
QUIET = typer.Option(
    "--quiet",
    "-q",
    help="No tables, progress bars or status lines; errors and warnings still show.",
)
FORCE = typer.Option(
    "--force",
    help="Replace an existing file even when it is not an earlier output of the same kind "
    "(a model file, predictions, a JSON report, a plot).",
)
MODEL = typer.Option(
    "--model", "-m", help="Model FILE (.npz) written by nbcli fit (not a model type)."
)


@contextlib.contextmanager
def ctrl_c_for_this_process_only():
    """Ctrl-C stops this process, never the worker processes it starts.

    A terminal sends SIGINT to every process of the foreground group, so
    worker processes (joblib's) would each print a traceback of their own.
    SIGINT is blocked while the block runs; processes started meanwhile
    inherit the blocked signal (a signal mask survives fork and exec), and a
    thread of this process waits for the signal and interrupts the main
    thread, which then stops the workers and reports ``error: interrupted``.
    Outside the main thread, or without ``pthread_sigmask``, the block runs
    as is.
    """
    import _thread
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread() or not hasattr(
        signal, "pthread_sigmask"
    ):
        yield
        return
    done = threading.Event()

    def wait_for_ctrl_c():
        while True:
            signal.sigwait({signal.SIGINT})
            if done.is_set():
                return
            _thread.interrupt_main()

    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    waiter = threading.Thread(target=wait_for_ctrl_c, name="nbcli-ctrl-c", daemon=True)
    waiter.start()
    waiter_id = waiter.ident
    assert waiter_id is not None  # set by start()
    try:
        yield
    finally:
        done.set()
        signal.pthread_kill(waiter_id, signal.SIGINT)
        waiter.join(timeout=5)
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def data_name(values: list[str]) -> str:
    """The data of a command that reads parts as its messages name it: the one
    file (:func:`one_data_file`), or several ``--data`` values joined by ``", "``
    (one data set, read in order, part by part).

    Raises
    ------
    NbcliError
        For a value given more than once: read once, its rows would not be
        counted twice, as the command line seems to ask.
    """
    _refuse_repeated_data(values)
    return one_data_file(values) if len(values) == 1 else ", ".join(values)


def _refuse_repeated_data(values: list[str]) -> None:
    twice = next((v for i, v in enumerate(values) if v in values[:i]), None)
    if twice is not None:
        from nbcli.errors import NbcliError

        times = values.count(twice)
        raise NbcliError(
            f"--data {twice} is given {times} times; each file of a data set is read once: "
            "give it once"
        )


def check_output_dir(value: str | None, data: list[str] | None = None) -> None:
    """Refuse an empty ``--output-dir`` (a shell variable that was not set
    would otherwise write into the current folder without a word), and one
    that is a folder ``data`` reads whole: its outputs would be read as parts
    of the data by the next command that reads it."""
    from nbcli.errors import NbcliError

    if value is not None and not value.strip():
        raise NbcliError("--output-dir is empty; give a folder (. for the current one)")
    if value is None or not os.path.isdir(value):
        return
    for given in data or []:
        if os.path.isdir(given) and os.path.samefile(given, value):
            raise NbcliError(
                f"--output-dir {value} is the folder --data {given} reads: the outputs would be "
                "read as parts of the data by the next command that reads it; give another folder"
            )


def check_model_outputs(output, json_out, data: list[str], config, force: bool) -> None:
    """Before any work, a fitting command's ``--output`` (a model file) and
    ``--json``, against its ``--data`` values and ``--config``
    (:func:`nbcli.io.atomic.check_outputs`)."""
    from nbcli.io.atomic import check_outputs

    check_outputs(
        [("--output", output), ("--json", json_out)],
        [*(("--data", d) for d in data), ("--config", config)],
        models=["--output"],
        force=force,
    )


def repeated_option(option: str, values: list, command: str) -> str:
    """The message refusing ``option`` (``-m/--model``), which takes one value,
    given twice (``values``, in order): both values named, rather than the
    first silently dropped (:func:`one_data_file` refuses several ``--data``
    files alike)."""
    from nbcli.cli.console import one_line

    shown = ", ".join(one_line(str(v)) for v in values)
    name = option.split("/")[-1]
    hint = (
        "; to score two models on the same rows, use nbcli compare"
        if command == "evaluate" and name == "--model"
        else ""
    )
    return f"{option} given twice ({shown}); {command} takes one {name}: give it once{hint}"


def one_data_file(values: list[str]) -> str:
    """The one data file of a command that reads one (``--data`` given once,
    or a glob that matches one file).

    Raises
    ------
    NbcliError
        When several files are given, or one file twice: they are refused
        rather than all but the last silently ignored.
    """
    from nbcli.errors import NbcliError
    from nbcli.workflows.inputs import expand_inputs

    _refuse_repeated_data(values)
    if len(values) == 1 and names_parts_of(values):
        return values[0]  # a folder or glob of parts: the part-wise path reads it
    paths = expand_inputs(values)
    if len(paths) > 1:
        shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
        raise NbcliError(
            f"--data: {len(paths)} files given ({shown}); this command reads one data file: "
            "combine them into one first"
        )
    return paths[0]


def check_model_file(path: str, option: str = "--model") -> None:
    """A one-line hint, before anything is read, when a model type is given
    where a model file is expected (``-m gaussian`` to predict).

    Raises
    ------
    NbcliError
        When ``path`` does not exist and names a model type.
    """
    import os

    from nbcli.errors import NbcliError
    from nbcli.models import registry

    if "://" in path or os.path.exists(path) or path.lower() not in registry.model_classes():
        return
    raise NbcliError(
        f"{option} {path}: no such model file; {path.lower()!r} is a model type, which "
        f"nbcli fit takes (nbcli fit -m {path.lower()} -d DATA -o model.npz): give the "
        "model file it writes"
    )


def emit_report(
    report, json_out: str | None, *, quiet: bool = False, stdout_has_data: bool = False
) -> None:
    """Show ``report`` as tables and/or write its JSON form.

    ``report`` has ``to_dict()`` and is rendered by :func:`nbcli.render.render`.
    With ``--json -`` the JSON owns stdout and tables go to stderr.
    """
    write_report_json(report, json_out, quiet=quiet)
    show_report(report, json_out, quiet=quiet, stdout_has_data=stdout_has_data)


def write_report_json(report, json_out: str | None, *, quiet: bool = False) -> None:
    """The JSON half of :func:`emit_report`: the report written to ``--json``
    (a regular file staged within :func:`nbcli.io.atomic.outputs_together`;
    ``-``, a device or a pipe written as it comes); nothing without it.

    Commands that replace a model file call this inside the block that
    replaces it, so that a report that cannot be written leaves the old
    model file as it was, and :func:`show_report` after it, so that a reader
    of the tables that goes away (``| head``) cannot keep the files from
    being written.
    """
    from nbcli.cli.console import info

    if json_out is not None:
        write_json(report.to_dict(), json_out)
        info(f"wrote {json_out}", quiet or json_out == "-")


def show_report(
    report, json_out: str | None, *, quiet: bool = False, stdout_has_data: bool = False
) -> None:
    """The tables half of :func:`emit_report`: ``report`` rendered (to stderr
    when the JSON report owns stdout), unless ``quiet``."""
    from nbcli.cli.console import console, table_stream
    from nbcli.io.atomic import writes_to_stdout

    if quiet:
        return
    from nbcli.render import render  # Rich's tables: only when something is shown

    # `--json /dev/stdout` puts data on stdout just as `--json -` does.
    stream = table_stream(stdout_has_data or writes_to_stdout(json_out))
    con = console(stream)
    for renderable in render(report):
        # Off a terminal a wide table (a confusion matrix) is shown whole.
        con.print(renderable, crop=con.is_terminal)


def write_json(document: dict, target: str) -> None:
    """Write a JSON document to a file (atomically) or to stdout for ``-``."""
    import json

    text = json.dumps(document, indent=2, allow_nan=False, ensure_ascii=False) + "\n"
    if target == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    from nbcli.io.atomic import atomic_write

    with atomic_write(target, "w") as f:
        f.write(text)


def inputs_of(**paths) -> dict:
    """:func:`nbcli.workflows.inputs.inputs_of`, imported when first called."""
    from nbcli.workflows.inputs import inputs_of as of

    return of(**paths)


MIN_BOOTSTRAP, MAX_BOOTSTRAP = 100, 1_000_000


def check_bootstrap(value: int | None) -> int | None:
    """``--bootstrap``: 0 (no intervals) or 100 to 1,000,000 resamples.

    Fewer than 100 resamples give intervals that can exclude their own
    estimate; more than a million only cost memory and time.
    """
    if value is None or value == 0 or MIN_BOOTSTRAP <= value <= MAX_BOOTSTRAP:
        return value
    raise typer.BadParameter(
        f"takes 0 (no intervals) or {MIN_BOOTSTRAP} to {MAX_BOOTSTRAP:,} resamples; got {value:,}"
    )


def fail_option(direction: str, examples: str, what: str = ""):
    """The ``--fail-under``/``--fail-over`` option of a command, with examples it accepts."""
    under = direction == "under"
    return typer.Option(
        "--fail-under" if under else "--fail-over",
        metavar="METRIC=VALUE",
        help=f"Exit 3 if the metric is {'below' if under else 'above'} VALUE{what}, "
        f"e.g. {examples}. Repeatable.",
    )


def parse_thresholds(
    fail_under: list[str] | None, fail_over: list[str] | None, known, bootstrap: int | None = None
) -> list:
    """``--fail-under``/``--fail-over`` values as thresholds, refused before any work.

    Raises
    ------
    NbcliError
        For a metric not in ``known``, a value that is not a number, or a
        threshold on an interval end (``accuracy.lower``) with
        ``bootstrap`` 0, which computes no intervals.
    """
    from nbcli.errors import NbcliError
    from nbcli.reports.thresholds import parse_threshold

    out = []
    try:
        for text in fail_under or []:
            out.append(parse_threshold(text, "under", known))
        for text in fail_over or []:
            out.append(parse_threshold(text, "over", known))
    except ValueError as exc:
        raise NbcliError(str(exc)) from None
    on_interval = [t for t in out if t.part != "value"]
    if bootstrap == 0 and on_interval:
        raise NbcliError(
            f"{on_interval[0].name}: --bootstrap 0 computes no intervals, so this threshold "
            "cannot be checked; give --bootstrap 1000 or a threshold on the estimate"
        )
    return out


def record_thresholds(report, thresholds: list) -> None:
    """Check ``thresholds`` against ``report`` and keep each outcome in its
    JSON form (``report.thresholds``), so that a JSON report says which were
    checked and which failed; :func:`enforce_thresholds` exits on them after
    the report is written."""
    if not thresholds:
        return
    from nbcli.reports.thresholds import threshold_outcomes

    report.thresholds = [
        o.to_dict() for o in threshold_outcomes(report.threshold_values(), thresholds)
    ]


def enforce_thresholds(metrics: dict, thresholds: list) -> None:
    """Exit 3 (one line per missed threshold) when ``metrics`` miss any of ``thresholds``."""
    if not thresholds:
        return
    from nbcli.errors import THRESHOLD_MISSED, NbcliError
    from nbcli.reports.thresholds import check_thresholds

    failures = check_thresholds(metrics, thresholds)
    if failures:
        from nbcli.cli.console import error_line

        for line in failures[:-1]:
            error_line(line)
        raise NbcliError(failures[-1], THRESHOLD_MISSED)


def show_warnings(warnings: list[str]) -> None:
    """Print a report's warnings on stderr, one ``warning:`` line each."""
    from nbcli.cli.console import warn

    for w in warnings:
        warn(w)


# -- engines (--engine dask: nbcli.engines) -------------------------------------
ENGINE = typer.Option(
    "--engine",
    help="Where the work runs: local (this process) or dask (a Dask cluster; needs nbcli[dask]).",
    case_sensitive=False,
)
SCHEDULER = typer.Option(
    "--scheduler",
    help="With --engine dask: address of a running Dask scheduler, e.g. tcp://host:8786 "
    "(tls:// with Dask's TLS configuration). Default: a local cluster, started and closed here.",
)
WORKERS = typer.Option(
    "--workers", help="With --engine dask: workers of the local cluster. Default: one per core."
)
WORKER_MEMORY = typer.Option(
    "--worker-memory",
    help="With --engine dask: memory limit per local worker, e.g. 2GiB or 500MB. "
    "Default: the machine's memory shared among the workers.",
)


CONNECT_TIMEOUT = typer.Option(
    "--connect-timeout",
    metavar="SECONDS",
    help="With --scheduler: seconds to wait for the scheduler to answer before giving up "
    "(exit 2). Default: 30.",
)


def open_engine(
    engine: str,
    scheduler: str | None,
    workers: int | None,
    worker_memory: str | None,
    connect_timeout: float | None = None,
):
    """The engine ``--engine``, ``--scheduler``, ``--workers`` and ``--worker-memory`` ask for.

    A context manager (:func:`nbcli.engines.open_engine`); nothing of Dask
    is imported for ``--engine local``.

    Raises
    ------
    NbcliError
        For Dask options without ``--engine dask``, or Dask not installed
        (the message says how to install it).
    """
    from nbcli.engines import open_engine as open_named

    if scheduler is not None and not scheduler.strip():
        from nbcli.errors import NbcliError

        # An unset shell variable: a local cluster started in its place would hide it.
        raise NbcliError("--scheduler is empty; give the scheduler's address (tcp://HOST:8786)")
    return open_named(
        engine.lower(),
        scheduler=scheduler,
        workers=workers,
        worker_memory=worker_memory,
        connect_timeout=connect_timeout,
    )


def option_parameter(name: str, annotation, option, default=None, keyword_only=True):
    """One option of a generated command signature: ``name`` with
    ``Annotated[annotation, option]`` and ``default``."""
    import inspect
    from typing import Annotated

    kind = (
        inspect.Parameter.KEYWORD_ONLY if keyword_only else inspect.Parameter.POSITIONAL_OR_KEYWORD
    )
    return inspect.Parameter(name, kind, default=default, annotation=Annotated[annotation, option])


def command_with(func, parameters: list, names, pack=None):
    """A command that calls ``func``, with the signature Typer reads made of
    ``parameters``: the options ``names`` are taken out of the call and
    passed to ``func`` as ``pack(values)`` (keyword arguments; default: as given)."""
    import inspect

    def command(**options):
        values = {n: options.pop(n) for n in names if n in options}
        return func(**options, **(values if pack is None else pack(values)))

    command.__name__ = command.__qualname__ = func.__name__
    command.__doc__ = func.__doc__
    command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in parameters}
    return command


def option_group(name: str, group: type, parameters: tuple):
    """A decorator: the command's parameter ``name`` becomes the options of
    ``parameters`` (``(parameter, type, typer.Option, default)`` each), one
    per option in the signature Typer reads, and the command receives them
    as one ``group`` value (a frozen dataclass with those fields).

    So a set of options that several commands share is declared once;
    :func:`nbcli.cli.requests.data_request` reads a group's fields as it
    reads the command's own options.
    """
    import inspect

    names = [parameter for parameter, *_ in parameters]

    def decorate(func):
        given = list(inspect.signature(func, eval_str=True).parameters.values())
        at = [p.name for p in given].index(name)
        generated = [
            option_parameter(parameter, kind, option, default, keyword_only=False)
            for parameter, kind, option, default in parameters
        ]
        return command_with(
            func,
            given[:at] + generated + given[at + 1 :],
            names,
            lambda values: {name: group(**values)},
        )

    return decorate


def grouped_options(options) -> dict:
    """``options`` (a command's by parameter name) with each option group's
    fields (see :func:`option_group`) in place of the group."""
    from dataclasses import fields, is_dataclass

    flat = {}
    for key, value in options.items():
        if is_dataclass(value) and getattr(value, "option_group", False):
            flat.update({f.name: getattr(value, f.name) for f in fields(value)})
        else:
            flat[key] = value
    return flat


@dataclass(frozen=True)
class EngineOptions:
    """The engine options of a command, as one value (see :func:`with_engine_options`)."""

    option_group: ClassVar[bool] = True
    engine: str = "local"
    scheduler: str | None = None
    workers: int | None = None
    worker_memory: str | None = None
    connect_timeout: float | None = None

    @property
    def name(self) -> str:
        return self.engine.lower()

    def open(self):
        """:func:`open_engine` with these options."""
        return open_engine(
            self.engine, self.scheduler, self.workers, self.worker_memory, self.connect_timeout
        )

    def uses_parts(self, data: list[str]) -> bool:
        """:func:`uses_parts` of ``data`` with this engine."""
        return uses_parts(self.engine, data)


#: The engine options of a command that gives none: this process.
LOCAL = EngineOptions()

#: ``--engine``, ``--scheduler``, ``--workers``, ``--worker-memory`` and
#: ``--connect-timeout`` in place of a command's ``engine`` parameter, which
#: receives them as one :class:`EngineOptions`.
with_engine_options = option_group(
    "engine",
    EngineOptions,
    (
        ("engine", Literal["local", "dask"], ENGINE, "local"),
        ("scheduler", str | None, SCHEDULER, None),
        ("workers", int | None, WORKERS, None),
        ("worker_memory", str | None, WORKER_MEMORY, None),
        ("connect_timeout", float | None, CONNECT_TIMEOUT, None),
    ),
)


@dataclass(frozen=True)
class ReadOptions:
    """How a data file is read: ``--delimiter``, ``--chunk-size``, ``--x-key``, ``--y-key``."""

    option_group: ClassVar[bool] = True
    delimiter: str | None = None
    chunk_size: int | None = None
    x_key: str = "X"
    y_key: str = "y"


#: The read options of a command that gives none.
READING = ReadOptions()

#: The read options in place of a command's ``read`` parameter (one :class:`ReadOptions`).
with_read_options = option_group(
    "read",
    ReadOptions,
    (
        ("delimiter", str | None, DELIMITER, None),
        ("chunk_size", int | None, CHUNK_SIZE, None),
        ("x_key", str, X_KEY, "X"),
        ("y_key", str, Y_KEY, "y"),
    ),
)


@contextlib.contextmanager
def engine_for(data: list[str], options: EngineOptions):
    """The engine to read ``data`` part by part on (:func:`uses_parts`), opened for
    the block; None for one file, read in this process (Dask options refused)."""
    if options.uses_parts(data):
        with options.open() as eng:
            yield eng
    else:
        options.open()
        yield None


def uses_parts(engine: str, data: list[str]) -> bool:
    """Whether a run reads ``--data`` part by part on an engine: with ``--engine dask``,
    when ``--data`` names a folder or a glob, or when it is given more than once
    (the files, in order, are one data set)."""
    return engine.lower() != "local" or len(data) > 1 or names_parts_of(data)


def names_parts_of(data: list[str]) -> bool:
    """Whether ``data`` names a folder or glob of parts."""
    from nbcli.io.part_paths import names_parts

    return names_parts(data)


def check_plot(path: str) -> None:
    """Refuse, before any work, a ``--plot`` path nbcli cannot draw to.

    Raises
    ------
    NbcliError
        For an extension other than .png or .svg, or when matplotlib is not
        installed.
    """
    import importlib.util
    from pathlib import Path

    from nbcli.errors import NbcliError

    suffix = Path(path).suffix
    if suffix.lower() not in (".png", ".svg"):
        raise NbcliError(
            f"--plot {path}: cannot draw a plot with extension {suffix!r}; use .png or .svg"
        )
    try:
        found = importlib.util.find_spec("matplotlib") is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise NbcliError(f"--plot {path}: drawing needs matplotlib: pip install 'nbcli[plot]'")
