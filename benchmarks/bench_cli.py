"""End-to-end timings of the ``nbcli`` command (run by hand, not in CI).

Every case is timed as a whole process, several times (median reported), so
each side pays interpreter start-up, and every nbcli figure is shown as a
ratio to its floor, the reader's own work done by a bare ``python -c``:

* ``nbcli fit`` on a CSV of N rows x 100 features (10 classes) against
  polars streaming the same file into NumPy arrays
  (``pl.scan_csv(f).collect_batches()`` then ``.to_numpy()``);
* ``nbcli predict --proba -o out.csv`` against polars scanning the file and
  writing an output of the same shape (a label and 10 probabilities a row);
* peak resident memory (``ru_maxrss`` of the child) of a streaming fit with
  a chunk budget a tenth of the file, against the fit's default peak;
* ``nbcli --help`` and ``nbcli predict`` of a 100-row file against
  ``python -c "import numpy"`` (start-up).

Usage: python benchmarks/bench_cli.py [--rows 200000] [--repeat 3] [--workdir DIR]
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


def nbcli_cmd() -> list[str]:
    exe = shutil.which("nbcli", path=str(Path(sys.executable).parent)) or shutil.which("nbcli")
    return [exe] if exe else [sys.executable, "-m", "nbcli"]


def measured(cmd: list[str], repeat: int) -> tuple[float, float]:
    """Median wall time and peak RSS over ``repeat`` runs, each in its own measuring process."""
    walls, peaks = [], []
    probe = (
        "import resource, subprocess, sys, time; t=time.perf_counter(); "
        "r=subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE); "
        "w=time.perf_counter()-t; "
        "sys.exit(r.returncode) if r.returncode else None; "
        "print(w, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss/1024)"
    )
    for _ in range(repeat):
        out = subprocess.run([sys.executable, "-c", probe, *cmd], capture_output=True, text=True)
        if out.returncode != 0:
            raise SystemExit(f"command failed: {' '.join(cmd)}\n{out.stderr}")
        w, p = map(float, out.stdout.split())
        walls.append(w)
        peaks.append(p)
    return statistics.median(walls), max(peaks)


def write_csv(path: Path, rows: int, d: int = 100, k: int = 10, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=2.0, size=(k, d))
    header = ",".join([f"f{i}" for i in range(d)] + ["label"])
    with open(path, "w") as f:
        f.write(header + "\n")
        step = 50_000
        for start in range(0, rows, step):
            m = min(step, rows - start)
            y = rng.integers(0, k, m)
            X = rng.normal(size=(m, d)) + centres[y]
            block = np.column_stack([X, y])
            np.savetxt(f, block, fmt=["%.6g"] * d + ["%d"], delimiter=",")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args(argv)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="nbcli-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    csv = work / f"data_{args.rows}.csv"
    if not csv.exists():
        t0 = time.perf_counter()
        write_csv(csv, args.rows)
        print(
            f"wrote {csv} ({csv.stat().st_size / 2**20:.0f} MiB) in {time.perf_counter() - t0:.0f} s",
            file=sys.stderr,
        )
    nb = nbcli_cmd()
    model = work / "model.npz"
    rows = []

    scan = (
        "import polars as pl\n"
        f"for b in pl.scan_csv({str(csv)!r}).collect_batches():\n"
        "    X = b.drop('label').to_numpy(); y = b['label'].to_numpy()"
    )
    t_scan, m_scan = measured([sys.executable, "-c", scan], args.repeat)
    rows.append(("floor: polars scan_csv to NumPy", t_scan, m_scan, ""))
    t_fit, m_fit = measured(
        [*nb, "fit", "-m", "gaussian", "-d", str(csv), "-o", str(model), "-q"], args.repeat
    )
    rows.append(
        ("nbcli fit gaussian (streaming)", t_fit, m_fit, f"{t_fit / t_scan:.2f}x floor (<= 1.3x)")
    )

    out = work / "out.csv"
    scan_write = (
        "import numpy as np, polars as pl\n"
        f"f = open({str(out)!r}, 'w')\n"
        f"for i, b in enumerate(pl.scan_csv({str(csv)!r}).collect_batches()):\n"
        "    X = b.drop('label').to_numpy()\n"
        "    P = np.exp(X[:, :10]); P /= P.sum(axis=1, keepdims=True)\n"
        "    cols = {'prediction': P.argmax(axis=1)}\n"
        "    cols.update({f'proba_{k}': P[:, k] for k in range(10)})\n"
        "    f.write(pl.DataFrame(cols).write_csv(include_header=i == 0))"
    )
    t_sw, m_sw = measured([sys.executable, "-c", scan_write], args.repeat)
    rows.append(("floor: polars scan + write predict's output", t_sw, m_sw, ""))
    t_pp, m_pp = measured(
        [*nb, "predict", "-m", str(model), "-d", str(csv), "--proba", "-o", str(out), "-q"],
        args.repeat,
    )
    rows.append(
        ("nbcli predict --proba -o out.csv", t_pp, m_pp, f"{t_pp / t_sw:.2f}x floor (<= 2.0x)")
    )

    chunk = max(1, args.rows // 10)
    t_small, m_small = measured(
        [
            *nb,
            "fit",
            "-m",
            "lda",
            "-d",
            str(csv),
            "-o",
            str(model),
            "-q",
            "--chunk-size",
            str(chunk),
        ],
        args.repeat,
    )
    rows.append(
        (
            f"nbcli fit lda, --chunk-size {chunk} (file = 10 chunks)",
            t_small,
            m_small,
            f"peak {m_small / m_fit:.2f}x the default fit's",
        )
    )

    small = work / "small.csv"
    with open(csv) as src, open(small, "w") as dst:
        for i, line in enumerate(src):
            if i > 100:
                break
            dst.write(line)
    fit_small = [*nb, "fit", "-m", "gaussian", "-d", str(small), "-o", str(model), "-q"]
    subprocess.run(fit_small, check=True, capture_output=True)
    t_np, _ = measured([sys.executable, "-c", "import numpy"], max(5, args.repeat))
    t_help, _ = measured([*nb, "--help"], max(5, args.repeat))
    t_pred, _ = measured([*nb, "predict", "-m", str(model), "-d", str(small)], max(5, args.repeat))
    rows.append(('floor: python -c "import numpy"', t_np, float("nan"), ""))
    rows.append(("nbcli --help", t_help, float("nan"), f"{t_help / t_np:.2f}x floor (<= 1.5x)"))
    rows.append(
        ("nbcli predict, 100 rows", t_pred, float("nan"), f"{t_pred / t_np:.2f}x floor (<= 3.5x)")
    )

    print(
        f"\nnbcli end to end, {args.rows:,} rows x 100 features, 10 classes; median of {args.repeat} runs\n"
    )
    print(f"| {'case':<52} | {'wall s':>8} | {'peak MiB':>9} | note")
    print(f"|{'-' * 54}|{'-' * 10}|{'-' * 11}|------")
    for name, t, m, note in rows:
        print(f"| {name:<52} | {t:8.3f} | {m:9.0f} | {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
