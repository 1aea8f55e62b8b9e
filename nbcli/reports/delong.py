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

NumPy only (the normal quantile from the standard library): no file I/O, no printing.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from nbcli.reports.bootstrap import Interval, ndtri, no_interval
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
    """DeLong's components of the AUC of ``score`` for ``is_positive``, from one sort.

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
    O(n log n) time, one sort (Sun and Xu 2014; see
    :func:`nbcli.reports.ranking_columns.rank_column`); ties between a
    positive and a negative count one half, so ``auc`` equals the
    trapezoidal area under the ROC curve.
    """
    from nbcli.reports.ranking_columns import PLACEMENT, rank_column

    pos = np.asarray(is_positive, dtype=bool)
    ranks = rank_column(pos, score, per_row=PLACEMENT)
    assert ranks.per_row is not None
    return Placements(ranks.auc, ranks.per_row[pos], ranks.per_row[~pos])


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
        centre = math.log(value) - math.log1p(-value)
        half = z * se / (value * (1.0 - value))
        lower, upper = _expit(centre - half), _expit(centre + half)
    else:
        lower, upper = value - z * se, value + z * se
    return Interval(float(value), max(0.0, lower), min(1.0, upper), DELONG)


def _expit(x: float) -> float:
    """The logistic function, without overflow for large ``|x|``."""
    if x >= 0.0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


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
    from nbcli.reports.ranking_columns import rank_column

    ranks = rank_column(is_positive, score)
    return wald_interval(ranks.auc, ranks.variance, confidence=confidence, transform=transform)


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
    from nbcli.reports.ranking_columns import one_vs_rest

    codes, proba, _ = check_scores(true_codes, proba)
    ovr = one_vs_rest(codes, proba)
    assert ovr.covariance is not None
    return ovr.auc, ovr.covariance


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
    if proba.shape[1] == 2:
        return delong_interval(codes == 1, proba[:, 1], confidence=confidence, transform=transform)
    auc, covariance = ovr_covariance(codes, proba)
    sizes = np.bincount(codes, minlength=proba.shape[1]).astype(float)
    return averaged_auc_interval(
        auc, covariance, sizes if weighted else None, confidence=confidence, transform=transform
    )


def averaged_auc_interval(
    auc: np.ndarray,
    covariance: np.ndarray,
    weights: np.ndarray | None = None,
    *,
    confidence: float = 0.95,
    transform: str = "plain",
) -> Interval:
    """DeLong's interval of a weighted average of one-vs-rest AUCs (three or more classes).

    Parameters
    ----------
    auc : ndarray, shape (n_classes,)
        Class AUCs, NaN where undefined (left out, with an
        :class:`~nbcli.reports.ranking.ExcludedClassWarning`).
    covariance : ndarray, shape (n_classes, n_classes)
        Their covariance, as :func:`ovr_covariance` gives it.
    weights : ndarray, shape (n_classes,), optional
        Weights of the average, held fixed (e.g. the class sizes); default equal.
    confidence, transform
        As for :func:`wald_interval`.

    Returns
    -------
    Interval
        ``sum_c w_c AUC_c`` with variance ``w' C w`` (weights normalised over
        the defined classes); method ``none`` where the variance is undefined.
    """
    k = auc.size
    defined = np.isfinite(auc)
    if not defined.all():
        warnings.warn(ExcludedClassWarning("ROC AUC", np.flatnonzero(~defined)), stacklevel=3)
    weights = np.ones(k) if weights is None else np.asarray(weights, dtype=float)
    weights = np.where(defined, weights, 0.0)
    if weights.sum() <= 0:
        return no_interval(float("nan"))
    weights = weights / weights.sum()
    keep = np.flatnonzero(defined)
    w = weights[keep]
    value = float(w @ auc[keep])
    variance = float(w @ covariance[np.ix_(keep, keep)] @ w)
    return wald_interval(value, variance, confidence=confidence, transform=transform)
