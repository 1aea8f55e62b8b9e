"""--pos-label: the positive class of a two-class model's binary figures
(average precision, the binary precision, recall and F1), named in the JSON."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from sklearn import metrics as skm

from nbcli.io.modelfile import load_model
from nbcli.reports.cross_validation import CROSS_VALIDATION_SCHEMA
from nbcli.reports.evaluation import EVALUATION_SCHEMA
from nbcli.reports.tuning import TUNING_SCHEMA
from tests.conftest import SAMPLE, assert_one_error_line, nbcli_in_process
from tests.test_reports import validate


def test_pos_label_chooses_the_class_of_average_precision_and_the_binary_f1(tmp_path):
    model = tmp_path / "bc.npz"
    train, test = SAMPLE / "breast_cancer_train.csv", SAMPLE / "breast_cancer_test.csv"
    assert nbcli_in_process("fit", "-m", "gaussian", "-d", train, "-o", model).returncode == 0
    frame = pd.read_csv(test)
    mf = load_model(model)
    proba = mf.predict_proba(frame[mf.feature_names].to_numpy(dtype=float))
    y = frame["label"].to_numpy()
    reports = {}
    for given in (None, "benign", "malignant"):
        out = tmp_path / f"{given}.json"
        args = ["evaluate", "-m", model, "-d", test, "--json", out, "--bootstrap", "0", "-q"]
        run = nbcli_in_process(*args, *([] if given is None else ["--pos-label", given]))
        assert run.returncode == 0, run.stderr
        reports[given] = json.loads(out.read_text())
        validate(reports[given], EVALUATION_SCHEMA)
    assert list(mf.classes) == ["benign", "malignant"]
    for given, column in (("benign", 0), ("malignant", 1)):
        doc = reports[given]
        label = mf.classes[column]
        assert doc["ranking_class"] == label
        ap = skm.average_precision_score(y == label, proba[:, column])
        assert doc["metrics"]["average_precision"]["value"] == pytest.approx(ap, rel=1e-12)
        binary = doc["averages"]["binary"]
        assert binary["label"] == label
        f1 = skm.f1_score(y, mf.classes[proba.argmax(1)], pos_label=label)
        assert binary["f1"] == pytest.approx(f1, rel=1e-12)
    # ROC AUC does not depend on the positive class; the default is the second class.
    assert reports["benign"]["metrics"]["roc_auc"]["value"] == pytest.approx(
        reports["malignant"]["metrics"]["roc_auc"]["value"], rel=1e-12
    )
    assert reports[None]["metrics"] == reports["malignant"]["metrics"]
    assert (
        reports["benign"]["metrics"]["average_precision"]
        != reports[None]["metrics"]["average_precision"]
    )
    run = nbcli_in_process("evaluate", "-m", model, "-d", test, "--pos-label", "cyst")
    assert_one_error_line(run, "--pos-label cyst", "'benign', 'malignant'")
    # Given as labels are read: surrounding spaces stripped.
    out = tmp_path / "spaced.json"
    args = ["evaluate", "-m", model, "-d", test, "--json", out, "--bootstrap", "0", "-q"]
    run = nbcli_in_process(*args, "--pos-label", " benign ")
    assert run.returncode == 0, run.stderr
    assert json.loads(out.read_text())["metrics"] == reports["benign"]["metrics"]


def test_pos_label_needs_two_classes(tmp_path):

    model = tmp_path / "iris.npz"
    run = nbcli_in_process("fit", "-m", "gaussian", "-d", SAMPLE / "iris_train.csv", "-o", model)
    assert run.returncode == 0
    run = nbcli_in_process(
        "evaluate", "-m", model, "-d", SAMPLE / "iris_test.csv", "--pos-label", "setosa"
    )
    assert_one_error_line(run, "--pos-label setosa", "two classes", "3")


def test_cv_and_tune_take_the_positive_class_of_average_precision(tmp_path):
    train = SAMPLE / "breast_cancer_train.csv"
    base = ["-m", "gaussian", "-d", train, "--folds", "3", "--bootstrap", "0", "-q"]
    docs = {}
    for given in (None, "benign", "malignant"):
        extra = [] if given is None else ["--pos-label", given]
        oof, out = tmp_path / f"{given}.csv", tmp_path / f"{given}.json"
        run = nbcli_in_process("cv", *base, "--oof-output", oof, "--json", out, *extra)
        assert run.returncode == 0, run.stderr
        docs[given] = json.loads(out.read_text())
        validate(docs[given], CROSS_VALIDATION_SCHEMA)
    frame = pd.read_csv(tmp_path / "benign.csv")
    y = pd.read_csv(train)["label"].to_numpy()
    for given in ("benign", "malignant"):
        doc = docs[given]
        assert doc["ranking_class"] == given
        score = frame[f"proba_{given}"].to_numpy()
        pooled = skm.average_precision_score(y == given, score)
        assert doc["metrics"]["average_precision"]["value"] == pytest.approx(pooled, rel=1e-9)
        for fold in doc["folds"]:
            rows = frame["fold"].to_numpy() == fold["fold"]
            ap = skm.average_precision_score(y[rows] == given, score[rows])
            assert fold["metrics"]["average_precision"] == pytest.approx(ap, rel=1e-9)
        assert doc["averages"]["binary"]["label"] == given
    assert docs[None]["metrics"] == docs["malignant"]["metrics"]
    assert docs[None]["ranking_class"] == "malignant"
    benign_ap = docs["benign"]["metrics"]["average_precision"]["value"]
    assert benign_ap != docs["malignant"]["metrics"]["average_precision"]["value"]

    grid = ["--var-smoothing", "1e-9,1e-3", "--metric", "average_precision"]
    for given in ("benign", None):
        out = tmp_path / f"tune-{given}.json"
        extra = [] if given is None else ["--pos-label", given]
        run = nbcli_in_process("tune", *base, *grid, "--json", out, *extra)
        assert run.returncode == 0, run.stderr
        doc = json.loads(out.read_text())
        validate(doc, TUNING_SCHEMA)
        # The first combination is cv's default model on the same folds.
        first = doc["results"][0]["metrics"]["average_precision"]["value"]
        expected = docs[given]["metrics"]["average_precision"]["value"]
        assert first == pytest.approx(expected, rel=1e-12)
        assert doc["ranking_class"] == (given or "malignant")


@pytest.mark.parametrize("command", ["cv", "tune"])
def test_cv_and_tune_refuse_a_positive_class_that_is_not_one_of_two(command):
    grid = ["--var-smoothing", "1e-9,1e-3"] if command == "tune" else []
    for data, fragments in (
        (SAMPLE / "breast_cancer_train.csv", ("--pos-label cyst", "'benign', 'malignant'")),
        (SAMPLE / "iris_train.csv", ("--pos-label cyst", "two classes")),
    ):
        args = (command, "-m", "gaussian", "-d", data, "--folds", "3", *grid)
        run = nbcli_in_process(*args, "--bootstrap", "0", "--pos-label", "cyst", "-q")
        assert_one_error_line(run, *fragments)
