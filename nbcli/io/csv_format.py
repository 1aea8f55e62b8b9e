"""CSV: the header, delimiter detection, and the reader (polars' streaming CSV scan).

Every column is read as text through a schema fixed from the header, so no
chunk can change a column's type, and converted by the column plan
(:mod:`nbcli.io.cells`): features to correctly rounded float64 (polars'
parser), the target as text. A row of nothing but blank cells is a blank
line and is skipped, as are empty lines; a row with fewer fields than the
header has missing cells; one with more is an error naming its line. Files
whose lines end with a lone carriage return (classic Mac OS) are read
through a translation to ``\\n``, in memory.
"""

from __future__ import annotations

import contextlib
import csv
import io
import os
import warnings as python_warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import Any, BinaryIO

import numpy as np

from nbcli.errors import NbcliError
from nbcli.io.cells import (
    features_of,
    missing_labels,
    na_texts,
    note_spellings,
    text_label_coding,
    text_label_coding_and_missing,
    without_na_labels,
)
from nbcli.io.csv_quotes import check_quotes
from nbcli.io.limits import MAX_NAME_CHARS, check_names
from nbcli.io.messages import (
    delimiter_name,
    error_from_exception,
    fail,
    interruption_in,
    refuse_repeated,
    translated,
)
from nbcli.io.plan import ColumnPlan, plan_columns
from nbcli.io.profile import SAMPLE_ROWS
from nbcli.io.readers import (
    RawChunk,
    TableReader,
    finish_plan,
    labels_or_error,
    register,
    unseen_text_counts,
)
from nbcli.io.request import DataRequest
from nbcli.io.sources import Source
from nbcli.io.words import words_of

__all__ = [
    "CsvHeader",
    "CsvReader",
    "read_header",
    "delimiter_hint",
    "settle_scan_pieces",
    "DELIMITERS",
]

#: Delimiters tried when none is given, in order of preference on a tie.
DELIMITERS = (",", ";", "\t", "|")

# Header plus this many further lines decide the delimiter.
_SAMPLE_ROWS = 5

#: A data line longer than this (in bytes) is an error: it is almost always a
#: file without line breaks, or a quote that is never closed.
LINE_LIMIT = 100 << 20

#: Bounds of the bytes of the file polars' streaming scan parses at a time
#: (see ``_batches``) ...
_SCAN_PIECE_BYTES = (1 << 18, 1 << 23)
#: ... which is about this fraction of a chunk's bytes.
_PIECES_PER_CHUNK = 4


@dataclass(frozen=True)
class CsvHeader:
    """The header of a CSV file.

    ``columns`` are the names without surrounding whitespace, ``""`` for a
    column without a name (such as the index column pandas writes);
    ``written`` the names exactly as in the file; ``has_data`` tells whether a
    non-blank line follows the header; ``blank_above`` counts the blank
    lines above the header; ``lone_cr`` whether lines end with a carriage
    return alone; ``sample_bytes`` is the length in UTF-8 bytes of the
    longest line among the header and the few lines read after it.
    """

    columns: list[str]
    delimiter: str
    has_data: bool
    blank_above: int = 0
    lone_cr: bool = False
    sample_bytes: int = 0
    written: tuple[str, ...] = ()


def normalise_delimiter(delimiter: str, display: str) -> str:
    """Accept one character, or ``\\t`` / ``tab`` spelled out, as a delimiter."""
    if delimiter in ("\\t", "tab", "TAB"):
        return "\t"
    if not isinstance(delimiter, str) or len(delimiter) != 1 or delimiter in '\r\n"':
        raise fail(
            display, f"the delimiter must be one character such as ',' or ';', got {delimiter!r}"
        )
    return delimiter


