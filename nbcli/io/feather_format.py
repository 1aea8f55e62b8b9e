"""Arrow IPC (Feather v2) files, read through polars' streaming IPC scan.

Everything but the scan is the Parquet reader's: columns keep their stored
types, a dictionary (categorical) column is a categorical feature, labels
keep their stored type.
"""

from __future__ import annotations

from nbcli.io.parquet_format import ParquetReader
from nbcli.io.readers import register

__all__ = ["FeatherReader"]


@register
class FeatherReader(ParquetReader):
    """Reads an Arrow IPC (Feather) file whole or in batches of rows."""

    format = "feather"
    format_name = "Arrow IPC (Feather)"

    def _scan(self):
        import polars as pl

        return pl.scan_ipc(self.source.file_or_buffer())

    def _index_columns(self) -> list[str]:
        # pandas writes Feather only with a default index, stored as nothing.
        return []
