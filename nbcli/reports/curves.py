"""ROC and precision-recall curves from threshold counts.

The curve of one class from the false- and true-positive counts at each
distinct score (:func:`nbcli.reports.ranking.threshold_counts`, or
:func:`nbcli.reports.ranking_columns.rank_column` for a whole column): kept
apart from both so that neither imports the other.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Curve", "pr_curve_from_counts", "roc_curve_from_counts"]


@dataclass(frozen=True)
class Curve:
    """Points of one class's ROC or precision-recall curve, in drawing order.

    ``x`` and ``y`` are the false-positive and true-positive rates (ROC) or
    the recall and precision (precision-recall); ``thresholds`` the score at
    which each point is reached (for ROC the first is ``inf``, the empty
    selection; for precision-recall the last point, recall 0 and precision 1,
    has none, so ``thresholds`` is one shorter); ``area`` the ROC AUC or the
    average precision (NaN when undefined).
    """

    kind: str
    x: np.ndarray
    y: np.ndarray
    thresholds: np.ndarray
    area: float

    def to_dict(self) -> dict:
        def plain(values):
            return [float(v) if np.isfinite(v) else None for v in values]

        names = ("fpr", "tpr") if self.kind == "roc" else ("recall", "precision")
        return {
            names[0]: plain(self.x),
            names[1]: plain(self.y),
            "thresholds": plain(self.thresholds),
            "area": float(self.area) if np.isfinite(self.area) else None,
        }


def roc_curve_from_counts(fps, tps, thresholds, *, drop_intermediate=True) -> Curve:
    """The ROC curve of :func:`nbcli.reports.ranking.binary_roc_curve` from the counts of :func:`nbcli.reports.ranking.threshold_counts`."""
    if fps.size == 0:
        nothing = np.array([np.nan])
        return Curve("roc", nothing, nothing, np.array([np.inf]), float("nan"))
    if drop_intermediate and fps.size > 2:
        corner = np.r_[True, np.logical_or(np.diff(fps, 2), np.diff(tps, 2)), True]
        fps, tps, thresholds = fps[corner], tps[corner], thresholds[corner]
    fps, tps = np.r_[0.0, fps], np.r_[0.0, tps]
    thresholds = np.r_[np.inf, thresholds]
    fpr = fps / fps[-1] if fps[-1] > 0 else np.full(fps.shape, np.nan)
    tpr = tps / tps[-1] if tps[-1] > 0 else np.full(tps.shape, np.nan)
    area = float(np.trapezoid(tpr, fpr)) if fps[-1] > 0 and tps[-1] > 0 else float("nan")
    return Curve("roc", fpr, tpr, thresholds, area)


def pr_curve_from_counts(fps, tps, thresholds) -> Curve:
    """The curve of :func:`nbcli.reports.ranking.binary_precision_recall_curve` from the counts of
    :func:`nbcli.reports.ranking.threshold_counts`."""
    if fps.size == 0:
        return Curve("pr", np.array([0.0]), np.array([1.0]), np.array([]), float("nan"))
    predicted = tps + fps
    precision = np.divide(tps, predicted, out=np.zeros_like(tps), where=predicted != 0)
    if tps[-1] > 0:
        recall = tps / tps[-1]
    else:
        recall = np.full(tps.shape, np.nan)
    precision = np.r_[precision[::-1], 1.0]
    recall = np.r_[recall[::-1], 0.0]
    if tps[-1] > 0:
        area = float(max(0.0, -np.sum(np.diff(recall) * precision[:-1])))
    else:
        area = float("nan")
    return Curve("pr", recall, precision, thresholds[::-1], area)
