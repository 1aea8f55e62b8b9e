"""Ranking metrics from posterior probabilities: ROC AUC, average precision, curves.

A ranking metric asks how well the posterior probability of a class orders
the rows of that class above the others, whatever the decision threshold.

* ROC curve: the true-positive rate against the false-positive rate as the
  threshold falls through the distinct scores; its area (ROC AUC) is the
  probability that a random positive row scores above a random negative one,
  ties counting one half (Hanley and McNeil, "The meaning and use of the area
  under a receiver operating characteristic (ROC) curve", Radiology 143, 1982).
* Average precision: the precision at each threshold weighted by the gain in
  recall there, ``AP = sum_n (R_n - R_(n-1)) P_n``, with no interpolation
  (the step integral of the precision-recall curve).

With two classes (``proba`` has two columns) both are taken on the second
class (column 1) as the positive class. With more, one-vs-rest: each class
against all others on its own column, then averaged over classes (``macro``),
or, for :func:`roc_auc_weighted`, weighted by the number of rows of each
class (its prevalence).

Rows with equal scores share one threshold, so ties are handled exactly as
``sklearn.metrics.roc_curve``, ``precision_recall_curve``, ``roc_auc_score``
and ``average_precision_score`` handle them: the same descending sort
(stable with weights; without, any order of tied rows gives the same integer
counts), the same cumulative sums and the same trapezoid, so the values
agree with scikit-learn's to rounding (the tests check 1e-12).

Undefined classes. A class's ROC AUC needs at least one row of the class and
one of another; its average precision needs one row of the class. A class
without them gets NaN in the per-class arrays and is left out of the macro
and weighted averages, with an :class:`ExcludedClassWarning` naming it
(scikit-learn instead returns NaN for the whole ROC average and counts the
class's average precision as 0). When no class is defined the average is NaN.

NumPy only: no file I/O, no printing.
"""

from __future__ import annotations

import warnings

import numpy as np

from nbcli.reports.curves import Curve, pr_curve_from_counts, roc_curve_from_counts
from nbcli.reports.ranking_columns import rank_column


class ExcludedClassWarning(UserWarning):
    """A class was left out of an averaged ranking metric because the metric is
    undefined for it (no rows of the class, or, for ROC AUC, no other rows).

    ``columns`` are the classes' columns of the posteriors and ``metric`` the
    metric's name; :meth:`text` says it with the classes' labels.
    """

    def __init__(self, metric: str, columns):
        self.metric = metric
        self.columns = [int(c) for c in columns]
        super().__init__(self.text())

    def text(self, labels=None) -> str:
        """The warning, naming the classes by ``labels[column]`` when given."""
        if labels is None:
            which = f"class column(s) {self.columns}"
        else:
            names = ", ".join(repr(str(labels[c])) for c in self.columns)
            which = f"{'class' if len(self.columns) == 1 else 'classes'} {names}"
        return (
            f"{self.metric} is undefined for {which} (no rows of the class or none of the "
            "others); left out of the average"
        )


# --------------------------------------------------------------------------
# Input checks


def check_scores(true_codes, proba, sample_weight=None):
    """Validated ``(true_codes, proba, sample_weight)`` as NumPy arrays.

    Parameters
    ----------
    true_codes : array-like of int, shape (n_samples,)
        True class of each row as a column index into ``proba``.
    proba : array-like of float, shape (n_samples, n_classes)
        Posterior probabilities (any scores that order rows will do).
    sample_weight : array-like of float, shape (n_samples,), optional
        Non-negative row weights; ``None`` weighs every row 1.

    Raises
    ------
    ValueError
        On mismatched shapes, fewer than two columns, codes outside
        ``[0, n_classes)``, non-finite scores, or negative or non-finite weights.
    """
    proba = np.asarray(proba, dtype=np.float64)
    if proba.ndim != 2 or proba.shape[1] < 2:
        raise ValueError(f"proba must have shape (n_samples, n_classes >= 2), got {proba.shape}")
    codes = np.asarray(true_codes)
    if codes.shape != (proba.shape[0],):
        raise ValueError(f"true_codes has shape {codes.shape}, expected ({proba.shape[0]},)")
    if codes.size and not np.issubdtype(codes.dtype, np.integer):
        raise ValueError(f"true_codes must be integer class indices, got dtype {codes.dtype}")
    codes = codes.astype(np.intp, copy=False)
    if codes.size and (codes.min() < 0 or codes.max() >= proba.shape[1]):
        raise ValueError(f"true_codes must lie in [0, {proba.shape[1]})")
    if not np.isfinite(proba).all():
        raise ValueError("proba contains NaN or infinite values")
    if sample_weight is not None:
        sample_weight = np.asarray(sample_weight, dtype=np.float64)
        if sample_weight.shape != codes.shape:
            raise ValueError(
                f"sample_weight has shape {sample_weight.shape}, expected {codes.shape}"
            )
        if not np.isfinite(sample_weight).all() or (sample_weight < 0).any():
            raise ValueError("sample_weight must be finite and non-negative")
    return codes, proba, sample_weight


