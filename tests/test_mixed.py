"""MixedNB: the documented formula, agreement with the single-type models, chunks, missing cells."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbcli.models import CategoricalNB, GaussianNB, MixedNB
from nbcli.models._validation import DataValueError

# Run again under other BLAS kernels by .ci/run.
pytestmark = pytest.mark.numerical

NAN = np.nan

# A small table: two Gaussian columns, one categorical (codes 0..2), one
# Bernoulli, two multinomial; missing cells in every type.
TABLE = np.array(
    [
        [1.0, 10.0, 0, 1, 3, 0],
        [2.0, NAN, 1, 0, 1, 2],
        [1.5, 12.0, NAN, 1, 0, 1],
        [NAN, 11.0, 0, NAN, 2, 2],
        [4.0, 30.0, 2, 0, 0, NAN],
        [5.5, 28.0, 2, 0, 1, 4],
        [5.0, 35.0, 1, 1, NAN, 3],
        [4.5, NAN, NAN, 0, 2, 0],
        [6.0, 31.0, 2, NAN, 1, 1],
    ]
)
LABELS = np.array(["p", "p", "p", "p", "q", "q", "q", "q", "q"])
TYPES = ["gaussian", "gaussian", "categorical", "bernoulli", "multinomial", "multinomial"]
QUERIES = np.array(
    [
        [3.0, 20.0, 1, 1, 2, 1],
        [NAN, 20.0, 2, NAN, 0, 5],
        [1.2, NAN, NAN, 0, NAN, NAN],
        [NAN, NAN, NAN, NAN, NAN, NAN],
        [8.0, 5.0, 0, 1, 7, 0],
    ]
)


def _by_hand(X, y, queries, *, var_smoothing, alpha, scale="global"):
    """Posteriors from the formula in MixedNB's docstring, column by column."""
    classes = sorted(set(y))
    obs = {j: ~np.isnan(X[:, j]) for j in range(X.shape[1])}
    gauss_var = [np.var(X[obs[j], j]) for j in (0, 1)]
    if scale == "global":
        eps = [var_smoothing * max(gauss_var)] * 2
    else:
        eps = [var_smoothing * v for v in gauss_var]
    K = int(np.nanmax(X[:, 2])) + 1
    out = []
    for x in queries:
        scores = []
        for c in classes:
            rows = y == c
            s = np.log(rows.sum() / len(y))
            for j in (0, 1):
                if np.isnan(x[j]):
                    continue
                v = X[rows & obs[j], j]
                mean, var = v.mean(), np.var(v) + eps[j]
                s += -0.5 * np.log(2 * np.pi * var) - (x[j] - mean) ** 2 / (2 * var)
            if not np.isnan(x[2]):
                v = X[rows & obs[2], 2]
                s += np.log(((v == x[2]).sum() + alpha) / (len(v) + alpha * K))
            if not np.isnan(x[3]):
                v = X[rows & obs[3], 3]
                p = (v.sum() + alpha) / (len(v) + 2 * alpha)
                s += np.log(p) if x[3] == 1 else np.log(1 - p)
            sums = [np.nansum(X[rows, j]) for j in (4, 5)]
            for j, n_j in zip((4, 5), sums):
                if not np.isnan(x[j]):
                    s += x[j] * np.log((n_j + alpha) / (sum(sums) + 2 * alpha))
            scores.append(s)
        scores = np.array(scores)
        p = np.exp(scores - scores.max())
        out.append(p / p.sum())
    return np.array(out)


@pytest.mark.parametrize("scale", ["global", "feature"])
@pytest.mark.parametrize("var_smoothing, alpha", [(1e-9, 1.0), (0.05, 0.5)])
def test_posteriors_equal_the_formula_computed_by_hand(scale, var_smoothing, alpha):
    model = MixedNB(
        column_types=TYPES,
        var_smoothing=var_smoothing,
        var_smoothing_scale=scale,
        alpha=alpha,
        missing="ignore",
    ).fit(TABLE, LABELS)
    expected = _by_hand(
        TABLE, LABELS, QUERIES, var_smoothing=var_smoothing, alpha=alpha, scale=scale
    )
    np.testing.assert_allclose(model.predict_proba(QUERIES), expected, rtol=0, atol=1e-10)
    # The all-missing row is the prior alone.
    np.testing.assert_allclose(model.predict_proba(QUERIES[3:4]), [[4 / 9, 5 / 9]], atol=1e-15)
    assert model.column_types_ == TYPES


