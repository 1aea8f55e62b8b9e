"""Ctrl-C and SIGTERM once the new model file has replaced the old one: the
command completes (exit 0) rather than report a failure for finished work."""

from __future__ import annotations

import os
import signal

import pytest
from conftest import SMALL_CSV, fitted_model_file, nbcli_in_process


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
