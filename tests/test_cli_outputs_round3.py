"""Outputs a command cannot write as asked are refused before any work:
two outputs on stdout, a model file on a device, split over another file."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import (
    SMALL_CSV,
    assert_one_error_line,
    fitted_model_file,
    nbcli,
    nbcli_in_process,
)


@pytest.fixture
def d(tmp_path):
    fitted_model_file(tmp_path / "m.npz")
    (tmp_path / "data.csv").write_text(SMALL_CSV, encoding="utf-8")
    return tmp_path


def test_predict_json_to_stdout_with_predictions_on_stdout_is_refused(d):
    run = nbcli_in_process("predict", "-m", d / "m.npz", "-d", d / "data.csv", "--json", "-")
    assert_one_error_line(
        run,
        "--json - and the predictions would both go to stdout; give -o FILE or --json PATH",
    )
    assert run.stdout == ""


def test_predict_json_to_stdout_with_predictions_in_a_file_works(d):
    run = nbcli_in_process(
        "predict", "-m", d / "m.npz", "-d", d / "data.csv", "-o", d / "p.csv", "--json", "-"
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.lstrip().startswith("{")
    assert (d / "p.csv").read_text(encoding="utf-8").startswith("prediction")


def test_predict_json_to_dev_stdout_with_predictions_on_stdout_is_refused(d):
    run = nbcli("predict", "-m", d / "m.npz", "-d", d / "data.csv", "--json", "/dev/stdout")
    assert_one_error_line(run, "would both go to stdout")
    assert run.stdout == ""


def test_cv_json_and_out_of_fold_predictions_both_on_stdout_is_refused(d):
    run = nbcli_in_process(
        "cv", "-m", "gaussian", "-d", d / "data.csv", "--folds", "2", "--json", "-",
        "--oof-output", "-",
    )  # fmt: skip
    assert_one_error_line(run, "--json and --oof-output cannot both go to stdout")


@pytest.mark.parametrize(
    "argv",
    [
        ["fit", "-m", "gaussian", "-d", "{d}/data.csv"],
        ["calibrate", "-m", "{d}/m.npz", "-d", "{d}/data.csv", "--allow-training-data",
         "--method", "temperature"],
        ["tune", "-m", "gaussian", "-d", "{d}/data.csv", "--folds", "2",
         "--var-smoothing", "1e-9,1e-3"],
    ],
)  # fmt: skip
def test_model_output_to_a_device_is_refused_before_work(d, argv):
    run = nbcli_in_process(*[a.format(d=d) for a in argv], "-o", "/dev/null")
    assert_one_error_line(run, "--output /dev/null: a model file must be a regular file")


WINE = Path(__file__).resolve().parent.parent / "sample_data" / "wine_train.csv"


def _npz(path, n=12):
    import numpy as np

    rng = np.random.default_rng(0)
    np.savez(path, X=rng.normal(size=(n, 2)), y=np.array(["a", "b"] * (n // 2)))


def test_split_refuses_to_replace_a_model_file_unless_forced(d):
    _npz(d / "wine.npz")
    out = d / "out"
    out.mkdir()
    model = (d / "m.npz").read_bytes()
    (out / "wine.train.npz").write_bytes(model)
    run = nbcli_in_process("split", "-d", d / "wine.npz", "--test", "0.25", "--output-dir", out)
    assert_one_error_line(run, "wine.train.npz: exists and is not a split", "nbcli model file")
    assert (out / "wine.train.npz").read_bytes() == model
    assert not (out / "wine.test.npz").exists()
    forced = nbcli_in_process(
        "split", "-d", d / "wine.npz", "--test", "0.25", "--output-dir", out, "--force"
    )
    assert forced.returncode == 0, forced.stderr
    assert (out / "wine.train.npz").read_bytes() != model


def test_split_replaces_an_earlier_split_but_not_other_data(d):
    out = d / "out"
    out.mkdir()
    argv = ("split", "-d", d / "data.csv", "--test", "2", "--output-dir", out, "--seed", "1")
    assert nbcli_in_process(*argv).returncode == 0
    again = nbcli_in_process(*argv[:-1], "2")
    assert again.returncode == 0, again.stderr
    (out / "data.test.csv").write_text("other,columns\n1,2\n", encoding="utf-8")
    refused = nbcli_in_process(*argv)
    assert_one_error_line(refused, "data.test.csv: exists and is not a split", "--force")
    assert (out / "data.test.csv").read_text(encoding="utf-8") == "other,columns\n1,2\n"


def test_split_replaces_an_earlier_parquet_split(d):
    import pandas as pd

    frame = pd.DataFrame({"a": range(8), "b": [0.5] * 8, "label": list("xyxyxyxy")})
    frame.to_parquet(d / "t.parquet")
    out = d / "out"
    out.mkdir()
    argv = ("split", "-d", d / "t.parquet", "--test", "2", "--output-dir", out)
    assert nbcli_in_process(*argv).returncode == 0
    assert nbcli_in_process(*argv).returncode == 0
    pd.DataFrame({"z": [1]}).to_parquet(out / "t.train.parquet")
    assert_one_error_line(nbcli_in_process(*argv), "t.train.parquet: exists and is not a split")


def test_split_says_which_target_it_stratified_by(d):
    out = d / "out"
    out.mkdir()
    run = nbcli_in_process("split", "-d", WINE, "--test", "0.2", "--output-dir", out)
    assert run.returncode == 0, run.stderr
    assert run.stderr_lines[0] == (
        "stratified by column 'label' (chosen by default: named like a target)"
    )
    assert "warning" not in run.stderr
    given = nbcli_in_process(
        "split", "-d", WINE, "--test", "0.2", "--output-dir", out, "--target", "label"
    )
    assert given.stderr_lines[0] == "stratified by column 'label' (given by --target)"


def test_split_warns_when_the_target_looks_continuous(d):
    out = d / "out"
    out.mkdir()
    run = nbcli_in_process(
        "split", "-d", WINE, "--test", "0.2", "--output-dir", out, "--target", "proline",
        "--no-stratify",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    warnings = [line for line in run.stderr_lines if line.startswith("warning:")]
    assert len(warnings) == 1 and "the target 'proline' looks continuous" in warnings[0]
