"""What the first rows of a column look like: the facts the column plan decides on.

:func:`profile_columns` looks at the planning sample (the first
:data:`SAMPLE_ROWS` data rows of the file, whatever the chunk size, so a
chunked fit plans its columns exactly as a fit in one chunk does) and
tells, per column, whether its cells are numbers, whole numbers,
booleans, dates or times, or text, how many are present and distinct, and
whether it looks like a row index.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "SAMPLE_ROWS",
    "NUMBER",
    "INTEGER",
    "BOOLEAN",
    "TEXT",
    "DATETIME",
    "CATEGORY",
    "EMPTY",
    "ColumnProfile",
    "profile_columns",
    "index_name",
]

#: Rows of the planning sample.
SAMPLE_ROWS = 10_000
#: Cells that are not numbers a profile keeps, with their rows, for messages.
SHOWN_TEXTS = 5
#: Words of the default missing-value list that tables also write as a
#: category (a survey's answer "None", a house's "None" of a feature): a text
#: column holding one is told that it is read as missing.
CATEGORY_LIKE_MISSING = ("None",)
#: Rows a column must have to be taken for a row number because it counts them.
COUNTING_ROWS = 10

#: Value types of a column: numbers with a fractional part somewhere ...
NUMBER = "number"
#: ... whole numbers only ...
INTEGER = "integer"
#: ... ``True``/``False`` (any of the usual spellings, or a boolean type) ...
BOOLEAN = "boolean"
#: ... text that is not all numbers ...
TEXT = "text"
#: ... dates, times or timestamps ...
DATETIME = "datetime"
#: ... a categorical type (Parquet, pandas) ...
CATEGORY = "category"
#: ... or no cell present at all.
EMPTY = "empty"

TRUE_TEXTS = ("True", "TRUE", "true")
FALSE_TEXTS = ("False", "FALSE", "false")

_INDEX_NAMES = re.compile(r"^(rownames|row\.names|unnamed: *\d+)$", re.IGNORECASE)
_DATE_LIKE = re.compile(r"^\d{1,4}[-/.:]\d{1,2}([-/.:]\d{1,4})?([ T]\d{1,2}:\d{2}.*)?$")


@dataclass(frozen=True)
class ColumnProfile:
    """One column of the planning sample.

    Attributes
    ----------
    name : str
    value_type : str
        One of :data:`NUMBER`, :data:`INTEGER`, :data:`BOOLEAN`,
        :data:`TEXT`, :data:`DATETIME`, :data:`CATEGORY`, :data:`EMPTY`.
    n_rows : int
        Rows in the sample.
    n_present : int
        Cells that are not missing.
    n_distinct : int
        Distinct present values.
    example : str or None
        A present value that is not a number (the first one), for messages.
    example_row : int or None
        Data row (from 1, the first after the header) of ``example`` in the sample.
    counting : bool
        Whole numbers equal to 0, 1, ..., n - 1 or 1, 2, ..., n, row after
        row, in a sample of at least :data:`COUNTING_ROWS` rows.
    low, high : float or None
        The least and greatest finite present value of a numeric column.
    n_numbers, n_marks : int
        Of a text column: present cells that are numbers, and distinct
        present values that are not (one short mark such as ``?`` among
        numbers is a missing-value marker, most likely).
    texts : tuple of (int, str)
        Of a text column: its first :data:`SHOWN_TEXTS` present cells that
        are not numbers, as (data row from 1, text stripped of spaces).
    category_like_missing : tuple of (str, int)
        Of a text column: the words of :data:`CATEGORY_LIKE_MISSING` among
        its cells read as missing, with their counts.
    """

    name: str
    value_type: str
    n_rows: int
    n_present: int
    n_distinct: int
    example: str | None = None
    counting: bool = False
    example_row: int | None = None
    low: float | None = None
    high: float | None = None
    n_numbers: int = 0
    n_marks: int = 0
    texts: tuple[tuple[int, str], ...] = ()
    category_like_missing: tuple[tuple[str, int], ...] = ()

    @property
    def is_number(self) -> bool:
        return self.value_type in (NUMBER, INTEGER, EMPTY)


def index_name(name: str) -> bool:
    """Names that data exports give a row-index column (``rownames``, ``Unnamed: 0``)."""
    return bool(_INDEX_NAMES.match(name.strip()))


def profile_columns(frame, names, na_values) -> dict[str, ColumnProfile]:
    """Profiles of the columns ``names`` of a polars frame (the planning sample).

    Text cells are stripped of surrounding spaces; those in ``na_values``
    are missing.
    """
    schema = frame.schema
    numeric = [name for name in names if schema[name].is_numeric()]
    profiles = _numeric_profiles(frame, numeric, schema)
    return {
        name: profiles[name] if name in profiles else _profile(name, frame[name], na_values)
        for name in names
    }


#: Up to this many number columns their distinct values are counted by polars;
#: beyond, the planning of a query with an expression per column outweighs
#: the count (20,000 columns: 0.4 s), and NumPy sorts the sample's columns.
_HASHED_COLUMNS = 1000


def _present_and_distinct(values):
    """Per column of ``values`` (float64, NaN for a missing cell; shape (n, d)):
    cells present and distinct present values, as two lists of int."""
    import numpy as np

    ordered = np.sort(values, axis=0)  # NaN last
    present = ordered.shape[0] - np.isnan(ordered).sum(axis=0)
    # -0.0 == 0.0 and inf == inf, as polars counts them; changes into the NaN
    # run at the end are not counted.
    change = ordered[1:] != ordered[:-1]
    inside = np.arange(1, ordered.shape[0])[:, None] < present
    distinct = np.where(present > 0, 1 + (change & inside).sum(axis=0), 0)
    return present.tolist(), distinct.tolist()


def _numeric_profiles(frame, names, schema) -> dict[str, ColumnProfile]:
    """The profiles of columns of a numeric type, all at once.

    The same as :func:`_numbers` column by column (present cells: neither
    null nor NaN), in one polars query and one NumPy pass: a wide file's
    planning would otherwise spend most of its time in per-column calls.
    """
    import numpy as np
    import polars as pl

    if not names:
        return {}

    n = frame.height
    values = frame.select(pl.col(names).cast(pl.Float64)).to_numpy(order="fortran")
    if len(names) <= _HASHED_COLUMNS:
        # polars counts distinct values by hashing, faster than a sort here.
        floats = [name for name in names if schema[name].is_float()]
        others = [name for name in names if not schema[name].is_float()]
        present = [
            *([pl.col(floats).drop_nulls().drop_nans()] if floats else []),
            *([pl.col(others).drop_nulls()] if others else []),
        ]
        facts = frame.select(
            *(p.len().name.suffix("\x00n") for p in present),
            *(p.n_unique().name.suffix("\x00u") for p in present),
        ).row(0, named=True)
        n_present = [facts[f"{name}\x00n"] for name in names]
        n_distinct = [facts[f"{name}\x00u"] for name in names]
    else:
        n_present, n_distinct = _present_and_distinct(values)
    finite = np.isfinite(values)
    integral = ((values == np.round(values)) | ~finite).all(axis=0)
    any_finite = finite.any(axis=0)
    low = np.where(finite, values, np.inf).min(axis=0, initial=np.inf)
    high = np.where(finite, values, -np.inf).max(axis=0, initial=-np.inf)
    steps = np.arange(n, dtype=np.float64)[:, None]
    counts_up = (values == steps).all(axis=0) | (values == steps + 1).all(axis=0)
    out = {}
    for i, name in enumerate(names):
        # Few rows count up by chance (a toy table's 1, 2, 3); from COUNTING_ROWS on
        # a feature that does so is all but surely a row number.
        counting = bool(integral[i] and n_present[i] == n and n >= COUNTING_ROWS and counts_up[i])
        out[name] = ColumnProfile(
            name,
            INTEGER if integral[i] else NUMBER,
            n,
            int(n_present[i]),
            int(n_distinct[i]),
            None,
            counting,
            low=float(low[i]) if any_finite[i] else None,
            high=float(high[i]) if any_finite[i] else None,
        )
    return out


def _profile(name: str, column, na_values) -> ColumnProfile:
    import polars as pl

    n = len(column)
    dtype = column.dtype
    if dtype == pl.Boolean:
        return _simple(name, column, BOOLEAN)
    if dtype in (pl.Categorical, pl.Enum):
        return _simple(name, column, CATEGORY)
    if dtype.is_temporal():
        return _simple(name, column, DATETIME)
    if dtype == pl.Null:
        return ColumnProfile(name, EMPTY, n, 0, 0)
    if dtype != pl.String:
        return _simple(name, column, TEXT)
    text = column.str.strip_chars()
    present = text.filter(text.is_not_null() & ~text.is_in(list(na_values)))
    if present.len() == 0:
        return ColumnProfile(name, EMPTY, n, 0, 0)
    numbers = present.cast(pl.Float64, strict=False)
    if numbers.null_count() == 0:
        return _numbers(name, numbers, n, text.cast(pl.Float64, strict=False))
    distinct = present.n_unique()
    example = str(present.filter(numbers.is_null())[0])
    wordy = text.is_not_null() & ~text.is_in(list(na_values))
    wordy &= text.cast(pl.Float64, strict=False).is_null()
    row = int(wordy.arg_true()[0]) + 1
    if present.is_in([*TRUE_TEXTS, *FALSE_TEXTS]).all():
        return ColumnProfile(name, BOOLEAN, n, present.len(), distinct, example, example_row=row)
    if _dates(present):
        return ColumnProfile(name, DATETIME, n, present.len(), distinct, example, example_row=row)
    words = present.filter(numbers.is_null())
    at = wordy.arg_true().head(SHOWN_TEXTS)
    read_missing = [w for w in CATEGORY_LIKE_MISSING if w in na_values]
    counted = (
        text.filter(text.is_in(read_missing)).value_counts(sort=True).rows() if read_missing else []
    )
    texts = tuple(zip((at + 1).to_list(), text.gather(at).to_list()))
    return ColumnProfile(
        name,
        TEXT,
        n,
        present.len(),
        distinct,
        example,
        example_row=row,
        n_numbers=present.len() - words.len(),
        n_marks=words.n_unique(),
        texts=texts,
        category_like_missing=tuple((str(w), int(n)) for w, n in counted),
    )


def _simple(name, column, value_type) -> ColumnProfile:
    present = column.drop_nulls()
    example = str(present[0]) if present.len() else None
    return ColumnProfile(name, value_type, len(column), present.len(), present.n_unique(), example)


def _numbers(name, present, n, whole) -> ColumnProfile:
    """A column whose present cells are all numbers (``whole``: every cell, nulls included)."""
    import numpy as np
    import polars as pl

    values = present.cast(pl.Float64).to_numpy()
    finite = values[np.isfinite(values)]
    integral = bool(np.all(finite == np.round(finite)))
    counting = False
    # Few rows count up by chance (a toy table's 1, 2, 3); from COUNTING_ROWS on
    # a feature that does so is all but surely a row number.
    if integral and present.len() == n and n >= COUNTING_ROWS:
        all_values = whole.cast(pl.Float64).to_numpy()
        steps = np.arange(n, dtype=np.float64)
        counting = bool(np.array_equal(all_values, steps) or np.array_equal(all_values, steps + 1))
    return ColumnProfile(
        name,
        INTEGER if integral else NUMBER,
        n,
        present.len(),
        present.n_unique(),
        None,
        counting,
        low=float(finite.min()) if finite.size else None,
        high=float(finite.max()) if finite.size else None,
    )


#: Whole numbers below this are category codes whatever their spread.
SMALL_CODES = 64


def looks_like_codes(profile: ColumnProfile) -> bool:
    """Whether a column of whole numbers holds category codes 0..K-1.

    Codes are never negative, and either small (below :data:`SMALL_CODES`,
    as pixel intensities or Likert scores are) or dense (the largest below
    twice the number of distinct values). Anything else, years or ZIP
    codes, is a label: as codes, 2007, 2008 and 2009 would make 2,010
    categories.
    """
    if profile.low is None or profile.high is None:
        return True  # nothing to judge by: read as numbers, as any other column
    if profile.low < 0:
        return False
    return profile.high < max(SMALL_CODES, 2 * profile.n_distinct)


def _dates(present) -> bool:
    """Every present cell a date, time or timestamp (ISO or the usual numeric spellings)."""
    first = str(present[0])
    if not _DATE_LIKE.match(first):
        return False
    for parse in ("to_datetime", "to_date", "to_time"):
        try:
            parsed = getattr(present.str, parse)(strict=False)
        except Exception:  # a format polars cannot infer is not a date to it either
            continue
        if parsed.null_count() == 0:
            return True
    return False
