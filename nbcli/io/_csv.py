"""CSV helpers for :mod:`nbcli.io.data`: the header line, delimiter detection,
pandas' C parser, and turning low-level exceptions into one-line messages.

Every function here takes ``display``, the file name as the user should see
it (``<stdin>`` for ``-``), and raises :class:`~nbcli.errors.NbcliError` with
a message that starts with it.
"""

from __future__ import annotations

import contextlib
import csv
import io
import re
import warnings
import zipfile
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO

import pandas as pd

from nbcli.errors import NbcliError

#: Cell texts read as a missing value in feature columns: pandas' default
#: ``na_values`` list (pandas docs, ``read_csv``), written out so that the
#: target and kept columns can use a narrower one (only the empty cell), and
#: a class called ``NA`` or ``None`` stays a class.
NA_STRINGS = (
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan",
    "1.#IND", "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a",
    "nan", "null",
)

#: Delimiters tried when none is given, in order of preference on a tie.
DELIMITERS = (",", ";", "\t", "|")

# Header plus this many further lines decide the delimiter.
_SAMPLE_ROWS = 5

_DELIMITER_NAMES = {",": "','", ";": "';'", "\t": "tab", "|": "'|'"}

_FIELD_COUNT = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")


def delimiter_name(delimiter: str) -> str:
    """How a delimiter is written in messages (``tab`` for ``\\t``)."""
    return _DELIMITER_NAMES.get(delimiter, repr(delimiter))


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


def error_from_exception(exc: BaseException, display: str) -> NbcliError:
    """Turn an exception raised while reading a file into a one-line error.

    Covers file-system errors (missing file, directory, permissions), broken
    gzip streams, text that is not UTF-8 and pandas' parser errors.
    """
    if isinstance(exc, NbcliError):
        return exc
    if isinstance(exc, UnicodeDecodeError):
        return fail(display, "is not UTF-8 text; save it with UTF-8 encoding and try again")
    if isinstance(exc, FileNotFoundError):
        return fail(display, "no such file; check the path")
    if isinstance(exc, IsADirectoryError):
        return fail(display, "is a directory, not a data file; give the path of a file")
    if isinstance(exc, PermissionError):
        return fail(display, "permission denied; check that the file is readable")
    if isinstance(exc, (EOFError, zlib.error)) or type(exc).__name__ == "BadGzipFile":
        return fail(display, "is not a valid gzip file or is truncated; "
                             "check that the download or copy finished")
    if isinstance(exc, pd.errors.ParserError):
        return _parser_error(exc, display)
    if isinstance(exc, pd.errors.EmptyDataError):
        return fail(display, "is empty; expected a header line followed by data rows")
    if isinstance(exc, OSError):
        reason = exc.strerror or str(exc) or type(exc).__name__
        return fail(display, f"cannot be read ({reason})")
    first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return fail(display, f"could not be read as CSV ({first_line})")


def _parser_error(exc: Exception, display: str) -> NbcliError:
    found = _FIELD_COUNT.search(str(exc))
    if found:
        expected, line, saw = found.groups()
        return fail(
            display,
            f"line {line} has {saw} fields but the header has {expected}; "
            "quote values that contain the delimiter, or pass the right delimiter",
        )
    first_line = (str(exc).strip().splitlines() or ["parse error"])[0]
    first_line = first_line.replace("Error tokenizing data. C error: ", "")
    return fail(display, f"could not be parsed as CSV ({first_line}); check quoting and delimiters")


@contextlib.contextmanager
def translated(display: str):
    """Re-raise any reading error inside the block as a one-line NbcliError."""
    try:
        with warnings.catch_warnings():
            # A first data row longer than the header makes pandas warn and drop
            # the extra fields; that is malformed input, so it becomes an error.
            warnings.simplefilter("error", pd.errors.ParserWarning)
            warnings.simplefilter("ignore", pd.errors.DtypeWarning)
            yield
    except pd.errors.ParserWarning as exc:
        if "does not match length of data" in str(exc):
            raise fail(
                display,
                "the first data row has more fields than the header; "
                "quote values that contain the delimiter, or pass the right delimiter",
            ) from exc
        raise fail(display, f"could not be parsed as CSV ({exc})") from exc
    except (ValueError, OSError, EOFError, zlib.error, csv.Error, zipfile.BadZipFile,
            TypeError, IndexError, OverflowError) as exc:
        raise error_from_exception(exc, display) from exc


