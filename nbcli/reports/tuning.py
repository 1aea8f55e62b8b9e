"""The report of ``nbcli tune``: every hyperparameter combination's cross-validated metrics.

Each combination is scored by the pooled out-of-fold metrics of one shared
set of folds (:mod:`nbcli.workflows.cv`); the best by the search metric wins,
ties going to the first combination in the order given. :data:`TUNING_SCHEMA`
describes the JSON form.

A combination's row holds what a search compares, computed as
:func:`nbcli.reports.selection_scores.selection_scores` does, not a whole
evaluation: the metrics of :data:`RESULT_KEYS` (and the ranking metrics when
the search is on one of them), with the confusion-matrix metrics' BCa
interval, the losses' normal approximation (method ``normal``) and no
interval for the ranking metrics. ``nbcli cv`` with the chosen values gives
the full evaluation.

No file I/O, no printing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

from nbcli.reports.bootstrap import Interval
from nbcli.reports.evaluation import INTERVAL_SCHEMA, METRIC_KEYS
from nbcli.reports.metrics import json_label, json_number, report_header, report_schema
from nbcli.reports.ranking_summary import RANKING_KEYS
from nbcli.reports.selection_scores import CHEAP_KEYS, NORMAL
from nbcli.reports.thresholds import (
    EVALUATION_METRICS,
    LOWER_IS_BETTER,
    THRESHOLDS_SCHEMA,
    thresholds_member,
)

SCHEMA_NAME = "nbcli.tuning"
SCHEMA_VERSION = 1

SEARCH_METRICS = METRIC_KEYS
"""Metrics a search can optimise: the pooled out-of-fold metrics of ``nbcli cv``."""

RESULT_KEYS = CHEAP_KEYS
"""Metrics every combination's row holds: those computed in time linear in the rows."""


def result_keys(metric: str) -> tuple[str, ...]:
    """The metrics of each combination's row in a search on ``metric``.

    :data:`RESULT_KEYS`, and the ranking metrics (ROC AUC macro and
    weighted, average precision: a sort of every column per combination)
    only when ``metric`` is one of them; in :data:`SEARCH_METRICS` order.
    """
    if metric in RESULT_KEYS:
        return RESULT_KEYS
    return tuple(k for k in SEARCH_METRICS if k in RESULT_KEYS or k in RANKING_KEYS)


def lower_is_better(metric: str) -> bool:
    """Whether smaller values of ``metric`` are better (log-loss, Brier score)."""
    return EVALUATION_METRICS[metric].directions == LOWER_IS_BETTER


def best_index(values: list[float], metric: str) -> int | None:
    """Index of the best value (the first of equal ones); None when all are undefined."""
    sign = -1.0 if lower_is_better(metric) else 1.0
    best = None
    for i, v in enumerate(values):
        if not math.isfinite(v):
            continue
        if best is None or sign * v > sign * values[best]:
            best = i
    return best


@dataclass(frozen=True)
class SearchResult:
    """One combination: its hyperparameter values and pooled out-of-fold metrics."""

    params: dict
    metrics: dict[str, Interval]

    def to_dict(self) -> dict:
        return {
            "params": dict(self.params),
            "metrics": {k: v.to_dict() for k, v in self.metrics.items()},
        }


