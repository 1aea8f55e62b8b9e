"""Writing predictions: CSV (or Parquet for a ``.parquet`` path), chunk by chunk.

Each chunk of scored rows becomes the columns kept from the input, then
``prediction`` (the class of largest posterior), then with ``proba`` one
``proba_<label>`` column per class. Chunks are written as they come, so
memory stays bounded by one chunk.

Probabilities are written in the shortest decimal form that reads back to
the same float64 (polars' float formatting, which is shortest round-trip:
``0.1``, ``1e-300``, ``0.000025``), unless ``digits`` asks for them rounded
to that many decimal places, for people reading them. Labels are written as
they are spelled in the model (booleans as ``True``/``False``).

On a terminal, text cells and column names are shown with control
characters escaped (``\x1b``), so that a label cannot set the window title
or clear the screen; files and pipes get the bytes as they are, because
they are data that another program reads back (an escaped label would no
longer match the model's label in ``nbcli evaluate``).
"""

from __future__ import annotations

import contextlib
import gzip
import io
from typing import IO, Any

import numpy as np

from nbcli.errors import NbcliError
from nbcli.terminal import escape_controls, is_terminal

__all__ = ["PredictionWriter", "is_parquet_path"]


def is_parquet_path(path) -> bool:
    """Whether predictions to ``path`` are written as Parquet (``.parquet``/``.pq``)."""
    return path not in (None, "-") and str(path).lower().endswith((".parquet", ".pq"))


class PredictionWriter:
    """Write scored chunks to one open file.

    Parameters
    ----------
    classes : ndarray of shape (n_classes,)
        The model's class labels, in the order of the posterior columns.
    proba : bool
        Write the posterior probabilities too.
    digits : int or None
        Round probabilities to this many decimal places (0-17); None writes
        each in full (round-trip exact).
    parquet : bool
        Parquet instead of CSV; the file is then opened in binary mode
        (see :attr:`mode`).

    Raises
    ------
    ValueError
        For ``digits`` outside 0-17.
    """

    def __init__(self, classes, *, proba: bool, digits: int | None = None, parquet: bool = False):
        if digits is not None and not 0 <= int(digits) <= 17:
            raise ValueError(f"digits must be between 0 and 17, got {digits}")
        self.classes = np.asarray(classes)
        self.proba = bool(proba)
        self.digits = None if digits is None else int(digits)
        self.parquet = bool(parquet)
        self.rows = 0
        self._parquet_writer: Any = None
        self._labels = _as_text(self.classes) if self.classes.dtype.kind == "b" else self.classes
        self._proba_names = [f"proba_{c}" for c in self.classes.tolist()]

    @classmethod
    def for_path(cls, path, classes, *, proba: bool, digits: int | None = None):
        """A writer for output ``path`` (None or ``"-"``: stdout, CSV).

        Raises NbcliError for a Parquet path without pyarrow, before any row is read.
        """
        parquet = is_parquet_path(path)
        if parquet:
            require_parquet_writer()
        if path not in (None, "-") and str(path).lower().endswith((".parquet.gz", ".pq.gz")):
            raise NbcliError(
                f"{path}: Parquet compresses its columns itself; name the output .parquet, "
                "or .csv.gz for gzip-compressed CSV"
            )
        return cls(classes, proba=proba, digits=digits, parquet=parquet)

    @contextlib.contextmanager
    def opened(self, path):
        """The output file at ``path`` (see :func:`nbcli.io.atomic.atomic_write`),
        gzip-compressed when its name ends with ``.gz``, as the readers take it."""
        from nbcli.io.atomic import atomic_write

        with atomic_write(path, "wb" if str(path).lower().endswith(".gz") else self.mode) as f:
            if not str(path).lower().endswith(".gz"):
                yield f
                return
            with gzip.GzipFile(fileobj=f, mode="wb", compresslevel=6) as packed:
                if self.parquet:
                    yield packed
                else:
                    text = io.TextIOWrapper(packed, encoding="utf-8", newline="")
                    yield text
                    text.flush()
                    text.detach()

    @property
    def mode(self) -> str:
        """How to open the output file: ``"wb"`` for Parquet, ``"w"`` for CSV."""
        return "wb" if self.parquet else "w"

    def frame(self, kept: dict[str, np.ndarray], log_proba: np.ndarray):
        """The output rows of one chunk as a polars DataFrame.

        ``kept`` maps input column names to arrays of shape (n_rows,);
        ``log_proba`` is (n_rows, n_classes) log posteriors.
        """
        import polars as pl

        columns: dict[str, Any] = {name: _column(values) for name, values in kept.items()}
        # A row that could not be scored (NaN posteriors) is written with
        # empty cells, never left out.
        empty = np.isnan(log_proba).all(axis=1) if log_proba.shape[1] else None
        predicted = _column(self._labels[np.argmax(np.nan_to_num(log_proba, nan=-np.inf), axis=1)])
        if empty is not None and empty.any():
            predicted = predicted.scatter(np.flatnonzero(empty), None)
        columns["prediction"] = predicted
        frame = pl.DataFrame(columns)
        if self.proba:
            probs = np.exp(log_proba)
            if self.digits is not None:
                probs = np.round(probs, self.digits)
            probs = np.asarray(probs, dtype=np.float64)
            series = [pl.Series(name, probs[:, k]) for k, name in enumerate(self._proba_names)]
            if empty is not None and empty.any():
                series = [s.fill_nan(None) for s in series]
            if self.digits == 0 and not self.parquet:
                # Rounded to whole numbers they read as 0 and 1, not 0.0 and 1.0.
                series = [s.cast(pl.Int64) for s in series]
            frame = frame.hstack(series)
        return frame

    def write(self, f: IO, kept: dict[str, np.ndarray], log_proba: np.ndarray) -> None:
        """Append one chunk to ``f`` (text stream for CSV, binary for Parquet);
        the CSV header goes out with the first chunk, and on a terminal text
        is shown with control characters escaped."""
        frame = self.frame(kept, log_proba)
        if not self.parquet and is_terminal(f):
            frame = _escaped_frame(frame)
        if self.parquet:
            self._write_parquet(f, frame)
        else:
            header = self.rows == 0
            binary = _binary_layer(f)
            if binary is None:
                f.write(frame.write_csv(include_header=header, line_terminator="\n"))
            else:
                # UTF-8 bytes from the writer straight to the file: a Python
                # string of the chunk, encoded again by the text layer, would
                # cost more than formatting the numbers.
                data = io.BytesIO()
                frame.write_csv(data, include_header=header, line_terminator="\n")
                binary.write(data.getbuffer())
        self.rows += frame.height

    def _write_parquet(self, f: IO, frame) -> None:
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise NbcliError(
                "writing predictions as Parquet needs pyarrow: pip install 'nbcli[fast]'"
            ) from None

        table = frame.to_arrow()
        if self._parquet_writer is None:
            self._parquet_writer = pq.ParquetWriter(f, table.schema)
        self._parquet_writer.write_table(table.cast(self._parquet_writer.schema))

    def close(self, f: IO | None = None) -> None:
        """Finish the file: Parquet's footer (an empty table if no rows came);
        nothing to do for CSV."""
        if not self.parquet:
            return
        if self._parquet_writer is None and f is not None:
            empty = {"prediction": self._labels[:0]}
            self._write_parquet(f, self.frame_from(empty))
        if self._parquet_writer is not None:
            self._parquet_writer.close()
            self._parquet_writer = None

    def frame_from(self, columns: dict[str, np.ndarray]):
        import polars as pl

        frame = pl.DataFrame({k: _column(v) for k, v in columns.items()})
        if self.proba:
            frame = frame.hstack([pl.Series(n, [], dtype=pl.Float64) for n in self._proba_names])
        return frame