@dataclass(frozen=True)
class CsvHeader:
    """The header of a CSV file.

    ``columns`` are the names as written, ``""`` for a column without a name
    (such as the index column pandas writes); ``has_data`` tells whether a
    non-blank line follows the header.
    """

    columns: list[str]
    delimiter: str
    has_data: bool


def normalise_delimiter(delimiter: str, display: str) -> str:
    """Accept one character, or ``\\t`` / ``tab`` spelled out, as a delimiter."""
    if delimiter in ("\\t", "tab", "TAB"):
        return "\t"
    if not isinstance(delimiter, str) or len(delimiter) != 1 or delimiter in "\r\n\"":
        raise fail(display, f"the delimiter must be one character such as ',' or ';', "
                            f"got {delimiter!r}")
    return delimiter


def read_header(open_binary: Callable[[], BinaryIO], display: str,
                delimiter: str | None = None) -> CsvHeader:
    """Read the header and a few lines after it; detect the delimiter.

    The delimiter is ``delimiter`` when given; else, among ``,`` ``;`` tab
    ``|``, the most frequent one in the header line that splits the next few
    lines into as many fields as the header (``,`` when none occurs).

    Raises NbcliError for an empty file, text that is not UTF-8, duplicate
    column names, and the file-system errors of :func:`error_from_exception`.
    """
    lines: list[str] = []
    with translated(display):
        with open_binary() as raw:
            text = io.TextIOWrapper(raw, encoding="utf-8-sig", newline="")
            while len(lines) <= _SAMPLE_ROWS:
                line = text.readline()
                if not line:
                    break
                # pandas skips blank (and whitespace-only) lines everywhere.
                if line.strip():
                    lines.append(line)
    if not lines:
        raise fail(display, "is empty; expected a header line followed by data rows")
    if delimiter is None:
        delimiter = _detect_delimiter(lines)
    else:
        delimiter = normalise_delimiter(delimiter, display)
    columns = next(csv.reader(lines[:1], delimiter=delimiter))
    repeated = [name for name, n in Counter(c for c in columns if c).items() if n > 1]
    if repeated:
        raise fail(display, f"has repeated column names in its header: {quote_names(repeated)}; "
                            "give every column a distinct name")
    return CsvHeader(columns=columns, delimiter=delimiter, has_data=len(lines) > 1)


def _detect_delimiter(lines: list[str]) -> str:
    header = lines[0]
    # sorted() is stable, so ties keep the order of DELIMITERS.
    ranked = sorted((d for d in DELIMITERS if d in header), key=lambda d: -header.count(d))
    for delimiter in ranked:
        try:
            rows = list(csv.reader(lines, delimiter=delimiter))
        except csv.Error:
            continue
        widths = {len(row) for row in rows if row}
        if len(widths) == 1:
            return delimiter
    return ranked[0] if ranked else ","


def pandas_names(columns: list[str]) -> list[str]:
    """Column names to hand to pandas: unnamed columns get private, unique names."""
    return [name if name else f"\x00unnamed{i}" for i, name in enumerate(columns)]


def iter_frames(open_binary: Callable[[], BinaryIO], display: str, header: CsvHeader, *,
                text_columns: list[str], na_values: dict[str, tuple[str, ...]],
                chunksize: int | None = None) -> Iterator[pd.DataFrame]:
    """Yield the data rows as DataFrames: one frame, or frames of ``chunksize`` rows.

    ``text_columns`` are read as strings (never type-guessed); ``na_values``
    maps a column to the cell texts that mean "missing" there (columns not in
    it have none). All columns are read so that a row with more fields than
    the header is an error rather than silently cut.
    """
    names = pandas_names(header.columns)
    options = dict(
        sep=header.delimiter, header=0, names=names, index_col=False,
        dtype={c: str for c in text_columns}, keep_default_na=False,
        na_values={c: list(v) for c, v in na_values.items()},
        encoding="utf-8-sig", engine="c", skip_blank_lines=True,
    )
    with translated(display):
        handle = open_binary()
    with handle:
        if chunksize is None:
            with translated(display):
                frame = pd.read_csv(handle, **options)
            yield frame
            return
        with translated(display):
            reader = pd.read_csv(handle, chunksize=chunksize, **options)
        with reader:
            while True:
                with translated(display):
                    frame = next(reader, None)
                if frame is None:
                    return
                yield frame
