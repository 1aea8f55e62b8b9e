"""JSON Schemas of the comparison, calibration and recalibration reports:
the reports the commands write validate, and a changed member does not."""

from __future__ import annotations

import copy
import json

import pytest

from nbcli.reports.comparison import COMPARISON_SCHEMA
from nbcli.reports.reliability import CALIBRATION_SCHEMA, RECALIBRATION_SCHEMA
from tests.conftest import nbcli_in_process
from tests.test_reports import validate

TRAIN = "sample_data/breast_cancer_train.csv"
CALIB = "sample_data/breast_cancer_calib.csv"
TEST = "sample_data/breast_cancer_test.csv"


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("schemas")
    out = {}
    for name in ("gaussian", "lda"):
        out[name] = root / f"{name}.npz"
        run = nbcli_in_process("fit", "-m", name, "-d", TRAIN, "-o", out[name], "-q")
        assert run.returncode == 0, run.stderr
    return root, out


def _json(*args):
    run = nbcli_in_process(*args, "--json", "-", "-q")
    assert run.returncode in (0, 3), run.stderr
    return json.loads(run.stdout)


def test_a_comparison_report_validates_and_a_broken_one_does_not(models):
    _, m = models
    doc = _json("compare", "-m", m["gaussian"], "-m", m["lda"], "-d", TEST,
                "--fail-under", "difference.lower=-1")  # fmt: skip
    assert doc["schema"] == "nbcli.comparison" and doc["thresholds"]
    assert validate(doc, COMPARISON_SCHEMA) == []
    broken = copy.deepcopy(doc)
    broken["agreement"]["both_correct"] = -1
    del broken["mcnemar"]["p_value"]
    errors = validate(broken, COMPARISON_SCHEMA)
    assert any("both_correct" in e for e in errors) and any("p_value" in e for e in errors)


def test_a_calibration_report_validates_and_a_broken_one_does_not(models):
    _, m = models
    doc = _json("calibrate", "-m", m["gaussian"], "-d", CALIB, "--method", "none")
    assert doc["schema"] == "nbcli.calibration"
    assert validate(doc, CALIBRATION_SCHEMA) == []
    broken = copy.deepcopy(doc)
    broken["reliability"]["strategy"] = "sideways"
    broken["metrics"]["ece"]["method"] = "guess"
    errors = validate(broken, CALIBRATION_SCHEMA)
    assert len(errors) == 2, errors


@pytest.mark.parametrize("method", ["auto", "temperature", "sigmoid", "isotonic"])
def test_a_recalibration_report_validates_for_every_method(models, method):
    root, m = models
    doc = _json("calibrate", "-m", m["gaussian"], "-d", CALIB, "--method", method,
                "-o", root / f"{method}.npz", "--allow-worse", "--force")  # fmt: skip
    assert doc["schema"] == "nbcli.recalibration" and doc["schema_version"] == 2
    assert validate(doc, RECALIBRATION_SCHEMA) == []
    assert validate(doc["after"], CALIBRATION_SCHEMA) == []
    broken = copy.deepcopy(doc)
    broken["calibrator"]["method"] = "platt"
    broken["verdict"]["candidates"][0]["accepted"] = "yes"
    errors = validate(broken, RECALIBRATION_SCHEMA)
    assert any("calibrator.method" in e for e in errors), errors
    assert any("accepted" in e for e in errors), errors
