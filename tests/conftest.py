"""Shared helpers for the tests: running the real ``nbcli`` executable, small
data sets, and model files built in process."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from nbcli.io.request import DataRequest

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"

#: Two well separated classes, two features, three rows each.
SMALL_CSV = "a,b,label\n1,2,x\n2,3,x\n3,1,x\n5,6,y\n6,7,y\n7,5,y\n"


@dataclass
class Run:
    """The outcome of one ``nbcli`` process."""

    args: list
    returncode: int
    stdout: str
    stderr: str

    @property
    def stderr_lines(self) -> list[str]:
        return self.stderr.strip().splitlines()


def posterior_tolerance(model, X, *posteriors):
    """Per cell, how far two computations of ``model``'s posteriors on ``X``
    may differ when only rounding differs: another summation order (BLAS
    kernel, row blocks, memory layout), or stored and recomputed parameters.

    A class score summed from d terms moves by at most about d * eps times
    the terms' magnitude (Higham, Accuracy and Stability of Numerical
    Algorithms, 2nd ed., eq. 3.5), and a posterior p by at most 2 p times the
    largest such move (softmax); a factor 4 covers the roundings of exp and
    log-sum-exp, and eps itself those of a posterior near 1. An affine model
    (LDA: ``coef (x - xbar) + b``) may cancel to a small score, so its terms
    are bounded; the other models' scores are dominated by terms of one sign
    (log-probabilities, squared standardised deviations), bounded by the
    scores themselves. ``posteriors`` (arrays of shape (n_rows, n_classes))
    give the p of each cell: the largest of them.
    """
    eps = np.finfo(np.float64).eps
    X = np.asarray(X, dtype=np.float64)
    if hasattr(model, "coef_") and hasattr(model, "xbar_"):
        terms = np.abs(X - model.xbar_) @ np.abs(model.coef_).T + np.abs(model.intercept_)
        magnitude = terms.max(axis=1)
    else:
        magnitude = np.abs(model.joint_log_likelihood_block(X)).max(axis=0)
    p = np.maximum.reduce([np.asarray(q, dtype=np.float64) for q in posteriors])
    return 4 * X.shape[1] * eps * magnitude[:, None] * p + eps


def nbcli(*args, stdin: bytes | None = None, cwd=None) -> Run:
    """Run ``python -m nbcli ARGS`` (the console script's own code path) in a
    fresh process and return what it did."""
    env = dict(os.environ, COLUMNS="100", NO_COLOR="1")
    env.pop("NBCLI_DEBUG", None)
    argv = [str(a) for a in args]
    done = subprocess.run(
        [sys.executable, "-m", "nbcli", *argv],
        input=stdin,
        capture_output=True,
        cwd=cwd,
        env=env,
        timeout=120,
    )
    return Run(
        argv,
        done.returncode,
        done.stdout.decode("utf-8", "replace"),
        done.stderr.decode("utf-8", "replace"),
    )


def nbcli_in_process(*args) -> Run:
    """Run the console script's entry point, ``nbcli.cli.app.main``, in this
    process (no interpreter start-up: for cases about nbcli's own logic
    rather than the process around it)."""
    import contextlib

    from nbcli.cli.app import main

    argv = [str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(argv)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return Run(argv, code, out.getvalue(), err.getvalue())


def nbcli_many(calls: list[tuple]) -> list[Run]:
    """Run several independent ``nbcli`` processes at once (each call is a
    tuple of arguments, or ``(args, stdin_bytes)`` when the last item is
    bytes); results come back in order. Start-up (imports) dominates each
    run, so running them side by side keeps the suite fast."""

    def one(call):
        if call and isinstance(call[-1], bytes):
            return nbcli(*call[:-1], stdin=call[-1])
        return nbcli(*call)

    with ThreadPoolExecutor(max_workers=(os.cpu_count() or 2) + 1) as pool:
        return list(pool.map(one, calls))


def assert_one_error_line(run: Run, *fragments: str, code: int = 2) -> str:
    """The run failed with ``code`` and said why in exactly one ``error:``
    line on stderr, containing every fragment, with no traceback."""
    assert run.returncode == code, (run.args, run.returncode, run.stderr)
    assert "Traceback" not in run.stderr, run.stderr
    lines = run.stderr_lines
    assert len(lines) == 1 and lines[0].startswith("error: "), run.stderr
    for fragment in fragments:
        assert fragment in lines[0], (fragment, lines[0])
    return lines[0]


def fitted_model_file(path, model: str = "gaussian", csv_text: str = SMALL_CSV, **params):
    """Write a model file the way ``nbcli fit`` does, in process; returns its ModelFile."""
    from nbcli.io.modelfile import save_model
    from nbcli.models import MODELS
    from nbcli.workflows.train import train

    data = Path(path).with_suffix(".train.csv")
    data.write_text(csv_text, encoding="utf-8")
    result = train(MODELS[model](**params), DataRequest.of(str(data)))
    save_model(result.model_file, path)
    return result.model_file


def blobs(n_per_class: int = 20, d: int = 3, seed: int = 0, shift: float = 3.0):
    """Gaussian blobs: X of shape (2 * n_per_class, d), labels "a"/"b"."""
    rng = np.random.default_rng(seed)
    X = np.concatenate(
        [rng.normal(size=(n_per_class, d)), rng.normal(size=(n_per_class, d)) + shift]
    )
    y = np.repeat(np.array(["a", "b"]), n_per_class)
    return X, y


# -- crafting .npz files byte by byte -----------------------------------------


def zip_members(path) -> dict[str, bytes]:
    with zipfile.ZipFile(path) as zf:
        return {info.filename: zf.read(info) for info in zf.infolist()}


def zip_bytes(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def npy_bytes(array) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array)
    return buf.getvalue()


def npy_header(shape, dtype="<f8") -> bytes:
    """A .npy header alone, declaring ``shape`` of ``dtype``."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": dtype, "fortran_order": False, "shape": shape}
    )
    return buf.getvalue()


