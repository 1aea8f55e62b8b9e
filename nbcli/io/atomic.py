"""Atomic file writing: a reader sees the old file or the new one, never a mix.

The new content goes to a temporary file in the target's own folder (so the
final rename stays on one file system), is flushed and fsync'ed, and is then
renamed over the target with ``os.replace``, which POSIX and Windows both
perform atomically. If anything fails before the rename, the temporary file
is removed and the target is untouched.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from nbcli.errors import NbcliError


def _check_target(path: Path) -> None:
    if path.is_dir():
        raise NbcliError(f"{path}: is a folder; give a file name to write to")
    parent = path.parent
    if not parent.exists():
        raise NbcliError(f"{path}: folder {str(parent)!r} does not exist")
    if not parent.is_dir():
        raise NbcliError(f"{path}: {str(parent)!r} is a file, not a folder; give a path "
                         "inside an existing folder")
    if not os.access(parent, os.W_OK):
        raise NbcliError(f"{path}: cannot write to folder {str(parent)!r} (permission denied)")
    if path.exists() and not os.access(path, os.W_OK):
        raise NbcliError(f"{path}: file is not writable (permission denied)")


def check_writable(path, inputs=()) -> None:
    """Check, before any work is done, that ``path`` can be written and is
    none of the ``inputs`` (paths being read; ``-`` is skipped).

    Raises
    ------
    NbcliError
        When the target is a folder, its folder is missing or not writable,
        or it is the same file as one of the inputs, which it would replace.
    """
    target = Path(path)
    _check_target(target)
    if not target.exists():
        return
    for source in inputs:
        if source == "-":
            continue
        with contextlib.suppress(OSError):
            if os.path.samefile(source, target):
                raise NbcliError(f"{path}: is also an input ({source}); writing there would "
                                 "replace it: choose another output path")


@contextlib.contextmanager
def atomic_write(path, mode: str = "wb"):
    """Open a temporary file that replaces ``path`` when the block ends without error.

    Parameters
    ----------
    path : str or Path
        Target file. Its folder must exist and be writable.
    mode : {"wb", "w"}
        Binary or text (UTF-8, ``newline=""``) mode.

    Yields
    ------
    file object
        Write the whole content to it; do not close it.

    Raises
    ------
    NbcliError
        When the target is a folder, its folder is missing, or it cannot be
        written (checked before anything is written), or when writing fails
        (disk full...). The target is left as it was.
    """
    path = Path(path)
    _check_target(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        # The checks above cannot see everything (read-only file systems,
        # access rules that os.access does not model, a folder that just went).
        raise NbcliError(f"{path}: cannot create a file in folder {str(path.parent)!r} "
                         f"({exc.strerror or exc})") from None
    try:
        if "b" in mode:
            f = os.fdopen(fd, mode)
        else:
            f = os.fdopen(fd, mode, encoding="utf-8", newline="")
        with f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        if path.exists():
            # Keep the permissions of the file being replaced.
            with contextlib.suppress(OSError):
                os.chmod(tmp, path.stat().st_mode & 0o7777)
        else:
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except OSError as exc:
        _remove_quietly(tmp)
        raise NbcliError(f"{path}: could not write the file ({exc.strerror or exc})") from None
    except BaseException:
        _remove_quietly(tmp)
        raise


def _remove_quietly(tmp: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(tmp)
