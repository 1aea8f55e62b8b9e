"""Weka's ARFF files (``.arff``, ``.arff.gz``), dense and sparse, parsed by
liac-arff (the ``arff`` extra) and handed out as polars frames in chunks.

Each attribute keeps its declared type: ``NUMERIC``/``REAL``/``INTEGER``
become float64 columns, a nominal attribute ``{a, b, c}`` a categorical
column whose categories are the declared values in their declared order
(a polars ``Enum``, which :class:`~nbcli.io.categories.Categories` keeps),
``STRING`` a text column (a ``--text`` column, or one profiled like CSV
text). ``?`` is a missing cell. In a sparse row ``{0 x, 3 y}`` an absent
value is 0 (a nominal attribute's first value), as Weka reads it. ``DATE``
attributes are read as text, so that they are refused (or dropped with
``--drop``) as date columns of a CSV file are. Everything after the frames
is the Parquet reader's.
"""

from __future__ import annotations

import contextlib
import io
import re
from collections.abc import Iterator

from nbcli.errors import NbcliError
from nbcli.io.extras import require
from nbcli.io.messages import fail
from nbcli.io.parquet_format import ParquetReader
from nbcli.io.profile import SAMPLE_ROWS
from nbcli.io.readers import register

__all__ = ["ArffReader"]

# `@attribute name date [format]`: read as text (see the module docstring).
_DATE = re.compile(r"^(\s*@attribute\s+(?:'[^']*'|\"[^\"]*\"|\S+)\s+)date\b.*$", re.IGNORECASE)
_DATA = re.compile(r"^\s*@data\b", re.IGNORECASE)


def _without_comment(line: str) -> str:
    """A header line without a trailing ``% comment`` (outside quotes), which
    Weka allows after a declaration (``@attribute total {low, high} % < 100``)."""
    if "%" not in line or line.lstrip().startswith("%"):
        return line
    quote, escaped = None, False
    for i, c in enumerate(line):
        if escaped:
            escaped = False
        elif quote is not None:
            if c == "\\":
                escaped = True
            elif c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "%":
            return line[:i].rstrip() + "\n"
    return line


def _dates_as_strings(lines: Iterator[str]) -> Iterator[str]:
    """The lines of the file, with the header's DATE attributes declared STRING
    and its trailing comments cut."""
    header = True
    for line in lines:
        if header:
            if _DATA.match(line):
                header = False
            else:
                line = _DATE.sub(r"\1string", _without_comment(line))
        yield line


@register
class ArffReader(ParquetReader):
    """Reads an ARFF file in chunks of rows."""

    format = "arff"
    format_name = "ARFF"

    def _decode(self, stream):
        """``(attributes, row generator, decoder)`` of a pass over ``stream``."""
        arff = require("arff", "arff", "reading ARFF files", package="liac-arff")
        decoder = arff.ArffDecoder()
        with self._decode_errors(arff, decoder):
            obj = decoder.decode(_dates_as_strings(stream), return_type=arff.DENSE_GEN)
        self._attributes = obj["attributes"]
        return obj["attributes"], obj["data"], decoder

    def _arff_error(self, exc, decoder) -> NbcliError:
        exc.line = getattr(decoder, "_current_line", -1)
        text = str(exc).strip().rstrip(".")
        return fail(self.source.display, f"is not a valid ARFF file ({text})")

    def _dtypes(self, attributes):
        import polars as pl

        out: dict = {}
        for name, kind in attributes:
            if isinstance(kind, (list, tuple)):
                values = list(dict.fromkeys(str(v) for v in kind))
                out[name] = pl.Enum(values)
            elif kind == "STRING":
                out[name] = pl.String
            else:
                out[name] = pl.Float64
        return out

    def _frames_of(self, chunk_size: int | None, columns: list[str] | None = None):
        """Polars frames of ``chunk_size`` rows (all rows for None)."""
        arff = require("arff", "arff", "reading ARFF files", package="liac-arff")
        with io.TextIOWrapper(self.source.open_binary(), encoding="utf-8", newline="") as stream:
            yield from self._frames_from(arff, stream, chunk_size, columns)

    def _frames_from(self, arff, stream, chunk_size, columns):
        import polars as pl

        attributes, rows, decoder = self._decode(stream)
        dtypes = self._dtypes(attributes)
        names = [a[0] for a in attributes]
        wanted = names if columns is None else columns
        at = [names.index(c) for c in wanted]
        step = chunk_size or (1 << 62)
        with self._decode_errors(arff, decoder):
            while True:
                block = []
                for row in rows:
                    block.append(row)
                    if len(block) >= step:
                        break
                if not block:
                    return
                yield pl.DataFrame(
                    {
                        names[j]: pl.Series(names[j], [r[j] for r in block], dtype=dtypes[names[j]])
                        for j in at
                    }
                )
                if len(block) < step:
                    return

    @contextlib.contextmanager
    def _decode_errors(self, arff, decoder):
        """An ARFF syntax error or bytes that are not UTF-8 in the block, as one line."""
        try:
            yield
        except arff.ArffException as exc:
            raise self._arff_error(exc, decoder) from None
        except UnicodeDecodeError:
            raise fail(
                self.source.display, "is not UTF-8 text; save the ARFF file as UTF-8"
            ) from None

    def _schema_and_rows(self):
        import polars as pl

        frames = self._frames_of(1)
        first = next(frames, None)
        frames.close()
        return pl.Schema(self._dtypes(self._attributes)), 0 if first is None else first.height

    def _index_columns(self) -> list[str]:
        return []

    def _sample(self):
        import polars as pl

        frames = self._frames_of(SAMPLE_ROWS)
        frame = next(frames, None)
        frames.close()
        if frame is None:
            return pl.DataFrame(schema=self._dtypes(self._attributes))
        return frame

    def _frames(self, chunk_size: int | None):
        yield from self._frames_of(chunk_size, self._columns)
