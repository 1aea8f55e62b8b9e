"""Category columns: text values to integer codes and back.

A :class:`Categories` table gives every distinct value of a categorical
column a code ``0, 1, 2, ...`` in the order the values are first seen in
the file (surrounding spaces stripped), so the codes of a streamed file do
not depend on how it is cut into chunks; a column that declares its
categories (a Parquet ``Enum`` column) has them first, in declared order. At fit the table grows as new
values come in; at predict it is the model file's list, fixed: a value not
in it is an unseen category, refused (naming column, value and row) or,
with ``unseen="ignore"``, given the code ``len(values)``, which no training
row had, so the model leaves it out of the product as it leaves out a
missing cell. Codes are float64 with NaN for a missing cell, so that they
sit in the feature matrix beside numeric columns.
"""

from __future__ import annotations

import shlex
import threading
import unicodedata

import numpy as np

from nbcli.io.cells import nfc, note_spellings
from nbcli.io.messages import fail, missing_mark

__all__ = ["Categories"]


class Categories:
    """The categories of one column, in first-seen order.

    Parameters
    ----------
    name : str
        The column, for messages.
    values : list of str, optional
        Known categories (from a model file); with ``frozen`` no others are added.
    frozen : bool
        True at predict time.
    unseen : {"error", "ignore"}
        What a value outside a frozen table gets.

    Attributes
    ----------
    values : list of str
    n_unseen : int
        Cells given the unseen code so far.
    """

    def __init__(self, name: str, values=None, *, frozen: bool = False, unseen: str = "error"):
        self.name = name
        self.values: list[str] = [str(v) for v in (values or [])]
        # Values are compared in Unicode normal form C (see nbcli.io.cells.nfc);
        # a stored table written before that may hold another form.
        self._index: dict[str, int] = {}
        for i, v in enumerate(nfc(self.values)):
            self._index.setdefault(v, i)
        self.frozen = frozen
        self.unseen = unseen
        self.n_unseen = 0
        #: At fit, the non-ASCII spellings met, by their normal form (see
        #: :func:`nbcli.io.cells.note_spellings`).
        self.spellings: dict[str, set[str]] = {}
        # Chunks are read one at a time, but the reader thread and the caller
        # may both look at the table.
        self._lock = threading.Lock()

    def encode(
        self, column, na_values, display: str, row_offset: int, refusals: list | None = None
    ) -> np.ndarray:
        """Codes of a polars column (any type; cast to text), NaN where missing.

        Parameters
        ----------
        column : polars.Series of length n_rows
        na_values : sequence of str
            Texts that mean a missing cell (compared after stripping spaces).
        display : str
            The file, for messages.
        row_offset : int
            Data rows of the file before this column's first cell.
        refusals : list, optional
            Where to append ``(row, error)`` for an unseen value instead of
            raising it (``row`` 1-based in the file), so that a caller
            reading several columns can refuse the earliest row of all.

        Returns
        -------
        ndarray of shape (n_rows,), float64

        Raises
        ------
        NbcliError
            For a value outside a frozen table when ``unseen="error"``.
        """
        import polars as pl

        if not self.frozen:
            note_spellings(self.spellings, _as_text(column))
        declared = []
        if not self.frozen and isinstance(column.dtype, pl.Enum):
            # A column that declares its categories (a Parquet Enum) keeps
            # their declared order, whatever order the rows show them in.
            declared = [
                unicodedata.normalize("NFC", v.strip())
                for v in column.dtype.categories.to_list()
                if v.strip() and v.strip() not in na_values
            ]
        # Each distinct text is stripped, normalised and looked up once; the
        # rows take the result through their text's code in an enumeration
        # of the distinct texts (in the order they are first met, which is
        # then the order of first meeting each stripped value).
        raw = _as_text(column)
        distinct = raw.drop_nulls().unique(maintain_order=True)
        cleaned = distinct.str.strip_chars().str.normalize("NFC")
        values = [None if v in na_values else v for v in cleaned.to_list()]
        rows = raw.cast(pl.Enum(distinct.to_list())).to_physical()
        rows = rows.fill_null(len(values)).to_numpy()
        with self._lock:
            if not self.frozen:
                for value in [*declared, *(v for v in values if v is not None)]:
                    if value not in self._index:
                        self._index[value] = len(self.values)
                        self.values.append(value)
            known = list(self._index)
            outside = len(self.values)
            table = np.array(
                [np.nan if v is None else self._index.get(v, outside) for v in values] + [np.nan],
                dtype=np.float64,
            )
            out = table[rows]
            if np.any(table == outside):
                unseen = np.flatnonzero(out == outside)
                if self.unseen != "ignore":
                    i = int(unseen[0])
                    value = values[int(rows[i])]
                    mark = missing_mark(value)
                    na = (
                        ""
                        if mark is None
                        else f", or --na-values {shlex.quote(mark)} if it marks a missing value"
                    )
                    error = fail(
                        display,
                        f"column '{self.name}' has the category {value!r} at row "
                        f"{row_offset + i + 1}, which the model never saw in training "
                        f"(it knows {_some(known)}); fix the value, or pass --unseen "
                        f"ignore to leave unseen categories out of the prediction{na}",
                    )
                    if refusals is None:
                        raise error
                    refusals.append((row_offset + i + 1, error))
                    return out
                self.n_unseen += int(unseen.size)
        return out


def _as_text(column):
    import polars as pl

    if column.dtype == pl.String:
        return column
    if column.dtype == pl.Boolean:
        return column.cast(pl.String).str.replace("true", "True").str.replace("false", "False")
    return column.cast(pl.String)


def _some(values: list[str], limit: int = 8) -> str:
    shown = ", ".join(repr(v) for v in values[:limit])
    return shown + (f" and {len(values) - limit} more" if len(values) > limit else "")
