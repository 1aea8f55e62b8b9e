"""``nbcli inspect``: the nbcli.model report on every model type and format version."""

import json
from pathlib import Path

import numpy as np
import pytest
from scipy import integrate, stats
from sklearn.datasets import load_wine
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis as SkLDA

from nbcli.io.modelfile import ModelFile, load_model, save_model
from nbcli.models import (
    BernoulliNB,
    GaussianNB,
    LinearDiscriminantAnalysis,
    MultinomialNB,
    QuadraticDiscriminantAnalysis,
)
from nbcli.reports.model import MODEL_SCHEMA, feature_labels, indicative_scores
from nbcli.workflows.inspect import inspect_model
from tests.conftest import nbcli_in_process
from tests.test_reports import validate

V1 = Path(__file__).parent / "data" / "v1"


@pytest.mark.parametrize("path", sorted(p.name for p in V1.glob("*_*.npz")))
def test_every_version_1_file_is_described(path):
    run = nbcli_in_process("inspect", V1 / path, "--json", "-", "--top", "2", "-q")
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    assert validate(doc, MODEL_SCHEMA) == []
    assert doc["format_version"] == 1 and doc["file_nbcli_version"] == "0.1.0"
    mf = load_model(V1 / path)
    assert [c["label"] for c in doc["classes"]] == mf.classes.tolist()
    assert sum(c["count"] for c in doc["classes"]) == mf.training["n_samples"]
    # Whole counts are integers in JSON, as fit's report gives them.
    assert all(type(c["count"]) is int for c in doc["classes"])
    assert (doc["calibration"] is None) == (mf.calibrator is None)
    kind = doc["model"]
    assert (doc["indicative_features"] is not None) == (
        kind in ("gaussian", "multinomial", "bernoulli")
    )
    assert (doc["discriminant"] is not None) == (kind == "lda")
    assert (doc["covariances"] is not None) == (kind == "qda")


def _save(tmp_path, model, names, **members):
    path = tmp_path / "m.npz"
    save_model(ModelFile(model, names, target="y", training={"n_samples": 0}, **members), path)
    return path


def test_multinomial_scores_are_log_probability_ratios(tmp_path):
    X = np.array([[5.0, 0, 1], [4, 1, 0], [0, 3, 2], [1, 4, 2], [0, 0, 9]])
    y = np.array([0, 0, 1, 1, 2])
    m = MultinomialNB().fit(X, y)
    theta, prior = np.exp(m.feature_log_prob_), np.exp(m.class_log_prior_)
    scores, _ = indicative_scores(m)
    rest = (prior[1] * theta[1] + prior[2] * theta[2]) / (prior[1] + prior[2])
    np.testing.assert_allclose(scores[0], np.log(theta[0] / rest), rtol=1e-12)
    report = inspect_model(_save(tmp_path, m, ["a", "b", "c"]), top=1)
    top = {k: v[0]["feature"] for k, v in report.indicative.items()}
    assert top == {"0": "a", "1": "b", "2": "c"}
    # Bernoulli: the presence ratio of the feature.
    b = BernoulliNB(binarize=0.5).fit(X, y)
    scores, _ = indicative_scores(b)
    p = np.exp(b.feature_log_prob_)
    bp = np.exp(b.class_log_prior_)
    np.testing.assert_allclose(
        scores[2], np.log(p[2] / ((bp[0] * p[0] + bp[1] * p[1]) / (bp[0] + bp[1]))), rtol=1e-12
    )


def test_gaussian_score_is_the_expected_log_likelihood_ratio():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal([0, 5], [1, 2], size=(40, 2)), rng.normal([3, 5], [1, 1], (60, 2))])
    y = np.repeat([0, 1], [40, 60])
    m = GaussianNB().fit(X, y)
    scores, higher = indicative_scores(m)
    # Two classes: "the others" is the other class itself, so the score is the KL divergence.
    for j in range(2):
        p = stats.norm(m.theta_[0, j], np.sqrt(m.var_[0, j]))
        q = stats.norm(m.theta_[1, j], np.sqrt(m.var_[1, j]))
        kl = integrate.quad(lambda x, p=p, q=q: p.pdf(x) * (p.logpdf(x) - q.logpdf(x)), -30, 40)[0]
        assert scores[0, j] == pytest.approx(kl, rel=1e-7)
    assert higher[1, 0] and not higher[0, 0]


