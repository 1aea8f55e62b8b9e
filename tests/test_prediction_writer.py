"""The predictions writer: round-trip exact probabilities, --digits, Parquet, chunk by chunk."""

from __future__ import annotations

import io

import numpy as np
import polars as pl
import pytest

from nbcli.io.predictions import PredictionWriter, is_parquet_path
from tests.conftest import assert_one_error_line, fitted_model_file, nbcli_in_process


def _log_proba(n: int, k: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    raw = rng.normal(size=(n, k)) * 40  # posteriors from 1 down to far below 1e-300
    return raw - np.logaddexp.reduce(raw, axis=1, keepdims=True)


def test_probabilities_read_back_to_the_same_doubles_across_chunks():
    logp = _log_proba(500, 3)
    writer = PredictionWriter(np.array(["a", "b", "c"]), proba=True)
    out = io.StringIO()
    for rows in np.array_split(np.arange(500), [1, 2, 250]):
        writer.write(out, {"id": np.array([f"r{i}" for i in rows])}, logp[rows])
    text = out.getvalue()
    assert text.count("prediction") == 1  # one header, whatever the chunks
    lines = text.splitlines()
    assert lines[0] == "id,prediction,proba_a,proba_b,proba_c"
    back = np.array([[float(v) for v in line.split(",")[2:]] for line in lines[1:]])
    assert back.tobytes() == np.exp(logp).tobytes()
    assert [line.split(",")[1] for line in lines[1:]] == list(
        np.array(["a", "b", "c"])[logp.argmax(axis=1)]
    )
    assert writer.rows == 500
    # Shortest round-trip form: as many significant digits as Python's repr.
    cells = [v for line in lines[1:] for v in line.split(",")[2:]]
    assert [_significant(v) for v in cells] == [_significant(repr(float(v))) for v in cells]


def _significant(text: str) -> int:
    mantissa = text.lower().split("e")[0].replace("-", "").replace(".", "")
    return len(mantissa.strip("0")) or 1


def test_digits_rounds_to_decimal_places_and_labels_keep_their_spelling():
    logp = np.log(np.array([[0.123456, 0.876544], [0.5, 0.5]]))
    writer = PredictionWriter(np.array([True, False]), proba=True, digits=3)
    out = io.StringIO()
    writer.write(out, {}, logp)
    assert out.getvalue() == (
        "prediction,proba_True,proba_False\nFalse,0.123,0.877\nTrue,0.5,0.5\n"
    )
    with pytest.raises(ValueError):
        PredictionWriter(np.array([1, 2]), proba=True, digits=18)


def test_parquet_output_streams_chunks_with_one_schema(tmp_path):
    logp = _log_proba(100, 2, seed=1)
    path = tmp_path / "p.parquet"
    assert is_parquet_path(path) and not is_parquet_path("-") and not is_parquet_path("x.csv")
    writer = PredictionWriter.for_path(path, np.array([3, 7]), proba=True)
    assert writer.mode == "wb"
    with open(path, "wb") as f:
        for rows in np.array_split(np.arange(100), 4):
            writer.write(f, {"id": np.arange(100)[rows]}, logp[rows])
        writer.close(f)
    got = pl.read_parquet(path)
    assert got.columns == ["id", "prediction", "proba_3", "proba_7"]
    assert got["prediction"].to_list() == np.array([3, 7])[logp.argmax(axis=1)].tolist()
    assert got.select(["proba_3", "proba_7"]).to_numpy().tobytes() == np.exp(logp).tobytes()


def test_predict_writes_parquet_and_rounds_with_digits(tmp_path):
    fitted_model_file(tmp_path / "m.npz")
    data = tmp_path / "new.csv"
    data.write_text("a,b\n1,2\n6,7\n4,4\n", encoding="utf-8")
    out = tmp_path / "pred.parquet"
    run = nbcli_in_process("predict", "-m", tmp_path / "m.npz", "-d", data, "--proba", "-o", out)
    assert run.returncode == 0, run.stderr
    table = pl.read_parquet(out)
    assert table["prediction"].to_list()[:2] == ["x", "y"]
    np.testing.assert_allclose(table.select(["proba_x", "proba_y"]).to_numpy().sum(axis=1), 1)
    run = nbcli_in_process(
        "predict", "-m", tmp_path / "m.npz", "-d", data, "--proba", "--digits", "2"
    )
    assert run.returncode == 0, run.stderr
    for line in run.stdout.splitlines()[1:]:
        for value in line.split(",")[1:]:
            assert len(value.split(".")[-1]) <= 2, line
    full = nbcli_in_process("predict", "-m", tmp_path / "m.npz", "-d", data, "--proba")
    rounded = [[float(v) for v in line.split(",")[1:]] for line in run.stdout.splitlines()[1:]]
    exact = [[float(v) for v in line.split(",")[1:]] for line in full.stdout.splitlines()[1:]]
    np.testing.assert_array_equal(np.round(exact, 2), rounded)


def test_parquet_output_without_pyarrow_is_refused_before_any_row_is_read(tmp_path, monkeypatch):
    import importlib.util

    from nbcli.errors import NbcliError
    from nbcli.io.request import DataRequest
    from nbcli.workflows.predict import BatchOutput, predict, predict_batch
    from tests.conftest import fitted_model_file

    mf = fitted_model_file(tmp_path / "m.npz")
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "pyarrow" else real(name, *a)
    )
    missing = tmp_path / "no-such-input.csv"  # never opened: the refusal comes first
    with pytest.raises(NbcliError, match="Parquet needs pyarrow"):
        predict(mf, DataRequest.of(str(missing)), str(tmp_path / "p.parquet"))
    with pytest.raises(NbcliError, match="Parquet needs pyarrow"):
        out = BatchOutput(str(tmp_path / "out"), "parquet")
        predict_batch(str(tmp_path / "m.npz"), DataRequest.of(str(missing)), out)
    assert not (tmp_path / "out").exists() and not (tmp_path / "p.parquet").exists()


