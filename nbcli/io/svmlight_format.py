"""svmlight / libsvm files (``.svm``, ``.svmlight``, ``.libsvm``, gzip or not):
``label index:value index:value ... # comment``, one row a line.

The tokens of a block of lines are split and converted by polars (no loop
in Python over the values). Feature ``i`` of the file is the column
``x{i}``: a file whose indices include 0 is zero-based, any other
one-based, and a model file stores the names, so a file scored later maps
its indices to the model's columns whatever its own smallest index. Indices
absent from a row are 0, and so is a model column that no row of a scored
file uses. A first pass over the file finds the largest
index (the number of columns); chunks are then handed out as dense blocks
of ``chunk_size`` rows. ``qid:`` tokens (ranking data) and multi-label
rows (``1,2``) are refused.
"""

from __future__ import annotations

import io
import itertools
from collections.abc import Iterator
from typing import NoReturn

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


# Every token on a line of its own: polars' CSV parser then reads them all
# (in parallel) as one float64 column; the empty lines of repeated spaces
# are nulls, dropped.
_ONE_A_LINE = str.maketrans({":": "\n", " ": "\n", "\t": "\n"})


def _numbers(text: str) -> np.ndarray | None:
    """The numbers of ``text`` (one a line), or None if a token is not one."""
    import polars as pl

    try:
        column = pl.read_csv(
            io.BytesIO(text.encode("utf-8")), has_header=False, schema={"v": pl.Float64}
        ).get_column("v")
    except Exception:  # a token that is not a number: the slow path names it
        return None
    return column.drop_nulls().to_numpy()


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
    texts = [t for _, t in lines]
    # One split of the whole block: every row is its label, then an index and
    # a value per colon; NumPy converts the tokens in one call.
    entries = np.fromiter((t.count(":") for t in texts), np.int64, len(texts))
    width = 1 + 2 * entries
    numbers = _numbers("\n".join(texts).translate(_ONE_A_LINE))
    if numbers is None or len(numbers) != int(width.sum()):
        _first_bad_line(lines, display)
    starts = np.concatenate(([0], np.cumsum(width)[:-1]))
    labels = numbers[starts]
    rest = np.ones(len(numbers), dtype=bool)
    rest[starts] = False
    pairs = numbers[rest]
    index, values = pairs[0::2], pairs[1::2]
    if not (np.all(index >= 0) and np.all(index == np.floor(index))):
        _first_bad_line(lines, display)
    rows = np.repeat(np.arange(len(texts), dtype=np.int64), entries)
    return labels, rows, index.astype(np.int64), values


def _first_bad_line(lines: list[tuple[int, str]], display: str) -> NoReturn:
    """Raise the error for the first malformed row of a block (the slow path)."""
    for number, text in lines:
        label, *pairs = text.split()
        try:
            float(label)
        except ValueError:
            hint = (
                "multi-label rows are not read; give one class per row"
                if "," in label
                else "each row starts with its class label, a number"
            )
            raise fail(display, f"line {number}: label {label!r} is not a number; {hint}") from None
        for token in pairs:
            if token.lower().startswith("qid:"):
                raise fail(
                    display,
                    f"line {number}: has a query id ({token!r}); ranking data (qid) is not "
                    "read, remove the qid tokens",
                )
            index, _, value = token.partition(":")
            try:
                good = index.isdigit() and value != "" and ":" not in value
                float(value)
            except ValueError:
                good = False
            if not good:
                raise fail(
                    display,
                    f"line {number}: {token!r} is not index:value (a whole index from 0 and a number)",
                )
    raise fail(display, "holds a row that is not label index:value ...")  # not reached


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
            # Matched by name: the model's columns, whatever this file's smallest
            # and largest index. An index no row uses is a column of zeros by the
            # format's definition, so a model column absent from the file is 0.
            model_indices = [i for i in map(_index_of, opts.model_features) if i >= 0]
            if model_indices:
                first = min(first, *model_indices)
            width = max([largest, *model_indices]) + 1
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
