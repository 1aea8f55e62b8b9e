"""NPZ data archives: ``X`` (n_samples, n_features), ``y`` (n_samples,), and
optionally ``feature_names`` and kept arrays; loaded without unpickling.

An archive is read whole, then handed out in slices of rows.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from nbcli.io.cells import typed_labels, utf8
from nbcli.io.messages import (
    error_from_exception,
    fail,
    quote_names,
    refuse_missing_model_columns,
    refuse_repeated,
)
from nbcli.io.plan import ColumnPlan
from nbcli.io.readers import RawChunk, TableReader, register
from nbcli.io.request import DataRequest
from nbcli.io.sources import Source

__all__ = ["NpzReader"]


@register
class NpzReader(TableReader):
    """Reads an NPZ archive once; chunks are slices of its rows."""

    format = "npz"
    #: The archive is read with NumPy alone; its chunks are slices.
    uses_polars = False

    def __init__(self, source: Source, opts: DataRequest, delimiter: str | None = None):
        self.source = source
        self._X, self._y, names, self._kept, target = _read_npz(source, opts)
        self.plan = ColumnPlan(
            target=target,
            features=names,
            keep=list(self._kept),
            note=None,
            kinds={n: "numeric" for n in names},
        )

    def chunks(self, chunk_size: int | None, resolve: bool) -> Iterator[RawChunk]:
        n = self._X.shape[0]
        step = n if chunk_size is None else chunk_size
        for start in range(0, n, step):
            rows = slice(start, start + step)
            yield RawChunk(
                X=self._X[rows],
                unread={},
                y=None if self._y is None else self._y[rows],
                kept={k: v[rows] for k, v in self._kept.items()},
                row_offset=start,
            )


def _read_npz(source: Source, opts: DataRequest):
    """Load an NPZ archive (never unpickling) and check it as a data set:
    ``(X, y or None, feature names, kept arrays, target key or None)``."""
    display = source.display
    try:
        archive = np.load(source.file_or_buffer(), allow_pickle=False)
    except (FileNotFoundError, IsADirectoryError, PermissionError) as exc:
        raise error_from_exception(exc, display) from exc
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
            return read_member(archive, key, display)

        if opts.x_key not in keys and "metadata" in keys:
            raise fail(
                display,
                "is an nbcli model file, not data; give it as --model and the data as --data",
            )
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
            y = typed_labels(y, display, y_key, 0)
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
    return X, y, names, kept, (y_key if y is not None else None)


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
        names = utf8(names, display, "feature_names")
    names = [str(n) for n in names]
    refuse_repeated(
        display, names, "feature_names repeats {names}; give every feature a distinct name"
    )
    return names


def _npz_columns(
    names: list[str] | None, d: int, opts: DataRequest, display: str
) -> list[int] | None:
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
        refuse_missing_model_columns(display, opts.model_features, position, names, "features")
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


def read_member(archive, key: str, display: str):
    """Array ``key`` of an open ``np.load`` archive, or a one-line error: object
    arrays (pickled data) are refused by name, a damaged member as damaged,
    and fixed-width text beyond :data:`~nbcli.io.limits.MAX_NPZ_TEXT_BYTES`
    (a few long strings make every row as wide) before it is decompressed."""
    _check_text_width(archive, key, display)
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
        raise fail(display, f"is not a valid .npz archive (array '{key}' is damaged)") from exc
    except Exception as exc:  # damaged members raise zipfile, zlib, parser errors
        raise fail(display, f"is not a valid .npz archive (array '{key}' is damaged)") from exc


def _check_text_width(archive, key: str, display: str) -> None:
    """Refuse a member of fixed-width text larger than the limit, from its header."""
    from nbcli.io.limits import MAX_NPZ_TEXT_BYTES

    try:
        with archive.zip.open(f"{key}.npy") as member:
            version = np.lib.format.read_magic(member)
            read = (
                np.lib.format.read_array_header_1_0
                if version == (1, 0)
                else np.lib.format.read_array_header_2_0
            )
            shape, _, dtype = read(member)
    except Exception:  # not a plain .npy member: read_member words the problem
        return
    if dtype.kind not in "US":
        return
    n = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if n > MAX_NPZ_TEXT_BYTES:
        raise fail(
            display,
            f"array '{key}' is fixed-width text of {dtype.itemsize:,} bytes an entry "
            f"({n / 2**30:,.1f} GiB decompressed, over the limit of "
            f"{MAX_NPZ_TEXT_BYTES >> 20} MB); store labels as integer codes or shorter strings",
        )
