"""Bootstrap intervals for means of per-row values (log-loss, Brier score).

Up to :data:`EXACT_VALUES` rows x resamples, rows are resampled exactly;
beyond, through groups of neighbouring values (see
:mod:`nbcli.reports.bootstrap` for the scheme and its accuracy), placed by
a histogram of the values' bit patterns in O(n), without a sort. BCa's
acceleration has a closed form either way (:func:`mean_acceleration`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from nbcli.reports.bootstrap import (
    _CHUNK_VALUES,
    Interval,
    _check_confidence,
    _chunks,
    bca_interval,
    no_interval,
)
from nbcli.reports.ranking_columns import _MAGNITUDE, map_columns, order_keys

EXACT_VALUES = 20_000_000
"""Means of per-row values are resampled row by row while rows x resamples
is at most this (20,000 rows at 1,000 resamples, about 0.15 s); beyond it
through :data:`GROUPS` groups of neighbouring values (module docstring)."""

GROUPS = 256
"""Number of groups of neighbouring values in the grouped resampling of means."""

# Mantissa bits kept by the histogram that places the group edges: its bins
# are neighbouring values within a factor 1 + 2**-7 of each other.
_BIN_BITS = 7


# The spawn key of the means' own stream of draws (see means_generator).
_MEANS_STREAM = 0x6D65616E  # "mean"


def means_generator(seed) -> np.random.Generator:
    """The generator the reports draw the resampled means from, for ``seed``.

    A stream of its own, apart from the generator of the report's other
    draws: the log-loss and Brier intervals of the same rows and seed are
    then the same in ``evaluate`` and ``calibrate``, whatever else each
    draws first.
    """
    return np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(_MEANS_STREAM,)))


def resampled_means(values, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Column means of bootstrap resamples of rows.

    ``values`` has shape (n_samples, k); every column is resampled with the
    same row indices. Returns shape (n_resamples, k).
    """
    v = np.asarray(values, dtype=float)
    n, k = v.shape
    # One contiguous 1-D gather per column with intp indices is several times
    # faster than gathering rows of the 2-D array.
    columns = [np.ascontiguousarray(v[:, j]) for j in range(k)]
    out = []
    for size in _chunks(n_resamples, n):
        idx = rng.integers(0, n, size=(size, n), dtype=np.intp)
        out.append(np.column_stack([np.take(c, idx).mean(axis=1) for c in columns]))
    return np.concatenate(out) if out else np.zeros((0, k))


def grouped_resampled_means(
    values, n_resamples: int, rng: np.random.Generator, groups: int = GROUPS
) -> np.ndarray:
    """Column means of bootstrap resamples through groups of neighbouring values.

    Each column is cut into about ``groups`` groups of neighbouring values
    of about equal size (:func:`value_groups`); a resample draws the number
    of rows ``c_g`` taken from each group (a multinomial with the groups'
    shares), and its mean is ``(sum_g c_g mean_g + sqrt(sum_g c_g var_g) Z)
    / n`` with ``Z`` standard normal, the within-group spread by the central
    limit theorem (module docstring). Each column is drawn by a generator of
    its own (``rng.spawn``), on threads for large columns; the draws do not
    depend on the threads. Costs O(n) per column and O(B groups) draws,
    against O(B n) for row resampling.

    ``values`` has shape (n_samples, k), or is a sequence of k columns of
    shape (n_samples,); returns shape (n_resamples, k).
    """
    columns = _columns(values)
    n = columns[0].size if columns else 0
    k = len(columns)
    g = max(1, min(int(groups), n))
    out = np.empty((n_resamples, k))
    # One generator per column, so that the columns can be drawn on threads
    # (NumPy's multinomial releases the GIL) with the draws of one thread.
    streams = rng.spawn(k) if k > 1 else [rng]

    def draw(j: int) -> None:
        out[:, j] = _grouped_column(columns[j], n_resamples, streams[j], g)

    map_columns(draw, k, n, None)
    return out


def _grouped_column(
    x: np.ndarray, n_resamples: int, rng: np.random.Generator, g: int
) -> np.ndarray:
    """:func:`grouped_resampled_means` of one column (shape (n_samples,)), shape (n_resamples,)."""
    _, sizes, means, variance = _group_moments(value_groups(x, g), x, g)
    return _grouped_draws(x.size, sizes, means, variance, n_resamples, rng, g)


