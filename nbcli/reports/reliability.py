"""Reliability (calibration) bins, expected and maximum calibration error.

A reliability diagram groups predictions by their predicted probability and
compares, in each bin, the mean predicted probability ("confidence") with how
often the predicted event happened ("accuracy"). For a classifier the
probability is the top-class confidence ``max_k p_k`` and the event is "the
predicted class is right" (Guo, Pleiss, Sun and Weinberger, "On calibration
of modern neural networks", ICML 2017, sec. 2).

Bin membership: bin ``b`` holds the values in ``(edges[b], edges[b + 1]]``;
the first bin also holds its lower edge. This is the convention of
``sklearn.calibration.calibration_curve`` (``numpy.searchsorted`` with
``side="left"`` on the inner edges).

Expected calibration error (Naeini, Cooper and Hauskrecht, "Obtaining well
calibrated probabilities using Bayesian binning", AAAI 2015; Guo et al.
2017, sec. 2)::

    ECE = sum_b (n_b / n) |accuracy_b - confidence_b|

and the maximum calibration error MCE = max over non-empty bins of
``|accuracy_b - confidence_b|``.

This module also builds the report of ``nbcli calibrate``
(:class:`CalibrationReport`), and :class:`RecalibrationReport`, which holds the
report before and after fitting a calibrator in one document, with the
verdict on the cross-fitted calibrators (:class:`CalibrationVerdict`,
:func:`paired_differences`).

NumPy only: no file I/O, no printing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from nbcli.reports.bootstrap import (
    Interval,
    bca_interval,
    method_summary,
    no_interval,
)
from nbcli.reports.means import (
    EXACT_VALUES,
    bootstrap_means,
    grouped_resampled_bin_sums,
    loss_intervals,
    loss_means,
    means_generator,
)
from nbcli.reports.metrics import (
    encode_labels,
    json_label,
    json_number,
    predicted_codes,
    report_header,
    true_class_values,
)
from nbcli.reports.thresholds import mark_left_out, thresholds_member

UNIFORM = "uniform"
QUANTILE = "quantile"
EXPLICIT = "explicit"

CALIBRATION_SCHEMA_NAME = "nbcli.calibration"
RECALIBRATION_SCHEMA_NAME = "nbcli.recalibration"
SCHEMA_VERSION = 1
#: Version 2: "after" is cross-fitted, and the report carries the verdict.
RECALIBRATION_SCHEMA_VERSION = 2


# --------------------------------------------------------------------------
# Bin edges


def validate_edges(edges: Sequence[float]) -> np.ndarray:
    """Check explicit bin edges such as ``[0, 0.9, 0.99, 0.999, 1]``.

    Raises ValueError unless there are at least 2 edges, all finite, within
    [0, 1] and strictly increasing. Returns them as a float array.
    """
    try:
        e = np.asarray(edges, dtype=float).ravel()
    except (TypeError, ValueError):
        raise ValueError(f"bin edges must be numbers, got {edges!r}") from None
    if e.size < 2:
        raise ValueError(f"bin edges need at least 2 values, got {e.size}")
    if not np.all(np.isfinite(e)) or np.any((e < 0.0) | (e > 1.0)):
        raise ValueError(f"bin edges must lie within [0, 1], got {e.tolist()}")
    if np.any(np.diff(e) <= 0):
        raise ValueError(f"bin edges must be strictly increasing, got {e.tolist()}")
    return e


def bin_edges(probability, bins: int | Sequence[float] = 10, strategy: str = UNIFORM) -> np.ndarray:
    """Edges of reliability bins.

    Parameters
    ----------
    probability : array of shape (n_samples,)
        The predicted probabilities to be binned (used by "quantile" only).
    bins : int or sequence of float
        Number of bins, or explicit edges (validated by :func:`validate_edges`;
        ``strategy`` is then ignored).
    strategy : "uniform" or "quantile"
        "uniform": equal-width bins on [0, 1]. "quantile": inner edges at
        quantiles of ``probability`` so that bins hold about equal counts; the
        outer edges are 0 and 1 and repeated edges (ties) are merged, so there
        may be fewer bins than asked for.

    Raises ValueError for a non-positive number of bins or an unknown strategy.
    """
    if not isinstance(bins, (int, np.integer)):
        return validate_edges(bins)
    k = int(bins)
    if k < 1:
        raise ValueError(f"the number of bins must be at least 1, got {k}")
    if strategy == UNIFORM:
        return np.linspace(0.0, 1.0, k + 1)
    if strategy == QUANTILE:
        p = np.asarray(probability, dtype=float)
        inner = np.quantile(p, np.linspace(0.0, 1.0, k + 1)[1:-1]) if p.size else np.zeros(0)
        return np.unique(np.concatenate([[0.0], np.clip(inner, 0.0, 1.0), [1.0]]))
    raise ValueError(f"unknown binning strategy {strategy!r}; use 'uniform' or 'quantile'")


def assign_bins(probability, edges) -> np.ndarray:
    """Bin index of each probability, shape (n_samples,), for bins ``(edges[b], edges[b+1]]``.

    The first bin also takes values equal to its lower edge. Raises
    ValueError when a value lies outside ``[edges[0], edges[-1]]``.
    """
    p = np.asarray(probability, dtype=float)
    e = np.asarray(edges, dtype=float)
    outside = (p < e[0]) | (p > e[-1]) | ~np.isfinite(p)
    if np.any(outside):
        raise ValueError(
            f"{int(outside.sum())} probabilities lie outside the bin edges "
            f"[{e[0]:g}, {e[-1]:g}]; the edges must cover every predicted probability"
        )
    return np.maximum(np.searchsorted(e, p, side="left") - 1, 0)


def check_sample_size(n_samples: int, n_bins: int) -> None:
    """Raise ValueError when there are more bins than samples (as ``evaluate`` refuses)."""
    if n_bins > n_samples:
        raise ValueError(f"too few samples ({n_samples}) for {n_bins} bins; use fewer bins")


# --------------------------------------------------------------------------
# Reliability diagram


@dataclass(frozen=True)
class ReliabilityBin:
    """One bin: its edges, count, mean confidence, accuracy and gap (accuracy - confidence).

    The statistics are NaN (null in JSON) for an empty bin.
    """

    lower: float
    upper: float
    count: int
    mean_confidence: float
    accuracy: float

    @property
    def gap(self) -> float:
        return self.accuracy - self.mean_confidence

    def to_dict(self) -> dict:
        return {
            "lower": json_number(self.lower),
            "upper": json_number(self.upper),
            "count": int(self.count),
            "mean_confidence": json_number(self.mean_confidence),
            "accuracy": json_number(self.accuracy),
            "gap": json_number(self.gap),
        }


@dataclass(frozen=True)
class ReliabilityDiagram:
    """Reliability bins of predicted probabilities against binary outcomes.

    ``ece`` and ``mce`` are NaN when there are no samples.
    """

    bins: list[ReliabilityBin]
    edges: np.ndarray
    strategy: str
    n_samples: int
    ece: float
    mce: float

    def to_dict(self) -> dict:
        return {
            "strategy": self.strategy,
            "edges": [float(x) for x in self.edges],
            "ece": json_number(self.ece),
            "mce": json_number(self.mce),
            "bins": [b.to_dict() for b in self.bins],
        }


def bin_sums(bin_index, probability, outcome, n_bins: int):
    """Per-bin count, sum of probabilities and sum of outcomes, each shape (n_bins,)."""
    count = np.bincount(bin_index, minlength=n_bins)
    conf = np.bincount(bin_index, weights=probability, minlength=n_bins)
    hits = np.bincount(bin_index, weights=outcome, minlength=n_bins)
    return count, conf, hits


def reliability_diagram(
    probability,
    outcome,
    bins: int | Sequence[float] = 10,
    strategy: str = UNIFORM,
) -> ReliabilityDiagram:
    """Reliability bins, ECE and MCE of predicted probabilities of a binary event.

    Parameters
    ----------
    probability : array of shape (n_samples,)
        Predicted probability of the event, e.g. the top-class confidence
        (see :func:`top_class_confidence`) or the positive-class probability.
    outcome : array of shape (n_samples,)
        1 (or True) where the event happened, e.g. the prediction was right.
    bins, strategy
        See :func:`bin_edges`.

    Raises ValueError for bad edges or probabilities outside them.
    """
    p = np.asarray(probability, dtype=float).ravel()
    y = np.asarray(outcome, dtype=float).ravel()
    if p.shape != y.shape:
        raise ValueError(f"probability and outcome differ in length: {p.size} and {y.size}")
    edges = bin_edges(p, bins, strategy)
    label = strategy if isinstance(bins, (int, np.integer)) else EXPLICIT
    k = len(edges) - 1
    count, conf, hits = bin_sums(assign_bins(p, edges), p, y, k)
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_conf = np.where(count > 0, conf / count, np.nan)
        acc = np.where(count > 0, hits / count, np.nan)
    gaps = np.abs(acc - mean_conf)
    n = p.size
    filled = count > 0
    ece = float(np.sum(count[filled] / n * gaps[filled])) if n else math.nan
    mce = float(np.max(gaps[filled])) if n else math.nan
    rows = [
        ReliabilityBin(
            float(edges[b]), float(edges[b + 1]), int(count[b]), float(mean_conf[b]), float(acc[b])
        )
        for b in range(k)
    ]
    return ReliabilityDiagram(rows, edges, label, n, ece, mce)


def top_class_confidence(proba, true_codes, predicted=None) -> tuple[np.ndarray, np.ndarray]:
    """Top-class confidence ``max_k p_k`` and whether the argmax class is right.

    ``proba`` is (n_samples, n_classes), ``true_codes`` (n_samples,) the index
    of each row's true class, ``predicted`` (n_samples,) the argmax class
    when the caller has it. Returns two arrays of shape (n_samples,):
    confidence (float) and correct (bool).
    """
    p = np.asarray(proba, dtype=float)
    pred = predicted_codes(p) if predicted is None else np.asarray(predicted)
    return true_class_values(p, pred), pred == np.asarray(true_codes)


def ece_interval(
    probability,
    outcome,
    edges,
    *,
    n_resamples: int,
    confidence: float,
    rng: np.random.Generator,
) -> Interval:
    """ECE with a BCa bootstrap interval; rows are resampled and re-binned with fixed edges.

    With ``d_i = outcome_i - probability_i`` and ``D_b`` the sum of ``d`` over
    bin ``b``, ECE = sum_b |D_b| / n, so each resample needs only per-bin sums
    of ``d``; leaving row i out changes only its own bin, which gives the
    jackknife values in closed form. Beyond
    :data:`~nbcli.reports.means.EXACT_VALUES` rows x resamples the per-bin
    sums are resampled through groups of neighbouring ``d`` within each bin
    (:func:`~nbcli.reports.means.grouped_resampled_bin_sums`), as the means
    are: 800,000 rows took 11 s a report row by row.
    """
    p = np.asarray(probability, dtype=float)
    d = np.asarray(outcome, dtype=float) - p
    n = p.size
    k = len(edges) - 1
    b = assign_bins(p, edges)
    per_bin = np.bincount(b, weights=d, minlength=k)
    total = np.abs(per_bin).sum()
    estimate = total / n if n else math.nan
    if n_resamples <= 0 or n < 2:
        return no_interval(estimate)
    if n * n_resamples > EXACT_VALUES:
        sums = grouped_resampled_bin_sums(b, d, k, n_resamples, rng)
        replicates = [np.abs(sums).sum(axis=1) / n]
    else:
        replicates = []
        step = max(1, 2_000_000 // n)
        for start in range(0, n_resamples, step):
            size = min(step, n_resamples - start)
            idx = rng.integers(0, n, size=(size, n), dtype=np.intp)
            flat = (np.take(b, idx) + k * np.arange(size)[:, None]).ravel()
            sums = np.bincount(flat, weights=np.take(d, idx).ravel(), minlength=size * k).reshape(
                size, k
            )
            replicates.append(np.abs(sums).sum(axis=1) / n)
    jackknife = (total - np.abs(per_bin[b]) + np.abs(per_bin[b] - d)) / (n - 1)
    return bca_interval(estimate, np.concatenate(replicates), jackknife, confidence=confidence)


# --------------------------------------------------------------------------
# The report of `nbcli calibrate`


@dataclass
class CalibrationReport:
    """Calibration of a model's posteriors on labelled data.

    Attributes
    ----------
    diagram : ReliabilityDiagram of the top-class confidence
    metrics : {"ece", "brier", "log_loss"}: Interval each
    mce, mean_confidence, accuracy : float
        Accuracy here is over the rows with known labels, to compare with the
        mean confidence.
    n_samples : int
        Rows given; ``n_unseen`` of them have labels the model never saw and
        are left out of every number here.
    """

    schema: ClassVar[str] = CALIBRATION_SCHEMA_NAME

    diagram: ReliabilityDiagram
    metrics: dict[str, Interval]
    mce: float
    mean_confidence: float
    accuracy: float
    n_samples: int
    n_unseen: int
    unseen_labels: list
    warnings: list[str]
    inputs: dict
    settings: dict
    #: The ``--fail-under``/``--fail-over`` thresholds as checked.
    thresholds: list = field(default_factory=list)

    def threshold_values(self) -> dict:
        """Values ``--fail-under``/``--fail-over`` can check, by metric name."""
        values: dict[str, object] = {k: v.to_dict() for k, v in self.metrics.items()}
        values.update(
            mce=json_number(self.mce),
            mean_confidence=json_number(self.mean_confidence),
            accuracy=json_number(self.accuracy),
        )
        if self.n_unseen:
            # Every figure here leaves out the rows of labels the model never
            # saw: as evaluate's losses, a gate on any of them fails.
            mark_left_out(values, list(values), self.n_unseen)
        return values

    def to_dict(self) -> dict:
        return {
            **report_header(self.schema, self.inputs, self.settings, SCHEMA_VERSION),
            "n_samples": int(self.n_samples),
            "n_unseen": int(self.n_unseen),
            "unseen_labels": [json_label(x) for x in self.unseen_labels],
            "metrics": {k: v.to_dict() for k, v in self.metrics.items()},
            "mce": json_number(self.mce),
            "mean_confidence": json_number(self.mean_confidence),
            "accuracy": json_number(self.accuracy),
            "reliability": self.diagram.to_dict(),
            **thresholds_member(self.thresholds),
            "warnings": list(self.warnings),
        }


def merged_bins_warning(confidence: np.ndarray, asked: int, made: int) -> str:
    """Why equal-count bins came out fewer than asked for: quantiles that
    fall on the same value make one edge (:func:`bin_edges`), and rows of
    one confidence cannot be split between bins. Names the most common
    confidence, which is what such ties usually are (posteriors rounded to 1)."""
    values, counts = np.unique(confidence, return_counts=True)
    top = int(np.argmax(counts))
    return (
        f"equal-count bins: {made} made of the {asked} asked for, because "
        f"{int(counts[top]):,} of the {confidence.size:,} rows share the top-class confidence "
        f"{float(values[top]):.17g} and the rows of one value stay in one bin; "
        "explicit edges can cut the other rows more finely"
    )


def unseen_warning(
    unseen_labels,
    n_unseen: int,
    who: str = "the model",
    probabilities: bool = True,
    *,
    counted: bool = True,
    rows: str = "test",
) -> str:
    """Rows whose labels the model never saw: counted as errors, and (where the
    report has them, ``probabilities``) left out of the probability metrics;
    with ``counted`` False left out of every figure (a calibration report,
    whose accuracy is over the rows it measures). ``rows`` names them."""
    shown = ", ".join(repr(json_label(x)) for x in unseen_labels[:10])
    more = f" and {len(unseen_labels) - 10} more" if len(unseen_labels) > 10 else ""
    one = n_unseen == 1
    if not counted:
        fate = f"{'it is' if one else 'they are'} left out of every figure of this report"
    else:
        fate = "it counts as an error" if one else "they count as errors"
        if probabilities:
            fate += f" and {'is' if one else 'are'} left out of the probability metrics"
    return (
        f"{n_unseen} {rows} {'row has a label' if one else 'rows have labels'} "
        f"{who} never saw ({shown}{more}); {fate}"
    )


@dataclass
class RowReliability:
    """Per-row figures of a set of posteriors, each of shape (n_samples,): the
    top-class ``confidence``, whether the top class is ``correct``, and the
    ``log_loss`` and ``brier`` score of the true class
    (:func:`~nbcli.reports.metrics.log_loss_per_row`,
    :func:`~nbcli.reports.metrics.brier_per_row`)."""

    confidence: np.ndarray
    correct: np.ndarray
    log_loss: np.ndarray
    brier: np.ndarray


def row_reliability(proba, codes) -> RowReliability:
    """:class:`RowReliability` of posteriors ``proba`` (n_samples, n_classes)
    and each row's true class index ``codes`` (n_samples,)."""
    from nbcli.reports.metrics import brier_per_row, log_loss_per_row

    conf, correct = top_class_confidence(proba, codes)
    return RowReliability(
        conf, correct, log_loss_per_row(proba, codes), brier_per_row(proba, codes)
    )