def test_only_gaussian_columns_equal_gaussian_nb():
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    for vs in (1e-9, 1e-3):
        # Equal under the global scale (mixed's default is each column's own).
        ours = MixedNB(var_smoothing=vs, var_smoothing_scale="global").fit(X[:400], y[:400])
        ref = GaussianNB(var_smoothing=vs).fit(X[:400], y[:400])
        np.testing.assert_allclose(
            ours.predict_proba(X[400:]), ref.predict_proba(X[400:]), rtol=0, atol=1e-10
        )
        np.testing.assert_allclose(ours.var_, ref.var_, rtol=1e-12)
        np.testing.assert_allclose(
            ours.theta_, ref.theta_, rtol=1e-12, atol=1e-12 * np.abs(ref.theta_).max()
        )


def test_only_categorical_columns_equal_categorical_nb():
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    Xte = np.minimum(X[1000:], X[:1000].max(axis=0))
    for params in ({}, {"alpha": 0.2, "min_categories": 18}):
        ours = MixedNB(column_types="categorical", **params).fit(X[:1000], y[:1000])
        ref = CategoricalNB(**params).fit(X[:1000], y[:1000])
        np.testing.assert_allclose(ours.predict_proba(Xte), ref.predict_proba(Xte), atol=1e-12)
        assert np.array_equal(ours.n_categories_, ref.n_categories_)


def test_chunks_and_merge_with_missing_cells_equal_one_fit():
    rng = np.random.default_rng(4)
    n = 400
    y = rng.integers(0, 3, n)
    X = np.column_stack(
        [
            rng.normal(y * 2.0, 1.0) + 1e6,  # a large mean against the spread
            rng.normal(0, 1 + y, n),
            rng.integers(0, 3 + y, n),
            (rng.random(n) < 0.2 + 0.3 * y).astype(float),
            rng.poisson(1 + y, n),
            rng.poisson(3, n),
        ]
    ).astype(float)
    X[rng.random(X.shape) < 0.1] = np.nan
    X[:5, 2] = [0, 0, 1, 0, 1]  # the first chunk shows only small codes
    params = {"column_types": TYPES, "missing": "ignore", "var_smoothing": 1e-6}
    whole = MixedNB(**params).fit(X, y)
    bounds = [0, 5, 6, 150, 151, n]
    chunked = MixedNB(**params).fit_chunks((X[a:b], y[a:b]) for a, b in zip(bounds, bounds[1:]))
    for other in (
        chunked,
        MixedNB(**params).fit(X[:200], y[:200]).merge(MixedNB(**params).fit(X[200:], y[200:])),
    ):
        np.testing.assert_allclose(
            other.predict_proba(X), whole.predict_proba(X), rtol=0, atol=1e-12
        )
        np.testing.assert_allclose(other.var_, whole.var_, rtol=1e-12)
    stepwise = MixedNB(**params)
    for a, b in zip(bounds, bounds[1:]):
        stepwise.partial_fit(X[a:b], y[a:b], classes=[0, 1, 2])
    np.testing.assert_allclose(
        stepwise.predict_proba(X), whole.predict_proba(X), rtol=0, atol=1e-12
    )


def test_feature_scale_smoothing_is_invariant_to_rescaling_a_column():
    from sklearn.datasets import load_breast_cancer

    X, y = load_breast_cancer(return_X_y=True)
    scaled = X.copy()
    scaled[:, 23] *= 1000.0  # worst_area in other units
    for scale in ("feature", "global"):
        a = MixedNB(var_smoothing_scale=scale).fit(X, y)
        b = MixedNB(var_smoothing_scale=scale).fit(scaled, y)
        changed = (a.predict(X) != b.predict(scaled)).sum()
        if scale == "feature":
            assert changed == 0
            np.testing.assert_allclose(
                a.predict_proba(X), b.predict_proba(scaled), rtol=0, atol=1e-12
            )
        else:  # scikit-learn's convention: epsilon follows the largest variance
            assert changed > 10


