"""The readers of every data format, and the one place a source is opened.

Importing this module imports the format modules (:mod:`nbcli.io.csv_format`,
:mod:`nbcli.io.npz_format`, :mod:`nbcli.io.parquet_format`,
:mod:`nbcli.io.feather_format`, :mod:`nbcli.io.arff_format`,
:mod:`nbcli.io.svmlight_format`), which register
their readers with :func:`nbcli.io.readers.register`; :func:`open_reader`
picks the reader of a source's format. Kept apart from
:mod:`nbcli.io.readers`, which the format modules import, so that no module
imports one that imports it.
"""

from __future__ import annotations

from nbcli.errors import NbcliError
from nbcli.io import (  # noqa: F401  (registers readers)
    arff_format,
    csv_format,
    feather_format,
    npz_format,
    parquet_format,
    svmlight_format,
)
from nbcli.io.plan import CATEGORICAL, NUMERIC, WORDS
from nbcli.io.readers import _READERS, TableReader
from nbcli.io.request import DataRequest
from nbcli.io.sources import Source

__all__ = ["open_reader"]


def open_reader(source: Source, opts: DataRequest, delimiter: str | None = None) -> TableReader:
    """The reader of ``source``'s format, with its plan made."""
    reader = _READERS[source.format](source, opts, delimiter)
    other = {
        c: k
        for c, k in reader.plan.kinds.items()
        if k not in (NUMERIC, WORDS) and not (k == CATEGORICAL and c in reader.encoders)
    }
    if WORDS in reader.plan.kinds.values() and source.format in ("npz", "svmlight"):
        name = next(c for c, k in reader.plan.kinds.items() if k == WORDS)
        what = "an NPZ archive" if source.format == "npz" else "an svmlight file"
        raise NbcliError(
            f"{source.display}: column {name!r}: {what} holds numbers only; "
            "text columns are read from CSV, Parquet, Feather or ARFF"
        )
    if other:
        # Kinds are planned here; a reader converts those it has tables for
        # (categories in CSV and Parquet; word columns come with their reader).
        name, kind = next(iter(other.items()))
        raise NbcliError(f"{source.display}: column {name!r}: {kind} columns are not read yet")
    return reader
