"""The affine models' scores taken as stacked small products, and QDA's banded
products, agree with the plain formulas; bad cells are still found by row."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import nbcli.models as nb
from nbcli.models import _blocks
from nbcli.models._blocks import affine_scores

# Run again under other BLAS kernels by .ci/run.
pytestmark = pytest.mark.numerical


def _plain(X, coef, intercept, threshold=None, centre=None):
    rows = X
    if threshold is not None:
        rows = (X > threshold).astype(np.float64)
    elif centre is not None:
        rows = X - centre
    return coef @ rows.T + intercept[:, None]


@pytest.mark.parametrize("n", [1, 999, 1000, 2621, 3000])
@pytest.mark.parametrize("kind", ["plain", "threshold", "centre"])
def test_stacked_products_equal_one_product(n, kind):
    rng = np.random.default_rng(n)
    d, k = 100, 10  # 1,000 rows per small product
    X = rng.normal(size=(n, d))
    coef = rng.normal(size=(k, d))
    b = rng.normal(size=k)
    extra = {"plain": {}, "threshold": {"threshold": 0.25}, "centre": {"centre": X.mean(0)}}[kind]
    got = affine_scores(X, coef, b, **extra)
    assert got.shape == (k, n) and got.flags.c_contiguous
    np.testing.assert_allclose(got, _plain(X, coef, b, **extra), rtol=1e-12, atol=1e-12)


def _rounding_bound(X, coef, intercept):
    """Per score, a bound on the rounding of a sum of d products in any order.

    A score that nearly cancels has an error of the size of its terms, not of
    itself: |fl(sum t) - sum t| <= d * eps * sum |t| (Higham, Accuracy and
    Stability of Numerical Algorithms, 2nd ed., eq. 3.5), plus the intercept.
    """
    d = X.shape[1]
    magnitude = np.abs(coef) @ np.abs(X).T + np.abs(intercept)[:, None]
    return (d + 1) * np.finfo(np.float64).eps * magnitude


def test_column_major_rows_and_large_products_take_one_product():
    rng = np.random.default_rng(1)
    coef = rng.normal(size=(3, 40))
    b = rng.normal(size=3)
    X = np.asfortranarray(rng.normal(size=(5000, 40)))
    got = affine_scores(X, coef, b)
    np.testing.assert_array_less(np.abs(got - _plain(X, coef, b)), _rounding_bound(X, coef, b))
    # 2,000 classes x 600 features: too large for the small kernels at any row count.
    coef = rng.normal(size=(2000, 600))
    b = rng.normal(size=2000)
    X = rng.normal(size=(70, 600))
    got = affine_scores(X, coef, b)
    np.testing.assert_array_less(np.abs(got - _plain(X, coef, b)), _rounding_bound(X, coef, b))


def test_binarised_scores_keep_ties_at_the_threshold_as_zero():
    X = np.array([[0.0, 1.0, -1.0], [0.5, 0.5, 0.5]])
    coef = np.array([[1.0, 10.0, 100.0]])
    got = affine_scores(X, coef, np.zeros(1), threshold=0.5)
    assert got.tolist() == [[10.0, 0.0]]


@pytest.fixture
def many_blocks(monkeypatch):
    # Small blocks, so that a small array has several runs and takes the threaded path.
    monkeypatch.setattr(_blocks, "_BLOCK_ELEMENTS", 1 << 12)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize(
    "make, value",
    [
        (nb.LinearDiscriminantAnalysis, np.nan),
        (nb.LinearDiscriminantAnalysis, -np.inf),
        (lambda: nb.BernoulliNB(binarize=0.0), np.nan),
        # Binarised, infinity would score as a plain 1: the scan must catch it.
        (lambda: nb.BernoulliNB(binarize=0.0), np.inf),
        (nb.MultinomialNB, np.inf),
    ],
)
def test_a_non_finite_cell_is_reported_at_its_row(make, value, threads, many_blocks, monkeypatch):
    monkeypatch.setenv("NBCLI_THREADS", str(threads))
    rng = np.random.default_rng(4)
    X = np.abs(rng.normal(size=(20_000, 12)))
    y = rng.integers(0, 3, X.shape[0])
    model = make().fit(X, y)
    bad = X.copy()
    bad[13_337, 5] = value
    bad[17_001, 2] = np.nan
    with pytest.raises(ValueError, match=r"row 13337, column 5"):
        model.predict_proba(bad)


@pytest.mark.parametrize("shift", [0.0, 1e6])
def test_banded_qda_products_equal_solves_and_the_density(shift):
    rng = np.random.default_rng(7)
    n, d, k = 3000, 70, 3
    y = rng.integers(0, k, n)
    X = rng.normal(size=(n, d)) + rng.normal(size=(k, d))[y] + shift
    model = nb.QuadraticDiscriminantAnalysis(reg_param=0.05).fit(X, y)
    assert model._use_product and len(model._bands) == 2
    product = model.joint_log_likelihood(X)
    model._use_product = False
    solved = model.joint_log_likelihood(X)
    np.testing.assert_allclose(product, solved, rtol=1e-12, atol=1e-12)
    if shift == 0.0:
        dens = stats.multivariate_normal(model.means_[1], model.covariance_[1]).logpdf(X)
        expected = dens + np.log(model.priors_[1])
        np.testing.assert_allclose(
            product[:, 1], expected, rtol=1e-10, atol=1e-10 * np.abs(expected).max()
        )
