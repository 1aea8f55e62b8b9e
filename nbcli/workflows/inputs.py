"""The input files of a run: ``--data`` patterns expanded, and their record in a report."""

from __future__ import annotations

import glob
import os
from dataclasses import dataclass

from nbcli.errors import NbcliError


def expand_inputs(patterns: list[str]) -> list[str]:
    """Paths from ``--data`` values: existing files as given, globs expanded (sorted).

    Raises
    ------
    NbcliError
        For a glob that matches no file.
    """
    out = []
    for p in patterns:
        if p == "-" or os.path.exists(p) or not glob.has_magic(p):
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


@dataclass(frozen=True)
class ReadOptions:
    """How to read a data file: the options every reading command shares.

    Attributes
    ----------
    target : str or None
        Label column; None: the model's training target, else the
        reader's default (a column named label, target, class or y, else
        the last column).
    delimiter : str or None
        CSV delimiter; None: detected among ``, ; tab |``.
    chunk_size : int or None
        Rows read at a time from CSV files; None: about 2 million values (16 MB).
    x_key, y_key : str
        Names of the feature and label arrays in ``.npz`` input.
    missing : {"error", "ignore", "drop"} or None
        Missing feature cells; None: the policy stored in the model.
    unseen : {"error", "ignore"} or None
        Categories never seen in training; None: the model's policy.
    na_values : tuple of str or None
        Cell texts that mean a missing value in this file; None: those the
        model was fitted with.
    """

    target: str | None = None
    delimiter: str | None = None
    chunk_size: int | None = None
    x_key: str = "X"
    y_key: str = "y"
    missing: str | None = None
    unseen: str | None = None
    na_values: tuple[str, ...] | None = None
