"""Vectorised bootstrap confidence intervals (BCa, with a percentile fallback).

The interval is the bias-corrected and accelerated (BCa) bootstrap interval
(Efron, "Better bootstrap confidence intervals", JASA 82, 1987; Efron and
Tibshirani, *An Introduction to the Bootstrap*, 1993, sec. 14.3): the
percentile interval taken at the levels

    alpha_1 = Phi(z0 + (z0 + z[alpha]) / (1 - a (z0 + z[alpha])))
    alpha_2 = Phi(z0 + (z0 + z[1 - alpha]) / (1 - a (z0 + z[1 - alpha])))

with ``alpha = (1 - confidence) / 2`` and ``z[q]`` the standard normal
quantile, where the bias correction ``z0`` is the normal quantile of the fraction of
resampled statistics below the estimate (ties counted half, as
``scipy.stats.bootstrap``) and the acceleration ``a`` comes from the jackknife
(leave-one-out) values of the statistic. Where BCa is undefined - all
resampled statistics equal (e.g. 100% accuracy), zero jackknife variance, or a
non-finite ``z0`` - the plain percentile interval is used instead, and the
interval says so in its ``method``.

Resampling is done on the cheapest sufficient representation:

* statistics of a table of counts (a confusion matrix, an agreement table)
  are resampled as multinomial draws over its non-empty cells (a row
  resample only changes how many rows fall in each cell), and their
  jackknife takes one value per non-empty cell, weighted by the cell's
  count;
* the confusion-matrix metrics (:class:`~nbcli.reports.metrics.MarginMetric`)
  need only per-label hits, support and predicted counts: each resample is
  reduced to those three vectors with ``numpy.bincount``, and the jackknife
  updates the per-label sums for the at most two labels a left-out row
  touches. This is the one path for confusion matrices; it draws what whole
  tables draw (:func:`resampled_statistics`), so the intervals equal theirs
  up to rounding. With L labels, m non-empty cells (m <= min(n, L**2)) and B
  resamples the work is O(B (m + L)), in blocks of bounded size, where whole
  tables would cost O(B L**2) (300 labels: 1.6 s as tables, 0.14 s as
  margins);
* a table of counts is drawn in two steps: first how many resampled rows
  fall in the "correct" cells (the diagonal of a confusion matrix, the
  "A right" row of an agreement table), one binomial draw per resample made
  before anything else, then how they spread over the cells on each side
  (two multinomials). That is the same multinomial distribution, and it makes
  a model's accuracy the same function of the same draws in ``evaluate`` and
  in ``compare``: on the same rows and seed, one interval;
* means of per-row values (log-loss, Brier score), in
  :mod:`nbcli.reports.means`: with at most
  :data:`~nbcli.reports.means.EXACT_VALUES` resampled values (n rows times B resamples) rows are
  resampled exactly, columns sharing one matrix of row indices. Beyond that
  (300,000 rows x 1,000 resamples took 2.2 s) each column is cut into about
  :data:`~nbcli.reports.means.GROUPS` groups of neighbouring values of about
  equal size (placed in O(n) by a histogram of the values' float64 bit
  patterns, bins a factor 1 + 2**-7 wide joined at the quantiles of their
  cumulative counts; :func:`~nbcli.reports.means.value_groups`); a resample draws how many
  rows fall in each group (a multinomial, as for tables) and sums
  ``c_g mean_g`` over the groups, plus a normal term of variance
  ``sum_g c_g var_g`` for the spread of values within the groups (the
  central limit theorem for the ``c_g`` draws within group g, about n / 256
  of them). The variance of the resampled mean is then exact in expectation
  and the skew between groups is kept; only the skew within groups of
  neighbouring values is lost. By the first term of the Edgeworth expansion
  that moves an interval end by about ``lost * skew * (z**2 - 1) / (6
  sqrt(n))`` standard errors, ``lost`` being the share of the third cumulant
  within groups: 1e-4 for a million log-losses of an eight-class model, and
  0.012 for 100,000 log-normal values (sigma 1.2, 0.009 with 1,024 groups),
  where the Monte Carlo error of an end at 1,000 resamples is about 0.085.
  Jackknife values have a closed form
  and are exact either way.

One ``numpy.random.Generator`` drives all draws, so the same seed gives the
same intervals. Beyond the exact sizes every draw depends on the rows only
through sums that add across parts (the confusion counts, and per bin of
neighbouring values the sums of :class:`nbcli.reports.means.ValueBins`), so
an evaluation over parts draws the same intervals (:mod:`nbcli.engines.sums`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from nbcli.reports.metrics import MarginMetric, confusion_margins, json_number

# Resampled arrays are built this many values at a time, to bound memory.
_CHUNK_VALUES = 2_000_000

# Resamples per call of the generator when drawing tables (see draw_tables).
_DRAW_BLOCK = 64

BCA = "BCa"
PERCENTILE = "percentile"
NONE = "none"


INTERVAL_SCHEMA: dict = {
    "type": "object",
    "required": ["value", "lower", "upper", "method"],
    "additionalProperties": False,
    "properties": {
        "value": {"type": ["number", "null"]},
        "lower": {"type": ["number", "null"]},
        "upper": {"type": ["number", "null"]},
        "method": {"enum": ["BCa", "percentile", "DeLong", "none"]},
    },
}
"""JSON Schema of :meth:`Interval.to_dict` (null: undefined)."""


@dataclass(frozen=True)
class Interval:
    """A point estimate with a two-sided confidence interval.

    ``method`` is "BCa", "percentile" (BCa undefined for this sample) or
    "none" (no resampling; ``lower`` and ``upper`` are NaN). NaN values
    serialise as null.
    """

    value: float
    lower: float
    upper: float
    method: str

    def to_dict(self) -> dict:
        return {
            "value": json_number(self.value),
            "lower": json_number(self.lower),
            "upper": json_number(self.upper),
            "method": self.method,
        }


def no_interval(value: float) -> Interval:
    """An estimate without an interval (zero resamples, or an undefined estimate)."""
    return Interval(float(value), math.nan, math.nan, NONE)


# The standard normal of the standard library (its quantile is Wichura's
# AS 241, accurate to about 1e-16), so that evaluate does not import SciPy.
_NORMAL = NormalDist()


def ndtri(p: float) -> float:
    """Standard normal quantile; -inf at 0 and +inf at 1, as ``scipy.special.ndtri``."""
    if not p > 0.0:
        return -math.inf if p == 0.0 else math.nan
    if not p < 1.0:
        return math.inf if p == 1.0 else math.nan
    return _NORMAL.inv_cdf(p)


def ndtr(z: float) -> float:
    """Standard normal distribution function, as ``scipy.special.ndtr``."""
    return math.nan if math.isnan(z) else _NORMAL.cdf(z)


def _check_confidence(confidence: float) -> None:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence}")


def percentile_interval(
    estimate: float, replicates, *, confidence: float = 0.95, method: str = PERCENTILE
) -> Interval:
    """Percentile interval: the (1 -/+ confidence)/2 quantiles of the resampled statistics.

    ``replicates`` has shape (n_resamples,); non-finite values are ignored.
    Quantiles interpolate linearly, as ``scipy.stats.bootstrap``. ``method``
    names the resampling in the interval (another scheme's replicates take
    the same quantiles).
    """
    _check_confidence(confidence)
    r = np.asarray(replicates, dtype=float)
    r = r[np.isfinite(r)]
    if not math.isfinite(estimate) or r.size == 0:
        return no_interval(estimate)
    alpha = (1.0 - confidence) / 2.0
    lower, upper = np.quantile(r, [alpha, 1.0 - alpha])
    return Interval(float(estimate), float(lower), float(upper), method)


def bca_interval(
    estimate: float,
    replicates,
    jackknife=None,
    *,
    confidence: float = 0.95,
    jackknife_weights=None,
    acceleration: float | None = None,
) -> Interval:
    """BCa interval from resampled statistics and jackknife values.

    Parameters
    ----------
    estimate : float
        The statistic on the original sample.
    replicates : array of shape (n_resamples,)
        The statistic on each bootstrap resample. Non-finite values (a
        resample on which the statistic is undefined) are ignored.
    jackknife : array of shape (m,)
        Leave-one-out values of the statistic.
    jackknife_weights : array of shape (m,), optional
        How many rows share each jackknife value (rows in the same
        confusion-matrix cell give the same value); default 1 each.
    confidence : float
        Two-sided confidence level in (0, 1).
    acceleration : float, optional
        The acceleration, when known in closed form (for a mean, see
        :func:`nbcli.reports.means.mean_acceleration`), instead of
        ``jackknife``; NaN when it is undefined.

    Returns the percentile interval instead when BCa is undefined (see the
    module docstring). Raises ValueError for a confidence outside (0, 1).
    """
    _check_confidence(confidence)
    r = np.asarray(replicates, dtype=float)
    r = r[np.isfinite(r)]
    if not math.isfinite(estimate) or r.size == 0:
        return no_interval(estimate)
    # Resampled statistics that differ only by rounding are equal: BCa needs spread.
    if np.ptp(r) <= 64 * np.finfo(float).eps * max(1.0, abs(estimate)):
        return percentile_interval(estimate, r, confidence=confidence)

    below = np.count_nonzero(r < estimate) + np.count_nonzero(r <= estimate)
    z0 = float(ndtri(below / (2.0 * r.size)))

    if acceleration is None:
        accel = _jackknife_acceleration(jackknife, jackknife_weights)
    else:
        accel = float(acceleration)
    if not (math.isfinite(z0) and math.isfinite(accel)):
        return percentile_interval(estimate, r, confidence=confidence)

    z_alpha = float(ndtri((1.0 - confidence) / 2.0))
    levels = []
    for z in (z_alpha, -z_alpha):
        num = z0 + z
        levels.append(float(ndtr(z0 + num / (1.0 - accel * num))))
    if not all(math.isfinite(x) for x in levels):
        return percentile_interval(estimate, r, confidence=confidence)
    lower, upper = np.quantile(r, levels)
    return Interval(float(estimate), float(lower), float(upper), BCA)


def _jackknife_acceleration(jackknife, weights) -> float:
    """BCa's acceleration from jackknife values (NaN when they have no spread)."""
    jk = np.asarray(jackknife, dtype=float)
    w = np.ones_like(jk) if weights is None else np.asarray(weights, dtype=float)
    ok = np.isfinite(jk) & (w > 0)
    jk, w = jk[ok], w[ok]
    if jk.size == 0:
        return math.nan
    # Acceleration from the jackknife (Efron & Tibshirani 1993, sec. 14.3);
    # the (n - 1) factors of the textbook form cancel in the ratio.
    # Sums by NumPy rather than BLAS dot products, whose rounding depends on
    # how many BLAS threads run: the same rows and seed give the same interval.
    d = np.sum(w * jk) / w.sum() - jk
    spread = np.sum(w * d * d)
    if not (spread > 0 and math.isfinite(spread)):
        return math.nan
    return float(np.sum(w * d * d * d) / (6.0 * spread**1.5))


