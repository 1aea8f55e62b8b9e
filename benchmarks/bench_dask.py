#!/usr/bin/env python
"""Time fits from part files on the local engine and on a Dask LocalCluster.

Run by hand (not part of the test suite)::

    python benchmarks/bench_dask.py                    # 8 parts x 250,000 rows, d = 20, k = 5
    python benchmarks/bench_dask.py --parts 4 --rows 100000 --features 50 --classes 10
    python benchmarks/bench_dask.py --parquet-gb 1.6   # the command line on Parquet parts
    python benchmarks/bench_dask.py --text-docs 200000 # --text: one file, parts, Dask
    python benchmarks/bench_dask.py --evaluate --parts 20 --rows 25000  # evaluate over parts

``--evaluate`` writes ``--parts`` CSV parts of ``--rows`` rows (d =
``--features``, k = ``--classes``) and the same rows in order as one CSV,
fits a Gaussian NB model on the first part, and times ``evaluate`` with
``--resamples`` resamples (default 1,000): the one file in this process
(:func:`nbcli.workflows.evaluate.evaluate`) against the parts on a Dask
LocalCluster of ``--workers`` worker processes
(:func:`nbcli.workflows.evaluate_parts.evaluate_parts`; cluster start-up
timed apart), median seconds of ``--repeat`` alternating runs and their
ratio. It checks that both reports hold the same figures and intervals
(to 1e-12).

``--parquet-gb SIZE`` writes a partitioned Parquet data set of about SIZE
GB (parts of about 100 MB, d = 20, k = 5) in a temporary folder, larger
than the memory limit of one worker, and times ``nbcli fit -m gaussian``
on the folder: the local engine (the parts streamed one after another in
one process) against ``--engine dask --workers 2 --worker-memory 1GB``,
reporting the median wall time of ``--repeat`` runs and the peak resident
memory of the process, and of each Dask worker. The data are deleted at
the end.

``--text-docs N`` writes N short documents (a Zipf vocabulary of 50,000
words, one count column beside them, 3 classes) as one CSV and as
``--parts`` CSV parts, and times a ``--text`` fit of the one file
(:func:`nbcli.workflows.train.train`) against part-wise fits of the parts
(:func:`nbcli.workflows.parts.train_parts`) on the local engine and on a
Dask LocalCluster of ``--workers`` workers: median seconds of ``--repeat``
runs, the ratios to the one-file fit, and the pickled size of the merged
term statistics (what a worker sends per part is of that order). It checks
that the three model files hold the same vocabulary and counts.

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


# Peak memory is the process's own high-water mark of resident memory
# (VmHWM), which starts afresh at exec; ru_maxrss would carry over the peak
# of the process that started it.
_PEAK = """
def peak_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
"""

_RUN = (
    _PEAK
    + """
import json, sys, time
from nbcli.cli.app import main
t = time.perf_counter()
try:
    main(sys.argv[1:])
except SystemExit as exc:
    assert not exc.code, exc.code
print(json.dumps({"seconds": time.perf_counter() - t, "peak_mb": peak_mb()}))
"""
)

_RUN_DASK = (
    _PEAK
    + """
import json, sys, time
from nbcli.engines import open_engine
from nbcli.models import GaussianNB
from nbcli.io.request import DataRequest
from nbcli.workflows.parts import train_parts

t = time.perf_counter()
with open_engine("dask", workers=2, worker_memory="1GB") as engine:
    engine.client.wait_for_workers(2)
    started = time.perf_counter() - t
    train_parts(GaussianNB(), DataRequest.of(sys.argv[1], target="label"), engine)
    workers = sorted(engine.client.run(peak_mb).values())
print(json.dumps({"seconds": time.perf_counter() - t, "startup": started,
                  "peak_mb": peak_mb(), "workers_mb": workers}))