def build_calibration(
    classes,
    y_true,
    proba,
    *,
    bins: int | Sequence[float] = 10,
    strategy: str = UNIFORM,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    inputs: dict | None = None,
    settings: dict | None = None,
    per_row: RowReliability | None = None,
) -> CalibrationReport:
    """Reliability bins, ECE (with interval), MCE, Brier score and log-loss of a model's posteriors.

    Parameters
    ----------
    classes : array of shape (n_classes,)
        The model's class labels, in the column order of ``proba``.
    y_true : array of shape (n_samples,)
        True labels; rows with labels the model never saw are left out.
    proba : array of shape (n_samples, n_classes)
        Posterior probabilities.
    bins, strategy
        Number of bins and "uniform" or "quantile", or explicit edges.
    n_resamples, confidence, seed
        Bootstrap settings: ``numpy.random.default_rng(seed)`` drives the
        ECE interval, :func:`~nbcli.reports.means.means_generator` the Brier
        and log-loss intervals (the same as ``evaluate``'s on the same rows).
    inputs, settings
        Passed through into the JSON form (e.g. file paths and SHA-256);
        the computed settings are added to ``settings``.
    per_row : RowReliability, optional
        :func:`row_reliability` of ``proba``'s rows with known labels, when
        the caller has it (``calibrate`` judges calibrators on the same
        values): the same report, without taking them again.

    Raises
    ------
    ValueError
        Bad bins, or more bins than rows with known labels ("too few
        samples (n) for k bins; use fewer bins").
    """
    coding = encode_labels(classes, y_true)
    proba = np.asarray(proba, dtype=float)
    if proba.shape != (coding.codes.size, coding.n_classes):
        raise ValueError(
            f"proba has shape {proba.shape}, expected ({coding.codes.size}, {coding.n_classes})"
        )
    known = coding.known
    # Per-row values are taken on all rows (unseen labels pointed at class 0)
    # and then restricted to the known ones, rather than copying proba[known].
    codes = np.where(known, coding.codes, 0)
    if per_row is None:
        conf, correct = (v[known] for v in top_class_confidence(proba, codes))
    else:
        conf, correct = per_row.confidence, per_row.correct
    n_bins = int(bins) if isinstance(bins, (int, np.integer)) else len(validate_edges(bins)) - 1
    check_sample_size(conf.size, n_bins)
    diagram = reliability_diagram(conf, correct, bins, strategy)

    rng = np.random.default_rng(seed)
    metrics = {
        "ece": ece_interval(
            conf, correct, diagram.edges, n_resamples=n_resamples, confidence=confidence, rng=rng
        )
    }
    if per_row is None:
        losses = loss_means(
            proba, codes, known, n_resamples=n_resamples, confidence=confidence, seed=seed
        )
    else:
        losses = loss_intervals(
            per_row.log_loss,
            per_row.brier,
            n_resamples=n_resamples,
            confidence=confidence,
            seed=seed,
        )
    metrics.update(losses)
    warnings = []
    if coding.n_unseen:
        warnings.append(
            unseen_warning(coding.unseen_labels, coding.n_unseen, counted=False, rows="calibration")
        )
    if isinstance(bins, (int, np.integer)) and len(diagram.bins) < n_bins:
        warnings.append(merged_bins_warning(conf, n_bins, len(diagram.bins)))
    computed = {
        "bootstrap_resamples": int(n_resamples),
        "confidence": float(confidence),
        "seed": seed,
        "bootstrap_method": method_summary(metrics),
        "bins": len(diagram.bins),
        "binning": diagram.strategy,
    }
    return CalibrationReport(
        diagram=diagram,
        metrics=metrics,
        mce=diagram.mce,
        mean_confidence=float(conf.mean()),
        accuracy=float(correct.mean()),
        n_samples=coding.codes.size,
        n_unseen=coding.n_unseen,
        unseen_labels=coding.unseen_labels,
        warnings=warnings,
        inputs=dict(inputs or {}),
        settings={**(settings or {}), **computed},
    )


