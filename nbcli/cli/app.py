"""The ``nbcli`` command: a thin Typer app.

Commands parse their options, call one workflow and hand its report to the
renderer. Heavy imports (NumPy, pandas, SciPy) happen inside the commands, so
``nbcli --help`` starts fast. Every error reaches the user as one line
starting with ``error:`` and an exit code from :mod:`nbcli.errors`; a
traceback appears only with ``--debug``. Stopping early has codes of its
own, as shells use them: Ctrl-C 130 (``error: interrupted``), SIGTERM 143
(``error: terminated``; both remove unfinished output files), and a reader
of stdout that went away (``| head``) 141, quietly.
"""

from __future__ import annotations

import gc
import os
import signal
import sys

# A command is one short process whose imports (Typer, Rich, polars, NumPy,
# nbcli) create some hundred thousand objects, hardly any of them garbage:
# at the default threshold of 700 allocations the cyclic collector runs
# about a hundred times over them, some 0.1 s of every command. Reference
# counting still frees everything that is not in a cycle at once.
gc.set_threshold(100_000, 20, 20)

import typer  # noqa: E402

import nbcli  # noqa: E402
from nbcli import interrupts  # noqa: E402
from nbcli.interrupts import Terminated  # noqa: E402 (the exception of SIGTERM)
from nbcli.model_names import declared_model_names  # noqa: E402

app = typer.Typer(
    name="nbcli",
    help="Train, apply, score and calibrate Bayes classifiers: naive Bayes of several kinds, "
    "linear and quadratic discriminant analysis. Model types (fit, cv and tune --model): "
    + ", ".join(declared_model_names())
    + ".",
    no_args_is_help=True,
    add_completion=False,
    # Help text is shown as written: Rich markup would swallow every
    # "[default: ...]" and "[hyperparameters]" in it (and click's plain
    # layout keeps `nbcli --help` fast).
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool):
    if value:
        typer.echo(f"nbcli {nbcli.__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    debug: bool = typer.Option(False, "--debug", help="Show a full traceback on internal errors."),
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
):
    """Bayes classifiers from the command line."""
    if debug:
        os.environ["NBCLI_DEBUG"] = "1"


#: Every command: ``name -> (module, function, one-line summary)``. A command's
#: module is imported only when that command runs (or shows its own help):
#: ``fit`` builds its options from the model classes, which needs NumPy, and
#: ``nbcli --help`` must not pay for that. The summary is the first paragraph
#: of the function's docstring (a test keeps the two equal).
COMMANDS: dict[str, tuple[str, str, str]] = {
    "fit": (
        "nbcli.cli.fit_cmd",
        "fit",
        "Train a model on labelled data and save it as a .npz model file.",
    ),
    "predict": (
        "nbcli.cli.predict_cmd",
        "predict",
        "Predict labels (and with --proba, posterior probabilities) for new data.",
    ),
    "evaluate": (
        "nbcli.cli.evaluate_cmd",
        "evaluate",
        "Score a model on labelled data: metrics with bootstrap intervals, confusion matrix, "
        "per-class table and calibration summary.",
    ),
    "compare": (
        "nbcli.cli.evaluate_cmd",
        "compare",
        "Compare two models on the same rows: accuracies, the paired difference B - A with a "
        "bootstrap interval, the agreement table and McNemar's exact test.",
    ),
    "calibrate": (
        "nbcli.cli.calibrate_cmd",
        "calibrate",
        "Reliability of the model's posteriors on held-out data, and a repair.",
    ),
    "cv": (
        "nbcli.cli.cv_cmd",
        "cv",
        "Cross-validate a model type: per-fold and pooled out-of-fold metrics with bootstrap "
        "intervals, confusion matrix, per-class table and calibration summary.",
    ),
    "tune": (
        "nbcli.cli.tune_cmd",
        "tune",
        "Search hyperparameter values by cross-validation: every combination is scored on the "
        "same per-fold statistics (one pass over the data, no refit); the best is fitted on all "
        "rows and, with --output, saved with the search summary in its metadata.",
    ),
    "split": (
        "nbcli.cli.split_cmd",
        "split",
        "Split a data file into train, test and calibration files of exact sizes.",
    ),
    "inspect": (
        "nbcli.cli.inspect_cmd",
        "inspect",
        "Describe a model file: versions, model, hyperparameters, classes, features, training "
        "data, calibrator, search; and what the model learnt.",
    ),
    "export": (
        "nbcli.cli.export_cmd",
        "export",
        "Write a model file as an ONNX graph that ONNX Runtime (or any ONNX runtime) serves.",
    ),
}


