"""covariance_method: scikit-learn's maximum-likelihood divisors, or MASS's unbiased ones."""

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import multivariate_normal

from nbcli.models import LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis

sklearn = pytest.importorskip("sklearn")
from sklearn import discriminant_analysis as sk_da  # noqa: E402
from sklearn.datasets import load_iris, load_wine  # noqa: E402

pytestmark = pytest.mark.numerical


# The agreement with MASS asked for; the reference's own rounding (SciPy's
# eigendecomposition of Sigma, Mahalanobis terms in the hundreds on wine) is
# about 1e-14, so a wrong divisor (differences above 1e-6) cannot pass.
MASS_ATOL = 1e-11


@pytest.fixture(scope="module", params=["iris", "wine"])
def table(request):
    X, y = (load_iris if request.param == "iris" else load_wine)(return_X_y=True)
    train = np.arange(len(y)) % 3 != 0
    return X[train], y[train], X[~train]


def _scatter(X, y, k):
    Xk = X[y == k]
    c = Xk - Xk.mean(axis=0)
    return c.T @ c, len(Xk), Xk.mean(axis=0)


def _posteriors(X, means, covs, priors):
    """MASS's predict.lda / predict.qda posteriors: prior times the normal density, normalised."""
    logp = np.column_stack(
        [
            np.log(p) + multivariate_normal(m, c).logpdf(X)
            for m, c, p in zip(means, covs, priors, strict=True)
        ]
    )
    return np.exp(logp - logsumexp(logp, axis=1, keepdims=True))


def test_lda_moment_is_mass_pooled_covariance_over_n_minus_k(table):
    X, y, Xte = table
    classes = np.unique(y)
    parts = [_scatter(X, y, k) for k in classes]
    n, K = len(y), len(classes)
    pooled = sum(s for s, _, _ in parts) / (n - K)
    priors = np.array([m for _, m, _ in parts]) / n
    expected = _posteriors(Xte, [mu for _, _, mu in parts], [pooled] * K, priors)
    model = LinearDiscriminantAnalysis(covariance_method="moment").fit(X, y)
    np.testing.assert_allclose(
        model.covariance_, pooled, rtol=1e-12, atol=1e-14 * np.abs(pooled).max()
    )
    got = model.predict_proba(Xte)
    np.testing.assert_allclose(got, expected, rtol=0, atol=MASS_ATOL)
    # The divisor changes the answer: MASS's defaults are not scikit-learn's.
    ml = LinearDiscriminantAnalysis().fit(X, y)
    assert np.abs(ml.predict_proba(Xte) - got).max() > 1e-6


def test_qda_moment_is_mass_class_covariances_over_n_k_minus_one(table):
    X, y, Xte = table
    classes = np.unique(y)
    parts = [_scatter(X, y, k) for k in classes]
    covs = [s / (m - 1) for s, m, _ in parts]
    priors = np.array([m for _, m, _ in parts]) / len(y)
    expected = _posteriors(Xte, [mu for _, _, mu in parts], covs, priors)
    model = QuadraticDiscriminantAnalysis(covariance_method="moment").fit(X, y)
    np.testing.assert_allclose(
        model.covariance_, np.stack(covs), rtol=1e-12, atol=1e-14 * np.abs(covs).max()
    )
    got = model.predict_proba(Xte)
    np.testing.assert_allclose(got, expected, rtol=0, atol=MASS_ATOL)
    assert np.abs(QuadraticDiscriminantAnalysis().fit(X, y).predict_proba(Xte) - got).max() > 1e-6


def test_the_installed_scikit_learn_divides_by_n_and_n_k(table):
    """The installed scikit-learn's LDA and QDA covariances are the
    maximum-likelihood ones, as nbcli's default: its QDA's svd solver divides
    each class's squared singular values by n_k (older releases took n_k - 1),
    its LDA pools the per-class S_k / n_k by the class frequencies."""
    X, y, _ = table
    classes = np.unique(y)
    parts = [_scatter(X, y, k) for k in classes]
    lda = sk_da.LinearDiscriminantAnalysis(store_covariance=True).fit(X, y)
    qda = sk_da.QuadraticDiscriminantAnalysis(store_covariance=True).fit(X, y)
    priors = np.array([m for _, m, _ in parts]) / len(y)
    # scikit-learn pools the class covariances S_k / n_k by their priors n_k / n: sum S_k / n.
    ml_pooled = sum(p * s / m for p, (s, m, _) in zip(priors, parts, strict=True))
    np.testing.assert_allclose(lda.covariance_, ml_pooled, rtol=1e-10, err_msg=sklearn.__version__)
    for cov, (s, m, _) in zip(qda.covariance_, parts, strict=True):
        np.testing.assert_allclose(cov, s / m, rtol=1e-10, err_msg=sklearn.__version__)


