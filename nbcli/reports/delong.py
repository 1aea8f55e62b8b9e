"""Confidence intervals for ROC AUC by DeLong's method.

DeLong, DeLong and Clarke-Pearson ("Comparing the areas under two or more
correlated receiver operating characteristic curves: a nonparametric
approach", Biometrics 44, 1988) treat the AUC of ``m`` positive scores ``X``
and ``n`` negative scores ``Y`` as a two-sample U-statistic with kernel
``psi(x, y) = 1 if x > y, 1/2 if x == y, 0 if x < y``. Its structural
components (placement values)

    V10_i = mean_j psi(X_i, Y_j)        (one per positive)
    V01_j = mean_i psi(X_i, Y_j)        (one per negative)

both average to the AUC, and its variance is estimated by

    Var(AUC) = S10 / m + S01 / n,

with ``S10`` and ``S01`` the sample variances (divisor ``m - 1``, ``n - 1``)
of the components. Sun and Xu ("Fast implementation of DeLong's algorithm
for comparing the areas under correlated receiver operating characteristic
curves", IEEE Signal Processing Letters 21, 2014) obtain every component from
midranks, in O(n log n) instead of O(m n): with ``Tz`` the midranks in the
pooled sample and ``Tx``, ``Ty`` those within the positives and negatives,

    V10_i = (Tz_i - Tx_i) / n,    V01_j = 1 - (Tz_j - Ty_j) / m.

The interval is the plain (Wald) one, ``AUC +/- z sqrt(Var)``, clipped to
[0, 1], as in pROC's ``ci.auc(method = "delong")``; ``transform="logit"``
takes it on the logit scale instead (``logit(AUC) +/- z sqrt(Var) /
(AUC (1 - AUC))``, mapped back), which stays inside (0, 1) and covers better
near 1, and falls back to the plain interval where the AUC is 0 or 1.

One-vs-rest. Each class's AUC is its column's AUC with the class as
positives and all other rows as negatives, and its variance is DeLong's. An
average of class AUCs (the macro ROC AUC, or the prevalence-weighted one)
needs their covariances as well; they are taken from the same components:
each row's contribution to class ``c``'s AUC is

    D_c(i) = (V10_i - AUC_c) / m_c    for a row of class c,
             (V01_i - AUC_c) / n_c    otherwise,

and ``Cov(AUC_c, AUC_d) = sum_i D_c(i) D_d(i)`` for ``c != d`` (the
influence-function estimate for independent rows, of which DeLong's variance
is the small-sample corrected diagonal). The weights of the average are
taken as fixed. Classes whose AUC is undefined are left out, as in
:mod:`nbcli.reports.ranking`.

Scores only order the rows; sample weights are not supported here.

NumPy and SciPy only: no file I/O, no printing.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.special import expit, logit, ndtri

from nbcli.reports.bootstrap import Interval, no_interval
from nbcli.reports.ranking import ExcludedClassWarning, check_scores

DELONG = "DeLong"
TRANSFORMS = ("plain", "logit")


@dataclass(frozen=True)
class Placements:
    """DeLong's structural components of one AUC.

    ``v10`` has one entry per positive row, ``v01`` one per negative row, in
    the order the rows were given; ``auc`` is their common mean.
    """

    auc: float
    v10: np.ndarray
    v01: np.ndarray

    @property
    def variance(self) -> float:
        """DeLong's ``S10 / m + S01 / n``; NaN with fewer than two positives or negatives."""
        m, n = self.v10.size, self.v01.size
        if m < 2 or n < 2:
            return float("nan")
        return float(np.var(self.v10, ddof=1) / m + np.var(self.v01, ddof=1) / n)