def test_a_file_gets_the_same_bytes_as_text_written_in_order(tmp_path):
    # A UTF-8 text file is written through its byte layer: the same bytes as
    # the text a stream without one gets, after whatever went before as text.
    logp = _log_proba(300, 2, seed=3)
    chunks = np.array_split(np.arange(300), [7, 150])
    labels = np.array(["é", "b"])
    as_text = io.StringIO()
    writer = PredictionWriter(labels, proba=True)
    for rows in chunks:
        writer.write(as_text, {}, logp[rows])
    path = tmp_path / "p.csv"
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write("# before\n")
        writer = PredictionWriter(labels, proba=True)
        for rows in chunks:
            writer.write(f, {}, logp[rows])
    assert path.read_bytes() == ("# before\n" + as_text.getvalue()).encode("utf-8")
    binary = io.BytesIO()
    writer = PredictionWriter(labels, proba=True)
    for rows in chunks:
        writer.write(binary, {}, logp[rows])
    assert binary.getvalue() == as_text.getvalue().encode("utf-8")


def test_predict_reads_no_labels_and_only_the_model_columns(tmp_path):
    fitted_model_file(tmp_path / "m.npz")
    data = tmp_path / "new.csv"
    # A missing label does not matter to predictions; a row whose model
    # columns are empty but whose other cells are not is a row (with an
    # empty prediction), while a row of nothing but empty cells is skipped.
    data.write_text("id,a,b,label\nr1,1,2,x\nr2,6,7,\nr3,,,y\n,,,\nr4,2,2,x\n", encoding="utf-8")
    run = nbcli_in_process(
        "predict", "-m", tmp_path / "m.npz", "-d", data, "--keep", "id", "--missing", "drop"
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["id,prediction", "r1,x", "r2,y", "r3,", "r4,x"]


def test_digits_zero_writes_whole_numbers_and_empty_cells_for_unscored_rows():
    logp = np.log(np.array([[0.2, 0.8], [0.6, 0.4], [np.nan, np.nan]]))
    writer = PredictionWriter(np.array(["a", "b"]), proba=True, digits=0)
    out = io.StringIO()
    writer.write(out, {}, logp)
    assert out.getvalue() == "prediction,proba_a,proba_b\nb,0,1\na,1,0\n,,\n"


def test_an_output_named_gz_is_gzip_compressed_and_may_be_written_again(tmp_path):
    import gzip

    fitted_model_file(tmp_path / "m.npz")
    data = tmp_path / "new.csv"
    data.write_text("a,b\n1,2\n6,7\n4,4\n", encoding="utf-8")
    out = tmp_path / "p.csv.gz"
    args = ("predict", "-m", tmp_path / "m.npz", "-d", data, "--proba", "-o", out)
    assert nbcli_in_process(*args).returncode == 0
    plain = nbcli_in_process("predict", "-m", tmp_path / "m.npz", "-d", data, "--proba")
    assert gzip.decompress(out.read_bytes()).decode() == plain.stdout
    again = nbcli_in_process(*args)  # an earlier gzip predictions file is replaced
    assert again.returncode == 0, again.stderr
    run = nbcli_in_process(
        "predict", "-m", tmp_path / "m.npz", "-d", data, "-o", tmp_path / "p.parquet.gz"
    )
    assert run.returncode == 2 and "Parquet compresses its columns itself" in run.stderr
    assert not (tmp_path / "p.parquet.gz").exists()


def test_output_format_with_one_output_file_is_refused_unless_the_name_agrees(tmp_path):
    fitted_model_file(tmp_path / "m.npz")
    data = tmp_path / "new.csv"
    data.write_text("a,b\n1,2\n6,7\n", encoding="utf-8")
    base = ("predict", "-m", tmp_path / "m.npz", "-d", data)
    run = nbcli_in_process(*base, "-o", tmp_path / "z.csv", "--output-format", "parquet")
    assert_one_error_line(run, "--output-format parquet contradicts --output", "z.csv")
    assert not (tmp_path / "z.csv").exists()
    # Either way round: an explicit csv is not overruled by a Parquet name.
    run = nbcli_in_process(*base, "-o", tmp_path / "z.parquet", "--output-format", "csv")
    assert_one_error_line(run, "--output-format csv contradicts --output", "written as Parquet")
    assert not (tmp_path / "z.parquet").exists()
    run = nbcli_in_process(*base, "--output-format", "parquet")
    assert_one_error_line(run, "--output-format parquet contradicts stdout")
    # A format that agrees with the name is taken.
    for name, fmt in (("y.parquet", "PARQUET"), ("y.csv", "csv")):
        run = nbcli_in_process(*base, "-o", tmp_path / name, "--output-format", fmt, "-q")
        assert run.returncode == 0, run.stderr
    assert (tmp_path / "y.parquet").read_bytes()[:4] == b"PAR1"
    assert (tmp_path / "y.csv").read_text().splitlines()[0] == "prediction"
    assert nbcli_in_process(*base, "--output-format", "csv").stdout.startswith("prediction\n")


def test_a_terminal_gets_labels_with_control_characters_escaped_a_pipe_the_bytes(tmp_path):
    import os
    import pty
    import subprocess
    import sys

    title = "\x1b]0;owned\x07x"  # would set the window title
    rows = "".join(
        f"{a},{b},{lab}\n" for a, b, lab in [(1, 2, title), (2, 3, title), (3, 1, title)]
    )
    rows += "5,6,y\n6,7,y\n7,5,y\n"
    model = tmp_path / "m.npz"
    fitted_model_file(model, csv_text="a,b,label\n" + rows)
    (tmp_path / "d.csv").write_text("a,b,label\n" + rows, encoding="utf-8")
    args = [
        sys.executable,
        "-m",
        "nbcli",
        "predict",
        "-m",
        str(model),
        "-d",
        str(tmp_path / "d.csv"),
        "--proba",
        "-q",
    ]
    piped = subprocess.run(args, capture_output=True, check=True).stdout.decode()
    assert piped.splitlines()[0] == f"prediction,proba_{title},proba_y"
    assert piped.splitlines()[1].startswith(title + ",")
    leader, follower = pty.openpty()
    try:
        run = subprocess.run(args, stdout=follower, stderr=subprocess.DEVNULL, timeout=60)
        os.close(follower)
        follower = -1
        shown = b""
        while True:
            try:
                block = os.read(leader, 65536)
            except OSError:  # the terminal's other end is closed: all read
                break
            if not block:
                break
            shown += block
    finally:
        os.close(leader)
        if follower != -1:
            os.close(follower)
    assert run.returncode == 0
    text = shown.decode().replace("\r\n", "\n")
    assert "\x1b" not in text and "\x07" not in text
    escaped = title.replace("\x1b", "\\x1b").replace("\x07", "\\x07")
    assert text.splitlines()[0] == f"prediction,proba_{escaped},proba_y"
    assert [line.split(",")[0] for line in text.splitlines()[1:]] == [escaped] * 3 + ["y"] * 3
