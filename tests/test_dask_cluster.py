"""A real cluster as README starts one, and schedulers that cannot be used.

``dask scheduler`` and two ``dask worker`` processes run on 127.0.0.1, each in
a working directory of its own; fit, predict, evaluate, cv and tune of a
mixed table are given relative paths at the client. Then the addresses that are not a
usable scheduler: a port that accepts and never answers (fails within
``--connect-timeout``), something that answers but not as Dask, a refused
port and an unknown host (both at once). Only the loopback is used.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from io import StringIO
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from tests.conftest import assert_one_error_line, nbcli_in_process

pytest.importorskip("distributed")
pytestmark = pytest.mark.dask

DASK = str(Path(sys.executable).with_name("dask"))


def _wait_for(path: Path, seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if path.exists() and path.stat().st_size:
            return
        time.sleep(0.1)
    raise AssertionError(f"{path} did not appear within {seconds} s")


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """The scheduler's address, with two one-thread workers connected, all
    started from their own folders."""
    root = tmp_path_factory.mktemp("cluster")
    info = root / "scheduler.json"
    env = {**os.environ, "DASK_DISTRIBUTED__LOGGING__DISTRIBUTED": "error"}
    procs = []

    def start(name, *args):
        where = root / name
        where.mkdir()
        log = open(where / "log.txt", "w")  # noqa: SIM115 - closed with the process
        procs.append(
            (
                subprocess.Popen(
                    [DASK, *args], cwd=where, stdout=log, stderr=subprocess.STDOUT, env=env
                ),
                log,
            )
        )

    start("scheduler", "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
          "--scheduler-file", str(info))  # fmt: skip
    try:
        _wait_for(info, 60)
        for i in range(2):
            start(f"worker{i}", "worker", "--scheduler-file", str(info), "--nthreads", "1",
                  "--no-dashboard", "--host", "127.0.0.1", "--nworkers", "1")  # fmt: skip
        address = json.loads(info.read_text())["address"]
        from distributed import Client

        with Client(address, timeout=60) as client:
            client.wait_for_workers(2, timeout=60)
        yield address
    finally:
        for proc, _log in reversed(procs):
            proc.terminate()
        for proc, log in procs:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            log.close()


def _ok(*args):
    run = nbcli_in_process(*args)
    assert run.returncode == 0, run.stderr
    return run


def test_fit_predict_evaluate_cv_tune_of_a_mixed_table_by_relative_paths(
    cluster, tmp_path, monkeypatch
):
    from palmerpenguins import load_penguins

    frame = load_penguins().sample(frac=1.0, random_state=4).reset_index(drop=True)
    client = tmp_path / "client"
    (client / "parts").mkdir(parents=True)
    for i, (a, b) in enumerate([(0, 1), (1, 150), (150, len(frame))]):
        frame.iloc[a:b].to_csv(client / "parts" / f"p{i}.csv", index=False)
    frame.to_csv(client / "all.csv", index=False)
    monkeypatch.chdir(client)
    dask = ("--engine", "dask", "--scheduler", cluster)
    _ok("fit", "-m", "mixed", "-d", "parts", "-t", "species", "-o", "model.npz", "-q", *dask)
    _ok("predict", "-m", "model.npz", "-d", "parts", "--proba", "--output-dir", "preds", "-q",
        *dask)  # fmt: skip
    got = pd.concat([pd.read_csv(client / "preds" / f"p{i}.pred.csv") for i in range(3)])
    one = pd.read_csv(
        StringIO(_ok("predict", "-m", "model.npz", "-d", "all.csv", "--proba").stdout)
    )
    assert got.shape == one.shape == (len(frame), 4)
    proba = [c for c in one if c.startswith("proba_")]
    np.testing.assert_allclose(got[proba].to_numpy(), one[proba].to_numpy(), rtol=0, atol=1e-12)
    args = ("evaluate", "-m", "model.npz", "--json", "-", "-q", "--bootstrap", "0")
    by_parts = json.loads(_ok(*args, "-d", "parts", *dask).stdout)["metrics"]
    whole = json.loads(_ok(*args, "-d", "all.csv").stdout)["metrics"]
    for name in ("accuracy", "log_loss", "roc_auc", "average_precision"):
        assert by_parts[name]["value"] == pytest.approx(whole[name]["value"], rel=0, abs=1e-12)
    # cv and tune: the one-file folds, hence the one-file per-fold figures.
    cv = ("cv", "-m", "mixed", "-t", "species", "-k", "4", "--bootstrap", "0", "--json", "-")
    by_parts = json.loads(_ok(*cv, "-d", "parts", *dask).stdout)["folds"]
    whole = json.loads(_ok(*cv, "-d", "all.csv").stdout)["folds"]
    assert len(by_parts) == len(whole) == 4
    for a, b in zip(by_parts, whole):
        assert a["n_samples"] == b["n_samples"]
        for name in ("accuracy", "log_loss", "roc_auc"):
            assert a["metrics"][name] == pytest.approx(b["metrics"][name], rel=0, abs=1e-12)
    _ok("tune", "-m", "mixed", "-d", "parts", "-t", "species", "--alpha", "0.5,1", "-q",
        "--bootstrap", "0", "-o", "tuned.npz", *dask)  # fmt: skip
    assert (client / "tuned.npz").stat().st_size > 0


def test_a_path_a_worker_cannot_see_is_named_with_the_worker(cluster, tmp_path):
    from nbcli.engines.dask_engine import DaskEngine
    from nbcli.errors import NbcliError
    from nbcli.io.request import DataRequest
    from nbcli.models import GaussianNB
    from nbcli.workflows.parts import PartTraining, fit_part

    if not os.path.isdir("/proc/self/fd"):
        pytest.skip("needs /proc/self/fd")
    # An open file descriptor of this (the client's) process: the path exists
    # here and in no worker process.
    (tmp_path / "p0.csv").write_text("x,label\n1,a\n", encoding="utf-8")
    with open(tmp_path / "p0.csv", "rb") as f:
        fd = os.dup2(f.fileno(), 987)
        try:
            seen_here = f"/proc/self/fd/{fd}"
            assert os.path.exists(seen_here)
            with DaskEngine(cluster) as engine, pytest.raises(NbcliError) as caught:
                engine.sum_over_parts(
                    [seen_here], fit_part, PartTraining(GaussianNB(), DataRequest())
                )
        finally:
            os.close(fd)
    message = str(caught.value)
    assert seen_here in message and "the Dask worker tcp://127.0.0.1:" in message
    assert "the workers need the same file system" in message


def test_a_path_missing_at_the_client_too_is_no_such_file(cluster, tmp_path):
    # A mistyped path is the user's, not the cluster's: the local engine's message.
    (tmp_path / "t.csv").write_text("x,label\n1,a\n2,b\n1.1,a\n2.2,b\n", encoding="utf-8")
    _ok("fit", "-m", "gaussian", "-d", tmp_path / "t.csv", "-o", tmp_path / "m.npz", "-q")
    dask = ("--engine", "dask", "--scheduler", cluster)
    missing = tmp_path / "nonexist"
    run = nbcli_in_process(
        "fit", "-m", "gaussian", "-d", f"{missing}/", "-o", tmp_path / "m2.npz", *dask
    )
    line = assert_one_error_line(run, str(missing), "no such file; check the path")
    assert "Dask worker" not in line
    assert not (tmp_path / "m2.npz").exists()
    run = nbcli_in_process(
        "predict", "-m", tmp_path / "m.npz", "-d", f"{missing}.csv",
        "--output-dir", tmp_path / "out", "-q", *dask,
    )  # fmt: skip
    assert run.returncode == 2, run.stderr
    errors = [line for line in run.stderr_lines if line.startswith("error:")]
    assert f"{missing}.csv: no such file; check the path" in errors[0]
    assert "Dask worker" not in run.stderr


def _listener(answer: bytes | None):
    """A loopback port that accepts and then says nothing (``answer`` None) or
    sends ``answer``; closed after the test."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    held, stop = [], threading.Event()

    def serve():
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            held.append(conn)
            if answer is not None:
                conn.sendall(answer)
                conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()

    def close():
        stop.set()
        thread.join(5)
        for conn in held:
            conn.close()
        server.close()

    return f"tcp://127.0.0.1:{server.getsockname()[1]}", close