def test_column_types_by_name_and_by_index():
    df = pd.DataFrame(TABLE, columns=list("abcdef"))
    by_name = MixedNB(
        column_types={"c": "categorical", "d": "bernoulli", "e": "multinomial", "f": "multinomial"},
        missing="ignore",
    ).fit(df, LABELS)
    by_index = MixedNB(
        column_types={2: "categorical", 3: "bernoulli", 4: "multinomial", 5: "multinomial"},
        missing="ignore",
    ).fit(TABLE, LABELS)
    assert by_name.column_types_ == TYPES == by_index.column_types_
    np.testing.assert_allclose(
        by_name.predict_proba(pd.DataFrame(QUERIES, columns=list("abcdef"))),
        by_index.predict_proba(QUERIES),
        atol=1e-15,
    )
    with pytest.raises(ValueError, match="column_types names column 'z': no such column"):
        MixedNB(column_types={"z": "categorical"}).fit(df.fillna(0), LABELS)
    with pytest.raises(ValueError, match="column_types has 2 entries but X has 6 features"):
        MixedNB(column_types=["gaussian", "categorical"]).fit(np.nan_to_num(TABLE), LABELS)
    with pytest.raises(
        ValueError, match=r"column_types must be a column type \(gaussian, categorical"
    ):
        MixedNB(column_types=["gaussian", "beta"]).fit(np.nan_to_num(TABLE[:, :2]), LABELS)


def test_values_a_column_type_cannot_take_are_errors_naming_the_cell():
    X = np.nan_to_num(TABLE)
    cases = [
        (3, 2.0, "value 2 is not 0 or 1: Bernoulli columns take binary values; found at row 4"),
        (4, -1.0, "value -1 is negative: multinomial columns take non-negative counts"),
        (2, 1.5, "value 1.5 is not a category code"),
    ]
    for column, value, text in cases:
        bad = X.copy()
        bad[4, column] = value
        with pytest.raises(DataValueError, match=text) as err:
            MixedNB(column_types=TYPES).fit(bad, LABELS)
        assert (err.value.row, err.value.column) == (4, column)
        model = MixedNB(column_types=TYPES).fit(X, LABELS)
        with pytest.raises(DataValueError, match=text.split("; found")[0]):
            model.predict(bad)
    model = MixedNB(column_types=TYPES).fit(X, LABELS)
    with pytest.raises(DataValueError, match="unseen category 3 at row 0, column 2"):
        model.predict([[0, 0, 3, 0, 0, 0]])
    ignoring = MixedNB(column_types=TYPES, unseen="ignore").fit(X, LABELS)
    np.testing.assert_allclose(
        ignoring.predict_proba([[0, 0, 3, 0, 0, 0]]),
        MixedNB(column_types=TYPES, missing="ignore")
        .fit(X, LABELS)
        .predict_proba([[0, 0, NAN, 0, 0, 0]]),
        atol=1e-15,
    )
    with pytest.raises(DataValueError, match="NaN at row 1, column 1"):
        MixedNB(column_types=TYPES).fit(TABLE, LABELS)


def test_gaussian_columns_need_observed_values_in_every_class():
    X = np.array([[1.0, 0], [2.0, 1], [NAN, 0], [NAN, 1]])
    with pytest.raises(ValueError, match="Gaussian column 0 has no observed value in class 'q'"):
        MixedNB(column_types=["gaussian", "categorical"], missing="ignore").fit(
            X, ["p", "p", "q", "q"]
        )
    with pytest.raises(ValueError, match="every Gaussian column is constant in the training"):
        MixedNB(var_smoothing_scale="feature").fit([[1.0, 2.0], [1.0, 2.0]], [0, 1])


def test_penguins_as_shipped_fit_and_every_row_is_scored():
    palmerpenguins = pytest.importorskip("palmerpenguins")
    df = palmerpenguins.load_penguins().drop(columns="year")
    y = df.pop("species").to_numpy()
    X = df.copy()
    for col in ("island", "sex"):
        codes = X[col].astype("category").cat.codes.astype(float)
        X[col] = codes.where(codes >= 0)  # pandas' missing code -1 becomes NaN
    X = X.astype(float)
    assert np.isnan(X.to_numpy()).any(axis=1).sum() == 11
    model = MixedNB(
        column_types={"island": "categorical", "sex": "categorical"}, missing="ignore"
    ).fit(X, y)
    proba = model.predict_proba(X)
    assert np.isfinite(proba).all() and proba.shape == (344, 3)
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
    assert (model.predict(X) == y).mean() > 0.9


# -- properties ----------------------------------------------------------------------------

_TYPES = st.sampled_from(["gaussian", "categorical", "bernoulli", "multinomial"])


