"""Where data comes from: files, stdin, named pipes, ``<(...)``; compression sniffing.

Formats are chosen by extension: ``.npz`` is a NumPy archive, ``.parquet`` /
``.pq`` is Parquet, ``.feather`` / ``.arrow`` / ``.ipc`` is Arrow IPC,
``.arff`` is ARFF, ``.svm`` / ``.svmlight`` / ``.libsvm`` is svmlight,
everything else is CSV, gzip-compressed when the file
starts with the gzip magic bytes (``.csv.gz``, ``.gz``); bz2, xz, zstd and
zip are recognised by theirs and refused with a message. ``-`` is stdin,
read once and kept in memory, as are named pipes, ``/dev/stdin`` and process
substitutions ``<(...)``; their format is told by their content.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import re
import stat
import sys
import zlib

from nbcli.errors import NbcliError
from nbcli.io.messages import error_from_exception, fail, translated
from nbcli.io.remote import is_url, local_copy

__all__ = ["Source", "file_sha256"]

_GZIP_MAGIC = b"\x1f\x8b"
_ZIP_MAGIC = b"PK\x03\x04"
_PARQUET_MAGIC = b"PAR1"
_ARROW_MAGIC = b"ARROW1"
#: Text formats told by their extension (gzip-compressed or not); anything else is CSV.
TEXT_FORMATS = {
    "arff": (".arff",),
    "svmlight": (".svm", ".svmlight", ".libsvm"),
}


def _text_format(name: str) -> str:
    """The text format a (lower-case) file name names: CSV unless its extension says."""
    stem = name[: -len(".gz")] if name.endswith(".gz") else name
    for fmt, suffixes in TEXT_FORMATS.items():
        if stem.endswith(suffixes):
            return fmt
    return "csv"


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


_stdin_cache: tuple[object, bytes] | None = None
# Contents of pipes and devices, which can be read only once, by (path, device, inode).
_stream_cache: dict[tuple[str, int, int], bytes] = {}


#: The longest line of text read from a pipe or device, in bytes (see
#: :data:`nbcli.io.csv_format.MAX_LINE_CHARS`): /dev/zero fails fast.
MAX_LINE_BYTES = 100_000_000
_BLOCK = 1 << 20


def read_bounded(stream, display: str) -> bytes:
    """All of a pipe or device, refused as soon as it cannot be text data.

    Text (anything but gzip, zip or Parquet bytes) must be UTF-8 and have no
    line longer than :data:`MAX_LINE_BYTES`; a device such as ``/dev/zero``
    (one endless line) or ``/dev/urandom`` (not UTF-8) is refused after at
    most that many bytes instead of filling memory.

    Raises
    ------
    NbcliError
        For a line that is too long or bytes that are not UTF-8.
    """
    import codecs

    blocks: list[bytes] = []
    decoder = None
    run = 0  # bytes since the last newline
    line = 1
    while True:
        block = stream.read(_BLOCK)
        if not block:
            break
        if isinstance(block, str):
            block = block.encode("utf-8")
        if not blocks and not block.startswith((_GZIP_MAGIC, _ZIP_MAGIC, _PARQUET_MAGIC)):
            decoder = codecs.getincrementaldecoder("utf-8")()
        blocks.append(block)
        if decoder is None:
            continue
        try:
            decoder.decode(block)
        except UnicodeDecodeError:
            raise fail(display, f"is not UTF-8 text (near line {line}); give a CSV file") from None
        newlines = block.count(b"\n")
        line += newlines
        run = len(block) - block.rfind(b"\n") - 1 if newlines else run + len(block)
        if run > MAX_LINE_BYTES:
            raise fail(
                display,
                f"line {line} is longer than {MAX_LINE_BYTES // 1_000_000} MB; this is not a "
                "CSV file (a device such as /dev/zero, or binary data?)",
            )
    return b"".join(blocks)


def _stdin_bytes() -> bytes:
    """All of stdin, read once; later calls return the same bytes."""
    global _stdin_cache
    stream = getattr(sys.stdin, "buffer", sys.stdin)
    if stream is None:  # started with stdin closed (<&-)
        raise fail("<stdin>", "is closed; give a file path, or pipe the data in")
    if _stdin_cache is None or _stdin_cache[0] is not stream:
        try:
            data = read_bounded(stream, "<stdin>")
        except (OSError, ValueError) as exc:
            raise fail("<stdin>", f"cannot be read ({exc})") from exc
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
        with translated(path):
            with open(path, "rb") as handle:
                _stream_cache[key] = read_bounded(handle, path)
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


def _is_json(name: str, start: bytes) -> bool:
    """Whether a text source is JSON (an nbcli report given as data, say): its
    name says so, or it opens an object with a quoted key, which no CSV header
    of plain column names does."""
    head = start.lstrip(b"\xef\xbb\xbf \t\r\n")
    named = name.endswith((".json", ".json.gz", ".jsonl", ".ndjson"))
    return named or re.match(rb'\{\s*"', head) is not None


def _json_refusal(display: str) -> NbcliError:
    return fail(
        display,
        "is JSON (such as an nbcli --json report), not a table of rows; give the data as "
        "CSV, TSV, Parquet, Feather, NPZ, ARFF or svmlight",
    )


def _holds_arrays(path: str) -> bool:
    """Whether the ZIP archive at ``path`` holds NumPy arrays (an NPZ archive by
    another name), rather than, say, a zipped CSV."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
    except (OSError, zipfile.BadZipFile):
        return False
    return bool(names) and all(n.endswith(".npy") for n in names)


