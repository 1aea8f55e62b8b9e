#!/usr/bin/env python
"""Time fits from part files on the local engine and on a Dask LocalCluster.

Run by hand (not part of the test suite)::

    python benchmarks/bench_dask.py                    # 8 parts x 250,000 rows, d = 20, k = 5
    python benchmarks/bench_dask.py --parts 4 --rows 100000 --features 50 --classes 10

Writes the parts as NPZ files in a temporary folder (deleted at the end),
then for each model type times: the statistics of one part in this process
(rows per second), the whole fit on the local engine, and the whole fit on a
Dask LocalCluster of ``--workers`` worker processes (cluster start-up timed
apart). It also prints the pickled size of the final statistics, which is
what travels from a merge task to the client, and of one part's rows, which
stays on its worker.
"""

from __future__ import annotations

import argparse
import pickle
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

import nbcli.models as nb
from nbcli.engines import open_engine
from nbcli.engines._reduce import part_statistics

MODELS = {
    "gaussian": nb.GaussianNB,
    "multinomial": nb.MultinomialNB,
    "lda": nb.LinearDiscriminantAnalysis,
    "qda": nb.QuadraticDiscriminantAnalysis,
}


def read_npz(path):
    with np.load(path, allow_pickle=False) as f:
        yield f["X"], f["y"]


def _best(fn, repeat):
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), statistics.median(times), out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--parts", type=int, default=8)
    ap.add_argument("--rows", type=int, default=250_000, help="rows per part")
    ap.add_argument("--features", type=int, default=20)
    ap.add_argument("--classes", type=int, default=5)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--models", default=",".join(MODELS))
    args = ap.parse_args(argv)
    rng = np.random.default_rng(0)
    d, k = args.features, args.classes
    centres = rng.standard_normal((k, d)) * 2
    with tempfile.TemporaryDirectory() as tmp:
        parts = []
        for i in range(args.parts):
            y = rng.integers(0, k, args.rows)
            X = np.abs(1e3 + centres[y] + rng.standard_normal((args.rows, d)))
            path = Path(tmp) / f"part-{i:03d}.npz"
            np.savez(path, X=X, y=y)
            parts.append(str(path))
        part_bytes = X.nbytes + y.nbytes
        total_rows = args.parts * args.rows
        print(
            f"{args.parts} parts x {args.rows:,} rows = {total_rows:,} rows, d={d}, k={k}; "
            f"one part {part_bytes / 2**20:.1f} MiB"
        )
        t = time.perf_counter()
        with open_engine("dask", workers=args.workers, worker_memory="2GiB") as dask_engine:
            dask_engine.client.wait_for_workers(args.workers)
            start = time.perf_counter() - t
            print(f"LocalCluster start-up ({args.workers} workers): {start:.2f} s")
            header = (
                f"{'model':<12}{'1 part':>10}{'rows/s':>12}{'local':>9}{'dask':>9}"
                f"{'stats bytes':>13}"
            )
            print(header)
            for name in args.models.split(","):
                est = MODELS[name]()
                one, _, _ = _best(
                    lambda est=est: part_statistics(est, read_npz(parts[0])), args.repeat
                )
                local, _, stats = _best(
                    lambda est=est: open_engine("local").fit_statistics(parts, read_npz, est),
                    args.repeat,
                )
                dask, _, dstats = _best(
                    lambda est=est: dask_engine.fit_statistics(parts, read_npz, est), args.repeat
                )
                for key, value in stats.stats.arrays().items():
                    assert np.array_equal(value, dstats.stats.arrays()[key]), key
                size = len(pickle.dumps(dstats, protocol=5))
                print(
                    f"{name:<12}{one:>9.3f}s{args.rows / one:>12,.0f}{local:>8.2f}s"
                    f"{dask:>8.2f}s{size:>13,}"
                )


if __name__ == "__main__":
    main()
