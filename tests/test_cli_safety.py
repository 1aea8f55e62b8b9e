"""Outputs, pipes, signals and help: what the CLI writes, where, and when it
refuses to.

Most cases call the console script's entry point, ``nbcli.cli.app.main``, in
this process (they are about nbcli's own logic, and each takes milliseconds);
the few that need a real process of their own (stdout as a file descriptor)
run the executable.
"""

from __future__ import annotations

import bz2
import errno
import hashlib
import io
import json
import lzma
import os
import signal
import sys
import threading
import zipfile
from contextlib import redirect_stderr
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import (
    SMALL_CSV,
    assert_one_error_line,
    fitted_model_file,
    nbcli,
    nbcli_in_process,
)

#: Held-out rows the SMALL_CSV model predicts right, every one.
CAL_ALL_RIGHT = "a,b,label\n1.5,2,x\n2,2.5,x\n6,6,y\n6.5,6,y\n"
#: The same rows with the labels swapped: confidently wrong, every one.
CAL_ALL_WRONG = "a,b,label\n1.5,2,y\n2,2.5,y\n6,6,x\n6.5,6,x\n"
#: Some right, some wrong: an ordinary temperature.
CAL_MIXED = "a,b,label\n1.5,2,x\n2,2.5,y\n6,6,y\n3,5,x\n5,3,x\n4,4,y\n"
CAL_FLAGS = ("--bootstrap", "0", "--bins", "2", "--method", "temperature")


@pytest.fixture
def d(tmp_path):
    """A work folder with data (small.csv), a model of it (s.npz) and a held-out file."""
    (tmp_path / "small.csv").write_text(SMALL_CSV, encoding="utf-8")
    (tmp_path / "mixed.csv").write_text(CAL_MIXED, encoding="utf-8")
    fitted_model_file(tmp_path / "s.npz")
    return tmp_path


def _state(path: Path):
    return path.read_bytes() if path.exists() else None


def _tmp_leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def _ok(run):
    assert run.returncode == 0, (run.args, run.stderr)
    assert "error:" not in run.stderr, run.stderr
    return run


# ---------------------------------------------------------------------------
# 1. Symbolic links and devices as outputs


def test_a_symlinked_output_replaces_the_file_it_names_and_keeps_the_link(d):
    (d / "real.npz").write_bytes(b"")
    (d / "link.npz").symlink_to("real.npz")
    _ok(
        nbcli_in_process("fit", "-m", "gaussian", "-d", d / "small.csv", "-o", d / "link.npz", "-q")
    )
    assert (d / "link.npz").is_symlink() and os.readlink(d / "link.npz") == "real.npz"
    with zipfile.ZipFile(d / "real.npz") as archive:
        assert "metadata.npy" in archive.namelist()
    assert _tmp_leftovers(d) == []


def test_a_named_pipe_output_is_written_in_place_not_replaced(d):
    fifo = d / "out.fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()), daemon=True)
    reader.start()
    with _Deadline(20):
        run = nbcli_in_process("predict", "-m", d / "s.npz", "-d", d / "small.csv", "-o", fifo)
    reader.join(timeout=30)
    _ok(run)
    assert fifo.is_fifo()
    assert received[0].decode().splitlines() == ["prediction", "x", "x", "x", "y", "y", "y"]