# --------------------------------------------------------------------------
# The verdict on cross-fitted calibrators


def normal_interval(values, confidence: float) -> Interval:
    """The mean of ``values`` (shape (n_samples,)) with its central-limit interval.

    ``mean +- z sd / sqrt(n)``, ``z`` the standard normal quantile at
    ``(1 + confidence) / 2`` and ``sd`` the sample standard deviation: the
    margin when no bootstrap resamples are drawn. Method ``"normal"``; no
    interval (method ``"none"``) below 2 rows.
    """
    from nbcli.reports.bootstrap import ndtri

    v = np.asarray(values, dtype=float)
    mean = float(np.mean(v)) if v.size else math.nan
    if v.size < 2:
        return no_interval(mean)
    half = ndtri(0.5 + confidence / 2) * float(np.std(v, ddof=1)) / math.sqrt(v.size)
    return Interval(mean, mean - half, mean + half, NORMAL)


NORMAL = "normal"


def paired_differences(
    before: Mapping[str, np.ndarray],
    after: Mapping[str, np.ndarray],
    *,
    n_resamples: int,
    confidence: float,
    seed: int,
) -> dict[str, Interval]:
    """Mean per-row differences ``after - before`` with paired intervals, by loss name.

    Both mappings hold the same names (e.g. ``log_loss``, ``brier``), each a
    per-row loss of shape (n_samples,) on the same rows. The differences of
    each row are resampled together (one resample is one set of rows, for
    both losses and both sides): BCa intervals from
    :func:`~nbcli.reports.means.bootstrap_means`, drawn by
    :func:`~nbcli.reports.means.means_generator` ``(seed)``. With
    ``n_resamples=0`` the interval is the normal one
    (:func:`normal_interval`), so that a verdict always has a margin.
    """
    diffs = {
        k: np.asarray(after[k], dtype=float) - np.asarray(before[k], dtype=float) for k in before
    }
    if n_resamples <= 0:
        return {k: normal_interval(d, confidence) for k, d in diffs.items()}
    # A calibrator that changes no row's loss gives differences without
    # spread: the percentile fallback is then the point 0, which accepts nothing.
    return bootstrap_means(
        diffs, n_resamples=n_resamples, confidence=confidence, rng=means_generator(seed)
    )


