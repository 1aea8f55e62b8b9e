"""The grid and fold options of ``cv`` and ``tune`` as a command line gives them:
range points of a count rounded to whole numbers, and settings that cannot
all hold refused in one line."""

from __future__ import annotations

import json

import numpy as np
import pytest

from nbcli.models import registry
from nbcli.reports.tuning import TUNING_SCHEMA
from nbcli.workflows.tune import grid_values
from tests.conftest import assert_one_error_line, nbcli_in_process
from tests.test_reports import validate

DIGITS = "sample_data/digits_train.csv"  # 64 pixel columns
IRIS = "sample_data/iris_train.csv"  # 4 columns


def _spec(model: str, name: str):
    return next(s for s in registry.get(model).hyperparameters if s.name == name)


def test_a_log_range_of_components_gives_whole_numbers():
    values, note = grid_values("log:1..64:7", "--pca", _spec("gaussian", "pca"))
    # 10 ** (log10(64) / 2) is 7.999999999999999 in floating point.
    assert values == [1, 2, 4, 8, 16, 32, 64]
    assert all(type(v) is int for v in values)
    assert note is None


def test_points_that_round_together_are_kept_once_and_said():
    values, note = grid_values("log:1..4:6", "--pca", _spec("gaussian", "pca"))
    # The points 4 ** (i / 5): 1, 1.32, 1.74, 2.30, 3.03, 4.
    expected = list(dict.fromkeys(int(np.floor(4 ** (i / 5) + 0.5)) for i in range(6)))
    assert values == expected == [1, 2, 3, 4]
    assert note is not None and "6 points round to 4 whole numbers (1, 2, 3, 4)" in note


def test_a_range_of_components_across_1_is_refused():
    # Its points below 1 would be shares of the variance, the others counts.
    from nbcli.errors import NbcliError

    pca = _spec("gaussian", "pca")
    with pytest.raises(NbcliError, match="runs across 1"):
        grid_values("lin:0.5..3:4", "--pca", pca)
    # A range of counts from 1, a range of fractions, and a list that mixes
    # them on purpose, are taken; so is a range across 1 of another setting.
    assert grid_values("lin:1..3:3", "--pca", pca)[0] == [1, 2, 3]
    assert grid_values("0.5,2", "--pca", pca)[0] == [0.5, 2]
    alpha = _spec("multinomial", "alpha")
    assert grid_values("lin:0.5..1.5:3", "--alpha", alpha)[0] == pytest.approx([0.5, 1.0, 1.5])


def test_fractions_of_the_variance_and_other_numbers_stay_as_they_are():
    pca = _spec("gaussian", "pca")
    assert grid_values("lin:0.5..0.9:5", "--pca", pca)[0] == pytest.approx(
        [0.5, 0.6, 0.7, 0.8, 0.9]
    )
    smoothing, note = grid_values(
        "lin:0..1:3", "--var-smoothing", _spec("gaussian", "var_smoothing")
    )
    assert smoothing == [0.0, 0.5, 1.0] and note is None
    # A listed value is taken as written, not rounded.
    assert grid_values("2,3", "--pca", pca) == ([2, 3], None)


def _tune(tmp_path, *args):
    report = tmp_path / "tune.json"
    run = nbcli_in_process("tune", *args, "-k", "3", "--bootstrap", "0", "--json", report, "-q")
    assert run.returncode == 0, run.stderr
    return json.loads(report.read_text()), run


def test_tune_searches_a_log_range_of_components(tmp_path):
    report, _ = _tune(tmp_path, "-m", "gaussian", "-d", DIGITS, "--pca", "log:1..64:7")
    assert report["grid"]["pca"] == [1, 2, 4, 8, 16, 32, 64]
    assert [r["params"]["pca"] for r in report["results"]] == [1, 2, 4, 8, 16, 32, 64]
    assert all(type(r["params"]["pca"]) is int for r in report["results"])


def test_tune_says_when_rounding_makes_the_grid_smaller(tmp_path):
    report, run = _tune(tmp_path, "-m", "gaussian", "-d", IRIS, "--pca", "log:1..4:6")
    assert report["grid"]["pca"] == [1, 2, 3, 4]
    assert len(report["results"]) == 4
    assert any("6 points round to 4 whole numbers" in w for w in report["warnings"])
    assert "6 points round to 4 whole numbers" in run.stderr


def test_a_lin_range_of_components_is_shown_as_whole_numbers(tmp_path):
    report = tmp_path / "tune.json"
    run = nbcli_in_process("tune", "-m", "gaussian", "-d", DIGITS, "--pca", "lin:2..10:5",
                           "-k", "3", "--bootstrap", "0", "--json", report)  # fmt: skip
    assert run.returncode == 0, run.stderr
    figures = json.loads(report.read_text())
    assert figures["grid"]["pca"] == [2, 4, 6, 8, 10]
    assert "pca=10.0" not in run.stdout and " 2.0 " not in run.stdout
    best = figures["best"]["params"]["pca"]
    assert f"Best: pca={best} (" in run.stdout