def placements(is_positive, score) -> Placements:
    """DeLong's components of the AUC of ``score`` for ``is_positive``, by midranks.

    Parameters
    ----------
    is_positive : array-like of bool, shape (n_samples,)
    score : array-like of float, shape (n_samples,)

    Returns
    -------
    Placements
        With ``auc`` NaN (and empty components on one side) when there is no
        positive or no negative row.

    Notes
    -----
    O(n log n) time (Sun and Xu 2014); ties between a positive and a negative
    count one half, so ``auc`` equals the trapezoidal area under the ROC curve.
    """
    pos = np.asarray(is_positive, dtype=bool)
    s = np.asarray(score, dtype=np.float64)
    x, y = s[pos], s[~pos]
    m, n = x.size, y.size
    if m == 0 or n == 0:
        return Placements(float("nan"), np.full(m, np.nan), np.full(n, np.nan))
    # One sort serves all three rankings: the positives (and the negatives)
    # taken in pooled sorted order are themselves sorted.
    pooled = np.concatenate([x, y])
    order = np.argsort(pooled, kind="stable")
    ordered = pooled[order]
    is_x = order < m
    tz = np.empty(m + n)
    tz[order] = _midranks(ordered)
    tx = np.empty(m)
    tx[order[is_x]] = _midranks(ordered[is_x])
    ty = np.empty(n)
    ty[order[~is_x] - m] = _midranks(ordered[~is_x])
    v10 = (tz[:m] - tx) / n
    v01 = 1.0 - (tz[m:] - ty) / m
    auc = float((tz[:m].sum() - m * (m + 1) / 2.0) / (m * n))
    return Placements(auc, v10, v01)


def _midranks(ordered: np.ndarray) -> np.ndarray:
    """Midranks (1-based, ties sharing their mean rank) of an ascending array."""
    size = ordered.size
    first = np.r_[True, ordered[1:] != ordered[:-1]]
    starts = np.flatnonzero(first)
    ends = np.r_[starts[1:], size]  # one past each run of equal values
    return ((starts + 1 + ends) / 2.0)[np.cumsum(first) - 1]


def wald_interval(
    value: float, variance: float, *, confidence: float = 0.95, transform: str = "plain"
) -> Interval:
    """Normal-theory interval for an AUC from its estimated variance.

    ``transform`` is ``"plain"`` (``value +/- z sqrt(variance)``) or
    ``"logit"`` (the same on the logit scale, by the delta method); the
    bounds are clipped to [0, 1]. An undefined value or variance gives an
    interval of method ``none``.

    Raises
    ------
    ValueError
        For a confidence outside (0, 1) or an unknown transform.
    """
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence}")
    if transform not in TRANSFORMS:
        raise ValueError(f"transform must be one of {TRANSFORMS}, got {transform!r}")
    if not (math.isfinite(value) and math.isfinite(variance)):
        return no_interval(value)
    z = float(ndtri(0.5 + confidence / 2.0))
    se = math.sqrt(max(variance, 0.0))
    if transform == "logit" and 0.0 < value < 1.0:
        centre = float(logit(value))
        half = z * se / (value * (1.0 - value))
        lower, upper = float(expit(centre - half)), float(expit(centre + half))
    else:
        lower, upper = value - z * se, value + z * se
    return Interval(float(value), max(0.0, lower), min(1.0, upper), DELONG)


def delong_interval(
    is_positive, score, *, confidence: float = 0.95, transform: str = "plain"
) -> Interval:
    """ROC AUC of one binary problem with DeLong's confidence interval.

    Parameters
    ----------
    is_positive : array-like of bool, shape (n_samples,)
    score : array-like of float, shape (n_samples,)
    confidence : float
        Two-sided coverage, in (0, 1).
    transform : {"plain", "logit"}
        Scale of the normal approximation (see :func:`wald_interval`).

    Returns
    -------
    Interval
        Method ``DeLong``; ``none`` (NaN bounds) with fewer than two rows on
        either side.
    """
    p = placements(is_positive, score)
    return wald_interval(p.auc, p.variance, confidence=confidence, transform=transform)


def _contributions(p: Placements, pos: np.ndarray) -> np.ndarray:
    d = np.empty(pos.size)
    d[pos] = (p.v10 - p.auc) / p.v10.size
    d[~pos] = (p.v01 - p.auc) / p.v01.size
    return d


