"""CSV helpers for :mod:`nbcli.io.data`: the header line, delimiter detection,
the two parsing engines, and turning low-level exceptions into one-line
messages.

Every function here that can fail takes ``display``, the file name as the user
should see it (``<stdin>`` for ``-``), and raises
:class:`~nbcli.errors.NbcliError` with a message that starts with it.

Engines. pandas' C parser (:func:`iter_frames`) is the reference: it reads
every file, and its errors become the messages users see. The Arrow engine
(:func:`iter_arrow_tables`, pyarrow's streaming CSV reader) is used when
pyarrow is installed: its numbers are correctly rounded with any pandas, it
is as fast as pandas 3.1's parser on large files (twice as fast as pandas
2.2's) and much faster on small ones, and the next chunk is parsed while the
caller works on this one. It reads
only what it can read exactly as the C engine would; otherwise it raises
:class:`ArrowFallback` and the caller reads on with the C engine from the
first row not yet delivered. It declines files with a quote character
anywhere, a header that is not the first line, a delimiter other than those
of :data:`DELIMITERS`, and anything pyarrow reports as a problem (a row
with the wrong number of fields, a cell that is not a number, an empty
cell, bytes that are not UTF-8, a broken gzip stream); :mod:`nbcli.io.data`
adds infinite values, ``-0`` and empty labels. :func:`csv_engine` picks the
engine, and the environment variable ``NBCLI_CSV_ENGINE`` (``arrow`` or
``c``) overrides it.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import re
import warnings
import zipfile
import zlib
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO, TypeVar

import pandas as pd

from nbcli.errors import NbcliError

if TYPE_CHECKING:
    import pyarrow as pa

T = TypeVar("T")

#: Cell texts read as a missing value in feature columns: pandas' default
#: ``na_values`` list (pandas docs, ``read_csv``), written out so that the
#: target and kept columns can use a narrower one (only the empty cell), and
#: a class called ``NA`` or ``None`` stays a class.
NA_STRINGS = (
    "",
    "#N/A",
    "#N/A N/A",
    "#NA",
    "-1.#IND",
    "-1.#QNAN",
    "-NaN",
    "-nan",
    "1.#IND",
    "1.#QNAN",
    "<NA>",
    "N/A",
    "NA",
    "NULL",
    "NaN",
    "None",
    "n/a",
    "nan",
    "null",
)

#: Whether pandas' C parser reads every decimal text as the nearest double
#: (correctly rounded), as pyarrow's does. pandas 3.1 made all its
#: ``float_precision`` modes one correctly rounded parser. Before that the
#: default ("high") misses the nearest double for up to a third of 17-digit
#: texts (pandas 2.2: by up to a few thousand units in the last place, a
#: relative 2e-12, at large exponents), and ``"round_trip"`` is correct but
#: parses about three times slower. So with older pandas the Arrow engine's
#: values are the reference: the C engine keeps pandas' default when chosen,
#: and reads with ``"round_trip"`` only when it takes over from the Arrow
#: engine.
C_ENGINE_CORRECTLY_ROUNDED = tuple(
    int(part) for part in re.findall(r"\d+", pd.__version__)[:2]
) >= (3, 1)

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


def interruption_in(exc: BaseException) -> BaseException | None:
    """The interruption behind an error, if any: the first exception in its
    ``__cause__``/``__context__`` chain that is not an ``Exception``
    (KeyboardInterrupt from Ctrl-C, the CLI's exception for SIGTERM).

    pandas' C parser reports a KeyboardInterrupt raised inside the ``read()``
    it calls as a ParserError ("Calling read(nbytes) on source failed"); the
    interruption is still in the chain, and must win over a message that
    blames the data.
    """
    seen = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if not isinstance(current, Exception):
            return current
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def error_from_exception(exc: BaseException, display: str) -> NbcliError:
    """Turn an exception raised while reading a file into a one-line error.

    Covers file-system errors (missing file, directory, permissions), broken
    gzip streams, text that is not UTF-8 and pandas' parser errors.

    Raises the interruption instead when the exception stems from one (see
    :func:`interruption_in`).
    """
    interruption = interruption_in(exc)
    if interruption is not None:
        raise interruption
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
        return fail(
            display,
            "is not a valid gzip file or is truncated; check that the download or copy finished",
        )
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
        interruption = interruption_in(exc)
        if interruption is not None:
            raise interruption from None
        if "does not match length of data" in str(exc):
            raise fail(
                display,
                "the first data row has more fields than the header; "
                "quote values that contain the delimiter, or pass the right delimiter",
            ) from exc
        raise fail(display, f"could not be parsed as CSV ({exc})") from exc
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


@dataclass(frozen=True)
class CsvHeader:
    """The header of a CSV file.

    ``columns`` are the names as written, ``""`` for a column without a name
    (such as the index column pandas writes); ``has_data`` tells whether a
    non-blank line follows the header; ``first_line`` whether the header is
    the file's first line (no blank lines above it); ``sample_bytes`` is the
    length in UTF-8 bytes of the longest line among the header and the few
    lines read after it.
    """

    columns: list[str]
    delimiter: str
    has_data: bool
    first_line: bool = True
    sample_bytes: int = 0


def normalise_delimiter(delimiter: str, display: str) -> str:
    """Accept one character, or ``\\t`` / ``tab`` spelled out, as a delimiter."""
    if delimiter in ("\\t", "tab", "TAB"):
        return "\t"
    if not isinstance(delimiter, str) or len(delimiter) != 1 or delimiter in '\r\n"':
        raise fail(
            display, f"the delimiter must be one character such as ',' or ';', got {delimiter!r}"
        )
    return delimiter


def read_header(
    open_binary: Callable[[], BinaryIO], display: str, delimiter: str | None = None
) -> CsvHeader:
    """Read the header and a few lines after it; detect the delimiter.

    The delimiter is ``delimiter`` when given; else, among ``,`` ``;`` tab
    ``|``, the most frequent one in the header line that splits the next few
    lines into as many fields as the header (``,`` when none occurs).

    Raises NbcliError for an empty file, text that is not UTF-8, duplicate
    column names, and the file-system errors of :func:`error_from_exception`.
    """
    lines: list[str] = []
    blank_above = False
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
                elif not lines:
                    blank_above = True
    if not lines:
        raise fail(display, "is empty; expected a header line followed by data rows")
    if delimiter is None:
        delimiter = _detect_delimiter(lines)
    else:
        delimiter = normalise_delimiter(delimiter, display)
    columns = next(csv.reader(lines[:1], delimiter=delimiter))
    repeated = [name for name, n in Counter(c for c in columns if c).items() if n > 1]
    if repeated:
        raise fail(
            display,
            f"has repeated column names in its header: {quote_names(repeated)}; "
            "give every column a distinct name",
        )
    return CsvHeader(
        columns=columns,
        delimiter=delimiter,
        has_data=len(lines) > 1,
        first_line=not blank_above,
        sample_bytes=max(len(line.encode("utf-8")) for line in lines),
    )


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


def iter_frames(
    open_binary: Callable[[], BinaryIO],
    display: str,
    header: CsvHeader,
    *,
    text_columns: list[str],
    na_values: dict[str, tuple[str, ...]],
    chunksize: int | None = None,
    skip: int = 0,
    correctly_rounded: bool = False,
) -> Iterator[pd.DataFrame]:
    """Yield the data rows as DataFrames: one frame, or frames of ``chunksize`` rows.

    ``text_columns`` are read as strings (never type-guessed); ``na_values``
    maps a column to the cell texts that mean "missing" there (columns not in
    it have none). All columns are read so that a row with more fields than
    the header is an error rather than silently cut. The first ``skip`` data
    rows are parsed but not yielded (another engine has delivered them); a
    multiple of ``chunksize`` keeps the later frames on the same row
    boundaries as a read from the top. ``correctly_rounded`` asks for the
    nearest double of every number even where this pandas is slower at it
    (see :data:`C_ENGINE_CORRECTLY_ROUNDED`).
    """
    frames = _c_frames(
        open_binary,
        display,
        header,
        text_columns=text_columns,
        na_values=na_values,
        chunksize=chunksize,
        round_trip=correctly_rounded and not C_ENGINE_CORRECTLY_ROUNDED,
    )
    with contextlib.closing(frames):
        for frame in frames:
            if skip >= len(frame):
                skip -= len(frame)
                continue
            if skip:
                frame = frame.iloc[skip:]
                skip = 0
            yield frame


def _c_frames(open_binary, display, header, *, text_columns, na_values, chunksize, round_trip):
    names = pandas_names(header.columns)
    options = dict(
        sep=header.delimiter,
        header=0,
        names=names,
        index_col=False,
        dtype={c: str for c in text_columns},
        keep_default_na=False,
        na_values={c: list(v) for c, v in na_values.items()},
        encoding="utf-8-sig",
        engine="c",
        skip_blank_lines=True,
    )
    if round_trip:
        options["float_precision"] = "round_trip"
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


# ---------------------------------------------------------------------------
# Choosing the engine; the Arrow engine

#: Environment variable naming the CSV engine: ``arrow`` or ``c``.
ENGINE_VARIABLE = "NBCLI_CSV_ENGINE"

# Arrow reads the text in blocks of at least this many bytes; a block must
# hold whole rows, so it grows with the longest line of the header sample.
_ARROW_BLOCK_BYTES = 1 << 20

# pyarrow errors and what a Python stream under it can raise (gzip, I/O).
_ARROW_READ_ERRORS = (ValueError, OSError, EOFError, zlib.error, UnicodeError, zipfile.BadZipFile)


class ArrowFallback(Exception):
    """The Arrow engine cannot promise the C engine's result for this input
    (or for the rest of it): read it with the C engine instead."""


def _arrow_csv():
    """``(pyarrow, pyarrow.csv)``, or None when pyarrow is not installed."""
    try:
        import pyarrow as pa
        import pyarrow.csv as pa_csv
    except ImportError:
        return None
    return pa, pa_csv


def csv_engine() -> str:
    """The engine to read CSV with: ``"arrow"`` or ``"c"``.

    ``NBCLI_CSV_ENGINE`` decides when set (``arrow`` or ``c``, any case);
    unset or empty, Arrow when pyarrow can be imported, else C. Either way
    the Arrow engine hands any file it cannot read exactly like the C engine
    over to it.

    Raises NbcliError for another value, or for ``arrow`` without pyarrow.
    """
    choice = os.environ.get(ENGINE_VARIABLE, "").strip().lower()
    if choice not in ("", "arrow", "c"):
        raise NbcliError(f"{ENGINE_VARIABLE} must be 'arrow' or 'c', got {choice!r}")
    if choice == "c":
        return "c"
    if _arrow_csv() is None:
        if choice == "arrow":
            raise NbcliError(f"{ENGINE_VARIABLE}=arrow needs pyarrow: pip install 'nbcli[fast]'")
        return "c"
    return "arrow"


class _QuoteWatch:
    """A read-only binary stream passing ``raw`` through and noting whether a
    quote character went by.

    Quoting is where pyarrow and pandas part ways (an unclosed quote at the
    end of a file is an error for one and a value for the other; text after
    a closing quote), so the Arrow engine reads only quote-free files. The
    check runs on every block before pyarrow sees it, hence before any row
    parsed from it is handed out.
    """

    mode = "rb"

    def __init__(self, raw: BinaryIO):
        self._raw = raw
        self.quoted = False

    def read(self, size: int = -1) -> bytes:
        data = self._raw.read(size)
        if b'"' in data:
            self.quoted = True
        return data

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    @property
    def closed(self) -> bool:
        return self._raw.closed

    def close(self) -> None:
        self._raw.close()


def arrow_can_read(header: CsvHeader) -> bool:
    """Whether the layout allows the Arrow engine at all: the header is the
    first line (pyarrow's ``skip_rows`` counts blank lines, pandas does not)
    and the delimiter is one of :data:`DELIMITERS` (a character that can be
    part of a number or a keyword, given by hand, stays with the C engine)."""
    return header.first_line and header.delimiter in DELIMITERS


def iter_arrow_tables(
    open_binary: Callable[[], BinaryIO],
    header: CsvHeader,
    *,
    float_columns: list[str],
    chunksize: int | None = None,
) -> Iterator[pa.Table]:
    """Yield the data rows as Arrow tables: one, or tables of exactly
    ``chunksize`` rows (the last may be shorter), the C engine's boundaries.

    Columns are named as by :func:`pandas_names`; ``float_columns`` are
    float64 (pyarrow's correctly rounded parser), all others strings as
    written (every column is read, so that bytes that are not UTF-8 anywhere
    stop the engine as they stop the C engine). No cell is missing: an empty
    cell in a float column is a conversion error, and a string column keeps
    ``""``. At most one chunk is held, plus the blocks pyarrow reads ahead
    (a bounded number, about 32).

    Raises ArrowFallback, possibly after some tables were yielded, when
    pyarrow is missing, the layout is not :func:`arrow_can_read`, a quote
    character is met, or pyarrow reports any problem; the rows not yet
    yielded must then be read with the C engine.
    """
    modules = _arrow_csv()
    if modules is None or not arrow_can_read(header):
        raise ArrowFallback
    pa, pa_csv = modules
    errors = (*_ARROW_READ_ERRORS, pa.ArrowException)
    names = pandas_names(header.columns)
    floats = set(float_columns)
    read_options = pa_csv.ReadOptions(
        column_names=names,
        skip_rows=1,
        use_threads=True,
        block_size=max(_ARROW_BLOCK_BYTES, 16 * header.sample_bytes),
    )
    # Quotes never reach pyarrow's parser (the watch declines them first).
    parse_options = pa_csv.ParseOptions(
        delimiter=header.delimiter, quote_char=False, ignore_empty_lines=True
    )
    convert_options = pa_csv.ConvertOptions(
        column_types={n: pa.float64() if n in floats else pa.string() for n in names},
        null_values=[],
        strings_can_be_null=False,
        quoted_strings_can_be_null=False,
    )
    try:
        watch = _QuoteWatch(open_binary())
    except errors as exc:
        raise _fallback(exc) from exc
    with contextlib.closing(watch):
        try:
            reader = pa_csv.open_csv(
                watch,
                read_options=read_options,
                parse_options=parse_options,
                convert_options=convert_options,
            )
        except errors as exc:
            raise _fallback(exc) from exc
        pending: list = []
        held = 0
        while True:
            try:
                batch = reader.read_next_batch()
            except StopIteration:
                break
            except errors as exc:
                raise _fallback(exc) from exc
            if watch.quoted:
                raise ArrowFallback
            if batch.num_rows == 0:
                continue
            pending.append(batch)
            held += batch.num_rows
            while chunksize is not None and held >= chunksize:
                table = pa.Table.from_batches(pending)
                yield table.slice(0, chunksize)
                rest = table.slice(chunksize)
                pending, held = rest.to_batches(), rest.num_rows
        if watch.quoted:
            raise ArrowFallback
        if held:
            yield pa.Table.from_batches(pending)


def _fallback(exc: BaseException) -> ArrowFallback:
    """ArrowFallback for a pyarrow error, unless an interruption lies behind
    it (then that is raised: reading again with the C engine would ignore
    Ctrl-C)."""
    interruption = interruption_in(exc)
    if interruption is not None:
        raise interruption
    return ArrowFallback()


_END = object()


def read_ahead(items: Iterator[T]) -> Iterator[T]:
    """Yield what ``items`` yields, computing the next item in a worker
    thread while the caller works on the current one.

    pyarrow parses without holding the GIL, so the next chunk is parsed while
    this one is converted and used (a streaming fit, say): one item ahead,
    so at most two are held. Exceptions reach the caller where the item
    would have; closing this generator waits for the item in progress, then
    closes ``items``.
    """
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="nbcli-csv")
    try:
        future = pool.submit(next, items, _END)
        while True:
            item = future.result()
            if item is _END:
                return
            future = pool.submit(next, items, _END)
            yield item
    finally:
        pool.shutdown(wait=True)
        close = getattr(items, "close", None)
        if close is not None:
            close()
