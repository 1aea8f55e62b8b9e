"""One rule for every output: it replaces an earlier output of its own kind,
never a file of another kind unless --force; each written file is named."""

from __future__ import annotations

import json

import pytest

from nbcli.io.output_kinds import file_kind
from tests.conftest import SMALL_CSV, assert_one_error_line, fitted_model_file, nbcli_in_process


@pytest.fixture
def d(tmp_path):
    fitted_model_file(tmp_path / "m.npz")
    (tmp_path / "data.csv").write_text(SMALL_CSV, encoding="utf-8")
    (tmp_path / "notes.txt").write_text("my notes\n", encoding="utf-8")
    return tmp_path


def test_file_kind_by_content(d):
    (d / "p.csv").write_text("id,prediction\n1,x\n", encoding="utf-8")
    (d / "p2.csv").write_text('"prediction";"proba_x"\nx;1\n', encoding="utf-8")
    (d / "r.json").write_text(json.dumps({"schema": "nbcli.evaluation"}), encoding="utf-8")
    (d / "other.json").write_text(json.dumps({"schema": "theirs"}), encoding="utf-8")
    (d / "a.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 10)
    (d / "a.svg").write_text('<?xml version="1.0"?>\n<svg xmlns="x"></svg>', encoding="utf-8")
    (d / "empty").write_bytes(b"")
    assert file_kind(d / "m.npz") == "model"
    assert file_kind(d / "p.csv") == "predictions"
    assert file_kind(d / "p2.csv") == "predictions"
    assert file_kind(d / "r.json") == "json"
    assert file_kind(d / "other.json") is None
    assert file_kind(d / "a.png") == "plot"
    assert file_kind(d / "a.svg") == "plot"
    assert file_kind(d / "data.csv") is None
    assert file_kind(d / "notes.txt") is None
    assert file_kind(d / "empty") == "empty"
    assert file_kind(d / "missing") is None


@pytest.mark.parametrize(
    "header",
    ["prediction,a,b", "a,prediction,label", "prediction,proba_x,note", "prediction,prediction"],
)
def test_a_data_table_with_a_prediction_column_is_not_a_predictions_file(d, header):
    # What predict writes ends in "prediction" and its proba_ columns; any
    # other column after it, or a repeated name, makes the table data.
    (d / "table.csv").write_text(header + "\n" + ",".join("1" * header.count(",")) + ",1\n")
    assert file_kind(d / "table.csv") is None
    run = nbcli_in_process(
        "predict", "-m", d / "m.npz", "-d", d / "data.csv", "-o", d / "table.csv"
    )
    assert_one_error_line(run, "table.csv", "--force")
    assert (d / "table.csv").read_text().startswith(header + "\n")


@pytest.mark.parametrize(
    "args, victim, kind",
    [
        (
            ["predict", "-m", "{d}/m.npz", "-d", "{d}/data.csv", "-o", "{d}/train.csv"],
            "train.csv",
            "predictions",
        ),
        (
            ["predict", "-m", "{d}/m.npz", "-d", "{d}/data.csv", "-o", "{d}/other.npz"],
            "other.npz",
            "predictions",
        ),
        (
            ["evaluate", "-m", "{d}/m.npz", "-d", "{d}/data.csv", "--json", "{d}/other.npz"],
            "other.npz",
            "JSON report",
        ),
        (
            ["evaluate", "-m", "{d}/m.npz", "-d", "{d}/data.csv", "--json", "{d}/train.csv"],
            "train.csv",
            "JSON report",
        ),
        (
            [
                "compare",
                "-m",
                "{d}/m.npz",
                "-m",
                "{d}/m.npz",
                "-d",
                "{d}/data.csv",
                "--json",
                "{d}/notes.txt",
            ],
            "notes.txt",
            "JSON report",
        ),
        (
            [
                "calibrate",
                "-m",
                "{d}/m.npz",
                "-d",
                "{d}/data.csv",
                "--method",
                "none",
                "--allow-training-data",
                "--bins",
                "3",
                "--json",
                "{d}/train.csv",
            ],
            "train.csv",
            "JSON report",
        ),
        (
            [
                "calibrate",
                "-m",
                "{d}/m.npz",
                "-d",
                "{d}/data.csv",
                "--method",
                "none",
                "--allow-training-data",
                "--bins",
                "3",
                "--plot",
                "{d}/r.png",
            ],
            "r.png",
            "plot",
        ),
        (
            ["fit", "-m", "gaussian", "-d", "{d}/data.csv", "-o", "{d}/r.json"],
            "r.json",
            "model file",
        ),
        (
            [
                "fit",
                "-m",
                "gaussian",
                "-d",
                "{d}/data.csv",
                "-o",
                "{d}/m2.npz",
                "--json",
                "{d}/other.npz",
            ],
            "other.npz",
            "JSON report",
        ),
    ],
)
def test_an_output_never_replaces_a_file_of_another_kind(d, args, victim, kind):
    import shutil

    (d / "train.csv").write_text(SMALL_CSV, encoding="utf-8")
    shutil.copy(d / "m.npz", d / "other.npz")
    (d / "r.json").write_text(json.dumps({"schema": "nbcli.evaluation"}), encoding="utf-8")
    (d / "r.png").write_text("a,prediction\n1,x\n", encoding="utf-8")  # a predictions CSV
    before = (d / victim).read_bytes()
    argv = [a.format(d=d) for a in args]
    run = nbcli_in_process(*argv)
    assert_one_error_line(
        run, victim, f"is not an nbcli {kind}" if kind != "plot" else "not a PNG", "--force"
    )
    assert (d / victim).read_bytes() == before
    forced = nbcli_in_process(*argv, "--force", "-q")
    assert forced.returncode == 0, forced.stderr
    assert (d / victim).read_bytes() != before


def test_an_output_replaces_an_earlier_output_of_its_kind(d):
    base = ["-m", d / "m.npz", "-d", d / "data.csv"]
    for _ in range(2):
        run = nbcli_in_process("predict", *base, "-o", d / "p.csv")
        assert run.returncode == 0, run.stderr
        assert f"wrote {d / 'p.csv'}" in run.stderr_lines
        run = nbcli_in_process("evaluate", *base, "--json", d / "r.json", "--bootstrap", "0")
        assert run.returncode == 0, run.stderr
        assert f"wrote {d / 'r.json'}" in run.stderr.splitlines()
    assert json.loads((d / "r.json").read_text())["schema"] == "nbcli.evaluation"
    quiet = nbcli_in_process("predict", *base, "-o", d / "p.csv", "-q")
    assert quiet.returncode == 0 and "wrote" not in quiet.stderr


def test_model_outputs_named_like_data_are_refused_and_odd_prediction_names_warned(tmp_path):
    from tests.conftest import SAMPLE, assert_one_error_line, nbcli_in_process

    train = SAMPLE / "iris_train.csv"
    for name in ("model.csv", "model.parquet", "m.json"):
        run = nbcli_in_process("fit", "-m", "gaussian", "-d", train, "-o", tmp_path / name)
        assert_one_error_line(run, "a model file is an .npz archive", "ending in .npz")
        assert not (tmp_path / name).exists()
    model = tmp_path / "m.npz"
    assert nbcli_in_process("fit", "-m", "gaussian", "-d", train, "-o", model, "-q").returncode == 0
    odd = nbcli_in_process(
        "predict", "-m", model, "-d", SAMPLE / "iris_test.csv", "-o", tmp_path / "p.xlsx"
    )
    assert odd.returncode == 0 and "written as CSV, whatever its name says" in odd.stderr
    assert (tmp_path / "p.xlsx").read_text().startswith("prediction")
    plain = nbcli_in_process(
        "predict", "-m", model, "-d", SAMPLE / "iris_test.csv", "-o", tmp_path / "p.csv"
    )
    assert plain.returncode == 0 and "whatever its name" not in plain.stderr


QUOTED_LABELS_CSV = 'x,label\n1,"a,b"\n2,"c""d"\n1.2,"a,b"\n2.1,"c""d"\n0.9,"a,b"\n2.2,"c""d"\n'


def test_predictions_with_quoted_label_columns_replace_themselves(tmp_path):
    # A label holding the delimiter or a quote gives a quoted proba_ column
    # name; the header is read as CSV, so the file is still predict's own.
    (tmp_path / "q.csv").write_text(QUOTED_LABELS_CSV, encoding="utf-8")
    fit = nbcli_in_process(
        "fit", "-m", "gaussian", "-d", tmp_path / "q.csv", "-o", tmp_path / "q.npz", "--quiet"
    )
    assert fit.returncode == 0, fit.stderr
    out = tmp_path / "p.csv"
    argv = ("predict", "-m", tmp_path / "q.npz", "-d", tmp_path / "q.csv", "--proba")
    for _ in range(2):
        run = nbcli_in_process(*argv, "-o", out)
        assert run.returncode == 0, run.stderr
    assert out.read_text(encoding="utf-8").splitlines()[0] == (
        'prediction,"proba_a,b","proba_c""d"'
    )
    assert file_kind(out) == "predictions"
    for _ in range(2):
        run = nbcli_in_process(*argv, "--output-dir", tmp_path / "batch")
        assert run.returncode == 0, run.stderr
    assert file_kind(tmp_path / "batch" / "q.pred.csv") == "predictions"


def test_a_model_file_named_onnx_is_refused_pointing_to_export(tmp_path):
    from tests.conftest import SAMPLE, assert_one_error_line, nbcli_in_process

    train = SAMPLE / "iris_train.csv"
    onnx = tmp_path / "model.onnx"
    for command, extra in (("fit", ()), ("tune", ("--var-smoothing", "1e-9,1e-8,1e-7"))):
        run = nbcli_in_process(command, "-m", "gaussian", "-d", train, *extra, "-o", onnx)
        assert_one_error_line(run, "not an ONNX graph", "ending in .npz", "nbcli export")
        assert not onnx.exists()
    model = tmp_path / "m.npz"
    assert nbcli_in_process("fit", "-m", "gaussian", "-d", train, "-o", model, "-q").returncode == 0
    run = nbcli_in_process("calibrate", "-m", model, "-d", SAMPLE / "iris_calib.csv", "-o", onnx)
    assert_one_error_line(run, "not an ONNX graph")
    # --force keeps the name, as for a name like data.
    forced = nbcli_in_process("fit", "-m", "gaussian", "-d", train, "-o", onnx, "-q", "--force")
    assert forced.returncode == 0 and onnx.read_bytes()[:2] == b"PK"


def test_a_batch_run_again_into_its_own_folder_leaves_its_outputs_out(tmp_path):
    # A glob over the folder meets the first run's a.pred.csv and b.pred.csv:
    # the second run scores a.csv and b.csv again instead of refusing.
    model = tmp_path / "m.npz"
    fitted_model_file(model)
    parts = tmp_path / "parts"
    parts.mkdir()
    for name in ("a", "b"):
        (parts / f"{name}.csv").write_text(SMALL_CSV)
    argv = ("predict", "-m", model, "-d", f"{parts}/*.csv", "--output-dir", parts)
    first = nbcli_in_process(*argv)
    assert first.returncode == 0, first.stderr
    written = (parts / "a.pred.csv").read_text()
    again = nbcli_in_process(*argv)
    assert again.returncode == 0, again.stderr
    said = [line for line in again.stderr_lines if "left out of the inputs" in line]
    assert said == [
        f"warning: {parts}/a.pred.csv: left out of the inputs: it is the output of {parts}/a.csv in this run",
        f"warning: {parts}/b.pred.csv: left out of the inputs: it is the output of {parts}/b.csv in this run",
    ]
    assert sorted(p.name for p in parts.iterdir()) == ["a.csv", "a.pred.csv", "b.csv", "b.pred.csv"]
    assert (parts / "a.pred.csv").read_text() == written
    # A data file that only shares the name is not replaced.
    (parts / "b.pred.csv").write_text(SMALL_CSV)
    refused = nbcli_in_process(*argv)
    assert refused.returncode == 2 and "Traceback" not in refused.stderr
    last = refused.stderr_lines[-1]
    assert last.startswith("error:") and "b.pred.csv" in last and "not an nbcli predictions" in last
    assert (parts / "b.pred.csv").read_text() == SMALL_CSV
