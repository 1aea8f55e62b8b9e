"""Time nbcli's commands as an installed nbcli runs.

``pip install`` compiles a package's modules to bytecode once; a source
tree run with ``PYTHONDONTWRITEBYTECODE`` set (as some shells and CI images
set it) compiles every module of nbcli again at each start, about 70 ms of
a command's start-up that no user pays. :func:`as_installed` compiles the
tree once and lets the child processes the benchmarks time read that
bytecode, so start-up figures are a user's.
"""

from __future__ import annotations

import compileall
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def as_installed() -> None:
    """Compile ``nbcli/`` to bytecode and let child processes read it."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    compileall.compile_dir(str(ROOT / "nbcli"), quiet=1)
