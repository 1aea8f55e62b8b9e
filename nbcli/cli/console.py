"""Where human-readable output goes, following the output-stream conventions.

Data meant for pipes (predictions CSV, ``--json -``) own stdout; tables,
warnings and progress go to stderr then. Without a terminal there is no colour
and no progress bar, and tables get all the width they need.
"""

from __future__ import annotations

import io
import sys

from nbcli.terminal import escape_controls, is_terminal


class GuardedStdout:
    """``sys.stdout`` while a command runs, turning write failures into outcomes.

    A reader that went away (``| head``) raises
    :class:`~nbcli.io.atomic.ReaderGone`, so the command stops quietly;
    other write errors (a full disk, ``> /dev/full``: ``ENOSPC``; ``EIO``)
    become a one-line :class:`~nbcli.errors.NbcliError`; a closed stdout
    (``>&-``, where Python sets ``sys.stdout`` to None) is one too. Everything
    else is passed to the wrapped stream.
    """

    def __init__(self, wrapped):
        self.wrapped = wrapped

    def _guard(self, method: str, *args):
        from nbcli.errors import NbcliError
        from nbcli.io.atomic import ReaderGone

        if self.wrapped is None:
            raise NbcliError("stdout is closed; give an output file or leave stdout open")
        try:
            return getattr(self.wrapped, method)(*args)
        except BrokenPipeError:
            raise ReaderGone("stdout") from None
        except OSError as exc:
            raise NbcliError(f"cannot write to stdout ({exc.strerror or exc})") from None

    def write(self, text):
        return self._guard("write", text)

    def writelines(self, lines):
        return self._guard("writelines", lines)

    def flush(self):
        if self.wrapped is None:
            return None
        return self._guard("flush")

    @property
    def closed(self) -> bool:
        return self.wrapped is None or bool(getattr(self.wrapped, "closed", False))

    def isatty(self) -> bool:
        return is_terminal(self.wrapped)

    def __getattr__(self, name):
        if self.wrapped is None:
            raise AttributeError(name)
        return getattr(self.wrapped, name)


def stdout_closed() -> bool:
    """Whether stdout is closed (``>&-``)."""
    stream = getattr(sys.stdout, "wrapped", sys.stdout)
    return stream is None or bool(getattr(stream, "closed", False))


def table_stream(stdout_has_data: bool):
    """The stream for tables: stderr when stdout carries data, else stdout
    (a sink when stdout is closed: ``>&-`` means "do not show")."""
    if stdout_has_data:
        return sys.stderr
    if stdout_closed():
        return io.StringIO()
    return sys.stdout


def console(stream):
    """A Rich console for ``stream`` (see :func:`nbcli.render.tables.make_console`)."""
    from nbcli.render.tables import make_console

    return make_console(stream)


def one_line(message: str) -> str:
    """``message`` as one line: whitespace collapsed, control characters
    (from labels or column names in it) escaped."""
    return " ".join(escape_controls(str(message), keep_whitespace=True).split())


def error_line(message: str) -> None:
    """Print one ``error:`` line to stderr (for failures that do not end the command)."""
    sys.stderr.write("error: " + one_line(message) + "\n")


def warn(message: str) -> None:
    """Print one ``warning:`` line to stderr."""
    sys.stderr.write("warning: " + one_line(message) + "\n")


def info(message: str, quiet: bool = False) -> None:
    """A short status line on stderr (suppressed by ``--quiet``)."""
    if not quiet:
        sys.stderr.write(one_line(message) + "\n")
