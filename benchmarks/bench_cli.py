"""End-to-end timings of the ``nbcli`` command (run by hand, not in CI).

Every case is timed as a whole process, so each side pays interpreter
start-up, and every nbcli figure is shown as a ratio to its floor, the
reader's own work done by a bare ``python -c``:

* ``nbcli fit`` on a CSV of N rows x 100 features (10 classes) against
  polars streaming the same file into NumPy arrays
  (``pl.scan_csv(f).collect_batches()`` then ``.to_numpy()``; target 1.3x);
* ``nbcli predict --proba -o out.csv`` against polars scanning the file and
  writing an output of the same shape (a label and 10 probabilities a row;
  target 2.0x);
* peak resident memory (``ru_maxrss`` of the child) of a streaming fit whose
  chunk budget is a hundredth of the file, on the first tenth of the file
  (10 chunks) and on all of it (100 chunks): the same within 10%, under 1 GB
  (``ru_maxrss`` also counts the pages of the input that polars maps, which
  belong to the file and which the system can drop at any time: they add up
  to the file's size to the peak, as they do to the floors');
* ``nbcli --help``, and ``nbcli predict`` and ``nbcli evaluate`` of a
  100-row file, against ``python -c "import numpy"`` (start-up; targets
  1.5x, 2.5x and 3.0x).

A command and its floor run in turn (floor, command, floor, command, ...),
and each ratio is the median of the ratios of those pairs, so that a machine
whose speed drifts during the run (other work) moves both sides alike; the
medians of the times are printed beside them. ``--quick`` times only the two
ratios of fit and predict.

The child processes run as an installed package does, with their bytecode
compiled once (in a cache under the work folder, whatever
``PYTHONDONTWRITEBYTECODE`` says): otherwise every nbcli run would compile
its modules again, which a floor importing only installed libraries never
does. One untimed run of each command comes first.

Usage: python benchmarks/bench_cli.py [--rows 200000] [--repeat 3] [--quick] [--workdir DIR]
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

_PROBE = (
    "import resource, subprocess, sys, time; t=time.perf_counter(); "
    "r=subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE); "
    "w=time.perf_counter()-t; "
    "sys.exit(r.returncode) if r.returncode else None; "
    "print(w, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss/1024)"
)


def nbcli_cmd() -> list[str]:
    exe = shutil.which("nbcli", path=str(Path(sys.executable).parent)) or shutil.which("nbcli")
    return [exe] if exe else [sys.executable, "-m", "nbcli"]


def child_env(work: Path) -> dict[str, str]:
    """The environment of the timed processes: bytecode cached under ``work``."""
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    return env


def run_once(cmd: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall time and peak RSS (MiB) of one run, in its own measuring process."""
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, *cmd], capture_output=True, text=True, env=env
    )
    if out.returncode != 0:
        raise SystemExit(f"command failed: {' '.join(cmd)}\n{out.stderr}")
    wall, peak = map(float, out.stdout.split())
    return wall, peak


def paired(
    cmd: list[str], floor: list[str], repeat: int, env: dict[str, str]
) -> tuple[float, float, float, float]:
    """Median wall time of ``cmd`` and of ``floor``, run in turn after one
    untimed run of each, the median of their pairwise ratios, and the peak
    RSS of ``cmd``."""
    run_once(floor, env)
    run_once(cmd, env)
    walls, floors, ratios, peaks = [], [], [], []
    for _ in range(repeat):
        f, _ = run_once(floor, env)
        w, p = run_once(cmd, env)
        walls.append(w)
        floors.append(f)
        ratios.append(w / f)
        peaks.append(p)
    return (
        statistics.median(walls),
        statistics.median(floors),
        statistics.median(ratios),
        max(peaks),
    )


def measured(cmd: list[str], repeat: int, env: dict[str, str]) -> tuple[float, float]:
    """Median wall time and peak RSS over ``repeat`` runs (after an untimed one)."""
    run_once(cmd, env)
    runs = [run_once(cmd, env) for _ in range(repeat)]
    return statistics.median(w for w, _ in runs), max(p for _, p in runs)


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


def head(src: Path, dst: Path, rows: int) -> None:
    """The header and first ``rows`` data rows of ``src``."""
    with open(src) as fin, open(dst, "w") as fout:
        for i, line in enumerate(fin):
            if i > rows:
                break
            fout.write(line)


