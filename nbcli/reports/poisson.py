"""Poisson bootstrap: per-replicate sums that merge across partitions by addition.

In the Poisson bootstrap (Hanley and MacGibbon, "Creating non-parametric
bootstrap samples using Poisson frequencies", Computer Methods and Programs
in Biomedicine 83, 2006; Chamandy et al., "Estimating uncertainty for
massive data streams", Google, 2012) each row enters replicate b with an
independent weight ``w_ib ~ Poisson(1)`` instead of a multinomial count, so
a replicate needs no knowledge of the other rows: a mean is
``sum_i w_ib x_i / sum_i w_ib`` and the two sums of a data set split into
parts are the sums of the parts' sums.

Weights are a function of the seed and the row's global position only. Rows
are grouped in fixed blocks of :data:`BLOCK_ROWS` consecutive global rows;
block j's weights come from its own generator, seeded by ``(seed, j)``
through ``numpy.random.SeedSequence``. A partition holding rows
``[row_start, row_start + n)`` draws the weights of the blocks it overlaps
and keeps its rows, so the same seed and the same rows give the same
replicates however the rows are partitioned.

Per-row means (:func:`poisson_sums`) and confusion matrices
(:func:`poisson_tables`) are covered. The interval is the percentile
interval of the replicate statistics; its
``method`` is ``"poisson-bootstrap"``. BCa needs a jackknife over all rows,
which a partitioned computation does not have.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from nbcli.reports.bootstrap import Interval, no_interval

POISSON_BOOTSTRAP = "poisson-bootstrap"

BLOCK_ROWS = 1024
"""Rows per block of weights; weights depend on the global row, not the partition."""


def poisson_weights(seed: int, row_start: int, n_rows: int, n_resamples: int) -> np.ndarray:
    """Poisson(1) weights of global rows ``[row_start, row_start + n_rows)``.

    Parameters
    ----------
    seed : int >= 0
    row_start : int >= 0
        Global position of the first row (rows of earlier partitions before it).
    n_rows, n_resamples : int >= 0

    Returns
    -------
    ndarray of shape (n_rows, n_resamples), float64
        Row i, replicate b: that row's weight in that replicate. Equal for a
        given global row whatever ``row_start`` and ``n_rows`` the call uses.

    Raises
    ------
    ValueError
        For a negative seed, position or size.
    """
    if min(seed, row_start, n_rows, n_resamples) < 0:
        raise ValueError("seed, row_start, n_rows and n_resamples must be non-negative")
    out = np.empty((n_rows, n_resamples))
    stop = row_start + n_rows
    for block in range(row_start // BLOCK_ROWS, -(-stop // BLOCK_ROWS)):
        lo = block * BLOCK_ROWS
        rng = np.random.default_rng(np.random.SeedSequence([int(seed), block]))
        w = rng.poisson(1.0, size=(BLOCK_ROWS, n_resamples))
        a, b = max(lo, row_start), min(lo + BLOCK_ROWS, stop)
        out[a - row_start : b - row_start] = w[a - lo : b - lo]
    return out


@dataclass(frozen=True)
class PoissonSums:
    """Per-replicate sums of weights and of weighted values; ``a + b`` merges parts.

    ``weight`` has shape (n_resamples,), ``total`` (n_resamples, k): replicate
    b's ``sum_i w_ib`` and ``sum_i w_ib x_ij``. ``n_rows`` and ``value_sum``
    (k,) are the unweighted count and sums, for the point estimate.
    """

    weight: np.ndarray
    total: np.ndarray
    n_rows: int
    value_sum: np.ndarray

    def __add__(self, other: PoissonSums) -> PoissonSums:
        return PoissonSums(
            self.weight + other.weight,
            self.total + other.total,
            self.n_rows + other.n_rows,
            self.value_sum + other.value_sum,
        )

    def means(self) -> np.ndarray:
        """Replicate means, shape (n_resamples, k); NaN for a replicate of zero weight."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return self.total / self.weight[:, np.newaxis]