def lying_archive(d: int = 4000) -> bytes:
    """A small LDA model file whose metadata says n_features=d and whose
    zip directory claims the (2, d, d) scatter array is all there (256 MB
    for d=4000), though the file holds a few bytes of it."""
    names = [f"f{j}" for j in range(d)]
    meta = {
        "format": "nbcli-model",
        "format_version": 1,
        "nbcli_version": "0.1.0",
        "model": "lda",
        "hyperparameters": {"priors": None, "shrinkage": None, "tol": 1e-4},
        "classes": ["x", "y"],
        "feature_names": names,
        "n_features": d,
        "target": "label",
        "training": {"n_samples": 10},
        "calibration": None,
        "stats": {"type": "ClassScatter", "arrays": ["count", "offset", "scatter", "shift"]},
    }
    header = npy_header((2, d, d))
    members = {
        "metadata.npy": npy_bytes(np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)),
        "stats.count.npy": npy_bytes(np.array([5.0, 5.0])),
        "stats.offset.npy": npy_bytes(np.zeros((2, d))),
        "stats.shift.npy": npy_bytes(np.zeros((2, d))),
        "stats.scatter.npy": header + b"\0" * 64,
    }
    raw = bytearray(zip_bytes(members))
    claimed = len(header) + 2 * d * d * 8
    name = b"stats.scatter.npy"
    # Sizes in the local header (offsets 18, 22) and the central directory
    # entry (offsets 20, 24), both 4-byte little-endian.
    local = raw.index(b"PK\x03\x04")
    while raw[local + 30 : local + 30 + len(name)] != name:
        local = raw.index(b"PK\x03\x04", local + 4)
    central = raw.index(b"PK\x01\x02")
    while raw[central + 46 : central + 46 + len(name)] != name:
        central = raw.index(b"PK\x01\x02", central + 4)
    size = int(claimed).to_bytes(4, "little")
    raw[local + 18 : local + 26] = size + size
    raw[central + 20 : central + 28] = size + size
    return bytes(raw)


@pytest.fixture(scope="session")
def sample_dir() -> Path:
    return SAMPLE