# --------------------------------------------------------------------------
# One binary problem


def threshold_counts(is_positive, score, sample_weight=None):
    """(Weighted) false and true positives at each distinct score, highest first.

    The rows are sorted by decreasing score; a threshold sits at the last
    row of each run of equal scores, so tied rows enter together and the
    counts do not depend on how ties are ordered (weighted rows are sorted
    stably, as scikit-learn, so that their sums add in its order).

    Parameters
    ----------
    is_positive : array-like of bool, shape (n_samples,)
    score : array-like of float, shape (n_samples,)
    sample_weight : array-like of float, shape (n_samples,), optional
        Rows of weight zero are dropped first, as scikit-learn does.

    Returns
    -------
    fps, tps : ndarray of float, shape (n_thresholds,)
        Cumulative (weighted) counts of negative and positive rows scoring at
        or above each threshold.
    thresholds : ndarray of float, shape (n_thresholds,)
        The distinct scores, decreasing.
    """
    y = np.asarray(is_positive, dtype=bool)
    s = np.asarray(score, dtype=np.float64)
    w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    if w is not None:
        keep = w != 0
        y, s, w = y[keep], s[keep], w[keep]
    if y.size == 0:
        return np.zeros(0), np.zeros(0), np.zeros(0)
    if w is None:
        # Whole counts do not depend on the order of tied rows: one unstable sort.
        ranks = rank_column(y, s, counts=True)
        assert ranks.fps is not None and ranks.tps is not None and ranks.thresholds is not None
        return ranks.fps, ranks.tps, ranks.thresholds
    order = np.argsort(s, kind="stable")[::-1]
    s, y = s[order], y[order].astype(np.float64)
    last = np.r_[np.flatnonzero(np.diff(s)), y.size - 1]
    w = w[order]
    tps = np.cumsum(y * w)[last]
    fps = np.cumsum((1 - y) * w)[last]
    return fps, tps, s[last]


def binary_roc_curve(is_positive, score, sample_weight=None, *, drop_intermediate=True) -> Curve:
    """ROC curve of one binary problem, as ``sklearn.metrics.roc_curve``.

    ``drop_intermediate`` leaves out points on a straight segment between
    their neighbours (they change neither the drawing nor the area). The area
    is NaN, and so are the rates, when the rows have no positive or no
    negative (weight).
    """
    fps, tps, thresholds = threshold_counts(is_positive, score, sample_weight)
    return roc_curve_from_counts(fps, tps, thresholds, drop_intermediate=drop_intermediate)


def binary_precision_recall_curve(is_positive, score, sample_weight=None) -> Curve:
    """Precision-recall curve of one binary problem, as
    ``sklearn.metrics.precision_recall_curve``, with its average precision.

    Points run from the lowest threshold (recall 1) to the highest and end at
    recall 0, precision 1. With no positive (weight) the recall and the
    average precision are NaN.
    """
    fps, tps, thresholds = threshold_counts(is_positive, score, sample_weight)
    return pr_curve_from_counts(fps, tps, thresholds)


# --------------------------------------------------------------------------
# Per class (one-vs-rest) and averages


