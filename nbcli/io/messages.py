"""One-line error messages for data files.

Every function here that words an error takes ``display``, the file name as
the user should see it (``<stdin>`` for ``-``), and returns
:class:`~nbcli.errors.NbcliError` with a message that starts with it.
"""

from __future__ import annotations

import contextlib
import csv
import zipfile
import zlib
from collections import Counter

from nbcli.errors import NO_SUCH_FILE, NbcliError

__all__ = [
    "fail",
    "quote_names",
    "interruption_in",
    "error_from_exception",
    "translated",
    "delimiter_name",
    "missing_label",
]

_DELIMITER_NAMES = {",": "','", ";": "';'", "\t": "tab", "|": "'|'"}


#: Words tables write for a missing value, compared in lower case.
_MISSING_WORDS = frozenset(
    {"unknown", "missing", "n/a", "na", "nan", "null", "none", "nil", "undefined", "#n/a"}
)


def missing_mark(text) -> str | None:
    """``text`` stripped when it looks like a missing-value marker (one to three
    characters, none a letter or digit: ``?``, ``.``, ``-``, ``--``; or a word
    such as ``unknown`` or ``N/A``), else None; such a cell among numbers or
    categories earns the ``--na-values`` hint."""
    mark = str(text).strip()
    if mark.lower() in _MISSING_WORDS:
        return mark
    return mark if punctuation_mark(mark) else None


def punctuation_mark(text: str) -> bool:
    """Whether ``text`` is one to three characters, none a letter or digit
    (``?``, ``.``, ``-``, ``--``): a mark for a missing value rather than a
    word that may be a real category or class."""
    return 0 < len(text) <= 3 and not any(ch.isalnum() for ch in text)


def fail(display: str, message: str) -> NbcliError:
    """An :class:`NbcliError` whose message starts with the file name."""
    return NbcliError(f"{display}: {message}")


def quote_names(names, limit: int = 20) -> str:
    """``'a', 'b', 'c'`` for a list of column names, shortened after ``limit``."""
    names = list(names)
    shown = ", ".join(repr(str(n)) for n in names[:limit])
    if len(names) > limit:
        shown += f" and {len(names) - limit} more"
    return shown


def refuse_repeated(display: str, names, message: str, *, sort: bool = True) -> None:
    """Refuse ``names`` when some repeat: ``message`` with ``{names}`` in place
    of the repeated ones (sorted, or with ``sort=False`` in first-seen order)."""
    repeated = [name for name, n in Counter(names).items() if n > 1]
    if repeated:
        raise fail(
            display, message.format(names=quote_names(sorted(repeated) if sort else repeated))
        )


def refuse_missing_model_columns(display: str, wanted, present, listed, listed_as: str) -> None:
    """Refuse, all at once, the columns of ``wanted`` (the model's features) not
    in ``present``; the message lists ``listed`` as the table's ``listed_as``."""
    missing = [c for c in wanted if c not in present]
    if missing:
        word = "column" if len(missing) == 1 else "columns"
        raise fail(
            display,
            f"missing {word} {quote_names(missing)} that the model was "
            f"trained on; the {listed_as} are: {quote_names(listed)}",
        )


def delimiter_name(delimiter: str) -> str:
    """How a delimiter is written in messages (``tab`` for ``\\t``)."""
    return _DELIMITER_NAMES.get(delimiter, repr(delimiter))


def missing_label(display: str, name: str, row: int) -> NbcliError:
    """The error for a row without a label (``row`` counts data rows from 1,
    and is kept as ``error.row``)."""
    error = fail(
        display,
        f"target column '{name}' has a missing value at row {row}; "
        "every row needs a label: fill it in or remove the row",
    )
    error.row = row
    return error


def interruption_in(exc: BaseException) -> BaseException | None:
    """The interruption behind an error, if any: the first exception in its
    ``__cause__``/``__context__`` chain that is not an ``Exception``
    (KeyboardInterrupt from Ctrl-C, the CLI's exception for SIGTERM), which
    must win over a message that blames the data."""
    seen = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if not isinstance(current, Exception):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def _is_gzip(path: str) -> bool:
    """Whether the file at ``path`` starts with gzip's magic bytes."""
    try:
        with open(path, "rb") as f:
            return f.read(2) == b"\x1f\x8b"
    except OSError:
        return False


