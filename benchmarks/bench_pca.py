#!/usr/bin/env python
"""Whole-process timings of ``--pca`` on MNIST, against scikit-learn's pipeline.

Run by hand (not part of the test suite)::

    python benchmarks/bench_pca.py                   # ../shared/data/mnist.npz, 3 runs
    python benchmarks/bench_pca.py --runs 5 --mnist PATH

The 60,000 training rows (pixels / 255, float64) are written once to an NPZ
file (``X``, ``y``) that every process below loads itself:

* ``fit``: ``nbcli fit --model qda --pca 50`` (read, one pass of statistics,
  projection, model file written);
* ``sklearn``: a Python process that loads the same NPZ and runs
  ``Pipeline([PCA(50), QuadraticDiscriminantAnalysis()]).fit``;
* ``tune``: ``nbcli tune --model qda --pca 10,20,30,50,80 --folds 5``
  (per-fold statistics gathered once; every count and fold finalised from
  them, no refit).

Each is timed as a whole process (start-up included), the median of
``--runs`` runs; the ratios are ``fit / sklearn`` (target at most 1.5) and
``tune / fit`` (target at most 2), of wall-clock time and, beside them, of
CPU time (all threads of the process). The test accuracy of the model ``fit``
wrote is printed too (target 0.9636 +- 0.0005). Shared machines are noisy:
say how loaded the machine was with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SKLEARN_FIT = """
import sys, numpy as np
from sklearn.decomposition import PCA
from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis
from sklearn.pipeline import Pipeline
with np.load(sys.argv[1]) as f:
    X, y = f["X"], f["y"]
Pipeline([("pca", PCA(50)), ("qda", QuadraticDiscriminantAnalysis())]).fit(X, y)
"""


def _nbcli() -> str:
    here = Path(sys.executable).parent / "nbcli"
    return str(here) if here.exists() else "nbcli"


def _cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _timed(cmd: list[str]) -> tuple[float, float]:
    """Wall-clock seconds of the process, and the CPU seconds of all its threads."""
    start, cpu = time.perf_counter(), _cpu()
    done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {done.stderr.strip()}")
    return elapsed, _cpu() - cpu


def _prepare(mnist: Path, folder: Path) -> tuple[Path, Path]:
    with np.load(mnist) as f:
        X, y = f["X_train"], f["y_train"]
        Xt, yt = f["X_test"], f["y_test"]
    train, test = folder / "train.npz", folder / "test.npz"
    np.savez(train, X=X.reshape(len(X), -1) / 255.0, y=y)
    np.savez(test, X=Xt.reshape(len(Xt), -1) / 255.0, y=yt)
    return train, test


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    default = Path(__file__).resolve().parents[2] / "shared" / "data" / "mnist.npz"
    parser.add_argument("--mnist", type=Path, default=default)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    if not args.mnist.exists():
        fallback = Path("/work/shared/data/mnist.npz")
        args.mnist = fallback if fallback.exists() else args.mnist
    nbcli = _nbcli()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        train, test = _prepare(args.mnist, folder)
        model = folder / "m.npz"
        fit = [nbcli, "fit", "-m", "qda", "--pca", "50", "-d", str(train), "-o", str(model)]
        fit += ["--force", "-q"]
        sklearn = [sys.executable, "-c", SKLEARN_FIT, str(train)]
        tune = [nbcli, "tune", "-m", "qda", "--pca", "10,20,30,50,80", "--folds", "5"]
        tune += ["--bootstrap", "0", "-d", str(train), "-q"]
        times: dict[str, list[float]] = {"fit": [], "sklearn": [], "tune": []}
        cpu: dict[str, list[float]] = {"fit": [], "sklearn": [], "tune": []}
        for run in range(args.runs):
            # Interleaved, so that a change in the machine's load hits all alike.
            for name, cmd in (("fit", fit), ("sklearn", sklearn), ("tune", tune)):
                wall, used = _timed(cmd)
                times[name].append(wall)
                cpu[name].append(used)
            print(
                f"run {run + 1}: "
                + ", ".join(f"{k} {v[-1]:.2f} s (cpu {cpu[k][-1]:.2f} s)" for k, v in times.items())
            )
        report = folder / "evaluate.json"
        subprocess.run(
            [nbcli, "evaluate", "-m", str(model), "-d", str(test), "--bootstrap", "0"]
            + ["--json", str(report), "-q"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        accuracy = json.loads(report.read_text())["metrics"]["accuracy"]
        accuracy = accuracy["value"] if isinstance(accuracy, dict) else accuracy
    med = {k: statistics.median(v) for k, v in times.items()}
    med_cpu = {k: statistics.median(v) for k, v in cpu.items()}
    print(f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}")
    for name, value in med.items():
        print(
            f"{name:8s} median {value:7.2f} s, cpu {med_cpu[name]:7.2f} s"
            f"  (runs: {', '.join(f'{t:.2f}' for t in times[name])})"
        )
    # CPU seconds count a thread that waits for a busy core as idle: on a
    # loaded machine they say more about the work than the wall clock does.
    print(
        f"fit / sklearn  {med['fit'] / med['sklearn']:.2f}"
        f"  (cpu {med_cpu['fit'] / med_cpu['sklearn']:.2f}; target <= 1.5)"
    )
    print(
        f"tune / fit     {med['tune'] / med['fit']:.2f}"
        f"  (cpu {med_cpu['tune'] / med_cpu['fit']:.2f}; target <= 2)"
    )
    print(f"test accuracy (qda, pca 50): {accuracy:.4f}  (target 0.9636 +- 0.0005)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