"""
)


def parquet_benchmark(gigabytes: float, repeat: int) -> None:
    """Local streaming fit against ``--engine dask`` on Parquet parts larger than a worker's memory."""
    import json
    import os
    import subprocess
    import sys

    import polars as pl

    d, k, rows = 20, 5, 600_000  # about 100 MB of float64 a part
    n_parts = max(2, round(gigabytes * 1e9 / (rows * (d + 1) * 8)))
    rng = np.random.default_rng(0)
    centres = rng.standard_normal((k, d)) * 2
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    with tempfile.TemporaryDirectory(dir=os.environ.get("TMPDIR", "/tmp")) as tmp:
        t = time.perf_counter()
        for i in range(n_parts):
            y = rng.integers(0, k, rows)
            X = 1e3 + centres[y] + rng.standard_normal((rows, d))
            frame = pl.DataFrame({f"x{j}": X[:, j] for j in range(d)}).with_columns(
                pl.Series("label", y)
            )
            frame.write_parquet(Path(tmp) / f"part-{i:03d}.parquet", compression="uncompressed")
        size = sum(p.stat().st_size for p in Path(tmp).iterdir())
        print(
            f"{n_parts} Parquet parts x {rows:,} rows = {n_parts * rows:,} rows, d={d}, k={k}: "
            f"{size / 1e9:.2f} GB on disk, written in {time.perf_counter() - t:.1f} s"
        )
        out = Path(tmp) / "model.npz"
        local_cmd = [sys.executable, "-c", _RUN, "fit", "-m", "gaussian", "-d", tmp, "-t", "label",
                     "-o", str(out), "-q"]  # fmt: skip
        runs: dict[str, list[dict]] = {"local": [], "dask": []}
        for _ in range(repeat):
            done = subprocess.run(local_cmd, env=env, capture_output=True, text=True, check=True)
            runs["local"].append(json.loads(done.stdout.splitlines()[-1]))
            done = subprocess.run(
                [sys.executable, "-c", _RUN_DASK, tmp],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            )
            runs["dask"].append(json.loads(done.stdout.splitlines()[-1]))
        med = statistics.median
        local, dask = runs["local"], runs["dask"]
        print(
            f"local engine: median {med(r['seconds'] for r in local):.1f} s, "
            f"peak memory {med(r['peak_mb'] for r in local):.0f} MB"
        )
        workers = [med(r["workers_mb"][i] for r in dask) for i in range(2)]
        print(
            f"dask engine, 2 workers x 1 GB: median {med(r['seconds'] for r in dask):.1f} s "
            f"(cluster start-up {med(r['startup'] for r in dask):.1f} s), peak memory per worker "
            f"{workers[0]:.0f} and {workers[1]:.0f} MB, client {med(r['peak_mb'] for r in dask):.0f} MB"
        )


def text_benchmark(n_docs: int, n_parts: int, workers: int, repeat: int) -> None:
    """A ``--text`` fit of one file against part-wise fits, local and on Dask."""
    import polars as pl

    from nbcli.io.request import DataRequest
    from nbcli.text.settings import TextSettings
    from nbcli.workflows.parts import expand_parts, fit_part, train_parts
    from nbcli.workflows.train import train

    rng = np.random.default_rng(0)
    words = np.array([f"w{i}" for i in range(50_000)], dtype=object)
    p = 1.0 / np.arange(1, words.size + 1)
    lengths = rng.integers(3, 20, n_docs)
    tokens = rng.choice(words, lengths.sum(), p=p / p.sum())
    ends = np.cumsum(lengths)
    docs = [" ".join(tokens[e - n : e]) for e, n in zip(ends, lengths)]
    frame = pl.DataFrame(
        {"links": rng.poisson(2, n_docs), "body": docs, "label": rng.choice(list("abc"), n_docs)}
    )
    text = TextSettings(columns=("body",))
    med = statistics.median
    with tempfile.TemporaryDirectory() as tmp:
        one = str(Path(tmp) / "all.csv")
        frame.write_csv(one)
        folder = Path(tmp) / "parts"
        folder.mkdir()
        for i in range(n_parts):
            lo, hi = i * n_docs // n_parts, (i + 1) * n_docs // n_parts
            frame[lo:hi].write_csv(folder / f"part-{i:03d}.csv")
        parts = expand_parts([str(folder)])
        print(
            f"{n_docs:,} documents, {Path(one).stat().st_size / 1e6:.1f} MB of CSV, "
            f"{n_parts} parts; {workers} Dask workers"
        )

        def fit_one():
            return train(nb.MultinomialNB(), DataRequest.of(one, target="label", text=text))

        def fit_parts(engine):
            request = DataRequest.of(str(folder), target="label", text=text)
            return train_parts(nb.MultinomialNB(), request, engine)

        times: dict[str, list[float]] = {"one file": [], "parts, local": [], "parts, dask": []}
        with open_engine("local") as local, open_engine("dask", workers=workers) as dask:
            dask.client.wait_for_workers(workers)
            results = {}
            for _ in range(repeat):  # alternating, so that drifting load hits all alike
                for name, fn in (
                    ("one file", fit_one),
                    ("parts, local", lambda: fit_parts(local)),
                    ("parts, dask", lambda: fit_parts(dask)),
                ):
                    t = time.perf_counter()
                    results[name] = fn().model_file
                    times[name].append(time.perf_counter() - t)
        base = results["one file"]
        for name, mf in results.items():
            assert mf.vocabularies == base.vocabularies, name
            assert np.array_equal(mf.model.feature_count_, base.model.feature_count_), name
        reference = med(times["one file"])
        for name, ts in times.items():
            print(f"{name:<14}{med(ts):>8.2f} s{med(ts) / reference:>8.2f}x one file")
        part = fit_part(0, parts[0], _text_spec(text))
        print(
            f"vocabulary {len(base.vocabularies['body']):,} terms; one part's term statistics "
            f"{len(pickle.dumps(part.stats, protocol=5)) / 1e6:.1f} MB pickled"
        )


def _text_spec(text):
    from nbcli.io.request import DataRequest
    from nbcli.workflows.parts import PartTraining

    return PartTraining(nb.MultinomialNB(), DataRequest.of((), target="label", text=text))


