"""Read a data set (features and class labels) from CSV, gzip-compressed CSV,
NPZ, Parquet or stdin.

:func:`read_dataset` reads a whole file, :func:`iter_dataset` reads it in
chunks of rows for streaming fits and predictions. Both choose the target
column and the feature columns the same way, and raise
:class:`~nbcli.errors.NbcliError` with a one-line message (file name first,
then the column and first offending row where that applies) for anything
wrong with the input.

Formats are chosen by extension: ``.npz`` is a NumPy archive, ``.parquet`` /
``.pq`` is Parquet (needs pyarrow), everything else is CSV, gzip-compressed
when the file starts with the gzip magic bytes (``.csv.gz``, ``.gz``); bz2,
xz, zstd and zip are recognised by theirs and refused with a message. ``-``
is stdin, read once and kept in memory, as are named pipes, ``/dev/stdin``
and process substitutions ``<(...)``; their format is told by their content.

CSV is parsed by pyarrow's streaming reader where pyarrow is installed and by
pandas' C parser otherwise, with the same results and messages either way
(:mod:`nbcli.io._csv` says how; ``NBCLI_CSV_ENGINE=c`` or ``arrow`` chooses).
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import os
import re
import stat
import sys
import zlib
from collections.abc import Iterator
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from nbcli.errors import NbcliError
from nbcli.io import _csv
from nbcli.io._csv import fail, quote_names

__all__ = [
    "Dataset",
    "DatasetStream",
    "read_dataset",
    "iter_dataset",
    "resolve_labels",
    "file_sha256",
]

_GZIP_MAGIC = b"\x1f\x8b"
_ZIP_MAGIC = b"PK\x03\x04"
_PARQUET_MAGIC = b"PAR1"
#: Compressions nbcli recognises but does not read (gzip is read), by the
#: bytes their files start with. bz2's "BZh" and a block size (1-9) are
#: followed by a block or end-of-stream marker, so a CSV header that starts
#: with "BZh" is not mistaken for one.
_OTHER_COMPRESSIONS = (
    (re.compile(rb"\ABZh[1-9](1AY&SY|\x17rE8P\x90)"), "bz2"),
    (re.compile(rb"\A\xfd7zXZ\x00"), "xz"),
    (re.compile(rb"\A\x28\xb5\x2f\xfd"), "zstd"),
    (re.compile(rb"\APK\x03\x04"), "zip"),
)
_MAGIC_BYTES = 10
_TARGET_NAMES = ("label", "target", "class", "y")
_TRUE_TEXTS = ("True", "TRUE", "true")
_FALSE_TEXTS = ("False", "FALSE", "false")


@dataclass
class Dataset:
    """Features, labels and the names that go with them.

    Attributes
    ----------
    X : ndarray of shape (n_samples, n_features), float64
        Finite feature values (possibly column-major).
    y : ndarray of shape (n_samples,) or None
        Class labels (int64, bool or str), or None when there is no target.
    feature_names : list of str, length n_features
    target : str or None
        The target column (CSV, Parquet) or array key (NPZ) used for ``y``.
    path : str
        The path as given, ``"-"`` for stdin.
    kept : dict of str to ndarray of shape (n_samples,)
        Columns asked for with ``keep=``, values as read (e.g. an ID column).
    note : str or None
        A sentence worth showing the user, such as which column became the
        target and why.
    """

    X: np.ndarray
    y: np.ndarray | None
    feature_names: list[str]
    target: str | None
    path: str
    kept: dict[str, np.ndarray] = field(default_factory=dict)
    note: str | None = None

    @property
    def n_samples(self) -> int:
        return int(self.X.shape[0])


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
        ``"1.0"`` keep the whole column as strings); otherwise a numpy unicode
        array. Arrays that already hold numbers or booleans are returned as
        they are.
    """
    arr = np.asarray(labels)
    if arr.dtype.kind not in "OUS":
        return arr
    if arr.dtype.kind == "S":
        arr = arr.astype(str)
    if arr.size == 0:
        return arr.astype(str)
    # Hashing finds the few distinct labels quickly; only those are parsed.
    codes, uniques = pd.factorize(arr)
    spelled = [str(u) for u in uniques]
    as_int = _integers(spelled)
    if as_int is not None:
        return as_int[codes]
    return np.asarray(spelled, dtype=str)[codes]


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


def _text_labels(obj: np.ndarray) -> np.ndarray:
    """Object array of str -> numpy unicode array (via the distinct values, for speed)."""
    if obj.size == 0:
        return np.asarray(obj, dtype=str)
    codes, uniques = pd.factorize(obj)
    return np.asarray([str(u) for u in uniques], dtype=str)[codes]


def _typed_labels(values: np.ndarray, display: str, name: str, row_offset: int) -> np.ndarray:
    """Check labels stored with a type (NPZ, Parquet): keep ints, bools, strings;
    integral floats become int64; NaN and fractional floats are errors."""
    if values.ndim == 2 and values.shape[1] == 1:
        values = values[:, 0]
    kind = values.dtype.kind
    if kind in "biuU":
        return values
    if kind == "S":
        return _utf8(values, display, f"labels in {name}")
    if kind == "O":
        missing = pd.isna(values)
        if missing.any():
            raise _missing_label(display, name, row_offset + int(np.argmax(missing)) + 1)
        return _text_labels(values)
    if kind == "f":
        nan = np.isnan(values)
        if nan.any():
            raise _missing_label(display, name, row_offset + int(np.argmax(nan)) + 1)
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


