"""``evaluate --plot PREFIX``: reliability, ROC and confusion images."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score, roc_curve

from nbcli.io.modelfile import load_model
from nbcli.io.request import DataRequest
from nbcli.workflows.evaluate import evaluate
from nbcli.workflows.settings import ScoreSettings
from tests.conftest import nbcli_in_process

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    path = tmp_path_factory.mktemp("m") / "bc.npz"
    run = nbcli_in_process(
        "fit", "-m", "gaussian", "-d", SAMPLE / "breast_cancer_train.csv", "-o", path, "-q"
    )
    assert run.returncode == 0, run.stderr
    return path


def test_curves_are_scikit_learns(model):
    test = SAMPLE / "breast_cancer_test.csv"
    report = evaluate(str(model), DataRequest.of(str(test)), ScoreSettings(bootstrap=0))
    mf = load_model(model)
    frame = pd.read_csv(test)
    proba = mf.predict_proba(frame[mf.feature_names].to_numpy(float))
    y = frame[mf.target].to_numpy()
    assert len(report.roc_curves) == len(mf.classes)
    for k, curve in enumerate(report.roc_curves):
        positive = y == mf.classes[k]
        fpr, tpr, _ = roc_curve(positive, proba[:, k])
        np.testing.assert_allclose(curve.x, fpr, atol=1e-12)
        np.testing.assert_allclose(curve.y, tpr, atol=1e-12)
        assert curve.area == pytest.approx(roc_auc_score(positive, proba[:, k]), abs=1e-12)


@pytest.mark.parametrize("fmt, magic", [("png", b"\x89PNG"), ("svg", b"<?xml")])
def test_plot_writes_three_images(model, tmp_path, fmt, magic):
    args = ["evaluate", "-m", model, "-d", SAMPLE / "breast_cancer_test.csv", "--bootstrap", "0"]
    args += ["--plot", tmp_path / "ev"] + (["--plot-format", fmt] if fmt != "png" else [])
    run = nbcli_in_process(*args)
    assert run.returncode == 0, run.stderr
    for name in ("reliability", "roc", "confusion"):
        path = tmp_path / f"ev.{name}.{fmt}"
        assert path.read_bytes().startswith(magic)
        assert f"wrote {path}" in run.stderr


def test_plot_outputs_are_checked_before_any_work(model, tmp_path):
    test = SAMPLE / "breast_cancer_test.csv"
    run = nbcli_in_process("evaluate", "-m", model, "-d", test, "--plot", tmp_path / "no" / "ev")
    assert run.returncode == 2 and "does not exist" in run.stderr
    run = nbcli_in_process(
        "evaluate", "-m", model, "-d", test, "--plot", tmp_path / "e", "--plot-format", "gif"
    )
    assert run.returncode == 2 and not list(tmp_path.iterdir())


def test_roc_plot_keeps_every_class_when_unseen_labels_fill_several_rows(monkeypatch):
    # Three rows carry one label the model never saw: the plot's classes are
    # the model's three, not the first three minus the number of such rows.
    import nbcli.render.plot as plot
    from nbcli.cli.evaluate_cmd import evaluation_images
    from nbcli.reports import build_evaluation

    rng = np.random.default_rng(0)
    classes = np.array(["a", "b", "c"])
    y = classes[rng.integers(0, 3, 60)].astype(object)
    y[:3] = "zz"
    p = rng.dirichlet(np.ones(3), size=60)
    report = build_evaluation(classes, y, p, n_resamples=0)
    seen = {}
    monkeypatch.setattr(
        plot, "roc_image", lambda curves, names, suffix: seen.setdefault("names", names) and b""
    )
    monkeypatch.setattr(plot, "reliability_image", lambda *a: b"")
    monkeypatch.setattr(plot, "confusion_image", lambda *a: b"")
    evaluation_images(report, ".png")
    assert list(seen["names"]) == ["a", "b", "c"]
