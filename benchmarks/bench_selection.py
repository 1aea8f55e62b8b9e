"""Timings of model selection from statistics (run by hand, not in CI).

Gaussian NB on a CSV of N rows x 40 features (2 classes), every case a whole
process timed several times (median reported):

* one ``nbcli fit`` (the unit);
* ``nbcli cv --folds 10 --bootstrap 0`` (target: at most 1.5 x one fit when
  the file fits in memory; the data are parsed once);
* ``nbcli tune`` over 20 ``var_smoothing`` values x 10 folds, ``--bootstrap 0``
  (target: at most 3 x one fit);
* the same for QDA (``--reg-param`` over 20 values);
* scikit-learn's ``GridSearchCV`` over the same 20 values and 10 folds on the
  arrays already in memory (its reading of the CSV not counted), in a process
  of its own.

Usage: python benchmarks/bench_selection.py [--rows 300000] [--repeat 3] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

SKLEARN = """
import sys, time, numpy as np, polars as pl
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.naive_bayes import GaussianNB
from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis as QDA
frame = pl.read_csv(sys.argv[1])
X = frame.drop("label").to_numpy(); y = frame["label"].to_numpy()
kind = sys.argv[2]
est, grid = (GaussianNB(), {"var_smoothing": np.geomspace(1e-9, 1, 20)}) if kind == "gaussian" \
    else (QDA(), {"reg_param": np.linspace(0, 0.5, 20)})
t = time.perf_counter()
GridSearchCV(est, grid, cv=StratifiedKFold(10, shuffle=True, random_state=0),
             scoring="accuracy", n_jobs=1).fit(X, y)
print(time.perf_counter() - t)
"""


def nbcli_cmd() -> list[str]:
    # ``python -m`` so that PYTHONPATH picks the nbcli being measured.
    return [sys.executable, "-m", "nbcli"]


def timed(cmd: list[str], repeat: int) -> float:
    """Median wall time of ``repeat`` runs of ``cmd``."""
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def sklearn_seconds(path: Path, kind: str, repeat: int) -> float:
    runs = [
        float(subprocess.run([sys.executable, "-c", SKLEARN, str(path), kind], check=True,
                             capture_output=True, text=True).stdout)
        for _ in range(repeat)
    ]  # fmt: skip
    return statistics.median(runs)


def write_data(path: Path, rows: int, d: int = 40) -> None:
    import polars as pl

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, rows)
    X = rng.normal(size=(rows, d)) + 0.2 * y[:, None]
    frame = pl.DataFrame({f"x{j}": X[:, j] for j in range(d)}).with_columns(pl.Series("label", y))
    frame.write_csv(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=300_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workdir")
    ap.add_argument("--no-sklearn", action="store_true")
    args = ap.parse_args()
    work = Path(args.workdir or tempfile.mkdtemp(prefix="nbcli-bench-selection-"))
    work.mkdir(parents=True, exist_ok=True)
    data = work / "data.csv"
    write_data(data, args.rows)
    nb = nbcli_cmd()
    try:
        out = work / "m.npz"
        cases = {
            "fit (gaussian)": [*nb, "fit", "-m", "gaussian", "-d", data, "-o", out, "-q"],
            "cv 10 folds (gaussian)": [
                *nb, "cv", "-m", "gaussian", "-d", data, "--bootstrap", "0", "-q",
            ],
            "tune 20 x 10 (gaussian)": [
                *nb, "tune", "-m", "gaussian", "-d", data, "--var-smoothing", "log:1e-9..1:20",
                "--metric", "accuracy", "--bootstrap", "0", "-o", out, "-q",
            ],
            "fit (qda)": [*nb, "fit", "-m", "qda", "-d", data, "-o", out, "-q"],
            "tune 20 x 10 (qda)": [
                *nb, "tune", "-m", "qda", "-d", data, "--reg-param", "lin:0..0.5:20",
                "--metric", "accuracy", "--bootstrap", "0", "-o", out, "-q",
            ],
        }  # fmt: skip
        print(f"{args.rows} rows x 40 features, median of {args.repeat}", flush=True)
        seconds: dict[str, float] = {}
        unit: dict[str, float] = {}

        def show(name: str, s: float) -> None:
            kind = "qda" if "qda" in name else "gaussian"
            unit.setdefault(kind, s)
            print(f"{name:34s} {s:8.2f} s  {s / unit[kind]:6.2f} x one fit", flush=True)

        for name, cmd in cases.items():
            seconds[name] = timed([str(c) for c in cmd], args.repeat)
            show(name, seconds[name])
        if not args.no_sklearn:
            for kind in ("gaussian", "qda"):
                name = f"GridSearchCV 20 x 10 ({kind})"
                seconds[name] = sklearn_seconds(data, kind, 1)
                show(name, seconds[name])
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
