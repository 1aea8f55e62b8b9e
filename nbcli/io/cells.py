"""Cell conversion: text and typed columns to float64 features and class labels,
and the one check of feature cells after reading.

Feature cells that are missing (empty, ``NA``, ``NaN``, ``null`` and the
other spellings of :data:`NA_STRINGS`) become NaN, and cells that are not
numbers are recorded (first one per column) rather than raised, so that
:func:`check_cells`, called once per chunk after reading, words the first
bad cell of the chunk, whatever its kind, exactly as before. That check is
where missing-value policies plug in.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from nbcli.errors import NbcliError
from nbcli.io.messages import fail, missing_label, missing_mark, punctuation_mark

__all__ = [
    "NA_STRINGS",
    "resolve_labels",
    "label_codes",
    "as_text",
    "same_spelling",
    "text_array",
    "text_labels",
    "typed_labels",
    "text_to_float",
    "column_to_float",
    "check_cells",
    "features_of",
    "missing_labels",
    "without_na_labels",
    "nfc",
    "nfc_array",
    "spelling_merges",
    "note_spellings",
    "merged_spellings",
    "unread_counts",
    "utf8",
]

#: Cell texts read as a missing value in feature columns (pandas' default
#: ``na_values`` list, which nbcli has always used); the target uses a
#: narrower one (only the empty cell), so a class called ``NA`` or ``None``
#: stays a class.
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


def na_texts(na_values: tuple[str, ...] | None) -> tuple[str, ...]:
    """The cell texts read as a missing feature cell: :data:`NA_STRINGS`, or the
    empty cell and ``na_values`` (``--na-values``) when they are given."""
    if na_values is None:
        return NA_STRINGS
    return tuple(dict.fromkeys(("", *na_values)))


def missing_spelling_note(labels, na_values=None) -> str | None:
    """A note for labels written as a missing value in feature cells (``NA``,
    ``None``, ``NaN``..., a mark such as ``?``, or one of ``na_values``, the
    command's ``--na-values``), which nbcli keeps as classes; None when there
    are none."""
    marks = set(na_values or ())
    spelled = [
        text
        for text in map(str, labels)
        if text != "" and (text in NA_STRINGS or text in marks or punctuation_mark(text.strip()))
    ]
    if not spelled:
        return None
    shown = ", ".join(repr(s) for s in spelled[:5])
    one = len(spelled) == 1
    return (
        f"the label{'' if one else 's'} {shown} {'is' if one else 'are'} read as "
        f"{'a class' if one else 'classes'}, as written: a missing label is an empty "
        "target cell (fit skips such rows; evaluate, compare and calibrate refuse them); "
        "blank those cells if they mean no label, or pass "
        f"--na-labels {shlex.quote(spelled[0])} (fit, cv, tune, split)"
    )


def without_na_labels(column, na_labels):
    """A polars column of labels with the texts ``na_labels`` (spaces stripped)
    as nulls, that is missing labels; the column itself when there are none
    or it is not text (``--na-labels``)."""
    import polars as pl

    if not na_labels or column.dtype != pl.String:
        return column
    na = column.str.strip_chars().is_in(list(na_labels)).fill_null(False)
    if not na.any():
        return column
    return pl.select(pl.when(na).then(None).otherwise(column).alias(column.name)).to_series()


#: Columns and their first unreadable cell: column index -> (0-based row, text).
Unread = dict[int, tuple[int, str]]


# ---------------------------------------------------------------------------
# Labels


def resolve_labels(labels: np.ndarray) -> np.ndarray:
    """Give labels read as text their natural type.

    Parameters
    ----------
    labels : ndarray of shape (n_samples,)
        Labels as strings (numpy unicode or object array of ``str``).

    Returns
    -------
    ndarray of shape (n_samples,)
        int64 when every label is the exact decimal spelling of an integer
        that fits in int64 (``str(int(s)) == s``, so ``"01"``, ``"+1"`` and
        ``"1.0"`` keep the whole column as strings); otherwise an object
        array of ``str``, each distinct label one shared string, so that its
        size is one pointer a row whatever the longest label (a fixed-width
        unicode array would take the longest label's width for every row).
        Arrays that already hold numbers or booleans are returned as they are.
    """
    arr = np.asarray(labels)
    if arr.dtype.kind not in "OUS":
        return arr
    if arr.dtype.kind == "O" and not all(isinstance(v, str) for v in arr.tolist()):
        return arr
    if arr.dtype.kind == "S":
        arr = np.char.decode(arr, "utf-8", errors="replace")
    if arr.size == 0:
        return np.empty(0, dtype=object)
    # Only the few distinct labels are parsed.
    uniques, codes = label_codes(arr)
    spelled = [str(u) for u in uniques.tolist()]
    as_int = _integers(spelled)
    if as_int is not None:
        return as_int[codes]
    return text_array(spelled)[codes]


def text_array(texts) -> np.ndarray:
    """``texts`` (str) as a 1-D object array, one reference per entry.

    ``np.asarray(texts, dtype=str)`` would be fixed-width: as many bytes per
    entry as four times the longest text.
    """
    out = np.empty(len(texts), dtype=object)
    out[:] = list(texts)
    return out


# Text labels of at most this many rows are coded by sorting (NumPy) while
# pandas is not loaded: sooner than its import (a third of a second, most of
# a small command's time). More are coded by hashing (pandas, linear time).
_SORTED_LABELS = 20_000


def label_codes(values) -> tuple[np.ndarray, np.ndarray]:
    """The distinct labels in ascending order and the code of every row.

    Parameters
    ----------
    values : ndarray of shape (n_samples,)
        Labels of one type (numbers, booleans, or text as an object or
        unicode array).

    Returns
    -------
    uniques : ndarray of shape (n_distinct,)
        Text as an object array (see :func:`text_array`), other labels with
        their dtype.
    codes : ndarray of intp, shape (n_samples,)
        ``uniques[codes]`` equals ``values``.

    Text is coded by hashing (``pandas.factorize``, linear time), so memory
    follows the number of rows and the size of the distinct labels, never
    the longest label times the rows.
    """
    from nbcli.distinct import unique_inverse

    arr = np.asarray(values)
    if arr.dtype.kind not in "OU":
        uniques, codes = unique_inverse(arr)
        return uniques, np.asarray(codes, dtype=np.intp).reshape(-1)
    if arr.dtype.kind == "U":
        # The distinct values first (few), so that no Python string is made per row.
        uniques_u, codes = np.unique(arr, return_inverse=True)
        return text_array(uniques_u.tolist()), np.asarray(codes, dtype=np.intp).reshape(-1)
    if arr.size <= _SORTED_LABELS and "pandas" not in sys.modules:
        # The order is Python's, as pandas sorts text.
        flat = arr.reshape(-1)
        if set(map(type, flat.tolist())) == {str}:
            uniques, codes = unique_inverse(flat)
            return text_array(uniques.tolist()), np.asarray(codes, dtype=np.intp)
    import pandas as pd

    codes, uniques = pd.factorize(arr, sort=True, use_na_sentinel=False)
    return text_array(list(uniques)), np.asarray(codes, dtype=np.intp)


def as_text(values) -> np.ndarray:
    """``values`` spelled as ``str``, as an object array that shares one string
    per distinct value (what ``values.astype(str)`` gives, without the fixed
    width of the longest)."""
    import pandas as pd

    arr = np.asarray(values)
    if arr.dtype.kind == "O":
        # Objects of any type (None too): their spellings, then those coded.
        codes, uniques = pd.factorize(arr, use_na_sentinel=False)
        spelled, recode = label_codes(text_array([str(u) for u in uniques.tolist()]))
        return spelled[recode[codes]]
    uniques, codes = label_codes(arr)
    return text_array([str(u) for u in uniques.tolist()])[codes]


def aligned_labels(arrays: Sequence) -> list:
    """The labels of several parts, every one spelled as text when their kinds
    differ (a Parquet part's integers beside a CSV part's text), so that ``1``
    and ``"1"`` are one class, as a CSV of both parts would read them.

    Parameters
    ----------
    arrays : sequence of array-like
        One array of labels (or of distinct labels) per part.

    Returns
    -------
    list of ndarray
        ``arrays`` as given when they share a kind (text, numbers or
        booleans), else each as :func:`as_text` spells it, in the same order.
    """

    def kind(values) -> str:
        k = np.asarray(values).dtype.kind
        return "text" if k in "USO" else ("bool" if k == "b" else "number")

    arrays = [np.asarray(a) for a in arrays]
    if len({kind(a) for a in arrays if a.size}) <= 1:
        return arrays
    return [as_text(a) if a.size else a.astype(object) for a in arrays]


def same_spelling(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Whether ``str(a[i]) == str(b[i])`` for every row, as a bool array.

    Compared through the codes of the distinct labels of each side, so that
    no text is made per row (labels read as text against typed ones, say).
    """
    ids: dict[str, int] = {}

    def coded(values):
        uniques, codes = label_codes(values)
        table = np.asarray([ids.setdefault(str(u), len(ids)) for u in uniques.tolist()], np.intp)
        return table[codes] if codes.size else codes

    return coded(np.asarray(a)) == coded(np.asarray(b))


def _integers(texts: list[str]) -> np.ndarray | None:
    values = []
    for text in texts:
        try:
            value = int(text)
        except ValueError:
            return None
        if str(value) != text or not -(2**63) <= value < 2**63:
            return None
        values.append(value)
    return np.asarray(values, dtype=np.int64)


def text_labels(
    column, display: str, name: str, row_offset: int, resolve: bool, allow_missing: bool = False
) -> np.ndarray:
    """Labels from a polars String column (CSV): a numpy unicode array, or
    with ``resolve`` typed by :func:`resolve_labels`.

    Raises NbcliError for a missing label (an empty cell), naming its row,
    unless ``allow_missing``: then a missing label is ``""`` (the caller
    skips the row, see :func:`missing_labels`).
    """
    return text_label_coding(column, display, name, row_offset, resolve, allow_missing).labels


def text_label_coding(
    column, display: str, name: str, row_offset: int, resolve: bool, allow_missing: bool = False
):
    """:func:`text_labels` with their :class:`~nbcli.distinct.LabelCoding`:
    the labels are coded here once, for everything that needs their codes."""
    if allow_missing:
        column = column.fill_null("")
    else:
        missing = column.is_null() | (column == "")
        if missing.any():
            row = int(missing.arg_true()[0])
            raise missing_label(display, name, row_offset + row + 1)
    return _text_label_coding(column, resolve)[0]


def _text_label_coding(column, resolve: bool):
    """``(coding, uniques, codes)``: the :class:`~nbcli.distinct.LabelCoding` of
    a String column without nulls, its distinct texts (a sorted polars
    Series) and each row's position among them (unsigned integers)."""
    import polars as pl

    from nbcli.distinct import LabelCoding

    # The few distinct labels are converted once, and each label found among
    # them as an enumeration's code (a hash lookup; a binary search compares
    # texts, and a rank of all labels would sort them all).
    uniques = column.unique().sort()
    codes = column.cast(pl.Enum(uniques.to_list())).to_physical().to_numpy()
    texts = text_array(nfc(uniques.to_list()))
    table = resolve_labels(texts) if resolve else texts
    # Normal form C and typed labels may make two texts one or change their
    # order: the few distinct labels are coded again, and the rows through them.
    distinct, recode = label_codes(table)
    return LabelCoding(table[codes], distinct, recode[codes]), uniques, codes


def text_label_coding_and_missing(column):
    """``(coding, missing)``: :func:`text_label_coding` of a String column of
    labels that may be missing (``allow_missing``, not resolved), and
    :func:`missing_labels` of the column, told from the distinct texts
    rather than row by row."""
    coding, uniques, codes = _text_label_coding(column.fill_null(""), False)
    blank = (uniques.str.strip_chars() == "").to_numpy()
    return coding, blank[codes]


def nfc(texts: list[str]) -> list[str]:
    """``texts`` in Unicode normal form C: one spelling for what reads the
    same (``"é"`` typed as one code point or as ``e`` and a combining accent),
    so the two spellings of a label or category are one class or category."""
    import unicodedata

    return [
        t if unicodedata.is_normalized("NFC", t) else unicodedata.normalize("NFC", t) for t in texts
    ]


def nfc_array(values: np.ndarray) -> np.ndarray:
    """Text labels (a unicode array, or an object array of str) in normal form
    C (see :func:`nfc`), each distinct text normalised once: ``values``
    itself when all are already, else an object array (:func:`text_array`)."""
    if values.size == 0 or values.dtype.kind not in "OU":
        return values
    if values.dtype.kind == "O" and not all(isinstance(v, str) for v in values.tolist()):
        return values
    uniques, codes = label_codes(values)
    texts = [str(u) for u in uniques.tolist()]
    normal = nfc(texts)
    if normal == texts:
        return values
    return text_array(normal)[codes]


def note_spellings(groups: dict, column) -> None:
    """Add the distinct non-ASCII texts of a polars String column (spaces
    stripped) to ``groups`` (``{NFC text: {spellings}}``), for
    :func:`merged_spellings` once the file is read. ASCII text is its own
    normal form, so only the few other texts are looked at."""
    import polars as pl

    if column.dtype != pl.String:
        return
    # The distinct texts first: a column holds few, and each is looked at once.
    text = column.drop_nulls().unique().str.strip_chars()
    wide = text.filter(text.str.len_bytes() != text.str.len_chars()).unique().to_list()
    for raw, normal in zip(wide, nfc(wide)):
        groups.setdefault(normal, set()).add(raw)


def merged_spellings(groups: dict) -> list[tuple[str, ...]]:
    """The groups of :func:`note_spellings` with more than one spelling, sorted."""
    return sorted(tuple(sorted(g)) for g in groups.values() if len(g) > 1)


def spelling_merges(column) -> list[tuple[str, ...]]:
    """Groups of distinct texts of a polars String column (spaces stripped)
    that are one text in normal form C, each sorted; [] when none."""
    import polars as pl

    if column.dtype != pl.String:
        return []
    texts = column.drop_nulls().str.strip_chars().unique().to_list()
    groups: dict[str, set[str]] = {}
    for text, normal in zip(texts, nfc(texts)):
        groups.setdefault(normal, set()).add(text)
    return [tuple(sorted(g)) for g in groups.values() if len(g) > 1]


def typed_labels(values: np.ndarray, display: str, name: str, row_offset: int) -> np.ndarray:
    """Check labels stored with a type (NPZ, Parquet): keep ints, bools, strings;
    integral floats become int64; NaN and fractional floats are errors."""
    if values.ndim == 2 and values.shape[1] == 1:
        values = values[:, 0]
    kind = values.dtype.kind
    if kind in "biu":
        return values
    if kind == "U":
        # As CSV labels are: one shared string per distinct label, in NFC.
        return nfc_array(as_text(values))
    if kind == "S":
        return nfc_array(utf8(values, display, f"labels in {name}"))
    if kind == "O":
        missing = np.fromiter((_is_missing(v) for v in values.tolist()), bool, len(values))
        if missing.any():
            raise missing_label(display, name, row_offset + int(np.argmax(missing)) + 1)
        if values.size == 0:
            return np.empty(0, dtype=object)

        return nfc_array(as_text(values))
    if kind == "f":
        nan = np.isnan(values)
        if nan.any():
            raise missing_label(display, name, row_offset + int(np.argmax(nan)) + 1)
        fractional = ~np.isfinite(values) | (values != np.round(values))
        if fractional.any():
            row = int(np.argmax(fractional))
            raise fail(
                display,
                f"labels in {name} are continuous numbers (value "
                f"{values[row].item()!r} at row {row_offset + row + 1}); a classifier "
                "needs class labels, such as integers or names",
            )
        return values.astype(np.int64)
    raise fail(
        display,
        f"labels in {name} have the unsupported type {values.dtype}; "
        "store them as integers or strings",
    )


def missing_labels(values) -> np.ndarray:
    """Which labels are missing (None, NaN, an empty or blank text): a bool
    array of shape (n_rows,). ``values`` is a polars Series or a NumPy array."""
    if (
        hasattr(values, "to_numpy")
        and hasattr(values, "dtype")
        and not isinstance(values, np.ndarray)
    ):
        import polars as pl

        if values.dtype == pl.String:
            return (values.is_null() | (values.str.strip_chars() == "")).to_numpy()
        values = np.asarray(values.to_list(), dtype=object)
    values = np.asarray(values)
    if values.ndim == 2 and values.shape[1] == 1:
        values = values[:, 0]
    if values.dtype.kind == "f":
        return np.isnan(values)
    if values.dtype.kind in "OUS":
        return np.fromiter(
            (_is_missing(v) or (isinstance(v, str) and not v.strip()) for v in values.tolist()),
            bool,
            len(values),
        )
    return np.zeros(len(values), dtype=bool)


def _is_missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and value != value)


def utf8(values: np.ndarray, display: str, what: str) -> np.ndarray:
    """Bytes (NumPy ``S`` arrays) as text; NumPy's own conversion assumes ASCII."""
    try:
        return np.char.decode(values, "utf-8")
    except UnicodeDecodeError:
        raise fail(
            display, f"{what} are bytes that are not UTF-8 text; store them as strings"
        ) from None


# ---------------------------------------------------------------------------
# Features


def text_to_float(column, na_values=NA_STRINGS) -> tuple[np.ndarray, tuple[int, str] | None]:
    """A polars String column as float64 (correctly rounded; NaN where the
    cell is missing or not a number) and its first cell that is not a
    number, as (0-based row, text), if any.

    Numbers may carry surrounding spaces. ``True``/``False`` are text like
    any other word: a boolean column is categorical (``--model mixed``), not
    a number. Cells whose text (spaces stripped) is one of ``na_values``
    are missing, even when they spell a number (``--na-values -999``).
    """
    import polars as pl

    values = column.cast(pl.Float64, strict=False)
    out = values.to_numpy()
    custom = na_values is not NA_STRINGS
    if values.null_count() == column.null_count() and not custom:
        return out, None
    na = column.str.strip_chars().is_in(list(na_values)).fill_null(True)
    if custom and na.any():
        out = out.copy()
        out[na.to_numpy()] = np.nan
    unread = (values.is_null() & ~na).arg_true()
    if unread.len() == 0:
        return out, None
    if not out.flags.writeable:
        out = out.copy()
    rows = unread.to_numpy()
    texts = column.gather(unread)
    again = np.array(texts.str.strip_chars().cast(pl.Float64, strict=False).to_numpy())
    words = np.asarray(texts.to_list(), dtype=object)
    out[rows] = again
    bad = np.flatnonzero(np.isnan(again))
    if bad.size:
        return out, (int(rows[bad[0]]), str(words[bad[0]]))
    return out, None


def column_to_float(column, na_values=NA_STRINGS) -> tuple[np.ndarray, tuple[int, str] | None]:
    """A typed polars column (Parquet) as float64, like :func:`text_to_float`:
    numbers and booleans as they are (nulls NaN), text parsed, anything else
    (dates, categories, ...) not a number whatever it looks like."""
    import polars as pl

    dtype = column.dtype
    if dtype == pl.String:
        return text_to_float(column, na_values)
    if dtype.is_numeric() or dtype == pl.Null:
        return column.cast(pl.Float64).to_numpy(), None
    values = np.full(len(column), np.nan)
    present = column.is_not_null().arg_true()
    if present.len():
        row = int(present[0])
        return values, (row, str(column[row]))
    return values, None


def features_of(
    frame, plan, display: str, row_offset: int, encoders=None, na_values=NA_STRINGS
) -> tuple[np.ndarray, Unread]:
    """The plan's features of a polars frame as a column-major float64
    matrix (n_rows, n_features), and the first unreadable cell of each
    numeric column that has one.

    This is where each kind of column is converted: :data:`NUMERIC` by
    :func:`column_to_float`, :data:`CATEGORICAL` by its
    :class:`~nbcli.io.categories.Categories` in ``encoders`` (codes, NaN
    where missing); a kind without a converter here is refused.
    """
    import polars as pl

    from nbcli.io.plan import CATEGORICAL, NUMERIC

    names = plan.matrix
    unread: Unread = {}
    schema = frame.schema  # built afresh on each access
    if names and all(schema[n] == pl.Float64 and plan.kind(n) == NUMERIC for n in names):
        # One conversion of the whole block (polars fills the columns in
        # parallel, nulls as NaN).
        X = frame.select(names).to_numpy(order="fortran")
        return (X if X.flags.writeable else X.copy(order="F")), unread
    X = np.empty((frame.height, len(names)), dtype=np.float64, order="F")
    # Unseen categories of every column, so that the error names the
    # earliest row of the chunk, whichever column it is in.
    refusals: list = []
    for j, name in enumerate(names):
        kind = plan.kind(name)
        column = frame.get_column(name)
        if kind == NUMERIC:
            stray = getattr(plan, "stray", {}).get(name)
            na = na_values if stray is None else (*na_values, *stray)
            X[:, j], first_bad = column_to_float(column, na)
            if first_bad is not None:
                unread[j] = first_bad
        elif kind == CATEGORICAL and encoders is not None and name in encoders:
            X[:, j] = encoders[name].encode(column, na_values, display, row_offset, refusals)
        else:
            raise fail(
                display, f"column '{name}' is of kind {kind!r}, which this reader cannot read"
            )
    if refusals:
        # min keeps the first column of a tied row (rows are unique per column).
        raise min(refusals, key=lambda r: r[0])[1]
    return X, unread


def unread_counts(frame, names: list[str], X: np.ndarray, unread: Unread, na_values) -> dict:
    """Per column of ``unread``, its cells that are not numbers (all of them,
    not just the first): NaN cells of ``X`` that are not missing ones.

    ``frame`` is the polars frame ``X`` was read from, ``names`` the columns
    of ``X``; returns ``{column name: count}``.
    """
    import polars as pl

    counts = {}
    for j in unread:
        column = frame.get_column(names[j])
        if column.dtype == pl.String:
            na = column.is_null() | column.str.strip_chars().is_in(list(na_values))
        else:
            na = column.is_null()
        counts[names[j]] = int(np.isnan(X[:, j]).sum()) - int(na.sum())
    return counts


def check_cells(
    X: np.ndarray,
    names: list[str],
    display: str,
    row_offset: int,
    unread: dict[int, tuple[int, str]] | None = None,
    missing: str = "error",
    remedies: tuple[str, ...] = ("ignore", "drop"),
    typed: Mapping[str, str] | None = None,
    unseen_way: bool = False,
) -> None:
    """Raise NbcliError for the first row holding an infinity, an unreadable
    cell (``unread``: column -> (row, text)) or, with ``missing="error"``, a
    NaN (a missing cell), naming column and row (``row_offset`` rows of the
    file come before this block). The message for a NaN offers the
    ``--missing`` policies ``remedies`` (those the model takes); that for
    text in a column ``typed`` gave a numeric kind (``--column``) names it;
    with ``unseen_way`` (scoring, where missing cells are scored) that for
    text offers ``--unseen ignore``, which reads it as a missing cell.

    This is the one place where missing feature cells are refused: readers
    hand them on as NaN, and under the other policies they stay NaN.
    """
    if not unread:
        # One cheap pass; a closer look only when something is off (the sum
        # of large finite values can overflow, so the closer look decides).
        with np.errstate(over="ignore", invalid="ignore"):
            if np.isfinite(X.sum()):
                return
    if missing == "error":
        bad = ~np.isfinite(X)
    else:
        # Missing cells stay NaN; only infinities and unreadable cells are refused.
        bad = np.isinf(X)
        for j, (i, _) in (unread or {}).items():
            bad[i, j] = True
    bad_rows = bad.any(axis=1)
    if not bad_rows.any():
        return
    i = int(np.argmax(bad_rows))
    j = int(np.argmax(bad[i]))
    row = row_offset + i + 1
    column = names[j]
    if unread and j in unread and unread[j][0] == i:
        text = unread[j][1]
        hint = ""
        if "," in text and text.replace(",", "", 1).lstrip("+-").isdigit():
            hint = " (numbers need a '.' as the decimal point)"
        if row > _sample_rows():
            hint += (
                f" (the column was planned as numeric from the first {_sample_rows()} rows,"
                " which hold numbers only)"
            )
        way, lead = "fix the value", "features must be numbers: "
        kind = (typed or {}).get(column)
        if kind is not None:
            lead = ""
            # The user's --column made it numeric; the reader would have read text.
            way = (
                f"--column {column}={kind} reads it as numbers: give it a kind for text "
                f"(--column {column}=categorical) or leave it out of --column"
            )
        mark = missing_mark(text)
        if mark is not None:
            import shlex

            # One short mark such as ? or -: most often a missing-value marker.
            way += f", or pass --na-values {shlex.quote(mark)} if it marks a missing value"
        if unseen_way and kind is None:
            way += ", or pass --unseen ignore to score such a cell as missing"
        raise _at_row(
            row,
            fail(
                display,
                f"column '{column}' has the non-numeric value {text!r} at row {row}"
                f"{hint}; {lead}{way}",
            ),
        )
    if np.isnan(X[i, j]):
        raise _at_row(
            row,
            fail(
                display,
                f"column '{column}' has a missing value at row {row}; fill it in"
                + _missing_remedies(remedies),
            ),
        )
    raise _at_row(
        row,
        fail(
            display,
            f"column '{column}' has an infinite value at row {row} (inf, or a number beyond "
            "double precision such as 1e400); replace it with a finite number",
        ),
    )


#: What each ``--missing`` policy does with the cell, as the refusal offers it.
_REMEDY_WORDS = {"ignore": "leave the cell out", "drop": "skip the row"}


def _missing_remedies(remedies: tuple[str, ...]) -> str:
    """The ``--missing`` policies ``remedies`` as the end of a refusal (``""`` for none)."""
    offered = [f"--missing {r} ({_REMEDY_WORDS[r]})" for r in remedies if r in _REMEDY_WORDS]
    return ", or pass " + " or ".join(offered) if offered else ""


def _at_row(row: int, error: NbcliError) -> NbcliError:
    """``error`` with the data row it names (``error.row``), so that a reader
    can report the first bad row of a chunk whichever check finds it."""
    error.row = row
    return error


def _sample_rows() -> int:
    from nbcli.io.profile import SAMPLE_ROWS

    return SAMPLE_ROWS
