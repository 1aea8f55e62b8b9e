"""End-to-end timings of the ``nbcli`` command (run by hand, not in CI).

Cases, each timed as a whole process several times (median reported):

* ``nbcli fit`` on a CSV of N rows x 100 features (10 classes) against
  parsing the same file alone with pandas' C engine (``pd.read_csv``) in a
  fresh process: the ratio says what streaming, validation and fitting add
  to the unavoidable parse.
* peak resident memory (``ru_maxrss`` of the child) of a streaming fit of
  that CSV with a chunk budget a tenth of the file, against the peak of
  parsing the file whole with pandas.
* ``nbcli --help`` and ``nbcli predict`` of a 100-row file (start-up).

Usage: python benchmarks/bench_cli.py [--rows 1000000] [--repeat 3] [--workdir DIR]
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
    ap.add_argument("--rows", type=int, default=1_000_000)
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

    parse = [sys.executable, "-c", f"import pandas as pd; pd.read_csv({str(csv)!r}, engine='c')"]
    t_parse, m_parse = measured(parse, args.repeat)
    # pandas' chunked reader is slower than its whole-file one even for a
    # single chunk; this is the parse a streaming reader can build on.
    chunked = [
        sys.executable,
        "-c",
        f"import pandas as pd\nfor _ in pd.read_csv({str(csv)!r}, engine='c', chunksize=83000): pass",
    ]
    t_chunked, m_chunked = measured(chunked, args.repeat)
    t_fit, m_fit = measured(
        [*nb, "fit", "-m", "gaussian", "-d", str(csv), "-o", str(model), "-q"], args.repeat
    )
    rows.append(("pandas read_csv (C engine), whole file", t_parse, m_parse, ""))
    rows.append(
        (
            "pandas read_csv (C engine), chunks of 83,000 rows",
            t_chunked,
            m_chunked,
            f"{t_chunked / t_parse:.2f}x whole-file parse",
        )
    )
    rows.append(
        (
            "nbcli fit gaussian (streaming)",
            t_fit,
            m_fit,
            f"{t_fit / t_parse:.2f}x whole-file parse, {t_fit / t_chunked:.2f}x chunked parse",
        )
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
            f"peak {m_small / m_parse:.2f}x pandas whole-file peak",
        )
    )

    small = work / "small.csv"
    with open(csv) as src, open(small, "w") as dst:
        for i, line in enumerate(src):
            if i > 100:
                break
            dst.write(line)
    t_help, _ = measured([*nb, "--help"], max(5, args.repeat))
    t_pred, _ = measured([*nb, "predict", "-m", str(model), "-d", str(small)], max(5, args.repeat))
    rows.append(("nbcli --help", t_help, float("nan"), "target < 0.3 s"))
    rows.append(("nbcli predict, 100 rows", t_pred, float("nan"), "target < 1 s"))

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
