"""Ctrl-C and SIGTERM once the new model file has replaced the old one: the
command completes (exit 0) rather than report a failure for finished work."""

from __future__ import annotations

import os
import signal

import pytest

from tests.conftest import SMALL_CSV, fitted_model_file, nbcli_in_process


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_just_after_the_model_is_replaced_is_not_a_failure(tmp_path, monkeypatch, signum):
    import nbcli.io.modelfile as modelfile

    data = tmp_path / "d.csv"
    data.write_text(SMALL_CSV, encoding="utf-8")
    out = tmp_path / "m.npz"
    fitted_model_file(out, csv_text=SMALL_CSV.replace("x\n", "z\n"))
    old = out.read_bytes()
    save = modelfile.save_model

    def save_then_signal(*args, **kwargs):
        save(*args, **kwargs)
        os.kill(os.getpid(), signum)  # as if Ctrl-C came right after the rename

    monkeypatch.setattr(modelfile, "save_model", save_then_signal)
    run = nbcli_in_process("fit", "-m", "gaussian", "-d", data, "-o", out)
    assert run.returncode == 0, run.stderr
    assert out.read_bytes() != old
    assert f"wrote {out}" in run.stderr_lines
    assert "interrupted" not in run.stderr and "terminated" not in run.stderr
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero and /dev/urandom")
def test_endless_devices_fail_fast_with_exit_2(tmp_path):
    import time

    from tests.conftest import assert_one_error_line, nbcli_many

    started = time.perf_counter()
    zero, rand, evaluate = nbcli_many(
        [
            ("fit", "-m", "gaussian", "-d", "/dev/zero", "-o", tmp_path / "z.npz"),
            ("fit", "-m", "gaussian", "-d", "/dev/urandom", "-o", tmp_path / "u.npz"),
            ("evaluate", "-m", tmp_path / "none.npz", "-d", "/dev/zero"),
        ]
    )
    assert time.perf_counter() - started < 60
    assert_one_error_line(zero, "/dev/zero", "longer than 100 MB")
    assert_one_error_line(rand, "/dev/urandom", "not UTF-8")
    assert evaluate.returncode == 2


def test_read_bounded_counts_lines_and_passes_binary_formats():
    import io

    from nbcli.errors import NbcliError
    from nbcli.io import sources

    assert sources.read_bounded(io.BytesIO(b"a,b\n1,2\n"), "x") == b"a,b\n1,2\n"
    gz = b"\x1f\x8b" + bytes(range(256)) * 10
    assert sources.read_bounded(io.BytesIO(gz), "x") == gz
    with pytest.raises(NbcliError, match="not UTF-8"):
        sources.read_bounded(io.BytesIO(b"a,b\n\xff\xfe\n"), "x")


def test_a_line_longer_than_the_limit_is_refused(monkeypatch):
    import io

    from nbcli.errors import NbcliError
    from nbcli.io import sources

    monkeypatch.setattr(sources, "MAX_LINE_BYTES", 10)
    monkeypatch.setattr(sources, "_BLOCK", 4)
    assert sources.read_bounded(io.BytesIO(b"abcdefghi\nabcdefghi\n"), "x")
    with pytest.raises(NbcliError, match="line 2 is longer than"):
        sources.read_bounded(io.BytesIO(b"abc\nabcdefghijkl\n"), "x")
