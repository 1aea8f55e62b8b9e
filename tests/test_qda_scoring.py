"""QDA scoring by products with inverse Cholesky factors agrees with triangular solves."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import nbcli.models as nb
from nbcli.models import quadratic as discriminant

# Run again under other BLAS kernels by .ci/run.
pytestmark = pytest.mark.numerical


def _data(n, d, k, seed, shift=0.0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    mix = rng.normal(size=(k, d, d)) / np.sqrt(d)
    X = np.einsum("nij,nj->ni", mix[y] + np.eye(d), rng.normal(size=(n, d)))
    return X + rng.normal(size=(k, d))[y] + shift, y


@pytest.mark.parametrize("shift", [0.0, 1e6, 1e9])
def test_product_scoring_equals_solves_and_the_density(shift):
    X, y = _data(3000, 6, 3, 1, shift)
    model = nb.QuadraticDiscriminantAnalysis().fit(X, y)
    assert model._use_product
    product = model.joint_log_likelihood(X)
    model._use_product = False
    solved = model.joint_log_likelihood(X)
    np.testing.assert_allclose(product, solved, rtol=1e-12, atol=1e-12)
    if shift == 0.0:
        k = 2
        dens = stats.multivariate_normal(model.means_[k], model.covariance_[k]).logpdf(X)
        expected = dens + np.log(model.priors_[k])
        np.testing.assert_allclose(
            product[:, k], expected, rtol=1e-10, atol=1e-10 * np.abs(expected).max()
        )


def test_ill_conditioned_factors_fall_back_to_triangular_solves():
    rng = np.random.default_rng(2)
    n = 2000
    y = rng.integers(0, 2, n)
    base = rng.normal(size=(n, 1))
    # Two features that nearly coincide: the factor's condition number is about 1e6.
    X = np.hstack([base, base + 2e-6 * rng.normal(size=(n, 1)), rng.normal(size=(n, 1))])
    model = nb.QuadraticDiscriminantAnalysis().fit(X, y)
    assert not model._use_product
    well = nb.QuadraticDiscriminantAnalysis().fit(rng.normal(size=(n, 3)), y)
    assert well._use_product
    assert discriminant.PRODUCT_RCOND > 0


def test_product_scoring_agrees_with_sklearn():
    from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis as SkQDA

    X, y = _data(4000, 8, 4, 3)
    ours = nb.QuadraticDiscriminantAnalysis(reg_param=0.05).fit(X, y)
    theirs = SkQDA(reg_param=0.05).fit(X, y)
    p = ours.predict_proba(X)
    assert np.mean((p > 1e-3) & (p < 1 - 1e-3)) > 0.01  # not all saturated
    np.testing.assert_allclose(p, theirs.predict_proba(X), atol=1e-8)


def test_gaussian_moments_stay_exact_when_the_first_row_is_far_in_a_tail(monkeypatch):
    from nbcli.models import _stats

    rng = np.random.default_rng(5)
    x = 1e-3 * rng.normal(size=(5000, 3)) + 1e9
    x[0] += 1.0  # the shift row sits a thousand spreads from the mean
    y = np.zeros(5000, dtype=np.intp)
    calls = []
    two_pass = _stats._centred_block
    monkeypatch.setattr(
        _stats, "_centred_block", lambda *a, **k: calls.append(1) or two_pass(*a, **k)
    )
    st = _stats.ClassMoments.from_data(x, y, None, 1)
    assert calls  # the far first row sends the class to the two-pass algorithm
    centred = x - x[1]  # exact: nearby values
    centred -= centred.mean(axis=0)
    exact = (centred * centred).sum(axis=0)
    shifted = x - x[0]
    naive = (shifted * shifted).sum(axis=0) - 5000 * (shifted.mean(axis=0)) ** 2
    assert np.max(np.abs(naive / exact - 1)) > 1e-11  # the shortcut would lose digits here
    np.testing.assert_allclose(st.m2[0], exact, rtol=1e-12)
    near = _stats.ClassMoments.from_data(x[1:], y[1:], None, 1)
    c = x[1:] - x[1]
    c -= c.mean(axis=0)
    np.testing.assert_allclose(near.m2[0], (c * c).sum(axis=0), rtol=1e-12)