def _grouped_draws(
    n: int,
    sizes: np.ndarray,
    means: np.ndarray,
    variance: np.ndarray,
    n_resamples: int,
    rng: np.random.Generator,
    g: int,
) -> np.ndarray:
    """Resampled means of ``n`` values from the sizes, means and variances of
    their non-empty groups (of ``g``), shape (n_resamples,); the draws of
    :func:`_grouped_column`, whether the groups come from the rows or from
    :class:`ValueBins`."""
    out = np.empty(n_resamples)
    step = max(1, _CHUNK_VALUES // g)
    for lo in range(0, n_resamples, step):
        size = min(step, n_resamples - lo)
        c = rng.multinomial(n, sizes / n, size=size).astype(float)
        # Sum of c_g draws from group g: variance c_g var_g, var_g = spread_g / size_g.
        # Sums by NumPy's einsum, not BLAS, whose rounding depends on its threads.
        within = np.einsum("ij,j->i", c, variance)
        noise = np.sqrt(np.maximum(within, 0.0)) * rng.standard_normal(size)
        out[lo : lo + size] = (np.einsum("ij,j->i", c, means) + noise) / n
    return out


def grouped_resampled_bin_sums(
    bins: np.ndarray,
    values: np.ndarray,
    n_bins: int,
    n_resamples: int,
    rng: np.random.Generator,
    groups: int = GROUPS,
) -> np.ndarray:
    """Bootstrap replicates of the sum of ``values`` within each bin, through groups.

    The resampling of :func:`grouped_resampled_means`, cell by cell: a cell
    is a bin and one of about ``groups`` groups of neighbouring values
    (:func:`value_groups` over all rows). A resample draws how many rows fall
    in each cell (one multinomial over the cells); a bin's sum is ``sum c
    mean`` over its cells plus a normal term of variance ``sum c var`` for
    the spread within them. O(n) and O(B cells) draws, against O(B n) for
    row resampling.

    Parameters
    ----------
    bins : ndarray of int, shape (n_samples,)
        Bin of each row, in ``[0, n_bins)``.
    values : ndarray of float, shape (n_samples,)
    n_bins, n_resamples : int
    rng : numpy.random.Generator
    groups : int

    Returns
    -------
    ndarray of shape (n_resamples, n_bins)
        Zero for bins without rows.
    """
    x = np.asarray(values, dtype=float)
    n = x.size
    g = max(1, min(int(groups), n))
    out = np.zeros((n_resamples, n_bins))
    if n == 0:
        return out
    cell = np.asarray(bins, dtype=np.intp) * g + value_groups(x, g)
    present, sizes, means, variance = _group_moments(cell, x, n_bins * g)
    del cell
    # Cells are numbered bin by bin, so each bin's cells are one run.
    bin_of_cell = present // g
    filled, starts = np.unique(bin_of_cell, return_index=True)
    step = max(1, _CHUNK_VALUES // present.size)
    for lo in range(0, n_resamples, step):
        size = min(step, n_resamples - lo)
        c = rng.multinomial(n, sizes / n, size=size).astype(float)
        between = np.add.reduceat(c * means, starts, axis=1)
        within = np.add.reduceat(c * variance, starts, axis=1)
        noise = np.sqrt(np.maximum(within, 0.0)) * rng.standard_normal((size, filled.size))
        out[lo : lo + size, filled] = between + noise
    return out


def _group_moments(member: np.ndarray, x: np.ndarray, n_groups: int):
    """The non-empty groups of ``member`` (group of each value of ``x``, in
    ``[0, n_groups)``): their indices, sizes, means and variances (the
    two-pass spread about each mean divided by the size), four arrays."""
    sizes = np.bincount(member, minlength=n_groups)
    means = np.bincount(member, weights=x, minlength=n_groups) / np.maximum(sizes, 1)
    deviation = means[member]
    np.subtract(x, deviation, out=deviation)
    np.square(deviation, out=deviation)
    spread = np.bincount(member, weights=deviation, minlength=n_groups)
    present = np.flatnonzero(sizes)
    sizes = sizes[present]
    return present, sizes, means[present], spread[present] / sizes


def _columns(values) -> list[np.ndarray]:
    """Float64 columns of shape (n_samples,) from a 2-D array or a sequence of columns."""
    if isinstance(values, np.ndarray) and values.ndim == 2:
        return [values[:, j] for j in range(values.shape[1])]
    if isinstance(values, np.ndarray):
        raise ValueError(f"values must be 2-D or a list of columns, got shape {values.shape}")
    return [np.asarray(v, dtype=float) for v in values]


def value_groups(x: np.ndarray, groups: int) -> np.ndarray:
    """Group of every value: at most ``groups`` groups of neighbouring values, of about n / groups each.

    The values are binned by their float64 bit patterns (sign, exponent and
    the leading :data:`_BIN_BITS` mantissa bits, so a bin spans a factor of
    at most ``1 + 2**-7``), and consecutive bins are joined into groups at
    the quantiles of the bins' cumulative counts; a bin holding more than
    ``n / groups`` rows is a group of its own. O(n), no sort. Returns int
    group indices of shape (n,), non-decreasing in the value (some indices
    may be unused).
    """
    key = _bin_keys(x)
    key -= key.min()
    counts = np.bincount(key)
    below = np.cumsum(counts) - counts  # rows in lower bins
    return np.take((below * int(groups)) // max(1, x.size), key)


def _bin_keys(x: np.ndarray) -> np.ndarray:
    """The histogram bin of every value in :func:`value_groups` (before its shift to 0)."""
    key = order_keys(x)
    key >>= 52 - _BIN_BITS
    return key


def _bin_references(keys: np.ndarray) -> np.ndarray:
    """A value in each bin of ``keys`` (the bin's end nearest zero), float64."""
    bits = np.asarray(keys, dtype=np.int64) << (52 - _BIN_BITS)
    # A negative value's magnitude bits were flipped by order_keys: flip them back.
    bits = np.where(bits < 0, bits ^ _MAGNITUDE, bits)
    return bits.view(np.float64)


# Widest span of bins counted by one bincount; a wider one is counted by np.unique.
_DENSE_BINS = 1 << 22


@dataclass
class ValueBins:
    """Sums of per-row values by histogram bin of neighbouring values: what the
    grouped resampling of their mean needs, summed where the rows are.

    The bins are those of :func:`value_groups` (a value's float64 bit pattern
    with :data:`_BIN_BITS` mantissa bits); per bin, the rows and the sums of
    ``d``, ``d**2`` and ``d**3`` with ``d`` a value's offset from a fixed value
    of its bin (:func:`_bin_references`), so that sums over rows add across
    chunks and parts, and no moment is a difference of large sums. The groups
    of :func:`grouped_resampled_means` join whole bins at the quantiles of the
    bins' cumulative counts, so the totals of all rows give the same groups,
    with the same sizes, and their means and variances to rounding.

    Attributes
    ----------
    keys : ndarray of int64, shape (m,)
        The occupied bins, increasing.
    count : ndarray of int64, shape (m,)
    sums : ndarray of float64, shape (3, m)
    """

    keys: np.ndarray
    count: np.ndarray
    sums: np.ndarray

    @classmethod
    def of(cls, values) -> ValueBins:
        """The bins of finite ``values`` (shape (n,))."""
        x = np.asarray(values, dtype=np.float64)
        if x.size == 0:
            return cls(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros((3, 0)))
        key = _bin_keys(x)
        low = int(key.min())
        if int(key.max()) - low < _DENSE_BINS:
            key -= low
            count = np.bincount(key)
            keys = np.flatnonzero(count)
            where = np.zeros(count.size, np.intp)
            where[keys] = np.arange(keys.size)
            inverse = where[key]
            keys = keys.astype(np.int64) + low
            count = count[keys - low]
        else:
            keys, inverse, count = np.unique(key, return_inverse=True, return_counts=True)
        d = x - _bin_references(keys)[inverse]
        sums = np.empty((3, keys.size))
        sums[0] = np.bincount(inverse, weights=d, minlength=keys.size)
        power = d * d
        sums[1] = np.bincount(inverse, weights=power, minlength=keys.size)
        power *= d
        sums[2] = np.bincount(inverse, weights=power, minlength=keys.size)
        return cls(keys.astype(np.int64), count.astype(np.int64), sums)

    def merge(self, other: ValueBins) -> ValueBins:
        """The bins of the rows of both."""
        keys, inverse = np.unique(np.concatenate([self.keys, other.keys]), return_inverse=True)
        count = np.bincount(inverse, weights=np.concatenate([self.count, other.count]))
        both = np.concatenate([self.sums, other.sums], axis=1)
        sums = np.stack([np.bincount(inverse, weights=row, minlength=keys.size) for row in both])
        return ValueBins(keys, np.rint(count).astype(np.int64), sums.reshape(3, keys.size))

    __add__ = merge

    @property
    def n(self) -> int:
        """Rows counted."""
        return int(self.count.sum())

    def mean(self) -> float:
        """Mean of the values; NaN for none."""
        if not self.n:
            return math.nan
        return float(np.sum(self.count * _bin_references(self.keys) + self.sums[0]) / self.n)

    def _central(self, centre: np.ndarray, power: int) -> np.ndarray:
        """Per bin, the sum of ``(x - centre)**power`` (power 2 or 3)."""
        delta = _bin_references(self.keys) - centre
        s1, s2, s3 = self.sums
        if power == 2:
            return s2 + 2.0 * delta * s1 + self.count * delta * delta
        return s3 + 3.0 * delta * s2 + 3.0 * delta * delta * s1 + self.count * delta**3

    def groups(self, groups: int):
        """Sizes, means and variances of the non-empty groups of :func:`value_groups`
        with ``groups`` groups (in group order), as :func:`_group_moments` gives them
        from the rows."""
        n = self.n
        below = np.cumsum(self.count) - self.count
        member = (below * int(groups)) // max(1, n)
        sizes = np.bincount(member, weights=self.count, minlength=groups)
        totals = np.bincount(
            member,
            weights=self.count * _bin_references(self.keys) + self.sums[0],
            minlength=groups,
        )
        means = totals / np.maximum(sizes, 1)
        spread = np.bincount(member, weights=self._central(means[member], 2), minlength=groups)
        present = np.flatnonzero(sizes)
        sizes = np.rint(sizes[present]).astype(np.int64)
        return sizes, means[present], np.maximum(spread[present], 0.0) / sizes

    def acceleration(self) -> float:
        """:func:`mean_acceleration` of the values."""
        centre = np.full(self.keys.size, self.mean())
        spread = float(np.sum(self._central(centre, 2)))
        if not (spread > 0 and math.isfinite(spread)):
            return math.nan
        return float(np.sum(self._central(centre, 3)) / (6.0 * spread**1.5))


def bootstrap_binned_means(
    bins: Mapping[str, ValueBins],
    *,
    n_resamples: int,
    confidence: float,
    rng: np.random.Generator,
) -> dict[str, Interval]:
    """:func:`bootstrap_means` of values given as their :class:`ValueBins`, for more
    than :data:`EXACT_VALUES` rows x resamples (fewer are resampled row by row,
    which needs the rows).

    The same draws from ``rng`` as :func:`bootstrap_means` of the rows (one
    stream per column, ``rng.spawn``), from the same group sizes: the
    intervals equal its intervals to rounding.

    Raises
    ------
    ValueError
        For rows x resamples at most :data:`EXACT_VALUES`, or columns of
        different lengths.
    """
    _check_confidence(confidence)
    names = list(bins)
    n = bins[names[0]].n if names else 0
    if any(bins[k].n != n for k in names):
        raise ValueError("the columns have different numbers of rows")
    estimates = [bins[k].mean() for k in names]
    if n_resamples <= 0 or n < 2:
        return {k: no_interval(e) for k, e in zip(names, estimates)}
    if n * n_resamples <= EXACT_VALUES:
        raise ValueError(
            f"{n:,} rows x {n_resamples:,} resamples are resampled row by row: give the rows"
        )
    g = max(1, min(GROUPS, n))
    streams = rng.spawn(len(names)) if len(names) > 1 else [rng]
    out = {}
    for j, k in enumerate(names):
        sizes, means, variance = bins[k].groups(g)
        replicates = _grouped_draws(n, sizes, means, variance, n_resamples, streams[j], g)
        out[k] = bca_interval(
            estimates[j],
            replicates,
            acceleration=bins[k].acceleration(),
            confidence=confidence,
        )
    return out


def jackknife_means(values) -> np.ndarray:
    """Leave-one-out column means, (sum - x_i) / (n - 1); shape (n_samples, k) like ``values``."""
    v = np.asarray(values, dtype=float)
    n = v.shape[0]
    return (v.sum(axis=0) - v) / (n - 1)


def bootstrap_means(
    columns: Mapping[str, np.ndarray],
    *,
    n_resamples: int,
    confidence: float,
    rng: np.random.Generator,
) -> dict[str, Interval]:
    """BCa intervals for the means of per-row values, e.g. {"log_loss": ..., "brier": ...}.

    All columns have shape (n_samples,). Up to :data:`EXACT_VALUES` rows x
    resamples they share one set of resampled rows
    (:func:`resampled_means`); beyond, each is resampled through groups of
    its sorted values (:func:`grouped_resampled_means`). With no rows the
    estimates are NaN; with one row or ``n_resamples=0`` there are no
    intervals (method "none").
    """
    _check_confidence(confidence)
    names = list(columns)
    values = [np.asarray(columns[k], dtype=float) for k in names]
    n = values[0].size if values else 0
    estimates = [float(np.mean(v)) if n else math.nan for v in values]
    if n_resamples <= 0 or n < 2:
        return {k: no_interval(e) for k, e in zip(names, estimates)}
    if n * n_resamples <= EXACT_VALUES:
        replicates = resampled_means(np.column_stack(values), n_resamples, rng)
    else:
        replicates = grouped_resampled_means(values, n_resamples, rng)
    return {
        k: bca_interval(
            estimates[j],
            replicates[:, j],
            acceleration=mean_acceleration(values[j]),
            confidence=confidence,
        )
        for j, k in enumerate(names)
    }


def mean_acceleration(x) -> float:
    """BCa's acceleration for the mean of ``x`` (shape (n_samples,)), in closed form.

    The jackknife values of a mean are ``(S - x_i) / (n - 1)``, so their
    deviations from their mean are ``(x_i - xbar) / (n - 1)`` and the
    acceleration ``sum d^3 / (6 (sum d^2)^1.5)`` (Efron and Tibshirani 1993,
    sec. 14.3) is ``sum c^3 / (6 (sum c^2)^1.5)`` with ``c = x - xbar``:
    what :func:`jackknife_means` would give, without its n values. NaN when
    the values have no spread.
    """
    c = np.asarray(x, dtype=float)
    c = c - c.mean()
    # einsum sums the products without a temporary array (and without BLAS).
    spread = float(np.einsum("i,i->", c, c))
    if not (spread > 0 and math.isfinite(spread)):
        return math.nan
    return float(np.einsum("i,i,i->", c, c, c) / (6.0 * spread**1.5))


def loss_means(proba, codes, rows, *, n_resamples: int, confidence: float, seed) -> dict:
    """The log-loss and Brier score of ``rows`` (an index or mask of the rows
    whose labels the model knows) as :func:`bootstrap_means` intervals, drawn
    by :func:`means_generator` ``(seed)``: the one interval of each loss that
    ``evaluate``, ``calibrate`` and ``cv`` report.

    Parameters
    ----------
    proba : ndarray of shape (n_samples, n_classes)
    codes : ndarray of int, shape (n_samples,)
        Each row's class column (any column for a row outside ``rows``).
    """
    from nbcli.reports.metrics import brier_per_row, log_loss_per_row

    return loss_intervals(
        log_loss_per_row(proba, codes)[rows],
        brier_per_row(proba, codes)[rows],
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
    )


def loss_intervals(log_loss, brier, *, n_resamples: int, confidence: float, seed) -> dict:
    """:func:`loss_means` from the per-row losses of the rows with known
    labels, each of shape (n_known,), when the caller has them."""
    return bootstrap_means(
        {"log_loss": log_loss, "brier": brier},
        n_resamples=n_resamples,
        confidence=confidence,
        rng=means_generator(seed),
    )
