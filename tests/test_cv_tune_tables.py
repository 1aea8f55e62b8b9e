"""``nbcli cv`` and ``nbcli tune`` on real tables: options fit has, exact grids, safe outputs."""

from __future__ import annotations

import json

import pytest
from conftest import nbcli_in_process

from nbcli.workflows.tune import parse_values

DIGITS = "sample_data/digits_train.csv"
IRIS = "sample_data/iris_train.csv"


def test_log_range_decades_are_exact():
    values = parse_values("log:1e-9..1:10", "--var-smoothing")
    assert values == [float(f"1e{k}") for k in range(-9, 1)]
    assert parse_values("log:1e-5..1e-3:5", "x")[0] == 1e-05
    assert parse_values("log:1e-5..1e-3:5", "x")[2] == 1e-04
    assert parse_values("log:2..8:3", "x") == pytest.approx([2.0, 4.0, 8.0], rel=1e-15)


def test_tune_shows_shortest_values():
    run = nbcli_in_process(
        "tune",
        "-m",
        "gaussian",
        "-d",
        IRIS,
        "--var-smoothing",
        "log:1e-9..1e-3:7",
        "--folds",
        "3",
        "--bootstrap",
        "0",
    )
    assert run.returncode == 0, run.stderr
    assert "9.99999" not in run.stdout + run.stderr
    assert "Best: var_smoothing=" in run.stdout


def test_tune_takes_binarize():
    run = nbcli_in_process(
        "tune",
        "-m",
        "bernoulli",
        "-d",
        DIGITS,
        "--alpha",
        "0.5,1",
        "--binarize",
        "8",
        "--folds",
        "3",
        "--bootstrap",
        "0",
        "--json",
        "-",
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["best"]["params"] == {"alpha": report["best"]["params"]["alpha"]}
    assert json.dumps(report).count('"binarize": 8.0') >= 1


def test_cv_oof_output_does_not_replace_a_model(tmp_path):
    model = tmp_path / "m.nbm"
    assert nbcli_in_process("fit", "-m", "gaussian", "-d", IRIS, "-o", model).returncode == 0
    before = model.read_bytes()
    args = ("cv", "-m", "gaussian", "-d", IRIS, "--folds", "3", "--bootstrap", "0", "-q")
    run = nbcli_in_process(*args, "--oof-output", model)
    assert run.returncode == 2 and "--force" in run.stderr
    assert model.read_bytes() == before
    run = nbcli_in_process(*args, "--oof-output", model, "--force")
    assert run.returncode == 0, run.stderr
    assert model.read_bytes() != before


def test_cv_refuses_json_and_oof_both_on_stdout():
    run = nbcli_in_process(
        "cv",
        "-m",
        "gaussian",
        "-d",
        IRIS,
        "--folds",
        "3",
        "--bootstrap",
        "0",
        "--json",
        "-",
        "--oof-output",
        "-",
    )
    assert run.returncode == 2
    assert "both go to stdout" in run.stderr
    assert run.stdout == ""