def _columns(n_classes: int) -> range:
    # With two classes the second is the positive one, as scikit-learn's
    # binary scores; one-vs-rest of the first column would add nothing.
    return range(1, 2) if n_classes == 2 else range(n_classes)


def roc_curves(true_codes, proba, sample_weight=None, *, drop_intermediate=True) -> list[Curve]:
    """One-vs-rest ROC curve of every class (column of ``proba``), in column order.

    Every class gets a curve, including the first of two (whose area is one
    minus the second's, up to ties made by rounding). See
    :func:`check_scores` for the arguments.
    """
    codes, proba, w = check_scores(true_codes, proba, sample_weight)
    return [
        binary_roc_curve(codes == c, proba[:, c], w, drop_intermediate=drop_intermediate)
        for c in range(proba.shape[1])
    ]


def precision_recall_curves(true_codes, proba, sample_weight=None) -> list[Curve]:
    """One-vs-rest precision-recall curve of every class, in column order."""
    codes, proba, w = check_scores(true_codes, proba, sample_weight)
    return [
        binary_precision_recall_curve(codes == c, proba[:, c], w) for c in range(proba.shape[1])
    ]


def class_curves(
    true_codes, proba, sample_weight=None, *, columns=None
) -> tuple[list[Curve], list[Curve]]:
    """The ROC and precision-recall curves of every class, one sort of each column.

    Equal to ``(roc_curves(...), precision_recall_curves(...))``, which sort
    every column twice. ``columns`` (column indices) limits them to those
    classes, in that order. See :func:`check_scores` for the arguments.
    """
    codes, proba, w = check_scores(true_codes, proba, sample_weight)
    roc, pr = [], []
    for c in range(proba.shape[1]) if columns is None else columns:
        counts = threshold_counts(codes == c, proba[:, c], w)
        roc.append(roc_curve_from_counts(*counts))
        pr.append(pr_curve_from_counts(*counts))
    return roc, pr


def per_class_roc_auc(true_codes, proba, sample_weight=None) -> np.ndarray:
    """One-vs-rest ROC AUC of each class, shape (n_classes,); NaN where undefined.

    Parameters
    ----------
    true_codes : array-like of int, shape (n_samples,)
    proba : array-like of float, shape (n_samples, n_classes)
    sample_weight : array-like of float, shape (n_samples,), optional

    Returns
    -------
    ndarray of float, shape (n_classes,)
        Entry ``c`` is the AUC of column ``c`` for separating class ``c``
        from the rest, NaN when there is no row (weight) of the class or none
        of the others.
    """
    return np.array([c.area for c in roc_curves(true_codes, proba, sample_weight)])


def per_class_average_precision(true_codes, proba, sample_weight=None) -> np.ndarray:
    """One-vs-rest average precision of each class, shape (n_classes,); NaN
    for a class with no row (weight)."""
    return np.array([c.area for c in precision_recall_curves(true_codes, proba, sample_weight)])


def _average(scores: np.ndarray, weights: np.ndarray, columns: range, metric: str) -> float:
    scores = scores[list(columns)]
    weights = weights[list(columns)]
    undefined = np.isnan(scores)
    if undefined.any():
        left_out = [columns[i] for i in np.flatnonzero(undefined)]
        warnings.warn(ExcludedClassWarning(metric, left_out), stacklevel=3)
    scores, weights = scores[~undefined], weights[~undefined]
    if scores.size == 0 or weights.sum() <= 0:
        return float("nan")
    return float(np.average(scores, weights=weights))


def class_average(per_class: np.ndarray, weights: np.ndarray, metric: str) -> float:
    """Average of per-class values as :func:`roc_auc` and :func:`average_precision` take it.

    ``per_class`` and ``weights`` have one entry per column of the posteriors;
    with two columns only the second counts. Undefined (NaN) classes are left
    out with an :class:`ExcludedClassWarning` naming ``metric``.
    """
    return _average(np.asarray(per_class), np.asarray(weights), _columns(len(per_class)), metric)


def _class_weights(codes, n_classes: int, w) -> np.ndarray:
    return np.bincount(codes, weights=w, minlength=n_classes).astype(np.float64)