def _utf8(values: np.ndarray, display: str, what: str) -> np.ndarray:
    """Bytes (NumPy ``S`` arrays) as text; NumPy's own conversion assumes ASCII."""
    try:
        return np.char.decode(values, "utf-8")
    except UnicodeDecodeError:
        raise fail(
            display, f"{what} are bytes that are not UTF-8 text; store them as strings"
        ) from None


def _missing_label(display: str, name: str, row: int) -> NbcliError:
    return fail(
        display,
        f"target column '{name}' has a missing value at row {row}; "
        "every row needs a label: fill it in or remove the row",
    )


# ---------------------------------------------------------------------------
# Sources: files and stdin

_stdin_cache: tuple[object, bytes] | None = None
# Contents of pipes and devices, which can be read only once, by (path, device, inode).
_stream_cache: dict[tuple[str, int, int], bytes] = {}


def _stdin_bytes() -> bytes:
    """All of stdin, read once; later calls return the same bytes."""
    global _stdin_cache
    stream = getattr(sys.stdin, "buffer", sys.stdin)
    if stream is None:  # started with stdin closed (<&-)
        raise fail("<stdin>", "is closed; give a file path, or pipe the data in")
    if _stdin_cache is None or _stdin_cache[0] is not stream:
        try:
            data = stream.read()
        except (OSError, ValueError) as exc:
            raise fail("<stdin>", f"cannot be read ({exc})") from exc
        if isinstance(data, str):
            data = data.encode("utf-8")
        _stdin_cache = (stream, data)
    return _stdin_cache[1]


