"""Resampling plans: folds and splits partition the rows, are stratified and reproducible."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbcli import resampling
from nbcli.resampling import CALIB, TEST, TRAIN


@st.composite
def labels(draw, min_size=2):
    k = draw(st.integers(1, 6))
    n = draw(st.integers(min_size, 200))
    return np.array(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)))


def _sizes(codes, folds, n_folds):
    """Rows per (class, fold)."""
    k = codes.max() + 1
    return np.bincount(codes * n_folds + folds, minlength=k * n_folds).reshape(k, n_folds)


@settings(max_examples=200, deadline=None)
@given(labels(), st.integers(2, 12), st.integers(0, 2**32 - 1))
def test_stratified_folds_partition_and_balance(codes, n_folds, seed):
    if n_folds > codes.size:
        with pytest.raises(ValueError, match="folds"):
            resampling.stratified_folds(codes, n_folds, seed=seed)
        return
    folds = resampling.stratified_folds(codes, n_folds, seed=seed)
    assert folds.shape == codes.shape and folds.min() >= 0 and folds.max() < n_folds
    sizes = _sizes(codes, folds, n_folds)
    # Within every class, and overall, fold sizes differ by at most one.
    assert (sizes.max(axis=1) - sizes.min(axis=1) <= 1).all()
    totals = sizes.sum(axis=0)
    assert totals.max() - totals.min() <= 1 and totals.min() >= 1
    np.testing.assert_array_equal(folds, resampling.stratified_folds(codes, n_folds, seed=seed))


def test_stratified_folds_depend_on_the_seed_and_shuffle():
    codes = np.repeat([0, 1, 2], 40)
    a = resampling.stratified_folds(codes, 5, seed=1)
    b = resampling.stratified_folds(codes, 5, seed=2)
    assert (a != b).mean() > 0.5
    # Not a fixed pattern such as row i -> fold i mod 5.
    assert (a != np.arange(codes.size) % 5).any()


@settings(max_examples=50, deadline=None)
@given(labels(min_size=10), st.integers(2, 5), st.integers(1, 4), st.integers(0, 1000))
def test_repeats(codes, n_folds, n_repeats, seed):
    plan = resampling.repeated_stratified_folds(codes, n_folds, n_repeats, seed=seed)
    assert plan.shape == (n_repeats, codes.size)
    np.testing.assert_array_equal(plan[0], resampling.stratified_folds(codes, n_folds, seed=seed))
    for r in range(n_repeats):
        sizes = _sizes(codes, plan[r], n_folds)
        assert (sizes.max(axis=1) - sizes.min(axis=1) <= 1).all()
    np.testing.assert_array_equal(
        plan, resampling.repeated_stratified_folds(codes, n_folds, n_repeats, seed=seed)
    )


def test_repeats_differ():
    plan = resampling.repeated_stratified_folds(np.repeat([0, 1], 50), 10, 3, seed=0)
    assert (plan[0] != plan[1]).any() and (plan[1] != plan[2]).any()


@pytest.mark.parametrize(
    "n_folds, n_repeats, match",
    [(1, 1, "at least 2"), (2.5, 1, "integer"), (True, 1, "integer"), (3, 0, "repeats")],
)
def test_bad_fold_arguments(n_folds, n_repeats, match):
    with pytest.raises(ValueError, match=match):
        resampling.repeated_stratified_folds(np.arange(10) % 2, n_folds, n_repeats)


@st.composite
def grouped(draw):
    codes = draw(labels(min_size=4))
    n_groups = draw(st.integers(2, codes.size))
    groups = np.array(
        draw(st.lists(st.integers(0, n_groups - 1), min_size=codes.size, max_size=codes.size))
    )
    return codes, groups * 7 + 3  # keys need not be 0 .. n_groups - 1


@settings(max_examples=150, deadline=None)
@given(grouped(), st.integers(2, 6), st.integers(0, 1000))
def test_group_folds_never_split_a_group(case, n_folds, seed):
    codes, groups = case
    n_groups = np.unique(groups).size
    if n_folds > n_groups:
        with pytest.raises(ValueError, match="groups"):
            resampling.group_folds(codes, groups, n_folds, seed=seed)
        return
    folds = resampling.group_folds(codes, groups, n_folds, seed=seed)
    assert folds.shape == codes.shape
    for g in np.unique(groups):
        assert np.unique(folds[groups == g]).size == 1
    assert set(np.unique(folds)) == set(range(n_folds))  # no empty fold
    np.testing.assert_array_equal(folds, resampling.group_folds(codes, groups, n_folds, seed=seed))


@settings(max_examples=100, deadline=None)
@given(labels(min_size=12), st.integers(2, 6), st.integers(0, 1000))
def test_group_folds_of_single_rows_are_stratified(codes, n_folds, seed):
    folds = resampling.group_folds(codes, np.arange(codes.size), n_folds, seed=seed)
    sizes = _sizes(codes, folds, n_folds)
    assert (sizes.max(axis=1) - sizes.min(axis=1) <= 1).all()


def test_group_folds_stratify_groups():
    # 40 groups of 5 rows, each group all one class (10 of class 1): every
    # fold of 5 should get 2 of the class-1 groups.
    rng = np.random.default_rng(0)
    group_class = np.r_[np.ones(10, int), np.zeros(30, int)][rng.permutation(40)]
    groups = np.repeat(np.arange(40), 5)
    codes = group_class[groups]
    folds = resampling.group_folds(codes, groups, 5, seed=4)
    sizes = _sizes(codes, folds, 5)
    np.testing.assert_array_equal(sizes, np.array([[30] * 5, [10] * 5]))


def test_repeated_group_folds():
    codes = np.arange(60) % 3
    groups = np.arange(60) // 2  # 30 groups of two rows, all the same size
    plan = resampling.repeated_group_folds(codes, groups, 5, 3, seed=8)
    assert plan.shape == (3, 60) and (plan[0] != plan[1]).any()
    for r in range(3):
        assert (plan[r][::2] == plan[r][1::2]).all()
    np.testing.assert_array_equal(
        plan, resampling.repeated_group_folds(codes, groups, 5, 3, seed=8)
    )
    with pytest.raises(ValueError, match="repeats"):
        resampling.repeated_group_folds(codes, groups, 5, 0)


def test_group_folds_string_keys():
    folds = resampling.group_folds(
        np.array([0, 1, 0, 1, 0, 1]), np.array(["a", "a", "b", "b", "c", "c"]), 3, seed=0
    )
    assert folds[0] == folds[1] and folds[2] == folds[3] and len(set(folds)) == 3


def test_folds_from_column():
    fc = resampling.folds_from_column(np.array(["b", "a", "c", "a"]))
    np.testing.assert_array_equal(fc.folds, [1, 0, 2, 0])
    assert list(fc.values) == ["a", "b", "c"] and fc.n_folds == 3
    np.testing.assert_array_equal(resampling.folds_from_column([3, 1, 3]).folds, [1, 0, 1])
    with pytest.raises(ValueError, match="row 2"):
        resampling.folds_from_column(np.array([1.0, np.nan]))
    with pytest.raises(ValueError, match="2 distinct"):
        resampling.folds_from_column([4, 4, 4])
    with pytest.raises(ValueError, match="row 3"):
        resampling.folds_from_column(np.array(["a", "b", None], dtype=object))


# --------------------------------------------------------------------------
# Splits


sizes = st.one_of(st.floats(0.01, 0.6), st.integers(0, 80))


@settings(max_examples=250, deadline=None)
@given(labels(min_size=3), sizes, st.one_of(st.just(0), sizes), st.booleans(), st.integers(0, 99))
def test_split_partitions_exactly_with_exact_sizes(codes, test, calib, stratify, seed):
    n = codes.size
    n_test = resampling.size_to_rows(test, n) if not (isinstance(test, int) and test > n) else None
    n_calib = (
        resampling.size_to_rows(calib, n) if not (isinstance(calib, int) and calib > n) else None
    )
    if n_test is None or n_calib is None or n_test + n_calib >= n:
        with pytest.raises(ValueError):
            resampling.stratified_split(codes, test, calib, stratify=stratify, seed=seed)
        return
    part = resampling.stratified_split(codes, test, calib, stratify=stratify, seed=seed)
    assert part.shape == (n,) and set(np.unique(part)) <= {TRAIN, TEST, CALIB}
    assert (part == TEST).sum() == n_test and (part == CALIB).sum() == n_calib
    assert (part == TRAIN).sum() == n - n_test - n_calib
    if stratify:
        counts = np.bincount(codes)
        for which, size in ((TEST, n_test), (CALIB, n_calib)):
            got = np.bincount(codes[part == which], minlength=counts.size)
            # Largest remainder: within one row of the exact quota.
            assert (np.abs(got - size * counts / n) < 1 + 1e-9).all()
    np.testing.assert_array_equal(
        part, resampling.stratified_split(codes, test, calib, stratify=stratify, seed=seed)
    )


def test_split_counts_largest_remainder():
    # 10 rows of classes 6/3/1, test 5: quotas 3, 1.5, 0.5 -> 3, 2, 0 (ties
    # to the lower class index).
    codes = np.r_[np.zeros(6, int), np.ones(3, int), np.full(1, 2)]
    counts = resampling.split_counts(codes, 5)
    np.testing.assert_array_equal(counts[:, TEST], [3, 2, 0])
    np.testing.assert_array_equal(counts.sum(axis=1), [6, 3, 1])
    counts = resampling.split_counts(codes, 0.3, 0.2)
    np.testing.assert_array_equal(counts[:, TEST], [2, 1, 0])  # 1.8, 0.9, 0.3
    np.testing.assert_array_equal(counts[:, CALIB], [1, 1, 0])  # 1.2, 0.6, 0.2


def test_split_rounds_fractions_up_without_float_noise():
    assert resampling.size_to_rows(0.1, 30) == 3
    assert resampling.size_to_rows(0.25, 10) == 3
    assert resampling.size_to_rows(7, 10) == 7


def test_split_shuffles_with_the_seed():
    codes = np.zeros(100, int)
    a = resampling.stratified_split(codes, 0.5, seed=1)
    b = resampling.stratified_split(codes, 0.5, seed=2)
    assert (a != b).any() and (a[:50] != TEST).any()


@pytest.mark.parametrize(
    "text, expected", [("0.2", 0.2), ("300", 300), (" 5 ", 5), ("1e-1", 0.1), ("0", 0)]
)
def test_parse_size(text, expected):
    assert resampling.parse_size(text) == expected


@pytest.mark.parametrize("text", ["1.5", "0.0", "-0.2", "abc", "nan", "1.0"])
def test_parse_size_refuses(text):
    with pytest.raises(ValueError, match="split size"):
        resampling.parse_size(text)


@pytest.mark.parametrize(
    "test, calib, match",
    [(0.5, 0.5, "no row"), (11, 0, "not possible"), (-1, 0, "not possible"), (1.5, 0, "fraction")],
)
def test_split_refuses(test, calib, match):
    with pytest.raises(ValueError, match=match):
        resampling.stratified_split(np.arange(10) % 2, test, calib)


@pytest.mark.parametrize("n_classes", [1, 2, 7, 300])
def test_stratified_folds_are_the_lexsort_definition(n_classes):
    # The planner sorts through the permutation's inverse for speed; the
    # folds must be those of sorting by (class, random rank) directly, so
    # that a seed keeps giving the same folds.
    codes = np.random.default_rng(3).integers(0, n_classes, 5_000)
    rng = np.random.default_rng(np.random.SeedSequence(11).spawn(1)[0])
    order = np.lexsort((rng.permutation(codes.size), codes))
    expected = np.empty(codes.size, dtype=np.intp)
    expected[order] = rng.permutation(10)[np.arange(codes.size) % 10]
    np.testing.assert_array_equal(resampling.stratified_folds(codes, 10, seed=11), expected)