def _where_not_utf8(path: str) -> str:
    """`` (it is UTF-16)`` or `` (line N)``: where the file at ``path`` stops
    being UTF-8, for the message; empty when it cannot be told (stdin, gzip)."""
    import codecs

    try:
        with open(path, "rb") as f:
            head = f.read(2)
            if head in (codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE):
                return " (it is UTF-16)"
            if head[:2] == b"\x1f\x8b":
                return ""
            f.seek(0)
            decoder = codecs.getincrementaldecoder("utf-8")()
            lines = 1
            for block in iter(lambda: f.read(1 << 20), b""):
                try:
                    decoder.decode(block)
                except UnicodeDecodeError as bad:
                    line = lines + block.count(b"\n", 0, bad.start)
                    return f" (line {line})"
                lines += block.count(b"\n")
    except OSError:
        return ""
    return ""


def error_from_exception(exc: BaseException, display: str) -> NbcliError:
    """Turn an exception raised while reading a file into a one-line error.

    Covers file-system errors (missing file, directory, permissions), broken
    gzip streams, text that is not UTF-8, and the parser's own errors.

    Raises the interruption instead when the exception stems from one (see
    :func:`interruption_in`).
    """
    interruption = interruption_in(exc)
    if interruption is not None:
        raise interruption
    if isinstance(exc, NbcliError):
        return exc
    text = str(exc)
    if isinstance(exc, UnicodeDecodeError) or "invalid utf-8" in text.lower():
        return fail(
            display,
            f"is not UTF-8 text{_where_not_utf8(display)}; save it with UTF-8 encoding and try again",
        )
    if isinstance(exc, FileNotFoundError):
        return fail(display, NO_SUCH_FILE)
    if isinstance(exc, IsADirectoryError):
        return fail(
            display,
            "is a directory, not a data file; give the path of a file (fit, cv, tune, predict, "
            "evaluate and calibrate also read a folder of CSV or Parquet parts; this command "
            "reads one file)",
        )
    if isinstance(exc, PermissionError):
        return fail(display, "permission denied; check that the file is readable")
    if (
        isinstance(exc, (EOFError, zlib.error))
        or type(exc).__name__ == "BadGzipFile"
        or ("end of file" in text.lower() and _is_gzip(display))
        or "gzip" in text.lower()
        or "decompress" in text.lower()
        or "deflate" in text.lower()
    ):
        return fail(
            display,
            "is not a valid gzip file or is truncated; check that the download or copy finished",
        )
    if isinstance(exc, OSError) and not type(exc).__module__.startswith("polars"):
        reason = exc.strerror or text or type(exc).__name__
        return fail(display, f"cannot be read ({reason})")
    first_line = (text.strip().splitlines() or [type(exc).__name__])[0]
    line = _lone_carriage_return(display)
    if line is not None:
        return fail(
            display,
            f"line {line} ends in a carriage return alone while other lines end in a line "
            "feed; give the file one kind of line ending (for example with dos2unix or "
            "mac2unix) and try again",
        )
    return fail(display, f"could not be parsed as CSV ({first_line}); check quoting and delimiters")


def _lone_carriage_return(display: str) -> int | None:
    """The line (from 1) of the first carriage return not followed by a line feed in a
    plain file that also has line feeds, or None (for any other file, or none found).

    Only asked once parsing failed: a file whose lines all end in a lone
    carriage return is read, but one such ending among line feeds splits
    a line in two for the parser.
    """
    import os
    import re

    try:
        if not os.path.isfile(display) or _is_gzip(display):
            return None
        with open(display, "rb") as handle:
            data = handle.read(1 << 28)
    except OSError:
        return None
    lone = re.search(rb"\r(?!\n)", data)
    if lone is None or b"\n" not in data:
        return None
    return data.count(b"\n", 0, lone.start()) + 1


@contextlib.contextmanager
def translated(display: str):
    """Re-raise any reading error inside the block as a one-line NbcliError."""
    try:
        yield
    except NbcliError:
        raise
    except (
        ValueError,
        OSError,
        EOFError,
        zlib.error,
        csv.Error,
        zipfile.BadZipFile,
        TypeError,
        IndexError,
        OverflowError,
    ) as exc:
        raise error_from_exception(exc, display) from exc
