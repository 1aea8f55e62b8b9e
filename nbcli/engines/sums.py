"""Per-part evaluation sums, for evaluation over parts.

Every point figure of an evaluation is a function of a few sums over rows:
the confusion counts, the summed log-loss and Brier score, and per
calibration bin the count, summed confidence and summed hits. Those add
across parts, so each part computes them on its worker and only the sums
travel.

So do the intervals of a one-file evaluation beyond
:data:`~nbcli.reports.means.EXACT_VALUES` rows x resamples, as
:func:`nbcli.workflows.evaluate_parts.evaluate_parts` takes them: the
confusion-matrix metrics resample the cells of the summed confusion
matrix, and the log-loss and Brier score resample groups of neighbouring
values, whose sizes, means and variances come from the per-bin sums of
:class:`~nbcli.reports.means.ValueBins`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np

from nbcli.reports.means import ValueBins
from nbcli.reports.metrics import brier_per_row, confusion_matrix, log_loss_per_row
from nbcli.reports.reliability import assign_bins, bin_sums


@dataclass
class EvaluationSums:
    """Sums over rows that evaluation figures and their intervals are made of.

    Attributes
    ----------
    n_rows : int
        Rows, all counted in the confusion matrix.
    n_scored : int
        Rows whose true label is one of the model's classes: the rows that
        losses and calibration are taken over (as in a local evaluation).
    confusion : ndarray of shape (L, L)
        Counts, rows true labels and columns predicted labels.
    log_loss_sum, brier_sum : float
        Summed per-row log-loss (nats) and multiclass Brier score.
    bin_count, bin_confidence, bin_hits : ndarray of shape (n_bins,)
        Per reliability bin of the top-class confidence: rows, summed
        confidence, rows whose prediction was right.
    log_loss_bins, brier_bins : ValueBins
        The scored rows' log-losses and Brier scores by bin of neighbouring
        values, for the grouped resampling of their means.
    """

    n_rows: int
    n_scored: int
    confusion: np.ndarray
    log_loss_sum: float
    brier_sum: float
    bin_count: np.ndarray
    bin_confidence: np.ndarray
    bin_hits: np.ndarray
    log_loss_bins: ValueBins
    brier_bins: ValueBins

    def merge(self, other: EvaluationSums) -> EvaluationSums:
        """Sums of the rows of both (field by field)."""
        return EvaluationSums(
            **{f.name: getattr(self, f.name) + getattr(other, f.name) for f in fields(self)}
        )

    __add__ = merge

    # -- point figures ---------------------------------------------------------
    @property
    def log_loss(self) -> float:
        """Mean log-loss in nats; NaN for no rows."""
        return self.log_loss_sum / self.n_scored if self.n_scored else math.nan

    @property
    def brier_score(self) -> float:
        """Mean multiclass Brier score; NaN for no rows."""
        return self.brier_sum / self.n_scored if self.n_scored else math.nan

    @property
    def accuracy(self) -> float:
        return float(np.trace(self.confusion)) / self.n_rows if self.n_rows else math.nan

    def ece(self) -> float:
        """Expected calibration error of the top-class confidence over the bins."""
        return float(_ece(self.bin_count, self.bin_confidence, self.bin_hits))


def _ece(count, conf, hits):
    """ECE = sum_b (n_b / n) |hits_b / n_b - conf_b / n_b| over the last axis."""
    n = count.sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.abs(hits - conf).sum(axis=-1) / n


def evaluation_sums(
    proba: np.ndarray,
    true_codes: np.ndarray,
    n_labels: int,
    *,
    edges: np.ndarray,
) -> EvaluationSums:
    """Evaluation sums of one chunk of scored rows.

    Parameters
    ----------
    proba : ndarray of shape (n_rows, n_classes)
        Posterior probabilities, classes in model order.
    true_codes : ndarray of int, shape (n_rows,)
        Index of each row's true label among ``n_labels`` labels (the model's
        classes first, then labels it never saw).
    n_labels : int
    edges : ndarray of shape (n_bins + 1,)
        Reliability bin edges, fixed before any part is read (e.g. uniform).

    Raises
    ------
    ValueError
        For probabilities outside the bin edges.
    """
    proba = np.asarray(proba, dtype=float)
    t = np.asarray(true_codes, dtype=np.intp)
    n = len(t)
    n_bins = len(edges) - 1
    pred = np.argmax(proba, axis=1) if n else np.zeros(0, np.intp)
    # Losses and calibration leave out rows of labels the model never saw,
    # as a local evaluation does; those rows count in the confusion matrix.
    known = t < proba.shape[1]
    pk, tk = proba[known], t[known]
    m = len(tk)
    ll = log_loss_per_row(pk, tk) if m else np.zeros(0)
    br = brier_per_row(pk, tk) if m else np.zeros(0)
    confidence = pk[np.arange(m), pred[known]] if m else np.zeros(0)
    hit = (pred[known] == tk).astype(float)
    bins = assign_bins(confidence, edges)
    count, conf, hits = bin_sums(bins, confidence, hit, n_bins)
    return EvaluationSums(
        n_rows=n,
        n_scored=m,
        confusion=confusion_matrix(t, pred, n_labels),
        log_loss_sum=float(ll.sum()),
        brier_sum=float(br.sum()),
        bin_count=count.astype(np.int64),
        bin_confidence=conf,
        bin_hits=hits,
        log_loss_bins=ValueBins.of(ll),
        brier_bins=ValueBins.of(br),
    )
