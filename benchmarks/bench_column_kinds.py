"""Cost of the mixed model's column kinds against a Gaussian column.

``--columns`` numeric columns (default 1) of at most ``--distinct`` values
each (a normal per class, rounded to that many steps of its range),
``--rows`` rows, 3 classes; ``MixedNB`` fit and ``predict_proba`` with the
columns as gaussian, kernel (both bandwidth rules), discretized and poisson.
Medians of ``--repeat`` rounds, each timing every case once, and their
ratio to the Gaussian columns'.

    python benchmarks/bench_column_kinds.py                 # 1,000,000 rows, 1,000 values
    python benchmarks/bench_column_kinds.py --columns 4
    python benchmarks/bench_column_kinds.py --rows 100000 --repeat 3
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from nbcli.models import MixedNB

CASES = [
    ("gaussian", {"column_types": "gaussian"}),
    ("kernel (nrd0)", {"column_types": "kernel"}),
    ("kernel (weka)", {"column_types": "kernel", "bandwidth": "weka"}),
    ("discretized", {"column_types": "discretized"}),
    ("poisson", {"column_types": "poisson"}),
]


def _seconds(fn, *args) -> float:
    t = time.perf_counter()
    fn(*args)
    return time.perf_counter() - t


def _fit(params, X, y):
    return MixedNB(**params).fit(X, y)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--distinct", type=int, default=1000)
    ap.add_argument("--columns", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    y = rng.integers(0, 3, args.rows)
    X = np.empty((args.rows, args.columns))
    counts = np.empty_like(X)  # whole numbers for the Poisson columns
    for j in range(args.columns):
        raw = rng.normal(y * (1.0 + 0.5 * j), 1.0 + 0.3 * y)
        # args.distinct values: the normal's range cut into that many steps.
        lo, hi = raw.min(), raw.max()
        step = (hi - lo) / (args.distinct - 1)
        counts[:, j] = np.round((raw - lo) / step)
        X[:, j] = counts[:, j] * step + lo
    distinct = ", ".join(f"{len(np.unique(X[:, j])):,}" for j in range(args.columns))
    print(
        f"{args.rows:,} rows, {args.columns} column(s) of {distinct} distinct values, 3 classes, "
        f"median of {args.repeat}"
    )
    data = {name: counts if name == "poisson" else X for name, _ in CASES}
    models = {name: _fit(params, data[name], y) for name, params in CASES}
    # Rounds alternate the cases, so that a busy spell of the machine slows
    # every case of a round rather than one case of the run.
    fits: dict[str, list[float]] = {name: [] for name, _ in CASES}
    predicts: dict[str, list[float]] = {name: [] for name, _ in CASES}
    for _ in range(args.repeat):
        for name, params in CASES:
            fits[name].append(_seconds(_fit, params, data[name], y))
            predicts[name].append(_seconds(models[name].predict_proba, data[name]))
    print(f"{'column':<16}{'fit s':>10}{'x gauss':>9}{'predict s':>12}{'x gauss':>9}")
    base = statistics.median(fits["gaussian"]), statistics.median(predicts["gaussian"])
    for name, _ in CASES:
        fit, predict = statistics.median(fits[name]), statistics.median(predicts[name])
        print(
            f"{name:<16}{fit:>10.3f}{fit / base[0]:>9.2f}{predict:>12.3f}{predict / base[1]:>9.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