def _random_table(seed, types, n_rows, n_classes, missing_rate):
    rng = np.random.default_rng(seed)
    y = np.arange(n_rows) % n_classes
    cols = []
    for t in types:
        if t == "gaussian":
            cols.append(rng.normal(y, 1.0 + y))
        elif t == "categorical":
            cols.append(rng.integers(0, 4, n_rows).astype(float))
        elif t == "bernoulli":
            cols.append((rng.random(n_rows) < 0.5).astype(float))
        else:
            cols.append(rng.poisson(2.0, n_rows).astype(float))
    X = np.column_stack(cols)
    hole = rng.random(X.shape) < missing_rate
    hole[: 2 * n_classes] = False  # every class keeps two complete rows
    X[hole] = np.nan
    return X, y


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    types=st.lists(_TYPES, min_size=1, max_size=5),
    n_rows=st.integers(6, 40),
    n_classes=st.integers(2, 3),
    missing_rate=st.sampled_from([0.0, 0.2]),
)
def test_posterior_rows_sum_to_one(seed, types, n_rows, n_classes, missing_rate):
    X, y = _random_table(seed, types, n_rows, n_classes, missing_rate)
    model = MixedNB(column_types=types, missing="ignore", unseen="ignore").fit(X, y)
    proba = model.predict_proba(X)
    assert np.isfinite(proba).all()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.exp(model.predict_log_proba(X)), proba, rtol=1e-9, atol=1e-300)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    types=st.lists(
        st.sampled_from(["gaussian", "categorical", "bernoulli"]), min_size=2, max_size=5
    ),
    n_rows=st.integers(6, 40),
    n_classes=st.integers(2, 3),
    data=st.data(),
)
def test_a_missing_cell_gives_the_posterior_of_the_model_without_that_column(
    seed, types, n_rows, n_classes, data
):
    # Multinomial columns share one normalisation and global var_smoothing
    # one epsilon, so only per-column parameters make the two models equal.
    X, y = _random_table(seed, types, n_rows, n_classes, 0.2)
    j = data.draw(st.integers(0, len(types) - 1))
    row = data.draw(st.integers(0, n_rows - 1))
    params = {"missing": "ignore", "var_smoothing_scale": "feature", "var_smoothing": 1e-3}
    full = MixedNB(column_types=types, **params).fit(X, y)
    kept = [i for i in range(len(types)) if i != j]
    without = MixedNB(column_types=[types[i] for i in kept], **params).fit(X[:, kept], y)
    query = X[row : row + 1].copy()
    query[0, j] = np.nan
    np.testing.assert_allclose(
        full.predict_proba(query), without.predict_proba(query[:, kept]), rtol=0, atol=1e-12
    )


def _rebuilt(model):
    """The model rebuilt from its statistics' arrays, as a model file would."""
    stats = type(model.stats_)(**model.stats_.arrays())
    return type(model).from_stats(stats, model.classes_, model.get_params(), model.n_features_in_)


def test_statistics_arrays_rebuild_every_new_model():
    from nbcli.models import ComplementNB

    X = np.nan_to_num(TABLE)
    cases = [
        (MixedNB(column_types=TYPES, missing="ignore"), TABLE),
        (CategoricalNB(missing="ignore", min_categories=4), TABLE[:, 2:4]),
        (ComplementNB(norm=True), X[:, 2:]),
    ]
    for model, data in cases:
        model.fit(data, LABELS)
        again = _rebuilt(model)
        np.testing.assert_array_equal(again.predict_proba(data), model.predict_proba(data))
        assert all(a.dtype == np.float64 for a in model.stats_.arrays().values())


def test_sample_weights_equal_repeated_rows_and_relabel_equals_a_fit_with_new_labels():
    w = np.array([1, 2, 0, 3, 1, 1, 2, 1, 4], dtype=float)
    rep = np.repeat(np.arange(len(w)), w.astype(int))
    params = {"column_types": TYPES, "missing": "ignore"}
    weighted = MixedNB(**params).fit(TABLE, LABELS, sample_weight=w)
    repeated = MixedNB(**params).fit(TABLE[rep], LABELS[rep])
    np.testing.assert_allclose(
        weighted.predict_proba(QUERIES), repeated.predict_proba(QUERIES), rtol=0, atol=1e-12
    )
    relabelled = MixedNB(**params).fit(TABLE, LABELS).relabel(np.array(["z", "a"]))
    direct = MixedNB(**params).fit(TABLE, np.where(LABELS == "p", "z", "a"))
    assert list(relabelled.classes_) == ["a", "z"]
    np.testing.assert_allclose(
        relabelled.predict_proba(QUERIES), direct.predict_proba(QUERIES), rtol=0, atol=1e-12
    )