#: Why a temperature fitted on rows without an error is never taken or
#: written: the optimum runs to T = 0, all probabilities 0 or 1.
CERTAIN_TEMPERATURE = "every calibration row is predicted correctly, so T runs to 0"


@dataclass(frozen=True)
class CalibratorCandidate:
    """One calibration method, judged on its cross-fitted posteriors.

    Attributes
    ----------
    method : str
    log_loss, brier, ece, mce : float
        Of the cross-fitted posteriors (each row calibrated by a calibrator
        fitted on the other folds); NaN when the method could not be fitted.
    differences : {"log_loss", "brier"}: Interval
        Mean ``cross-fitted - before`` per row, with its paired interval;
        empty when the method could not be fitted.
    accepted : bool
        Whether it passes the verdict's rule.
    note : str or None
        Why it was left out or not accepted, when it was.
    """

    method: str
    log_loss: float
    brier: float
    ece: float
    mce: float
    differences: dict[str, Interval]
    accepted: bool
    note: str | None = None

    def to_dict(self) -> dict:
        return {
            "method": self.method,
            "log_loss": json_number(self.log_loss),
            "brier": json_number(self.brier),
            "ece": json_number(self.ece),
            "mce": json_number(self.mce),
            "differences": {k: v.to_dict() for k, v in self.differences.items()},
            "accepted": bool(self.accepted),
            "note": self.note,
        }

    @property
    def never_written(self) -> bool:
        """Not fitted, or a temperature that makes every prediction certain:
        not even ``--allow-worse`` writes it."""
        return not self.differences or self.note == CERTAIN_TEMPERATURE


