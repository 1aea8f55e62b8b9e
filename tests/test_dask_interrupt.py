"""Ctrl-C during ``fit --engine dask``: nbcli's one line and exit 130, nothing of Dask's.

The command runs in its own process group, signalled as a terminal's Ctrl-C
signals it: the client and every worker process of its LocalCluster get
SIGINT. Selected with ``-m dask``; skipped when Dask is not installed.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("distributed")

pytestmark = pytest.mark.dask

#: Threads of a spawned worker process once its Dask worker runs (a started
#: worker has about twenty; an interpreter still importing has one to three).
STARTED_THREADS = 10


def _write_parts(folder: Path, n_parts: int = 8, rows: int = 3000) -> Path:
    parts = folder / "parts"
    parts.mkdir()
    rng = np.random.default_rng(5)
    for i in range(n_parts):
        y = rng.integers(0, 2, rows)
        X = rng.normal(size=(rows, 4)) + y[:, None]
        lines = ["x0,x1,x2,x3,label"] + [
            ",".join(f"{v:.6f}" for v in x) + f",{c}" for x, c in zip(X, y)
        ]
        (parts / f"part-{i:02d}.csv").write_text("\n".join(lines) + "\n")
    return parts


def _workers(pid: int) -> dict[int, int]:
    """Spawned worker processes of ``pid``: their threads, by process id."""
    found = {}
    try:
        children = [
            int(c)
            for task in os.listdir(f"/proc/{pid}/task")
            for c in Path(f"/proc/{pid}/task/{task}/children").read_text().split()
        ]
    except OSError:
        return found
    for child in children:
        try:
            command = Path(f"/proc/{child}/cmdline").read_bytes()
            status = Path(f"/proc/{child}/status").read_text()
        except OSError:
            continue
        if b"spawn_main" in command:
            threads = [line for line in status.splitlines() if line.startswith("Threads:")]
            found[child] = int(threads[0].split()[1])
    return found


def _interrupt_fit(tmp_path: Path, ready) -> tuple[int, str, Path]:
    """Start the fit; once ``ready(workers)`` holds, Ctrl-C its process group."""
    parts = _write_parts(tmp_path)
    out = tmp_path / "model.npz"
    command = [sys.executable, "-m", "nbcli", "fit", "--engine", "dask", "--workers", "2"]
    command += ["-m", "gaussian", "-d", str(parts), "-o", str(out), "--quiet"]
    proc = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        deadline = time.monotonic() + 60
        while proc.poll() is None and not ready(_workers(proc.pid)):
            assert time.monotonic() < deadline, "the local cluster did not start in 60 s"
            time.sleep(0.02)
        assert proc.poll() is None, "the fit ended before it could be interrupted"
        os.killpg(proc.pid, signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    return proc.returncode, err.decode("utf-8", "replace"), out


def _assert_interrupted(code: int, err: str, out: Path) -> None:
    assert code == 130, err
    assert err.splitlines() == ["error: interrupted"], err
    assert not out.exists()
    assert not [p for p in out.parent.iterdir() if p.name.startswith(".model.npz")]


def test_ctrl_c_during_the_cluster_start_gives_one_line_and_exit_130(tmp_path):
    # Both worker interpreters spawned, neither a running Dask worker yet.
    code, err, out = _interrupt_fit(tmp_path, lambda w: len(w) == 2)
    _assert_interrupted(code, err, out)


def test_ctrl_c_after_the_cluster_started_gives_one_line_and_exit_130(tmp_path):
    code, err, out = _interrupt_fit(
        tmp_path, lambda w: len(w) == 2 and min(w.values()) >= STARTED_THREADS
    )
    _assert_interrupted(code, err, out)
