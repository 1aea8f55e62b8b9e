"""The ``nbcli`` command: a thin Typer app.

Commands parse their options, call the core and hand a report to the
renderer. Heavy imports (NumPy, pandas, SciPy) happen inside the commands, so
``nbcli --help`` starts fast. Every error reaches the user as one line
starting with ``error:`` and an exit code from :mod:`nbcli.errors`; a
traceback appears only with ``--debug``.
"""

from __future__ import annotations

import os
import sys

import typer

from nbcli import __version__
from nbcli.cli import calibrate_cmd, evaluate_cmd, fit_cmd, predict_cmd

app = typer.Typer(
    name="nbcli",
    help="Train, apply, score and calibrate Bayes classifiers "
    "(Gaussian, multinomial and Bernoulli naive Bayes, LDA, QDA).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool):
    if value:
        typer.echo(f"nbcli {__version__}")
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


app.command("fit", no_args_is_help=True)(fit_cmd.fit)
app.command("predict", no_args_is_help=True)(predict_cmd.predict)
app.command("evaluate", no_args_is_help=True)(evaluate_cmd.evaluate)
app.command("compare", no_args_is_help=True)(evaluate_cmd.compare)
app.command("calibrate", no_args_is_help=True)(calibrate_cmd.calibrate)


def _error(message: str) -> None:
    # One line: collapse any newline a library put into its message.
    line = " ".join(str(message).split())
    try:
        sys.stderr.write(f"error: {line}\n")
        sys.stderr.flush()
    except (BrokenPipeError, OSError):
        pass


def _click_exceptions():
    """Click's exception classes: vendored inside recent Typer releases, a separate package before."""
    try:
        from typer._click import exceptions
    except ImportError:  # pragma: no cover - older Typer
        from click import exceptions
    return exceptions


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: run the app and map every outcome to an exit code."""
    from nbcli.errors import NbcliError

    click = _click_exceptions()

    args = sys.argv[1:] if argv is None else argv
    debug = "--debug" in args or os.environ.get("NBCLI_DEBUG") == "1"
    try:
        result = app(args=args, prog_name="nbcli", standalone_mode=False)
        code = result if isinstance(result, int) else 0
    except NbcliError as exc:
        _error(str(exc))
        code = exc.exit_code
    except typer.Exit as exc:
        code = exc.exit_code
    except click.ClickException as exc:
        ctx = getattr(exc, "ctx", None)
        where = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
        _error(exc.format_message() + where)
        code = 2
    except (typer.Abort, KeyboardInterrupt):
        _error("interrupted")
        code = 130
    except BrokenPipeError:
        # The reader of our output went away (e.g. `| head`); stop quietly.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except OSError:
            pass
        code = 141
    except MemoryError:
        _error("out of memory; use a smaller --chunk-size or a machine with more memory")
        code = 1
    except Exception as exc:  # a bug: short message, traceback only on request
        if debug:
            import traceback

            traceback.print_exc()
        _error(
            f"internal error ({type(exc).__name__}: {exc}); this is a bug in nbcli "
            f"{__version__}: please report it with the output of the same command run with --debug"
        )
        code = 1
    sys.exit(code)
