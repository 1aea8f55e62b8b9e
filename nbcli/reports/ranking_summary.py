"""ROC AUC and average precision for a report: the estimates, their intervals, the curves.

:func:`ranking_metrics` chooses the interval method by cost: the bootstrap of
:mod:`nbcli.reports.ranking_bootstrap` where it is affordable, DeLong's
interval (:mod:`nbcli.reports.delong`) for ROC AUC where it is not, and
point estimates only beyond :data:`MAX_CURVE_CLASSES` classes.

NumPy only: no file I/O, no printing.
"""

from __future__ import annotations

import warnings as _warnings
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from nbcli.reports.bootstrap import Interval, no_interval
from nbcli.reports.ranking import ExcludedClassWarning

if TYPE_CHECKING:
    from nbcli.reports.ranking_columns import OneVsRest

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
    pending=None,
    labels=None,
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
    pending : callable, optional
        What :func:`start_ranking` returned for the same rows and settings:
        the class columns already being sorted.
    labels : sequence, optional
        The class of each column, to name classes in the warnings (default:
        by column index).

    Returns
    -------
    metrics : dict of str to Interval
        Keys :data:`RANKING_KEYS`; each interval names its method (``BCa``,
        ``percentile``, ``DeLong`` or ``none``).
    areas : ndarray of shape (n_classes,)
        One-vs-rest ROC AUC of every class (NaN where undefined).
    curves : (sequence of Curve, sequence of Curve)
        ROC and precision-recall curves of every class, in column order,
        drawn when first read (:class:`~nbcli.reports.ranking_columns.LazyCurves`);
        empty beyond :data:`MAX_CURVE_CLASSES` classes.
    warnings : list of str
        Classes left out of an average because the metric is undefined for
        them (no rows of the class, or none of the others).
    """
    from nbcli.reports.ranking_bootstrap import bootstrap_ranking

    codes = np.asarray(codes, dtype=np.intp)
    k = proba.shape[1]
    nan = no_interval(float("nan"))
    if codes.size == 0:
        return dict.fromkeys(RANKING_KEYS, nan), np.full(k, np.nan), ([], []), []
    if pending is None:
        from nbcli.reports.ranking import check_scores

        codes, proba, _ = check_scores(codes, proba)
    with _warnings.catch_warnings(record=True) as caught:
        _warnings.simplefilter("always")
        if k > MAX_CURVE_CLASSES:
            # Class by class, keeping only the areas: no curves, no intervals.
            metrics, areas = _many_class_ranking(codes, proba)
            curves: tuple = ([], [])
        else:
            delong = _takes_delong(codes.size, k, n_resamples, budget)
            metrics, areas, curves = _sorted_once(
                codes, proba, delong=delong, confidence=confidence, pending=pending
            )
            if not delong:
                metrics = bootstrap_ranking(
                    codes,
                    proba,
                    n_resamples=n_resamples,
                    confidence=confidence,
                    rng=rng,
                    estimates={key: metrics[key].value for key in RANKING_KEYS},
                )
    notes = list(
        dict.fromkeys(
            w.message.text(labels)
            if isinstance(w.message, ExcludedClassWarning)
            else str(w.message)
            for w in caught
        )
    )
    return {key: metrics[key] for key in RANKING_KEYS}, areas, curves, notes


def _takes_delong(n_rows: int, k: int, n_resamples: int, budget: int) -> bool:
    return n_resamples > 0 and n_resamples * n_rows * (1 if k == 2 else k) > budget


def start_ranking(
    codes, proba, *, n_resamples: int, budget: int = RANKING_BOOTSTRAP_BUDGET
) -> Callable[[], OneVsRest] | None:
    """Start sorting the class columns on threads when :func:`ranking_metrics` will take
    DeLong's intervals (it draws nothing from the generator then), else ``None``.

    The caller does other work meanwhile and passes the result to
    :func:`ranking_metrics` as ``pending``; the figures are the same as without it.
    """
    from nbcli.reports.ranking import check_scores
    from nbcli.reports.ranking_columns import start_one_vs_rest

    codes = np.asarray(codes, dtype=np.intp)
    k = np.shape(proba)[1]
    if codes.size == 0 or k > MAX_CURVE_CLASSES:
        return None
    if not _takes_delong(codes.size, k, n_resamples, budget):
        return None
    codes, proba, _ = check_scores(codes, proba)
    return start_one_vs_rest(codes, proba, columns=[1] if k == 2 else None)


def _sorted_once(
    codes: np.ndarray, proba: np.ndarray, *, delong: bool, confidence: float, pending=None
):
    """Class areas, the ranking metrics and the (lazy) curves, each class column sorted once.

    With ``delong`` the ROC AUCs take DeLong's interval and average precision
    none; otherwise the metrics are point estimates (the caller bootstraps).
    """
    from nbcli.reports.delong import averaged_auc_interval, wald_interval
    from nbcli.reports.ranking import class_average
    from nbcli.reports.ranking_columns import LazyCurves, one_vs_rest

    k = proba.shape[1]
    if pending is not None and delong:
        ovr = pending()
    else:
        ovr = one_vs_rest(codes, proba, columns=[1] if k == 2 else None, covariance=delong)
    areas = ovr.auc
    curves = (LazyCurves(codes, proba, "roc"), LazyCurves(codes, proba, "pr"))
    ap = no_interval(class_average(ovr.average_precision, np.ones(k), "average precision"))
    if not delong:
        metrics = {
            "roc_auc": no_interval(class_average(areas, np.ones(k), "ROC AUC")),
            "roc_auc_weighted": no_interval(
                class_average(areas, np.ones(k) if k == 2 else ovr.class_sizes, "ROC AUC")
            ),
            "average_precision": ap,
        }
        return metrics, areas, curves
    assert ovr.covariance is not None
    if k == 2:
        auc = wald_interval(float(areas[1]), ovr.ranks[1].variance, confidence=confidence)
        metrics = {"roc_auc": auc, "roc_auc_weighted": auc}
    else:
        metrics = {
            "roc_auc": averaged_auc_interval(areas, ovr.covariance, confidence=confidence),
            "roc_auc_weighted": averaged_auc_interval(
                areas, ovr.covariance, ovr.class_sizes, confidence=confidence
            ),
        }
    metrics["average_precision"] = ap
    return metrics, areas, curves


def _many_class_ranking(codes: np.ndarray, proba: np.ndarray):
    """Point estimates of the ranking metrics, one sort a class and no curves."""
    from nbcli.reports.ranking_columns import one_vs_rest

    k = proba.shape[1]
    ovr = one_vs_rest(codes, proba, covariance=False)
    auc, ap = ovr.auc, ovr.average_precision

    def mean(values, weights):
        ok = np.isfinite(values) & (weights > 0)
        return float(np.average(values[ok], weights=weights[ok])) if ok.any() else float("nan")

    ones = np.ones(k)
    metrics = {
        "roc_auc": no_interval(mean(auc, ones)),
        "roc_auc_weighted": no_interval(mean(auc, ovr.class_sizes)),
        "average_precision": no_interval(mean(ap, ones)),
    }
    return metrics, auc