def poisson_sums(values, *, seed: int, row_start: int, n_resamples: int) -> PoissonSums:
    """Per-replicate Poisson-bootstrap sums of one partition's per-row values.

    Parameters
    ----------
    values : array of shape (n_rows,) or (n_rows, k)
        Per-row values (log-loss, Brier score, a 0/1 hit per row...).
    seed : int
    row_start : int
        Global position of the partition's first row.
    n_resamples : int

    Returns
    -------
    PoissonSums
        Add the sums of all partitions, in any order, to get those of all rows.
    """
    v = np.asarray(values, dtype=float)
    if v.ndim == 1:
        v = v[:, np.newaxis]
    w = poisson_weights(seed, row_start, v.shape[0], n_resamples)
    return PoissonSums(w.sum(axis=0), w.T @ v, int(v.shape[0]), v.sum(axis=0))


def poisson_intervals(sums: PoissonSums, *, confidence: float = 0.95) -> list[Interval]:
    """Percentile intervals of the means, one per column (method "poisson-bootstrap").

    The estimate is the plain mean of all rows; replicates of zero total
    weight are left out. No rows give NaN estimates; no replicates, no
    intervals (method "none").

    Raises
    ------
    ValueError
        For a confidence outside (0, 1).
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence}")
    k = sums.value_sum.shape[0]
    if sums.n_rows == 0:
        return [no_interval(math.nan) for _ in range(k)]
    estimates = sums.value_sum / sums.n_rows
    replicates = sums.means()[sums.weight > 0]
    if replicates.shape[0] == 0:
        return [no_interval(e) for e in estimates]
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(replicates, [alpha, 1.0 - alpha], axis=0)
    return [
        Interval(float(e), float(lo), float(hi), POISSON_BOOTSTRAP)
        for e, lo, hi in zip(estimates, low, high)
    ]


def poisson_tables(
    true_codes, pred_codes, n_labels: int, *, seed: int, row_start: int, n_resamples: int
) -> np.ndarray:
    """Per-replicate Poisson-weighted confusion matrices of one partition.

    Parameters
    ----------
    true_codes, pred_codes : int arrays of shape (n_rows,)
        Label codes in ``range(n_labels)``.
    n_labels : int
    seed, row_start, n_resamples
        As :func:`poisson_sums`: the same global rows get the same weights.

    Returns
    -------
    ndarray of shape (n_resamples, n_labels, n_labels)
        Replicate b's sum of row weights per (true, predicted) cell. Tables of
        partitions add up to those of all rows, in any order.
    """
    t = np.asarray(true_codes, dtype=np.intp)
    p = np.asarray(pred_codes, dtype=np.intp)
    w = poisson_weights(seed, row_start, t.size, n_resamples)
    cell = t * n_labels + p
    order = np.argsort(cell, kind="stable")
    cells, starts = np.unique(cell[order], return_index=True)
    out = np.zeros((n_resamples, n_labels * n_labels))
    if cells.size:
        out[:, cells] = np.add.reduceat(w[order], starts, axis=0).T
    return out.reshape(n_resamples, n_labels, n_labels)


def poisson_table_intervals(
    confusion, tables, statistics, *, confidence: float = 0.95
) -> dict[str, Interval]:
    """Percentile intervals of statistics of confusion matrices (method "poisson-bootstrap").

    ``confusion`` (L, L) is the plain table of all rows, for the estimates;
    ``tables`` (B, L, L) the merged replicate tables of :func:`poisson_tables`;
    ``statistics`` maps names to functions of stacks of tables, as
    :data:`nbcli.reports.metrics.CONFUSION_METRICS`. Replicates on which a
    statistic is undefined are left out.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence}")
    c = np.asarray(confusion, dtype=float)
    alpha = (1.0 - confidence) / 2.0
    out = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        for name, f in statistics.items():
            estimate = float(f(c[np.newaxis])[0])
            r = np.asarray(f(np.asarray(tables, dtype=float)), dtype=float)
            r = r[np.isfinite(r)]
            if r.size == 0 or not math.isfinite(estimate):
                out[name] = no_interval(estimate)
                continue
            low, high = np.quantile(r, [alpha, 1.0 - alpha])
            out[name] = Interval(estimate, float(low), float(high), POISSON_BOOTSTRAP)
    return out
