"""Every model type's ``nbcli fit`` and ``nbcli predict --proba`` as whole processes (run by hand).

Each model type is timed on a CSV of data that fits it, 20 feature columns
and 10 classes:

* ``floats`` (Gaussian NB, LDA, QDA): class-shifted normal values;
* ``counts`` (multinomial, complement; Bernoulli with ``--binarize 0``):
  Poisson counts with class rates;
* ``codes`` (categorical): integer codes 0..7 with class probabilities;
* ``mixed`` (mixed): 10 numeric columns and 10 of letters (categories).

Against each, in the same run:

* the floor of ``fit``: polars scanning the CSV into NumPy arrays
  (``pl.scan_csv(f).collect_batches()`` then ``.to_numpy()``);
* the floor of ``predict --proba -o``: the same scan writing an output of
  predict's shape (a label and 10 probabilities a row);
* where scikit-learn has the model, a script doing what a scikit-learn user
  would: ``pl.read_csv``, the estimator's ``fit`` with the same
  hyperparameters, ``joblib.dump`` (mixed has none).

Commands that are compared run in turn (floor, nbcli, scikit-learn, floor,
nbcli, ...) after one untimed run each, and every ratio is the median of the
ratios of a round's runs, so that drifting load moves both sides alike. With
two sizes of at least 1,000,000 rows the marginal cost of a row is shown
too: ``(t(big) - t(small)) / (floor(big) - floor(small))``. ``--load`` runs
a CPU-bound process beside the timings (a machine that is not quiet).

Usage: python benchmarks/bench_models.py [--rows 100000,1000000] [--repeat 3]
       [--models gaussian,lda] [--load] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

MODELS = {
    # model: (data kind, nbcli options, scikit-learn estimator or None)
    "gaussian": ("floats", [], "sklearn.naive_bayes:GaussianNB()"),
    "lda": ("floats", [], "sklearn.discriminant_analysis:LinearDiscriminantAnalysis()"),
    "qda": ("floats", [], "sklearn.discriminant_analysis:QuadraticDiscriminantAnalysis()"),
    "multinomial": ("counts", [], "sklearn.naive_bayes:MultinomialNB()"),
    "complement": ("counts", [], "sklearn.naive_bayes:ComplementNB()"),
    "bernoulli": ("counts", ["--binarize", "0"], "sklearn.naive_bayes:BernoulliNB(binarize=0.0)"),
    "categorical": ("codes", [], "sklearn.naive_bayes:CategoricalNB()"),
    "mixed": ("mixed", [], None),
}

_PROBE = (
    "import subprocess, sys, time; t=time.perf_counter(); "
    "r=subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE); "
    "w=time.perf_counter()-t; "
    "sys.exit(r.stderr.decode()[-2000:] or r.returncode) if r.returncode else print(w)"
)


def write_data(kind: str, rows: int, path: Path, seed: int = 0) -> None:
    """A CSV of ``rows`` rows of ``kind``, 20 feature columns and a ``label`` column."""
    import polars as pl

    rng = np.random.default_rng(seed)
    d, k = 20, 10
    y = rng.integers(0, k, rows)
    cols: dict[str, np.ndarray] = {}
    if kind == "floats":
        X = rng.normal(size=(rows, d)) + rng.normal(scale=2.0, size=(k, d))[y]
        cols = {f"f{j}": np.round(X[:, j], 5) for j in range(d)}
    elif kind == "counts":
        X = rng.poisson(rng.gamma(2.0, 1.5, size=(k, d))[y])
        cols = {f"f{j}": X[:, j] for j in range(d)}
    elif kind == "codes":
        cols = {f"f{j}": _codes(rng, y, k, 8) for j in range(d)}
    else:
        X = rng.normal(size=(rows, 10)) + rng.normal(scale=2.0, size=(k, 10))[y]
        cols = {f"x{j}": np.round(X[:, j], 5) for j in range(10)}
        letters = np.array(list("abcdef"))
        cols.update({f"c{j}": letters[_codes(rng, y, k, 6)] for j in range(10)})
    cols["label"] = y
    pl.DataFrame(cols).write_csv(path)


def _codes(rng, y, k: int, levels: int) -> np.ndarray:
    p = np.cumsum(rng.dirichlet(np.ones(levels), size=k), axis=1)
    return np.minimum((rng.random(y.shape[0])[:, None] > p[y]).sum(axis=1), levels - 1)


def floors(csv: Path, out: Path) -> tuple[list[str], list[str]]:
    scan = (
        "import polars as pl\n"
        f"for b in pl.scan_csv({str(csv)!r}).collect_batches():\n"
        "    X = b.drop('label').to_numpy(); y = b['label'].to_numpy()"
    )
    scan_write = (
        "import numpy as np, polars as pl\n"
        f"f = open({str(out)!r}, 'w')\n"
        f"for i, b in enumerate(pl.scan_csv({str(csv)!r}).collect_batches()):\n"
        "    X = b.drop('label').to_numpy()\n"
        "    P = np.exp(np.asarray(X[:, :10], dtype=float)); P /= P.sum(axis=1, keepdims=True)\n"
        "    cols = {'prediction': P.argmax(axis=1)}\n"
        "    cols.update({f'proba_{k}': P[:, k] for k in range(10)})\n"
        "    f.write(pl.DataFrame(cols).write_csv(include_header=i == 0))"
    )
    return [sys.executable, "-c", scan], [sys.executable, "-c", scan_write]


def sklearn_script(estimator: str, csv: Path, out: Path) -> list[str]:
    module, call = estimator.split(":")
    name = call.split("(")[0]
    code = (
        "import joblib, polars as pl\n"
        f"from {module} import {name}\n"
        f"df = pl.read_csv({str(csv)!r})\n"
        "X = df.drop('label').to_numpy(); y = df['label'].to_numpy()\n"
        f"joblib.dump({call}.fit(X, y), {str(out)!r})"
    )
    return [sys.executable, "-c", code]


def run_once(cmd: list[str], env: dict[str, str]) -> float:
    out = subprocess.run([sys.executable, "-c", _PROBE, *cmd], capture_output=True, env=env)
    if out.returncode != 0:
        raise SystemExit(f"command failed: {' '.join(cmd)[:300]}\n{out.stderr.decode()[-2000:]}")
    return float(out.stdout.split()[-1])


def rounds(cmds: dict[str, list[str]], repeat: int, env) -> dict[str, list[float]]:
    """Wall times of every command, run in turn, after one untimed run each."""
    for cmd in cmds.values():
        run_once(cmd, env)
    times: dict[str, list[float]] = {name: [] for name in cmds}
    for _ in range(repeat):
        for name, cmd in cmds.items():
            times[name].append(run_once(cmd, env))
    return times


def ratio(times, a: str, b: str) -> float:
    return statistics.median(x / y for x, y in zip(times[a], times[b]))


def child_env(work: Path) -> dict[str, str]:
    """The timed processes' environment: bytecode cached under ``work``, as installed."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    return env


