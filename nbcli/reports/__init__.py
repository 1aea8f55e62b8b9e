"""Scoring reports as plain data objects: evaluation, comparison, calibration.

Each builder takes labels and posterior probabilities (no files) and returns
a report whose ``to_dict()`` is its JSON form; :mod:`nbcli.render` draws the
same reports as tables.

The names below are imported from their modules on first use, so that a
command importing one report (``evaluate``) does not import the others.

NumPy and SciPy only: no file I/O, no printing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nbcli.reports.bootstrap import Interval
    from nbcli.reports.comparison import COMPARISON_SCHEMA, ComparisonReport, build_comparison
    from nbcli.reports.evaluation import EVALUATION_SCHEMA, EvaluationReport, build_evaluation
    from nbcli.reports.reliability import (
        CALIBRATION_SCHEMA,
        RECALIBRATION_SCHEMA,
        CalibrationReport,
        RecalibrationReport,
        build_calibration,
    )
    from nbcli.reports.thresholds import (
        CALIBRATION_METRICS,
        COMPARISON_METRICS,
        EVALUATION_METRICS,
        Threshold,
        check_thresholds,
        parse_threshold,
    )

_MODULES = {
    "Interval": "bootstrap",
    "COMPARISON_SCHEMA": "comparison",
    "ComparisonReport": "comparison",
    "build_comparison": "comparison",
    "EVALUATION_SCHEMA": "evaluation",
    "EvaluationReport": "evaluation",
    "build_evaluation": "evaluation",
    "CALIBRATION_SCHEMA": "reliability",
    "RECALIBRATION_SCHEMA": "reliability",
    "CalibrationReport": "reliability",
    "RecalibrationReport": "reliability",
    "build_calibration": "reliability",
    "CALIBRATION_METRICS": "thresholds",
    "COMPARISON_METRICS": "thresholds",
    "EVALUATION_METRICS": "thresholds",
    "Threshold": "thresholds",
    "check_thresholds": "thresholds",
    "parse_threshold": "thresholds",
}


def __getattr__(name: str) -> Any:
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_MODULES})


__all__ = [
    "CALIBRATION_METRICS",
    "CALIBRATION_SCHEMA",
    "COMPARISON_METRICS",
    "COMPARISON_SCHEMA",
    "EVALUATION_METRICS",
    "EVALUATION_SCHEMA",
    "CalibrationReport",
    "ComparisonReport",
    "EvaluationReport",
    "Interval",
    "RECALIBRATION_SCHEMA",
    "RecalibrationReport",
    "Threshold",
    "build_calibration",
    "build_comparison",
    "build_evaluation",
    "check_thresholds",
    "parse_threshold",
]
