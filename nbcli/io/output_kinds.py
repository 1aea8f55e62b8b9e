"""What kind of nbcli output a file already is, recognised by its content.

An output replaces an earlier output of the same kind and never, unless
``--force`` is given, a file of another kind (a model file with a CSV, a
training CSV with predictions, a data file with JSON). The kinds:

``model``
    an nbcli model file (a zip archive holding ``metadata.npy``);
``predictions``
    a predictions table: CSV (or Parquet) laid out as ``nbcli predict``
    writes it: the ``--keep`` copies, then ``prediction``, then only
    ``proba_<label>`` columns, names unique (a data table whose
    ``prediction`` column is followed by any other column is data);
``json``
    a JSON report: an object whose ``schema`` starts with ``nbcli.``;
``plot``
    a PNG or SVG image.

Only the first few kilobytes of a file are read, so recognising a large file
is cheap. An empty file is an output of every kind (it holds nothing to lose).
"""

from __future__ import annotations

import contextlib
import csv
import io
import json
import os
import stat
import zipfile

__all__ = ["KINDS", "KIND_NAMES", "file_kind", "is_model_file", "option_kind"]


def is_model_file(path) -> bool:
    """Whether ``path`` looks like an nbcli model file: a zip archive holding
    a ``metadata.npy`` member (a cheap test; loading checks the rest)."""
    try:
        with zipfile.ZipFile(path) as archive:
            return "metadata.npy" in archive.namelist()
    except (OSError, zipfile.BadZipFile, ValueError, EOFError):
        return False


KINDS = ("model", "predictions", "json", "plot", "onnx")

#: How each kind is named in messages.
KIND_NAMES = {
    "model": "an nbcli model file",
    "predictions": "an nbcli predictions file",
    "json": "an nbcli JSON report",
    "plot": "a PNG or SVG plot",
    "onnx": "an ONNX graph exported by nbcli",
}

_HEAD = 64 * 1024
_PNG = b"\x89PNG\r\n\x1a\n"
_DELIMITERS = (",", ";", "\t", "|")


def option_kind(option: str) -> str | None:
    """The kind an option writes when the command does not say (``--json``,
    ``--plot``); None for options nbcli cannot tell from their name."""
    if option == "--json":
        return "json"
    if option == "--plot":
        return "plot"
    return None


def _is_json_report(head: bytes, size: int) -> bool:
    text = head.lstrip()
    if not text.startswith(b"{"):
        return False
    # A report names its schema near its start; a whole (small) document is
    # parsed, a large one searched for the member in its first part.
    if size <= _HEAD:
        try:
            document = json.loads(head.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            return False
        schema = document.get("schema") if isinstance(document, dict) else None
        return isinstance(schema, str) and schema.startswith("nbcli.")
    return b'"schema": "nbcli.' in head or b'"schema":"nbcli.' in head


def _is_plot(head: bytes) -> bool:
    if head.startswith(_PNG):
        return True
    text = head.lstrip()[:4096].lower()
    return text.startswith((b"<?xml", b"<svg", b"<!doctype svg")) and b"<svg" in text


def _is_predictions_layout(names: list[str]) -> bool:
    # What predict writes: kept input columns, then "prediction", then one
    # "proba_<label>" column per class and nothing else.
    if "prediction" not in names or len(set(names)) != len(names):
        return False
    after = names[names.index("prediction") + 1 :]
    return all(name.startswith("proba_") for name in after)


def _csv_header_is_predictions(head: bytes) -> bool:
    # The header is read as CSV, so a quoted name ("proba_a,b" for a label
    # holding the delimiter, a quote or a line break) is one column.
    try:
        text = head.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        if exc.start < len(head) - 3:  # not merely a character cut at the end of the head
            return False
        text = head[: exc.start].decode("utf-8-sig")
    for delimiter in _DELIMITERS:
        try:
            row = next(csv.reader(io.StringIO(text, newline=""), delimiter=delimiter), [])
        except csv.Error:
            continue
        names = [name.strip() for name in row]
        if "prediction" in names:
            return _is_predictions_layout(names)
    return False


def _parquet_is_predictions(path) -> bool:
    try:
        import pyarrow.parquet as pq

        return _is_predictions_layout(list(pq.read_schema(path).names))
    except Exception:  # not Parquet after all, or unreadable
        return False


def file_kind(path) -> str | None:
    """The kind of nbcli output ``path`` holds.

    Parameters
    ----------
    path : str or Path
        An existing file (a missing one, a device or a folder gives None).

    Returns
    -------
    str or None
        ``"empty"`` for an empty regular file, one of :data:`KINDS`, or None
        for anything else (data, text, another program's files).
    """
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    if st.st_size == 0:
        return "empty"
    head = b""
    with contextlib.suppress(OSError), open(path, "rb") as f:
        head = f.read(_HEAD)
    if head.startswith(b"\x1f\x8b"):
        # A gzip-compressed output (predictions.csv.gz): its kind is that of its start.
        import gzip

        with contextlib.suppress(OSError, EOFError), gzip.open(path, "rb") as f:
            head = f.read(_HEAD)
    if head.startswith(b"PK") and is_model_file(path):
        return "model"
    if _is_plot(head):
        return "plot"
    if head.startswith(b"\x08") and b"\x12\x05nbcli" in head[:16]:
        # An ONNX ModelProto: ir_version (field 1), then producer_name (field 2) "nbcli".
        return "onnx"
    if _is_json_report(head, st.st_size):
        return "json"
    if head.startswith(b"PAR1"):
        return "predictions" if _parquet_is_predictions(path) else None
    if _csv_header_is_predictions(head):
        return "predictions"
    return None
