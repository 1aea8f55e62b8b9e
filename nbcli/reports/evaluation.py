"""The report of ``nbcli evaluate``: metrics with bootstrap intervals, tables, calibration.

:func:`build_evaluation` scores a model's posteriors against test labels and
returns an :class:`EvaluationReport`; its ``to_dict()`` is the JSON form
described by :data:`EVALUATION_SCHEMA` (JSON Schema, draft 2020-12).

Test labels the model never saw count as errors in the accuracy-type metrics
(accuracy, balanced accuracy, macro-F1, Cohen's kappa, the per-class table)
and are left out of the probability metrics (log-loss, Brier score,
calibration); the report says how many rows were left out and which labels.

NumPy only: no file I/O, no printing.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import ClassVar

import numpy as np

from nbcli.reports.bootstrap import (
    INTERVAL_SCHEMA,
    Interval,
    bootstrap_confusion_metrics,
    method_summary,
)
from nbcli.reports.means import loss_means
from nbcli.reports.metrics import (
    MARGIN_METRICS,
    ClassScores,
    ConfusedPair,
    LabelCoding,
    class_scores,
    confusion_matrix,
    encode_labels,
    json_label,
    json_number,
    most_confused,
    per_class_scores,
    predicted_codes,
    report_header,
    report_schema,
)
from nbcli.reports.ranking_summary import ranking_metrics, start_ranking
from nbcli.reports.reliability import (
    RELIABILITY_BIN_SCHEMA,
    ReliabilityDiagram,
    reliability_diagram,
    top_class_confidence,
    unseen_warning,
)
from nbcli.reports.thresholds import THRESHOLDS_SCHEMA, mark_left_out, thresholds_member

SCHEMA_NAME = "nbcli.evaluation"
SCHEMA_VERSION = 1

METRIC_KEYS = (
    "accuracy",
    "balanced_accuracy",
    "macro_f1",
    "cohen_kappa",
    "log_loss",
    "brier",
    "roc_auc",
    "roc_auc_weighted",
    "average_precision",
)
"""Headline metrics, in report order."""

WITHOUT_UNSEEN = (
    "log_loss",
    "brier",
    "roc_auc",
    "roc_auc_weighted",
    "average_precision",
    "ece",
    "mce",
    "mean_confidence",
)
"""The figures taken over the rows whose labels the model knows: the losses,
the ranking and the calibration (a class the model never saw has no column)."""


TRAINING_DATA_WARNING = "scored on the data the model was trained on; these numbers overstate how well it does on new data"


@dataclass(frozen=True)
class CalibrationSummary:
    """Mean top-class confidence against accuracy on the rows with known labels, with reliability bins."""

    mean_confidence: float
    accuracy: float
    diagram: ReliabilityDiagram

    @property
    def ece(self) -> float:
        return self.diagram.ece

    @property
    def mce(self) -> float:
        return self.diagram.mce

    def to_dict(self) -> dict:
        return {
            "n_samples": int(self.diagram.n_samples),
            "mean_confidence": json_number(self.mean_confidence),
            "accuracy": json_number(self.accuracy),
            "ece": json_number(self.ece),
            "mce": json_number(self.mce),
            "binning": self.diagram.strategy,
            "bins": [b.to_dict() for b in self.diagram.bins],
        }


@dataclass
class EvaluationReport:
    """Everything ``nbcli evaluate`` reports; see :func:`build_evaluation`.

    ``labels`` are the model's classes then the unseen test labels, and
    index both axes of ``confusion`` (rows true, columns predicted).
    """

    schema: ClassVar[str] = SCHEMA_NAME

    metrics: dict[str, Interval]
    labels: list
    confusion: np.ndarray
    most_confused: list[ConfusedPair]
    per_class: list[ClassScores]
    averages: dict[str, ClassScores]
    calibration: CalibrationSummary
    warnings: list[str]
    n_samples: int
    n_unseen: int
    unseen_labels: list
    inputs: dict
    settings: dict
    #: One-vs-rest ROC and precision-recall curve of every model class, in
    #: class order (:class:`nbcli.reports.ranking.Curve`), for plots; not in the JSON.
    roc_curves: list = field(default_factory=list)
    pr_curves: list = field(default_factory=list)
    #: With two classes, the class the binary figures are of (``--pos-label``);
    #: None: the second.
    pos_label: object = None
    #: The ``--fail-under``/``--fail-over`` thresholds as checked, set by the
    #: command that checks them (see :func:`nbcli.reports.thresholds.threshold_outcomes`).
    thresholds: list = field(default_factory=list)

    def threshold_values(self) -> dict:
        """Values ``--fail-under``/``--fail-over`` can check, by metric name."""
        values: dict[str, object] = {k: v.to_dict() for k, v in self.metrics.items()}
        values.update(
            ece=json_number(self.calibration.ece),
            mce=json_number(self.calibration.mce),
            mean_confidence=json_number(self.calibration.mean_confidence),
        )
        if self.n_unseen:
            # Rows with labels the model never saw count in the confusion
            # metrics only; a gate on any other figure fails.
            mark_left_out(values, WITHOUT_UNSEEN, self.n_unseen)
        return values

    def ranking_class(self):
        """With two classes, the one whose scores ROC AUC and average precision
        rank (``pos_label``, else the second, as scikit-learn's binary scores
        take it); else None,
        as when those metrics were not computed (part-wise reports)."""
        known = self.labels[: len(self.labels) - len(self.unseen_labels)]
        auc = self.metrics.get("roc_auc")
        if len(known) != 2 or auc is None or not np.isfinite(auc.value):
            return None
        return known[1] if self.pos_label is None else self.pos_label

    def to_dict(self) -> dict:
        """The JSON form: plain JSON types only, described by :data:`EVALUATION_SCHEMA`."""
        positive = self.ranking_class()
        return {
            **report_header(self.schema, self.inputs, self.settings, SCHEMA_VERSION),
            "n_samples": int(self.n_samples),
            "n_unseen": int(self.n_unseen),
            "unseen_labels": [json_label(x) for x in self.unseen_labels],
            "metrics": {k: v.to_dict() for k, v in self.metrics.items()},
            "ranking_class": None if positive is None else json_label(positive),
            "confusion_matrix": {
                "labels": [json_label(x) for x in self.labels],
                "counts": np.asarray(self.confusion).astype(int).tolist(),
            },
            "most_confused": [p.to_dict() for p in self.most_confused],
            "per_class": [row.to_dict() for row in self.per_class],
            "averages": {k: v.to_dict() for k, v in self.averages.items()},
            "calibration": self.calibration.to_dict(),
            **thresholds_member(self.thresholds),
            "warnings": list(self.warnings),
        }


def build_evaluation(
    classes,
    y_true,
    proba,
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    bins: int = 10,
    training_match: bool = False,
    top_confused: int | None = 10,
    inputs: dict | None = None,
    settings: dict | None = None,
    coding: LabelCoding | None = None,
    predicted: np.ndarray | None = None,
    pos_label=None,
) -> EvaluationReport:
    """Score posteriors against true labels.

    Parameters
    ----------
    classes : array of shape (n_classes,)
        The model's class labels in the column order of ``proba``.
    y_true : array of shape (n_samples,)
        Test labels as given; compared with classes by string form.
    proba : array of shape (n_samples, n_classes)
        Posterior probabilities; the prediction is the argmax class, as
        ``nbcli predict`` makes it.
    n_resamples, confidence, seed
        Bootstrap settings: ``n_resamples`` BCa resamples (0 for no
        intervals) at two-sided level ``confidence``, driven by
        ``numpy.random.default_rng(seed)``, the log-loss and Brier intervals
        by :func:`~nbcli.reports.means.means_generator` (the same as
        ``calibrate``'s on the same rows and seed).
    bins : int
        Number of equal-width reliability bins of the top-class confidence.
    training_match : bool
        True when the test data is the training data; adds a warning.
    top_confused : int or None
        How many most-confused pairs to keep (None: all).
    inputs, settings : dict
        Passed through into the JSON form (e.g. file paths and SHA-256); the
        computed settings are added to ``settings``.
    coding : LabelCoding, optional
        ``encode_labels(classes, y_true)`` when the caller has it already.
    predicted : ndarray of int, shape (n_samples,), optional
        ``predicted_codes(proba)`` when the caller has it already.
    pos_label : optional
        With two classes, the class whose posterior average precision ranks
        and whose precision, recall and F1 are the ``binary`` average (its
        string form is matched, as labels are); None: the second class, as
        scikit-learn's binary scores take it. ROC AUC is ranked by its
        posterior too: either class gives the same AUC, unless posteriors
        that round to 1 tie rows whose other class's posteriors differ.

    Raises
    ------
    ValueError
        For mismatched shapes, no rows, a confidence outside (0, 1), fewer
        than 1 bin, or a ``pos_label`` that is not one of two classes.
    """
    if coding is None:
        coding = encode_labels(classes, y_true)
    proba = np.asarray(proba, dtype=float)
    n = coding.codes.size
    if n == 0:
        raise ValueError("no test rows to score")
    if proba.shape != (n, coding.n_classes):
        raise ValueError(f"proba has shape {proba.shape}, expected ({n}, {coding.n_classes})")
    labels = coding.labels
    known = coding.known
    # Rows with known labels; without unseen labels a slice, so that nothing
    # is copied (the ranking's curves, drawn when a plot asks for them, keep
    # a reference to the posteriors).
    kept = known if coding.n_unseen else slice(None)
    ranked_codes, ranked_proba = coding.codes[kept], proba[kept]
    positive = positive_column(labels[: coding.n_classes], pos_label)
    if positive == 0:
        # The ranking figures of two classes are those of the second column:
        # the columns (and codes) are swapped for them, and back afterwards.
        ranked_codes, ranked_proba = 1 - ranked_codes, ranked_proba[:, ::-1]
    # Where the ranking metrics take DeLong's intervals they draw nothing
    # from the generator, so their class columns are sorted on threads
    # while the other figures are computed here.
    pending = start_ranking(ranked_codes, ranked_proba, n_resamples=n_resamples)

    try:
        pred, confusion, metrics, calibration, rng = _other_figures(
            coding, proba, kept, n_resamples, confidence, seed, bins, predicted
        )
    except BaseException:
        if pending is not None:
            try:  # the column threads finish, and BLAS gets its threads back
                pending()
            except Exception:
                pass
        raise
    # The calibration draws nothing from the generator: the ranking's
    # bootstrap (where it has one) still follows the means' draws.
    ranking, areas, curves, ranking_warnings = ranking_metrics(
        ranked_codes,
        ranked_proba,
        n_resamples=n_resamples,
        confidence=confidence,
        rng=rng,
        pending=pending,
        labels=labels if positive != 0 else [labels[1], labels[0], *labels[2:]],
    )
    if positive == 0:
        areas = areas[::-1]
        curves = (list(curves[0])[::-1], list(curves[1])[::-1])
    metrics.update(ranking)
    metrics = {k: metrics[k] for k in METRIC_KEYS}

    rows, averages = per_class_scores(confusion, labels)
    if positive is not None:
        # rows lists only labels that occur; the positive class may not.
        averages = {**averages, "binary": class_scores(confusion, labels, positive)}
    area = dict(zip(labels, areas))
    rows = [replace(r, roc_auc=float(area.get(r.label, float("nan")))) for r in rows]

    warnings = list(ranking_warnings)
    if coding.n_unseen:
        warnings.append(unseen_warning(coding.unseen_labels, coding.n_unseen))
    if training_match:
        warnings.append(TRAINING_DATA_WARNING)
    computed = {
        "bootstrap_resamples": int(n_resamples),
        "confidence": float(confidence),
        "seed": seed,
        "bootstrap_method": method_summary(metrics),
        "bins": int(bins),
    }
    return EvaluationReport(
        metrics=metrics,
        labels=labels,
        confusion=confusion,
        most_confused=most_confused(confusion, labels, top_confused),
        per_class=rows,
        averages=averages,
        calibration=calibration,
        warnings=warnings,
        n_samples=n,
        n_unseen=coding.n_unseen,
        unseen_labels=coding.unseen_labels,
        inputs=dict(inputs or {}),
        settings={**(settings or {}), **computed},
        roc_curves=curves[0],
        pr_curves=curves[1],
        pos_label=None if pos_label is None or positive is None else labels[positive],
    )


def positive_column(classes, pos_label) -> int | None:
    """The column of the positive class of two (``pos_label``, else the
    second); None for more classes, where there is none."""
    if pos_label is None:
        return 1 if len(classes) == 2 else None
    if len(classes) != 2:
        raise ValueError(f"a positive class is for two classes; the model has {len(classes)}")
    import unicodedata

    names = [str(c) for c in classes]
    # As labels are read: surrounding spaces stripped, in Unicode normal form C.
    wanted = unicodedata.normalize("NFC", str(pos_label).strip())
    if wanted not in names:
        raise ValueError(
            f"{wanted!r} is not a class of the model (classes: {', '.join(map(repr, names))})"
        )
    return names.index(wanted)


def _other_figures(coding, proba, kept, n_resamples, confidence, seed, bins, predicted):
    """The figures of :func:`build_evaluation` other than the ranking metrics, with
    the generator after their draws."""
    labels = coding.labels
    known = coding.known
    pred = predicted_codes(proba) if predicted is None else np.asarray(predicted)
    confusion = confusion_matrix(coding.codes, pred, len(labels))
    rng = np.random.default_rng(seed)
    metrics = bootstrap_confusion_metrics(
        confusion, MARGIN_METRICS, n_resamples=n_resamples, confidence=confidence, rng=rng
    )
    # Per-row values are taken on all rows (unseen labels pointed at class 0)
    # and then restricted to the known ones: proba[known] would copy the
    # largest array here, (n_samples, n_classes).
    codes = np.where(known, coding.codes, 0) if coding.n_unseen else coding.codes
    metrics.update(
        loss_means(proba, codes, kept, n_resamples=n_resamples, confidence=confidence, seed=seed)
    )
    conf, correct = (v[kept] for v in top_class_confidence(proba, codes, pred))
    calibration = CalibrationSummary(
        mean_confidence=float(conf.mean()) if conf.size else float("nan"),
        accuracy=float(correct.mean()) if correct.size else float("nan"),
        diagram=reliability_diagram(conf, correct, bins),
    )
    return pred, confusion, metrics, calibration, rng


# --------------------------------------------------------------------------
# JSON Schema of EvaluationReport.to_dict()

_NUMBER_OR_NULL = {"type": ["number", "null"]}
_LABEL = {"type": ["string", "integer", "number", "boolean"]}
_COUNT = {"type": "integer", "minimum": 0}

_CLASS_SCORES = {
    "type": "object",
    "required": ["label", "precision", "recall", "f1", "support"],
    "additionalProperties": False,
    "properties": {
        "label": _LABEL,
        "precision": {"type": "number", "minimum": 0, "maximum": 1},
        "recall": {"type": "number", "minimum": 0, "maximum": 1},
        "f1": {"type": "number", "minimum": 0, "maximum": 1},
        "support": _COUNT,
        "roc_auc": _NUMBER_OR_NULL,
    },
}

SCORE_MEMBERS = (
    "n_samples",
    "n_unseen",
    "unseen_labels",
    "ranking_class",
    "metrics",
    "confusion_matrix",
    "most_confused",
    "per_class",
    "averages",
    "calibration",
)
"""The members of an evaluation report after its header: the scores of one
set of posteriors (a cross-validation report has them for the pooled folds)."""

EVALUATION_SCHEMA = report_schema(
    SCHEMA_NAME,
    SCHEMA_VERSION,
    "nbcli evaluation report",
    required=list(SCORE_MEMBERS),
    settings={
        "type": "object",
        "required": ["bootstrap_resamples", "confidence", "seed", "bootstrap_method", "bins"],
        "properties": {
            "bootstrap_resamples": _COUNT,
            "confidence": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
            "seed": {"type": ["integer", "null"]},
            "bootstrap_method": {"type": "string"},
            "bins": {"type": "integer", "minimum": 1},
        },
    },
    properties={
        "n_samples": {"type": "integer", "minimum": 1},
        "n_unseen": _COUNT,
        "unseen_labels": {"type": "array", "items": _LABEL},
        "ranking_class": {"type": [*_LABEL["type"], "null"]},
        "metrics": {
            "type": "object",
            "required": list(METRIC_KEYS),
            "additionalProperties": False,
            "properties": {k: INTERVAL_SCHEMA for k in METRIC_KEYS},
        },
        "confusion_matrix": {
            "type": "object",
            "required": ["labels", "counts"],
            "additionalProperties": False,
            "properties": {
                "labels": {"type": "array", "items": _LABEL},
                "counts": {"type": "array", "items": {"type": "array", "items": _COUNT}},
            },
        },
        "most_confused": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["true", "predicted", "count"],
                "additionalProperties": False,
                "properties": {
                    "true": _LABEL,
                    "predicted": _LABEL,
                    "count": {"type": "integer", "minimum": 1},
                },
            },
        },
        "per_class": {"type": "array", "items": _CLASS_SCORES},
        "averages": {
            "type": "object",
            "required": ["macro", "weighted"],
            "additionalProperties": False,
            "properties": {
                "macro": _CLASS_SCORES,
                "weighted": _CLASS_SCORES,
                "binary": _CLASS_SCORES,
            },
        },
        "calibration": {
            "type": "object",
            "required": [
                "n_samples",
                "mean_confidence",
                "accuracy",
                "ece",
                "mce",
                "binning",
                "bins",
            ],
            "additionalProperties": False,
            "properties": {
                "n_samples": _COUNT,
                "mean_confidence": _NUMBER_OR_NULL,
                "accuracy": _NUMBER_OR_NULL,
                "ece": _NUMBER_OR_NULL,
                "mce": _NUMBER_OR_NULL,
                "binning": {"enum": ["uniform", "quantile", "explicit"]},
                "bins": {"type": "array", "items": RELIABILITY_BIN_SCHEMA},
            },
        },
        "thresholds": THRESHOLDS_SCHEMA,
    },
)
"""JSON Schema (draft 2020-12) of :meth:`EvaluationReport.to_dict`."""