def command_function(name: str):
    """The Typer function of command ``name`` (imports its module)."""
    import importlib

    module, attr, _ = COMMANDS[name]
    return getattr(importlib.import_module(module), attr)


def _invoked(args: list[str]) -> str | None:
    """The command named on the command line (the root's options are flags only)."""
    for arg in args:
        if not arg.startswith("-"):
            return arg
    return None


def _placeholder(summary: str):
    def command():
        pass

    command.__doc__ = summary
    return command


def register_commands(args: list[str] | None = None) -> None:
    """Add every command to :data:`app`: the one ``args`` invokes for real, the
    others (for the root's ``--help`` listing) by their summary alone. With
    ``args`` None, all for real."""
    invoked = None if args is None else _invoked(args)
    app.registered_commands.clear()
    for name, (_, _, summary) in COMMANDS.items():
        real = args is None or name == invoked
        func = command_function(name) if real else _placeholder(summary)
        app.command(name, no_args_is_help=real, help=None if real else summary)(func)


# What each option's value is, as its help shows it (rather than a type name).
_METAVARS = {
    "--data": "PATH",
    "--model": "FILE",
    "--output": "PATH",
    "--output-dir": "FOLDER",
    "--target": "COLUMN",
    "--features": "COLUMNS",
    "--drop": "COLUMNS",
    "--keep": "COLUMNS",
    "--config": "FILE",
    "--delimiter": "CHAR",
    "--chunk-size": "ROWS",
    "--x-key": "NAME",
    "--y-key": "NAME",
    "--json": "PATH",
    "--plot": "FILE",
    "--jobs": "N",
    "--digits": "N",
    "--seed": "N",
    "--bins": "N",
    "--confidence": "LEVEL",
}
# Commands whose -m/--model chooses a model type (the others read a model file).
_TYPE_COMMANDS = ("fit", "cv", "tune")
_COMMAND_METAVARS = {("calibrate", "--bins"): "N|EDGES"}
_EXTRA_METAVARS = {
    "--bootstrap": "N",
    "--fail-under": "METRIC=VALUE",
    "--fail-over": "METRIC=VALUE",
    "--shrinkage": "auto|NUMBER",
    "--priors": "PRIORS",
}


def _metavar(command_name: str, param) -> str | None:
    """What an option's value is called in help; None to keep Typer's
    (the list of choices)."""
    names = [o for o in param.opts if o.startswith("--")]
    name = names[0] if names else ""
    if (command_name, name) in _COMMAND_METAVARS:
        return _COMMAND_METAVARS[(command_name, name)]
    if name == "--model" and command_name in _TYPE_COMMANDS:
        return None  # the registry's model types, as Typer lists the choices
    if name in _METAVARS or name in _EXTRA_METAVARS:
        return _METAVARS.get(name) or _EXTRA_METAVARS[name]
    desc = getattr(param, "type_descriptor", None)
    if desc is not None:  # Typer 0.29 describes a value's type itself
        if desc.is_choice:
            return None
        kind = getattr(desc, "ranged_type_name", None) if desc.is_ranged else param.bare_type()
    else:  # earlier Typer: a click parameter type ("float range", "integer")
        if hasattr(param.type, "choices"):
            return None
        kind = getattr(param.type, "name", "")
    kind = str(kind)
    return "NUMBER" if "float" in kind else "N" if "int" in kind else "TEXT"


def command():
    """The click command of the app, with readable metavars in help
    (``PATH``, ``COLUMNS``, ``NUMBER``) where Typer would show a type
    (``<list[str]>``)."""
    import typer.main

    cmd = typer.main.get_command(app)
    for command_name, sub in getattr(cmd, "commands", {}).items():
        _refuse_repeated_values(sub)
        for param in sub.params:
            if getattr(param, "is_flag", False) or not hasattr(param, "opts"):
                continue
            if getattr(param, "param_type_name", "") == "argument" and param.metavar:
                continue  # an argument that names itself: Typer shows it as it is
            # A metavar the command gives its option itself wins.
            metavar = param.metavar or _metavar(command_name, param)
            if metavar is not None:
                param.metavar = metavar
                # Typer's help shows display_type, not metavar.
                param.display_type_rich = lambda ctx=None, m=metavar: m
    return cmd