#: The longest line read (in characters): long text documents stay far
#: below it, while a device such as /dev/zero or binary data fails fast
#: instead of filling memory.
MAX_LINE_CHARS = 100_000_000


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
    blank_above = 0
    with translated(display):
        with open_binary() as raw:
            text = io.TextIOWrapper(raw, encoding="utf-8-sig", newline="")
            while len(lines) <= _SAMPLE_ROWS:
                line = text.readline(MAX_LINE_CHARS + 1)
                if not line:
                    break
                if len(line) > MAX_LINE_CHARS:
                    raise fail(
                        display,
                        f"line {blank_above + len(lines) + 1} is longer than "
                        f"{MAX_LINE_CHARS // 1_000_000} MB; this is not a CSV file (a device "
                        "such as /dev/zero, or binary data?)",
                    )
                # Blank (and whitespace-only) lines are skipped everywhere.
                if line.strip():
                    lines.append(line)
                elif not lines:
                    blank_above += 1
    if not lines:
        raise fail(display, "is empty; expected a header line followed by data rows")
    if delimiter is None:
        delimiter = _detect_delimiter(lines)
    else:
        delimiter = normalise_delimiter(delimiter, display)
    # Names are matched without their surrounding whitespace, at fit and
    # predict alike ("a, b" names the columns "a" and "b").
    try:
        written = next(csv.reader(lines[:1], delimiter=delimiter))
    except csv.Error:
        # The csv module's own field limit (128 KiB) is far above a name's.
        raise fail(
            display,
            f"its header has a field longer than {MAX_NAME_CHARS:,} characters; column names "
            "are at most that long (is the first line a header, and are its quotes closed?)",
        ) from None
    check_names(written, display)
    columns = [name.strip() for name in written]
    refuse_repeated(
        display,
        [c for c in columns if c],
        "has repeated column names in its header: {names}; give every column a distinct name",
        sort=False,
    )
    return CsvHeader(
        columns=columns,
        delimiter=delimiter,
        has_data=len(lines) > 1,
        blank_above=blank_above,
        lone_cr=lines[0].endswith("\r") and not lines[0].endswith("\r\n"),
        sample_bytes=max(len(line.encode("utf-8")) for line in lines),
        written=tuple(written),
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


def _cut_short(source: Source, header) -> str | None:
    """A warning when a plain file's last line has no line end and fewer fields
    than the header: the file was most likely cut short (a copy or download
    that did not finish), and its last row is read with missing cells."""
    import os

    path = source.path
    if path == "-" or source.gzipped or not os.path.isfile(path):
        return None
    try:
        with open(path, "rb") as handle:
            handle.seek(max(0, os.path.getsize(path) - (1 << 16)))
            tail = handle.read()
    except OSError:
        return None
    if not tail or tail.endswith((b"\n", b"\r")):
        return None
    last = tail.rsplit(b"\n", 1)[-1]
    fields = last.count(header.delimiter.encode()) + 1
    if b'"' in last or fields >= len(header.columns):
        return None
    return (
        f"{source.display}: its last line has {fields} of the header's {len(header.columns)} "
        "fields and no line end, as if the file was cut short; that row is read with "
        "missing cells (check that the copy or download finished)"
    )


@dataclass
class _ShortRows:
    """The rows with fewer fields than the header met in one read: their
    count, the first and last (parser rows, blank lines included) and the
    first one's fields; ``rows``, the parser rows of a finished read;
    ``whole``, the file's count by :meth:`CsvReader._short_rows_of_file`."""

    count: int = 0
    first: int | None = None
    first_fields: int = 0
    last: int | None = None
    rows: int = 0
    whole: tuple[int, int, int, bool] | None = None


class _LineIndex:
    """The lines of a file without quotes (each line one record), found
    forward from a cursor, so that a whole read looks at each byte once.

    Lines are counted from the first after ``skip`` lines (the header's).
    """

    #: Bytes searched for line ends at a time.
    BLOCK = 1 << 22

    def __init__(self, source: Source, skip: int, longest: int):
        import mmap

        self.longest = max(1, longest)
        self._handle = None
        if source._data is not None:
            data: Any = source._data
        else:
            self._handle = open(source.path, "rb")
            size = os.fstat(self._handle.fileno()).st_size
            data = mmap.mmap(self._handle.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
        self._data = data
        self._bytes: Any = (
            np.frombuffer(data, dtype=np.uint8) if len(data) else np.empty(0, np.uint8)
        )
        self.line, self.offset = 0, 0
        self._skip(skip)
        self.line = 0

    def __del__(self):
        # The array over the mapping goes first: a mapping with views cannot close.
        self._bytes = None
        with contextlib.suppress(Exception):
            if self._handle is not None:
                self._data.close()
                self._handle.close()

    def _skip(self, n: int) -> None:
        """Move the cursor ``n`` lines on.

        The bytes are counted, never compared one by one in Python: a block
        that holds ``n`` lines at the longest line of the planning sample is
        copied and its line ends counted, then halved towards the ``n``-th.
        """
        data, size = self._data, self._bytes.size
        while 0 < n <= 64 and self.offset < size:
            # A few lines: found one by one.
            end = data.find(b"\n", self.offset)
            self.offset = size if end < 0 else end + 1
            self.line += 1
            n -= 1
        while n > 0 and self.offset < size:
            end = min(size, self.offset + n * (self.longest + 2))
            block = data[self.offset : end]
            found = block.count(b"\n")
            if found < n:
                n -= found
                self.line += found
                self.offset = end
                continue
            lo, hi, before = 0, len(block), 0
            while hi - lo > 1:
                mid = (lo + hi) // 2
                k = block.count(b"\n", lo, mid)
                if before + k >= n:
                    hi = mid
                else:
                    before, lo = before + k, mid
            self.offset += hi
            self.line += n
            return

    def delimiters(self, lines: np.ndarray, delimiter: str) -> np.ndarray:
        """The count of ``delimiter`` bytes in each of ``lines`` (ascending,
        at or after the cursor); the cursor moves past the last."""
        out = np.zeros(lines.size, dtype=np.int64)
        mark = delimiter.encode()
        if lines.size * 8 < int(lines[-1]) - int(lines[0]) + 1:
            # Few lines among many: each found by counting line ends, and searched.
            size = self._bytes.size
            for k, line in enumerate(lines.tolist()):
                self._skip(line - self.line)
                end = self._data.find(b"\n", self.offset)
                end = size if end < 0 else end
                out[k] = self._data[self.offset : end].count(mark)
                self.offset, self.line = min(size, end + 1), self.line + 1
            return out
        self._skip(int(lines[0]) - self.line)
        first = self.line
        want = int(lines[-1]) - first + 1
        # The ends of lines first..last, in a block that holds them all at
        # the longest line of the planning sample (grown if it does not).
        size, span = self._bytes.size, want * (self.longest + 2)
        while True:
            end = min(size, self.offset + span)
            ends = np.flatnonzero(self._bytes[self.offset : end] == 10)
            if ends.size >= want or end == size:
                break
            span *= 2
        ends = ends[:want] + self.offset
        if ends.size < want:  # the last line has no line end
            ends = np.append(ends, size)
        starts = np.concatenate(([self.offset], ends[:-1] + 1))
        at = lines - first
        if len(mark) != 1:
            for k, i in enumerate(at):
                out[k] = self._data[int(starts[i]) : int(ends[i])].count(mark)
        else:
            marks = np.flatnonzero(self._bytes[self.offset : int(ends[-1])] == mark[0])
            marks += self.offset
            out[:] = np.searchsorted(marks, ends[at]) - np.searchsorted(marks, starts[at])
        self.offset = min(size, int(ends[-1]) + 1)
        self.line = first + want
        return out


def _private_names(columns: list[str]) -> list[str]:
    """Column names for the parser: unnamed columns get private, unique names."""
    return [name if name else f"\x00unnamed{i}" for i, name in enumerate(columns)]


def delimiter_hint(header: CsvHeader, display: str) -> NbcliError | None:
    """A better error than "no such column" when the header did not split:
    one column whose name holds another delimiter means the wrong one was used."""
    if len(header.columns) != 1:
        return None
    name = header.columns[0]
    others = [d for d in DELIMITERS if d != header.delimiter and d in name]
    if not others:
        return None
    return fail(
        display,
        f"the header is one column, {name[:60]!r}, when split on "
        f"{delimiter_name(header.delimiter)}; the file seems to use "
        f"{delimiter_name(others[0])}: give that delimiter, or none to "
        "have it detected",
    )


@register
class CsvReader(TableReader):
    """Reads a CSV source whole or in chunks, with one plan for every chunk."""

    format = "csv"

    def __init__(self, source: Source, opts: DataRequest, delimiter: str | None = None):
        self.source = source
        display = source.display
        self.header = read_header(source.open_binary, display, delimiter)
        if not self.header.has_data:
            raise fail(display, "has a header but no data rows; add rows below the header")
        # One rule for quotes before any row is parsed (see nbcli.io.csv_quotes).
        self._quoted = check_quotes(
            source.open_binary, display, self.header.delimiter, self.header.lone_cr
        )
        self._short = _ShortRows()
        self._lines: _LineIndex | None = None
        try:
            self.plan: ColumnPlan = plan_columns(self.header.columns, opts, display)
        except NbcliError:
            hint = delimiter_hint(self.header, display)
            if hint is not None:
                raise hint from None
            raise
        self._names = _private_names(self.header.columns)
        self.label_spellings = {}
        self.opts = opts
        self.plan, self.encoders = finish_plan(self.plan, opts, display, self._planning_sample)
        cut = _cut_short(source, self.header)
        self._cut = cut is not None
        if cut is not None:
            self.plan = replace(self.plan, warnings=[*self.plan.warnings, cut])

    def _planning_sample(self):
        """The first :data:`~nbcli.io.profile.SAMPLE_ROWS` data rows: every
        column as text, or as float64 when all its cells are plain numbers
        (see :meth:`_sample_of`).

        They are parsed from the first lines of the file alone, cut at a
        line break outside quotes: the parser, given the whole file, would
        go over all of it to hand out its first rows (and decompress a gzip
        file whole). The rows are taken when the lines hold more rows than
        the sample, or are the whole file; otherwise (a quote the parser
        reads differently), and on any parsing problem, they are read from
        the whole file, so a problem is worded as before.
        """
        if not self.header.lone_cr:
            # The lines above the header, the header, the sample and one more.
            found = _first_records(self.source, self.header.blank_above + SAMPLE_ROWS + 2)
            if found is not None:
                data, whole = found
                frame = self._sample_of(data)
                if frame is not None and (whole or frame.height > SAMPLE_ROWS):
                    return frame.head(SAMPLE_ROWS)
        return self._text_rows(0, SAMPLE_ROWS)

    def _sample_of(self, data: bytes):
        """The rows of ``data`` (the first lines of the file), or None when
        they do not parse.

        A column whose cells are all plain numbers (no missing cell, no NaN)
        comes as float64: its profile is the same as of its text, and a
        number column is profiled many times faster than text. The other
        columns come as text, as are all columns under ``--na-values``.
        """
        import polars as pl

        def as_text():
            return self._scan(typed=False, where=io.BytesIO(data))

        try:
            # A malformed line at the end of the lines read is no warning here.
            with python_warnings.catch_warnings():
                python_warnings.simplefilter("ignore")
                if self.opts.na_values is not None:
                    return as_text().collect()
                every = set(self.header.columns)
                typed = self._scan(typed=True, where=io.BytesIO(data), numeric=every).collect()
                holes = typed.select(pl.all().is_nan().fill_null(True).any()).row(0)
                text = [c for c, hole in zip(typed.columns, holes) if hole]
                if not text:
                    return typed
                cells = as_text().select(text).collect()
                if cells.height != typed.height:
                    return as_text().collect()
                return typed.with_columns(cells)
        except Exception:
            return None

    def _scan(self, typed: bool, where: Any = None, numeric: set[str] | None = None):
        """The lazy scan: every column as text, or with ``typed`` the plan's
        numeric features (or the columns ``numeric``) as float64, a cell that
        is not a plain number null (the fast path, for files whose feature
        cells are all plain numbers or empty); of the source, or of ``where``
        (the source's first lines, in memory)."""
        import polars as pl

        if where is None and self.header.lone_cr:
            with translated(self.source.display), self.source.open_binary() as raw:
                data = raw.read().replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            where = io.BytesIO(data)
        elif where is None:
            where = self.source.file_or_buffer()
        # A column that is also kept or the target is read as text, as written;
        # cells spelled like numbers may be missing values (--na-values).
        typed = typed and self.opts.na_values is None
        if not typed:
            numeric = set()
        elif numeric is None:
            numeric = set(self.plan.numeric) - {*self.plan.keep, self.plan.target}
        # The parser checks the header against the names as written; the
        # frame's columns are then renamed to the stripped names.
        written = _private_names(list(self.header.written or self.header.columns))
        schema = {
            name: pl.Float64 if column in numeric else pl.String
            for name, column in zip(written, self.header.columns)
        }
        # An unnamed column ("" in the header) has a private name in the
        # schema, which polars refuses to match with the header's "": the
        # header is skipped as a line instead, the names coming from the schema.
        unnamed = "" in self.header.columns
        renamed = {a: b for a, b in zip(written, self._names) if a != b}
        # The typed scan parses only the columns the plan reads. A chunk
        # without a missing cell among them has no blank row; one with a
        # missing cell is read again as text, every column, which decides.
        wanted = self._wanted() if typed and where is None else None
        lazy = pl.scan_csv(
            where,
            has_header=not unnamed,
            separator=self.header.delimiter,
            quote_char='"',
            skip_lines=self.header.blank_above + (1 if unnamed else 0),
            schema=schema,
            encoding="utf8",
            raise_if_empty=False,
            truncate_ragged_lines=False,
            ignore_errors=typed,
        )
        lazy = lazy.rename(renamed) if renamed else lazy
        return lazy.select(wanted) if wanted is not None else lazy

    def _wanted(self) -> list[str] | None:
        """The columns the plan reads, in file order, or None for all."""
        plan = self.plan
        wanted = {*(plan.features if self.read_features else ()), *plan.keep}
        if plan.target is not None and self.read_target:
            wanted.add(plan.target)
        if not wanted or not wanted <= set(self._names):
            return None
        if len(wanted) == len(self._names):
            return None
        return [c for c in self._names if c in wanted]

    def _batches(self, lazy, chunk_size: int | None):
        """The rows of a scan as polars frames of exactly ``chunk_size`` rows
        (the last may be shorter), or one frame."""
        if chunk_size is None:
            yield lazy.collect()
            return
        # polars' streaming CSV scan parses pieces of 32 MB by default, many
        # at once (a 168 MB file: about 170 MB held at once), so a fit's
        # memory grew with the file up to a few hundred MB. Pieces of a
        # quarter of a chunk keep what the scan holds to a few chunks, so a
        # fit's peak is the same on a file 10 or 100 times its chunk; each
        # piece costs the parser a fixed amount, so they are no smaller than
        # 256 KiB (measured: 2 MB pieces read 10% slower than 32 MB ones,
        # 256 KiB pieces 40%).
        if _PIECES not in os.environ:
            chunk_bytes = chunk_size * max(1, self.header.sample_bytes)
            low, high = _SCAN_PIECE_BYTES
            settle_scan_pieces(min(high, max(low, chunk_bytes // _PIECES_PER_CHUNK)))
        yield from lazy.collect_batches(chunk_size=chunk_size)

    def _frames(self, chunk_size: int | None):
        """The rows as polars frames, chunk boundaries at multiples of
        ``chunk_size``; parsing errors become messages.

        The typed scan (float64 features, a cell that is not a plain number
        read as null) serves every chunk without an empty cell; a chunk with
        one (a missing value, ``NA``, ``True``, a stray word, a blank line) is
        read again as text, whose conversion parses numbers with the same
        parser and words each problem. A malformed line stops the typed scan;
        the text scan then reads on from the first row not yet handed out and
        names the line.
        """
        done = 0
        try:
            for frame in self._batches(self._scan(typed=True), chunk_size):
                height = frame.height
                if sum(frame.null_count().row(0)):
                    # A row with fewer fields than the header has empty
                    # cells, so only the chunks read again can hold one.
                    frame = self._text_rows(done, height)
                    self._note_short_rows(frame, done)
                yield frame
                done += height
            self._short.rows = done
            return
        except NbcliError:
            raise
        except Exception as exc:
            interruption = interruption_in(exc)
            if interruption is not None:
                raise interruption from None
        try:
            for frame in self._batches(self._scan(typed=False).slice(done), chunk_size):
                self._note_short_rows(frame, done)
                yield frame
                done += frame.height
            self._short.rows = done
        except Exception as exc:
            raise self._error(exc) from exc

    def _text_rows(self, start: int, n: int):
        """Rows ``start`` to ``start + n`` of the file (as the parser counts
        them, blank lines included), every column as text."""
        try:
            return self._scan(typed=False).slice(start, n).collect()
        except Exception as exc:
            raise self._error(exc) from exc

    def chunks(self, chunk_size: int | None, resolve: bool) -> Iterator[RawChunk]:
        # Every read counts afresh (a second pass over the file counts the same).
        self._short = replace(_ShortRows(), whole=self._short.whole)
        self._lines = None
        offset = 0
        for frame in self._frames(chunk_size):
            frame = _without_blank_rows(frame)
            if frame.height == 0:
                continue
            if frame.estimated_size() > LINE_LIMIT:
                self._check_line_lengths(frame, offset)
            yield self._convert(frame, offset, resolve)
            offset += frame.height

    def _note_short_rows(self, frame, start: int) -> None:
        """Count the rows of ``frame`` (parser rows ``start`` on, every column
        as text) with fewer fields than the header.

        The parser fills the fields a row lacks with nulls, as it reads an
        empty cell, so only a row whose last cell is null can be short; for
        those alone the fields are counted, in the line itself (a plain file
        without quotes: each line is a record, found by :class:`_LineIndex`
        moving forward through the file once per read), or else (quotes, a
        gzip file, lone carriage returns) by Python's csv module over the
        whole file, once.
        """
        import polars as pl

        if self._short.whole is not None:
            return
        last = frame.columns[-1]
        if frame.get_column(last).null_count() == 0:
            return
        # Rows of nothing but empty cells are blank lines, skipped anyway.
        blank = pl.all_horizontal([pl.col(c).is_null() for c in frame.columns])
        candidates = frame.select((pl.col(last).is_null() & ~blank).arg_true()).to_series()
        if candidates.len() == 0:
            return
        if self._quoted or self.header.lone_cr or self.source.gzipped:
            self._short.whole = self._short_rows_of_file()
            return
        if self._lines is None:
            self._lines = _LineIndex(
                self.source, self.header.blank_above + 1, self.header.sample_bytes
            )
        rows = candidates.to_numpy().astype(np.int64)
        fields = self._lines.delimiters(start + rows, self.header.delimiter) + 1
        short = rows[fields < len(self.header.columns)]
        if short.size == 0:
            return
        found = self._short
        if found.first is None:
            found.first = start + int(short[0])
            found.first_fields = int(fields[fields < len(self.header.columns)][0])
        found.count += int(short.size)
        found.last = start + int(short[-1])

    def _short_rows_of_file(self) -> tuple[int, int, int, bool]:
        """The rows with fewer fields than the header by Python's csv module:
        their count, the line the first starts on and its fields, and whether
        the last record of the file is one."""
        expected = len(self.header.columns)
        count, first, first_fields, last_short = 0, 0, 0, False
        with translated(self.source.display), self.source.open_binary() as raw:
            text = io.TextIOWrapper(raw, encoding="utf-8-sig", newline="")
            rows = csv.reader(text, delimiter=self.header.delimiter)
            header_seen, line = False, 0
            for row in rows:
                start, line = line + 1, rows.line_num
                if not row or not any(cell.strip() for cell in row):
                    continue
                if not header_seen:
                    header_seen = True
                    continue
                last_short = len(row) < expected
                if last_short:
                    count += 1
                    if count == 1:
                        first, first_fields = start, len(row)
        return count, first, first_fields, last_short

    def read_warnings(self) -> list[str]:
        found = self._short
        if found.whole is not None:
            count, line, fields, last_short = found.whole
            if self._cut and last_short:
                count -= 1  # the last line: warned about as cut short
        else:
            count, fields = found.count, found.first_fields
            if self._cut and found.last is not None and found.last == found.rows - 1:
                count -= 1
            # Each line is a record: the header's line, then one per row.
            line = self.header.blank_above + 2 + (found.first or 0)
        if count <= 0:
            return []
        rows = "1 row has" if count == 1 else f"{count} rows have"
        return [
            f"{self.source.display}: {rows} fewer fields than the header, the first at line "
            f"{line} ({fields} of {len(self.header.columns)}); their missing fields are read "
            "as missing cells (check for lines cut short or run together)"
        ]

    def _convert(self, frame, offset: int, resolve: bool) -> RawChunk:
        import polars as pl

        plan = self.plan
        display = self.source.display
        if self.read_features:
            X, unread = features_of(
                frame, plan, display, offset, self.encoders, na_texts(self.opts.na_values)
            )
        else:
            X, unread = np.empty((frame.height, 0)), {}
        y, label_error, y_missing, y_coding = None, None, None, None
        if plan.target is not None and self.read_target:
            labels = without_na_labels(frame.get_column(plan.target), self.opts.na_labels)
            if self.opts.infer:
                note_spellings(self.label_spellings, labels)
            skip = self.opts.skip_missing_labels
            if skip and not resolve and labels.dtype == pl.String:
                # Coded once; the missing labels are among the distinct ones.
                y_coding, y_missing = text_label_coding_and_missing(labels)
            else:
                if skip:
                    y_missing = missing_labels(labels)
                y_coding, label_error = labels_or_error(
                    text_label_coding, labels, display, plan.target, offset, resolve, skip
                )
            y = None if y_coding is None else y_coding.labels
        kept = {k: _text_column(frame.get_column(k)) for k in plan.keep}
        return RawChunk(
            X=X,
            unread=unread,
            y=y,
            kept=kept,
            row_offset=offset,
            label_error=label_error,
            y_missing=y_missing,
            y_coding=y_coding,
            words=words_of(frame, plan) if self.read_features else {},
            unseen_text=unseen_text_counts(frame, plan, X, unread, self.opts),
        )

    def _check_line_lengths(self, frame, offset: int) -> None:
        """Refuse the first row whose cells add up to more than :data:`LINE_LIMIT` bytes."""
        import polars as pl

        schema = frame.schema
        text = [c for c in frame.columns if schema[c] == pl.String]
        lengths = frame.select(
            pl.sum_horizontal([pl.col(c).str.len_bytes().fill_null(0) for c in text])
        ).to_series()
        long = (lengths > LINE_LIMIT).arg_true()
        if long.len():
            raise fail(
                self.source.display,
                f"row {offset + int(long[0]) + 1} is longer than {LINE_LIMIT >> 20} MB; "
                "check that the file has line breaks and that every quote is closed",
            )

    def _error(self, exc: BaseException) -> NbcliError:
        interruption = interruption_in(exc)
        if interruption is not None:
            raise interruption
        display = self.source.display
        if isinstance(exc, NbcliError):
            return exc
        message = str(exc)
        if "more fields" in message or "extra" in message and "column" in message:
            found = self._long_line()
            if found is not None:
                return found
        return error_from_exception(exc, display)

    def _long_line(self) -> NbcliError | None:
        """The message for the first row with more fields than the header,
        found by reading the file again with Python's csv module (only after
        the parser has refused it, so plain files pay nothing)."""
        display = self.source.display
        expected = len(self.header.columns)
        with translated(display), self.source.open_binary() as raw:
            text = io.TextIOWrapper(raw, encoding="utf-8-sig", newline="")
            rows = csv.reader(text, delimiter=self.header.delimiter)
            data_rows = -1
            for row in rows:
                if not row or not any(cell.strip() for cell in row):
                    continue
                data_rows += 1
                if data_rows and len(row) > expected:
                    if data_rows == 1:
                        return fail(
                            display,
                            "the first data row has more fields than the header; quote "
                            "values that contain the delimiter, or pass the right delimiter",
                        )
                    return fail(
                        display,
                        f"line {rows.line_num} has {len(row)} fields but the header has "
                        f"{expected}; quote values that contain the delimiter, or pass "
                        "the right delimiter",
                    )
        return None


#: The most bytes read for the planning sample from the top of a file; a
#: sample longer than this (long documents) is read by the parser from the
#: whole file instead.
SAMPLE_BYTE_LIMIT = 256 << 20


_PIECES = "POLARS_CSV_CHUNK_SIZE"


def settle_scan_pieces(piece: int = 1 << 21) -> None:
    """Fix the bytes polars' CSV scans parse at a time (see ``CsvReader._batches``)
    for the rest of the process, unless the user or an earlier scan has.

    The setting is an environment variable, which polars' threads read as
    scans start; C's ``setenv`` must not run beside them, so it is set once:
    by the first scan, or by a caller about to start scans on several
    threads (batch prediction), before it starts them.
    """
    os.environ.setdefault(_PIECES, str(int(piece)))


def _first_records(source: Source, n: int) -> tuple[bytes, bool] | None:
    """The start of ``source`` up to its ``n``-th line break outside double
    quotes (a quoted cell may hold line breaks), and whether that is all of
    it; None when it exceeds :data:`SAMPLE_BYTE_LIMIT` bytes or the source
    cannot be read (the parser then says why)."""
    data = bytearray()
    quotes = 0  # quotes so far: odd inside a quoted cell
    records = 0
    try:
        with source.open_binary() as raw:
            while len(data) <= SAMPLE_BYTE_LIMIT:
                block = raw.read(1 << 20)
                if not block:
                    return bytes(data), True
                cut = None
                if quotes % 2 == 0 and b'"' not in block:
                    # No quote: every line break ends a record.
                    found = block.count(b"\n")
                    if records + found >= n:
                        rest = block.split(b"\n", n - records)[-1]
                        cut = len(block) - len(rest)
                    records += found
                else:
                    start = 0
                    while cut is None and (end := block.find(b"\n", start)) >= 0:
                        quotes += block.count(b'"', start, end)
                        start = end + 1
                        if quotes % 2 == 0:
                            records += 1
                            if records == n:
                                cut = start
                    if cut is None:
                        quotes += block.count(b'"', start)
                if cut is not None:
                    data += block[:cut]
                    return bytes(data), cut == len(block) and not raw.read(1)
                data += block
    except Exception:
        return None
    return None


def _without_blank_rows(frame):
    """``frame`` without the rows in which every cell is empty or blank (blank
    lines, and lines of nothing but delimiters)."""
    import polars as pl

    if sum(frame.null_count().row(0)) == 0:
        return frame
    schema = frame.schema
    blank = pl.all_horizontal(
        [
            pl.col(c).is_null() | (pl.col(c).str.strip_chars() == "")
            if schema[c] == pl.String
            else pl.col(c).is_null()
            for c in frame.columns
        ]
    )
    return frame.filter(~blank)


def _text_column(column) -> np.ndarray:
    """A kept column as written: an object array of str (an empty cell is "")."""
    return np.asarray(column.fill_null("").to_list(), dtype=object)