def test_json_to_a_descriptor_of_stdout_writes_the_json_there_and_the_tables_to_stderr(d):
    # A process of its own: the path must name that process's descriptor 1.
    # /dev/fd/1 takes the same path through nbcli as /dev/stdout, but a
    # regression here could never replace a file outside /proc with it.
    run = nbcli(
        "evaluate",
        "-m",
        d / "s.npz",
        "-d",
        d / "mixed.csv",
        "--bootstrap",
        "0",
        "--json",
        "/dev/fd/1",
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["schema"] == "nbcli.evaluation" and report["n_samples"] == 6
    assert "Evaluation on 6 test rows" in run.stderr


@pytest.mark.skipif(not os.path.islink("/dev/stdout"), reason="/dev/stdout is not a link here")
def test_dev_stdout_is_written_in_place():
    from nbcli.io.atomic import resolve_output

    target, in_place = resolve_output("/dev/stdout")
    assert in_place and str(target).endswith("/fd/1")


# ---------------------------------------------------------------------------
# 2, 3, 4. Every output checked against the inputs and each other, before any work


@pytest.mark.parametrize(
    "args,guarded,fragments",
    [
        (
            ["evaluate", "-m", "{d}/s.npz", "-d", "{d}/small.csv", "--json", "{d}/small.csv"],
            "small.csv",
            ["--json {d}/small.csv", "--data {d}/small.csv"],
        ),
        (
            ["evaluate", "-m", "{d}/s.npz", "-d", "{d}/small.csv", "--json", "{d}/s.npz"],
            "s.npz",
            ["--json {d}/s.npz", "--model {d}/s.npz"],
        ),
        (
            [
                "compare",
                "-m",
                "{d}/s.npz",
                "-m",
                "{d}/s.npz",
                "-d",
                "{d}/small.csv",
                "--json",
                "{d}/s.npz",
            ],
            "s.npz",
            ["--json {d}/s.npz", "--model {d}/s.npz"],
        ),
        (
            [
                "fit",
                "-m",
                "gaussian",
                "-d",
                "{d}/small.csv",
                "-o",
                "{d}/q.npz",
                "--json",
                "{d}/q.npz",
            ],
            "q.npz",
            ["--json {d}/q.npz", "--output {d}/q.npz"],
        ),
        (
            [
                "calibrate",
                "-m",
                "{d}/s.npz",
                "-d",
                "{d}/mixed.csv",
                "-o",
                "{d}/c.npz",
                "--plot",
                "{d}/mixed.csv",
            ],
            "mixed.csv",
            ["--plot {d}/mixed.csv", "--data {d}/mixed.csv"],
        ),
        (
            [
                "calibrate",
                "-m",
                "{d}/s.npz",
                "-d",
                "{d}/mixed.csv",
                "-o",
                "{d}/c.npz",
                "--json",
                "{d}/c.npz",
            ],
            "c.npz",
            ["--json {d}/c.npz", "--output {d}/c.npz"],
        ),
        (
            ["fit", "-m", "gaussian", "-d", "{d}/small.csv", "-o", "{d}/notes.txt"],
            "notes.txt",
            ["--output {d}/notes.txt", "exists and is not an nbcli model file"],
        ),
        (
            ["calibrate", "-m", "{d}/s.npz", "-d", "{d}/mixed.csv", "-o", "{d}/notes.txt"],
            "notes.txt",
            ["--output {d}/notes.txt", "exists and is not an nbcli model file"],
        ),
        (
            ["fit", "-m", "gaussian", "-d", "{d}/small.csv", "-o", "-"],
            "small.csv",
            ["--output -", "not written to stdout"],
        ),
        (
            [
                "fit",
                "-m",
                "gaussian",
                "-d",
                "{d}/small.csv",
                "-o",
                "{d}/m.npz",
                "--json",
                "{d}/no/r.json",
            ],
            "m.npz",
            ["--json {d}/no/r.json", "does not exist"],
        ),
        (
            [
                "calibrate",
                "-m",
                "{d}/s.npz",
                "-d",
                "{d}/mixed.csv",
                "-o",
                "{d}/x.npz",
                "--plot",
                "{d}/no/p.png",
            ],
            "x.npz",
            ["--plot {d}/no/p.png", "does not exist"],
        ),
        (
            [
                "calibrate",
                "-m",
                "{d}/s.npz",
                "-d",
                "{d}/mixed.csv",
                "-o",
                "{d}/x.npz",
                "--plot",
                "{d}/p.pdf",
            ],
            "x.npz",
            ["--plot {d}/p.pdf", "'.pdf'", ".png or .svg"],
        ),
    ],
)
def test_outputs_are_refused_up_front_and_nothing_is_written(d, args, guarded, fragments):
    (d / "notes.txt").write_text("my notes\n", encoding="utf-8")
    (d / "c.npz").write_bytes((d / "s.npz").read_bytes())
    before = {p.name: p.read_bytes() for p in d.iterdir()}
    run = nbcli_in_process(*(a.replace("{d}", str(d)) for a in args))
    assert_one_error_line(run, *(f.replace("{d}", str(d)) for f in fragments))
    assert {p.name: p.read_bytes() for p in d.iterdir()} == before
    assert _state(d / guarded) == before.get(guarded)


def test_plot_without_matplotlib_is_refused_before_the_model_is_written(d, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    run = nbcli_in_process(
        "calibrate",
        "-m",
        d / "s.npz",
        "-d",
        d / "mixed.csv",
        "-o",
        d / "x.npz",
        "--plot",
        d / "p.png",
        *CAL_FLAGS,
    )
    assert_one_error_line(run, "--plot", "matplotlib")
    assert not (d / "x.npz").exists()


def test_an_existing_model_or_empty_file_may_be_replaced(d):
    (d / "empty.npz").write_bytes(b"")
    (d / "old.npz").write_bytes((d / "s.npz").read_bytes())
    for target in ("empty.npz", "old.npz"):
        _ok(nbcli_in_process("fit", "-m", "lda", "-d", d / "small.csv", "-o", d / target, "-q"))
        meta = json.loads(np.load(d / target)["metadata"].tobytes())
        assert meta["model"] == "lda"


# ---------------------------------------------------------------------------
# 5. SIGTERM unwinds like Ctrl-C


def test_sigterm_removes_the_unfinished_output_and_exits_143(d, monkeypatch):
    from nbcli.io.predictions import PredictionWriter

    rows = "a,b\n" + "1,2\n" * 50
    (d / "many.csv").write_text(rows, encoding="utf-8")
    (d / "out.csv").write_text("prediction\nold\n", encoding="utf-8")
    real = PredictionWriter.frame
    calls = []

    def frame_then_sigterm(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:  # the temporary file exists and holds the first chunk
            assert len(_tmp_leftovers(d)) == 1
            os.kill(os.getpid(), signal.SIGTERM)
        return real(*args, **kwargs)

    def not_handled(signum, frame):
        # Reached only if nbcli installed no handler of its own (and keeps
        # the default action, ending the test run, from happening).
        raise RuntimeError("SIGTERM reached the test's handler")

    monkeypatch.setattr(PredictionWriter, "frame", frame_then_sigterm)
    previous = signal.signal(signal.SIGTERM, not_handled)
    try:
        run = nbcli_in_process(
            "predict",
            "-m",
            d / "s.npz",
            "-d",
            d / "many.csv",
            "-o",
            d / "out.csv",
            "--chunk-size",
            "10",
        )
        # The process's own handler is back once the command is over.
        assert signal.getsignal(signal.SIGTERM) is not_handled
    finally:
        signal.signal(signal.SIGTERM, previous)
    assert run.returncode == 143, run.stderr
    assert run.stderr.strip() == "error: terminated"
    assert _tmp_leftovers(d) == []
    assert (d / "out.csv").read_text() == "prediction\nold\n"


# ---------------------------------------------------------------------------
# 6, 7. Predictions: streaming to stdout, batches


def test_a_late_bad_row_says_the_rows_before_it_went_to_stdout(d):
    (d / "late.csv").write_text("a,b\n1,2\n6,6\n2,2\n7,7\n1,oops\n", encoding="utf-8")
    run = nbcli_in_process("predict", "-m", d / "s.npz", "-d", d / "late.csv", "--chunk-size", "2")
    assert run.stdout.splitlines() == ["prediction", "x", "y", "x", "y"]
    assert_one_error_line(
        run, "row 5", "predictions for the 4 rows before it were already written to stdout"
    )
    # A bad first chunk has written nothing, and says nothing of the kind.
    (d / "early.csv").write_text("a,b\n1,oops\n6,6\n", encoding="utf-8")
    run = nbcli_in_process("predict", "-m", d / "s.npz", "-d", d / "early.csv", "--chunk-size", "2")
    line = assert_one_error_line(run, "row 1")
    assert "already written" not in line and run.stdout == ""


def test_a_failed_batch_input_keeps_its_earlier_output_and_says_so(d):
    (d / "in").mkdir()
    (d / "out").mkdir()
    (d / "in" / "good.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    (d / "in" / "bad.csv").write_text("a,b\n1,zz\n", encoding="utf-8")
    (d / "out" / "bad.pred.csv").write_text("prediction\nstale\n", encoding="utf-8")
    run = nbcli_in_process(
        "predict",
        "-m",
        d / "s.npz",
        "-d",
        f"{d}/in/*.csv",
        "--output-dir",
        d / "out",
        "-q",
        "--jobs",
        "1",
    )
    assert run.returncode == 4
    lines = run.stderr_lines
    assert f"{d}/out/bad.pred.csv is left from an earlier run" in lines[0]
    assert "the others were scored" in lines[-1]
    assert sorted(p.name for p in (d / "out").iterdir()) == ["bad.pred.csv", "good.pred.csv"]
    assert (d / "out" / "bad.pred.csv").read_text(encoding="utf-8") == "prediction\nstale\n"


def test_a_batch_json_report_names_each_file_s_output_or_error(d):
    # A CI job reads which file failed from the report, exit 4 all the same.
    (d / "in").mkdir()
    (d / "in" / "good.csv").write_text("a,b\n1,2\n6,7\n", encoding="utf-8")
    (d / "in" / "bad.csv").write_text("a,b\n1,zz\n", encoding="utf-8")
    model, report = d / "s.npz", d / "batch.json"
    run = nbcli_in_process(
        "predict", "-m", model, "-d", f"{d}/in/*.csv", "--output-dir", d / "out",
        "--json", report, "-q", "--jobs", "1",
    )  # fmt: skip
    assert run.returncode == 4, run.stderr
    doc = json.loads(report.read_text())
    assert (doc["schema"], doc["n_files"], doc["n_failed"]) == ("nbcli.batch", 2, 1)
    files = {Path(f["input"]).name: f for f in doc["files"]}
    assert files["good.csv"]["output"] == str(d / "out" / "good.pred.csv")
    assert files["good.csv"]["rows"] == 2 and files["good.csv"]["error"] is None
    assert files["bad.csv"]["output"] is None and files["bad.csv"]["rows"] is None
    assert "'zz'" in files["bad.csv"]["error"]
    assert doc["inputs"]["model"]["sha256"] == hashlib.sha256(model.read_bytes()).hexdigest()
    assert sorted(Path(p).name for p in doc["inputs"]["data"]["parts"]) == ["bad.csv", "good.csv"]
    # The report may not replace one of the inputs.
    run = nbcli_in_process(
        "predict", "-m", model, "-d", f"{d}/in/*.csv", "--output-dir", d / "out",
        "--json", d / "in" / "good.csv", "--jobs", "1",
    )  # fmt: skip
    assert_one_error_line(run, "--json", "is also an input")
    assert (d / "in" / "good.csv").read_text(encoding="utf-8") == "a,b\n1,2\n6,7\n"


def test_when_every_batch_input_fails_it_does_not_claim_the_others_were_scored(d):
    (d / "in").mkdir()
    for name in ("p.csv", "q.csv"):
        (d / "in" / name).write_text("a,b\n1,zz\n", encoding="utf-8")
    run = nbcli_in_process(
        "predict",
        "-m",
        d / "s.npz",
        "-d",
        f"{d}/in/*.csv",
        "--output-dir",
        d / "out",
        "-q",
        "--jobs",
        "1",
    )
    assert run.returncode == 2
    assert (
        run.stderr_lines[-1] == "error: both input files failed (see above); no predictions "
        "were written"
    )
    assert "the others" not in run.stderr


def test_jobs_are_capped_at_cores_and_files_and_must_be_positive(d):
    from joblib import cpu_count

    from nbcli.workflows.engine import LocalEngine

    batch_jobs = LocalEngine().workers
    cores = cpu_count()
    assert batch_jobs(200, 3) == min(3, cores)
    assert batch_jobs(200, 10_000) == cores
    assert batch_jobs(None, 1) == 1
    for bad in ("0", "-3"):
        run = nbcli_in_process("predict", "-m", d / "s.npz", "-d", d / "small.csv", "--jobs", bad)
        assert_one_error_line(run, "--jobs")


def test_an_interrupted_batch_removes_its_workers_temporary_files(tmp_path):
    # Workers are killed outright (SIGKILL) when a batch is interrupted, so
    # the main process removes what their atomic writes left behind.
    from nbcli.workflows.predict import _remove_temporaries

    names = [
        ".a.pred.csv.k2j9x0.tmp",
        ".a.pred.csv",
        ".b.pred.csv.zz.tmp",
        ".a[1].pred.csv.q.tmp",
        "a.pred.csv",
    ]
    for name in names:
        (tmp_path / name).write_text("x")
    _remove_temporaries([tmp_path / "a.pred.csv", tmp_path / "a[1].pred.csv"])
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        ".a.pred.csv",
        ".b.pred.csv.zz.tmp",
        "a.pred.csv",
    ]


# ---------------------------------------------------------------------------
# 8. Named pipes as data


class _Deadline:
    """Fail instead of hanging: SIGALRM after ``seconds`` raises TimeoutError
    (a reader that opens a pipe twice waits forever for a second writer)."""

    def __init__(self, seconds: int):
        self.seconds = seconds

    def __enter__(self):
        def expire(signum, frame):
            raise TimeoutError(f"still blocked after {self.seconds} s")

        self.previous = signal.signal(signal.SIGALRM, expire)
        signal.alarm(self.seconds)

    def __exit__(self, *exc):
        signal.alarm(0)
        signal.signal(signal.SIGALRM, self.previous)


def _feed(fifo: Path, data: bytes) -> threading.Thread:
    def write():
        with open(fifo, "wb") as f:
            f.write(data)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    return writer


def test_a_named_pipe_is_read_once_like_stdin(d):
    fifo = d / "data.fifo"
    os.mkfifo(fifo)
    writer = _feed(fifo, SMALL_CSV.encode())
    with _Deadline(20):
        _ok(
            nbcli_in_process(
                "fit",
                "-m",
                "gaussian",
                "-d",
                fifo,
                "-o",
                d / "p.npz",
                "--json",
                d / "fit.json",
                "-q",
            )
        )
    writer.join(timeout=30)
    from nbcli.io.modelfile import load_model

    piped, plain = load_model(d / "p.npz"), load_model(d / "s.npz")
    assert piped.training["fingerprint"] == plain.training["fingerprint"]
    report = json.loads((d / "fit.json").read_text())
    assert report["inputs"]["data"]["sha256"] == hashlib.sha256(SMALL_CSV.encode()).hexdigest()
    # evaluate hashes the data for its report too: one read serves both.
    fifo2 = d / "mixed.fifo"
    os.mkfifo(fifo2)
    writer = _feed(fifo2, CAL_MIXED.encode())
    with _Deadline(20):
        run = _ok(
            nbcli_in_process(
                "evaluate", "-m", d / "s.npz", "-d", fifo2, "--bootstrap", "0", "--json", "-", "-q"
            )
        )
    writer.join(timeout=30)
    assert json.loads(run.stdout)["n_samples"] == 6


# ---------------------------------------------------------------------------
# 9. Ctrl-C inside the CSV parser


@pytest.mark.parametrize(
    "interruption,code,line",
    [
        (KeyboardInterrupt, 130, "error: interrupted"),
        ("sigterm", 143, "error: terminated"),
    ],
)
def test_an_interrupted_parse_is_an_interruption_not_bad_data(
    d, monkeypatch, interruption, code, line
):
    import polars as pl

    from nbcli.cli.app import Terminated
    from nbcli.io.csv_format import CsvReader

    raised = Terminated if interruption == "sigterm" else interruption

    class Interrupted:
        def collect_batches(self, **kwargs):
            # A parser error with the interruption as its context, as a
            # parser that calls back into Python for its bytes reports it.
            try:
                raise raised()
            except BaseException as exc:
                raise pl.exceptions.ComputeError("reading the source failed") from exc

        def collect(self):
            return self.collect_batches()

        def slice(self, *args):
            # The planning sample (the first rows) is read through the same scan.
            return self

    monkeypatch.setattr(CsvReader, "_scan", lambda self, typed: Interrupted())
    run = nbcli_in_process("fit", "-m", "gaussian", "-d", d / "small.csv", "-o", d / "m.npz")
    assert run.returncode == code
    assert run.stderr.strip() == line
    assert not (d / "m.npz").exists()


# ---------------------------------------------------------------------------
# 10. Internal errors that are user errors


@pytest.mark.parametrize("command", ["evaluate", "calibrate", "compare"])
def test_a_negative_seed_is_a_usage_error(d, command):
    models = ["-m", d / "s.npz"] * (2 if command == "compare" else 1)
    run = nbcli_in_process(command, *models, "-d", d / "mixed.csv", "--seed", "-1")
    line = assert_one_error_line(run, "--seed")
    assert "mixed.csv" not in line


@pytest.mark.parametrize(
    "model,table,fragments",
    [
        ("lda", "[hyperparameters]\ntol = 1e308\n", ["[hyperparameters] tol", "[0, 1)", "1e+308"]),
        (
            "multinomial",
            '[hyperparameters]\nfit_prior = "no"\n',
            ["fit_prior", "true or false", "'no'"],
        ),
        ("gaussian", "[hyperparameters]\nvar_smoothing = -1\n", ["var_smoothing", ">= 0"]),
        ("qda", "[hyperparameters]\nreg_param = 2\n", ["reg_param", "[0, 1]"]),
        ("gaussian", "[hyperparameters]\npriors = [0.9, 0.9]\n", ["priors", "sum to 1"]),
        ("gaussian", "[data]\ntarget = 3\n", ["[data] target", "string"]),
    ],
)
def test_config_values_are_checked_for_type_and_range_before_fitting(d, model, table, fragments):
    config = d / "c.toml"
    config.write_text(f'model = "{model}"\n{table}', encoding="utf-8")
    run = nbcli_in_process("fit", "-c", config, "-d", d / "small.csv", "-o", d / "m.npz")
    assert_one_error_line(run, str(config), *fragments)
    assert not (d / "m.npz").exists()


def test_flags_are_checked_like_config_values(d):
    run = nbcli_in_process(
        "fit", "-m", "multinomial", "--alpha", "nan", "-d", d / "small.csv", "-o", d / "m.npz"
    )
    assert_one_error_line(run, "--alpha must be a finite number >= 0", "nan")


def test_config_features_may_be_one_string(d):
    (d / "three.csv").write_text(
        "a,b,c,label\n1,2,0,x\n2,3,0,x\n3,1,1,x\n5,6,1,y\n6,7,0,y\n7,5,1,y\n", encoding="utf-8"
    )
    for features, expected in (('"a"', ["a"]), ('"a, c"', ["a", "c"]), ('["b"]', ["b"])):
        (d / "c.toml").write_text(
            f'model = "gaussian"\n[data]\nfeatures = {features}\n', encoding="utf-8"
        )
        run = _ok(
            nbcli_in_process(
                "fit",
                "-c",
                d / "c.toml",
                "-d",
                d / "three.csv",
                "-o",
                d / "m.npz",
                "--json",
                "-",
                "-q",
            )
        )
        assert json.loads(run.stdout)["feature_names"] == expected


def test_a_closed_stdout_is_refused_before_reading(d, monkeypatch):
    from nbcli.cli.app import main

    monkeypatch.setattr(sys, "stdout", None)
    err = io.StringIO()
    with redirect_stderr(err), pytest.raises(SystemExit) as exit_info:
        main(["predict", "-m", str(d / "s.npz"), "-d", str(d / "no-such.csv")])
    assert exit_info.value.code == 2
    assert err.getvalue() == "error: stdout is closed; give an output file or leave stdout open\n"


class _FailingStdout(io.TextIOBase):
    def __init__(self, error):
        self.error = error

    def write(self, text):
        raise self.error

    def writable(self):
        return True


def test_a_full_disk_on_stdout_is_a_clear_error(d, monkeypatch):
    from nbcli.cli.app import main

    monkeypatch.setattr(
        sys, "stdout", _FailingStdout(OSError(errno.ENOSPC, os.strerror(errno.ENOSPC)))
    )
    err = io.StringIO()
    with redirect_stderr(err), pytest.raises(SystemExit) as exit_info:
        main(["predict", "-m", str(d / "s.npz"), "-d", str(d / "small.csv")])
    assert exit_info.value.code == 2
    assert err.getvalue() == "error: cannot write to stdout (No space left on device)\n"


def test_a_reader_that_went_away_ends_quietly_with_141(d, monkeypatch):
    from nbcli.cli.app import main

    monkeypatch.setattr(sys, "stdout", _FailingStdout(BrokenPipeError(errno.EPIPE, "Broken pipe")))
    err = io.StringIO()
    with redirect_stderr(err), pytest.raises(SystemExit) as exit_info:
        main(["predict", "-m", str(d / "s.npz"), "-d", str(d / "small.csv")])
    assert exit_info.value.code == 141
    assert err.getvalue() == ""


def test_a_reader_that_leaves_part_way_through_a_large_write_ends_with_141(d):
    # One chunk of predictions is written in one call; a reader that takes a
    # few kilobytes of it and leaves (`| head -c`) must not look like a
    # finished run to `set -o pipefail`.
    import shlex
    import subprocess

    rows = "".join(f"{i % 7},{i % 5}\n" for i in range(60_000))
    (d / "many.csv").write_text("a,b\n" + rows, encoding="utf-8")
    command = shlex.join([sys.executable, "-m", "nbcli", "predict", "-m", str(d / "s.npz"),
                          "-d", str(d / "many.csv"), "--proba", "--chunk-size", "100000"])  # fmt: skip
    script = f"{command} 2>{shlex.quote(str(d / 'err.txt'))} | head -c 5000 >/dev/null; echo ${{PIPESTATUS[0]}}"
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120)
    err = (d / "err.txt").read_text()
    assert done.stdout.strip() == "141", err
    assert "scored" not in err  # no summary of a run that did not finish


@pytest.mark.parametrize(
    "command",
    [
        ["fit", "-m", "gaussian", "-d", "{d}/small.csv"],
        ["tune", "-m", "gaussian", "-d", "{d}/small.csv", "--var-smoothing", "1e-9,1e-3",
         "--folds", "3", "--bootstrap", "0"],
        ["calibrate", "-m", "{d}/s.npz", "-d", "{d}/mixed.csv", *CAL_FLAGS, "--allow-worse"],
    ],
    ids=["fit", "tune", "calibrate"],
)  # fmt: skip
def test_a_reader_of_the_summary_that_went_away_leaves_the_files_written(d, monkeypatch, command):
    # `nbcli fit ... | head -1`: the summary on stdout has no reader, but the
    # model file and the JSON report it names are in place all the same.
    from nbcli.cli.app import main
    from nbcli.io.modelfile import load_model

    monkeypatch.setattr(sys, "stdout", _FailingStdout(BrokenPipeError(errno.EPIPE, "Broken pipe")))
    args = [a.format(d=d) for a in command]
    err = io.StringIO()
    with redirect_stderr(err), pytest.raises(SystemExit) as exit_info:
        main([*args, "-o", str(d / "new.npz"), "--json", str(d / "report.json")])
    assert exit_info.value.code == 141
    assert load_model(d / "new.npz").model.classes_.tolist() == ["x", "y"]
    assert json.loads((d / "report.json").read_text())["schema"].startswith("nbcli.")
    assert _tmp_leftovers(d) == []


# ---------------------------------------------------------------------------
# 11, 14. Option values that contradict each other


@pytest.mark.parametrize(
    "flags,column",
    [
        (["--keep", "prediction"], "prediction"),
        (["--keep", "proba_x", "--proba"], "proba_x"),
    ],
)
def test_kept_columns_may_not_take_the_name_of_an_output_column(d, flags, column):
    (d / "named.csv").write_text(f"a,b,{column}\n1,2,id1\n", encoding="utf-8")
    run = nbcli_in_process("predict", "-m", d / "s.npz", "-d", d / "named.csv", *flags)
    assert_one_error_line(run, f"--keep {column}", f"its own column '{column}'")
    assert run.stdout == ""


def test_a_repeated_prior_is_named(d):
    run = nbcli_in_process(
        "fit",
        "-m",
        "gaussian",
        "-d",
        d / "small.csv",
        "-o",
        d / "m.npz",
        "--priors",
        "x=0.2,x=0.3,y=0.5",
    )
    assert_one_error_line(run, "--priors gives class x more than once")


# ---------------------------------------------------------------------------
# 12, 13. Help


def test_no_arguments_show_help_without_an_empty_error():
    bare = nbcli_in_process()
    assert bare.returncode == 0 and "Usage: nbcli" in bare.stdout and bare.stderr == ""
    fit = nbcli_in_process("fit")
    assert fit.returncode == 2 and "Usage: nbcli fit" in fit.stderr
    assert "error:" not in fit.stderr and fit.stdout == ""


def test_help_shows_square_brackets_as_written():
    run = nbcli_in_process("fit", "--help")
    text = " ".join(run.stdout.split())
    assert run.returncode == 0
    assert "[default: 1e-9]" in text and "[hyperparameters] and [data]" in text
    assert "[default: 1.0]" in text and "[default: none]" in text


# ---------------------------------------------------------------------------
# 15. Compression nbcli does not read


@pytest.mark.parametrize(
    "name,content,kind",
    [
        ("t.csv.bz2", bz2.compress(SMALL_CSV.encode()), "bz2"),
        ("t.csv.xz", lzma.compress(SMALL_CSV.encode()), "xz"),
        ("t.csv.zst", b"\x28\xb5\x2f\xfd" + bytes(20), "zstd"),
        ("t.zip", None, "zip"),
    ],
)
def test_other_compressions_are_named(d, name, content, kind):
    path = d / name
    if content is None:
        with zipfile.ZipFile(path, "w") as archive:
            archive.writestr("t.csv", SMALL_CSV)
    else:
        path.write_bytes(content)
    run = nbcli_in_process("fit", "-m", "gaussian", "-d", path, "-o", d / "m.npz")
    assert_one_error_line(
        run,
        str(path),
        f"is compressed with {kind}, which nbcli does not read; decompress it or use gzip",
    )


def test_a_header_starting_like_bz2_is_still_csv(d):
    (d / "bzh.csv").write_text(
        "BZh9,b,label\n1,2,x\n2,3,x\n3,1,x\n5,6,y\n6,7,y\n7,5,y\n", encoding="utf-8"
    )
    _ok(nbcli_in_process("fit", "-m", "gaussian", "-d", d / "bzh.csv", "-o", d / "m.npz", "-q"))


# ---------------------------------------------------------------------------
# 16. fit --json


def test_fit_report_has_inputs_with_sha256_and_settings(d):
    config = d / "c.toml"
    config.write_text('model = "gaussian"\n', encoding="utf-8")
    run = _ok(
        nbcli_in_process(
            "fit",
            "-c",
            config,
            "-d",
            d / "small.csv",
            "-o",
            d / "m.npz",
            "--json",
            "-",
            "--drop",
            "b",
            "--chunk-size",
            "4",
        )
    )
    report = json.loads(run.stdout)
    assert report["inputs"]["data"] == {
        "path": str(d / "small.csv"),
        "sha256": hashlib.sha256(SMALL_CSV.encode()).hexdigest(),
    }
    assert report["inputs"]["config"]["sha256"] == hashlib.sha256(config.read_bytes()).hexdigest()
    from nbcli.models import GaussianNB
    from nbcli.workflows.tables import can_ignore_missing

    assert report["settings"] == {
        "chunk_size": 4,
        "config": str(config),
        "delimiter": None,
        "target": None,
        "features": None,
        "drop": ["b"],
        # The policy in force: the command line's default for the model.
        "missing": "ignore" if can_ignore_missing(GaussianNB()) else "drop",
        "unseen": "error",
        "na_values": None,
        "columns": None,
    }


# ---------------------------------------------------------------------------
# 17. Calibrate


def _calibrate(d, data_text, *extra):
    (d / "cal.csv").write_text(data_text, encoding="utf-8")
    return nbcli_in_process("calibrate", "-m", d / "s.npz", "-d", d / "cal.csv", *CAL_FLAGS, *extra)


def test_no_calibration_errors_refuses_to_write_a_certain_model(d):
    run = _calibrate(d, CAL_ALL_RIGHT, "-o", d / "cal.npz", "--json", d / "r.json")
    assert run.returncode == 2
    assert "Calibration on 4 rows" in run.stdout  # the report is shown
    warning = next(l for l in run.stderr_lines if "temperature" in l)
    assert (
        warning.startswith("warning:")
        and "every calibration row is already predicted correctly" in warning
    )
    assert run.stderr_lines[-1].startswith("error: ") and "has no errors" in run.stderr_lines[-1]
    assert not (d / "cal.npz").exists() and not (d / "r.json").exists()
    # Without -o there is nothing to refuse: a warning only.
    run = _ok(_calibrate(d, CAL_ALL_RIGHT, "-q"))
    assert "runs to 0" in run.stderr


def test_a_temperature_that_runs_to_0_is_not_chosen_and_says_why(d, tmp_path):
    # Rows the model classifies without an error but not with certainty: the
    # cross-fitted log-loss falls (to 0) beyond its margin, yet such a
    # temperature is never taken, and every message says so rather than
    # "Chosen: temperature" or "no improvement".
    rows = "a,b,label\n" + "".join(
        f"{4 - v},{4 - v},x\n{4 + v},{4 + v},y\n" for v in (0.1, 0.2, 0.3, 0.4, 0.5)
    )
    run = _calibrate(d, rows, "-o", d / "cal.npz", "--json", d / "r.json")
    assert run.returncode == 2 and "has no errors" in run.stderr_lines[-1], run.stderr
    doc_rule = next(line for line in run.stdout.split("Rule:")[1:])
    assert "Chosen" not in doc_rule and "None chosen: no candidate can be written" in doc_rule
    assert "no (every calibration row is predicted correctly" in run.stdout
    warning = next(l for l in run.stderr_lines if "is not taken" in l)
    assert "the temperature calibrator is not taken (temperature " in warning
    assert warning.endswith("so T runs to 0); a calibrated model would not be written")
    assert not (d / "cal.npz").exists()
    auto = nbcli_in_process(
        "calibrate", "-m", d / "s.npz", "-d", d / "cal.csv", "--bootstrap", "0", "--bins", "2",
        "--method", "auto", "--json", "-", "-q",
    )  # fmt: skip
    doc = json.loads(auto.stdout)
    temperature = next(c for c in doc["verdict"]["candidates"] if c["method"] == "temperature")
    # An improvement by the rule's own figures, not taken for its certainty.
    assert temperature["differences"]["log_loss"]["upper"] < 0
    assert temperature["accepted"] is False and "T runs to 0" in temperature["note"]
    assert doc["verdict"]["chosen"] != "temperature"
    assert doc["verdict"]["chosen"] is None
    warning = next(l for l in auto.stderr_lines if "no calibrator is taken" in l)
    for c in doc["verdict"]["candidates"]:
        if c["differences"]:
            assert f"): {c['note']}" in warning
    refused = nbcli_in_process(
        "calibrate", "-m", d / "s.npz", "-d", d / "cal.csv", "--bootstrap", "0", "--bins", "2",
        "--method", "auto", "-o", d / "cal.npz", "-q",
    )  # fmt: skip
    assert refused.returncode == 3
    assert (
        "(temperature: not taken, every calibration row is predicted correctly"
        in (refused.stderr_lines[-1])
    )


def test_an_upper_bound_temperature_is_explained(d):
    run = _ok(_calibrate(d, CAL_ALL_WRONG, "-q"))
    warning = next(l for l in run.stderr_lines if "temperature is T" in l)
    assert "(the search bound)" in warning and "near-uniform" in warning
    assert "--var-smoothing" in warning and "--method isotonic" in warning


def test_replacing_a_calibrator_says_what_before_and_after_mean(d):
    # Six rows cannot show an improvement beyond the margin: --allow-worse.
    _ok(_calibrate(d, CAL_MIXED, "-o", d / "cal.npz", "-q", "--allow-worse"))
    run = _ok(
        nbcli_in_process(
            "calibrate",
            "-m",
            d / "cal.npz",
            "-d",
            d / "cal.csv",
            *CAL_FLAGS[:-2],  # its own --method: an option is given once
            "--method",
            "isotonic",
            "-q",
        )
    )
    warning = next(l for l in run.stderr_lines if "already carries" in l)
    assert (
        "already carries a temperature calibrator" in warning
        and "'before' shows the model with its old calibrator" in warning
    )
    # Measuring only (--method none) replaces nothing.
    run = _ok(
        nbcli_in_process(
            "calibrate",
            "-m",
            d / "cal.npz",
            "-d",
            d / "cal.csv",
            *CAL_FLAGS[:-2],  # its own --method: an option is given once
            "--method",
            "none",
            "-q",
        )
    )
    assert "already carries" not in run.stderr


def test_no_known_labels_points_at_the_target(d):
    run = _calibrate(d, "a,b,label\n1,2,p\n6,6,q\n5,5,q\n")
    line = assert_one_error_line(
        run, "none of its labels ('p', 'q') is a class of", "check --target"
    )
    # As evaluate words it: the classes the model knows, and the other usual cause.
    assert "which knows 'x', 'y'" in line and "written as in the training data" in line


def test_a_calibrated_model_names_a_row_it_cannot_score_like_an_uncalibrated_one(d):
    _ok(_calibrate(d, CAL_MIXED, "-o", d / "cal.npz", "-q", "--allow-worse"))
    (d / "far.csv").write_text("a,b\n1,2\n1e200,3\n", encoding="utf-8")
    plain = nbcli_in_process("predict", "-m", d / "s.npz", "-d", d / "far.csv")
    calibrated = nbcli_in_process("predict", "-m", d / "cal.npz", "-d", d / "far.csv")
    line = assert_one_error_line(calibrated, "row 2 cannot be scored", "column 'a' = 1e+200")
    assert line == assert_one_error_line(plain)


def test_an_output_folder_that_is_the_data_folder_is_refused(d):
    # Predictions written into a folder read whole would be read as parts of
    # the data by the next command that reads it.
    (d / "in").mkdir()
    (d / "in" / "p.csv").write_text("a,b\n1,2\n", encoding="utf-8")
    for given, out in ((d / "in", d / "in"), (f"{d}/in/", f"{d}/./in")):
        run = nbcli_in_process("predict", "-m", d / "s.npz", "-d", given, "--output-dir", out)
        assert_one_error_line(run, f"--output-dir {out} is the folder --data {given} reads")
    assert sorted(p.name for p in (d / "in").iterdir()) == ["p.csv"]


def test_a_reader_of_stderr_that_went_away_stops_no_command(d):
    # `nbcli fit ... 2>&1 | true`: the first warning has no reader. The
    # command goes on and writes its model file; stdout gone too, it ends 141
    # (Typer's EPIPE handling made it exit 1 before anything was written).
    import shlex
    import subprocess

    fit = shlex.join([sys.executable, "-m", "nbcli", "fit", "-m", "gaussian",
                      "-d", str(d / "small.csv"), "-o", str(d / "new.npz")])  # fmt: skip
    done = subprocess.run(
        ["bash", "-c", f"{fit} 2>&1 | true; echo ${{PIPESTATUS[0]}}"],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.stdout.strip() == "141", done.stderr
    from nbcli.io.modelfile import load_model

    assert load_model(d / "new.npz").model.classes_.tolist() == ["x", "y"]
