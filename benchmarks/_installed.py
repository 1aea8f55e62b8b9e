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


def wall(cmd: list[str], ok: tuple[int, ...] = (0,)) -> float:
    """Wall seconds of one run of ``cmd``; exits with its stderr if its code is not in ``ok``."""
    import subprocess
    import time

    start = time.perf_counter()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - start
    if done.returncode not in ok:
        raise SystemExit(f"command failed: {' '.join(cmd)}\n{done.stderr}")
    return seconds


def write_gaussian_csv(path: Path, rows: int, d: int, k: int, seed: int, centres_seed: int) -> None:
    """``rows`` rows of ``k`` overlapping Gaussian classes (centres drawn with
    ``centres_seed``, scale 0.7), ``d`` features ``f0..`` and labels 0..k-1."""
    import numpy as np
    import polars as pl

    centres = np.random.default_rng(centres_seed).normal(scale=0.7, size=(k, d))
    rng = np.random.default_rng(seed)
    if centres_seed == seed:
        rng.normal(scale=0.7, size=(k, d))  # the same stream as drawing both from one generator
    y = rng.integers(0, k, rows)
    X = rng.normal(size=(rows, d)) + centres[y]
    frame = pl.DataFrame({f"f{i}": np.round(X[:, i], 6) for i in range(d)})
    frame.with_columns(pl.Series("label", y)).write_csv(path)


def print_pairs(times: dict[str, list[float]], ratios: list[float], what: str, target: float):
    """Each command's median and runs, then the median ratio of the pairs ``what``."""
    import statistics

    for name, values in times.items():
        shown = ", ".join(f"{v:.2f}" for v in values)
        print(f"nbcli {name:<10} median {statistics.median(values):.2f} s  ({shown})")
    print(
        f"{what}: {statistics.median(ratios):.2f}x median of pairs "
        f"(target <= {target}x); min {min(ratios):.2f}x, max {max(ratios):.2f}x"
    )


def alternate(
    commands: dict[str, list[str]], repeat: int, ok: tuple[int, ...] = (0,)
) -> tuple[dict[str, list[float]], list[float]]:
    """Each of two ``commands`` run in turn ``repeat`` times: their wall times,
    and the ratio of the first to the second within each pair, so that a
    machine whose speed drifts moves both alike."""
    (first, a), (second, b) = commands.items()
    times: dict[str, list[float]] = {first: [], second: []}
    ratios = []
    for _ in range(repeat):
        x, y = wall(a, ok), wall(b, ok)
        times[first].append(x)
        times[second].append(y)
        ratios.append(x / y)
    return times, ratios