def _chunks(n_resamples: int, row_size: int, budget: int = _CHUNK_VALUES):
    step = max(1, budget // max(1, row_size))
    for start in range(0, n_resamples, step):
        yield min(step, n_resamples - start)


# --------------------------------------------------------------------------
# Statistics of a table of counts (confusion matrix, agreement table)


def draw_tables(cell_counts, correct, n_resamples: int, rng: np.random.Generator, step: int):
    """Multinomial resamples of the cells of a table, in blocks of ``step`` resamples.

    ``cell_counts`` (m,) are the counts of the non-empty cells, ``correct``
    (m,) bool marks the cells drawn as one group first: for every resample,
    the number of rows in them is ``Binomial(n, n_correct / n)``, all drawn
    before any other draw, then each side is spread over its cells by a
    multinomial. This is the multinomial over all cells, drawn so that the
    accuracy (the first group's share) depends only on ``n``, ``n_correct``
    and the generator state, whatever the rest of the table.

    Yields int64 arrays of shape (size, m), ``size <= step``. The generator
    is called in blocks of :data:`_DRAW_BLOCK` resamples whatever ``step``
    is, so every caller draws the same resamples from the same state.
    """
    counts = np.asarray(cell_counts, dtype=np.int64)
    correct = np.asarray(correct, dtype=bool)
    n = int(counts.sum())
    n_right = int(counts[correct].sum())
    right = rng.binomial(n, n_right / n, size=n_resamples)
    sides = [(correct, right, n_right), (~correct, n - right, n - n_right)]
    step = max(1, step)
    for start in range(0, n_resamples, _DRAW_BLOCK):
        stop = min(n_resamples, start + _DRAW_BLOCK)
        drawn = np.zeros((stop - start, counts.size), dtype=np.int64)
        for cells, totals, total in sides:
            if total > 0:
                drawn[:, cells] = rng.multinomial(totals[start:stop], counts[cells] / total)
        for lo in range(0, stop - start, step):
            yield drawn[lo : lo + step]


def _diagonal(shape) -> np.ndarray:
    """Row-major mask of the diagonal cells of a square table (all False otherwise)."""
    mask = np.zeros(shape, dtype=bool)
    if len(shape) == 2 and shape[0] == shape[1]:
        np.fill_diagonal(mask, True)
    return mask.ravel()


Statistic = Callable[[np.ndarray], np.ndarray]


def resampled_statistics(
    counts,
    statistics: Mapping[str, Statistic],
    n_resamples: int,
    rng: np.random.Generator,
    correct=None,
) -> dict[str, np.ndarray]:
    """Statistics of bootstrap resamples of a table of counts.

    Resampling the n rows behind a table of counts with replacement is the
    same as drawing the table from a multinomial with the observed cell
    frequencies, so only the cells are drawn (by :func:`draw_tables`).

    Parameters
    ----------
    counts : int array of any shape (e.g. (L, L)), total n > 0
    statistics : {name: f} with ``f`` mapping a stack of tables of shape
        (B, *counts.shape) to values of shape (B,)
    n_resamples : int
    rng : numpy.random.Generator
    correct : bool array of the shape of ``counts``, optional
        The cells whose total is drawn first (see :func:`draw_tables`);
        default the diagonal of a square table.

    Returns {name: array of shape (n_resamples,)}.
    """
    c = np.asarray(counts)
    flat = c.ravel()
    cells = np.flatnonzero(flat)
    first = _diagonal(c.shape) if correct is None else np.asarray(correct, dtype=bool).ravel()
    out: dict[str, list] = {name: [] for name in statistics}
    step = max(1, _CHUNK_VALUES // max(1, flat.size))
    for drawn in draw_tables(flat[cells], first[cells], n_resamples, rng, step):
        size = drawn.shape[0]
        tables = np.zeros((size, flat.size))
        tables[:, cells] = drawn
        tables = tables.reshape((size,) + c.shape)
        for name, f in statistics.items():
            out[name].append(np.asarray(f(tables), dtype=float))
    return {name: np.concatenate(v) if v else np.zeros(0) for name, v in out.items()}


def jackknife_statistics(
    counts, statistics: Mapping[str, Statistic]
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Leave-one-out values of statistics of a table of counts.

    Leaving out a row removes one count from its cell, so there is one
    jackknife value per non-empty cell, shared by the rows in it.

    Returns ``({name: values of shape (m,)}, weights of shape (m,))`` with m
    the number of non-empty cells and the weights their counts.
    """
    c = np.asarray(counts)
    flat = c.ravel()
    cells = np.flatnonzero(flat)
    parts: dict[str, list] = {name: [] for name in statistics}
    start = 0
    # One table per non-empty cell: built in blocks so that memory stays
    # bounded however many cells there are.
    for size in _chunks(cells.size, flat.size):
        block = cells[start : start + size]
        tables = np.tile(flat.astype(float), (size, 1))
        tables[np.arange(size), block] -= 1.0
        tables = tables.reshape((size,) + c.shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            for name, f in statistics.items():
                parts[name].append(np.asarray(f(tables), dtype=float))
        start += size
    values = {name: np.concatenate(v) if v else np.zeros(0) for name, v in parts.items()}
    return values, flat[cells].astype(float)


def bootstrap_count_statistics(
    counts,
    statistics: Mapping[str, Statistic],
    *,
    n_resamples: int,
    confidence: float,
    rng: np.random.Generator,
    correct=None,
) -> dict[str, Interval]:
    """BCa intervals for statistics of a table of counts (see :func:`resampled_statistics`).

    ``correct`` marks the cells drawn first (default the diagonal of a square
    table). ``n_resamples=0`` gives estimates without intervals (method "none").
    """
    _check_confidence(confidence)
    c = np.asarray(counts)
    with np.errstate(divide="ignore", invalid="ignore"):
        estimates = {
            name: float(f(c[np.newaxis].astype(float))[0]) for name, f in statistics.items()
        }
    if n_resamples <= 0 or c.sum() == 0:
        return {name: no_interval(v) for name, v in estimates.items()}
    with np.errstate(divide="ignore", invalid="ignore"):
        replicates = resampled_statistics(c, statistics, n_resamples, rng, correct)
    jackknife, weights = jackknife_statistics(c, statistics)
    return _bca_intervals(estimates, replicates, jackknife, weights, confidence)


# --------------------------------------------------------------------------
# Confusion-matrix metrics through per-label margins


def _occupied_cells(confusion):
    """Non-empty cells of an (L, L) confusion matrix: true label, predicted label and count, each (m,)."""
    c = np.asarray(confusion)
    if c.ndim != 2 or c.shape[0] != c.shape[1]:
        raise ValueError(f"a confusion matrix must be square, got shape {c.shape}")
    flat = c.ravel()
    cells = np.flatnonzero(flat)
    true, predicted = np.divmod(cells, c.shape[1])
    return true, predicted, flat[cells]


def resampled_margin_statistics(
    confusion, metrics: Mapping[str, MarginMetric], n_resamples: int, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """Metrics of bootstrap resamples of a confusion matrix, through per-label margins.

    Draws exactly what :func:`resampled_statistics` draws (:func:`draw_tables`
    over the non-empty cells, same generator calls), so the same generator state
    gives the same resamples; each is reduced to per-label hits, support and
    predicted counts (shape (B, L)) by ``numpy.bincount`` over the cells'
    labels, offset per resample. Memory is O(m + L) per resample in blocks
    of bounded size, with m the number of non-empty cells.

    Parameters
    ----------
    confusion : int array of shape (L, L), total n > 0
    metrics : {name: MarginMetric}
    n_resamples : int
    rng : numpy.random.Generator

    Returns {name: array of shape (n_resamples,)}. Raises ValueError for a
    matrix that is not square.
    """
    true, predicted, counts = _occupied_cells(confusion)
    n_labels = np.asarray(confusion).shape[1]
    on_diagonal = true == predicted
    hit_labels = true[on_diagonal]
    out: dict[str, list] = {name: [] for name in metrics}
    # A block holds the draws (m per resample) and a few (B, L) margin and
    # term arrays; a quarter of the table path's budget keeps the peak at
    # some tens of MB.
    step = max(1, (_CHUNK_VALUES // 4) // (counts.size + n_labels))
    for drawn in draw_tables(counts, on_diagonal, n_resamples, rng, step):
        size = drawn.shape[0]
        offsets = (n_labels * np.arange(size))[:, np.newaxis]
        weights = drawn.ravel().astype(float)
        shape = (size, n_labels)
        support = np.bincount((true + offsets).ravel(), weights=weights, minlength=size * n_labels)
        predicted_counts = np.bincount(
            (predicted + offsets).ravel(), weights=weights, minlength=size * n_labels
        )
        support, predicted_counts = support.reshape(shape), predicted_counts.reshape(shape)
        del weights
        hits = np.zeros(shape)
        hits[:, hit_labels] = drawn[:, on_diagonal]
        del drawn
        for name, metric in metrics.items():
            out[name].append(
                np.asarray(metric.from_margins(hits, support, predicted_counts), dtype=float)
            )
    return {name: np.concatenate(v) if v else np.zeros(0) for name, v in out.items()}


def jackknife_margin_statistics(
    confusion, metrics: Mapping[str, MarginMetric]
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """Leave-one-out values of confusion-matrix metrics, one per non-empty cell.

    Leaving out a row of cell (t, p) lowers the support of t and the
    predicted count of p by one, and the hits of t by one when t == p; only
    the per-label terms of t and p change, so each sum over labels is
    updated in O(1): ``sum - terms(before) + terms(after)`` for those labels.
    The values equal those of :func:`jackknife_statistics` up to rounding,
    in O(m + L) time and memory.

    Returns ``({name: values of shape (m,)}, weights of shape (m,))`` in the
    cell order of :func:`jackknife_statistics` (row-major), the weights being
    the cells' counts. Raises ValueError for a matrix that is not square.
    """
    true, predicted, counts = _occupied_cells(confusion)
    hits, support, predicted_counts = confusion_margins(confusion)
    n = support.sum()
    hit = (true == predicted).astype(float)
    off_diagonal = true != predicted
    true_before = (hits[true], support[true], predicted_counts[true])
    true_after = (hits[true] - hit, support[true] - 1.0, predicted_counts[true] - hit)
    # For t == p the predicted label is the true label, already updated above;
    # its second update is masked out below.
    pred_before = (hits[predicted], support[predicted], predicted_counts[predicted])
    pred_after = (hits[predicted], support[predicted], predicted_counts[predicted] - 1.0)

    def terms(metric, margins):
        return [np.asarray(g, dtype=float) for g in metric.terms(*margins)]

    values = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        for name, metric in metrics.items():
            sums = [
                total.sum() - was_t + now_t + np.where(off_diagonal, now_p - was_p, 0.0)
                for total, was_t, now_t, was_p, now_p in zip(
                    terms(metric, (hits, support, predicted_counts)),
                    terms(metric, true_before),
                    terms(metric, true_after),
                    terms(metric, pred_before),
                    terms(metric, pred_after),
                )
            ]
            values[name] = np.asarray(metric.combine(n - 1.0, *sums), dtype=float)
    return values, counts.astype(float)


def bootstrap_confusion_metrics(
    confusion,
    metrics: Mapping[str, MarginMetric],
    *,
    n_resamples: int,
    confidence: float,
    rng: np.random.Generator,
) -> dict[str, Interval]:
    """BCa intervals for metrics of a confusion matrix of shape (L, L), for any L.

    Through :func:`resampled_margin_statistics` and
    :func:`jackknife_margin_statistics`, which draw the resamples
    :func:`bootstrap_count_statistics` draws from ``rng`` and give its
    intervals up to rounding. ``n_resamples=0`` or a matrix of fewer than
    2 rows gives estimates without intervals (method "none").

    Raises ValueError for a confidence outside (0, 1) or a matrix that is
    not square.
    """
    _check_confidence(confidence)
    c = np.asarray(confusion)
    if c.ndim != 2 or c.shape[0] != c.shape[1]:
        raise ValueError(f"a confusion matrix must be square, got shape {c.shape}")
    margins = confusion_margins(c)
    with np.errstate(divide="ignore", invalid="ignore"):
        estimates = {name: float(metric.from_margins(*margins)) for name, metric in metrics.items()}
        if n_resamples <= 0 or c.sum() < 2:
            # One row resampled is that row again: as the mean losses, no interval.
            return {name: no_interval(v) for name, v in estimates.items()}
        replicates = resampled_margin_statistics(c, metrics, n_resamples, rng)
    jackknife, weights = jackknife_margin_statistics(c, metrics)
    return _bca_intervals(estimates, replicates, jackknife, weights, confidence)


def method_summary(intervals: Mapping[str, Interval]) -> str:
    """One line naming the interval methods used, e.g. "BCa", "DeLong" or
    "BCa (percentile for: accuracy; DeLong for: roc_auc)".

    BCa leads where any interval has it, else the method of most intervals;
    every other method is
    listed with the metrics that took it. Intervals of method "none" are not
    named unless no interval has another method.
    """
    methods = {k: iv.method for k, iv in intervals.items() if iv.method != NONE}
    if not methods:
        return NONE
    used = list(dict.fromkeys(methods.values()))
    lead = BCA if BCA in used else max(used, key=lambda m: sum(v == m for v in methods.values()))
    others = [
        f"{m} for: {', '.join(k for k, v in methods.items() if v == m)}" for m in used if m != lead
    ]
    return f"{lead} ({'; '.join(others)})" if others else lead


def _bca_intervals(estimates, replicates, jackknife, weights, confidence) -> dict:
    """One BCa interval per named statistic, from its estimate, replicates and jackknife values."""
    return {
        name: bca_interval(
            value,
            replicates[name],
            jackknife[name],
            jackknife_weights=weights,
            confidence=confidence,
        )
        for name, value in estimates.items()
    }