def test_lda_directions_and_qda_determinants(tmp_path):
    X, y = load_wine(return_X_y=True)
    names = [f"f{j}" for j in range(13)]
    lda = LinearDiscriminantAnalysis(solver="lsqr").fit(X, y)
    report = inspect_model(_save(tmp_path, lda, names), top=3)
    ratios = [d["explained_variance_ratio"] for d in report.discriminant["directions"]]
    np.testing.assert_allclose(ratios, SkLDA().fit(X, y).explained_variance_ratio_, atol=1e-12)
    assert report.discriminant["solver"] == "svd" and report.discriminant["rank"] == 13
    assert all(len(d["weights"]) == 3 for d in report.discriminant["directions"])
    # Their own sections show what tells the classes apart: no warning that nothing does.
    assert report.indicative is None and report.warnings == []
    qda = QuadraticDiscriminantAnalysis(reg_param=0.01).fit(X, y)
    report = inspect_model(_save(tmp_path, qda, names))
    assert report.warnings == []
    for k, entry in enumerate(report.covariances.values()):
        sign, logdet = np.linalg.slogdet(qda.covariance_[k])
        assert sign == 1 and entry["log_determinant"] == pytest.approx(logdet, rel=1e-10)
        assert entry["condition_number"] == pytest.approx(np.linalg.cond(qda.covariance_[k]))


def test_version_2_members_are_shown(tmp_path):
    X = np.array([[1.0, 0], [0, 1], [1, 1], [0, 0]])
    m = GaussianNB().fit(X, [0, 0, 1, 1])
    search = {"best": {"params": {"var_smoothing": 0.01}, "metric": "accuracy", "value": 0.9}}
    columns = [{"name": "a", "type": "gaussian"}, {"name": "b", "type": "gaussian"}]
    fingerprint = {"algorithm": "rowhash64-v1", "value": "00ff"}
    mf = ModelFile(
        m,
        ["a", "b"],
        training={"n_samples": 4, "fingerprint": fingerprint},
        search=search,
        columns=columns,
    )
    save_model(mf, tmp_path / "v2.npz")
    run = nbcli_in_process("inspect", tmp_path / "v2.npz", "--json", tmp_path / "r.json")
    assert run.returncode == 0, run.stderr
    assert "var_smoothing=0.01" in run.stdout and "rowhash64-v1" in run.stdout
    doc = json.loads((tmp_path / "r.json").read_text())
    assert validate(doc, MODEL_SCHEMA) == []
    assert doc["search"] == search and doc["training"]["fingerprint"] == fingerprint
    assert doc["features"] == columns and doc["format_version"] == 2


def test_a_vocabulary_names_the_features():
    columns = [{"name": "n", "type": "numeric"}, {"name": "body", "type": "text"}]
    vocab = {"body": ["cheap", "meeting", "viagra"]}
    assert feature_labels(["n", "body"], 4, columns, vocab) == ["n", "cheap", "meeting", "viagra"]
    two = {"body": ["a"], "title": ["b", "c"]}
    cols = [*columns, {"name": "title", "type": "text"}]
    assert feature_labels(["n", "body", "title"], 4, cols, two) == [
        "n",
        "body:a",
        "title:b",
        "title:c",
    ]
    assert feature_labels(["x"], 2) == ["feature 1", "feature 2"]


def test_bad_input_is_one_line(tmp_path):
    (tmp_path / "not.npz").write_text("a,b\n1,2\n")
    for args in (["inspect", tmp_path / "not.npz"], ["inspect", V1 / "lda_iris.npz", "--top", "0"]):
        run = nbcli_in_process(*args)
        assert run.returncode == 2 and run.stderr.startswith("error: ")
        assert run.stderr.count("\n") == 1