def _stream_key(path: str) -> tuple[str, int, int] | None:
    """A cache key when ``path`` exists and is not a regular file (a named
    pipe, ``/dev/stdin``, ``<(...)``, a device), else None."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode):
        return None
    return (path, st.st_dev, st.st_ino)


def _stream_bytes(path: str, key) -> bytes:
    """All of a pipe or device, read once; later calls return the same bytes."""
    if key not in _stream_cache:
        with _csv.translated(path):
            with open(path, "rb") as handle:
                _stream_cache[key] = handle.read()
    return _stream_cache[key]


def _compression(magic: bytes) -> str | None:
    """The name of a compression nbcli does not read, told by its magic bytes."""
    for pattern, name in _OTHER_COMPRESSIONS:
        if pattern.match(magic):
            return name
    return None


def _unreadable_compression(display: str, name: str) -> NbcliError:
    return fail(
        display, f"is compressed with {name}, which nbcli does not read; decompress it or use gzip"
    )


class _Source:
    """Where the data comes from: a path or stdin, its format and compression.

    Stdin, named pipes and devices (``/dev/stdin``, ``<(...)``) can be read
    only once, so they are read whole into memory and their format is told
    by their content; regular files are opened afresh for each pass.
    """

    def __init__(self, path):
        self.path = "-" if path == "-" else os.fspath(path)
        self.display = "<stdin>" if self.path == "-" else self.path
        self._data: bytes | None = None
        self.gzipped = False
        if self.path == "-":
            self._from_bytes(_stdin_bytes())
            return
        key = _stream_key(self.path)
        if key is not None:
            self._from_bytes(_stream_bytes(self.path, key))
            return
        # Opening early turns "no such file", "is a directory" and
        # "permission denied" into messages before any parsing starts.
        with _csv.translated(self.display):
            with open(self.path, "rb") as handle:
                magic = handle.read(_MAGIC_BYTES)
        name = self.path.lower()
        if name.endswith(".npz"):
            self.format = "npz"
        elif name.endswith((".parquet", ".pq")):
            self.format = "parquet"
        else:
            self.format = "csv"
            self.gzipped = magic[:2] == _GZIP_MAGIC
            other = _compression(magic)
            if other is not None:
                raise _unreadable_compression(self.display, other)

    def _from_bytes(self, data: bytes) -> None:
        """Take the content from memory; its format is told by its first bytes."""
        if data[:2] == _GZIP_MAGIC:
            try:
                data = gzip.decompress(data)
            except (OSError, EOFError, zlib.error) as exc:
                raise _csv.error_from_exception(exc, self.display) from exc
        self._data = data
        if data.startswith(_ZIP_MAGIC):
            self.format = "npz"
        elif data.startswith(_PARQUET_MAGIC):
            self.format = "parquet"
        else:
            other = _compression(data[:_MAGIC_BYTES])
            if other is not None:
                raise _unreadable_compression(self.display, other)
            self.format = "csv"

    def open_binary(self):
        """A fresh binary stream of the (decompressed) content."""
        if self._data is not None:
            return io.BytesIO(self._data)
        if self.gzipped:
            return gzip.open(self.path, "rb")
        return open(self.path, "rb")

    def file_or_buffer(self):
        """What NumPy or pyarrow should open: the path, or the bytes in memory."""
        return io.BytesIO(self._data) if self._data is not None else self.path


def file_sha256(path) -> str:
    """Hex SHA-256 of a file's raw bytes, as stored (before any decompression).

    For ``"-"``, a named pipe or a device it hashes the bytes read from it,
    reading them first if no reader has yet (the readers then use the same
    bytes).

    Raises NbcliError when the file cannot be read.
    """
    if path == "-":
        return hashlib.sha256(_stdin_bytes()).hexdigest()
    display = os.fspath(path)
    key = _stream_key(display)
    if key is not None:
        return hashlib.sha256(_stream_bytes(display, key)).hexdigest()
    digest = hashlib.sha256()
    with _csv.translated(display):
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


# ---------------------------------------------------------------------------
# Choosing the target and the features


@dataclass(frozen=True)
class _Options:
    target: str | None
    features: list[str] | None
    drop: list[str] | None
    model_features: list[str] | None
    need_target: bool
    keep: list[str] | None
    target_hint: str | None
    x_key: str
    y_key: str


@dataclass(frozen=True)
class _Plan:
    """Which columns play which part."""

    target: str | None
    features: list[str]
    keep: list[str]
    note: str | None


def _plan_columns(columns: list[str], opts: _Options, display: str) -> _Plan:
    """Choose the target, feature and kept columns of a table.

    ``columns`` are the names in file order; ``""`` marks an unnamed column,
    which is never used (it is usually an index written along with the data).
    """
    named = [c for c in columns if c]
    present = set(named)

    def unknown(names, purpose):
        for name in names:
            if name not in present:
                raise fail(
                    display,
                    f"has no column '{name}' {purpose}; the columns are: {quote_names(named)}",
                )

    if opts.model_features is not None and (opts.features or opts.drop):
        raise fail(
            display,
            "features and drop cannot be combined with the model's "
            "feature list; the model decides which columns are used",
        )
    keep = list(opts.keep or [])
    unknown(keep, "to keep")
    if opts.features is not None:
        unknown(opts.features, "to use as a feature")
    unknown(opts.drop or [], "to drop")

    target, note = _choose_target(named, opts, display, unknown)

    if opts.model_features is not None:
        missing = [c for c in opts.model_features if c not in present]
        if missing:
            word = "column" if len(missing) == 1 else "columns"
            raise fail(
                display,
                f"missing {word} {quote_names(missing)} that the model was "
                f"trained on; the columns are: {quote_names(named)}",
            )
        features = list(opts.model_features)
    elif opts.features is not None:
        if target is not None and target in opts.features:
            raise fail(
                display,
                f"column '{target}' is the target and cannot also be a feature; "
                "remove it from the feature list or choose another target",
            )
        features = list(opts.features)
    else:
        left_out = set(opts.drop or []) | set(keep) | {target}
        features = [c for c in named if c not in left_out]
    if not features:
        raise fail(
            display,
            "has no feature columns left after setting aside the target"
            f"{f' {target!r}' if target else ''}, dropped and kept columns; "
            "it needs at least one feature column",
        )
    repeated = sorted({c for c in features if features.count(c) > 1})
    if repeated:
        raise fail(
            display,
            f"the feature list names {quote_names(repeated)} more than once; "
            "list each feature once",
        )
    return _Plan(target=target, features=features, keep=keep, note=note)


def _choose_target(named: list[str], opts: _Options, display: str, unknown):
    if opts.target is not None:
        unknown([opts.target], "to use as the target")
        return opts.target, None
    hint = opts.target_hint
    if hint is not None and hint in named:
        return hint, f"using column '{hint}' as the target (the name it had at training time)"
    if not opts.need_target:
        return None, None
    # Columns the caller gave another part to are not guessed as the target.
    taken = (
        set(opts.features or [])
        | set(opts.model_features or [])
        | set(opts.keep or [])
        | set(opts.drop or [])
    )
    candidates = [c for c in named if c not in taken]
    if not candidates:
        raise fail(
            display,
            "has no column left to use as the target; the columns are: "
            f"{quote_names(named)}; name the target column explicitly",
        )
    like_target = [c for c in candidates if c.strip().lower() in _TARGET_NAMES]
    if len(like_target) == 1:
        chosen = like_target[0]
        return chosen, f"using column '{chosen}' as the target (named like a target)"
    chosen = candidates[-1]
    return chosen, f"using column '{chosen}' as the target (the last column)"


# ---------------------------------------------------------------------------
# Features: tables of cells -> finite float64 matrix


def _column_as_float(column: pd.Series) -> tuple[np.ndarray, tuple[int, str] | None]:
    """Return the column as float64 (NaN where missing or unreadable) and the
    first cell that is not a number, as (0-based row, text), if any."""
    dtype = column.dtype
    if pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_numeric_dtype(dtype):
        return column.to_numpy(dtype=np.float64, na_value=np.nan), None
    if not (pd.api.types.is_string_dtype(dtype) or pd.api.types.is_object_dtype(dtype)):
        # Dates, durations, categories: not numbers, whatever they look like.
        present = np.flatnonzero(column.notna().to_numpy())
        values = np.full(len(column), np.nan)
        if present.size:
            return values, (int(present[0]), str(column.iloc[present[0]]))
        return values, None
    values = pd.to_numeric(column, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    unread = np.flatnonzero(np.isnan(values) & column.notna().to_numpy())
    if unread.size == 0:
        return values, None
    if not values.flags.writeable:  # pyarrow-backed results can be read-only views
        values = values.copy()
    # pandas reads an all-boolean column as bool; mixed with numbers or with
    # gaps it stays text, so True/False are mapped here the same way.
    texts = column.iloc[unread].astype(str).to_numpy(dtype=object)
    is_true = np.isin(texts, _TRUE_TEXTS)
    is_false = np.isin(texts, _FALSE_TEXTS)
    values[unread[is_true]] = 1.0
    values[unread[is_false]] = 0.0
    bad = np.flatnonzero(~(is_true | is_false))
    if bad.size:
        return values, (int(unread[bad[0]]), str(texts[bad[0]]))
    return values, None


def _frame_features(
    frame: pd.DataFrame, features: list[str], display: str, row_offset: int
) -> np.ndarray:
    """Feature columns of ``frame`` as a finite (n_rows, n_features) float64
    matrix in column-major order; raises NbcliError at the first bad cell."""
    X = np.empty((len(frame), len(features)), dtype=np.float64, order="F")
    unread: dict[int, tuple[int, str]] = {}
    for j, name in enumerate(features):
        X[:, j], first_bad = _column_as_float(frame[name])
        if first_bad is not None:
            unread[j] = first_bad
    _check_finite(X, features, display, row_offset, unread)
    return X


def _check_finite(
    X: np.ndarray,
    names: list[str],
    display: str,
    row_offset: int,
    unread: dict[int, tuple[int, str]] | None = None,
) -> None:
    """Raise NbcliError for the first row holding a NaN, an infinity or an
    unreadable cell (``unread``: column -> (row, text)), naming column and row."""
    if not unread:
        # One cheap pass; a closer look only when something is off (the sum
        # of large finite values can overflow, so the closer look decides).
        with np.errstate(over="ignore", invalid="ignore"):
            if np.isfinite(X.sum()):
                return
    bad = ~np.isfinite(X)
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
        raise fail(
            display,
            f"column '{column}' has the non-numeric value {text!r} at row {row}"
            f"{hint}; features must be numbers: fix the value or leave the "
            "column out",
        )
    if np.isnan(X[i, j]):
        raise fail(
            display,
            f"column '{column}' has a missing value at row {row}; fill it in or remove the row",
        )
    raise fail(
        display,
        f"column '{column}' has an infinite value at row {row}; replace it with a finite number",
    )


# ---------------------------------------------------------------------------
# CSV


class _CsvReader:
    """Reads a CSV source whole or in chunks, with one plan for every chunk."""

    def __init__(self, source: _Source, opts: _Options, delimiter: str | None):
        self.source = source
        display = source.display
        self.header = _csv.read_header(source.open_binary, display, delimiter)
        if not self.header.has_data:
            raise fail(display, "has a header but no data rows; add rows below the header")
        try:
            self.plan = _plan_columns(self.header.columns, opts, display)
        except NbcliError:
            hint = _delimiter_hint(self.header, display)
            if hint is not None:
                raise hint from None
            raise
        # Labels are always read as text, so a column of numbers in one chunk
        # and words in the next cannot split a class in two. Only an empty
        # cell is a missing label (a class may be called "NA"); kept columns
        # have no missing values at all, an empty cell stays "".
        text = [c for c in [self.plan.target, *self.plan.keep] if c is not None]
        na = {self.plan.target: ("",)} if self.plan.target is not None else {}
        na.update({c: _csv.NA_STRINGS for c in self.plan.features})
        self._text_columns = text
        self._na = na
        # A column with two parts (kept and a feature, say) is read by the C
        # engine as text with the features' missing values; only it does that.
        parts = [*self.plan.features, *text]
        self._engine = _csv.csv_engine() if len(set(parts)) == len(parts) else "c"

    def frames(self, chunksize: int | None, skip: int = 0):
        """The C engine's frames (see :func:`nbcli.io._csv.iter_frames`);
        taking over from the Arrow engine, with its correctly rounded numbers."""
        return _csv.iter_frames(
            self.source.open_binary,
            self.source.display,
            self.header,
            text_columns=self._text_columns,
            na_values=self._na,
            chunksize=chunksize,
            skip=skip,
            correctly_rounded=self._engine == "arrow",
        )

    def datasets(self, chunksize: int | None, resolve: bool) -> Iterator[Dataset]:
        """The rows as Datasets: one, or chunks of ``chunksize`` rows.

        The Arrow engine delivers what it can; from the first chunk it cannot
        promise to read as the C engine does (any missing, infinite or
        unreadable cell, missing label, quote, parse error...) the C engine
        takes over at that row, so results and messages are the C engine's.
        """
        done = 0
        if self._engine == "arrow":
            tables = _csv.iter_arrow_tables(
                self.source.open_binary,
                self.header,
                float_columns=self.plan.features,
                chunksize=chunksize,
            )
            if chunksize is not None:
                tables = _csv.read_ahead(tables)
            try:
                for table in tables:
                    chunk = self._convert_arrow(table, resolve)
                    yield chunk
                    done += chunk.n_samples
                return
            except _csv.ArrowFallback:
                pass
            finally:
                tables.close()
        for frame in self.frames(chunksize, skip=done):
            if len(frame) == 0:
                continue
            yield self.convert(frame, done, resolve)
            done += len(frame)

    def convert(self, frame: pd.DataFrame, row_offset: int, resolve: bool) -> Dataset:
        display = self.source.display
        X = _frame_features(frame, self.plan.features, display, row_offset)
        y = None
        if self.plan.target is not None:
            column = frame[self.plan.target]
            missing = column.isna().to_numpy()
            if missing.any():
                raise _missing_label(
                    display, self.plan.target, row_offset + int(np.argmax(missing)) + 1
                )
            labels = column.to_numpy(dtype=object)
            y = resolve_labels(labels) if resolve else _text_labels(labels)
        kept = {k: frame[k].to_numpy(dtype=object) for k in self.plan.keep}
        return Dataset(
            X=X,
            y=y,
            feature_names=list(self.plan.features),
            target=self.plan.target,
            path=self.source.path,
            kept=kept,
            note=self.plan.note,
        )

    def _convert_arrow(self, table, resolve: bool) -> Dataset:
        """A chunk from the Arrow engine as a Dataset, equal to what
        :meth:`convert` makes of the C engine's frame of the same rows.

        Raises ArrowFallback where the two could differ: a missing label, or
        features :func:`_arrow_features` declines (the C engine then words
        the error, or reads what Arrow could not).
        """
        X = _arrow_features(table, self.plan.features)
        y = None
        if self.plan.target is not None:
            y = _arrow_labels(table.column(self.plan.target), resolve)
        kept = {k: table.column(k).to_numpy(zero_copy_only=False) for k in self.plan.keep}
        return Dataset(
            X=X,
            y=y,
            feature_names=list(self.plan.features),
            target=self.plan.target,
            path=self.source.path,
            kept=kept,
            note=self.plan.note,
        )


# -0.0 is the one double whose bits, seen as an int64, are this value: one
# comparison finds it (``X == 0`` would not tell it from +0.0).
_NEGATIVE_ZERO = np.float64(-0.0).view(np.int64)


def _arrow_features(table, features: list[str]) -> np.ndarray:
    """Float64 columns of an Arrow table as a (n_rows, n_features) column-major matrix.

    Raises ArrowFallback when a value is missing or not finite (every such
    case is an error whose wording is the C engine's), or is -0.0: the C
    engine reads a column of whole numbers as integers, so ``-0`` there
    becomes +0.0, which only it can tell.
    """
    X = np.empty((table.num_rows, len(features)), dtype=np.float64, order="F")
    for j, name in enumerate(features):
        column = table.column(name)
        if column.null_count:
            raise _csv.ArrowFallback
        start = 0
        for piece in column.chunks:
            X[start : start + len(piece), j] = piece.to_numpy()
            start += len(piece)
    with np.errstate(over="ignore", invalid="ignore"):
        # The sum of large finite values can overflow; the closer look decides.
        if not np.isfinite(X.sum()) and not np.isfinite(X).all():
            raise _csv.ArrowFallback
    if np.any(X.view(np.int64) == _NEGATIVE_ZERO):
        raise _csv.ArrowFallback
    return X


def _arrow_labels(column, resolve: bool) -> np.ndarray:
    """Labels from an Arrow string column, as :func:`resolve_labels` (or
    :func:`_text_labels`) would give them from the same strings; the few
    distinct labels are converted once. Raises ArrowFallback for an empty
    label (a missing one)."""
    import pyarrow.compute as pc

    distinct = column.unique()
    texts = distinct.to_numpy(zero_copy_only=False)
    if np.any(texts == ""):
        raise _csv.ArrowFallback
    labels = resolve_labels(texts) if resolve else _text_labels(texts)
    return labels[pc.index_in(column, value_set=distinct).to_numpy()]


def _delimiter_hint(header: _csv.CsvHeader, display: str) -> NbcliError | None:
    """A better error than "no such column" when the header did not split:
    one column whose name holds another delimiter means the wrong one was used."""
    if len(header.columns) != 1:
        return None
    name = header.columns[0]
    others = [d for d in _csv.DELIMITERS if d != header.delimiter and d in name]
    if not others:
        return None
    return fail(
        display,
        f"the header is one column, {name[:60]!r}, when split on "
        f"{_csv.delimiter_name(header.delimiter)}; the file seems to use "
        f"{_csv.delimiter_name(others[0])}: give that delimiter, or none to "
        "have it detected",
    )


# ---------------------------------------------------------------------------
# Parquet


class _ParquetReader:
    """Reads a Parquet source through pyarrow, whole or in record batches."""

    def __init__(self, source: _Source, opts: _Options):
        display = source.display
        try:
            import pyarrow as pa
            import pyarrow.parquet as pq
        except ImportError:
            raise fail(display, "reading Parquet needs pyarrow: pip install pyarrow") from None
        self._errors = (pa.ArrowException, OSError, ValueError)
        self.source = source
        try:
            self._file = pq.ParquetFile(source.file_or_buffer())
            columns = list(self._file.schema_arrow.names)
            n_rows = self._file.metadata.num_rows
        except self._errors as exc:
            raise self._error(exc) from exc
        repeated = sorted({c for c in columns if columns.count(c) > 1})
        if repeated:
            raise fail(
                display,
                f"has repeated column names: {quote_names(repeated)}; "
                "give every column a distinct name",
            )
        if n_rows == 0:
            raise fail(display, "has no data rows; write the table with its rows")
        self.plan = _plan_columns(columns, opts, display)
        wanted = [*self.plan.features, self.plan.target, *self.plan.keep]
        self._columns = list(dict.fromkeys(c for c in wanted if c is not None))

    def _error(self, exc: BaseException) -> NbcliError:
        interruption = _csv.interruption_in(exc)
        if interruption is not None:
            raise interruption
        if isinstance(exc, OSError) and not type(exc).__module__.startswith("pyarrow"):
            return _csv.error_from_exception(exc, self.source.display)
        first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return fail(self.source.display, f"is not a valid Parquet file ({first_line})")

    def frames(self, chunksize: int | None):
        try:
            if chunksize is None:
                yield self._file.read(columns=self._columns).to_pandas()
                return
            for batch in self._file.iter_batches(batch_size=chunksize, columns=self._columns):
                yield batch.to_pandas()
        except self._errors as exc:
            raise self._error(exc) from exc

    def convert(self, frame: pd.DataFrame, row_offset: int, resolve: bool) -> Dataset:
        display = self.source.display
        X = _frame_features(frame, self.plan.features, display, row_offset)
        y = None
        target = self.plan.target
        if target is not None:
            column = frame[target]
            missing = column.isna().to_numpy()
            if missing.any():
                raise _missing_label(display, target, row_offset + int(np.argmax(missing)) + 1)
            values = column.to_numpy()
            if values.dtype.kind == "O" or isinstance(column.dtype, pd.CategoricalDtype):
                values = np.asarray(column.astype(str).to_numpy(dtype=object))
            y = _typed_labels(values, display, target, row_offset)
        kept = {k: frame[k].to_numpy(dtype=object) for k in self.plan.keep}
        return Dataset(
            X=X,
            y=y,
            feature_names=list(self.plan.features),
            target=target,
            path=self.source.path,
            kept=kept,
            note=self.plan.note,
        )


# ---------------------------------------------------------------------------
# NPZ


def _read_npz(source: _Source, opts: _Options) -> Dataset:
    """Load an NPZ archive (never unpickling) and check it as a data set."""
    display = source.display
    try:
        archive = np.load(source.file_or_buffer(), allow_pickle=False)
    except (FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        raise _csv.error_from_exception(exc, display) from exc
    except Exception as exc:  # numpy raises many types for a bad archive
        raise fail(display, "is not a valid .npz archive; write it with numpy.savez") from exc
    if not isinstance(archive, np.lib.npyio.NpzFile):
        raise fail(
            display,
            "is not a valid .npz archive (it holds a single array); "
            "write it with numpy.savez(path, X=..., y=...)",
        )
    with archive:
        keys = list(archive.files)

        def member(key):
            try:
                return archive[key]
            except ValueError as exc:
                if "allow_pickle" in str(exc) or "Object arrays" in str(exc):
                    raise fail(
                        display,
                        f"holds object arrays (pickled data), which nbcli "
                        f"refuses to load (array '{key}'); store numbers and "
                        "strings as plain arrays",
                    ) from exc
                raise fail(
                    display, f"is not a valid .npz archive (array '{key}' is damaged)"
                ) from exc
            except Exception as exc:  # damaged members raise zipfile, zlib, parser errors
                raise fail(
                    display, f"is not a valid .npz archive (array '{key}' is damaged)"
                ) from exc

        if opts.x_key not in keys:
            raise fail(
                display,
                f"has no array '{opts.x_key}' (the features); the arrays in it "
                f"are: {quote_names(keys)}",
            )
        X = member(opts.x_key)
        if X.ndim != 2 or X.dtype.kind not in "biuf":
            raise fail(
                display,
                f"array '{opts.x_key}' has shape {X.shape} and dtype {X.dtype}; "
                "it must be a 2-D array of numbers, (n_samples, n_features)",
            )
        n, d = X.shape
        if n == 0:
            raise fail(display, f"has no data rows (array '{opts.x_key}' has 0 rows)")
        if d == 0:
            raise fail(display, f"array '{opts.x_key}' has no feature columns (shape {X.shape})")
        names = _npz_feature_names(member, keys, d, display)

        y_key = opts.target if opts.target is not None else opts.y_key
        y = None
        if y_key in keys:
            y = member(y_key)
            if y.ndim == 2 and y.shape[1] == 1:
                y = y[:, 0]
            if y.ndim != 1 or len(y) != n:
                raise fail(
                    display,
                    f"array '{opts.x_key}' has {n} rows but '{y_key}' has shape "
                    f"{y.shape}; they need one label per row",
                )
            y = _typed_labels(y, display, y_key, 0)
        elif opts.need_target or opts.target is not None:
            raise fail(
                display,
                f"has no array '{y_key}' (the labels); the arrays in it are: "
                f"{quote_names(keys)}; name the key that holds the labels",
            )

        kept = {}
        for key in opts.keep or []:
            if key not in keys:
                raise fail(
                    display,
                    f"has no array '{key}' to keep; the arrays in it are: {quote_names(keys)}",
                )
            values = member(key)
            if values.ndim != 1 or len(values) != n:
                raise fail(
                    display,
                    f"array '{key}' has shape {values.shape}; to keep it, it "
                    f"needs one value per row ({n},)",
                )
            kept[key] = values

    columns = _npz_columns(names, d, opts, display)
    if names is None:
        # Matched by position, the columns take the model's names.
        names = (
            list(opts.model_features)
            if opts.model_features is not None
            else [f"x{j}" for j in range(d)]
        )
    if columns is not None:
        X = X[:, columns]
        names = [names[j] for j in columns]
    X = X.astype(np.float64, copy=False)
    _check_finite(X, names, display, 0)
    return Dataset(
        X=X,
        y=y,
        feature_names=names,
        target=y_key if y is not None else None,
        path=source.path,
        kept=kept,
        note=None,
    )


def _npz_feature_names(member, keys, d: int, display: str) -> list[str] | None:
    if "feature_names" not in keys:
        return None
    names = member("feature_names")
    if names.ndim != 1 or names.dtype.kind not in "US" or len(names) != d:
        raise fail(
            display,
            f"array 'feature_names' has shape {names.shape} and dtype "
            f"{names.dtype}; it must be {d} strings, one per feature",
        )
    if names.dtype.kind == "S":
        names = _utf8(names, display, "feature_names")
    names = [str(n) for n in names]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        raise fail(
            display,
            f"feature_names repeats {quote_names(repeated)}; give every feature a distinct name",
        )
    return names


def _npz_columns(names: list[str] | None, d: int, opts: _Options, display: str) -> list[int] | None:
    """Column indices to keep from X (None: all, in order)."""
    if opts.model_features is not None:
        if opts.features or opts.drop:
            raise fail(
                display,
                "features and drop cannot be combined with the model's "
                "feature list; the model decides which columns are used",
            )
        if names is None:
            # Without stored names, columns can only be matched by position.
            if d != len(opts.model_features):
                raise fail(
                    display, f"has {d} features, the model expects {len(opts.model_features)}"
                )
            return None
        position = {n: j for j, n in enumerate(names)}
        missing = [c for c in opts.model_features if c not in position]
        if missing:
            word = "column" if len(missing) == 1 else "columns"
            raise fail(
                display,
                f"missing {word} {quote_names(missing)} that the model was "
                f"trained on; the features are: {quote_names(names)}",
            )
        return [position[c] for c in opts.model_features]
    if opts.features is None and not opts.drop:
        return None
    all_names = names if names is not None else [f"x{j}" for j in range(d)]
    position = {n: j for j, n in enumerate(all_names)}
    for name in [*(opts.features or []), *(opts.drop or [])]:
        if name not in position:
            raise fail(
                display, f"has no feature '{name}'; the features are: {quote_names(all_names)}"
            )
    chosen = opts.features if opts.features is not None else all_names
    chosen = [c for c in chosen if c not in set(opts.drop or [])]
    if not chosen:
        raise fail(display, "has no features left after dropping; keep at least one")
    return [position[c] for c in chosen]


# ---------------------------------------------------------------------------
# Public entry points


def _options(
    target, features, drop, model_features, need_target, keep, target_hint, x_key, y_key
) -> _Options:
    def as_list(names):
        return None if names is None else [str(n) for n in names]

    return _Options(
        target=target,
        features=as_list(features),
        drop=as_list(drop),
        model_features=as_list(model_features),
        need_target=bool(need_target),
        keep=as_list(keep),
        target_hint=target_hint,
        x_key=x_key,
        y_key=y_key,
    )


def _table_reader(source: _Source, opts: _Options, delimiter: str | None):
    if source.format == "parquet":
        return _ParquetReader(source, opts)
    return _CsvReader(source, opts, delimiter)


def read_dataset(
    path,
    *,
    target=None,
    features=None,
    drop=None,
    model_features=None,
    need_target=True,
    delimiter=None,
    x_key="X",
    y_key="y",
    keep=None,
    target_hint=None,
) -> Dataset:
    """Read a whole data file into a :class:`Dataset`.

    Parameters
    ----------
    path : str or path-like
        A ``.csv``/``.tsv``/``.txt`` (or any other name: CSV), ``.csv.gz``,
        ``.npz`` or ``.parquet`` file, or ``"-"`` for stdin.
    target : str, optional
        The target column (NPZ: the labels' key). When None and
        ``need_target``: ``target_hint`` if that column exists, else the one
        column named ``label``/``target``/``class``/``y`` (any case), else
        the last column. When None and not ``need_target``: ``target_hint``
        if it exists, else no target (``y`` is None).
    features, drop : list of str, optional
        Feature columns to use, or to leave out of "all but the target".
    model_features : list of str, optional
        The model's features: exactly these columns, in this order, matched
        by name (NPZ without ``feature_names``: by position). Not combined
        with ``features`` or ``drop``.
    need_target : bool
        False at prediction time: the target is never guessed.
    delimiter : str, optional
        CSV delimiter; detected from the header when None.
    x_key, y_key : str
        NPZ keys of the features (n_samples, n_features) and labels (n_samples,).
    keep : list of str, optional
        Columns returned as read in ``Dataset.kept`` (e.g. an ID column).
    target_hint : str, optional
        The target name known from training.

    Returns
    -------
    Dataset
        ``X`` of shape (n_samples, n_features) float64 and ``y`` of shape
        (n_samples,): CSV labels through :func:`resolve_labels`; NPZ and
        Parquet labels with their stored type (integral floats become int64).

    Raises
    ------
    NbcliError
        For every problem with the input, with the file, the column and the
        first offending row (1-based, header not counted) in the message.
    """
    opts = _options(
        target, features, drop, model_features, need_target, keep, target_hint, x_key, y_key
    )
    source = _Source(path)
    if source.format == "npz":
        return _read_npz(source, opts)
    reader = _table_reader(source, opts, delimiter)
    if isinstance(reader, _CsvReader):
        with contextlib.closing(reader.datasets(None, resolve=True)) as chunks:
            whole = next(chunks, None)
        if whole is None:
            raise fail(source.display, "has a header but no data rows; add rows below the header")
        return whole
    (frame,) = reader.frames(None)
    if len(frame) == 0:
        raise fail(source.display, "has a header but no data rows; add rows below the header")
    return reader.convert(frame, 0, resolve=False)


# Values per chunk when the caller does not choose: 8 million float64 is
# 64 MB, which pandas' parser needs about three times over while it works.
CHUNK_VALUES = 8 << 20


def default_chunk_rows(n_columns: int) -> int:
    """Rows per chunk so that one chunk holds about :data:`CHUNK_VALUES` values."""
    return max(1_000, min(1_000_000, CHUNK_VALUES // max(1, n_columns)))


class DatasetStream:
    """The rows of a data file as :class:`Dataset` chunks of at most
    ``chunk_size`` rows, all with the same ``feature_names`` and ``target``.

    The header (or schema) is read and checked when the stream is made; the
    rows are read on iteration, and every iteration starts again from the
    top. CSV and Parquet files are never held whole in memory; stdin, named
    pipes and devices (read once) and NPZ archives are.

    Attributes
    ----------
    feature_names : list of str
    target : str or None
    note : str or None
    path : str
    """

    def __init__(
        self,
        path,
        *,
        chunk_size: int | None,
        opts: _Options,
        delimiter: str | None,
        raw_labels: bool,
    ):
        self._source = _Source(path)
        display = self._source.display
        if chunk_size is not None and (
            isinstance(chunk_size, bool)
            or not isinstance(chunk_size, (int, np.integer))
            or chunk_size < 1
        ):
            raise fail(
                display, f"the chunk size must be a positive whole number, got {chunk_size!r}"
            )
        self.path = self._source.path
        self._raw_labels = raw_labels
        self._whole: Dataset | None = None
        self._reader = None
        if self._source.format == "npz":
            self._whole = _read_npz(self._source, opts)
            self.feature_names = list(self._whole.feature_names)
            self.target = self._whole.target
            self.note = self._whole.note
        else:
            self._reader = _table_reader(self._source, opts, delimiter)
            self.feature_names = list(self._reader.plan.features)
            self.target = self._reader.plan.target
            self.note = self._reader.plan.note
        if chunk_size is None:
            chunk_size = default_chunk_rows(len(self.feature_names) + 1)
        self.chunk_size = int(chunk_size)

    def __iter__(self) -> Iterator[Dataset]:
        if self._whole is not None:
            yield from self._slices(self._whole)
            return
        reader = self._reader
        offset = 0
        if isinstance(reader, _CsvReader):
            for chunk in reader.datasets(self.chunk_size, resolve=not self._raw_labels):
                yield chunk
                offset += chunk.n_samples
        else:
            for frame in reader.frames(self.chunk_size):
                if len(frame) == 0:
                    continue
                yield reader.convert(frame, offset, resolve=False)
                offset += len(frame)
        if offset == 0:
            raise fail(
                self._source.display, "has a header but no data rows; add rows below the header"
            )

    def _slices(self, whole: Dataset) -> Iterator[Dataset]:
        n = whole.X.shape[0]
        for start in range(0, n, self.chunk_size):
            rows = slice(start, start + self.chunk_size)
            yield Dataset(
                X=whole.X[rows],
                y=None if whole.y is None else whole.y[rows],
                feature_names=list(whole.feature_names),
                target=whole.target,
                path=whole.path,
                kept={k: v[rows] for k, v in whole.kept.items()},
                note=whole.note,
            )


def iter_dataset(
    path,
    *,
    chunk_size,
    target=None,
    features=None,
    drop=None,
    model_features=None,
    need_target=True,
    delimiter=None,
    x_key="X",
    y_key="y",
    keep=None,
    target_hint=None,
    raw_labels=False,
) -> DatasetStream:
    """Read a data file in chunks of at most ``chunk_size`` rows
    (None: about 8 million values per chunk, see :func:`default_chunk_rows`).

    Takes the options of :func:`read_dataset` and chooses the same target
    and features. CSV labels go through :func:`resolve_labels` chunk by
    chunk, unless ``raw_labels`` is True: then each chunk's ``y`` is a
    unicode array as read, so that a caller can resolve the type once, on the
    set of all labels (a column that looks numeric in one chunk and textual
    in another would otherwise change type between chunks). NPZ and Parquet
    labels keep their stored type either way.

    Raises
    ------
    NbcliError
        When the stream is made, for problems with the header, names and
        options; while iterating, for bad cells (row numbers count from the
        first data row of the file, not of the chunk).
    """
    opts = _options(
        target, features, drop, model_features, need_target, keep, target_hint, x_key, y_key
    )
    return DatasetStream(
        path, chunk_size=chunk_size, opts=opts, delimiter=delimiter, raw_labels=raw_labels
    )
