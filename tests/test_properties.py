"""Invariants of every model type, checked on generated data (hypothesis)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nbcli.models import MODELS
from tests.declared import (
    as_declared,
    declared_params,
    is_numeric_only,
    smooths_with_counts,
    stats_arrays,
)

# Run again under other BLAS kernels by .ci/run.
pytestmark = pytest.mark.numerical

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
#: Settings for the generated data, where a model declares them: a little
#: regularisation for covariances of few rows, and query codes unseen in
#: training left out rather than refused.
WANTED = {"reg_param": 0.05, "unseen": "ignore"}


@st.composite
def datasets(draw, model):
    n_classes = draw(st.integers(2, 4))
    d = draw(st.integers(1, 5))
    per_class = draw(st.integers(d + 2, 12))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=3.0, size=(n_classes, d))
    X = as_declared(
        MODELS[model], np.concatenate([rng.normal(size=(per_class, d)) + c for c in centres])
    )
    y = np.repeat(np.arange(n_classes), per_class)
    return X, y, rng


def _fit(name, X, y):
    cls = MODELS[name]
    return cls(**declared_params(cls, X.shape[1], **WANTED)).fit(X, y)


@pytest.mark.parametrize("name", list(MODELS))
@SETTINGS
@given(data=st.data())
def test_probabilities_are_finite_and_sum_to_one(name, data):
    X, y, rng = data.draw(datasets(name))
    model = _fit(name, X, y)
    query = as_declared(MODELS[name], X + rng.normal(scale=5.0, size=X.shape))
    p = model.predict_proba(query)
    logp = model.predict_log_proba(query)
    assert np.all(np.isfinite(logp))
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert np.all((p >= 0) & (p <= 1))
    np.testing.assert_array_equal(model.predict(query), model.classes_[np.argmax(p, axis=1)])


@pytest.mark.parametrize("name", list(MODELS))
@SETTINGS
@given(data=st.data())
def test_row_order_does_not_matter(name, data):
    X, y, rng = data.draw(datasets(name))
    perm = rng.permutation(len(y))
    a = _fit(name, X, y)
    b = _fit(name, X[perm], y[perm])
    np.testing.assert_allclose(b.predict_proba(X), a.predict_proba(X), rtol=1e-9, atol=1e-12)
    # and each row's prediction follows the row when the query is shuffled
    np.testing.assert_allclose(
        a.predict_proba(X[perm]), a.predict_proba(X)[perm], rtol=1e-12, atol=1e-15
    )


@pytest.mark.parametrize("name", list(MODELS))
@SETTINGS
@given(data=st.data())
def test_renaming_labels_renames_predictions(name, data):
    X, y, rng = data.draw(datasets(name))
    names = np.array(["zeta", "alpha", "mu", "beta"])[: y.max() + 1]
    a = _fit(name, X, y)
    b = _fit(name, X, names[y])
    # Exact ties (e.g. one multinomial feature) go to the first class in label
    # order, which renaming may change; compare the rows without a tie.
    p = np.sort(a.predict_proba(X), axis=1)
    clear = p[:, -1] - p[:, -2] > 1e-9
    np.testing.assert_array_equal(b.predict(X)[clear], names[a.predict(X)][clear])
    # columns follow the sorted new names
    order = np.argsort(names)
    np.testing.assert_allclose(
        b.predict_proba(X), a.predict_proba(X)[:, order], rtol=1e-9, atol=1e-12
    )


@pytest.mark.parametrize("name", list(MODELS))
@SETTINGS
@given(data=st.data())
def test_duplicating_every_row_keeps_the_parameters(name, data):
    X, y, _ = data.draw(datasets(name))
    a = _fit(name, X, y)
    b = _fit(name, np.vstack([X, X]), np.concatenate([y, y]))
    for attr in ("theta_", "var_", "means_", "covariance_", "coef_", "class_prior_", "priors_"):
        if hasattr(a, attr):
            np.testing.assert_allclose(
                getattr(b, attr), getattr(a, attr), rtol=1e-9, atol=1e-12, err_msg=attr
            )
    # Every statistic is a sum over rows, so the doubled rows' statistics are
    # the statistics merged with themselves.
    doubled = stats_arrays(a.stats_.merge(a.stats_))
    for field, array in stats_arrays(b.stats_).items():
        # Summed in another order: an entry that nearly cancels (a scatter's
        # off-diagonal near 0) carries the rounding of the largest terms, so
        # the tolerance follows the array's scale, not the entry's own.
        scale = float(np.abs(doubled[field]).max()) if doubled[field].size else 0.0
        np.testing.assert_allclose(
            array, doubled[field], rtol=1e-12, atol=1e-12 * scale, err_msg=field
        )
    if not smooths_with_counts(MODELS[name]):  # a pseudo-count weighs less against doubled counts
        np.testing.assert_allclose(b.predict_proba(X), a.predict_proba(X), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", [n for n, cls in MODELS.items() if is_numeric_only(cls)])
@SETTINGS
@given(data=st.data(), scale=st.sampled_from([1e-6, 0.37, 8.0, 1e6]))
def test_scaling_all_features_keeps_predictions(name, data, scale):
    X, y, _ = data.draw(datasets(name))
    # Defaults only: a regularisation in feature units (reg_param) would not scale.
    a = MODELS[name]().fit(X, y)
    b = MODELS[name]().fit(X * scale, y)
    np.testing.assert_array_equal(b.predict(X * scale), a.predict(X))
    np.testing.assert_allclose(
        b.predict_proba(X * scale), a.predict_proba(X), rtol=1e-7, atol=1e-10
    )