def _refuse_repeated_values(sub) -> None:
    """Make ``sub`` (a click command) refuse an option of one value given more
    than once (``evaluate -m a.npz -m b.npz``), which click would reduce to
    the last value without a word.

    The rule follows the options' declarations: an option declared
    ``multiple`` (a list) takes every value, a flag may be repeated (it says
    the same thing twice) but not given with its opposite (``--standardize
    --no-standardize``), and every other option takes one value. The
    check sits in the parser click makes for the command, so it sees the
    command line exactly as click reads it (``--opt=value``, ``-ovalue``,
    values that start with a dash) rather than a second reading of it.
    """
    make_parser = sub.make_parser

    def refusing_parser(ctx):
        parser = make_parser(ctx)
        options = {*parser._long_opt.values(), *parser._short_opt.values()}
        for option in options:
            param = option.obj
            if option.action == "store" and not getattr(param, "multiple", False):
                option.process = _first_value_only(option, option.process, sub.name)
            elif option.action == "store_const" and getattr(param, "secondary_opts", None):
                option.process = _one_side_only(option, option.process)
        return parser

    sub.make_parser = refusing_parser


def _one_side_only(option, process):
    """``option``'s ``process`` refusing the other side of its on/off pair
    (``--standardize --no-standardize``): the same flag twice says one thing."""
    from nbcli.errors import NbcliError

    def process_one_side(value, state):
        if option.dest in state.opts and state.opts[option.dest] != option.const:
            param = option.obj
            raise NbcliError(
                f"{'/'.join(param.opts)} and {'/'.join(param.secondary_opts)} both given; "
                "they contradict each other: give one"
            )
        process(value, state)

    return process_one_side


def _first_value_only(option, process, command_name):
    """``option``'s ``process`` (of click's parser) refusing a second value."""
    from nbcli.errors import NbcliError

    def process_once(value, state):
        if option.dest in state.opts:
            names = "/".join(sorted(option.obj.opts, key=len))
            from nbcli.cli.common import repeated_option

            raise NbcliError(repeated_option(names, [state.opts[option.dest], value], command_name))
        process(value, state)

    return process_once


def _error(message: str) -> None:
    # One line: collapse any newline a library put into its message.
    from nbcli.cli.console import one_line

    line = one_line(message)
    try:
        sys.stderr.write(f"error: {line}\n")
        sys.stderr.flush()
    except (BrokenPipeError, OSError, AttributeError):
        pass


def _click_exceptions():
    """Click's exception classes: vendored inside recent Typer releases, a separate package before."""
    try:
        from typer._click import exceptions
    except ImportError:  # pragma: no cover - older Typer
        import click.exceptions as exceptions  # type: ignore[no-redef]
    return exceptions


def _silence_stdout() -> None:
    """Point stdout at the null device, so that nothing more (not even the
    interpreter's last flush of what is still buffered) is written to a
    reader that went away."""
    stream = getattr(sys.stdout, "wrapped", sys.stdout)
    try:
        if stream is not None and stream.fileno() == 1:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
    sys.stdout = open(os.devnull, "w")


def _show_help(exc) -> int:
    """Help asked for by giving no arguments: the program's own help is an
    answer (stdout, exit 0); a command's help instead of a run is a usage
    error (stderr, exit 2)."""
    ctx = getattr(exc, "ctx", None)
    text = exc.format_message() if hasattr(exc, "format_message") else ""
    if ctx is not None and ctx.parent is None:
        if text:
            sys.stdout.write(text.rstrip("\n") + "\n")
        return 0
    if text:
        sys.stderr.write(text.rstrip("\n") + "\n")
    return 2


def _model_hint(exc, args: list[str]) -> str:
    """A hint when a model file is given where a model type is chosen (``fit -m iris.npz``)."""
    param = getattr(exc, "param", None)
    command_name = getattr(getattr(exc, "ctx", None), "info_name", None)
    if getattr(param, "name", None) != "model" or command_name not in _TYPE_COMMANDS:
        return ""
    given = [b for a, b in zip(args, args[1:]) if a in ("-m", "--model")]
    given += [a.split("=", 1)[1] for a in args if a.startswith("--model=")]
    if not any(g.lower().endswith(".npz") or os.path.isfile(g) for g in given):
        return ""
    if command_name == "fit":
        return "; fit takes a model type and writes a model file, which predict, evaluate and calibrate read"
    return f"; {command_name} takes a model type, as fit does, and fits one model per fold (not a model file)"