VERDICT_RULE = (
    "a calibrator is accepted when the upper end of the {level} paired interval of its mean "
    "cross-fitted log-loss difference (calibrated - before) is below 0 and the lower end of "
    "its Brier score difference is not above 0; of those accepted, the lowest cross-fitted "
    "log-loss is chosen"
)


def accepts(differences: Mapping[str, Interval]) -> bool:
    """The verdict's rule (:data:`VERDICT_RULE`) on the paired differences of one method.

    Log-loss first: its interval must lie below 0, so that a change within
    the noise is never a verdict; then the Brier score must not be worse
    beyond its interval. An interval that cannot be computed (NaN) accepts
    nothing.
    """
    return rejection(differences) is None


#: The notes of :func:`rejection`: which criterion of the rule failed.
LOG_LOSS_NOT_LOWER = "log-loss not lower beyond the margin"
BRIER_WORSE = "Brier score worse beyond the margin"


def rejection(differences: Mapping[str, Interval]) -> str | None:
    """Why the rule (:func:`accepts`) refuses these differences, or None."""
    log_loss, brier = differences["log_loss"], differences["brier"]
    if not log_loss.upper < 0:
        return LOG_LOSS_NOT_LOWER
    if brier.lower > 0:
        return BRIER_WORSE
    return None


