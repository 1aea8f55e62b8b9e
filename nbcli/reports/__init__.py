"""Scoring reports as plain data objects: evaluation, comparison, calibration.

Each builder takes labels and posterior probabilities (no files) and returns
a report whose ``to_dict()`` is its JSON form; :mod:`nbcli.render` draws the
same reports as tables.

NumPy and SciPy only: no file I/O, no printing.
"""

from nbcli.reports.bootstrap import Interval
from nbcli.reports.comparison import ComparisonReport, build_comparison
from nbcli.reports.evaluation import EVALUATION_SCHEMA, EvaluationReport, build_evaluation
from nbcli.reports.reliability import CalibrationReport, RecalibrationReport, build_calibration
from nbcli.reports.thresholds import (
    CALIBRATION_METRICS,
    COMPARISON_METRICS,
    EVALUATION_METRICS,
    Threshold,
    check_thresholds,
    parse_threshold,
)

__all__ = [
    "CALIBRATION_METRICS",
    "COMPARISON_METRICS",
    "EVALUATION_METRICS",
    "EVALUATION_SCHEMA",
    "CalibrationReport",
    "ComparisonReport",
    "EvaluationReport",
    "Interval",
    "RecalibrationReport",
    "Threshold",
    "build_calibration",
    "build_comparison",
    "build_evaluation",
    "check_thresholds",
    "parse_threshold",
]
