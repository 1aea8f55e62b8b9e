"""A chunk's statistics against their formulas computed directly, in both memory layouts.

The readers give column-major chunks and in-memory fits row-major arrays;
each statistic takes its own path for each, and for chunks with and without
missing cells. Tolerances: a sum of n products of values of size s rounds by
at most about n eps s^2 (Higham, Accuracy and Stability of Numerical
Algorithms, 2nd ed., eq. 3.5); the tests allow 100 times the scatter's scale
times eps on every entry.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hs

from nbcli.distinct import unique_inverse
from nbcli.models._stats import ClassMoments, ClassScatter, PooledScatter
from nbcli.models._table_stats import MixedStats, count_categories, observed_moments

pytestmark = pytest.mark.numerical

EPS = np.finfo(np.float64).eps


def _data(seed, n=3000, d=5, k=4, centre=0.0):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    X = rng.normal(size=(n, d)) * rng.uniform(0.5, 3.0, d) + 4.0 * y[:, None] + centre
    w = rng.uniform(0.0, 2.0, n)
    return X, y, w


def _direct(X, y, w, k):
    """Per class: weight, mean and centred scatter, by the textbook formulas."""
    d = X.shape[1]
    count, mean, scatter = np.zeros(k), np.zeros((k, d)), np.zeros((k, d, d))
    for c in range(k):
        rows = X[y == c]
        wc = np.ones(rows.shape[0]) if w is None else w[y == c]
        count[c] = wc.sum()
        if count[c] > 0:
            mean[c] = (wc @ rows) / count[c]
            C = rows - mean[c]
            scatter[c] = (C * wc[:, None]).T @ C
    return count, mean, scatter


def _close(a, b, scale):
    np.testing.assert_allclose(a, b, rtol=0, atol=100 * a.shape[0] * EPS * scale + 1e-300)


@pytest.mark.parametrize("order", ["F", "C"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("centre", [0.0, 1e6])
def test_lda_and_qda_chunk_statistics_equal_the_direct_formulas(order, weighted, centre):
    X, y, w = _data(1, centre=centre)
    X = np.asarray(X, order=order)
    w = w if weighted else None
    k = 5  # class 4 has no rows
    count, mean, scatter = _direct(X, y, w, k)
    scale = float(np.max(np.abs(scatter)))
    pooled = PooledScatter.from_data(X, y, w, k)
    np.testing.assert_allclose(pooled.count, count, rtol=1e-14)
    np.testing.assert_allclose(pooled.mean, mean, rtol=0, atol=1e-9 * (1 + centre) * 1e-3)
    _close(pooled.within, scatter.sum(axis=0), scale)
    per_class = ClassScatter.from_data(X, y, w, k)
    _close(per_class.scatter, scatter, scale)
    assert per_class.count[4] == 0 and not per_class.scatter[4].any()


@pytest.mark.parametrize("order", ["F", "C"])
def test_qda_higher_co_moments_equal_the_direct_formulas(order):
    X, y, w = _data(2)
    X = np.asarray(X, order=order)
    st = ClassScatter.from_data(X, y, w, 4, higher=True)
    for c in range(4):
        wc = w[y == c]
        C = X[y == c] - (wc @ X[y == c]) / wc.sum()
        third = ((C * C) * wc[:, None]).T @ C
        fourth = ((C * C) * wc[:, None]).T @ (C * C)
        _close(st.third[c], third, float(np.max(np.abs(third))))
        _close(st.fourth[c], fourth, float(np.max(np.abs(fourth))))


def test_a_zero_weight_class_adds_nothing_to_the_pooled_scatter():
    X, y, w = _data(3)
    w[y == 2] = 0.0
    count, _, scatter = _direct(X, y, w, 4)
    st = PooledScatter.from_data(np.asfortranarray(X), y, w, 4)
    assert st.count[2] == 0
    _close(st.within, scatter.sum(axis=0), float(np.max(np.abs(scatter))))


@pytest.mark.parametrize("weighted", [False, True])
def test_pooled_scatter_of_classes_far_apart_against_their_spread_keeps_its_precision(weighted):
    # Class means 1e5 apart, spread about 1: about one shift for the whole
    # chunk, sum(count * offset**2) is 1e10 times the scatter, and the
    # shifted sums would lose ten digits; each class is centred on its own.
    X, y, w = _data(5)
    X = np.asfortranarray(X + 1e5 * y[:, None])
    w = w if weighted else None
    count, mean, scatter = _direct(X, y, w, 4)
    st = PooledScatter.from_data(X, y, w, 4)
    _close(st.within, scatter.sum(axis=0), float(np.max(np.abs(scatter))))
    np.testing.assert_allclose(st.mean, mean, rtol=0, atol=100 * EPS * np.max(np.abs(mean)))


@pytest.mark.parametrize("order", ["F", "C"])
@pytest.mark.parametrize("weighted", [False, True])
def test_category_counts_of_a_complete_chunk_count_every_cell(order, weighted):
    rng = np.random.default_rng(4)
    n, d, k = 2000, 6, 3
    C = np.asarray(rng.integers(0, [2, 3, 5, 7, 1, 4], size=(n, d)).astype(float), order=order)
    y = rng.integers(0, k, n)
    w = rng.uniform(0.0, 2.0, n) if weighted else None
    counts, n_cat = count_categories(C, y, w, k)
    np.testing.assert_array_equal(n_cat, C.max(axis=0) + 1)
    ones = np.ones(n) if w is None else w
    start = 0
    for j in range(d):
        for v in range(int(n_cat[j])):
            for c in range(k):
                expected = ones[(C[:, j] == v) & (y == c)].sum()
                assert counts[c, start + v] == pytest.approx(expected, rel=1e-13, abs=1e-12)
        start += int(n_cat[j])
    # The same counts as the path for chunks with missing cells, a NaN row aside.
    C2 = np.vstack([C, np.full((1, d), np.nan)])
    masked, n2 = count_categories(C2, np.append(y, 0), None if w is None else np.append(w, 1), k)
    np.testing.assert_array_equal(n2, n_cat)
    np.testing.assert_allclose(masked, counts, rtol=1e-13)


def test_mixed_gaussian_moments_of_complete_columns_equal_the_observed_moments():
    from nbcli.models.mixed import resolve_column_types

    X, y, _ = _data(5, d=6)
    X[:, 4] = np.floor(np.abs(X[:, 4])) % 3  # a categorical column between Gaussian ones
    layout = resolve_column_types({4: "categorical"}, 6)
    F = np.asfortranarray(X)
    st = MixedStats.from_data(F, y, None, 4, layout)
    g = layout.gaussian
    count, shift, offset, m2 = observed_moments(X[:, g], y, None, 4)
    np.testing.assert_array_equal(st.gaussian_count, count)
    np.testing.assert_allclose(
        st.gaussian_shift + st.gaussian_offset, shift + offset, rtol=0, atol=1e-14 * np.abs(X).max()
    )
    np.testing.assert_allclose(st.gaussian_m2, m2, rtol=1e-12)
    moments = ClassMoments.from_data(F[:, :4], y, None, 4)
    np.testing.assert_allclose(st.gaussian_m2[:, :4], moments.m2, rtol=1e-13)


@settings(max_examples=60, deadline=None)
@given(
    hs.lists(
        hs.text(alphabet=hs.sampled_from(["a", "b", "é", "\x00", " ", "z"]), max_size=4),
        min_size=1,
        max_size=30,
    )
)
def test_text_labels_are_coded_as_numpy_sorts_python_strings(labels):
    # Fixed-width text drops trailing NULs: such labels must still come back as given.
    y = np.array(labels, dtype=object)
    uniques, inverse = unique_inverse(y)
    expected, expected_inverse = np.unique(y, return_inverse=True)
    assert uniques.dtype == object
    assert uniques.tolist() == expected.tolist()
    assert all(type(u) is str for u in uniques.tolist())
    np.testing.assert_array_equal(inverse, expected_inverse)


def test_long_text_labels_keep_their_spelling():
    y = np.array(["x" * 20, "y", "x" * 20], dtype=object)
    uniques, inverse = unique_inverse(y)
    assert uniques.tolist() == ["x" * 20, "y"] and inverse.tolist() == [0, 1, 0]