@dataclass
class CalibrationVerdict:
    """Which calibrator, if any, ``nbcli calibrate`` writes, and why.

    Attributes
    ----------
    folds : int
        Folds of the cross-fitting (stratified, seeded).
    confidence : float
        Level of the paired intervals.
    interval_method : str
        ``"bootstrap"`` (paired BCa) or ``"normal"`` (no resamples).
    before : {"log_loss", "brier", "ece", "mce"}: float
        Of the model as it stands, on the same rows.
    candidates : list of CalibratorCandidate
    chosen : str or None
        The method written, or None when no candidate passes the rule.
    """

    folds: int
    confidence: float
    interval_method: str
    before: dict[str, float]
    candidates: list[CalibratorCandidate]
    chosen: str | None

    @property
    def rule(self) -> str:
        return VERDICT_RULE.format(level=f"{self.confidence:.4g}")

    def to_dict(self) -> dict:
        return {
            "rule": self.rule,
            "folds": int(self.folds),
            "confidence": float(self.confidence),
            "interval_method": self.interval_method,
            "before": {k: json_number(v) for k, v in self.before.items()},
            "candidates": [c.to_dict() for c in self.candidates],
            "chosen": self.chosen,
        }


@dataclass
class RecalibrationReport:
    """Calibration before and after fitting a calibrator, as one document.

    ``calibrator`` describes the fitted calibrator (e.g. method and
    temperature) and is passed in by the caller. ``after`` is measured on
    the cross-fitted posteriors of that method, and ``verdict`` says whether
    it is written.
    """

    schema: ClassVar[str] = RECALIBRATION_SCHEMA_NAME

    before: CalibrationReport
    after: CalibrationReport
    calibrator: dict = field(default_factory=dict)
    inputs: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict)
    verdict: CalibrationVerdict | None = None
    #: The ``--fail-under``/``--fail-over`` thresholds as checked (on ``after``).
    thresholds: list = field(default_factory=list)
    #: Whether the calibrator is the one to use (accepted, or written with
    #: ``--allow-worse``); False when the verdict refused it.
    applied: bool = True

    def threshold_values(self) -> dict:
        """Thresholds apply to the calibrated ("after") report, or, when the
        verdict refused every calibrator, to the model as it stands ("before"):
        a gate does not judge a calibrator that will not be used."""
        return (self.after if self.applied else self.before).threshold_values()

    @property
    def warnings(self) -> list[str]:
        return list(dict.fromkeys(self.before.warnings + self.after.warnings))

    def to_dict(self) -> dict:
        return {
            **report_header(
                self.schema,
                self.inputs or self.before.inputs,
                self.settings or self.before.settings,
                RECALIBRATION_SCHEMA_VERSION,
            ),
            "calibrator": self.calibrator,
            "verdict": None if self.verdict is None else self.verdict.to_dict(),
            "before": self.before.to_dict(),
            "after": self.after.to_dict(),
            **thresholds_member(self.thresholds),
        }


