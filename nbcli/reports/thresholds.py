"""Quality gates: ``--fail-under METRIC=VALUE`` and ``--fail-over METRIC=VALUE``.

``METRIC`` is a report metric key, optionally followed by ``.lower`` or
``.upper`` to check an end of its confidence interval instead of the
estimate: ``accuracy=0.90``, ``accuracy.lower=0.85``, ``log_loss.upper=0.4``.

* ``--fail-under``: the value must be at least the threshold (for metrics
  where higher is better, and for neutral ones such as ``difference``);
* ``--fail-over``: the value must be at most the threshold (for losses such
  as ``log_loss``, ``brier``, ``ece``, and neutral ones such as ``p_value``).

:func:`threshold_outcomes` checks every threshold (a JSON report lists them
in its ``thresholds`` member, :data:`THRESHOLDS_SCHEMA`);
:func:`check_thresholds` returns one line per missed threshold; the CLI exits
with code 3 when there is any.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Collection, Mapping
from dataclasses import dataclass

UNDER = "under"
OVER = "over"

HIGHER_IS_BETTER = frozenset({UNDER})
LOWER_IS_BETTER = frozenset({OVER})
EITHER = frozenset({UNDER, OVER})


@dataclass(frozen=True)
class MetricInfo:
    """Which threshold directions make sense for a metric, and whether it has an interval."""

    directions: frozenset
    has_interval: bool = True
    #: The closed range the metric's values lie in: a threshold outside it can
    #: never pass (or never fail), which is a typo rather than a gate.
    bounds: tuple[float, float] = (0.0, 1.0)


EVALUATION_METRICS: dict[str, MetricInfo] = {
    "accuracy": MetricInfo(HIGHER_IS_BETTER),
    "balanced_accuracy": MetricInfo(HIGHER_IS_BETTER),
    "macro_f1": MetricInfo(HIGHER_IS_BETTER),
    "cohen_kappa": MetricInfo(HIGHER_IS_BETTER, bounds=(-1.0, 1.0)),
    "log_loss": MetricInfo(LOWER_IS_BETTER, bounds=(0.0, math.inf)),
    "brier": MetricInfo(LOWER_IS_BETTER, bounds=(0.0, 2.0)),
    "roc_auc": MetricInfo(HIGHER_IS_BETTER),
    "roc_auc_weighted": MetricInfo(HIGHER_IS_BETTER),
    "average_precision": MetricInfo(HIGHER_IS_BETTER),
    "ece": MetricInfo(LOWER_IS_BETTER, has_interval=False),
    "mce": MetricInfo(LOWER_IS_BETTER, has_interval=False),
    "mean_confidence": MetricInfo(EITHER, has_interval=False),
}
"""Metrics of ``nbcli evaluate`` and ``nbcli cv`` (:meth:`EvaluationReport.threshold_values`)."""

COMPARISON_METRICS: dict[str, MetricInfo] = {
    "difference": MetricInfo(EITHER, bounds=(-1.0, 1.0)),
    "accuracy_a": MetricInfo(HIGHER_IS_BETTER),
    "accuracy_b": MetricInfo(HIGHER_IS_BETTER),
    "p_value": MetricInfo(EITHER, has_interval=False),
}
"""Metrics of ``nbcli compare`` (:meth:`ComparisonReport.threshold_values`)."""

CALIBRATION_METRICS: dict[str, MetricInfo] = {
    "ece": MetricInfo(LOWER_IS_BETTER),
    "brier": MetricInfo(LOWER_IS_BETTER, bounds=(0.0, 2.0)),
    "log_loss": MetricInfo(LOWER_IS_BETTER, bounds=(0.0, math.inf)),
    "mce": MetricInfo(LOWER_IS_BETTER, has_interval=False),
    "mean_confidence": MetricInfo(EITHER, has_interval=False),
    "accuracy": MetricInfo(HIGHER_IS_BETTER, has_interval=False),
}
"""Metrics of ``nbcli calibrate`` (:meth:`CalibrationReport.threshold_values`)."""

ALL_METRICS: dict[str, MetricInfo] = {
    **CALIBRATION_METRICS,
    **COMPARISON_METRICS,
    **EVALUATION_METRICS,
}
"""Every metric name, for looking up the kind of a metric given by name only."""

_PARTS = ("value", "lower", "upper")
_OPTION = {UNDER: "--fail-under", OVER: "--fail-over"}


@dataclass(frozen=True)
class Threshold:
    """One gate: ``metric`` (and ``part`` of its interval) compared with ``value``."""

    metric: str
    part: str
    value: float
    direction: str

    @property
    def name(self) -> str:
        """``accuracy`` or ``accuracy.lower``."""
        return self.metric if self.part == "value" else f"{self.metric}.{self.part}"


def parse_threshold(
    text: str,
    direction: str,
    known: Mapping[str, MetricInfo] | Collection[str] = EVALUATION_METRICS,
) -> Threshold:
    """Parse ``METRIC[.lower|.upper]=VALUE``.

    Parameters
    ----------
    text : str
        The option's argument, e.g. ``"accuracy.lower=0.85"``.
    direction : "under" or "over"
        ``--fail-under`` (value must be >= threshold) or ``--fail-over``
        (value must be <= threshold).
    known : mapping or collection of str
        The report's metrics (:data:`EVALUATION_METRICS`,
        :data:`COMPARISON_METRICS` or :data:`CALIBRATION_METRICS`), or just
        their names (their kinds are then looked up in :data:`ALL_METRICS`).

    Raises
    ------
    ValueError
        With a one-line message: no ``=``, an unknown metric (the known ones
        are listed), an unknown part, a part on a metric without an
        interval, a direction that makes no sense for the metric (e.g.
        ``--fail-under log_loss=...``), a value that is not a finite number, or one outside the metric's
        range (``accuracy=1.5``).
    """
    if direction not in _OPTION:
        raise ValueError(f"unknown threshold direction {direction!r}; use 'under' or 'over'")
    option = _OPTION[direction]
    if not isinstance(known, Mapping):
        known = {
            k: ALL_METRICS.get(k, MetricInfo(EITHER, bounds=(-math.inf, math.inf))) for k in known
        }
    name, sep, number = text.partition("=")
    name, number = name.strip(), number.strip()
    if not sep or not name or not number:
        raise ValueError(
            f"{option} {text!r}: expected METRIC=VALUE, e.g. accuracy=0.9 or accuracy.lower=0.85"
        )
    metric, _, part = name.partition(".")
    part = part or "value"
    if metric not in known:
        raise ValueError(
            f"{option} {text!r}: unknown metric {metric!r}; known metrics: {', '.join(known)}"
        )
    info = known[metric]
    if part not in _PARTS:
        raise ValueError(
            f"{option} {text!r}: unknown part {part!r}; use {metric}, {metric}.lower or {metric}.upper"
        )
    if part != "value" and not info.has_interval:
        # The way on names the option the metric takes, which the check of
        # direction below would otherwise refuse next.
        way = option if direction in info.directions else _OPTION[next(iter(info.directions))]
        raise ValueError(
            f"{option} {text!r}: {metric} has no interval; use {way} {metric}={number}"
        )
    if direction not in info.directions:
        other = _OPTION[OVER if direction == UNDER else UNDER]
        better = "lower" if direction == UNDER else "higher"
        raise ValueError(f"{option} {text!r}: {better} is better for {metric}; use {other} {text}")
    try:
        value = float(number)
    except ValueError:
        raise ValueError(f"{option} {text!r}: {number!r} is not a number") from None
    if not math.isfinite(value):
        raise ValueError(f"{option} {text!r}: the threshold must be a finite number")
    low, high = info.bounds
    if not low <= value <= high:
        span = f"[{low:g}, {high:g}]" if math.isfinite(high) else f"[{low:g}, inf)"
        raise ValueError(f"{option} {text!r}: {metric} lies in {span}, so {number} is no threshold")
    return Threshold(metric, part, value, direction)


def _format_pair(value: float, threshold: float) -> str:
    # Enough digits that a value just below the threshold does not print as equal to it.
    shown = format(threshold, "g")
    for digits in range(4, 17):
        text = f"{value:.{digits}f}"
        if text != shown and float(text) != threshold:
            return text
    return repr(value)


#: The key of a value's mapping (in ``threshold_values()``) counting the rows
#: its figure leaves out; a threshold on such a figure fails.
LEFT_OUT = "rows_left_out"


def mark_left_out(values: dict, keys, n_rows: int) -> None:
    """Mark the ``values`` of ``keys`` (as ``threshold_values()`` holds them:
    interval dicts or plain numbers) as figures that leave out ``n_rows``
    rows, in place, so that a threshold on any of them fails; a plain number
    becomes an interval dict without ends."""
    for key in keys:
        v = values.get(key)
        if v is None:
            continue
        if not isinstance(v, dict):
            v = {"value": v, "lower": None, "upper": None, "method": "none"}
        values[key] = {**v, LEFT_OUT: int(n_rows)}


@dataclass(frozen=True)
class ThresholdOutcome:
    """One threshold as checked: the value it was compared with and, when
    missed, the one-line message saying so (None: it passed)."""

    threshold: Threshold
    value: float | None
    failure: str | None

    @property
    def passed(self) -> bool:
        return self.failure is None

    def to_dict(self) -> dict:
        """The JSON form (an item of :data:`THRESHOLDS_SCHEMA`)."""
        t = self.threshold
        return {
            "metric": t.name,
            "option": _OPTION[t.direction],
            "threshold": float(t.value),
            "value": self.value,
            "passed": self.passed,
        }


def threshold_outcomes(values: Mapping[str, object], thresholds) -> list[ThresholdOutcome]:
    """Every threshold checked against ``values``, in the order given.

    Parameters
    ----------
    values : mapping
        Metric name to an interval dict ``{"value", "lower", "upper",
        "method"}`` or a plain number (``None`` for undefined), as returned
        by a report's ``threshold_values()``.
    thresholds : iterable of Threshold

    An undefined value (null, or an interval end when no resampling was done)
    fails its threshold: a gate that cannot be checked does not pass. So does
    a value whose mapping holds a positive :data:`LEFT_OUT`: a figure
    computed without some of the rows (those with labels the model never saw).

    Raises KeyError naming the metric when ``values`` lacks it.
    """
    out = []
    for t in thresholds:
        if t.metric not in values:
            raise KeyError(f"the report has no metric {t.metric!r}")
        entry = values[t.metric]
        value = (
            entry.get(t.part)
            if isinstance(entry, Mapping)
            else (entry if t.part == "value" else None)
        )
        shown_threshold = format(t.value, "g")
        if not isinstance(value, numbers.Real) or not math.isfinite(float(value)):
            message = f"{t.name} is undefined, so the threshold {shown_threshold} cannot be met"
            out.append(ThresholdOutcome(t, None, message))
            continue
        value = float(value)
        failure = None
        left_out = entry.get(LEFT_OUT) if isinstance(entry, Mapping) else None
        if left_out:
            # A figure over some of the rows cannot vouch for all of them: a
            # model that never saw a class would pass on the rows it knows.
            rows = f"{left_out:,} row{'s' if left_out != 1 else ''}"
            failure = (
                f"{t.name} {format(value, '.4g')} leaves out the {rows} whose labels the model "
                f"never saw, so the threshold {shown_threshold} is not met; remove such rows "
                "from the data to gate on the others"
            )
        elif t.direction == UNDER and value < t.value:
            failure = (
                f"{t.name} {_format_pair(value, t.value)} is below the threshold {shown_threshold}"
            )
        elif t.direction == OVER and value > t.value:
            failure = (
                f"{t.name} {_format_pair(value, t.value)} is above the threshold {shown_threshold}"
            )
        out.append(ThresholdOutcome(t, value, failure))
    return out


def check_thresholds(values: Mapping[str, object], thresholds) -> list[str]:
    """One-line messages for the thresholds that ``values`` miss; empty when all pass
    (see :func:`threshold_outcomes`).

    Raises KeyError naming the metric when ``values`` lacks it.
    """
    return [o.failure for o in threshold_outcomes(values, thresholds) if o.failure is not None]


def thresholds_member(checked: list) -> dict:
    """``{"thresholds": checked}`` for a report's JSON form, or nothing when none were given."""
    return {"thresholds": list(checked)} if checked else {}


THRESHOLDS_SCHEMA: dict = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["metric", "option", "threshold", "value", "passed"],
        "additionalProperties": False,
        "properties": {
            "metric": {"type": "string"},
            "option": {"enum": list(_OPTION.values())},
            "threshold": {"type": "number"},
            "value": {"type": ["number", "null"]},
            "passed": {"type": "boolean"},
        },
    },
}
"""JSON Schema of a report's ``thresholds`` member: each threshold checked
(the ``--fail-under`` ones first, then the ``--fail-over`` ones, each in the
order given), with the value it was compared with (null: undefined, which
fails) and whether it passed. The member is present when thresholds were
given."""
