"""Timings of model selection from statistics (run by hand, not in CI).

Gaussian NB on a CSV of N rows x 40 features (2 classes), every case a whole
process. The commands run in rounds, each round every command once in turn,
so that a change in the machine's speed during the run reaches all of them;
a ratio is taken within each round and the median over rounds is printed:

* one ``nbcli fit`` (the unit);
* ``nbcli cv --folds 10 --bootstrap 0`` (issue 13's target: at most 1.5 x one
  fit when the file fits in memory; the data are parsed once);
* ``nbcli tune`` over 20 ``var_smoothing`` values x 10 folds, ``--bootstrap 0``
  (target: at most 3 x one fit);
* the same grid for QDA (``--reg-param`` over 20 values), against one QDA
  ``nbcli fit`` (no target: the cost is reported);
* scikit-learn's ``GridSearchCV`` over the same 20 values and 10 folds on the
  arrays already in memory (its reading of the CSV not counted), in a process
  of its own, once per model (``--no-sklearn`` leaves it out: at the default
  size it takes a few minutes);
* with ``--text-docs N``, a text column: ``nbcli cv --text text`` (10 folds,
  each fold model with a vocabulary of its own) and ``nbcli tune`` over 20
  ``alpha`` values x 10 folds of a multinomial model, against one
  ``nbcli fit --text text``, on N generated documents of 10 words (the
  documents of ``bench_text.py``; no target: the cost is reported).

Usage: python benchmarks/bench_selection.py [--rows 300000] [--repeat 3]
       [--workdir DIR] [--no-qda] [--no-sklearn] [--text-docs 100000]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _installed import as_installed

SKLEARN = """
import sys, time, numpy as np, polars as pl
from sklearn.model_selection import GridSearchCV, StratifiedKFold
from sklearn.naive_bayes import GaussianNB
from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis as QDA
frame = pl.read_csv(sys.argv[1])
X = frame.drop("label").to_numpy(); y = frame["label"].to_numpy()
kind = sys.argv[2]
est, grid = (GaussianNB(), {"var_smoothing": np.geomspace(1e-9, 1, 20)}) if kind == "gaussian" \\
    else (QDA(), {"reg_param": np.linspace(0, 0.5, 20)})
t = time.perf_counter()
GridSearchCV(est, grid, cv=StratifiedKFold(10, shuffle=True, random_state=0),
             scoring="accuracy", n_jobs=1).fit(X, y)
print(time.perf_counter() - t)
"""

TARGETS = {"cv 10 folds (gaussian)": 1.5, "tune 20 x 10 (gaussian)": 3.0}
"""Issue 13's targets, as multiples of one ``nbcli fit`` of the same file."""


def nbcli_cmd() -> list[str]:
    # ``python -m`` so that PYTHONPATH picks the nbcli being measured.
    return [sys.executable, "-m", "nbcli"]


def run_seconds(cmd: list[str]) -> float:
    """Wall time of one run of ``cmd``."""
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - t


def sklearn_seconds(path: Path, kind: str) -> float:
    out = subprocess.run(
        [sys.executable, "-c", SKLEARN, str(path), kind], check=True, capture_output=True, text=True
    )
    return float(out.stdout)


def write_data(path: Path, rows: int, d: int = 40) -> None:
    import polars as pl

    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, rows)
    X = rng.normal(size=(rows, d)) + 0.2 * y[:, None]
    frame = pl.DataFrame({f"x{j}": X[:, j] for j in range(d)}).with_columns(pl.Series("label", y))
    frame.write_csv(path)


def cases(data: Path, out: Path, qda: bool) -> dict[str, tuple[list, str]]:
    """``{name: (command, unit)}``: each case and the fit it is divided by."""
    nb = nbcli_cmd()
    found = {
        "fit (gaussian)": [*nb, "fit", "-m", "gaussian", "-d", data, "-o", out, "-q"],
        "cv 10 folds (gaussian)": [
            *nb, "cv", "-m", "gaussian", "-d", data, "--bootstrap", "0", "-q",
        ],
        "tune 20 x 10 (gaussian)": [
            *nb, "tune", "-m", "gaussian", "-d", data, "--var-smoothing", "log:1e-9..1:20",
            "--metric", "accuracy", "--bootstrap", "0", "-o", out, "-q",
        ],
    }  # fmt: skip
    if qda:
        found["fit (qda)"] = [*nb, "fit", "-m", "qda", "-d", data, "-o", out, "-q"]
        found["tune 20 x 10 (qda)"] = [
            *nb, "tune", "-m", "qda", "-d", data, "--reg-param", "lin:0..0.5:20",
            "--metric", "accuracy", "--bootstrap", "0", "-o", out, "-q",
        ]  # fmt: skip
    return {
        name: ([str(c) for c in cmd], "fit (qda)" if "qda" in name else "fit (gaussian)")
        for name, cmd in found.items()
    }