# --------------------------------------------------------------------------
# JSON Schemas of CalibrationReport.to_dict() and RecalibrationReport.to_dict()

_NUMBER_OR_NULL = {"type": ["number", "null"]}
_COUNT = {"type": "integer", "minimum": 0}

RELIABILITY_BIN_SCHEMA: dict = {
    "type": "object",
    "required": ["lower", "upper", "count", "mean_confidence", "accuracy", "gap"],
    "additionalProperties": False,
    "properties": {
        "lower": {"type": "number", "minimum": 0, "maximum": 1},
        "upper": {"type": "number", "minimum": 0, "maximum": 1},
        "count": _COUNT,
        "mean_confidence": _NUMBER_OR_NULL,
        "accuracy": _NUMBER_OR_NULL,
        "gap": _NUMBER_OR_NULL,
    },
}
"""JSON Schema of :meth:`ReliabilityBin.to_dict` (null: a bin without rows)."""


def _calibration_schema() -> dict:
    from nbcli.reports.bootstrap import INTERVAL_SCHEMA
    from nbcli.reports.metrics import closed_object, report_schema
    from nbcli.reports.thresholds import THRESHOLDS_SCHEMA

    label = {"type": ["string", "integer", "number", "boolean"]}
    return report_schema(
        CALIBRATION_SCHEMA_NAME,
        SCHEMA_VERSION,
        "nbcli calibration report",
        required=[
            "n_samples",
            "n_unseen",
            "unseen_labels",
            "metrics",
            "mce",
            "mean_confidence",
            "accuracy",
            "reliability",
        ],
        properties={
            "n_samples": _COUNT,
            "n_unseen": _COUNT,
            "unseen_labels": {"type": "array", "items": label},
            "metrics": closed_object({k: INTERVAL_SCHEMA for k in ("ece", "log_loss", "brier")}),
            "mce": _NUMBER_OR_NULL,
            "mean_confidence": _NUMBER_OR_NULL,
            "accuracy": _NUMBER_OR_NULL,
            "reliability": closed_object(
                {
                    "strategy": {"enum": [UNIFORM, QUANTILE, EXPLICIT]},
                    "edges": {"type": "array", "items": {"type": "number"}, "minItems": 2},
                    "ece": _NUMBER_OR_NULL,
                    "mce": _NUMBER_OR_NULL,
                    "bins": {"type": "array", "items": RELIABILITY_BIN_SCHEMA},
                }
            ),
            "thresholds": THRESHOLDS_SCHEMA,
        },
    )


