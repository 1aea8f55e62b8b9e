"""MixedNB's Gaussian columns, scored by two products, against the density computed directly."""

from __future__ import annotations

import numpy as np
import pytest

from nbcli.models import GaussianNB, MixedNB
from tests.conftest import posterior_tolerance

pytestmark = pytest.mark.numerical

EPS = np.finfo(np.float64).eps


def _direct(model, X):
    """``log prior + sum_j log N(x_j; theta, var)``, missing cells left out, (n_classes, n_rows)."""
    lay = model._layout
    Xg = X[:, lay.gaussian]
    out = np.repeat(model.class_log_prior_[:, None], X.shape[0], axis=1)
    for k in range(out.shape[0]):
        terms = -0.5 * (
            np.log(2 * np.pi * model.var_[k]) + (Xg - model.theta_[k]) ** 2 / model.var_[k]
        )
        out[k] += np.where(np.isnan(terms), 0.0, terms).sum(axis=1)
    return out


def _data(seed, centre, spread, n=2000, d=4, k=3, apart=3.0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    X = centre + spread * (rng.normal(size=(n, d)) + apart * y[:, None])
    return X, y


@pytest.mark.parametrize(
    "centre, spread, apart",
    [(0.0, 1.0, 3.0), (1e6, 1.0, 3.0), (1e9, 1e-3, 3.0), (-5.0, 1e4, 3.0), (0.0, 1.0, 1e5)],
    ids=["plain", "far", "far-and-tight", "wide", "classes-far-apart"],
)
@pytest.mark.parametrize("with_missing", [False, True])
def test_mixed_gaussian_scores_equal_the_density(centre, spread, apart, with_missing):
    X, y = _data(1, centre, spread, apart=apart)
    if with_missing:
        X[::7, 1] = np.nan
        X[::11, 3] = np.nan
    model = MixedNB(missing="ignore" if with_missing else "error").fit(X, y)
    got = model.joint_log_likelihood_block(X)
    want = _direct(model, X)
    # A class score sums d terms, each known to a few eps of its size; and
    # x - theta itself is known to eps (|x| + |theta|) only, which moves a
    # term by |x - theta| / var times that (far from zero, the larger part).
    assert np.all(np.abs(got - want) <= _tolerance(model, X, want))


def _tolerance(model, X, jll):
    Xg = X[:, model._layout.gaussian]
    out = np.empty_like(jll)
    for k in range(jll.shape[0]):
        theta, var = model.theta_[k], model.var_[k]
        moved = np.abs(Xg - theta) / var * EPS * (np.abs(Xg) + np.abs(theta))
        out[k] = 4 * np.nansum(moved, axis=1)
    return out + 8 * Xg.shape[1] * EPS * np.abs(jll).max(axis=0)


def test_mixed_on_gaussian_columns_gives_gaussian_nb_posteriors():
    X, y = _data(2, 1e6, 1.0)
    mixed = MixedNB(var_smoothing_scale="global").fit(X, y)  # as GaussianNB
    gaussian = GaussianNB().fit(X, y)
    p, q = mixed.predict_proba(X), gaussian.predict_proba(X)
    assert np.mean((p > 1e-3) & (p < 1 - 1e-3)) > 0.01  # not all saturated
    assert np.all(np.abs(p - q) <= posterior_tolerance(gaussian, X, p, q))