def roc_auc(true_codes, proba, sample_weight=None) -> float:
    """ROC AUC: of column 1 with two classes, else the one-vs-rest macro average.

    Equals ``sklearn.metrics.roc_auc_score(y, proba[:, 1])`` for two classes
    and ``roc_auc_score(y, proba, multi_class="ovr", average="macro")`` for
    more (to rounding), except that classes where the AUC is undefined are
    left out of the average with an :class:`ExcludedClassWarning` (NaN when
    none is left).

    Parameters
    ----------
    true_codes : array-like of int, shape (n_samples,)
        True class of each row as a column index into ``proba``.
    proba : array-like of float, shape (n_samples, n_classes)
        Posterior probabilities.
    sample_weight : array-like of float, shape (n_samples,), optional
        Non-negative row weights.

    Returns
    -------
    float
        In [0, 1], or NaN.

    Raises
    ------
    ValueError
        On malformed input (see :func:`check_scores`).
    """
    codes, proba, w = check_scores(true_codes, proba, sample_weight)
    k = proba.shape[1]
    return _average(per_class_roc_auc(codes, proba, w), np.ones(k), _columns(k), "ROC AUC")


def roc_auc_weighted(true_codes, proba, sample_weight=None) -> float:
    """One-vs-rest ROC AUC averaged with weights the classes' (weighted) row
    counts, as ``roc_auc_score(y, proba, multi_class="ovr", average="weighted")``.

    Equals :func:`roc_auc` with two classes. Arguments, result and errors as
    :func:`roc_auc`.
    """
    codes, proba, w = check_scores(true_codes, proba, sample_weight)
    k = proba.shape[1]
    if k == 2:
        return roc_auc(codes, proba, w)
    weights = _class_weights(codes, k, w)
    return _average(per_class_roc_auc(codes, proba, w), weights, _columns(k), "ROC AUC")


def average_precision(true_codes, proba, sample_weight=None) -> float:
    """Average precision: of column 1 with two classes, else the one-vs-rest macro average.

    Equals ``sklearn.metrics.average_precision_score(y == 1, proba[:, 1])``
    for two classes and ``average_precision_score(label_binarize(y), proba,
    average="macro")`` for more, except that a class with no rows is left out
    of the average (with an :class:`ExcludedClassWarning`) where scikit-learn
    counts it as 0. Arguments, result and errors as :func:`roc_auc`.
    """
    codes, proba, w = check_scores(true_codes, proba, sample_weight)
    k = proba.shape[1]
    return _average(
        per_class_average_precision(codes, proba, w), np.ones(k), _columns(k), "average precision"
    )


def ranking_estimates(true_codes, proba, sample_weight=None, *, curves=None) -> dict[str, float]:
    """:func:`roc_auc`, :func:`roc_auc_weighted` and :func:`average_precision` together.

    Each of those sorts every column again; here the columns they average
    (the second of two, else all) are sorted once, or not at all when
    ``curves`` holds :func:`class_curves` of every column. The values are
    the same, and so are the :class:`ExcludedClassWarning` messages.

    Returns
    -------
    dict
        ``{"roc_auc", "roc_auc_weighted", "average_precision": float}``.
    """
    codes, proba, w = check_scores(true_codes, proba, sample_weight)
    k = proba.shape[1]
    columns = _columns(k)
    if curves is None:
        # Areas only, one column at a time: no curve of many points is kept.
        auc, ap = np.full(k, np.nan), np.full(k, np.nan)
        for c in columns:
            counts = threshold_counts(codes == c, proba[:, c], w)
            auc[c] = roc_curve_from_counts(*counts).area
            ap[c] = pr_curve_from_counts(*counts).area
    else:
        auc = np.array([c.area for c in curves[0]])
        ap = np.array([c.area for c in curves[1]])
    ones = np.ones(k)
    weights = ones if k == 2 else _class_weights(codes, k, w)
    return {
        "roc_auc": _average(auc, ones, columns, "ROC AUC"),
        "roc_auc_weighted": _average(auc, weights, columns, "ROC AUC"),
        "average_precision": _average(ap, ones, columns, "average precision"),
    }
