"""--pos-label: the positive class of a two-class model's binary figures
(average precision, the binary precision, recall and F1), named in the JSON."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from sklearn import metrics as skm

from nbcli.io.modelfile import load_model
from nbcli.reports.evaluation import EVALUATION_SCHEMA
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


def test_pos_label_needs_two_classes(tmp_path):

    model = tmp_path / "iris.npz"
    run = nbcli_in_process("fit", "-m", "gaussian", "-d", SAMPLE / "iris_train.csv", "-o", model)
    assert run.returncode == 0
    run = nbcli_in_process(
        "evaluate", "-m", model, "-d", SAMPLE / "iris_test.csv", "--pos-label", "setosa"
    )
    assert_one_error_line(run, "--pos-label setosa", "two classes", "3")