def _glob_hint(exc) -> str:
    """A hint when extra arguments are files: a glob the shell expanded
    (``-d parts/*.csv`` unquoted gives the files after the first as arguments)."""
    usage_error = _click_exceptions().UsageError
    if not isinstance(exc, usage_error) or "unexpected extra argument" not in str(exc):
        return ""
    said = exc.format_message()
    extra = said[said.rfind("(") + 1 :].rstrip(")").split()
    if not extra or not all(os.path.exists(a) for a in extra):
        return ""
    command, params = _command_of(exc)
    if command is not None and not any("--data" in getattr(p, "opts", ()) for p in params):
        # inspect and export: one model file, their one argument.
        return f"; {command.info_name} takes one model file: run it once per file"
    return (
        "; they are files: a glob the shell expanded? quote it (-d 'parts/*.csv') or give "
        "--data once per file"
    )


def _command_of(exc):
    """The context of the command a usage error is about (None outside one), and its parameters."""
    command = getattr(exc, "ctx", None)
    return command, getattr(getattr(command, "command", None), "params", [])


def _model_argument_hint(exc) -> str:
    """A hint for ``inspect --model FILE``: the commands that take a model file
    as their argument, where the others take ``-m``."""
    if getattr(exc, "option_name", None) not in ("-m", "--model"):
        return ""
    command, params = _command_of(exc)
    if command is None or not any(
        getattr(p, "name", None) == "model" and not getattr(p, "opts", ["-"])[0].startswith("-")
        for p in params
    ):
        return ""
    name = command.info_name
    return f"; {name} takes the model file as its argument: nbcli {name} MODEL"