def floors(csv: Path, out: Path) -> tuple[list[str], list[str]]:
    """The two floors: scanning the CSV to NumPy, and scanning plus writing
    an output of predict's shape."""
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
        "    P = np.exp(X[:, :10]); P /= P.sum(axis=1, keepdims=True)\n"
        "    cols = {'prediction': P.argmax(axis=1)}\n"
        "    cols.update({f'proba_{k}': P[:, k] for k in range(10)})\n"
        "    f.write(pl.DataFrame(cols).write_csv(include_header=i == 0))"
    )
    return [sys.executable, "-c", scan], [sys.executable, "-c", scan_write]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="only the fit and predict ratios")
    ap.add_argument("--workdir", type=Path, default=None)
    args = ap.parse_args(argv)
    work = args.workdir or Path(tempfile.mkdtemp(prefix="nbcli-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    env = child_env(work)
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
    out = work / "out.csv"
    scan, scan_write = floors(csv, out)
    rows = []

    fit = [*nb, "fit", "-m", "gaussian", "-d", str(csv), "-o", str(model), "-q"]
    t_fit, t_scan, r_fit, m_fit = paired(fit, scan, args.repeat, env)
    rows.append(("floor: polars scan_csv to NumPy", t_scan, float("nan"), ""))
    rows.append(("nbcli fit gaussian (streaming)", t_fit, m_fit, f"{r_fit:.2f}x floor (<= 1.3x)"))

    predict = [*nb, "predict", "-m", str(model), "-d", str(csv), "--proba", "-o", str(out), "-q"]
    t_pp, t_sw, r_pp, m_pp = paired(predict, scan_write, args.repeat, env)
    rows.append(("floor: polars scan + write predict's output", t_sw, float("nan"), ""))
    rows.append(("nbcli predict --proba -o out.csv", t_pp, m_pp, f"{r_pp:.2f}x floor (<= 2.0x)"))

    if not args.quick:
        rows.extend(memory_rows(nb, csv, work, args.rows, args.repeat, env))
        rows.extend(startup_rows(nb, csv, work, max(5, args.repeat), env))

    print(
        f"\nnbcli end to end, {args.rows:,} rows x 100 features, 10 classes; "
        f"medians of {args.repeat} alternating runs\n"
    )
    print(f"| {'case':<52} | {'wall s':>8} | {'peak MiB':>9} | note")
    print(f"|{'-' * 54}|{'-' * 10}|{'-' * 11}|------")
    for name, t, m, note in rows:
        print(f"| {name:<52} | {t:8.3f} | {m:9.0f} | {note}")
    print(f"\nfit / floor {r_fit:.2f}x (<= 1.3x); predict --proba -o / floor {r_pp:.2f}x (<= 2.0x)")
    return 0


def memory_rows(nb, csv: Path, work: Path, n_rows: int, repeat: int, env) -> list:
    """A streaming fit on 10 and on 100 times its chunk budget."""
    chunk = max(1, n_rows // 100)
    tenth = work / "tenth.csv"
    head(csv, tenth, chunk * 10)
    model = work / "model_chunked.npz"
    peaks = {}
    for times, data in ((10, tenth), (100, csv)):
        cmd = [*nb, "fit", "-m", "gaussian", "-d", str(data), "-o", str(model), "-q"]
        peaks[times] = measured([*cmd, "--chunk-size", str(chunk)], repeat, env)
    (t10, m10), (t100, m100) = peaks[10], peaks[100]
    return [
        (f"nbcli fit, --chunk-size {chunk}, file = 10 chunks", t10, m10, ""),
        (
            f"nbcli fit, --chunk-size {chunk}, file = 100 chunks",
            t100,
            m100,
            f"peak {m100 / m10:.2f}x the 10-chunk fit's (<= 1.1x, < 1 GB)",
        ),
    ]


def startup_rows(nb, csv: Path, work: Path, repeat: int, env) -> list:
    """``--help`` and a 100-row predict against ``python -c "import numpy"``."""
    small = work / "small.csv"
    head(csv, small, 100)
    model = work / "model_small.npz"
    fit_small = [*nb, "fit", "-m", "gaussian", "-d", str(small), "-o", str(model), "-q"]
    subprocess.run(fit_small, check=True, capture_output=True, env=env)
    numpy = [sys.executable, "-c", "import numpy"]
    t_help, t_np, r_help, _ = paired([*nb, "--help"], numpy, repeat, env)
    t_pred, t_np2, r_pred, _ = paired(
        [*nb, "predict", "-m", str(model), "-d", str(small)], numpy, repeat, env
    )
    t_eval, t_np3, r_eval, _ = paired(
        [*nb, "evaluate", "-m", str(model), "-d", str(small)], numpy, repeat, env
    )
    nan = float("nan")
    return [
        ('floor: python -c "import numpy"', statistics.median([t_np, t_np2, t_np3]), nan, ""),
        ("nbcli --help", t_help, nan, f"{r_help:.2f}x floor (<= 1.5x)"),
        ("nbcli predict, 100 rows", t_pred, nan, f"{r_pred:.2f}x floor (<= 2.5x)"),
        ("nbcli evaluate, 100 rows", t_eval, nan, f"{r_eval:.2f}x floor (<= 3.0x)"),
    ]


if __name__ == "__main__":
    sys.exit(main())