def evaluate_benchmark(args) -> None:
    """``evaluate`` of one CSV file against ``evaluate`` of its rows in parts on Dask."""
    import polars as pl

    from nbcli.io.modelfile import save_model
    from nbcli.io.request import DataRequest
    from nbcli.workflows.evaluate import evaluate
    from nbcli.workflows.evaluate_parts import evaluate_parts
    from nbcli.workflows.settings import ScoreSettings
    from nbcli.workflows.train import train

    rng = np.random.default_rng(0)
    d, k, n = args.features, args.classes, args.parts * args.rows
    centres = rng.standard_normal((k, d)) * 0.6
    y = rng.integers(0, k, n)
    X = centres[y] + rng.standard_normal((n, d))
    frame = pl.DataFrame({f"x{j}": X[:, j] for j in range(d)}).with_columns(pl.Series("label", y))
    med = statistics.median
    with tempfile.TemporaryDirectory() as tmp:
        one = str(Path(tmp) / "all.csv")
        frame.write_csv(one)
        folder = Path(tmp) / "parts"
        folder.mkdir()
        for i in range(args.parts):
            frame[i * args.rows : (i + 1) * args.rows].write_csv(folder / f"part-{i:03d}.csv")
        model = str(Path(tmp) / "model.npz")
        first = DataRequest.of(str(folder / "part-000.csv"), target="label")
        save_model(train(nb.GaussianNB(), first).model_file, model)
        scoring = ScoreSettings(bootstrap=args.resamples, seed=1)
        print(
            f"evaluate: {args.parts} CSV parts x {args.rows:,} rows = {n:,} rows "
            f"({Path(one).stat().st_size / 1e6:.0f} MB), d={d}, k={k}, "
            f"{args.resamples:,} resamples; {args.workers} Dask workers"
        )
        t = time.perf_counter()
        with open_engine("dask", workers=args.workers) as dask:
            dask.client.wait_for_workers(args.workers)
            print(
                f"LocalCluster start-up ({args.workers} workers): {time.perf_counter() - t:.2f} s"
            )
            runs = {
                "one file, local": lambda: evaluate(
                    model, DataRequest.of(one, target="label", sha256=False), scoring
                ),
                "parts, dask": lambda: evaluate_parts(
                    model, DataRequest.of(str(folder), target="label"), dask, scoring
                ),
            }
            if args.levels_at_client:
                # The previous path: every part's levels gathered and merged at the client.
                def at_client(parts, fn, shared, n, column_fn, column_shared=None):
                    return column_fn(0, n, dask.gather_parts(parts, fn, shared), column_shared)

                class AtClient:
                    name = "dask"

                    def __getattr__(self, attr):
                        return at_client if attr == "gather_columns" else getattr(dask, attr)

                runs["parts, dask, levels at client"] = lambda: evaluate_parts(
                    model, DataRequest.of(str(folder), target="label"), AtClient(), scoring
                )
            times: dict[str, list[float]] = {name: [] for name in runs}
            reports = {}
            for _ in range(args.repeat):  # alternating, so that drifting load hits both alike
                for name, fn in runs.items():
                    t = time.perf_counter()
                    reports[name] = fn()
                    times[name].append(time.perf_counter() - t)
    reference = med(times["one file, local"])
    for name, ts in times.items():
        print(f"{name:<30}{med(ts):>8.2f} s{med(ts) / reference:>8.2f}x one file")
    local = reports["one file, local"].to_dict()
    worst = 0.0
    for name in list(runs)[1:]:
        parts = reports[name].to_dict()
        for key, iv in local["metrics"].items():
            got = parts["metrics"][key]
            assert got["method"] == iv["method"], (key, got, iv)
            for end in ("value", "lower", "upper"):
                if iv[end] is not None:
                    worst = max(worst, abs(got[end] - iv[end]))
        assert parts["confusion_matrix"] == local["confusion_matrix"]
    assert worst <= 1e-12, worst
    methods = sorted({iv["method"] for iv in local["metrics"].values()})
    print(f"largest difference of a figure or interval end: {worst:.1e} ({', '.join(methods)})")


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--parts", type=int, default=8)
    ap.add_argument("--rows", type=int, default=250_000, help="rows per part")
    ap.add_argument("--features", type=int, default=20)
    ap.add_argument("--classes", type=int, default=5)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--parquet-gb", type=float, default=None)
    ap.add_argument("--text-docs", type=int, default=None, help="time a --text fit instead")
    ap.add_argument("--evaluate", action="store_true", help="time evaluate over parts instead")
    ap.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples of --evaluate")
    ap.add_argument(
        "--levels-at-client",
        action="store_true",
        help="with --evaluate, also time the previous path (levels merged at the client)",
    )
    args = ap.parse_args(argv)
    if args.evaluate:
        evaluate_benchmark(args)
        return
    if args.text_docs is not None:
        text_benchmark(args.text_docs, args.parts, args.workers, args.repeat)
        return
    if args.parquet_gb is not None:
        parquet_benchmark(args.parquet_gb, args.repeat)
        return
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
