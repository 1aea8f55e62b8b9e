"""GaussianNB: float32 input as scikit-learn keeps it, and scikit-learn's online update.

On float32 input scikit-learn's GaussianNB keeps ``theta_``, ``var_``,
``class_count_`` and ``class_prior_`` in float32 and scores in float32;
nbcli does the same, computing in float64 from float64 statistics and
rounding once, so its posteriors are those of the float64 fit to float32
precision and scikit-learn's to float32 precision.
"""

import numpy as np
import pytest

sklearn = pytest.importorskip("sklearn")
from sklearn import datasets  # noqa: E402
from sklearn import naive_bayes as sk_nb  # noqa: E402

from nbcli.models import GaussianNB  # noqa: E402

EPS32 = float(np.finfo(np.float32).eps)


def _iris():
    X, y = datasets.load_iris(return_X_y=True)
    return X[::2], y[::2], X[1::2], y[1::2]


def test_float32_input_gives_float32_attributes_and_posteriors_as_sklearn():
    Xtr, ytr, Xte, _ = _iris()
    X32, T32 = Xtr.astype(np.float32), Xte.astype(np.float32)
    ours = GaussianNB().fit(X32, ytr)
    theirs = sk_nb.GaussianNB().fit(X32, ytr)
    for attr in ("theta_", "var_", "class_count_", "class_prior_"):
        assert getattr(ours, attr).dtype == getattr(theirs, attr).dtype == np.float32, attr
    for method in ("predict_proba", "predict_log_proba", "predict_joint_log_proba"):
        assert getattr(ours, method)(T32).dtype == np.float32, method
    # Both round float32 joint log-likelihoods of magnitude |jll|: the
    # posteriors agree to a few float32 ulps of it.
    jll = np.abs(theirs.predict_joint_log_proba(T32)).max()
    tol = 16 * EPS32 * jll
    np.testing.assert_allclose(ours.predict_proba(T32), theirs.predict_proba(T32), rtol=0, atol=tol)
    exact = GaussianNB().fit(X32.astype(np.float64), ytr)
    np.testing.assert_allclose(ours.predict_proba(T32), exact.predict_proba(T32), rtol=0, atol=tol)
    # The statistics stay float64, equal to those of the same values in float64.
    np.testing.assert_array_equal(ours.stats_.m2, exact.stats_.m2)
    assert exact.predict_proba(Xte).dtype == np.float64


def test_float32_chunks_keep_float32_and_equal_one_fit():
    Xtr, ytr, Xte, _ = _iris()
    X32 = Xtr.astype(np.float32)
    whole = GaussianNB().fit(X32, ytr)
    online = GaussianNB()
    for lo in range(0, len(ytr), 25):
        online.partial_fit(X32[lo : lo + 25], ytr[lo : lo + 25], classes=[0, 1, 2])
    assert online.var_.dtype == np.float32
    np.testing.assert_allclose(online.var_, whole.var_, rtol=4 * EPS32)
    np.testing.assert_allclose(online.stats_.m2, whole.stats_.m2, rtol=1e-12)


@pytest.mark.parametrize("weighted", [False, True])
def test_update_mean_variance_equals_sklearn(weighted):
    rng = np.random.default_rng(2)
    X = rng.normal(size=(40, 3)) * [1.0, 10.0, 1e-3] + [5.0, -2.0, 1e6]
    w = rng.uniform(0.1, 3.0, 40) if weighted else None
    mu, var = np.array([4.0, -1.0, 1e6]), np.array([0.5, 80.0, 2e-6])
    ours = GaussianNB._update_mean_variance(25.0, mu, var, X, w)
    theirs = sk_nb.GaussianNB._update_mean_variance(25.0, mu, var, X, w)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=1e-13)
    # scikit-learn squares x - mean directly: x's rounding, eps |mean|, is an
    # error of about 2 eps |mean| / std relative to the variance (1e-6 here
    # for the third feature); the merge itself is exact to rounding.
    rel = 1e-12 + 8 * np.finfo(float).eps * np.abs(ours[0]) / np.sqrt(ours[1])
    assert np.all(np.abs(ours[1] - theirs[1]) <= rel * theirs[1])
    empty = GaussianNB._update_mean_variance(100, 0.0, 1.0, np.empty((0, 3)))
    assert empty == (0.0, 1.0)
    first = GaussianNB._update_mean_variance(0, 0.0, 0.0, X, w)
    np.testing.assert_allclose(first[0], np.average(X, axis=0, weights=w), rtol=1e-13)
