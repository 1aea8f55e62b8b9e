"""The report of ``nbcli compare``: two models scored on the same test rows.

Both models are scored row by row as right or wrong, which gives the 2 x 2
agreement table

                    B right        B wrong
    A right     both_correct    only_a_correct
    A wrong    only_b_correct     both_wrong

Accuracies, and the difference B - A, are functions of this table, so the
paired bootstrap (the same resampled rows for both models) draws the four
cells from a multinomial, A's right rows first (see
:func:`nbcli.reports.bootstrap.draw_tables`), so that A's accuracy has the
interval ``evaluate`` gives model A on the same rows and seed. McNemar's exact test (McNemar, Psychometrika 12,
1947; the exact binomial form as in Fagerland, Lydersen and Laake, BMC
Medical Research Methodology 13:91, 2013) asks whether the discordant rows
split evenly: two-sided ``scipy.stats.binomtest(b, b + c, 0.5)`` with
``b = only_a_correct`` and ``c = only_b_correct``; p = 1 with no discordant
rows.

NumPy and SciPy only: no file I/O, no printing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from nbcli.reports.bootstrap import Interval, bootstrap_count_statistics, method_summary
from nbcli.reports.metrics import (
    encode_labels,
    json_number,
    label_key,
    predicted_codes,
    report_header,
)
from nbcli.reports.reliability import unseen_warning
from nbcli.reports.thresholds import thresholds_member

SCHEMA_NAME = "nbcli.comparison"
SCHEMA_VERSION = 1

METRIC_KEYS = ("accuracy_a", "accuracy_b", "difference")


# Statistics of stacks of agreement tables, shape (..., 2, 2): [A right?][B right?]
# with index 0 = right, 1 = wrong.
def _accuracy_a(t):
    return t[..., 0, :].sum(axis=-1) / t.sum(axis=(-2, -1))


def _accuracy_b(t):
    return t[..., :, 0].sum(axis=-1) / t.sum(axis=(-2, -1))


def _difference(t):
    return (t[..., 1, 0] - t[..., 0, 1]) / t.sum(axis=(-2, -1))


_STATISTICS = {"accuracy_a": _accuracy_a, "accuracy_b": _accuracy_b, "difference": _difference}
_A_RIGHT = np.array([[True, True], [False, False]])


def mcnemar_exact(only_a_correct: int, only_b_correct: int) -> float:
    """Two-sided exact McNemar p-value from the two discordant counts.

    ``scipy.stats.binomtest(b, b + c, 0.5)``; 1.0 when ``b + c == 0``.
    """
    # scipy.stats takes half a second to import; only compare needs it.
    from scipy import stats

    b, c = int(only_a_correct), int(only_b_correct)
    if b + c == 0:
        return 1.0
    return float(stats.binomtest(b, b + c, 0.5).pvalue)


@dataclass(frozen=True)
class AgreementTable:
    """Counts of rows each model got right or wrong."""

    both_correct: int
    only_a_correct: int
    only_b_correct: int
    both_wrong: int

    @property
    def counts(self) -> np.ndarray:
        """Shape (2, 2): rows A right/wrong, columns B right/wrong."""
        return np.array(
            [[self.both_correct, self.only_a_correct], [self.only_b_correct, self.both_wrong]]
        )

    @property
    def n_samples(self) -> int:
        return int(self.counts.sum())

    def to_dict(self) -> dict:
        return {
            "both_correct": int(self.both_correct),
            "only_a_correct": int(self.only_a_correct),
            "only_b_correct": int(self.only_b_correct),
            "both_wrong": int(self.both_wrong),
        }


@dataclass
class ComparisonReport:
    """Accuracy of models A and B, the paired difference B - A and McNemar's test."""

    schema: ClassVar[str] = SCHEMA_NAME

    metrics: dict[str, Interval]
    table: AgreementTable
    p_value: float
    warnings: list[str]
    n_samples: int
    inputs: dict
    settings: dict
    #: The ``--fail-under``/``--fail-over`` thresholds as checked.
    thresholds: list = field(default_factory=list)

    def threshold_values(self) -> dict:
        """Values ``--fail-under``/``--fail-over`` can check, by metric name."""
        values: dict[str, object] = {k: v.to_dict() for k, v in self.metrics.items()}
        values["p_value"] = json_number(self.p_value)
        return values

    def to_dict(self) -> dict:
        return {
            **report_header(self.schema, self.inputs, self.settings, SCHEMA_VERSION),
            "n_samples": int(self.n_samples),
            "metrics": {k: v.to_dict() for k, v in self.metrics.items()},
            "agreement": self.table.to_dict(),
            "mcnemar": {
                "test": "exact binomial, two-sided",
                "discordant_a": int(self.table.only_a_correct),
                "discordant_b": int(self.table.only_b_correct),
                "p_value": json_number(self.p_value),
            },
            **thresholds_member(self.thresholds),
            "warnings": list(self.warnings),
        }