def ovr_covariance(true_codes, proba) -> tuple[np.ndarray, np.ndarray]:
    """One-vs-rest AUC of every class and their estimated covariance matrix.

    Parameters
    ----------
    true_codes : array-like of int, shape (n_samples,)
        True class of each row as a column index into ``proba``.
    proba : array-like of float, shape (n_samples, n_classes)

    Returns
    -------
    auc : ndarray, shape (n_classes,)
        NaN for a class with no row or no other row.
    covariance : ndarray, shape (n_classes, n_classes)
        DeLong's variances on the diagonal (NaN with fewer than two rows on a
        side), the influence-function covariances off it (see the module
        notes); rows and columns of undefined classes are NaN.
    """
    codes, proba, _ = check_scores(true_codes, proba)
    k = proba.shape[1]
    auc = np.full(k, np.nan)
    variance = np.full(k, np.nan)
    d = np.full((k, codes.size), np.nan)
    for c in range(k):
        pos = codes == c
        p = placements(pos, proba[:, c])
        auc[c], variance[c] = p.auc, p.variance
        if math.isfinite(p.auc):
            d[c] = _contributions(p, pos)
    covariance = d @ d.T
    covariance[np.diag_indices(k)] = variance
    return auc, covariance


def per_class_delong(
    true_codes, proba, *, confidence: float = 0.95, transform: str = "plain"
) -> list[Interval]:
    """One-vs-rest ROC AUC of every class (column order) with DeLong's interval."""
    codes, proba, _ = check_scores(true_codes, proba)
    return [
        delong_interval(codes == c, proba[:, c], confidence=confidence, transform=transform)
        for c in range(proba.shape[1])
    ]


def roc_auc_delong(
    true_codes,
    proba,
    *,
    weighted: bool = False,
    confidence: float = 0.95,
    transform: str = "plain",
) -> Interval:
    """ROC AUC as :func:`nbcli.reports.ranking.roc_auc` (or ``roc_auc_weighted``)
    with a DeLong interval.

    With two classes: the AUC of column 1 and DeLong's interval. With more:
    the macro (or prevalence-weighted) one-vs-rest average ``sum_c w_c AUC_c``
    and the variance ``w' C w`` from :func:`ovr_covariance`, the weights held
    fixed. Classes with an undefined AUC are left out with an
    :class:`~nbcli.reports.ranking.ExcludedClassWarning`; an undefined
    variance (a class with a single row) gives method ``none``.

    Parameters
    ----------
    true_codes : array-like of int, shape (n_samples,)
    proba : array-like of float, shape (n_samples, n_classes)
    weighted : bool
        Weigh classes by their row counts instead of equally.
    confidence : float
        Two-sided coverage, in (0, 1).
    transform : {"plain", "logit"}
        Scale of the normal approximation.
    """
    codes, proba, _ = check_scores(true_codes, proba)
    k = proba.shape[1]
    if k == 2:
        return delong_interval(codes == 1, proba[:, 1], confidence=confidence, transform=transform)
    auc, covariance = ovr_covariance(codes, proba)
    defined = np.isfinite(auc)
    if not defined.all():
        warnings.warn(
            f"ROC AUC is undefined for class column(s) {np.flatnonzero(~defined).tolist()} "
            "(no rows of the class or none of the others); they are left out of the average",
            ExcludedClassWarning,
            stacklevel=2,
        )
    weights = np.bincount(codes, minlength=k).astype(float) if weighted else np.ones(k)
    weights = np.where(defined, weights, 0.0)
    if weights.sum() <= 0:
        return no_interval(float("nan"))
    weights = weights / weights.sum()
    keep = np.flatnonzero(defined)
    w = weights[keep]
    value = float(w @ auc[keep])
    variance = float(w @ covariance[np.ix_(keep, keep)] @ w)
    return wald_interval(value, variance, confidence=confidence, transform=transform)