def _debug_first(args: list[str]) -> list[str]:
    """``nbcli fit --debug ...`` as ``nbcli --debug fit ...``: the option
    belongs to the program, wherever it is given (up to a ``--``)."""
    end = args.index("--") if "--" in args else len(args)
    if "--debug" not in args[:end]:
        return args
    return ["--debug", *(a for a in args[:end] if a != "--debug"), *args[end:]]


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the app and map every outcome to an exit code."""
    from nbcli.cli.console import GuardedStdout, SparedStderr

    args = sys.argv[1:] if argv is None else argv
    original_stdout, original_stderr = sys.stdout, sys.stderr
    if sys.stderr is None:  # started with stderr closed (2>&-)
        sys.stderr = open(os.devnull, "w")
    sys.stdout = GuardedStdout(original_stdout)
    sys.stderr = SparedStderr(sys.stderr)
    # Outside the main thread signals are left alone (None).
    previous_handlers = interrupts.install()
    import warnings

    try:
        with warnings.catch_warnings():
            # polars says so of a line with an unclosed quote, on a thread of its
            # own; the reader refuses such a file with one error line already.
            warnings.filterwarnings("ignore", message="CSV malformed", category=UserWarning)
            code = _run(args)
    finally:
        interrupts.restore(previous_handlers)
        if isinstance(sys.stdout, GuardedStdout):
            sys.stdout = original_stdout
        if isinstance(sys.stderr, SparedStderr):
            sys.stderr = original_stderr
    sys.exit(code)


def run() -> None:
    """The ``nbcli`` program: :func:`main`, then the process exits with its code.

    Once the command is over and its outcome said, a Ctrl-C or SIGTERM while
    the interpreter shuts down (threads joined, files closed) must not turn
    a finished command into exit 130; so signals are ignored from there on.
    (:func:`main` itself leaves the handlers as it found them, for callers
    that go on running.) The objects left are frozen for the garbage
    collector, whose collection at exit would only examine them. glibc is
    asked to keep freed memory for reuse (:func:`_keep_freed_memory`).
    """
    _keep_freed_memory()
    try:
        main()
    except SystemExit as done:
        try:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
        except ValueError:  # not the main thread
            pass
        # The interpreter's last act is a full collection over every object
        # still alive (all of NumPy's, polars', Rich's modules): a tenth of a
        # second of a small command, to free memory the process is about to
        # give back whole. Frozen objects are not examined.
        gc.freeze()
        raise done from None


# glibc's mallopt parameters (malloc.h).
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3


def _keep_freed_memory() -> None:
    """Have glibc keep freed blocks of up to 32 MiB for reuse, rather than give them back.

    By default glibc hands a freed block above a threshold (which it raises
    as it goes, up to 32 MiB) back to the kernel, and trims the heap's free
    top beyond twice that. A command allocates and frees arrays the size of
    a chunk or of a column many times; each block given back and taken
    again is zeroed by the kernel page by page, which was a tenth of
    ``evaluate``'s time at a million rows. With fixed thresholds such blocks
    are reused; the process's peak grows by what it keeps free (about 8%
    there). Other C libraries are left as they are.
    """
    if not sys.platform.startswith("linux"):
        return
    import ctypes
    import platform

    if platform.libc_ver()[0] != "glibc":
        return
    try:
        libc = ctypes.CDLL(None)
        libc.mallopt(_M_MMAP_THRESHOLD, 32 << 20)
        libc.mallopt(_M_TRIM_THRESHOLD, 512 << 20)
    except (OSError, AttributeError):  # pragma: no cover - a libc without mallopt
        pass


#: The arguments of the command being run, for the few options whose order
#: on the command line means something (the order of `tune`'s grid).
INVOKED_ARGS: list[str] = []


def option_order(flags) -> list[str]:
    """``flags`` (e.g. ``["--alpha", "--var-smoothing"]``) in the order they were
    first given on the command line; flags not given keep their order, last."""
    first: dict[str, int] = {}
    for i, arg in enumerate(INVOKED_ARGS):
        first.setdefault(arg.split("=", 1)[0], i)
    flags = list(flags)
    return sorted(flags, key=lambda f: (first.get(f, len(INVOKED_ARGS)), flags.index(f)))


def _interruption() -> int | None:
    """If this command raised a signal's exception, say so and return 130 or
    143: whatever error followed, a library made it of the interruption."""
    signum = interrupts.raised_signal()
    if signum is None:
        return None
    if signum == signal.SIGINT:
        _error("interrupted")
        return 130
    _error("terminated")
    return 143


def _stopped(exc: BaseException) -> int:
    if isinstance(exc, Terminated):
        _error("terminated")
        return 143
    _error("interrupted")
    return 130


def _report(exc) -> int:
    _error(str(exc))
    return exc.exit_code


def _internal_error(exc: BaseException, debug: bool) -> int:
    if debug:
        import traceback

        traceback.print_exc()
    _error(
        f"internal error ({type(exc).__name__}: {exc}); this is a bug in nbcli "
        f"{nbcli.__version__}: please report it with the output of the same command run with --debug"
    )
    return 1


def _run(args: list[str]) -> int:
    """Run the app on ``args``; returns the exit code, having printed why it is not 0."""
    INVOKED_ARGS[:] = [str(a) for a in args]
    from nbcli.errors import NbcliError
    from nbcli.io.atomic import ReaderGone

    click = _click_exceptions()
    no_args_help = getattr(click, "NoArgsIsHelpError", ())
    debug = "--debug" in args or os.environ.get("NBCLI_DEBUG") == "1"
    try:
        register_commands(_debug_first(args))
        result = command()(args=_debug_first(args), prog_name="nbcli", standalone_mode=False)
        code = result if isinstance(result, int) else 0
        # Typer turns Ctrl-C into exit code 130; say why the command stopped.
        if code == 130:
            _error("interrupted")
        # Data still buffered for a reader that went away fails here, not
        # at interpreter exit.
        sys.stdout.flush()
    except NbcliError as exc:
        code = _interruption() or _report(exc)
    except typer.Exit as exc:
        code = exc.exit_code
    except no_args_help as exc:
        code = _show_help(exc)
    except click.ClickException as exc:
        ctx = getattr(exc, "ctx", None)
        where = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
        message = exc.format_message()
        hint = _model_hint(exc, args) or _glob_hint(exc) or _model_argument_hint(exc)
        if hint:
            message = message.rstrip(". ") + hint
        if message.strip():
            _error(message + where)
        code = 2
    except (typer.Abort, KeyboardInterrupt, Terminated) as exc:
        # The signal received names the stop: a stop raised for it elsewhere
        # (a batch whose files stopped) may be of the other kind.
        code = _interruption() or _stopped(exc)
    except (ReaderGone, BrokenPipeError):
        # The reader of our output went away (e.g. `| head`); stop quietly.
        _silence_stdout()
        code = 141
    except MemoryError:
        _error("out of memory; use a smaller --chunk-size or a machine with more memory")
        code = 1
    except (SystemExit, GeneratorExit):
        raise
    except BaseException as exc:  # a bug: short message, traceback only on request
        # (BaseException: a Rust extension's panic is not an Exception.)
        code = _interruption() or _internal_error(exc, debug)
    # The outcome is said: a signal from here on does not change it.
    interrupts.finish()
    return code
