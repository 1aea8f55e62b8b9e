"""Reading untrusted ``.npz`` archives without unpickling or over-allocating.

Before any array is read, every member's ``.npy`` header (dtype, shape) and
zip directory entry are checked against the bytes the archive really holds,
so a member that declares absurd shapes is refused before memory is
allocated for it; object (pickled) arrays are refused and arrays are read
with ``allow_pickle=False``. Every failure is one :class:`NbcliError` naming
the file.

>>> import numpy as np
>>> from nbcli.io.safe_npz import open_npz
>>> np.savez("arrays.npz", X=np.zeros((3, 2)))
>>> with open_npz("arrays.npz", what="a data file") as archive:
...     archive.headers["X"], archive.read("X").shape
((dtype('float64'), (3, 2)), (3, 2))
"""

from __future__ import annotations

import os
import struct
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from nbcli.errors import NbcliError

# What a damaged archive makes zipfile and NumPy raise. Encrypted members and
# unknown zip versions raise RuntimeError and NotImplementedError.
BROKEN_ARCHIVE = (
    zipfile.BadZipFile,
    zipfile.LargeZipFile,
    EOFError,
    OSError,
    ValueError,
    KeyError,
    NotImplementedError,
    RuntimeError,
    struct.error,
    OverflowError,
)


def refuse(path, why: str):
    """Raise the one-line error ``{path}: {why}``."""
    raise NbcliError(f"{path}: {why}")


def _broken(path, exc: BaseException):
    reason = " ".join(str(exc).split())[:200]
    refuse(path, f"is not a valid .npz archive or is truncated ({type(exc).__name__}: {reason})")


@dataclass
class NpzArchive:
    """An open archive whose member headers have been checked.

    Attributes
    ----------
    path : str or path-like
        For messages.
    headers : dict
        ``{member name without .npy: (dtype, shape)}``, every member.
    """

    path: object
    zf: zipfile.ZipFile
    headers: dict[str, tuple[np.dtype, tuple[int, ...]]]

    def read(self, name: str) -> np.ndarray:
        """The array of member ``name`` (never unpickled).

        Raises
        ------
        NbcliError
            When the member cannot be read (a damaged archive).
        """
        try:
            with self.zf.open(name + ".npy") as fp:
                return np.lib.format.read_array(fp, allow_pickle=False)
        except BROKEN_ARCHIVE as exc:
            _broken(self.path, exc)
            raise  # unreachable: _broken raises


@contextmanager
def open_npz(path, *, what: str = "an .npz archive", noun: str = "file") -> Iterator[NpzArchive]:
    """Open the ``.npz`` archive at ``path`` and check every member's header.

    Parameters
    ----------
    path : str or path-like
    what : str
        What the file should be, for messages ("an nbcli model file").
    noun : str
        The kind of file, for messages ("model file": "no such model file").

    Yields
    ------
    NpzArchive

    Raises
    ------
    NbcliError
        For a missing, unreadable or non-zip file, and for any member that
        is not a ``.npy`` array, is compressed, encrypted or duplicated,
        holds objects, or declares more bytes than the file holds.
    """
    from nbcli.io.remote import is_url, local_copy

    try:
        # An object in a store is read from its local copy (nbcli.io.remote).
        handle = open(local_copy(path) if is_url(path) else path, "rb")
    except FileNotFoundError:
        refuse(path, f"no such {noun}")
    except IsADirectoryError:
        refuse(path, f"is a folder, not a {noun}")
    except OSError as exc:
        refuse(path, f"cannot read the {noun} ({exc.strerror or exc})")
    with handle:
        try:
            magic = handle.read(4)
            archive_size = os.fstat(handle.fileno()).st_size
        except OSError as exc:
            refuse(path, f"cannot read the {noun} ({exc.strerror or exc})")
        if not magic.startswith(b"PK"):
            refuse(path, f"is not {what} (not an .npz archive)")
        try:
            handle.seek(0)
            zf = zipfile.ZipFile(handle)
        except BROKEN_ARCHIVE as exc:
            _broken(path, exc)
        with zf:
            try:
                headers = read_headers(path, zf, archive_size, what=what)
            except BROKEN_ARCHIVE as exc:
                _broken(path, exc)
            yield NpzArchive(path, zf, headers)


def read_headers(
    path, zf: zipfile.ZipFile, archive_size: int, *, what: str = "an .npz archive"
) -> dict[str, tuple[np.dtype, tuple[int, ...]]]:
    """Dtype and shape of every member, read from the ``.npy`` headers only.

    Every size is checked against the bytes the archive really holds, so a
    member whose header (or zip directory entry) declares more data than
    the file contains is refused before anything is allocated for it.
    Archive errors other than those refused here propagate (see
    :data:`BROKEN_ARCHIVE`); :func:`open_npz` turns them into one line.
    """
    headers: dict[str, tuple[np.dtype, tuple[int, ...]]] = {}
    for info in zf.infolist():
        if not info.filename.endswith(".npy"):
            refuse(path, f"member {info.filename!r} is not a NumPy array; not {what}")
        name = info.filename[:-4]
        if name in headers:
            refuse(path, f"holds member {name!r} twice; the file is corrupt")
        if info.flag_bits & 0x1:
            refuse(path, f"member {name!r} is encrypted; {what} is not")
        if info.compress_type != zipfile.ZIP_STORED:
            refuse(path, f"member {name!r} is compressed; {what} stores arrays uncompressed")
        if (
            info.file_size != info.compress_size
            or info.header_offset + info.compress_size > archive_size
        ):
            refuse(
                path,
                f"member {name!r} declares {info.file_size} bytes, more than the file "
                "holds; the file is truncated or corrupt",
            )
        with zf.open(info) as fp:
            try:
                version = np.lib.format.read_magic(fp)
                if version == (1, 0):
                    shape, _, dtype = np.lib.format.read_array_header_1_0(fp)
                elif version == (2, 0):
                    shape, _, dtype = np.lib.format.read_array_header_2_0(fp)
                else:
                    raise ValueError(f"unsupported .npy version {version}")
            except (ValueError, TypeError, SyntaxError, RecursionError) as exc:
                reason = " ".join(str(exc).split())[:200]
                refuse(path, f"member {name!r} has an invalid array header ({reason})")
            header_len = fp.tell()
        if dtype.hasobject:
            refuse(
                path,
                f"member {name!r} holds object arrays (pickled data), which nbcli refuses to load",
            )
        nbytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
        if any(n < 0 for n in shape) or nbytes != info.file_size - header_len:
            refuse(
                path,
                f"member {name!r} declares shape {shape} ({nbytes} bytes) but holds "
                f"{info.file_size - header_len} bytes; the file is corrupt",
            )
        headers[name] = (dtype, tuple(shape))
    return headers