def test_a_range_in_a_config_grid_is_rounded_too(tmp_path):
    config = tmp_path / "grid.toml"
    config.write_text('[grid]\npca = "log:1..64:7"\n')
    report, _ = _tune(tmp_path, "-m", "gaussian", "-d", DIGITS, "--config", config)
    assert report["grid"]["pca"] == [1, 2, 4, 8, 16, 32, 64]


@pytest.fixture(scope="module")
def with_folds(tmp_path_factory):
    path = tmp_path_factory.mktemp("folds") / "iris_folds.csv"
    lines = open(IRIS).read().splitlines()
    rows = [f"{line},{i % 3}" for i, line in enumerate(lines[1:])]
    path.write_text("\n".join([lines[0] + ",fold", *rows]) + "\n")
    return path


@pytest.mark.parametrize(
    "command, grid", [("cv", ["--bootstrap", "0"]), ("tune", ["--var-smoothing", "1e-9,1e-3"])]
)
def test_folds_with_a_fold_column_is_refused_naming_both(with_folds, command, grid):
    run = nbcli_in_process(command, "-m", "gaussian", "-d", with_folds, "--fold-column", "fold",
                           "--folds", "5", *grid)  # fmt: skip
    assert_one_error_line(run, "--folds", "--fold-column", code=2)


@pytest.mark.parametrize("option", ["--fold-column", "--group-column"])
@pytest.mark.parametrize("command", ["cv", "tune"])
def test_folds_from_the_target_column_are_refused(with_folds, command, option):
    # Each fold would hold out classes no fold model has seen.
    grid = ["--var-smoothing", "1e-9,1e-3"] if command == "tune" else []
    run = nbcli_in_process(command, "-m", "gaussian", "-d", with_folds, "-t", "label", option,
                           "label", "--bootstrap", "0", *grid)  # fmt: skip
    assert_one_error_line(run, f"{option} label is the target column", code=2)


@pytest.mark.parametrize("command", ["cv", "tune"])
def test_a_fold_column_alone_makes_the_folds(tmp_path, with_folds, command):
    report = tmp_path / "r.json"
    grid = ["--var-smoothing", "1e-9,1e-3"] if command == "tune" else []
    run = nbcli_in_process(command, "-m", "gaussian", "-d", with_folds, "--fold-column", "fold",
                           "--bootstrap", "0", *grid, "--json", report, "-q")  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert json.loads(report.read_text())["plan"]["n_folds"] == 3


def test_tune_refuses_more_components_than_features(tmp_path):
    run = nbcli_in_process("tune", "-m", "gaussian", "-d", IRIS, "--pca", "2,5",
                           "-k", "3", "--bootstrap", "0", "--json", tmp_path / "r.json")  # fmt: skip
    line = assert_one_error_line(run, "pca=5", "4 features", "at most 4", code=2)
    assert "warning" not in line
    assert not (tmp_path / "r.json").exists()


def test_tune_takes_as_many_components_as_features(tmp_path):
    report, _ = _tune(tmp_path, "-m", "qda", "-d", IRIS, "--pca", "2,4")
    assert [r["params"]["pca"] for r in report["results"]] == [2, 4]
    assert all(np.isfinite(r["metrics"]["log_loss"]["value"]) for r in report["results"])


def test_tune_fails_a_ci_job_on_the_best_combinations_metrics(tmp_path, with_folds):
    # Exit 3 once the model file and the report are written, as cv and evaluate do.
    args = ["-m", "gaussian", "-d", with_folds, "--fold-column", "fold", "--bootstrap", "0",
            "--var-smoothing", "1e-9,1e-2", "-o", tmp_path / "best.npz"]  # fmt: skip
    report = tmp_path / "r.json"
    ok = nbcli_in_process("tune", *args, "--json", report, "-q")
    assert ok.returncode == 0, ok.stderr
    doc = json.loads(report.read_text())
    best = doc["results"][doc["best"]["index"]]["metrics"]
    accuracy, loss = best["accuracy"]["value"], best["log_loss"]["value"]
    assert "thresholds" not in doc
    run = nbcli_in_process(
        "tune", *args, "--json", report, "--force",
        "--fail-under", f"accuracy={accuracy + 0.001}", "--fail-over", f"log_loss={loss * 2}",
    )  # fmt: skip
    assert run.returncode == 3, run.stderr
    assert run.stderr_lines[-1] == (
        f"error: accuracy {accuracy:.4f} is below the threshold {accuracy + 0.001:g}"
    )
    doc = json.loads(report.read_text())
    assert validate(doc, TUNING_SCHEMA) == []
    assert [(t["metric"], t["passed"]) for t in doc["thresholds"]] == [
        ("accuracy", False), ("log_loss", True)
    ]  # fmt: skip
    assert (tmp_path / "best.npz").exists()
    passed = nbcli_in_process(
        "tune", *args, "--force", "-q", "--fail-under", f"accuracy={accuracy}"
    )
    assert passed.returncode == 0, passed.stderr
    # Only the metrics every combination has; refused before any work.
    unknown = nbcli_in_process("tune", *args, "--force", "--fail-under", "ece=0.1")
    assert_one_error_line(unknown, "unknown metric 'ece'")