def _fit_against(tmp_path, address, *extra):
    data = tmp_path / "parts"
    data.mkdir(exist_ok=True)
    (data / "a.csv").write_text("x,label\n1.0,a\n2.0,b\n1.5,a\n2.5,b\n")
    started = time.monotonic()
    run = nbcli_in_process("fit", "-m", "gaussian", "-d", data, "-o", tmp_path / "m.npz",
                           "--engine", "dask", "--scheduler", address, *extra)  # fmt: skip
    return run, time.monotonic() - started


def test_a_port_that_accepts_and_never_answers_fails_within_the_timeout(tmp_path):
    address, close = _listener(None)
    try:
        run, seconds = _fit_against(tmp_path, address, "--connect-timeout", "2")
    finally:
        close()
    assert_one_error_line(run, "did not answer within 2 s", "--connect-timeout")
    assert seconds < 2 + 8  # the timeout, and a margin for a busy machine
    assert not (tmp_path / "m.npz").exists()


def test_something_that_is_not_a_dask_scheduler_is_named(tmp_path):
    address, close = _listener(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n" * 40)
    try:
        run, _ = _fit_against(tmp_path, address, "--connect-timeout", "10")
    finally:
        close()
    line = assert_one_error_line(run, "is not a Dask scheduler")
    assert "memory" not in line


def test_a_refused_port_fails_at_once(tmp_path):
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()  # bound once, now nothing listens there
    run, seconds = _fit_against(tmp_path, f"tcp://127.0.0.1:{port}")
    assert_one_error_line(run, "connection refused")
    assert seconds < 10  # not the 30 s connect timeout


def test_an_unknown_host_fails_at_once(tmp_path, monkeypatch):
    # The name service answers here, without a query leaving the machine.
    def unknown(host, *args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", unknown)
    run, seconds = _fit_against(tmp_path, "tcp://scheduler.example:8786")
    assert_one_error_line(run, "unknown host 'scheduler.example'")
    assert seconds < 10


def test_an_empty_scheduler_address_is_refused(tmp_path):
    # An unset shell variable: a local cluster started in its place would hide it.
    run, _ = _fit_against(tmp_path, "")
    assert_one_error_line(run, "--scheduler is empty")
