"""Resampling plans: cross-validation folds and train/test/calibration splits.

Every plan is computed from the labels alone (an array of class indices, and
for grouped folds an array of group keys), as one array with an entry per
row: the fold of the row, or the part of a split it goes to. A command can
therefore read the target column in a first pass, compute the plan, and then
stream the rows to their fold or output file in a second pass, reading
``plan[start:stop]`` for each chunk.

Randomness comes from one ``numpy.random.Generator`` seeded with ``seed``
(an int; ``None`` draws fresh entropy), so a seed gives the same plan on
every platform and NumPy version that keeps ``Generator.permutation``
stable.

Stratified k-fold (:func:`stratified_folds`)
    The rows are shuffled within each class, then listed class after class,
    and dealt round-robin: the row at position ``t`` of that list goes to
    fold ``t mod k``. Finally the fold numbers are relabelled by a random
    permutation, so that the folds that receive the extra rows change with
    the seed. Each class's rows are consecutive in the list, so within every
    class the fold sizes differ by at most one, and so do the folds' total
    sizes (the guarantee of scikit-learn's ``StratifiedKFold(shuffle=True)``,
    though not its draws).
Repeats (:func:`repeated_stratified_folds`)
    Repeat ``r`` uses the ``r``-th child of ``numpy.random.SeedSequence(seed)``,
    so one seed gives ``R`` different, reproducible assignments; repeat 0 is
    ``stratified_folds`` with the same seed.
Grouped k-fold (:func:`group_folds`)
    All rows of a group go to one fold. Groups are shuffled, then taken from
    the largest to the smallest (stable, so equal sizes keep the shuffled
    order), and each goes to the fold where it least increases the squared
    distance of the folds' class counts from their targets (class count
    divided by ``k``), each class's distance scaled by its size, so that
    small classes weigh as much as large ones; ties go to the fold with
    fewest rows, then the lowest number. This is greedy, like scikit-learn's
    ``StratifiedGroupKFold``: stratification holds as far as the groups
    allow (exactly, to one row per class, when every group is one row).
Folds from a column (:func:`folds_from_column`)
    Each distinct value is a fold, numbered in sorted order of the values.
Train/test/calibration split (:func:`stratified_split`)
    Sizes are given as a fraction in (0, 1) of the rows (rounded up, as
    scikit-learn's ``train_test_split`` rounds the test size) or as a row
    count. The test size is shared among the classes in proportion to their
    counts by the largest-remainder method (Hamilton's apportionment: each
    class gets the floor of its exact quota, and the rows left over go to
    the classes with the largest remainders, ties to the lower class index);
    the calibration size likewise, among the rows left after the test part.
    The total sizes are then exact and each class's share is within one row
    of its quota. Within each class the rows are shuffled and the first go
    to test, the next to calibration, the rest to training.

NumPy only: no file I/O, no printing.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

TRAIN, TEST, CALIB = 0, 1, 2
"""Codes of the parts in a split plan."""

PART_NAMES = ("train", "test", "calib")


# --------------------------------------------------------------------------
# Checks


def _codes(true_codes) -> np.ndarray:
    codes = np.asarray(true_codes)
    if codes.ndim != 1:
        raise ValueError(f"true_codes must be one-dimensional, got shape {codes.shape}")
    if codes.size and not np.issubdtype(codes.dtype, np.integer):
        raise ValueError(f"true_codes must be integer class indices, got dtype {codes.dtype}")
    codes = codes.astype(np.intp, copy=False)
    if codes.size and codes.min() < 0:
        raise ValueError("true_codes must be non-negative class indices")
    return codes


def _check_folds(n_folds, n_rows: int, what: str = "rows") -> int:
    if isinstance(n_folds, bool) or not isinstance(n_folds, numbers.Integral):
        raise ValueError(f"the number of folds must be an integer, got {n_folds!r}")
    n_folds = int(n_folds)
    if n_folds < 2:
        raise ValueError(f"the number of folds must be at least 2, got {n_folds}")
    if n_folds > n_rows:
        raise ValueError(
            f"cannot make {n_folds} folds from {n_rows} {what}; use at most {n_rows} folds"
        )
    return n_folds


# --------------------------------------------------------------------------
# k-fold


def _stratified(codes: np.ndarray, n_folds: int, rng: np.random.Generator) -> np.ndarray:
    n = codes.size
    # The rows sorted by class, in the order of a random permutation within
    # each class: what ``np.lexsort((rng.permutation(n), codes))`` gives, the
    # same rows to the last one, but through the permutation's inverse and a
    # stable (radix) sort of small class codes, about three times faster.
    ranks = rng.permutation(n)
    by_rank = np.empty(n, dtype=np.intp)
    by_rank[ranks] = np.arange(n)
    small = np.min_scalar_type(int(codes.max()) if n else 0)
    order = by_rank[np.argsort(codes[by_rank].astype(small), kind="stable")]
    relabel = rng.permutation(n_folds)
    folds = np.empty(n, dtype=np.intp)
    folds[order] = relabel[np.arange(n) % n_folds]
    return folds


def repeated_stratified_folds(true_codes, n_folds: int, n_repeats: int, *, seed=None) -> np.ndarray:
    """``n_repeats`` independent stratified k-fold assignments from one seed.

    Parameters
    ----------
    true_codes : array-like of int, shape (n_samples,)
        Class index of each row.
    n_folds : int
        Number of folds, at least 2 and at most ``n_samples``.
    n_repeats : int
        Number of assignments, at least 1.
    seed : int or None
        Seed of ``numpy.random.SeedSequence``; repeat ``r`` uses its
        ``r``-th spawned child.

    Returns
    -------
    ndarray of int, shape (n_repeats, n_samples)
        ``folds[r, i]`` is the fold (0 .. n_folds - 1) of row ``i`` in repeat
        ``r``. In every repeat, within each class and overall, fold sizes
        differ by at most one; a class with fewer rows than folds is missing
        from some folds.

    Raises
    ------
    ValueError
        For bad codes, too few rows, or a count below its minimum.
    """
    codes = _codes(true_codes)
    n_folds = _check_folds(n_folds, codes.size)
    if isinstance(n_repeats, bool) or not isinstance(n_repeats, numbers.Integral) or n_repeats < 1:
        raise ValueError(f"the number of repeats must be a positive integer, got {n_repeats!r}")
    children = np.random.SeedSequence(seed).spawn(int(n_repeats))
    return np.stack([_stratified(codes, n_folds, np.random.default_rng(s)) for s in children])


def stratified_folds(true_codes, n_folds: int, *, seed=None) -> np.ndarray:
    """Stratified k-fold assignment, shape (n_samples,): the fold of each row.

    Repeat 0 of :func:`repeated_stratified_folds` (same arguments and errors).
    """
    return repeated_stratified_folds(true_codes, n_folds, 1, seed=seed)[0]


def repeated_group_folds(
    true_codes, groups, n_folds: int, n_repeats: int, *, seed=None
) -> np.ndarray:
    """``n_repeats`` grouped k-fold assignments from one seed, shape (n_repeats, n_samples).

    Repeat ``r`` is :func:`group_folds` driven by the ``r``-th child of
    ``numpy.random.SeedSequence(seed)``; the repeats differ only where groups
    of equal size can be ordered differently. Arguments and errors as
    :func:`group_folds` and :func:`repeated_stratified_folds`.
    """
    if isinstance(n_repeats, bool) or not isinstance(n_repeats, numbers.Integral) or n_repeats < 1:
        raise ValueError(f"the number of repeats must be a positive integer, got {n_repeats!r}")
    children = np.random.SeedSequence(seed).spawn(int(n_repeats))
    return np.stack([group_folds(true_codes, groups, n_folds, seed=s) for s in children])


def group_folds(true_codes, groups, n_folds: int, *, seed=None) -> np.ndarray:
    """k-fold assignment keeping each group in one fold, stratified as far as possible.

    Parameters
    ----------
    true_codes : array-like of int, shape (n_samples,)
        Class index of each row (all zeros for unstratified grouping).
    groups : array-like, shape (n_samples,)
        Group key of each row (any sortable values: ints, strings).
    n_folds : int
        Number of folds, at least 2 and at most the number of groups.
    seed : int, numpy.random.SeedSequence or None
        Seed of the shuffle that orders groups of equal size.

    Returns
    -------
    ndarray of int, shape (n_samples,)
        Fold of each row; every fold receives at least one group.

    Raises
    ------
    ValueError
        For bad codes, mismatched lengths, or fewer groups than folds.
    """
    codes = _codes(true_codes)
    keys = np.asarray(groups)
    if keys.shape != codes.shape:
        raise ValueError(f"groups has shape {keys.shape}, expected {codes.shape}")
    _, group_of = np.unique(keys, return_inverse=True)
    group_of = group_of.reshape(-1)
    n_groups = int(group_of.max()) + 1 if group_of.size else 0
    n_folds = _check_folds(n_folds, n_groups, "groups")
    n_classes = int(codes.max()) + 1
    counts = np.bincount(group_of * n_classes + codes, minlength=n_groups * n_classes).reshape(
        n_groups, n_classes
    )
    class_totals = counts.sum(axis=0).astype(float)
    target = class_totals / n_folds
    # Scaling by 1 / size**2 makes each class's squared error relative; the
    # max() only guards classes with no rows, whose weight does not matter.
    scale = 1.0 / np.maximum(class_totals, 1.0) ** 2
    rng = np.random.default_rng(seed)
    shuffled = rng.permutation(n_groups)
    order = shuffled[np.argsort(-counts.sum(axis=1)[shuffled], kind="stable")]
    fold_counts = np.zeros((n_folds, n_classes))
    fold_rows = np.zeros(n_folds)
    fold_of_group = np.empty(n_groups, dtype=np.intp)
    tie_order = np.arange(n_folds)
    for g in order:
        v = counts[g]
        # Growth of sum_c scale_c (F_fc - t_c)^2 when group g joins fold f,
        # less the term v_c^2 that is the same for every fold.
        growth = (fold_counts - target) @ (v * scale)
        best = np.lexsort((tie_order, fold_rows, growth))[0]
        fold_of_group[g] = best
        fold_counts[best] += v
        fold_rows[best] += v.sum()
    return fold_of_group[group_of]


@dataclass(frozen=True)
class FoldColumn:
    """Folds given by a column: ``folds`` the fold number (0 ..) of each row,
    ``values`` the column value of each fold number, sorted."""

    folds: np.ndarray
    values: np.ndarray

    @property
    def n_folds(self) -> int:
        return int(self.values.size)


def folds_from_column(values) -> FoldColumn:
    """Folds from the values of a column: one fold per distinct value.

    Parameters
    ----------
    values : array-like, shape (n_samples,)
        Fold value of each row (ints or strings); missing values (NaN,
        None) are refused.

    Returns
    -------
    FoldColumn

    Raises
    ------
    ValueError
        For missing values or fewer than two distinct values.
    """
    v = np.asarray(values)
    if v.ndim != 1:
        raise ValueError(f"the fold column must be one-dimensional, got shape {v.shape}")
    missing = _missing(v)
    if missing.any():
        raise ValueError(
            f"the fold column has a missing value in row {int(np.argmax(missing)) + 1}"
        )
    try:
        labels, folds = np.unique(v, return_inverse=True)
    except TypeError:
        # Mixed types (e.g. ints and strings in an object column) compare by text.
        labels, folds = np.unique(v.astype(str), return_inverse=True)
    if labels.size < 2:
        raise ValueError(f"the fold column needs at least 2 distinct values, got {labels.size}")
    return FoldColumn(folds.reshape(-1).astype(np.intp), labels)


def _missing(v: np.ndarray) -> np.ndarray:
    if v.dtype.kind == "f":
        return np.isnan(v)
    if v.dtype.kind == "O":
        return np.array([x is None or (isinstance(x, float) and math.isnan(x)) for x in v])
    return np.zeros(v.shape, dtype=bool)


# --------------------------------------------------------------------------
# Train / test / calibration split


def parse_size(text: str) -> int | float:
    """A split size from the command line: ``"0.2"`` a fraction, ``"300"`` a row count.

    Raises
    ------
    ValueError
        For anything else, with a message fit for the user.
    """
    s = str(text).strip()
    try:
        return int(s)
    except ValueError:
        pass
    try:
        x = float(s)
    except ValueError:
        raise ValueError(
            f"split size {text!r} is neither a fraction in (0, 1) nor a row count"
        ) from None
    if not 0.0 < x < 1.0:
        raise ValueError(f"split size {text!r} must be a fraction in (0, 1) or a row count")
    return x


def size_to_rows(size, n_rows: int, name: str = "size") -> int:
    """Rows meant by a split size: a fraction in (0, 1) of ``n_rows`` rounded up,
    or a count (an int, 0 .. n_rows) as is.

    Raises
    ------
    ValueError
        For a fraction outside (0, 1), a negative or too large count, or a
        value of another type.
    """
    if isinstance(size, bool):
        raise ValueError(f"{name} must be a fraction in (0, 1) or a row count, got {size!r}")
    if isinstance(size, numbers.Integral):
        rows = int(size)
        if not 0 <= rows <= n_rows:
            raise ValueError(f"{name} of {rows} rows is not possible with {n_rows} rows")
        return rows
    if isinstance(size, numbers.Real) and 0.0 < float(size) < 1.0:
        # Rounding first keeps 0.1 * 30 = 3.0000000000000004 at 3.
        return math.ceil(round(float(size) * n_rows, 9))
    raise ValueError(f"{name} must be a fraction in (0, 1) or a row count, got {size!r}")


def _apportion(total: int, counts: np.ndarray, capacity: np.ndarray) -> np.ndarray:
    """Largest-remainder shares of ``total`` proportional to ``counts``, each
    at most ``capacity`` (the caller ensures ``capacity.sum() >= total``)."""
    n = int(counts.sum())
    if total == 0 or n == 0:
        return np.zeros(counts.size, dtype=np.int64)
    exact = total * counts.astype(np.int64)  # integer quotas x n: no rounding
    share = np.minimum(exact // n, capacity)
    remainder = exact - share * n
    left = total - int(share.sum())
    while left > 0:
        room = np.flatnonzero(share < capacity)
        # Largest remainder first; lexsort is stable, so ties keep class order.
        take = room[np.lexsort((room, -remainder[room]))][:left]
        share[take] += 1
        remainder[take] = -1  # a class's remainder is spent once
        left -= take.size
    return share


def split_counts(true_codes, test, calib=0, *, stratify: bool = True) -> np.ndarray:
    """Rows of each class in each part of a split, shape (n_classes, 3).

    Columns are :data:`TRAIN`, :data:`TEST` and :data:`CALIB`; with
    ``stratify=False`` a single row (all classes together). Arguments and
    errors as :func:`stratified_split`.
    """
    codes = _codes(true_codes)
    n = codes.size
    n_test = size_to_rows(test, n, "the test size")
    n_calib = size_to_rows(calib, n, "the calibration size")
    if n_test + n_calib >= n:
        raise ValueError(
            f"a test part of {n_test} and a calibration part of {n_calib} rows leave "
            f"no row of {n} for training"
        )
    per_class = np.bincount(codes) if stratify else np.array([n])
    test_rows = _apportion(n_test, per_class, per_class)
    calib_rows = _apportion(n_calib, per_class, per_class - test_rows)
    return np.column_stack([per_class - test_rows - calib_rows, test_rows, calib_rows])


def stratified_split(true_codes, test, calib=0, *, stratify: bool = True, seed=None) -> np.ndarray:
    """Which part (train, test or calibration) each row goes to.

    Parameters
    ----------
    true_codes : array-like of int, shape (n_samples,)
        Class index of each row.
    test, calib : float or int
        Size of the test and calibration parts: a fraction in (0, 1) of the
        rows (rounded up) or a row count. ``calib=0`` makes no calibration part.
    stratify : bool
        Share each part among the classes by the largest-remainder method
        (else the parts are drawn from all rows alike).
    seed : int or None
        Seed of the shuffle that picks the rows.

    Returns
    -------
    ndarray of int8, shape (n_samples,)
        :data:`TRAIN` (0), :data:`TEST` (1) or :data:`CALIB` (2) per row;
        every row is in exactly one part, and the parts have exactly the
        sizes asked for.

    Raises
    ------
    ValueError
        For a bad size, or sizes that leave no row for training.
    """
    codes = _codes(true_codes)
    counts = split_counts(codes, test, calib, stratify=stratify)
    strata = codes if stratify else np.zeros(codes.size, dtype=np.intp)
    rng = np.random.default_rng(seed)
    order = np.lexsort((rng.permutation(codes.size), strata))
    # Position of each row within its stratum after the shuffle.
    starts = np.r_[0, np.cumsum(counts.sum(axis=1))[:-1]]
    rank = np.arange(codes.size) - starts[strata[order]]
    sorted_strata = strata[order]
    n_test, n_calib = counts[sorted_strata, TEST], counts[sorted_strata, CALIB]
    part = np.empty(codes.size, dtype=np.int8)
    part[order] = np.where(rank < n_test, TEST, np.where(rank < n_test + n_calib, CALIB, TRAIN))
    return part