class Source:
    """Where the data comes from: a path or stdin, its format and compression.

    Stdin, named pipes and devices (``/dev/stdin``, ``<(...)``) can be read
    only once, so they are read whole into memory and their format is told
    by their content; regular files are opened afresh for each pass.
    """

    def __init__(self, path):
        self.path = "-" if path == "-" else os.fspath(path)
        self.display = "<stdin>" if self.path == "-" else self.path
        if is_url(self.path):
            # Read from a local copy of the object (see nbcli.io.remote).
            from nbcli.io.remote import shown

            self.display = shown(self.path)
            self.path = local_copy(self.path)
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
        with translated(self.display):
            with open(self.path, "rb") as handle:
                magic = handle.read(_MAGIC_BYTES)
                tail = b""
                if magic.startswith(_PARQUET_MAGIC):
                    handle.seek(0, os.SEEK_END)
                    if handle.tell() >= 2 * len(_PARQUET_MAGIC):
                        handle.seek(-len(_PARQUET_MAGIC), os.SEEK_END)
                        tail = handle.read()
        name = self.path.lower()
        # The name tells, or else the content: a Parquet file begins and ends
        # with its magic (one saved without its extension, or given as
        # /dev/stdin redirected from a file), an NPZ archive is a ZIP file.
        if name.endswith(".npz") or (
            magic.startswith(_ZIP_MAGIC)
            and not name.endswith((".parquet", ".pq"))
            and _holds_arrays(self.path)
        ):
            self.format = "npz"
        elif name.endswith((".parquet", ".pq")) or tail == _PARQUET_MAGIC:
            self.format = "parquet"
        elif name.endswith((".feather", ".arrow", ".ipc")) or magic.startswith(_ARROW_MAGIC):
            self.format = "feather"
        else:
            self.format = _text_format(name)
            self.gzipped = magic[:2] == _GZIP_MAGIC
            other = _compression(magic)
            if other is not None:
                raise _unreadable_compression(self.display, other)
            if _is_json(name, magic):
                raise _json_refusal(self.display)

    def _from_bytes(self, data: bytes) -> None:
        """Take the content from memory; its format is told by its first bytes."""
        if data[:2] == _GZIP_MAGIC:
            try:
                data = gzip.decompress(data)
            except (OSError, EOFError, zlib.error) as exc:
                raise error_from_exception(exc, self.display) from exc
        self._data = data
        if data.startswith(_ZIP_MAGIC):
            self.format = "npz"
        elif data.startswith(_PARQUET_MAGIC):
            self.format = "parquet"
        elif data.startswith(_ARROW_MAGIC):
            self.format = "feather"
        else:
            other = _compression(data[:_MAGIC_BYTES])
            if other is not None:
                raise _unreadable_compression(self.display, other)
            if _is_json("", data[:_MAGIC_BYTES]):
                raise _json_refusal(self.display)
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
    if is_url(path):
        path = local_copy(path)
    display = os.fspath(path)
    key = _stream_key(display)
    if key is not None:
        return hashlib.sha256(_stream_bytes(display, key)).hexdigest()
    digest = hashlib.sha256()
    with translated(display):
        with open(path, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def polars_input(source: Source):
    """What polars should read: the path of a regular file (polars maps it and
    decompresses gzip itself), or the bytes held in memory."""
    return source.file_or_buffer()