CALIBRATION_SCHEMA: dict = _calibration_schema()
"""JSON Schema (draft 2020-12) of :meth:`CalibrationReport.to_dict`: ``nbcli
calibrate --method none``, and the ``before`` and ``after`` of a
recalibration report."""


def _recalibration_schema() -> dict:
    from nbcli.reports.bootstrap import INTERVAL_SCHEMA
    from nbcli.reports.metrics import closed_object
    from nbcli.reports.thresholds import THRESHOLDS_SCHEMA

    methods = ["temperature", "sigmoid", "isotonic"]
    figures = {k: _NUMBER_OR_NULL for k in ("log_loss", "brier", "ece", "mce")}
    candidate = closed_object(
        {
            "method": {"enum": methods},
            **figures,
            "differences": closed_object(
                {"log_loss": INTERVAL_SCHEMA, "brier": INTERVAL_SCHEMA}, required=()
            ),
            "accepted": {"type": "boolean"},
            "note": {"type": ["string", "null"]},
        }
    )
    numbers = {"type": "array", "items": {"type": "number"}}
    calibrator = {
        "type": "object",
        "required": ["method", "fitted_on", "n_samples", "folds", "cross_fitted_log_loss"],
        "additionalProperties": False,
        "properties": {
            "method": {"enum": methods},
            "fitted_on": {"type": "object"},
            "n_samples": {"type": "integer", "minimum": 1},
            "folds": {"type": "integer", "minimum": 1},
            "cross_fitted_log_loss": closed_object(
                {"before": _NUMBER_OR_NULL, "after": _NUMBER_OR_NULL}
            ),
            # The fitted parameters (Calibrator.describe) of its method.
            "temperature": {"type": "number", "exclusiveMinimum": 0},
            "at_bound": {"type": "boolean"},
            "a": numbers,
            "b": numbers,
            "breakpoints": {"type": "array", "items": {"type": "integer", "minimum": 1}},
            "floor": {"type": "number", "exclusiveMinimum": 0, "maximum": 1},
        },
    }
    verdict = {
        "type": "object",
        "required": [
            "rule",
            "folds",
            "confidence",
            "interval_method",
            "before",
            "candidates",
            "chosen",
        ],  # fmt: skip
        "additionalProperties": False,
        "properties": {
            "rule": {"type": "string"},
            "folds": {"type": "integer", "minimum": 1},
            "confidence": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
            "interval_method": {"enum": ["bootstrap", "normal"]},
            "before": {"type": "object", "properties": figures, "additionalProperties": False},
            "candidates": {"type": "array", "items": candidate},
            "chosen": {"enum": [*methods, None]},
        },
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "nbcli recalibration report",
        "type": "object",
        "required": [
            "schema",
            "schema_version",
            "nbcli_version",
            "inputs",
            "settings",
            "calibrator",
            "verdict",
            "before",
            "after",
        ],  # fmt: skip
        "additionalProperties": False,
        "properties": {
            "schema": {"const": RECALIBRATION_SCHEMA_NAME},
            "schema_version": {"const": RECALIBRATION_SCHEMA_VERSION},
            "nbcli_version": {"type": "string"},
            "inputs": {"type": "object"},
            "settings": {"type": "object"},
            "calibrator": calibrator,
            "verdict": {"anyOf": [verdict, {"type": "null"}]},
            "before": CALIBRATION_SCHEMA,
            "after": CALIBRATION_SCHEMA,
            "thresholds": THRESHOLDS_SCHEMA,
        },
    }


RECALIBRATION_SCHEMA: dict = _recalibration_schema()
"""JSON Schema (draft 2020-12) of :meth:`RecalibrationReport.to_dict`:
``nbcli calibrate`` with a method (``schema_version`` 2)."""
