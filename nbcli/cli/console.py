"""Where human-readable output goes, following the output-stream conventions.

Data meant for pipes (predictions CSV, ``--json -``) own stdout; tables,
warnings and progress go to stderr then. Without a terminal there is no colour
and no progress bar, and tables get all the width they need.
"""

from __future__ import annotations

import io
import os
import sys

from nbcli.terminal import escape_controls, is_terminal

#: Texts longer than this go to stdout's descriptor directly (see
#: :meth:`GuardedStdout._write_all`); shorter ones through its buffer.
_DIRECT_WRITE = 1 << 16


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
        if len(text) > _DIRECT_WRITE and self._descriptor() is not None:
            self._guard("flush")  # what went through the buffer goes first
            return self._write_all(text)
        return self._guard("write", text)

    def _descriptor(self) -> int | None:
        try:
            return self.wrapped.fileno() if self.wrapped is not None else None
        except (AttributeError, OSError, ValueError):
            return None

    def _write_all(self, text: str) -> int:
        # Python's buffered writer can drop the rest of one large write whose
        # reader leaves part way (the pipe takes a part, then the call returns
        # as if it took all), so `| head -c N` looked like success; writing
        # to the descriptor until every byte is taken surfaces EPIPE.
        from nbcli.errors import NbcliError
        from nbcli.io.atomic import ReaderGone

        data = memoryview(text.encode(getattr(self.wrapped, "encoding", None) or "utf-8"))
        fd = self._descriptor()
        assert fd is not None  # write() checked it
        try:
            while data:
                data = data[os.write(fd, data) :]
        except BrokenPipeError:
            raise ReaderGone("stdout") from None
        except OSError as exc:
            raise NbcliError(f"cannot write to stdout ({exc.strerror or exc})") from None
        return len(text)

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


class SparedStderr:
    """stderr for the command's diagnostics: when its reader goes away
    (``2>&1 | true``), what is left to say is dropped and the command goes on
    to write its files, rather than stopping on the first warning. (Its
    outcome still reaches the caller as the exit code.)"""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.gone = False

    def write(self, text):
        if not self.gone:
            try:
                return self.wrapped.write(text)
            except (BrokenPipeError, ValueError):  # ValueError: the stream was closed
                self.gone = True
        return len(text)

    def flush(self):
        if not self.gone:
            try:
                self.wrapped.flush()
            except (BrokenPipeError, ValueError):
                self.gone = True

    def isatty(self) -> bool:
        return not self.gone and is_terminal(self.wrapped)

    def __getattr__(self, name):
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