def text_cases(data: Path, out: Path) -> dict[str, tuple[list, str]]:
    """The text column's cases, each divided by one ``nbcli fit --text``."""
    nb = nbcli_cmd()
    text = ["-m", "multinomial", "-d", data, "--text", "text", "-q"]
    found = {
        "fit (text)": [*nb, "fit", *text, "-o", out, "--force"],
        "cv 10 folds (text)": [*nb, "cv", *text, "--bootstrap", "0"],
        "tune 20 x 10 (text)": [
            *nb, "tune", *text, "--alpha", "log:0.01..10:20", "--metric", "accuracy",
            "--bootstrap", "0", "-o", out, "--force",
        ],
    }  # fmt: skip
    return {name: ([str(c) for c in cmd], "fit (text)") for name, cmd in found.items()}


def write_text_data(path: Path, docs: int) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_text import make_documents, make_lexicon, write_csv

    texts, labels = make_documents(make_lexicon(0), docs, 10, np.random.default_rng(1))
    write_csv(path, texts, labels)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=300_000)
    ap.add_argument("--repeat", type=int, default=3, help="rounds of every command")
    ap.add_argument("--workdir")
    ap.add_argument("--no-qda", action="store_true", help="leave out the QDA grid")
    ap.add_argument("--no-sklearn", action="store_true", help="leave out GridSearchCV")
    ap.add_argument(
        "--text-docs", type=int, default=0, help="also time a text column of this many documents"
    )
    args = ap.parse_args()
    as_installed()  # child processes read compiled bytecode, as after pip install
    work = Path(args.workdir or tempfile.mkdtemp(prefix="nbcli-bench-selection-"))
    work.mkdir(parents=True, exist_ok=True)
    data = work / "data.csv"
    write_data(data, args.rows)
    try:
        todo = cases(data, work / "m.npz", qda=not args.no_qda)
        if args.text_docs:
            text_data = work / "text.csv"
            write_text_data(text_data, args.text_docs)
            todo.update(text_cases(text_data, work / "t.npz"))
        load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        print(
            f"{args.rows} rows x 40 features, 2 classes; {args.repeat} rounds of every "
            f"command in turn, medians; load average {load:.1f} at the start",
            flush=True,
        )
        times: dict[str, list[float]] = {name: [] for name in todo}
        for _ in range(args.repeat):
            for name, (cmd, _unit) in todo.items():
                times[name].append(run_seconds(cmd))
        gaussian_fit = statistics.median(times["fit (gaussian)"])
        print(f"{'command':34s} {'seconds':>8s} {'x its fit':>10s} {'target':>8s}")
        for name, (_cmd, unit) in todo.items():
            ratio = statistics.median(t / u for t, u in zip(times[name], times[unit]))
            target = TARGETS.get(name)
            verdict = (
                "" if target is None else f"<= {target:g}x {'met' if ratio <= target else 'MISSED'}"
            )
            print(
                f"{name:34s} {statistics.median(times[name]):8.2f} {ratio:9.2f}x {verdict:>8s}",
                flush=True,
            )
        if "tune 20 x 10 (qda)" in times:
            qda = statistics.median(times["tune 20 x 10 (qda)"])
            print(f"{'':34s} QDA grid: {qda / gaussian_fit:.2f}x one Gaussian NB fit", flush=True)
        if not args.no_sklearn:
            kinds = ["gaussian"] + ([] if args.no_qda else ["qda"])
            for kind in kinds:
                s = sklearn_seconds(data, kind)
                tuned = statistics.median(times[f"tune 20 x 10 ({kind})"])
                print(
                    f"{'GridSearchCV 20 x 10 (' + kind + ')':34s} {s:8.2f} "
                    f"{s / statistics.median(times[f'fit ({kind})']):9.2f}x   "
                    f"({s / tuned:.1f}x nbcli tune; arrays in memory, one run)",
                    flush=True,
                )
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
