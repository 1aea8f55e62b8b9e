"""Part files of a ``--data`` value: folders and globs expanded into their files.

What ``predict``, ``fit`` and ``evaluate`` ask first of every ``--data``,
apart from the fits over parts (:mod:`nbcli.workflows.parts`), so that a
command on one file does not load those.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence

from nbcli.errors import NbcliError

PART_SUFFIXES = (".csv", ".csv.gz", ".parquet", ".feather", ".arrow", ".arff", ".arff.gz")
"""The files of a folder that are taken as its parts (case-insensitive)."""


def is_part_file(name: str) -> bool:
    """Whether a file of a ``--data`` folder is one of its parts (hidden files are not)."""
    low = name.lower()
    return not name.startswith((".", "_")) and low.endswith(PART_SUFFIXES)


def expand_parts(patterns: Sequence[str]) -> list[str]:
    """Part files from ``--data`` values: files as given, folders and globs expanded.

    A folder gives its part files (:data:`PART_SUFFIXES`, not hidden, not in
    subfolders), sorted by name; a glob gives its matches, sorted, with a
    folder among them expanded the same way. Duplicates are dropped, first
    place kept.

    Raises
    ------
    NbcliError
        For a glob that matches nothing or a folder without part files.
    """
    from nbcli.io.remote import expand_url, is_url, names_url_parts

    out: list[str] = []
    for p in patterns:
        if is_url(p):
            out.extend(expand_url(p, is_part_file) if names_url_parts(p) else [p])
            continue
        if p != "-" and not os.path.exists(p) and glob.has_magic(p):
            matches = sorted(glob.glob(p))
            if not matches:
                raise NbcliError(f"{p}: no files match this pattern")
        else:
            matches = [p]
        for m in matches:
            if os.path.isdir(m):
                files = sorted(
                    os.path.join(m, f)
                    for f in os.listdir(m)
                    if is_part_file(f) and os.path.isfile(os.path.join(m, f))
                )
                if not files:
                    raise NbcliError(
                        f"{m}: the folder holds no part files ({', '.join(PART_SUFFIXES)})"
                    )
                out.extend(files)
            else:
                out.append(m)
    return list(dict.fromkeys(out))


def names_parts(patterns: Sequence[str]) -> bool:
    """Whether ``--data`` names more than a single file (a folder or a glob)."""
    from nbcli.io.remote import is_url, names_url_parts

    return any(
        names_url_parts(p)
        if is_url(p)
        else os.path.isdir(p) or (p != "-" and not os.path.exists(p) and glob.has_magic(p))
        for p in patterns
    )
