"""Outputs a command cannot write as asked are refused before any work:
two outputs on stdout, a model file on a device, split over another file."""

from __future__ import annotations

import pytest
from conftest import SMALL_CSV, assert_one_error_line, fitted_model_file, nbcli, nbcli_in_process


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
    assert_one_error_line(run, "--json - and --oof-output - would both go to stdout")


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
