"""svmlight / libsvm files (``.svm``, ``.svmlight``, ``.libsvm``, gzip or not):
``label index:value index:value ... # comment``, one row a line.

The tokens of a block of lines are split and converted by polars (no loop
in Python over the values). Feature ``i`` of the file is the column
``x{i}``: a file whose indices include 0 is zero-based, any other
one-based, and a model file stores the names, so a file scored later maps
its indices to the model's columns whatever its own smallest index. Indices
absent from a row are 0. A first pass over the file finds the largest
index (the number of columns); chunks are then handed out as dense blocks
of ``chunk_size`` rows. ``qid:`` tokens (ranking data) and multi-label
rows (``1,2``) are refused.
"""

from __future__ import annotations

import io
import itertools
from collections.abc import Iterator

import numpy as np

from nbcli.io.cells import typed_labels
from nbcli.io.messages import error_from_exception, fail
from nbcli.io.npz_format import _npz_columns
from nbcli.io.plan import ColumnPlan
from nbcli.io.readers import RawChunk, TableReader, register
from nbcli.io.request import DataRequest
from nbcli.io.sources import Source

__all__ = ["SvmlightReader", "parse_block"]

#: Lines parsed at once in the first pass.
_SCAN_LINES = 20_000
#: The target's name in messages and reports.
TARGET = "label"


def _rows(source: Source) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of each line that holds a row (comments cut)."""
    with io.TextIOWrapper(source.open_binary(), encoding="utf-8") as stream:
        try:
            for number, line in enumerate(stream, 1):
                text = line.split("#", 1)[0].strip()
                if text:
                    yield number, text
        except UnicodeDecodeError:
            raise fail(source.display, "is not UTF-8 text; an svmlight file is text") from None


def parse_block(lines: list[tuple[int, str]], display: str):
    """Labels and entries of a block of rows.

    Parameters
    ----------
    lines : list of (int, str)
        Line numbers (for messages) and texts of ``n`` rows.
    display : str
        The file, for messages.

    Returns
    -------
    labels : ndarray of shape (n,), float64
    rows, indices : ndarray of shape (nnz,), int64
        The row (0-based within the block) and file index of each entry.
    values : ndarray of shape (nnz,), float64

    Raises
    ------
    NbcliError
        Naming the line of the first token that is not ``index:value``, a
        label that is not a number, or a ``qid`` token.
    """
    import polars as pl

    frame = pl.DataFrame({"t": [t for _, t in lines]}).with_row_index("r")
    tokens = frame.select("r", pl.col("t").str.extract_all(r"\S+")).explode("t")
    tokens = tokens.with_columns(pos=pl.int_range(pl.len()).over("r"))
    head = tokens.filter(pl.col("pos") == 0)
    labels = head.get_column("t").cast(pl.Float64, strict=False)
    if labels.null_count():
        at = int(labels.is_null().arg_max() or 0)
        text = head.get_column("t")[at]
        hint = (
            "multi-label rows are not read; give one class per row"
            if "," in text
            else "each row starts with its class label, a number"
        )
        raise fail(display, f"line {lines[at][0]}: label {text!r} is not a number; {hint}")
    entries = tokens.filter(pl.col("pos") > 0)
    pairs = entries.get_column("t").str.split_exact(":", 1).struct.unnest()
    index = pairs.get_column("field_0").cast(pl.Int64, strict=False)
    value = pairs.get_column("field_1").cast(pl.Float64, strict=False)
    bad = index.is_null() | value.is_null() | (index < 0)
    if bad.any():
        at = int(bad.arg_max() or 0)
        token = entries.get_column("t")[at]
        line = lines[int(entries.get_column("r")[at])][0]
        if token.lower().startswith("qid:"):
            raise fail(
                display,
                f"line {line}: has a query id ({token!r}); ranking data (qid) is not read, "
                "remove the qid tokens",
            )
        raise fail(
            display,
            f"line {line}: {token!r} is not index:value (a whole index from 0 and a number)",
        )
    return (
        labels.to_numpy(),
        entries.get_column("r").cast(pl.Int64).to_numpy(),
        index.to_numpy(),
        value.to_numpy(),
    )


@register
class SvmlightReader(TableReader):
    """Reads an svmlight file in chunks of rows, one dense block per chunk."""

    format = "svmlight"

    def __init__(self, source: Source, opts: DataRequest, delimiter: str | None = None):
        self.source = source
        self.opts = opts
        display = source.display
        n_rows, smallest, largest = 0, None, -1
        try:
            rows = _rows(source)
            while block := list(itertools.islice(rows, _SCAN_LINES)):
                _, _, index, _ = parse_block(block, display)
                n_rows += len(block)
                if index.size:
                    low = int(index.min())
                    smallest = low if smallest is None else min(smallest, low)
                    largest = max(largest, int(index.max()))
        except OSError as exc:
            raise error_from_exception(exc, display) from exc
        if n_rows == 0:
            raise fail(display, "has no data rows; an svmlight file holds one row a line")
        if largest < 0 and opts.model_features is None:
            raise fail(display, "has no feature values in any row")
        first = 0 if smallest == 0 else 1
        names = [f"x{i}" for i in range(first, largest + 1)]
        if opts.model_features is not None:
            # Matched by name: the model's columns, whatever this file's largest index.
            width = max([largest, *(_index_of(n) for n in opts.model_features)]) + 1
            names = [f"x{i}" for i in range(first, width)]
        columns = _npz_columns(names, len(names), opts, display)
        chosen = names if columns is None else [names[j] for j in columns]
        # File index -> column of X; -1 for an index left out (--drop), -2 for one
        # the model does not have.
        self._column_of = np.full(len(names) + first, -1 if opts.model_features is None else -2)
        self._column_of[:first] = -2
        for j, name in enumerate(chosen):
            self._column_of[_index_of(name)] = j
        self._width = largest + 1
        self.plan = ColumnPlan(
            target=TARGET,
            features=chosen,
            keep=[],
            note=None,
            kinds={n: "numeric" for n in chosen},
        )
        self.label_spellings = {}
        if opts.keep:
            raise fail(display, "an svmlight file has no columns to keep; leave out --keep")

    def chunks(self, chunk_size: int | None, resolve: bool) -> Iterator[RawChunk]:
        display = self.source.display
        step = chunk_size or (1 << 62)
        offset = 0
        d = len(self.plan.features)
        try:
            rows = _rows(self.source)
            while block := list(itertools.islice(rows, step)):
                labels, row, index, value = parse_block(block, display)
                columns = np.full(index.shape, -2)
                inside = index < len(self._column_of)
                columns[inside] = self._column_of[index[inside]]
                if (columns == -2).any():
                    at = int(np.argmax(columns == -2))
                    raise fail(
                        display,
                        f"line {block[int(row[at])][0]}: feature index {int(index[at])} is not "
                        f"one of the model's columns ({self.plan.features[0]} to "
                        f"{self.plan.features[-1]})",
                    )
                used = columns >= 0
                X = np.zeros((len(block), d if self.read_features else 0), order="F")
                if self.read_features:
                    X[row[used], columns[used]] = value[used]
                y = typed_labels(labels, display, TARGET, offset) if self.read_target else None
                yield RawChunk(X=X, unread={}, y=y, row_offset=offset)
                offset += len(block)
        except OSError as exc:
            raise error_from_exception(exc, display) from exc


def _index_of(name: str) -> int:
    """The file index of column ``x{i}`` (-1 for a name of another form)."""
    return int(name[1:]) if name.startswith("x") and name[1:].isdigit() else -1
