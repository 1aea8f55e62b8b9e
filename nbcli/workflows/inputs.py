"""The input files of a run: ``--data`` patterns expanded, and their record in a report."""

from __future__ import annotations

import glob
import os

from nbcli.errors import NbcliError


def expand_inputs(patterns: list[str]) -> list[str]:
    """Paths from ``--data`` values: existing files as given, globs expanded (sorted).

    Raises
    ------
    NbcliError
        For a glob that matches no file.
    """
    from nbcli.io.remote import expand_url, is_url, names_url_parts

    out = []
    for p in patterns:
        if is_url(p) and names_url_parts(p):
            out.extend(expand_url(p, lambda name: True))
            continue
        if p == "-" or is_url(p) or os.path.exists(p) or not glob.has_magic(p):
            out.append(p)
            continue
        matches = sorted(glob.glob(p))
        if not matches:
            raise NbcliError(f"{p}: no files match this pattern")
        out.extend(matches)
    return list(dict.fromkeys(out))


def inputs_of(*, sha256: bool = True, **paths: str | list[str] | tuple[str, ...]) -> dict:
    """The ``inputs`` of a JSON report: ``{role: {"path", "sha256"}}``, or a
    list of such for a role with several files (``models`` of compare).

    ``sha256=False`` gives the paths alone (hashing reads each file once more).
    """
    from nbcli.io.data import file_sha256

    def entry(p: str) -> dict:
        return {"path": p, "sha256": file_sha256(p)} if sha256 else {"path": p}

    out: dict[str, dict | list[dict]] = {}
    for role, path in paths.items():
        out[role] = [entry(p) for p in path] if isinstance(path, (list, tuple)) else entry(path)
    return out


def request_inputs(request, engine=None) -> dict:
    """The ``inputs`` entry of a request's data: one file by :func:`inputs_of`;
    parts on an engine (``engine`` given) named with their files, not hashed
    (they may be readable only by the workers), as ``fit`` names them."""
    if engine is None:
        return inputs_of(data=request.path, sha256=request.sha256)
    from nbcli.io.part_paths import expand_parts

    return {"data": {"path": request.path, "parts": expand_parts(request.data)}}