def nbcli_cmd() -> list[str]:
    exe = shutil.which("nbcli", path=str(Path(sys.executable).parent)) or shutil.which("nbcli")
    return [exe] if exe else [sys.executable, "-m", "nbcli"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", default="100000,1000000", help="comma-separated sizes")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--load", action="store_true", help="a CPU-bound process runs beside")
    ap.add_argument("--no-sklearn", action="store_true")
    ap.add_argument("--no-predict", action="store_true", help="time fit only")
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args(argv)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="nbcli-bench-models-"))
    work.mkdir(parents=True, exist_ok=True)
    env = child_env(work)
    sizes = [int(s) for s in args.rows.split(",")]
    models = args.models.split(",")
    nb = nbcli_cmd()
    burner = None
    if args.load:
        burner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    results = []
    try:
        for rows in sizes:
            for name in models:
                kind, options, estimator = MODELS[name]
                csv = work / f"{kind}_{rows}.csv"
                if not csv.exists():
                    t0 = time.perf_counter()
                    write_data(kind, rows, csv)
                    print(f"wrote {csv} in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
                model, out = work / f"{name}.npz", work / "out.csv"
                scan, scan_write = floors(csv, out)
                fit = {
                    "floor": scan,
                    "nbcli": [*nb, "fit", "-m", name, *options, "-d", str(csv)]
                    + ["-o", str(model), "-q", "--force"],
                }
                if estimator and not args.no_sklearn:
                    fit["sklearn"] = sklearn_script(estimator, csv, work / f"{name}.joblib")
                t_fit = rounds(fit, args.repeat, env)
                predict = {
                    "floor": scan_write,
                    "nbcli": [*nb, "predict", "-m", str(model), "-d", str(csv), "--proba"]
                    + ["-o", str(out), "-q", "--force"],
                }
                t_pred = None if args.no_predict else rounds(predict, args.repeat, env)
                row = {
                    "model": name,
                    "rows": rows,
                    "fit": statistics.median(t_fit["nbcli"]),
                    "floor": statistics.median(t_fit["floor"]),
                    "fit/floor": ratio(t_fit, "nbcli", "floor"),
                    "fit/sklearn": ratio(t_fit, "nbcli", "sklearn") if "sklearn" in t_fit else None,
                }
                if t_pred is not None:
                    row["predict"] = statistics.median(t_pred["nbcli"])
                    row["write floor"] = statistics.median(t_pred["floor"])
                    row["predict/floor"] = ratio(t_pred, "nbcli", "floor")
                results.append(row)
                print(row, file=sys.stderr)
    finally:
        if burner is not None:
            burner.kill()
            burner.wait()
    print_table(results, args, sizes)
    return 0


def print_table(results, args, sizes) -> None:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(
        f"\n{time.strftime('%Y-%m-%d', time.gmtime())}, {platform.machine()}, {cores} cores, "
        f"Python {platform.python_version()}; medians of {args.repeat} alternating runs"
        f"{'; beside a CPU-bound process' if args.load else ''}\n"
    )
    print(
        "| model | rows | fit s | floor s | fit / floor | fit / scikit-learn script "
        "| predict --proba s | scan+write s | predict / floor |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in results:
        sk = "-" if r["fit/sklearn"] is None else f"{r['fit/sklearn']:.2f}x"
        pred = (
            f"{r['predict']:.2f} | {r['write floor']:.2f} | {r['predict/floor']:.2f}x"
            if "predict" in r
            else "- | - | -"
        )
        print(
            f"| {r['model']} | {r['rows']:,} | {r['fit']:.2f} | {r['floor']:.2f} "
            f"| {r['fit/floor']:.2f}x | {sk} | {pred} |"
        )
    big = [s for s in sizes if s >= 1_000_000]
    if len(big) >= 2:
        lo, hi = big[0], big[-1]
        print(f"\nmarginal cost of a row, {lo:,} to {hi:,} rows (fit - floor growth ratio):\n")
        by = {(r["model"], r["rows"]): r for r in results}
        for name in dict.fromkeys(r["model"] for r in results):
            a, b = by.get((name, lo)), by.get((name, hi))
            if a and b:
                m = (b["fit"] - a["fit"]) / (b["floor"] - a["floor"])
                print(f"- {name}: {m:.2f}")


if __name__ == "__main__":
    sys.exit(main())
