"""The report of ``nbcli cv``: per-fold metrics and the pooled out-of-fold evaluation.

:func:`build_cross_validation` scores the out-of-fold posteriors of a
cross-validation run; its :class:`CrossValidationReport` carries one entry per
fold (point estimates only) and an :class:`~nbcli.reports.evaluation.EvaluationReport`
of all out-of-fold rows pooled, whose metrics, confusion matrix, per-class
table and calibration summary appear in the JSON form exactly as in
``nbcli evaluate`` (:data:`CROSS_VALIDATION_SCHEMA`).

NumPy only: no file I/O, no printing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from nbcli.distinct import grouped_order
from nbcli.reports.evaluation import (
    EVALUATION_SCHEMA,
    METRIC_KEYS,
    SCORE_MEMBERS,
    EvaluationReport,
    build_evaluation,
)
from nbcli.reports.metrics import (
    encode_labels,
    json_label,
    json_number,
    report_header,
    report_schema,
)
from nbcli.reports.thresholds import thresholds_member

SCHEMA_NAME = "nbcli.cross_validation"
SCHEMA_VERSION = 1

REPEATS_WARNING = (
    "with {r} repeats every row is scored {r} times; the pooled intervals treat those "
    "scores as independent rows, so they are narrower than they should be"
)


@dataclass(frozen=True)
class FoldScores:
    """One fold: its rows scored by the model of all other folds.

    ``fold`` is the fold's number (from 0) or, with a fold column, its value
    there; ``repeat`` counts from 0; ``n_train`` is the number of rows the
    fold's model was built from.
    """

    fold: object
    repeat: int
    n_samples: int
    n_train: int
    metrics: dict[str, float]

    def to_dict(self) -> dict:
        return {
            "fold": json_label(self.fold),
            "repeat": int(self.repeat),
            "n_samples": int(self.n_samples),
            "n_train": int(self.n_train),
            "metrics": {k: json_number(v) for k, v in self.metrics.items()},
        }


@dataclass
class CrossValidationReport:
    """Everything ``nbcli cv`` reports; see :func:`build_cross_validation`.

    Attributes
    ----------
    model_type : str
    hyperparameters : dict
        Those of every fold's model (plain JSON values).
    plan : dict
        How the folds were made: ``method`` (``stratified``, ``group`` or
        ``column``), ``n_folds``, ``n_repeats``, ``seed``, ``fold_column``,
        ``group_column``, and ``passes``: how often the data file was read
        (1 when it fitted in memory).
    folds : list of FoldScores
        In repeat, then fold order.
    pooled : EvaluationReport
        All out-of-fold rows together (with repeats, every repeat's).
    """

    schema: ClassVar[str] = SCHEMA_NAME

    model_type: str
    hyperparameters: dict
    plan: dict
    folds: list[FoldScores]
    pooled: EvaluationReport
    warnings: list[str] = field(default_factory=list)
    inputs: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict)
    #: The ``--fail-under``/``--fail-over`` thresholds as checked (on the pooled metrics).
    thresholds: list = field(default_factory=list)

    @property
    def metrics(self):
        """The pooled out-of-fold metrics with intervals."""
        return self.pooled.metrics

    def threshold_values(self) -> dict:
        """Values ``--fail-under``/``--fail-over`` check: the pooled ones, as ``evaluate``'s."""
        return self.pooled.threshold_values()

    def to_dict(self) -> dict:
        """The JSON form: plain JSON types only, described by :data:`CROSS_VALIDATION_SCHEMA`."""
        pooled = self.pooled.to_dict()
        for key in ("schema", "schema_version", "nbcli_version", "inputs", "warnings"):
            pooled.pop(key)
        settings = {**pooled.pop("settings"), **self.settings}
        return {
            **report_header(self.schema, self.inputs, settings, SCHEMA_VERSION),
            "model_type": self.model_type,
            "hyperparameters": dict(self.hyperparameters),
            "plan": dict(self.plan),
            "folds": [f.to_dict() for f in self.folds],
            **pooled,
            **thresholds_member(self.thresholds),
            "warnings": list(self.warnings),
        }


FOLD_METRICS = METRIC_KEYS
"""Point estimates reported for every fold (the keys of ``nbcli evaluate``'s metrics)."""


def fold_metrics(classes, y_true, proba, pos_label=None) -> dict[str, float]:
    """The point estimates of :data:`FOLD_METRICS` for one fold's rows.

    Equal to those of ``build_evaluation(classes, y_true, proba,
    n_resamples=0)``, without the rest of its report (curves, calibration,
    tables): see :func:`nbcli.reports.selection_scores.selection_scores`.
    """
    from nbcli.reports.selection_scores import selection_scores

    scores = selection_scores(encode_labels(classes, y_true), proba, pos_label=pos_label)
    return {k: float(scores[k].value) for k in FOLD_METRICS}


def build_cross_validation(
    classes,
    y_true,
    proba,
    folds,
    *,
    fold_values=None,
    n_train=None,
    model_type: str,
    hyperparameters: dict,
    plan: dict,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    bins: int = 10,
    inputs: dict | None = None,
    settings: dict | None = None,
    warnings: list[str] | None = None,
    pos_label=None,
) -> CrossValidationReport:
    """Score out-of-fold posteriors, fold by fold and pooled.

    Parameters
    ----------
    classes : array of shape (n_classes,)
        Class labels in the column order of ``proba``.
    y_true : array of shape (n_repeats * n_samples,)
        True labels, repeat after repeat.
    proba : array of shape (n_repeats * n_samples, n_classes)
        Out-of-fold posterior probabilities, in the order of ``y_true``.
    folds : array of int, shape (n_repeats, n_samples)
        Fold number of every row in every repeat.
    fold_values : array of shape (n_folds,), optional
        The name of each fold number (a fold column's values); default the
        numbers themselves.
    n_train : array of int, shape (n_repeats, n_folds), optional
        Rows each fold's model was built from; default the rows outside it.
    model_type, hyperparameters, plan
        Passed through into the report (see :class:`CrossValidationReport`).
    n_resamples, confidence, seed, bins
        Of the pooled evaluation, as in :func:`~nbcli.reports.evaluation.build_evaluation`.
    pos_label : optional
        With two classes, the positive one of every fold and of the pooled
        evaluation (``--pos-label``); default the second.

    Returns
    -------
    CrossValidationReport
    """
    folds = np.atleast_2d(np.asarray(folds))
    n_repeats, n = folds.shape
    y_true = np.asarray(y_true)
    proba = np.asarray(proba, dtype=float)
    n_folds = int(folds.max()) + 1
    values = np.arange(n_folds) if fold_values is None else np.asarray(fold_values)
    entries = []
    for r in range(n_repeats):
        # Each fold's rows together, in file order (the order a mask would
        # give): one gather of the rows (np.take, several times faster than
        # fancy indexing of a row-major matrix) instead of a mask and a
        # gather per fold.
        order, bounds = grouped_order(folds[r], n_folds)
        at = r * n + order
        y_r, p_r = np.take(y_true, at, axis=0), np.take(proba, at, axis=0)
        for f in range(n_folds):
            lo, hi = int(bounds[f]), int(bounds[f + 1])
            size = hi - lo
            if size == 0:
                continue
            trained = n - size if n_train is None else int(n_train[r][f])
            entries.append(
                FoldScores(
                    fold=values[f].item() if isinstance(values[f], np.generic) else values[f],
                    repeat=r,
                    n_samples=size,
                    n_train=trained,
                    metrics=fold_metrics(classes, y_r[lo:hi], p_r[lo:hi], pos_label),
                )
            )
    pooled = build_evaluation(
        classes,
        y_true,
        proba,
        n_resamples=n_resamples,
        confidence=confidence,
        seed=seed,
        bins=bins,
        pos_label=pos_label,
    )
    notes = list(warnings or []) + list(pooled.warnings)
    if n_repeats > 1 and n_resamples > 0:
        notes.append(REPEATS_WARNING.format(r=n_repeats))
    return CrossValidationReport(
        model_type=model_type,
        hyperparameters=dict(hyperparameters),
        plan=dict(plan),
        folds=entries,
        pooled=pooled,
        warnings=notes,
        inputs=dict(inputs or {}),
        settings=dict(settings or {}),
    )


# --------------------------------------------------------------------------
# JSON Schema of CrossValidationReport.to_dict()

_E: dict = EVALUATION_SCHEMA["properties"]
_NUMBER_OR_NULL = {"type": ["number", "null"]}
_POOLED_KEYS = SCORE_MEMBERS

CROSS_VALIDATION_SCHEMA = report_schema(
    SCHEMA_NAME,
    SCHEMA_VERSION,
    "nbcli cross-validation report",
    required=["model_type", "hyperparameters", "plan", "folds", *_POOLED_KEYS],
    settings=_E["settings"],
    properties={
        "model_type": {"type": "string"},
        "hyperparameters": {"type": "object"},
        "plan": {
            "type": "object",
            "required": [
                "method",
                "n_folds",
                "n_repeats",
                "seed",
                "fold_column",
                "group_column",
                "passes",
            ],
            "properties": {
                "method": {"enum": ["stratified", "group", "column"]},
                "n_folds": {"type": "integer", "minimum": 2},
                "n_repeats": {"type": "integer", "minimum": 1},
                "seed": {"type": ["integer", "null"]},
                "fold_column": {"type": ["string", "null"]},
                "group_column": {"type": ["string", "null"]},
                "passes": {"type": "integer", "minimum": 1},
            },
        },
        "folds": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["fold", "repeat", "n_samples", "n_train", "metrics"],
                "additionalProperties": False,
                "properties": {
                    "fold": {"type": ["string", "integer", "number", "boolean"]},
                    "repeat": {"type": "integer", "minimum": 0},
                    "n_samples": {"type": "integer", "minimum": 1},
                    "n_train": {"type": "integer", "minimum": 1},
                    "metrics": {
                        "type": "object",
                        "required": list(FOLD_METRICS),
                        "additionalProperties": False,
                        "properties": {k: _NUMBER_OR_NULL for k in FOLD_METRICS},
                    },
                },
            },
        },
        **{k: _E[k] for k in _POOLED_KEYS},
        "thresholds": _E["thresholds"],
    },
)
"""JSON Schema (draft 2020-12) of :meth:`CrossValidationReport.to_dict`."""
