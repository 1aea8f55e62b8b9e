"""Parquet: read through polars' streaming Parquet scan, in row batches.

Columns keep their stored types: numeric and boolean features become
float64 (a null is a missing cell), text features are parsed like CSV cells,
and any other type (dates, categories) is not a number. Labels keep their
stored type (:func:`nbcli.io.cells.typed_labels`).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator

import numpy as np

from nbcli.errors import NbcliError
from nbcli.io.cells import (
    features_of,
    missing_labels,
    na_texts,
    note_spellings,
    typed_labels,
    without_na_labels,
)
from nbcli.io.messages import (
    error_from_exception,
    fail,
    interruption_in,
    refuse_repeated,
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

__all__ = ["ParquetReader"]


def _pandas_index_columns(source: Source) -> list[str]:
    """Columns the pandas metadata of a Parquet file names its index.

    ``DataFrame.to_parquet`` stores a non-range index as a column
    (``__index_level_0__``, or the index's name) and lists it under
    ``index_columns`` in the file's ``pandas`` key-value metadata; a range index
    is stored as a description (a dict), not a column. A sampled or sorted
    frame's index follows the row order, so as a feature it would leak the
    label. Metadata that cannot be read or parsed name no column: the data
    are read as they are.
    """
    import polars as pl

    try:
        metadata = pl.read_parquet_metadata(source.file_or_buffer())
        pandas_meta = json.loads(metadata.get("pandas", "{}"))
        index = pandas_meta.get("index_columns", []) if isinstance(pandas_meta, dict) else []
    except Exception:  # the polars scan reports a damaged file itself
        return []
    return [c for c in index if isinstance(c, str)] if isinstance(index, list) else []


@register
class ParquetReader(TableReader):
    """Reads a Parquet source whole or in batches of rows."""

    format = "parquet"
    #: The format's name in messages.
    format_name = "Parquet"

    def __init__(self, source: Source, opts: DataRequest, delimiter: str | None = None):
        self.source = source
        display = source.display
        try:
            schema, n_rows = self._schema_and_rows()
            columns = list(schema.names())
        except NbcliError:
            raise
        except Exception as exc:
            raise self._error(exc) from exc
        refuse_repeated(
            display,
            columns,
            "has repeated column names: {names}; give every column a distinct name",
        )
        if n_rows == 0:
            raise fail(display, "has no data rows; write the table with its rows")
        self.opts = opts
        self.plan: ColumnPlan = plan_columns(columns, opts, display)
        used = [*self.plan.features, self.plan.target, *self.plan.keep]
        nested = [c for c in used if c is not None and schema[c].is_nested()]
        if nested:
            kinds = ", ".join(f"{c!r} ({schema[c]})" for c in nested[:3])
            raise fail(
                display,
                f"column{'s' if len(nested) > 1 else ''} {kinds} hold{'' if len(nested) > 1 else 's'} "
                "lists or records in each cell, which nbcli does not read; leave "
                f"{'them' if len(nested) > 1 else 'it'} out with --drop {','.join(nested)}",
            )
        declared = tuple(c for c in self._index_columns() if c in self.plan.features)
        if declared:
            self.plan = dataclasses.replace(self.plan, declared_index=declared)
        self.plan, self.encoders = finish_plan(self.plan, opts, display, self._sample)
        self.label_spellings = {}

    def _scan(self):
        """A polars LazyFrame of the whole file (subclasses: their format's scan)."""
        import polars as pl

        return pl.scan_parquet(self.source.file_or_buffer())

    def _schema_and_rows(self):
        """The file's polars schema and its number of data rows."""
        import polars as pl

        lazy = self._scan()
        return lazy.collect_schema(), int(lazy.select(pl.len()).collect().item())

    def _index_columns(self) -> list[str]:
        """Columns the file's metadata names its index (left out as features)."""
        return _pandas_index_columns(self.source)

    @property
    def _columns(self) -> list[str]:
        """The columns read: the features, the target (when it is read), the kept ones."""
        target = self.plan.target if self.read_target else None
        features = self.plan.features if self.read_features else []
        wanted = [*features, target, *self.plan.keep]
        return list(dict.fromkeys(c for c in wanted if c is not None))

    def _sample(self):
        try:
            return self._scan().head(SAMPLE_ROWS).collect()
        except Exception as exc:
            raise self._error(exc) from exc

    def _error(self, exc: BaseException) -> NbcliError:
        interruption = interruption_in(exc)
        if interruption is not None:
            raise interruption
        if isinstance(exc, NbcliError):
            return exc
        if isinstance(exc, OSError) and not type(exc).__module__.startswith("polars"):
            return error_from_exception(exc, self.source.display)
        first_line = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        return fail(self.source.display, f"is not a valid {self.format_name} file ({first_line})")

    def _frames(self, chunk_size: int | None):
        try:
            lazy = self._scan().select(self._columns)
            if chunk_size is None:
                yield lazy.collect()
                return
            batches = iter(lazy.collect_batches(chunk_size=chunk_size))
            while True:
                batch = next(batches, None)
                if batch is None:
                    return
                yield batch
        except NbcliError:
            raise
        except Exception as exc:
            raise self._error(exc) from exc

    def chunks(self, chunk_size: int | None, resolve: bool) -> Iterator[RawChunk]:
        import polars as pl

        display = self.source.display
        offset = 0
        target = self.plan.target if self.read_target else None
        for frame in self._frames(chunk_size):
            if frame.height == 0:
                continue
            if self.read_features:
                X, unread = features_of(
                    frame, self.plan, display, offset, self.encoders, na_texts(self.opts.na_values)
                )
            else:
                X, unread = np.empty((frame.height, 0)), {}
            y, label_error, y_missing = None, None, None
            if target is not None:
                column = frame.get_column(target)
                if column.dtype in (pl.Categorical, pl.Enum):
                    column = column.cast(pl.String)
                column = without_na_labels(column, self.opts.na_labels)
                if self.opts.infer:
                    note_spellings(self.label_spellings, column)
                if column.dtype == pl.String:
                    values = np.asarray(column.to_list(), dtype=object)
                else:
                    values = column.to_numpy()
                if self.opts.skip_missing_labels:
                    y_missing = missing_labels(values)
                    if y_missing.any():
                        values = values.copy()
                        values[y_missing] = "" if values.dtype.kind == "O" else 0
                y, label_error = labels_or_error(typed_labels, values, display, target, offset)
            kept = {
                k: np.asarray(frame.get_column(k).to_list(), dtype=object) for k in self.plan.keep
            }
            yield RawChunk(
                X=X,
                unread=unread,
                y=y,
                kept=kept,
                row_offset=offset,
                label_error=label_error,
                y_missing=y_missing,
                words=words_of(frame, self.plan) if self.read_features else {},
                unseen_text=unseen_text_counts(frame, self.plan, X, unread, self.opts),
            )
            offset += frame.height
