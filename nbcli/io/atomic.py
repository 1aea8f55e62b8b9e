"""Writing output files safely: atomically, and never over an input.

A regular file is replaced atomically: a reader sees the old file or the new
one, never a mix. The new content goes to a temporary file in the target's
own folder (so the final rename stays on one file system), is flushed and
fsync'ed, and is then renamed over the target with ``os.replace``, which
POSIX and Windows both perform atomically. If anything fails before the
rename, the temporary file is removed and the target is untouched.

A symbolic link is followed: the file it points to is replaced and the link
stays. A target that exists and is not a regular file (a character device
such as ``/dev/null``, a named pipe, ``/dev/stdout``) is written directly,
since it cannot be replaced and atomicity means nothing for it.

:func:`check_outputs` checks every output of a command before any work is
done: each must be writable, none may be one of the inputs, and no two may
be the same file.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import re
import stat
import sys
import tempfile
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from nbcli import interrupts
from nbcli.errors import NbcliError
from nbcli.io.output_kinds import KIND_NAMES, file_kind, option_kind

# Links in these folders stand for a process's open file descriptors
# (``/dev/stdout`` -> ``/proc/self/fd/1``); what they point to is not a path.
_FD_FOLDER = re.compile(r"^/proc/(self|thread-self|\d+)(/task/\d+)?/fd$")
_MAX_LINKS = 40


class ReaderGone(Exception):
    """The reader of a pipe being written to (stdout, a named pipe) has gone
    away, as in ``nbcli predict ... | head``: the command stops quietly.

    Not an ``OSError``, so that nothing on the way up mistakes it for a
    file-system error.
    """


def _fd_folder(path: str) -> str | None:
    """The resolved ``/proc/PID/fd`` folder ``path`` lies in, if it names a descriptor."""
    folder = os.path.dirname(path)
    with contextlib.suppress(OSError):
        folder = os.path.realpath(folder)
    return folder if _FD_FOLDER.match(folder) else None


def _own_descriptor(path) -> int | None:
    """The descriptor number when ``path`` is one of this process's own
    (``/dev/stdout``, ``/dev/fd/3``, ``/proc/self/fd/1``), else None."""
    folder = _fd_folder(os.path.abspath(os.fspath(path)))
    name = os.path.basename(os.fspath(path))
    if folder is None or not name.isdigit():
        return None
    pid = folder.split("/")[2]
    return int(name) if pid in (str(os.getpid()), "self", "thread-self") else None


def writes_to_stdout(path) -> bool:
    """Whether writing ``path`` lands on this process's stdout (``/dev/stdout``,
    or a device or pipe that stdout is also connected to)."""
    if path in (None, "-"):
        return path == "-"
    try:
        target, direct = resolve_output(path)
        if not direct:
            return False
        here, there = os.fstat(1), os.stat(target)
    except (OSError, NbcliError):
        return False
    return (here.st_dev, here.st_ino) == (there.st_dev, there.st_ino)


def resolve_output(path) -> tuple[Path, bool]:
    """Where writing ``path`` really goes: ``(target, direct)``.

    Symbolic links are followed to the file they name (which may not exist
    yet). ``direct`` is True when the target exists and is not a regular file
    or folder (a device, a named pipe, a socket), or is an open file
    descriptor (``/dev/stdout``, ``/dev/fd/N``): it is then written in place.

    Raises
    ------
    NbcliError
        For a loop of symbolic links.
    """
    current = os.path.abspath(os.fspath(path))
    for _ in range(_MAX_LINKS):
        if _fd_folder(current) is not None:
            return Path(current), True
        if not os.path.islink(current):
            break
        link = os.readlink(current)
        current = os.path.join(os.path.dirname(current), link)
    else:
        raise NbcliError(f"{path}: too many levels of symbolic links")
    target = Path(current)
    try:
        mode = os.stat(target).st_mode
    except OSError:
        return target, False
    return target, not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _check_target(path: Path, shown=None) -> None:
    shown = path if shown is None else shown
    if path.is_dir():
        raise NbcliError(f"{shown}: is a folder; give a file name to write to")
    parent = path.parent
    if not parent.exists():
        raise NbcliError(f"{shown}: folder {str(parent)!r} does not exist")
    if not parent.is_dir():
        raise NbcliError(
            f"{shown}: {str(parent)!r} is a file, not a folder; give a path "
            "inside an existing folder"
        )
    if not os.access(parent, os.W_OK):
        raise NbcliError(f"{shown}: cannot write to folder {str(parent)!r} (permission denied)")
    if path.exists() and not os.access(path, os.W_OK):
        raise NbcliError(f"{shown}: file is not writable (permission denied)")


def _temporary_beside(path: Path, shown) -> tuple[int, str]:
    """A new temporary file in ``path``'s folder: ``(descriptor, name)``.

    Raises NbcliError when the folder refuses it: permission bits do not
    tell of read-only file systems, access rules that ``os.access`` does not
    model, or folders such as /sys that refuse new files to every user.
    """
    try:
        return tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise NbcliError(
            f"{shown}: cannot create a file in folder {str(path.parent)!r} ({exc.strerror or exc})"
        ) from None


def _probe_folder(path: Path, shown) -> None:
    """Create and remove a file beside ``path``, so that a folder that refuses
    new files is found before any work, not when the output is written."""
    fd, probe = _temporary_beside(path, shown)
    os.close(fd)
    _remove_quietly(probe)


def _regular_file(path: Path) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return False


def _identity(path) -> tuple:
    """What makes two paths one file: device and inode where the file exists,
    else the resolved path (two paths to a file that does not exist yet are
    the same file when they resolve alike; an existing file and a missing
    one never are)."""
    if isinstance(path, str) and "://" in path:
        return ("url", path)
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return ("path", os.path.realpath(path))
    return ("inode", st.st_dev, st.st_ino)


def _stdout_closed() -> bool:
    stream = getattr(sys.stdout, "wrapped", sys.stdout)
    return stream is None or bool(getattr(stream, "closed", False))


_DATA_SUFFIXES = (".csv", ".tsv", ".txt", ".parquet", ".json", ".gz")


def _data_suffix(path: str) -> str | None:
    """The data-file suffix that ``path`` ends in (``.csv``), or None."""
    lower = os.fspath(path).lower()
    return next((s for s in _DATA_SUFFIXES if lower.endswith(s)), None)


def check_outputs(
    outputs: Iterable[tuple[str, str | None]],
    inputs: Iterable[tuple[str, str | None]] = (),
    *,
    models: Iterable[str] = (),
    kinds: Mapping[str, str] | None = None,
    force: bool = False,
) -> None:
    """Check, before any work is done, every output path of a command.

    Parameters
    ----------
    outputs : iterable of (option, path)
        What the command will write, e.g. ``("--json", "r.json")``. ``None``
        (not asked for) is skipped; ``"-"`` is stdout, which must be open.
    inputs : iterable of (option, path)
        What the command reads (model, data, config); ``None`` and ``"-"``
        are skipped.
    models : iterable of str
        The options among ``outputs`` that write a model file (kind
        ``model``); such an output cannot be stdout.
    kinds : mapping of option to kind, optional
        The kind of output each option writes (see
        :mod:`nbcli.io.output_kinds`: ``model``, ``predictions``, ``json``,
        ``plot``). ``--json`` and ``--plot`` have their kind by default. An
        output may replace an existing file of its own kind or an empty
        file, never a file of another kind.
    force : bool
        Replace a file of another kind all the same (``--force``).

    Raises
    ------
    NbcliError
        When an output's folder is missing or not writable, it is a folder,
        it is an existing regular file of another kind than the output (and
        ``force`` is False), it names the same file as an input (which it would
        replace) or as another output, it is ``-`` while stdout is closed,
        two outputs go to stdout (``-`` or ``/dev/stdout``), or a model
        output is not a regular file (``/dev/null``, a pipe: a zip archive
        needs a seekable file).
        Devices and named pipes are written in place, never replaced, so
        they are not compared with anything.
    """
    model_options = set(models)
    kind_of = {option: "model" for option in model_options}
    kind_of.update(kinds or {})
    read: dict[tuple, tuple[str, str]] = {}
    for option, source in inputs:
        if source in (None, "-"):
            continue
        if os.path.exists(source) and not _regular_file(Path(source)):
            continue  # pipes and devices are read, never replaced
        read.setdefault(_identity(source), (option, source))
    written: dict[tuple, tuple[str, str]] = {}
    on_stdout: tuple[str, str] | None = None
    for option, path in outputs:
        if path is None:
            continue
        shown = f"{option} {path}"
        if path == "-" or (writes_to_stdout(path) and os.path.realpath(path) != os.devnull):
            # Two outputs on one stream would be interleaved into neither
            # format (two outputs thrown away in /dev/null lose nothing).
            if on_stdout is not None:
                raise NbcliError(
                    f"{on_stdout[0]} {on_stdout[1]} and {shown} would both go to stdout; "
                    "give a file path to one of them"
                )
            on_stdout = (option, path)
        if path == "-":
            if option in model_options:
                raise NbcliError(
                    f"{option} -: a model file is binary and is not written to "
                    "stdout; give a file path"
                )
            if _stdout_closed():
                raise NbcliError("stdout is closed; give an output file or leave stdout open")
            continue
        from nbcli.io.remote import check_url_output, is_url

        if is_url(path):
            identity = ("url", path)
            if identity in read or identity in written:
                other_option, other = read.get(identity) or written[identity]
                raise NbcliError(
                    f"{shown}: is also {other_option} {other}; give each output its own path"
                )
            kind = kind_of.get(option, option_kind(option))
            if check_url_output(path, shown) and kind is not None and not force:
                from nbcli.io.remote import local_copy

                _check_kind(Path(local_copy(path)), kind, shown)
            written[identity] = (option, path)
            continue
        target, direct = resolve_output(path)
        if direct and option in model_options:
            # A model file is a zip archive, written by seeking back to its
            # central directory: a device or pipe cannot take it.
            raise NbcliError(f"{shown}: a model file must be a regular file")
        if direct:
            continue
        _check_target(target, shown)
        _probe_folder(target, shown)
        identity = _identity(target)
        if identity in read:
            source_option, source = read[identity]
            raise NbcliError(
                f"{shown}: is also an input ({source_option} {source}); "
                "writing there would replace it: choose another output path"
            )
        if identity in written:
            other_option, other = written[identity]
            raise NbcliError(
                f"{shown}: is the same file as {other_option} {other}; give "
                "each output its own path"
            )
        kind = kind_of.get(option, option_kind(option))
        if kind is not None and not force:
            _check_kind(target, kind, shown)
        if option in model_options and not force and _data_suffix(path):
            # Read back as data, such a file would be refused as a zip archive.
            raise NbcliError(
                f"{shown}: a model file is an .npz archive, not {_data_suffix(path)} data; "
                "give a name ending in .npz (--force writes it under this name all the same)"
            )
        if option in model_options and not force and os.fspath(path).lower().endswith(".onnx"):
            # An ONNX runtime would refuse it as a broken graph, and export then
            # would not replace a file of another kind under that name.
            raise NbcliError(
                f"{shown}: a model file is an .npz archive, not an ONNX graph; give a name "
                "ending in .npz and write the graph with nbcli export MODEL.npz -o "
                f"{os.path.basename(os.fspath(path))} (--force writes the .npz under this "
                "name all the same)"
            )
        written[identity] = (option, path)


def _check_kind(target: Path, kind: str, shown: str) -> None:
    """Refuse to replace an existing file of another kind than ``kind``."""
    if not _regular_file(target):
        return
    found = file_kind(target)
    if found in (kind, "empty"):
        return
    what = KIND_NAMES[found] if found is not None else "another kind of file"
    raise NbcliError(
        f"{shown}: exists and is not {KIND_NAMES[kind]} (it is {what}); remove it, "
        "choose another path, or give --force to replace it"
    )


@contextlib.contextmanager
def atomic_write(path, mode: str = "wb", *, staged: list | None = None):
    """Open a temporary file that replaces ``path`` when the block ends without error.

    Parameters
    ----------
    path : str or Path
        Target file. Its folder must exist and be writable. A symbolic link
        is followed (the file it names is replaced, the link kept); an
        existing device or named pipe is written in place.
    mode : {"wb", "w"}
        Binary or text (UTF-8, ``newline=""``) mode.
    staged : list, optional
        Instead of replacing ``path``, append ``(temporary file, path)`` to
        it: :func:`atomic_group` replaces its files together. Within
        :func:`staging`, the list it was given.

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
    ReaderGone
        When the target is a pipe whose reader has gone away.
    """
    shown = path
    if staged is None:
        staged = _TOGETHER.get()
    from nbcli.io.remote import is_url

    if is_url(os.fspath(path)):
        with _write_for_upload(os.fspath(path), mode, staged) as f:
            yield f
        return
    path, direct = resolve_output(path)
    if direct:
        with _write_in_place(path, mode, shown) as f:
            yield f
        return
    _check_target(path, shown)

    def settle(f, tmp: str) -> None:
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

    with _through_temporary(
        path, shown, mode, staged, lambda: _temporary_beside(path, shown), settle
    ) as f:
        yield f


@contextlib.contextmanager
def _write_for_upload(url: str, mode: str, staged: list | None):
    """:func:`atomic_write` for a URL: a local temporary file, uploaded whole
    once written (or staged, as a file beside its target is)."""
    name = url.rstrip("/").rsplit("/", 1)[-1]

    def make() -> tuple[int, str]:
        return tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp")

    with _through_temporary(url, url, mode, staged, make) as f:
        yield f


@contextlib.contextmanager
def _through_temporary(target, shown, mode: str, staged: list | None, make, settle=None):
    """A file on the new temporary file ``make()`` returns ``(fd, name)`` of;
    once written (and ``settle(file, name)`` done while it is open), the
    temporary file replaces ``target``, or is staged (see :func:`atomic_write`).

    On any failure the temporary file is removed; an ``OSError`` becomes an
    :class:`NbcliError` naming ``shown``.
    """
    tmp = None
    try:
        with interrupts.held():
            fd, tmp = make()
        if "b" in mode:
            f = os.fdopen(fd, mode)
        else:
            f = os.fdopen(fd, mode, encoding="utf-8", newline="")
        with f:
            yield f
            if settle is not None:
                settle(f, tmp)
        if staged is None:
            staged = getattr(_staging, "into", None)
        if staged is not None:
            staged.append((tmp, target))
            return
        # A worker thread whose work is no longer wanted must not replace
        # anything; once a file is replaced, the command completes.
        interrupts.checkpoint()
        interrupts.finish()
        _replace(tmp, target)
    except OSError as exc:
        if tmp is not None:
            _remove_quietly(tmp)
        raise NbcliError(f"{shown}: could not write the file ({exc.strerror or exc})") from None
    except BaseException:
        if tmp is not None:
            _remove_quietly(tmp)
        raise


#: The files of an :func:`outputs_together` block, staged until it ends.
_TOGETHER: contextvars.ContextVar[list | None] = contextvars.ContextVar(
    "nbcli_outputs_together", default=None
)


@contextlib.contextmanager
def outputs_together():
    """Within the block, every :func:`atomic_write` of a regular file is
    staged; the files replace their targets together when the block ends
    without error, and none does otherwise.

    A command that writes several outputs (a model file and its JSON
    report) then never leaves one new beside one old: a failed write of the
    last (``--json /dev/full``) leaves every earlier output as it was.
    Devices and pipes are written in place as they come, so a command
    writes them last or accepts that they cannot be taken back.

    Raises
    ------
    NbcliError
        When a rename fails, naming the file.
    """
    staged: list = []
    token = _TOGETHER.set(staged)
    try:
        try:
            yield
        finally:
            _TOGETHER.reset(token)
        with signals_deferred():
            while staged:
                tmp, path = staged[0]
                _replace(tmp, path)
                staged.pop(0)
    except OSError as exc:
        raise NbcliError(
            f"{staged[0][1]}: could not write the file ({exc.strerror or exc})"
        ) from None
    finally:
        for tmp, _ in staged:
            _remove_quietly(tmp)


@contextlib.contextmanager
def atomic_group(paths, mode: str = "wb"):
    """Open every path of ``paths`` as :func:`atomic_write` does; they replace
    their targets together, once all are written.

    Each file is written and fsync'ed first, with the old files untouched
    (an error or Ctrl-C then leaves them all as they were); then the renames
    run with Ctrl-C and SIGTERM held back, so that a command's outputs (a
    train and a test split) are never a new one beside an old one. A signal
    that arrives during the renames is dropped: the outputs are done.

    Yields a list of file objects in the order of ``paths``. Raises what
    :func:`atomic_write` raises.
    """
    staged: list = []
    try:
        with contextlib.ExitStack() as stack:
            handles = [stack.enter_context(atomic_write(p, mode, staged=staged)) for p in paths]
            yield handles
        commit_staged(staged)
    finally:
        discard_staged(staged)


@contextlib.contextmanager
def signals_deferred():
    """Finish the command even when Ctrl-C or SIGTERM arrives from here on.

    Used where stopping would leave outputs inconsistent or report a failure
    for work that was done: from just before a command replaces its output
    (the model file) to the end of the command, and around
    :func:`atomic_group`'s renames. Replacing a file does the same by itself
    (:func:`nbcli.interrupts.finish`); a signal that arrives afterwards is
    dropped and the command completes with its own exit code. Yields the
    list of signals dropped so far.
    """
    interrupts.finish()
    yield interrupts.dropped()


_staging = threading.local()


@contextlib.contextmanager
def staging(into: list):
    """In this thread, have :func:`atomic_write` stage its files in ``into``
    (``(temporary file, target)`` pairs) rather than replace their targets;
    :func:`commit_staged` replaces them, :func:`discard_staged` removes them."""
    outer = getattr(_staging, "into", None)
    _staging.into = into
    try:
        yield into
    finally:
        _staging.into = outer


def commit_staged(staged: list) -> None:
    """Replace the targets of ``staged`` with their temporary files, in order,
    and empty it; from the first rename on the command completes
    (:func:`signals_deferred`).

    Raises
    ------
    NbcliError
        When a rename fails; the files not yet renamed are left staged.
    """
    with signals_deferred():
        while staged:
            tmp, path = staged[0]
            try:
                _replace(tmp, path)
            except OSError as exc:
                raise NbcliError(
                    f"{path}: could not write the file ({exc.strerror or exc})"
                ) from None
            staged.pop(0)


def discard_staged(staged: list) -> None:
    """Remove the temporary files of ``staged`` and empty it."""
    while staged:
        tmp, _ = staged.pop()
        _remove_quietly(tmp)


@contextlib.contextmanager
def _write_in_place(path: Path, mode: str, shown):
    """Write a device, named pipe or open descriptor directly (no temporary file)."""
    for stream in (sys.stdout, sys.stderr):
        # What was printed before must come out before this.
        with contextlib.suppress(Exception):
            stream.flush()
    text: dict[str, Any] = {} if "b" in mode else {"encoding": "utf-8", "newline": ""}
    own = _own_descriptor(path)
    try:
        if own is not None:
            # A descriptor of this process (``/dev/stdout``): share its offset
            # rather than open the file it points to a second time, which
            # would truncate it and write over what the descriptor wrote.
            f = os.fdopen(os.dup(own), mode, **text)
        else:
            f = open(path, mode, **text)
    except OSError as exc:
        raise NbcliError(f"{shown}: cannot open for writing ({exc.strerror or exc})") from None
    try:
        with f:
            yield f
            f.flush()
    except BrokenPipeError:
        raise ReaderGone(str(shown)) from None
    except OSError as exc:
        raise NbcliError(f"{shown}: could not write ({exc.strerror or exc})") from None


def _replace(tmp: str, path) -> None:
    """Put the finished temporary file ``tmp`` in place of ``path``: a rename,
    or for a URL one upload of the whole file (see :mod:`nbcli.io.remote`)."""
    from nbcli.io.remote import is_url, upload

    if is_url(path):
        upload(tmp, path)
    else:
        os.replace(tmp, path)


def _remove_quietly(tmp: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(tmp)
