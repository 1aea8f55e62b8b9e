"""ROC AUC and average precision for a report: the estimates, their intervals, the curves.

:func:`ranking_metrics` chooses the interval method by cost: the bootstrap of
:mod:`nbcli.reports.ranking_bootstrap` where it is affordable, DeLong's
interval (:mod:`nbcli.reports.delong`) for ROC AUC where it is not, and
point estimates only beyond :data:`MAX_CURVE_CLASSES` classes.

NumPy and SciPy only: no file I/O, no printing.
"""

from __future__ import annotations

import warnings as _warnings

import numpy as np

from nbcli.reports.bootstrap import Interval, no_interval

RANKING_KEYS = ("roc_auc", "roc_auc_weighted", "average_precision")
"""The ranking metrics (one-vs-rest; see :mod:`nbcli.reports.ranking`)."""

MAX_CURVE_CLASSES = 50
"""Curves are kept on the report for at most this many classes (a plot of more
is unreadable, and their points would take memory in proportion to rows x classes)."""


RANKING_BOOTSTRAP_BUDGET = 20_000_000
"""Largest ``resamples x rows x scored columns`` for which the ranking metrics are
bootstrapped (about a second); above it ROC AUC takes DeLong's interval, which
costs one sort per class, and average precision, which has no such closed form,
goes without an interval."""


def ranking_metrics(
    codes,
    proba,
    *,
    n_resamples: int,
    confidence: float,
    rng: np.random.Generator,
    budget: int = RANKING_BOOTSTRAP_BUDGET,
) -> tuple[dict[str, Interval], np.ndarray, tuple[list, list], list[str]]:
    """ROC AUC (macro and weighted) and average precision with intervals, per-class
    ROC AUC and the curves.

    Parameters
    ----------
    codes : ndarray of int, shape (n_samples,)
        True class of each row as a column of ``proba`` (rows of labels the
        model never saw left out by the caller).
    proba : ndarray of float, shape (n_samples, n_classes)
        Posterior probabilities.
    n_resamples, confidence, rng
        Bootstrap settings, as for the other metrics of the report.
    budget : int
        Bootstrap when ``n_resamples * n_samples * scored columns`` is at
        most this (see :data:`RANKING_BOOTSTRAP_BUDGET`); otherwise ROC AUC
        gets DeLong's interval and average precision none.

    Returns
    -------
    metrics : dict of str to Interval
        Keys :data:`RANKING_KEYS`; each interval names its method (``BCa``,
        ``percentile``, ``DeLong`` or ``none``).
    areas : ndarray of shape (n_classes,)
        One-vs-rest ROC AUC of every class (NaN where undefined).
    curves : (list of Curve, list of Curve)
        ROC and precision-recall curves of every class, in column order;
        empty lists beyond :data:`MAX_CURVE_CLASSES` classes.
    warnings : list of str
        Classes left out of an average because the metric is undefined for
        them (no rows of the class, or none of the others).
    """
    from nbcli.reports.ranking import class_curves, ranking_estimates

    codes = np.asarray(codes, dtype=np.intp)
    k = proba.shape[1]
    nan = no_interval(float("nan"))
    if codes.size == 0:
        return dict.fromkeys(RANKING_KEYS, nan), np.full(k, np.nan), ([], []), []
    with _warnings.catch_warnings(record=True) as caught:
        _warnings.simplefilter("always")
        if k > MAX_CURVE_CLASSES:
            # Class by class, keeping only the areas: no curves, no intervals.
            metrics, areas = _many_class_ranking(codes, proba)
            curves: tuple[list, list] = ([], [])
        else:
            # One sort per column serves the curves and the point estimates.
            curves = class_curves(codes, proba)
            areas = np.array([c.area for c in curves[0]])
            estimates = ranking_estimates(codes, proba, curves=curves)
            columns = 1 if k == 2 else k
            if n_resamples <= 0:
                metrics = {key: no_interval(v) for key, v in estimates.items()}
            elif n_resamples * codes.size * columns > budget:
                from nbcli.reports.delong import roc_auc_delong

                metrics = {
                    "roc_auc": roc_auc_delong(codes, proba, confidence=confidence),
                    "roc_auc_weighted": roc_auc_delong(
                        codes, proba, weighted=True, confidence=confidence
                    ),
                    "average_precision": no_interval(estimates["average_precision"]),
                }
            else:
                from nbcli.reports.ranking_bootstrap import bootstrap_ranking

                metrics = bootstrap_ranking(
                    codes,
                    proba,
                    n_resamples=n_resamples,
                    confidence=confidence,
                    rng=rng,
                    estimates=estimates,
                )
    notes = list(dict.fromkeys(str(w.message) for w in caught))
    return {key: metrics[key] for key in RANKING_KEYS}, areas, curves, notes


def _many_class_ranking(codes: np.ndarray, proba: np.ndarray):
    """Point estimates of the ranking metrics, one class at a time (memory: one curve)."""
    from nbcli.reports.ranking import binary_precision_recall_curve, binary_roc_curve

    k = proba.shape[1]
    auc = np.array([binary_roc_curve(codes == c, proba[:, c]).area for c in range(k)])
    ap = np.array([binary_precision_recall_curve(codes == c, proba[:, c]).area for c in range(k)])
    size = np.bincount(codes, minlength=k).astype(float)

    def mean(values, weights):
        ok = np.isfinite(values) & (weights > 0)
        return float(np.average(values[ok], weights=weights[ok])) if ok.any() else float("nan")

    ones = np.ones(k)
    metrics = {
        "roc_auc": no_interval(mean(auc, ones)),
        "roc_auc_weighted": no_interval(mean(auc, size)),
        "average_precision": no_interval(mean(ap, ones)),
    }
    return metrics, auc
