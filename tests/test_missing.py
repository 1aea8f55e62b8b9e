"""missing= in every model: error (the default), ignore (naive Bayes) and drop."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbcli.models import (
    MODELS,
    BernoulliNB,
    ComplementNB,
    GaussianNB,
    LinearDiscriminantAnalysis,
    MultinomialNB,
    QuadraticDiscriminantAnalysis,
)
from nbcli.models._validation import DataValueError
from tests.declared import declared_params, fittable, takes_counts

# Run again under other BLAS kernels by .ci/run.
pytestmark = pytest.mark.numerical

NAN = np.nan


def _table(seed=0, n=60, d=4, rate=0.15, counts=False):
    rng = np.random.default_rng(seed)
    y = np.repeat(np.array(["a", "b", "c"]), n // 3)
    X = rng.normal(size=(n, d)) + np.repeat(np.arange(3), n // 3)[:, None] * 1.5
    if counts:
        X = np.round(np.abs(X) * 3)
    holes = rng.random(X.shape) < rate
    holes[:3] = False  # every class and feature keeps observed cells
    Xm = X.copy()
    Xm[holes] = NAN
    return Xm, y


def _posterior(scores):
    scores = np.asarray(scores)
    p = np.exp(scores - scores.max())
    return p / p.sum()


def test_every_model_refuses_nan_by_default_and_says_so_in_its_tags():
    from sklearn.utils import get_tags

    X = np.array([[0.0, 1.0], [1.0, NAN], [1.0, 1.0], [0.0, 0.0]])
    y = np.array([0, 0, 1, 1])
    for name, cls in MODELS.items():
        assert cls().missing == "error"
        assert get_tags(cls()).input_tags.allow_nan is False, name
        assert get_tags(cls(missing="drop")).input_tags.allow_nan is True, name
        with pytest.raises(DataValueError, match="NaN at row 1, column 1"):
            cls().fit(X, y)


def test_lda_and_qda_cannot_leave_a_cell_out():
    for cls in (LinearDiscriminantAnalysis, QuadraticDiscriminantAnalysis):
        with pytest.raises(ValueError, match="missing must be one of 'error', 'drop'"):
            cls(missing="ignore").fit([[0.0], [1.0], [2.0], [3.0]], [0, 0, 1, 1])


def test_infinity_is_never_missing():
    X = np.array([[0.0, 1.0], [1.0, np.inf], [1.0, 1.0], [0.0, 0.5]])
    for cls in (GaussianNB, LinearDiscriminantAnalysis):
        with pytest.raises(DataValueError, match="infinity at row 1, column 1"):
            cls(missing="drop").fit(X, [0, 0, 1, 1])
    finite = np.nan_to_num(X, posinf=2.0)
    for model in (
        GaussianNB(missing="ignore"),
        BernoulliNB(missing="ignore", binarize=0.5),  # infinity would binarise to 1
        MultinomialNB(missing="ignore"),
        ComplementNB(missing="ignore"),
    ):
        model.fit(finite, [0, 0, 1, 1])
        with pytest.raises(DataValueError, match="infinity at row 1, column 1"):
            model.predict_proba(np.vstack([X[:1], [[NAN, 1.0]], X[1:]])[[0, 2, 1, 3]])


def test_gaussian_ignore_is_the_formula_over_observed_cells():
    X, y = _table(seed=1)
    Q = np.array([[0.5, NAN, 2.0, NAN], [NAN, NAN, NAN, NAN], [3.0, 1.0, NAN, 0.0]])
    model = GaussianNB(missing="ignore", var_smoothing=1e-3).fit(X, y)
    eps = 1e-3 * max(np.nanvar(X[:, j]) for j in range(X.shape[1]))
    for q, got in zip(Q, model.predict_proba(Q)):
        scores = []
        for c in model.classes_:
            rows = X[y == c]
            s = np.log(np.mean(y == c))
            for j in np.flatnonzero(~np.isnan(q)):
                v = rows[~np.isnan(rows[:, j]), j]
                var = np.var(v) + eps
                s += -0.5 * np.log(2 * np.pi * var) - (q[j] - v.mean()) ** 2 / (2 * var)
            scores.append(s)
        np.testing.assert_allclose(got, _posterior(scores), rtol=0, atol=1e-12)
    # All cells missing: the prior alone.
    np.testing.assert_allclose(model.predict_proba(Q[1:2])[0], [1 / 3] * 3, atol=1e-15)


def test_gaussian_ignore_without_missing_cells_equals_the_default():
    X, y = _table(seed=2, rate=0.0)
    np.testing.assert_allclose(
        GaussianNB(missing="ignore").fit(X, y).predict_proba(X),
        GaussianNB().fit(X, y).predict_proba(X),
        rtol=0,
        atol=1e-12,
    )


def test_bernoulli_ignore_counts_observed_rows_in_the_denominator():
    X, y = _table(seed=3)
    X = np.where(np.isnan(X), NAN, (X > 1).astype(float))
    Q = np.array([[1.0, NAN, 0.0, NAN], [NAN, 0.0, 1.0, 1.0]])
    model = BernoulliNB(missing="ignore", alpha=0.5).fit(X, y)
    for q, got in zip(Q, model.predict_proba(Q)):
        scores = []
        for c in model.classes_:
            rows = X[y == c]
            s = np.log(np.mean(y == c))
            for j in np.flatnonzero(~np.isnan(q)):
                v = rows[~np.isnan(rows[:, j]), j]
                p = (v.sum() + 0.5) / (len(v) + 1.0)
                s += np.log(p) if q[j] == 1 else np.log(1 - p)
            scores.append(s)
        np.testing.assert_allclose(got, _posterior(scores), rtol=0, atol=1e-12)


def test_bernoulli_binarize_keeps_missing_cells_missing():
    X, y = _table(seed=4)
    a = BernoulliNB(missing="ignore", binarize=1.0).fit(X, y)
    binary = np.where(np.isnan(X), NAN, (X > 1.0).astype(float))
    b = BernoulliNB(missing="ignore").fit(binary, y)
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(binary), rtol=0, atol=1e-15)
    assert (a.stats_.observed_count < a.stats_.class_count[:, None]).any()


@pytest.mark.parametrize("cls", [MultinomialNB, ComplementNB])
def test_count_models_count_a_missing_cell_as_contributing_nothing(cls):
    X, y = _table(seed=5, counts=True)
    a = cls(missing="ignore").fit(X, y)
    b = cls().fit(np.nan_to_num(X, nan=0.0), y)
    np.testing.assert_array_equal(a.feature_count_, b.feature_count_)
    np.testing.assert_allclose(
        a.predict_proba(X), b.predict_proba(np.nan_to_num(X)), rtol=0, atol=1e-15
    )


@pytest.mark.parametrize("name", ["gaussian", "lda", "qda", "multinomial", "categorical"])
def test_drop_skips_rows_at_fit_counts_them_and_leaves_them_unscored(name):
    X, y = _table(seed=6, n=90, counts=takes_counts(MODELS[name]))
    params = declared_params(MODELS[name], X.shape[1], reg_param=0.1)
    complete = ~np.isnan(X).any(axis=1)
    model = MODELS[name](missing="drop", **params).fit(X, y)
    assert model.n_dropped_ == int((~complete).sum()) > 0
    reference = MODELS[name](**params).fit(X[complete], y[complete])
    p = model.predict_proba(X)
    assert np.isnan(p[~complete]).all()
    np.testing.assert_allclose(p[complete], reference.predict_proba(X[complete]), atol=1e-15)
    labels = model.predict(X)
    assert labels.dtype == object and all(v is None for v in labels[~complete])
    assert list(labels[complete]) == list(reference.predict(X[complete]))
    # Without missing cells, labels keep their type.
    assert model.predict(X[complete]).dtype == reference.predict(X[complete]).dtype


# Model, settings, and a shift of the rows: a large mean against the spread,
# so that moments must merge exactly (not for LDA and QDA, whose posteriors
# from covariances about a far mean are not equal to 1e-12).
CHUNKED = [
    ("gaussian", {"missing": "ignore"}, 1e6),
    ("gaussian", {"missing": "ignore", "var_smoothing_scale": "feature"}, 1e6),
    ("bernoulli", {"missing": "ignore", "binarize": 1e6 + 1.0}, 1e6),
    ("multinomial", {"missing": "ignore"}, 0.0),
    ("complement", {"missing": "ignore", "norm": True}, 0.0),
    ("categorical", {"missing": "ignore"}, 0.0),
    ("lda", {"missing": "drop"}, 0.0),
    ("qda", {"missing": "drop"}, 0.0),
]


@pytest.mark.parametrize("name, params, shift", CHUNKED)
@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n_cuts=st.integers(1, 6))
def test_chunked_fit_with_missing_cells_equals_one_fit(name, params, shift, seed, n_cuts):
    X, y = _table(seed=seed % 1000, n=90, counts=takes_counts(MODELS[name]))
    X += shift
    whole = MODELS[name](**params).fit(X, y)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(y))
    cuts = np.sort(rng.choice(np.arange(1, len(y)), n_cuts, replace=False))
    chunks = [(X[rows], y[rows]) for rows in np.split(order, cuts)]
    chunked = MODELS[name](**params).fit_chunks(chunks)
    for key, a in whole.stats_.arrays().items():
        b = chunked.stats_.arrays()[key]
        if key in ("shift", "offset", "gaussian_shift", "gaussian_offset"):
            continue  # where a mean is split between the two differs; the mean does not
        scale = max(1.0, np.abs(a).max())
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12 * scale, err_msg=key)
    if hasattr(whole.stats_, "mean"):
        # A mean near zero among means of order one is a difference of sums:
        # its error is absolute, on the scale of the data, not relative to itself.
        scale = max(1.0, np.abs(whole.stats_.mean).max())
        np.testing.assert_allclose(
            chunked.stats_.mean, whole.stats_.mean, rtol=1e-12, atol=1e-13 * scale
        )
    assert getattr(chunked, "n_dropped_", 0) == getattr(whole, "n_dropped_", 0)
    np.testing.assert_allclose(chunked.predict_proba(X), whole.predict_proba(X), rtol=0, atol=1e-12)


def test_merge_adds_the_dropped_rows():
    X, y = _table(seed=8)
    a = GaussianNB(missing="drop").fit(X[:30], y[:30])
    b = GaussianNB(missing="drop").fit(X[30:], y[30:])
    whole = GaussianNB(missing="drop").fit(X, y)
    assert a.merge(b).n_dropped_ == whole.n_dropped_ > 0


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.sampled_from([0.0, -1.5, 2.0, 1e308, -1e308, NAN, np.inf, -np.inf]),
        min_size=6,
        max_size=6,
    ),
    st.sampled_from(["C", "F"]),
)
def test_rows_with_a_missing_cell_are_found_by_their_sums_and_only_they(cells, order):
    # Huge values overflow a row's sum and infinities of both signs make it
    # NaN: such rows are looked at closely and not taken as missing.
    from nbcli.models._missing import all_finite, incomplete_rows

    X = np.asarray(np.array(cells).reshape(3, 2), order=order)
    np.testing.assert_array_equal(incomplete_rows(X), np.isnan(X).any(axis=1))
    if all_finite(X):
        assert np.isfinite(X).all()


def test_finite_answer_kept_only_within_one_validation(monkeypatch):
    """A training chunk is summed for finiteness once, however many checks
    ask; an array changed after the validation is looked at again."""
    from nbcli.models import _missing

    sums = []
    real = np.add.reduce

    class CountingAdd:
        def reduce(self, a, axis=None, **kw):
            if axis is None:
                sums.append(a.shape)
            return real(a, axis=axis, **kw)

    monkeypatch.setattr(_missing.np, "add", CountingAdd(), raising=True)
    X = np.arange(12.0).reshape(6, 2)
    with _missing.checks_of_one_array():
        _missing.check_no_infinity(X)
        assert not _missing.incomplete_rows(X).any()
    assert len(sums) == 1
    X[2, 1] = np.nan
    assert _missing.incomplete_rows(X).tolist() == [False, False, True, False, False, False]
    with _missing.checks_of_one_array():
        assert not _missing.all_finite(X)
        other = X.copy()
        other[2, 1] = 0.0
        assert _missing.all_finite(other)
    assert len(sums) == 4
    # A model's validation inside a workflow's block shares the workflow's answer.
    with _missing.checks_of_one_array():
        _missing.all_finite(other)
        with _missing.checks_of_one_array():
            _missing.check_no_infinity(other)
    assert len(sums) == 5


def test_pandas_missing_values_are_missing_cells_in_every_model():
    # A nullable column (Float64, as pandas reads a column with gaps into it
    # under dtype_backend) holds pd.NA, not NaN: it is read as a missing cell.
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(3)
    y = np.repeat(np.array(["a", "b", "c"]), 20)
    base = rng.normal(size=(60, 3)) + np.repeat(np.arange(3), 20)[:, None]
    for name, cls in MODELS.items():
        X, params = fittable(cls, base)
        X[[5, 30], [1, 2]] = NAN
        plain = pd.DataFrame(X, columns=["p", "q", "r"])
        nullable = plain.astype("Float64")
        assert nullable.iloc[5, 1] is pd.NA, name
        a = cls(missing="drop", **params).fit(nullable, y)
        b = cls(missing="drop", **params).fit(plain, y)
        assert a.n_dropped_ == b.n_dropped_ == 2, name
        pa, pb = a.predict_proba(nullable), b.predict_proba(plain)
        assert np.isnan(pa[[5, 30]]).all(), name
        np.testing.assert_allclose(pa, pb, rtol=0, atol=1e-15, err_msg=name)
        with pytest.raises(DataValueError, match="NaN at row 5, column 1"):
            cls(**params).fit(nullable, y)