@pytest.mark.parametrize("method", ["temperature", "isotonic"])
def test_inspect_shows_the_fitted_calibrator(tmp_path, method):
    from nbcli.calibration import IsotonicCalibration, TemperatureScaling

    rng = np.random.default_rng(4)
    X = rng.normal(size=(200, 3))
    y = (X[:, 0] + 0.8 * rng.normal(size=200) > 0).astype(int)
    model = GaussianNB().fit(X[:120], y[:120])
    log_proba = model.predict_log_proba(X[120:])
    calibrator = (TemperatureScaling if method == "temperature" else IsotonicCalibration)()
    calibrator.fit(log_proba, y[120:])
    path = tmp_path / "c.npz"
    save_model(
        ModelFile(model, ["a", "b", "c"], training={"n_samples": 120}, calibrator=calibrator), path
    )
    run = nbcli_in_process("inspect", path, "--json", "-", "-q")
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    assert validate(doc, MODEL_SCHEMA) == []
    shown = nbcli_in_process("inspect", path).stdout
    if method == "temperature":
        assert doc["calibration"]["temperature"] == calibrator.temperature_
        assert f"T = {calibrator.temperature_:.6g}" in shown
    else:
        counts = [len(x) for x, _ in calibrator.breakpoints_]
        assert doc["calibration"]["breakpoints"] == counts and min(counts) >= 2
        assert f"({', '.join(map(str, counts))} breakpoints per class)" in shown


def test_categorical_indicative_scores_are_kl_divergences_from_the_other_classes():
    from nbcli.models import CategoricalNB

    rng = np.random.default_rng(2)
    X = rng.integers(0, 4, size=(300, 3))
    y = rng.choice(["a", "b", "c"], 300)
    X[y == "a", 1] = rng.choice([0, 3], (y == "a").sum())
    model = CategoricalNB(alpha=0.5).fit(X, y)
    scores, higher = indicative_scores(model)
    assert higher is None and scores.shape == (3, 3)
    priors = np.exp(model.class_log_prior_)
    for k in range(3):
        w = np.delete(priors, k) / np.delete(priors, k).sum()
        for j in range(3):
            p = np.exp(model.feature_log_prob_[j])
            rest = w @ np.delete(p, k, axis=0)
            assert scores[k, j] == pytest.approx(np.sum(p[k] * np.log(p[k] / rest)), rel=1e-12)
    assert np.argmax(scores[0]) == 1  # class a's feature 1 differs most


def test_a_model_without_indicative_scores_says_so(tmp_path):
    from nbcli.models import ComplementNB, MixedNB

    rng = np.random.default_rng(3)
    X = rng.poisson(2.0, size=(80, 3)).astype(float)
    y = rng.choice(["a", "b"], 80)
    model = ComplementNB().fit(X, y)
    save_model(ModelFile(model, ["x", "c", "d"], training={"n_samples": 80}), tmp_path / "m.npz")
    run = nbcli_in_process("inspect", tmp_path / "m.npz")
    assert run.returncode == 0, run.stderr
    assert "warning: the complement model has no per-feature score" in run.stderr
    doc = json.loads(nbcli_in_process("inspect", tmp_path / "m.npz", "--json", "-", "-q").stdout)
    assert doc["indicative_features"] is None and doc["warnings"]
    # A mixed model shows what it learnt per column instead, and warns of nothing.
    X = np.column_stack([rng.normal(size=80), rng.integers(0, 3, 80)])
    mixed = MixedNB(column_types=["gaussian", "categorical"]).fit(X, y)
    save_model(ModelFile(mixed, ["x", "c"], training={"n_samples": 80}), tmp_path / "x.npz")
    doc = json.loads(nbcli_in_process("inspect", tmp_path / "x.npz", "--json", "-", "-q").stdout)
    assert doc["warnings"] == [] and doc["parameters"]["n_columns"] == 2


def test_calibrate_prints_the_fitted_temperature(tmp_path):
    from tests.conftest import SAMPLE

    run = nbcli_in_process("fit", "-m", "gaussian", "-d", SAMPLE / "iris_train.csv",
                           "-o", tmp_path / "m.npz", "-q")  # fmt: skip
    assert run.returncode == 0, run.stderr
    run = nbcli_in_process("calibrate", "-m", tmp_path / "m.npz", "-d", SAMPLE / "iris_calib.csv",
                           "--method", "temperature", "--allow-worse", "-o", tmp_path / "c.npz",
                           "--json", tmp_path / "r.json")  # fmt: skip
    assert run.returncode == 0, run.stderr
    temperature = json.loads((tmp_path / "r.json").read_text())["calibrator"]["temperature"]
    # Thirty rows cannot show an improvement beyond the margin: written by
    # --allow-worse, and named as the best candidate the verdict refused.
    assert f"Best candidate, not accepted: temperature (T = {temperature:.6g})" in run.stdout
    assert temperature == load_model(tmp_path / "c.npz").calibrator.temperature_
