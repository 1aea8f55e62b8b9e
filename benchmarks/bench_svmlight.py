"""Peak memory and time of ``nbcli fit`` on a large svmlight file.

Writes a synthetic svmlight file of about ``--gb`` gigabytes (count features,
five classes whose counts differ), then times ``nbcli fit -m multinomial`` on
it as a whole process and reads the process's peak resident set size. The
reader streams the file a chunk at a time, so the peak should not grow with
the file (the target: under 500 MB for 1 GB).

    python benchmarks/bench_svmlight.py --gb 1.0
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import dump_svmlight_file


def write(path: Path, gb: float, n_features: int = 2000, nnz: int = 60) -> int:
    """Write blocks of 25,000 rows until the file reaches ``gb``; returns rows."""
    rng = np.random.default_rng(0)
    rows = 0
    with open(path, "wb") as f:
        while f.tell() < gb * 1e9:
            n = 25_000
            y = rng.integers(0, 5, n)
            cols = rng.integers(1, n_features - 1, (n, nnz)).ravel()
            vals = rng.poisson(1 + 2 * (cols % 5 == np.repeat(y, nnz))) + 1.0
            X = sp.csr_matrix((vals, (np.repeat(np.arange(n), nnz), cols)), (n, n_features))
            X = X.tolil()
            X[0, 0] = X[0, n_features - 1] = 1.0  # the first and last index occur
            dump_svmlight_file(X.tocsr(), y, f, zero_based=True)
            rows += n
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gb", type=float, default=1.0)
    args = parser.parse_args()
    nbcli = shutil.which("nbcli") or sys.exit("nbcli is not on PATH")
    folder = Path(tempfile.mkdtemp(prefix="nbcli-svm-"))
    try:
        data = folder / "big.svm"
        rows = write(data, args.gb)
        size = os.path.getsize(data)
        start = time.perf_counter()
        subprocess.run([nbcli, "fit", "-m", "multinomial", "-d", str(data),
                        "-o", str(folder / "m.npz"), "--quiet"], check=True)  # fmt: skip
        seconds = time.perf_counter() - start
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        print("| file | rows | fit | peak RSS |")
        print("| --- | ---: | ---: | ---: |")
        print(f"| {size / 1e9:.2f} GB svmlight | {rows:,} | {seconds:.0f} s | {peak_mb:.0f} MB |")
    finally:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
