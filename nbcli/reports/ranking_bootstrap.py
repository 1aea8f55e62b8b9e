"""Bootstrap intervals for ROC AUC and average precision, one sort per class.

A bootstrap resample of rows is the original rows weighted by how often each
was drawn, and a ranking metric of weighted rows needs only cumulative sums
of the weights in score order (see :func:`nbcli.reports.ranking.threshold_counts`).
So each class's column is sorted once, and every resample costs O(n) per
class instead of a sort: with B resamples, n rows and k classes the work is
O(k n log n + B k n), in blocks of bounded size.

Rows are resampled as :func:`nbcli.reports.means.resampled_means`
resamples them (``rng.integers(0, n, size=(B, n))`` in the same blocks), so
the same generator state gives the same resamples as the other per-row
statistics of a report.

Intervals: ROC AUC (macro and weighted) gets the BCa interval, its jackknife
(leave-one-out) values in closed form from DeLong's placement values
(removing positive ``i`` of class ``c`` gives ``(m AUC_c - V10_i) / (m - 1)``,
removing a negative ``(n AUC_c - V01_j) / (n - 1)``); average precision has
no such form, so it gets the percentile interval. In a resample where a
class has no row (or no other row) the class is left out of that resample's
average, as in the point estimate.

NumPy and SciPy only: no file I/O, no printing.
"""

from __future__ import annotations

import numpy as np

from nbcli.reports.bootstrap import (
    Interval,
    _check_confidence,
    _chunks,
    bca_interval,
    no_interval,
    percentile_interval,
)
from nbcli.reports.delong import placements
from nbcli.reports.ranking import average_precision, check_scores, roc_auc, roc_auc_weighted

RANKING_METRICS = ("roc_auc", "roc_auc_weighted", "average_precision")


def _columns(k: int) -> list[int]:
    return [1] if k == 2 else list(range(k))


