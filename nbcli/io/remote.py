"""Paths that are URLs: ``s3://``, ``gs://``, ``az://``/``abfs://``,
``http(s)://`` (read-only) and ``file://``, through fsspec (the ``cloud``
extra: fsspec with s3fs, gcsfs, adlfs, aiohttp).

An object that is read is copied once per process, streamed in blocks, to a
local temporary file that keeps its name (so its format is told by its
extension as a local file's is) and is removed when the process ends; every
reader then reads that file, so each format, compressed or not, is read from
a store exactly as from a disk, and its SHA-256 is that of the object's
bytes. A Dask worker copies the objects of its own tasks: no data passes
through the client.

A file that is written goes to a local temporary file first and is uploaded
when it is complete, in one PUT (or, for a large file, one multipart upload,
which the store shows under the final name only once it is completed): an
interrupted write leaves no object, and an earlier object is replaced
whole.

Credentials and endpoints come from where each store's own client finds
them (for S3: the environment, ``~/.aws``, instance roles; a non-AWS
endpoint such as MinIO's from ``AWS_ENDPOINT_URL``); nbcli never prints
them.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import shutil
import tempfile
import threading

from nbcli.errors import NbcliError

__all__ = [
    "is_url",
    "local_copy",
    "upload",
    "expand_url",
    "names_url_parts",
    "join",
    "check_url_output",
    "url_exists",
]

_URL = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*)://")
#: Schemes nbcli reads, and the package fsspec needs for each.
_PACKAGES = {
    "s3": "s3fs",
    "s3a": "s3fs",
    "gs": "gcsfs",
    "gcs": "gcsfs",
    "az": "adlfs",
    "abfs": "adlfs",
    "abfss": "adlfs",
    "http": "aiohttp",
    "https": "aiohttp",
    "file": None,
}
_READ_ONLY = ("http", "https")
_BLOCK = 8 << 20

_lock = threading.Lock()
_copies: dict[str, tuple[tuple, str]] = {}
_folder: str | None = None


def is_url(path) -> bool:
    """Whether ``path`` is a URL (``scheme://...``) rather than a local path."""
    return isinstance(path, str) and _URL.match(path) is not None


def shown(url: str) -> str:
    """``url`` as messages show it: an ``http(s)`` query (a presigned URL's
    signature) left out."""
    if scheme(url) in _READ_ONLY and "?" in url:
        return url.split("?", 1)[0] + "?..."
    return url


def scheme(url: str) -> str:
    match = _URL.match(url)
    return match.group(1).lower() if match else ""


def _filesystem(url: str):
    """``(fsspec file system, path within it)`` for ``url``.

    Raises
    ------
    NbcliError
        For a scheme nbcli does not read, or a missing package (naming the
        extra that installs it).
    """
    name = scheme(url)
    if name not in _PACKAGES:
        raise NbcliError(
            f"{url}: nbcli does not read {name}:// URLs; use s3://, gs://, az://, "
            "https:// or file://"
        )
    package = _PACKAGES[name]
    for module in ("fsspec", package):
        if module is None:
            continue
        try:
            __import__(module)
        except ImportError:
            raise NbcliError(
                f"{url}: {name}:// URLs need the Python package {module}, which is not "
                "installed; install it with: pip install 'nbcli[cloud]'"
            ) from None
    import fsspec

    options: dict = {}
    if name in ("s3", "s3a"):
        endpoint = os.environ.get("AWS_ENDPOINT_URL_S3") or os.environ.get("AWS_ENDPOINT_URL")
        if endpoint:
            options["client_kwargs"] = {"endpoint_url": endpoint}
    try:
        return fsspec.core.url_to_fs(url, **options)
    except Exception as exc:
        raise store_error(url, exc) from None


def store_error(url: str, exc: BaseException) -> NbcliError:
    """A one-line error for what a store (or its client) raised; never credentials."""
    if isinstance(exc, NbcliError):
        return exc
    url = shown(url)
    text = f"{type(exc).__name__} {exc}"
    name = scheme(url)
    if "NoCredentials" in text or "Unable to locate credentials" in text:
        return NbcliError(
            f"{url}: no credentials for {name}://; set AWS_ACCESS_KEY_ID and "
            "AWS_SECRET_ACCESS_KEY (or AWS_PROFILE, or run where an instance role applies)"
        )
    if "NoSuchBucket" in text or "bucket does not exist" in text.lower():
        bucket = url.split("://", 1)[1].split("/", 1)[0]
        return NbcliError(f"{url}: the bucket {bucket!r} does not exist; check the URL")
    if isinstance(exc, PermissionError) or "AccessDenied" in text or "Forbidden" in text:
        return NbcliError(
            f"{url}: access denied; check the credentials and the permissions on the object"
        )
    if isinstance(exc, FileNotFoundError) or "NoSuchKey" in text or "Not Found" in text:
        return NbcliError(f"{url}: no such object")
    if isinstance(exc, IsADirectoryError):
        return NbcliError(f"{url}: is a folder (a prefix), not an object")
    first = _redacted((str(exc).strip().splitlines() or [type(exc).__name__])[0])
    # A message may echo a request; keep it to the store's own first line.
    return NbcliError(f"{url}: the store could not be reached or refused the request ({first})")


#: Environment variables whose values are secrets, never shown in a message.
_SECRETS = (
    "AWS_SECRET_ACCESS_KEY",
    "AWS_ACCESS_KEY_ID",
    "AWS_SESSION_TOKEN",
    "AZURE_STORAGE_KEY",
    "AZURE_STORAGE_ACCOUNT_KEY",
    "AZURE_STORAGE_SAS_TOKEN",
    "AZURE_STORAGE_CONNECTION_STRING",
    "AZURE_CLIENT_SECRET",
)


def _redacted(text: str) -> str:
    """``text`` with any credential of the environment replaced by ``***``."""
    for name in _SECRETS:
        value = os.environ.get(name, "")
        if len(value) >= 8:
            text = text.replace(value, "***")
    return text


def _cache_folder() -> str:
    global _folder
    if _folder is None:
        _folder = tempfile.mkdtemp(prefix="nbcli-objects-")
        atexit.register(shutil.rmtree, _folder, True)
    return _folder


def local_copy(url: str) -> str:
    """A local file with the bytes of the object ``url``.

    The copy is made once per process for each version of the object (its
    ETag, size and modification time, asked of the store each time): a
    long-lived process, such as a Dask worker serving several commands,
    never reads a stale copy of an object that was replaced.

    Raises
    ------
    NbcliError
        When the object cannot be read: no such object or bucket, no
        credentials, access denied, a missing package.
    """
    fs, path = _filesystem(url)
    try:
        with contextlib.suppress(Exception):
            fs.invalidate_cache(path)
        info = fs.info(path)
        if info.get("type") == "directory":
            raise IsADirectoryError(path)
    except Exception as exc:
        raise store_error(url, exc) from None
    version = tuple(
        str(info.get(k))
        for k in ("ETag", "etag", "size", "LastModified", "mtime", "last_modified")
        if k in info
    )
    with _lock:
        known = _copies.get(url)
        if known is not None and known[0] == version and os.path.exists(known[1]):
            return known[1]
    folder = tempfile.mkdtemp(dir=_cache_folder())
    name = os.path.basename(path.rstrip("/")) or "object"
    local = os.path.join(folder, name)
    try:
        with fs.open(path, "rb") as src, open(local, "wb") as dst:
            shutil.copyfileobj(src, dst, _BLOCK)
    except BaseException as exc:
        shutil.rmtree(folder, ignore_errors=True)
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        raise store_error(url, exc) from None
    with _lock:
        old = _copies.get(url)
        _copies[url] = (version, local)
    if old is not None and old[1] != local:
        shutil.rmtree(os.path.dirname(old[1]), ignore_errors=True)
    return local


def url_exists(url: str) -> bool:
    fs, path = _filesystem(url)
    try:
        return bool(fs.exists(path))
    except Exception as exc:
        raise store_error(url, exc) from None


def upload(local: str, url: str) -> None:
    """Put the finished file ``local`` at ``url`` in one upload, then remove ``local``.

    Raises
    ------
    NbcliError
        When the upload fails; no object is left under ``url`` then (a PUT or a
        multipart upload that did not complete shows none).
    """
    fs, path = _filesystem(url)
    try:
        fs.put_file(local, path)
    except Exception as exc:
        raise store_error(url, exc) from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(local)
    with _lock:
        _copies.pop(url, None)


def names_url_parts(url: str) -> bool:
    """Whether ``url`` names several objects: a prefix ending in ``/`` or a glob
    (an ``http(s)://`` URL names one file: a web server lists nothing, and
    ``?`` starts its query)."""
    if scheme(url) in _READ_ONLY:
        return False
    return url.endswith("/") or any(c in url.split("://", 1)[1] for c in "*?[")


def expand_url(url: str, is_part_file) -> list[str]:
    """The objects under a prefix (``s3://b/parts/``) or matching a glob, sorted.

    Raises
    ------
    NbcliError
        When nothing matches, or the store cannot be listed.
    """
    fs, path = _filesystem(url)
    head = url.split("://", 1)[0] + "://"
    try:
        if any(c in path for c in "*?["):
            found = [p for p in fs.glob(path) if not fs.isdir(p)]
            if not found:
                raise NbcliError(f"{url}: no objects match this pattern")
        else:
            found = [
                p
                for p in fs.ls(path.rstrip("/"), detail=False)
                if is_part_file(os.path.basename(p)) and not fs.isdir(p)
            ]
            if not found:
                raise NbcliError(f"{url}: the prefix holds no part files")
    except NbcliError:
        raise
    except Exception as exc:
        raise store_error(url, exc) from None
    return sorted(
        head + p.split("://", 1)[-1] if scheme(url) != "file" else head + p for p in found
    )


def join(folder: str, name: str) -> str:
    """``folder/name`` for a URL folder (which Path would collapse)."""
    return folder.rstrip("/") + "/" + name


def check_url_output(url: str, shown: str) -> bool:
    """Check an output URL before any work: a store nbcli writes, and a bucket
    that exists; returns whether an object is already under that name (whose
    kind the caller checks, :func:`nbcli.io.atomic.check_outputs`).

    Raises
    ------
    NbcliError
        For a read-only scheme, a missing bucket or credentials, or a name
        that is a prefix of other objects.
    """
    if scheme(url) in _READ_ONLY:
        raise NbcliError(
            f"{shown}: {scheme(url)}:// is read-only; write to s3://, gs://, az:// or a file"
        )
    fs, path = _filesystem(url)
    try:
        root = path.split("/", 1)[0]
        if scheme(url) != "file" and not fs.exists(root):
            raise NbcliError(f"{shown}: the bucket {root!r} does not exist; check the URL")
        exists = bool(fs.exists(path))
        if exists and fs.isdir(path):
            raise NbcliError(f"{shown}: is a folder (a prefix); give an object name to write to")
    except NbcliError:
        raise
    except Exception as exc:
        raise store_error(url, exc) from None
    return exists
