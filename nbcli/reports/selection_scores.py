"""Scores of out-of-fold posteriors for model selection: a fold of ``nbcli cv``,
a combination of ``nbcli tune``.

:func:`~nbcli.reports.evaluation.build_evaluation` makes a whole report:
curves, calibration bins, the per-class table and intervals by resampling.
A fold's row in ``cv`` shows only the point estimates of its metrics, and a
combination's row in ``tune`` only the metrics a search compares, so
:func:`selection_scores` computes just those:

* the confusion-matrix metrics (accuracy, balanced accuracy, macro-F1,
  Cohen's kappa) from the confusion matrix, with, when asked, the BCa
  interval ``evaluate`` gives them (resampled through the matrix's margins,
  a few milliseconds; the same draws for the same seed);
* log-loss and the Brier score, the means of per-row values, with, when
  asked, the normal-approximation interval ``mean +- z s / sqrt(n)`` (method
  ``normal``; ``s`` the rows' standard deviation, the lower end kept at 0,
  where both losses start) instead of resampling the rows, which at 300,000
  rows costs a third of a second per metric;
* the ranking metrics (ROC AUC macro and weighted, average precision) only
  when asked for, from one sort of each column they average, as point
  estimates (method ``none``).

Every point estimate equals the one ``build_evaluation`` reports for the
same rows, bit for bit: the same functions compute it.

NumPy only: no file I/O, no printing.
"""

from __future__ import annotations

import math
import warnings
from statistics import NormalDist

import numpy as np

from nbcli.reports.bootstrap import Interval, bootstrap_confusion_metrics, no_interval
from nbcli.reports.means import bootstrap_means
from nbcli.reports.metrics import (
    MARGIN_METRICS,
    LabelCoding,
    brier_per_row,
    confusion_matrix,
    log_loss_per_row,
    predicted_codes,
)
from nbcli.reports.ranking_summary import RANKING_KEYS

NORMAL = "normal"
"""Interval method of a mean's normal approximation (see the module docstring)."""

CHEAP_KEYS = ("accuracy", "balanced_accuracy", "macro_f1", "cohen_kappa", "log_loss", "brier")
"""Metrics computed in time linear in the rows, whatever else is asked for."""


def normal_mean_interval(values: np.ndarray, confidence: float) -> Interval:
    """Mean of ``values`` (n_samples,) with ``mean +- z s / sqrt(n)``, the lower end at least 0.

    ``z`` is the standard normal quantile at ``(1 + confidence) / 2`` and
    ``s`` the standard deviation with ``n - 1`` degrees of freedom: the
    interval of the central limit theorem, for non-negative per-row losses.
    Fewer than two rows give no interval (method ``none``).
    """
    values = np.asarray(values, dtype=float)
    mean = float(values.mean()) if values.size else math.nan
    if values.size < 2:
        return no_interval(mean)
    z = NormalDist().inv_cdf((1.0 + confidence) / 2.0)
    half = z * float(values.std(ddof=1)) / math.sqrt(values.size)
    return Interval(mean, max(0.0, mean - half), mean + half, NORMAL)


def selection_scores(
    coding: LabelCoding,
    proba,
    *,
    ranking: bool = True,
    n_resamples: int = 0,
    confidence: float = 0.95,
    seed: int | None = 0,
    pos_label=None,
) -> dict[str, Interval]:
    """The metrics of one set of posteriors, as a model-selection row needs them.

    Parameters
    ----------
    coding : LabelCoding
        The true labels coded against the model's classes
        (:func:`nbcli.reports.metrics.encode_labels`).
    proba : ndarray of shape (n_samples, n_classes)
        Posterior probabilities, in the column order of the classes.
    ranking : bool
        Also the ranking metrics (one sort per column they average).
    n_resamples : int
        0: point estimates only (method ``none``). Otherwise the resamples of
        the confusion-matrix metrics' BCa interval; the losses take the
        normal interval and the ranking metrics none (module docstring).
    confidence : float
        Two-sided coverage of the intervals, in (0, 1).
    seed : int or None
        Seed of the resamples (``numpy.random.default_rng(seed)``, drawn as
        ``evaluate`` draws its first).
    pos_label : optional
        With two classes, the class whose average precision is reported
        (``--pos-label``); default the second, as ``evaluate`` takes it.

    Returns
    -------
    dict of str to Interval
        :data:`CHEAP_KEYS`, then (with ``ranking``) ``roc_auc``,
        ``roc_auc_weighted`` and ``average_precision``, in the order of
        :data:`nbcli.reports.evaluation.METRIC_KEYS`; each value equals the
        one :func:`~nbcli.reports.evaluation.build_evaluation` gives.

    Raises
    ------
    ValueError
        For a confidence outside (0, 1), or a ``pos_label`` that is not one
        of two classes.
    """
    from nbcli.reports.evaluation import positive_column

    positive = positive_column(coding.labels[: coding.n_classes], pos_label)
    proba = np.asarray(proba, dtype=float)
    pred = predicted_codes(proba)
    confusion = confusion_matrix(coding.codes, pred, len(coding.labels))
    rng = np.random.default_rng(seed)
    metrics = bootstrap_confusion_metrics(
        confusion, MARGIN_METRICS, n_resamples=n_resamples, confidence=confidence, rng=rng
    )
    known = coding.known
    # Without unseen labels (the rule in cv and tune) no row is left out:
    # nothing is copied.
    every_row = bool(known.all())
    # As build_evaluation takes them: per-row values on every row (an unseen
    # label pointed at class 0), then the known rows.
    codes = coding.codes if every_row else np.where(known, coding.codes, 0)
    losses = {
        "log_loss": log_loss_per_row(proba, codes),
        "brier": brier_per_row(proba, codes),
    }
    if not every_row:
        losses = {key: values[known] for key, values in losses.items()}
    means = bootstrap_means(losses, n_resamples=0, confidence=confidence, rng=rng)
    for key, estimate in means.items():
        if n_resamples > 0:
            interval = normal_mean_interval(losses[key], confidence)
            # The mean as evaluate takes it (columns stacked), to the last bit.
            metrics[key] = Interval(estimate.value, interval.lower, interval.upper, interval.method)
        else:
            metrics[key] = estimate
    if ranking:
        ranked_codes, ranked_proba = codes, proba
        if not every_row:
            # np.compress: a boolean index of a row-major matrix of a few
            # columns copies several times slower.
            ranked_codes, ranked_proba = codes[known], np.compress(known, proba, axis=0)
        if positive == 0:
            # As build_evaluation ranks them: the second column is the positive one.
            ranked_codes, ranked_proba = 1 - ranked_codes, ranked_proba[:, ::-1]
        metrics.update(ranking_point_estimates(ranked_codes, ranked_proba))
    return metrics


def ranking_point_estimates(codes: np.ndarray, proba: np.ndarray) -> dict[str, Interval]:
    """ROC AUC (macro and weighted) and average precision without intervals, as
    :func:`~nbcli.reports.ranking_summary.ranking_metrics` estimates them;
    NaN for no rows. Classes left out of an average are not reported here."""
    from nbcli.reports.ranking_summary import ranking_metrics

    if codes.size == 0:
        return dict.fromkeys(RANKING_KEYS, no_interval(math.nan))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # The evaluation's own function without resamples: the same sort, the
        # same areas to the last bit, and no generator drawn from.
        metrics, _, _, _ = ranking_metrics(
            codes, proba, n_resamples=0, confidence=0.95, rng=np.random.default_rng(0)
        )
    return {key: no_interval(metrics[key].value) for key in RANKING_KEYS}