def _class_curves(pos: np.ndarray, score: np.ndarray, weights: np.ndarray):
    """(auc, ap, positives) of one column for each row of ``weights`` (B, n)."""
    order = np.argsort(score, kind="stable")[::-1]
    s = score[order]
    ends = np.flatnonzero(np.diff(s))
    w = weights[:, order]
    tp = np.cumsum(w * pos[order], axis=1)
    total = np.cumsum(w, axis=1)
    if ends.size < s.size - 1:  # ties: one point per run of equal scores
        last = np.r_[ends, s.size - 1]
        tp, total = tp[:, last], total[:, last]
    fp = total - tp
    positives, negatives = tp[:, -1], fp[:, -1]
    d_tp = np.diff(tp, axis=1, prepend=0.0)
    d_fp = np.diff(fp, axis=1, prepend=0.0)
    # Trapezoid on the counts, then scaled: the area under (fp, tp) is
    # sum d_fp * (tp - d_tp / 2), and AUC is that over positives * negatives.
    area = np.sum(d_fp * (tp - 0.5 * d_tp), axis=1)
    precision = np.divide(tp, total, out=np.zeros_like(tp), where=total > 0)
    gain = np.sum(d_tp * precision, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        auc = area / (positives * negatives)
        ap = gain / positives
    auc[(positives <= 0) | (negatives <= 0)] = np.nan
    ap[positives <= 0] = np.nan
    return auc, ap, positives


def _mean_defined(values: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Row-wise weighted mean over the finite entries; NaN where none."""
    ok = np.isfinite(values) & (weights > 0)
    w = np.where(ok, weights, 0.0)
    total = w.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (np.where(ok, values, 0.0) * w).sum(axis=1)
        return np.where(total > 0, out / np.where(total > 0, total, 1.0), np.nan)


def ranking_replicates(true_codes, proba, weights) -> dict[str, np.ndarray]:
    """ROC AUC (macro and weighted) and average precision for many row weightings.

    Parameters
    ----------
    true_codes : array-like of int, shape (n_samples,)
    proba : array-like of float, shape (n_samples, n_classes)
    weights : array-like of float, shape (n_weightings, n_samples)
        Non-negative row weights, e.g. bootstrap counts.

    Returns
    -------
    dict
        ``{name: ndarray of shape (n_weightings,)}`` for the names in
        :data:`RANKING_METRICS`; entry ``b`` equals the function of the same
        name in :mod:`nbcli.reports.ranking` with ``sample_weight=weights[b]``
        (to rounding), NaN where no class is defined.
    """
    codes, proba, _ = check_scores(true_codes, proba)
    w = np.asarray(weights, dtype=np.float64)
    if w.ndim != 2 or w.shape[1] != codes.size:
        raise ValueError(f"weights must have shape (n_weightings, {codes.size}), got {w.shape}")
    columns = _columns(proba.shape[1])
    aucs, aps, sizes = [], [], []
    for c in columns:
        auc, ap, positives = _class_curves(codes == c, proba[:, c], w)
        aucs.append(auc)
        aps.append(ap)
        sizes.append(positives)
    auc_b, ap_b, size_b = (np.column_stack(x) for x in (aucs, aps, sizes))
    ones = np.ones_like(auc_b)
    return {
        "roc_auc": _mean_defined(auc_b, ones),
        "roc_auc_weighted": auc_b[:, 0] if len(columns) == 1 else _mean_defined(auc_b, size_b),
        "average_precision": _mean_defined(ap_b, ones),
    }


def resampled_ranking(
    true_codes, proba, n_resamples: int, rng: np.random.Generator
) -> dict[str, np.ndarray]:
    """:func:`ranking_replicates` of ``n_resamples`` bootstrap resamples of the rows."""
    codes, proba, _ = check_scores(true_codes, proba)
    n = codes.size
    out: dict[str, list] = {name: [] for name in RANKING_METRICS}
    for size in _chunks(n_resamples, n):
        idx = rng.integers(0, n, size=(size, n), dtype=np.intp)
        offsets = (np.arange(size) * n)[:, None]
        counts = np.bincount((idx + offsets).ravel(), minlength=size * n).reshape(size, n)
        for name, values in ranking_replicates(codes, proba, counts).items():
            out[name].append(values)
    return {k: np.concatenate(v) if v else np.zeros(0) for k, v in out.items()}


def jackknife_roc_auc(true_codes, proba) -> dict[str, np.ndarray]:
    """Leave-one-out ROC AUC, macro and weighted, shape (n_samples,) each.

    Closed form from DeLong's placement values; NaN for a row whose removal
    leaves no class defined.
    """
    codes, proba, _ = check_scores(true_codes, proba)
    n = codes.size
    columns = _columns(proba.shape[1])
    loo = np.full((n, len(columns)), np.nan)
    size = np.zeros((n, len(columns)))
    for j, c in enumerate(columns):
        pos = codes == c
        p = placements(pos, proba[:, c])
        m, q = int(pos.sum()), int((~pos).sum())
        if not np.isfinite(p.auc):
            continue
        if m > 1:
            loo[pos, j] = (m * p.auc - p.v10) / (m - 1)
        if q > 1:
            loo[~pos, j] = (q * p.auc - p.v01) / (q - 1)
        size[:, j] = m - pos
    return {
        "roc_auc": _mean_defined(loo, np.ones_like(loo)),
        "roc_auc_weighted": loo[:, 0] if len(columns) == 1 else _mean_defined(loo, size),
    }


def bootstrap_ranking(
    true_codes,
    proba,
    *,
    n_resamples: int,
    confidence: float,
    rng: np.random.Generator,
    estimates: dict[str, float] | None = None,
) -> dict[str, Interval]:
    """Bootstrap intervals for the ranking metrics of :mod:`nbcli.reports.ranking`.

    Parameters
    ----------
    true_codes : array-like of int, shape (n_samples,)
    proba : array-like of float, shape (n_samples, n_classes)
    n_resamples : int
        Bootstrap resamples; 0 gives point estimates only (method ``none``).
    confidence : float
        Two-sided coverage, in (0, 1).
    rng : numpy.random.Generator
    estimates : dict, optional
        The point estimates, when the caller has them
        (:func:`nbcli.reports.ranking.ranking_estimates`); computed otherwise.

    Returns
    -------
    dict
        ``{"roc_auc", "roc_auc_weighted", "average_precision": Interval}``:
        BCa for the ROC AUCs (percentile where BCa is undefined), percentile
        for average precision. Point estimates are those of
        :mod:`nbcli.reports.ranking` (which warns about excluded classes).
    """
    _check_confidence(confidence)
    codes, proba, _ = check_scores(true_codes, proba)
    if estimates is None:
        estimates = {
            "roc_auc": roc_auc(codes, proba),
            "roc_auc_weighted": roc_auc_weighted(codes, proba),
            "average_precision": average_precision(codes, proba),
        }
    if n_resamples <= 0 or codes.size < 2:
        return {k: no_interval(v) for k, v in estimates.items()}
    replicates = resampled_ranking(codes, proba, n_resamples, rng)
    jackknife = jackknife_roc_auc(codes, proba)
    out = {
        k: bca_interval(estimates[k], replicates[k], jackknife[k], confidence=confidence)
        for k in ("roc_auc", "roc_auc_weighted")
    }
    out["average_precision"] = percentile_interval(
        estimates["average_precision"], replicates["average_precision"], confidence=confidence
    )
    return out
