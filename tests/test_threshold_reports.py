"""A JSON report says which ``--fail-under``/``--fail-over`` thresholds were
checked, against which value, and which failed; and the guide says what
``--column`` does on parts."""

from __future__ import annotations

import json

import pytest

from nbcli.reports.cross_validation import CROSS_VALIDATION_SCHEMA
from nbcli.reports.evaluation import EVALUATION_SCHEMA
from tests.conftest import ROOT, nbcli_in_process
from tests.test_reports import validate

IRIS_TRAIN, IRIS_TEST = "sample_data/iris_train.csv", "sample_data/iris_test.csv"


@pytest.fixture(scope="module")
def iris_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("thresholds") / "iris.npz"
    run = nbcli_in_process("fit", "-m", "gaussian", "-d", IRIS_TRAIN, "-o", path, "-q")
    assert run.returncode == 0, run.stderr
    return path


def _report(tmp_path, *args, code):
    out = tmp_path / "report.json"
    run = nbcli_in_process(*args, "--json", out, "-q")
    assert run.returncode == code, run.stderr
    return json.loads(out.read_text()), run


def test_evaluate_lists_each_threshold_checked_and_whether_it_passed(tmp_path, iris_model):
    doc, run = _report(tmp_path, "evaluate", "-m", iris_model, "-d", IRIS_TEST,
                       "--fail-under", "accuracy=0.99", "--fail-under", "accuracy.lower=0.5",
                       "--fail-over", "log_loss=1", code=3)  # fmt: skip
    assert validate(doc, EVALUATION_SCHEMA) == []
    accuracy, log_loss = doc["metrics"]["accuracy"], doc["metrics"]["log_loss"]
    assert accuracy["value"] < 0.99 and accuracy["lower"] >= 0.5 and log_loss["value"] <= 1
    assert doc["thresholds"] == [
        {"metric": "accuracy", "option": "--fail-under", "threshold": 0.99,
         "value": accuracy["value"], "passed": False},
        {"metric": "accuracy.lower", "option": "--fail-under", "threshold": 0.5,
         "value": accuracy["lower"], "passed": True},
        {"metric": "log_loss", "option": "--fail-over", "threshold": 1.0,
         "value": log_loss["value"], "passed": True},
    ]  # fmt: skip
    # The failed one is also the command's error line.
    assert "accuracy" in run.stderr and "below the threshold 0.99" in run.stderr


def test_a_metric_without_an_interval_is_compared_with_its_value(tmp_path, iris_model):
    doc, _ = _report(tmp_path, "evaluate", "-m", iris_model, "-d", IRIS_TEST, "--bootstrap", "0",
                     "--fail-over", "ece=1", code=0)  # fmt: skip
    assert doc["thresholds"] == [
        {"metric": "ece", "option": "--fail-over", "threshold": 1.0,
         "value": doc["calibration"]["ece"], "passed": True},
    ]  # fmt: skip
    assert validate(doc, EVALUATION_SCHEMA) == []


def test_without_thresholds_the_member_is_absent(tmp_path, iris_model):
    doc, _ = _report(tmp_path, "evaluate", "-m", iris_model, "-d", IRIS_TEST, "--bootstrap", "0",
                     code=0)  # fmt: skip
    assert "thresholds" not in doc
    assert validate(doc, EVALUATION_SCHEMA) == []


def test_cv_lists_the_thresholds_on_its_pooled_metrics(tmp_path):
    doc, _ = _report(tmp_path, "cv", "-m", "gaussian", "-d", IRIS_TRAIN, "-k", "3",
                     "--bootstrap", "0", "--fail-under", "accuracy=0.5", code=0)  # fmt: skip
    assert validate(doc, CROSS_VALIDATION_SCHEMA) == []
    assert doc["thresholds"] == [
        {"metric": "accuracy", "option": "--fail-under", "threshold": 0.5,
         "value": doc["metrics"]["accuracy"]["value"], "passed": True},
    ]  # fmt: skip


def test_compare_and_calibrate_list_their_thresholds(tmp_path, iris_model):
    doc, _ = _report(tmp_path, "compare", "-m", iris_model, "-m", iris_model, "-d", IRIS_TEST,
                     "--bootstrap", "0", "--fail-over", "p_value=0.5", code=3)  # fmt: skip
    assert doc["thresholds"] == [
        {"metric": "p_value", "option": "--fail-over", "threshold": 0.5,
         "value": doc["mcnemar"]["p_value"], "passed": False},
    ]  # fmt: skip
    doc, _ = _report(tmp_path, "calibrate", "-m", iris_model, "-d", IRIS_TEST, "--method", "none",
                     "--bootstrap", "0", "--fail-under", "accuracy=0.5", code=0)  # fmt: skip
    assert doc["thresholds"] == [
        {"metric": "accuracy", "option": "--fail-under", "threshold": 0.5,
         "value": doc["accuracy"], "passed": True},
    ]  # fmt: skip


def test_the_guide_says_column_types_apply_to_every_part(tmp_path):
    guide = (ROOT / "docs" / "guide" / "commands.md").read_text(encoding="utf-8")
    assert "`--column` is refused on parts" not in guide
    assert "`--column NAME=TYPE` applies to every part" in guide
    # As the code does: a fit on parts takes --column.
    parts = tmp_path / "parts"
    parts.mkdir()
    lines = (ROOT / "sample_data" / "penguins.csv").read_text().splitlines()
    (parts / "a.csv").write_text("\n".join(lines[:150]) + "\n")
    (parts / "b.csv").write_text("\n".join([lines[0], *lines[150:]]) + "\n")
    report = tmp_path / "fit.json"
    run = nbcli_in_process("fit", "-m", "mixed", "-d", parts, "--target", "species",
                           "--column", "year=categorical", "--missing", "drop",
                           "-o", tmp_path / "m.npz", "--json", report, "-q")  # fmt: skip
    assert run.returncode == 0, run.stderr
    inspected = tmp_path / "inspect.json"
    assert (
        nbcli_in_process("inspect", tmp_path / "m.npz", "--json", inspected, "-q").returncode == 0
    )
    features = json.loads(inspected.read_text())["features"]
    year = next(f for f in features if f["name"] == "year")
    assert year["type"] == "categorical"
