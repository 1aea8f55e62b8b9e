"""Where human-readable output goes, following the output-stream conventions.

Data meant for pipes (predictions CSV, ``--json -``) own stdout; tables,
warnings and progress go to stderr then. Without a terminal there is no colour
and no progress bar, and tables get all the width they need.
"""

from __future__ import annotations

import sys


def is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def table_stream(stdout_has_data: bool):
    """The stream for tables: stderr when stdout carries data, else stdout."""
    return sys.stderr if stdout_has_data else sys.stdout


def console(stream):
    """A Rich console for ``stream`` (see :func:`nbcli.render.tables.make_console`)."""
    from nbcli.render.tables import make_console

    return make_console(stream)


def error_line(message: str) -> None:
    """Print one ``error:`` line to stderr (for failures that do not end the command)."""
    sys.stderr.write("error: " + " ".join(message.split()) + "\n")


def warn(message: str) -> None:
    """Print one ``warning:`` line to stderr."""
    sys.stderr.write("warning: " + " ".join(message.split()) + "\n")


def info(message: str, quiet: bool = False) -> None:
    """A short status line on stderr (suppressed by ``--quiet``)."""
    if not quiet:
        sys.stderr.write(" ".join(message.split()) + "\n")