def require_parquet_writer() -> None:
    """Refuse Parquet output up front when pyarrow, which writes it chunk by chunk, is missing."""
    import importlib.util

    if importlib.util.find_spec("pyarrow") is None:
        raise NbcliError("writing predictions as Parquet needs pyarrow: pip install 'nbcli[fast]'")


def _binary_layer(f: IO) -> IO | None:
    """The byte stream under ``f``: ``f`` itself when it is binary, the
    buffer of a UTF-8 text stream (flushed first, so that the bytes follow
    what was written as text), or None (write text)."""
    if isinstance(f, (io.RawIOBase, io.BufferedIOBase)):
        return f
    if not isinstance(f, io.TextIOBase):
        return f if "b" in str(getattr(f, "mode", "")) else None
    buffer = getattr(f, "buffer", None)
    encoding = (getattr(f, "encoding", None) or "").lower().replace("-", "").replace("_", "")
    if buffer is None or encoding != "utf8":
        return None
    f.flush()
    return buffer


def _escaped_frame(frame):
    """``frame`` with control characters in its text cells and column names
    escaped (see :func:`nbcli.terminal.escape_controls`)."""
    import polars as pl

    for name, dtype in frame.schema.items():
        if dtype != pl.String:
            continue
        values = frame[name].drop_nulls().unique().to_list()
        shown = {v: escape_controls(v) for v in values}
        changed = {v: e for v, e in shown.items() if e != v}
        if changed:
            frame = frame.with_columns(pl.col(name).replace(changed))
    return frame.rename({name: escape_controls(name) for name in frame.columns})


def _as_text(values: np.ndarray) -> np.ndarray:
    """Booleans spelled as Python spells them (``True``/``False``)."""
    return np.where(values, "True", "False") if values.size else values.astype(str)


def _column(values: np.ndarray):
    """An input array as a polars column: numbers and text natively, booleans
    and other objects by their ``str`` form (None stays empty)."""
    import polars as pl

    values = np.asarray(values)
    kind = values.dtype.kind
    if kind in "iuf":
        return pl.Series(values)
    if kind == "b":
        return pl.Series(_as_text(values))
    if kind == "U":
        return pl.Series(values, dtype=pl.String)
    return pl.Series(
        [None if v is None else (v if isinstance(v, str) else str(v)) for v in values.tolist()],
        dtype=pl.String,
    )