def _correct(classes, proba, y_true, who: str, warnings: list[str]) -> np.ndarray:
    coding = encode_labels(classes, y_true)
    proba = np.asarray(proba, dtype=float)
    if proba.shape != (coding.codes.size, coding.n_classes):
        raise ValueError(
            f"proba of model {who} has shape {proba.shape}, expected ({coding.codes.size}, {coding.n_classes})"
        )
    if coding.n_unseen:
        warnings.append(
            unseen_warning(
                coding.unseen_labels, coding.n_unseen, f"model {who}", probabilities=False
            )
        )
    return predicted_codes(proba) == coding.codes


def build_comparison(
    classes_a,
    proba_a,
    classes_b,
    proba_b,
    y_true,
    *,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
    inputs: dict | None = None,
    settings: dict | None = None,
) -> ComparisonReport:
    """Compare two models' predictions of the same test labels.

    Parameters
    ----------
    classes_a, classes_b : arrays of shape (n_classes_a,), (n_classes_b,)
        Each model's class labels in the column order of its posteriors.
    proba_a, proba_b : arrays of shape (n_samples, n_classes_a), (n_samples, n_classes_b)
        Posterior probabilities; predictions are the argmax classes.
    y_true : array of shape (n_samples,)
        Test labels; a label a model never saw counts as an error for it.
    n_resamples, confidence, seed
        Paired bootstrap settings (BCa intervals).
    inputs, settings : dict
        Passed through into the JSON form; computed settings are added.

    Raises ValueError for mismatched shapes or no rows.
    """
    warnings: list[str] = []
    a = _correct(classes_a, proba_a, y_true, "A", warnings)
    b = _correct(classes_b, proba_b, y_true, "B", warnings)
    if a.size == 0:
        raise ValueError("no test rows to compare on")
    keys_a = {label_key(c) for c in np.asarray(classes_a, dtype=object).ravel()}
    keys_b = {label_key(c) for c in np.asarray(classes_b, dtype=object).ravel()}
    if keys_a != keys_b:
        warnings.append("the two models were trained on different sets of classes")
    table = AgreementTable(
        both_correct=int(np.count_nonzero(a & b)),
        only_a_correct=int(np.count_nonzero(a & ~b)),
        only_b_correct=int(np.count_nonzero(~a & b)),
        both_wrong=int(np.count_nonzero(~a & ~b)),
    )
    rng = np.random.default_rng(seed)
    # A's right rows are drawn first, as evaluate draws a model's diagonal
    # first: A's accuracy then has the interval evaluate gives it.
    metrics = bootstrap_count_statistics(
        table.counts,
        _STATISTICS,
        n_resamples=n_resamples,
        confidence=confidence,
        rng=rng,
        correct=_A_RIGHT,
    )
    computed = {
        "bootstrap_resamples": int(n_resamples),
        "confidence": float(confidence),
        "seed": seed,
        "bootstrap_method": method_summary(metrics),
    }
    return ComparisonReport(
        metrics={k: metrics[k] for k in METRIC_KEYS},
        table=table,
        p_value=mcnemar_exact(table.only_a_correct, table.only_b_correct),
        warnings=warnings,
        n_samples=int(a.size),
        inputs=dict(inputs or {}),
        settings={**(settings or {}), **computed},
    )


def _comparison_schema() -> dict:
    from nbcli.reports.bootstrap import INTERVAL_SCHEMA
    from nbcli.reports.metrics import closed_object, report_schema
    from nbcli.reports.thresholds import THRESHOLDS_SCHEMA

    count = {"type": "integer", "minimum": 0}
    cells = ("both_correct", "only_a_correct", "only_b_correct", "both_wrong")
    intervals = ("accuracy_a", "accuracy_b", "difference")
    return report_schema(
        SCHEMA_NAME,
        SCHEMA_VERSION,
        "nbcli comparison report",
        required=["n_samples", "metrics", "agreement", "mcnemar"],
        properties={
            "n_samples": {"type": "integer", "minimum": 1},
            "metrics": closed_object({k: INTERVAL_SCHEMA for k in intervals}),
            "agreement": closed_object({k: count for k in cells}),
            "mcnemar": closed_object(
                {
                    "test": {"type": "string"},
                    "discordant_a": count,
                    "discordant_b": count,
                    "p_value": {"type": ["number", "null"], "minimum": 0, "maximum": 1},
                }
            ),
            "thresholds": THRESHOLDS_SCHEMA,
        },
    )


COMPARISON_SCHEMA: dict = _comparison_schema()
"""JSON Schema (draft 2020-12) of :meth:`ComparisonReport.to_dict`."""
