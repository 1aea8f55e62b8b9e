"""``nbcli evaluate`` against ``nbcli predict`` of the same file and model (run by hand).

Writes a labelled CSV of N rows x D features (Gaussian classes, K of them)
in a temporary folder, fits a Gaussian naive Bayes model on it, then times
both commands as whole processes, alternately (evaluate, predict, evaluate,
...), ``--repeat`` times each, and prints their medians and the ratio
evaluate / predict (issue 10's target: at most 1.5 on 1,000,000 rows with
the default 1,000 resamples). ``predict`` writes its labels to a file
(``-o``); ``evaluate`` prints its report to a discarded stdout. The folder
is deleted at the end.

Usage: python benchmarks/bench_evaluate.py [--rows 1000000] [--features 20]
[--classes 8] [--repeat 3] [--bootstrap 1000]
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from _installed import alternate, as_installed, print_pairs, wall, write_gaussian_csv


def nbcli_cmd() -> list[str]:
    return [sys.executable, "-m", "nbcli"]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--features", type=int, default=20)
    ap.add_argument("--classes", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--bootstrap", type=int, default=1000)
    args = ap.parse_args(argv)
    as_installed()  # child processes read compiled bytecode, as after pip install
    work = Path(tempfile.mkdtemp(prefix="nbcli-bench-evaluate-"))
    try:
        data, model, out = work / "data.csv", work / "model.npz", work / "labels.csv"
        write_gaussian_csv(data, args.rows, args.features, args.classes, 0, 0)
        nb = nbcli_cmd()
        wall([*nb, "fit", "--model", "gaussian", "--data", str(data), "-o", str(model)])
        evaluate = [*nb, "evaluate", "--model", str(model), "--data", str(data)]
        evaluate += ["--bootstrap", str(args.bootstrap)]
        predict = [*nb, "predict", "--model", str(model), "--data", str(data), "-o", str(out)]
        wall(predict)  # warm the page cache
        times, ratios = alternate({"evaluate": evaluate, "predict": predict}, args.repeat)
        shape = f"{args.rows:,} x {args.features}, {args.classes} classes"
        print(f"data: {shape}; {args.bootstrap} resamples; {args.repeat} alternating runs each")
        print_pairs(times, ratios, "evaluate / predict", 1.5)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
