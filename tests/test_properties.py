"""Invariants of every model type, checked on generated data (hypothesis)."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nbcli.models import MODELS

# Run again under other BLAS kernels by .ci/run.
pytestmark = pytest.mark.numerical

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
PARAMS = {
    "qda": {"reg_param": 0.05},
    "bernoulli": {"binarize": 0.0},
    "categorical": {"unseen": "ignore"},
}
#: Models whose features are non-negative counts or codes.
COUNTS = ("multinomial", "complement", "categorical")


@st.composite
def datasets(draw, model):
    n_classes = draw(st.integers(2, 4))
    d = draw(st.integers(1, 5))
    per_class = draw(st.integers(d + 2, 12))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    centres = rng.normal(scale=3.0, size=(n_classes, d))
    X = np.concatenate([rng.normal(size=(per_class, d)) + c for c in centres])
    if model in COUNTS:
        X = np.abs(np.round(X * 2))
    y = np.repeat(np.arange(n_classes), per_class)
    return X, y, rng


def _fit(name, X, y):
    return MODELS[name](**PARAMS.get(name, {})).fit(X, y)


@pytest.mark.parametrize("name", list(MODELS))
@SETTINGS
@given(data=st.data())
def test_probabilities_are_finite_and_sum_to_one(name, data):
    X, y, rng = data.draw(datasets(name))
    model = _fit(name, X, y)
    query = X + rng.normal(scale=5.0, size=X.shape)
    if name in COUNTS:
        query = np.abs(np.round(query))
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
    if name in ("gaussian", "lda", "qda", "mixed"):
        np.testing.assert_allclose(b.predict_proba(X), a.predict_proba(X), rtol=1e-9, atol=1e-12)
    elif name == "categorical":
        for count_b, count_a in zip(b.category_count_, a.category_count_):
            np.testing.assert_allclose(count_b, 2 * count_a)
    else:  # smoothing weighs less against doubled counts; relative frequencies stay
        np.testing.assert_allclose(b.feature_count_, 2 * a.feature_count_)


@pytest.mark.parametrize("name", ["gaussian", "lda", "qda"])
@SETTINGS
@given(data=st.data(), scale=st.sampled_from([1e-6, 0.37, 8.0, 1e6]))
def test_scaling_all_features_keeps_predictions(name, data, scale):
    X, y, _ = data.draw(datasets(name))
    params = {} if name != "qda" else {}  # reg_param is in feature units; leave it at 0
    a = MODELS[name](**params).fit(X, y)
    b = MODELS[name](**params).fit(X * scale, y)
    np.testing.assert_array_equal(b.predict(X * scale), a.predict(X))
    np.testing.assert_allclose(
        b.predict_proba(X * scale), a.predict_proba(X), rtol=1e-7, atol=1e-10
    )