@pytest.mark.parametrize("cls", [LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis])
def test_the_method_is_applied_at_finalisation_so_a_rebuilt_model_equals_a_fit(cls, table):
    X, y, Xte = table
    fitted = cls(covariance_method="moment").fit(X, y)
    rebuilt = cls().fit(X, y).with_params(covariance_method="moment")
    np.testing.assert_allclose(
        rebuilt.predict_proba(Xte), fitted.predict_proba(Xte), rtol=0, atol=1e-13
    )
    spec = {s.name: s for s in cls.hyperparameters}["covariance_method"]
    assert spec.default == "mle" and not spec.shapes_statistics and spec.searchable


@pytest.mark.parametrize("shrinkage", [0.3, "auto"])
def test_moment_scales_a_shrunk_covariance_by_n_over_n_minus_k(shrinkage, table):
    X, y, _ = table
    n, K = len(y), len(np.unique(y))
    ml = LinearDiscriminantAnalysis(solver="lsqr", shrinkage=shrinkage).fit(X, y)
    mom = LinearDiscriminantAnalysis(solver="lsqr", shrinkage=shrinkage, covariance_method="moment")
    np.testing.assert_allclose(mom.fit(X, y).covariance_, ml.covariance_ * n / (n - K), rtol=1e-12)


def test_qda_moment_refuses_a_class_of_one_row():
    X = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 2.0], [5.0, 5.0]])
    with pytest.raises(ValueError, match="divisor n_k - 1"):
        QuadraticDiscriminantAnalysis(covariance_method="moment", reg_param=0.5).fit(
            X, [0, 0, 0, 1]
        )


def test_fit_cv_and_tune_take_the_method(tmp_path):
    import json

    import pandas as pd

    from tests.conftest import nbcli_in_process

    data = "sample_data/iris_train.csv"
    model, pred = tmp_path / "q.npz", tmp_path / "p.csv"
    run = nbcli_in_process(
        "fit", "-m", "qda", "-d", data, "--covariance-method", "moment", "-o", model
    )
    assert run.returncode == 0, run.stderr
    run = nbcli_in_process("predict", "-m", model, "-d", data, "--proba", "-o", pred, "-q")
    assert run.returncode == 0, run.stderr
    frame = pd.read_csv(data)
    X, y = frame.drop(columns="label").to_numpy(), frame["label"].to_numpy()
    ours = QuadraticDiscriminantAnalysis(covariance_method="moment").fit(X, y)
    got = pd.read_csv(pred)[[f"proba_{c}" for c in ours.classes_]].to_numpy()
    np.testing.assert_allclose(got, ours.predict_proba(X), rtol=0, atol=1e-12)
    report = tmp_path / "cv.json"
    run = nbcli_in_process(
        "cv", "-m", "lda", "-d", data, "--covariance-method", "moment", "--folds", "3",
        "--bootstrap", "0", "--json", report,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert json.loads(report.read_text())["hyperparameters"]["covariance_method"] == "moment"
    report = tmp_path / "tune.json"
    run = nbcli_in_process(
        "tune", "-m", "lda", "-d", data, "--covariance-method", "mle,moment", "--folds", "3",
        "--bootstrap", "0", "--json", report,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    tuned = json.loads(report.read_text())
    assert tuned["grid"] == {"covariance_method": ["mle", "moment"]}
    assert len(tuned["results"]) == 2
    run = nbcli_in_process(
        "fit", "-m", "lda", "-d", data, "--covariance-method", "n-1", "-o", model
    )
    assert (
        run.returncode == 2 and "--covariance-method must be one of 'mle', 'moment'" in run.stderr
    )