@dataclass
class TuningReport:
    """Everything ``nbcli tune`` reports.

    Attributes
    ----------
    model_type : str
    grid : dict
        ``{hyperparameter: list of values}`` in the order searched (the first
        name varies slowest).
    fixed : dict
        The other hyperparameters, as every combination used them.
    plan : dict
        The folds, as in :class:`~nbcli.reports.cross_validation.CrossValidationReport`.
    results : list of SearchResult
        In search order.
    best : dict
        ``params``, ``metric``, ``value`` and ``index`` (into ``results``).
    output : str or None
        Where the model of the best combination fitted on all rows was written.
    ranking_class : optional
        With two classes and average precision computed, the class it is of
        (``--pos-label``, else the second); else None.
    thresholds : list of dict
        The ``--fail-under``/``--fail-over`` outcomes on the best
        combination's metrics, in their JSON form.
    """

    schema: ClassVar[str] = SCHEMA_NAME

    model_type: str
    grid: dict
    fixed: dict
    plan: dict
    results: list[SearchResult]
    best: dict
    n_samples: int
    output: str | None = None
    warnings: list[str] = field(default_factory=list)
    inputs: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict)
    ranking_class: object = None
    thresholds: list = field(default_factory=list)

    def threshold_values(self) -> dict:
        """Values ``--fail-under``/``--fail-over`` check: the best combination's
        pooled out-of-fold metrics, as ``cv`` gives them for one combination."""
        best = self.results[int(self.best["index"])]
        return {k: v.to_dict() for k, v in best.metrics.items()}

    def search_summary(self) -> dict:
        """The ``search`` member of the model file: grid, folds, metric, every value, the best."""
        metric = self.best["metric"]
        return {
            "schema": SCHEMA_NAME,
            "metric": metric,
            "grid": {k: list(v) for k, v in self.grid.items()},
            "fixed": dict(self.fixed),
            "plan": dict(self.plan),
            "results": [
                {"params": dict(r.params), "value": json_number(r.metrics[metric].value)}
                for r in self.results
            ],
            "best": dict(self.best),
        }

    def to_dict(self) -> dict:
        """The JSON form, described by :data:`TUNING_SCHEMA`."""
        return {
            **report_header(self.schema, self.inputs, self.settings, SCHEMA_VERSION),
            "model_type": self.model_type,
            "n_samples": int(self.n_samples),
            "grid": {k: list(v) for k, v in self.grid.items()},
            "fixed": dict(self.fixed),
            "plan": dict(self.plan),
            "results": [r.to_dict() for r in self.results],
            "best": dict(self.best),
            "output": self.output,
            "ranking_class": None if self.ranking_class is None else json_label(self.ranking_class),
            **thresholds_member(self.thresholds),
            "warnings": list(self.warnings),
        }


_VALUE = {"type": ["number", "string", "boolean", "null", "array"]}

# A combination's losses take the normal approximation (method "normal"), see
# nbcli.reports.selection_scores.
_METHODS: list = INTERVAL_SCHEMA["properties"]["method"]["enum"]
_INTERVAL = {
    **INTERVAL_SCHEMA,
    "properties": {
        **INTERVAL_SCHEMA["properties"],
        "method": {"enum": [*_METHODS, NORMAL]},
    },
}

TUNING_SCHEMA = report_schema(
    SCHEMA_NAME,
    SCHEMA_VERSION,
    "nbcli tuning report",
    required=["model_type", "n_samples", "grid", "fixed", "plan", "results", "best", "output"],
    properties={
        "model_type": {"type": "string"},
        "n_samples": {"type": "integer", "minimum": 1},
        "grid": {"type": "object", "additionalProperties": {"type": "array", "items": _VALUE}},
        "fixed": {"type": "object"},
        "plan": {"type": "object"},
        "results": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["params", "metrics"],
                "additionalProperties": False,
                "properties": {
                    "params": {"type": "object", "additionalProperties": _VALUE},
                    "metrics": {
                        "type": "object",
                        "required": list(RESULT_KEYS),
                        "additionalProperties": False,
                        "properties": {k: _INTERVAL for k in METRIC_KEYS},
                    },
                },
            },
        },
        "best": {
            "type": "object",
            "required": ["params", "metric", "value", "index"],
            "additionalProperties": False,
            "properties": {
                "params": {"type": "object"},
                "metric": {"enum": list(SEARCH_METRICS)},
                "value": {"type": ["number", "null"]},
                "index": {"type": "integer", "minimum": 0},
            },
        },
        "output": {"type": ["string", "null"]},
        "ranking_class": {"type": ["string", "integer", "number", "boolean", "null"]},
        "thresholds": THRESHOLDS_SCHEMA,
    },
)
"""JSON Schema (draft 2020-12) of :meth:`TuningReport.to_dict`."""
