"""Human-readable output of the reports: Rich tables.

:func:`render` picks the renderer for a report object; the console to print
on comes from :func:`nbcli.render.tables.make_console`.
"""

from __future__ import annotations

from nbcli.render.tables import (
    make_console,
    reliability_table,
    render_calibration,
    render_comparison,
    render_evaluation,
)

__all__ = [
    "make_console",
    "reliability_table",
    "render",
    "render_calibration",
    "render_comparison",
    "render_evaluation",
]


def render(report) -> list:
    """Renderables for any report of :mod:`nbcli.reports`.

    Raises TypeError for an object that is not one of those reports.
    """
    from nbcli.reports import (
        CalibrationReport,
        ComparisonReport,
        EvaluationReport,
        RecalibrationReport,
    )
    from nbcli.reports.model import ModelReport
    from nbcli.reports.runs import BatchReport, TrainingReport

    if isinstance(report, ModelReport):
        from nbcli.render.model import render_model

        return render_model(report)
    if isinstance(report, TrainingReport):
        from nbcli.render.summaries import render_training

        return render_training(report)
    if isinstance(report, BatchReport):
        from nbcli.render.summaries import render_batch

        return render_batch(report)
    if isinstance(report, EvaluationReport):
        return render_evaluation(report)
    from nbcli.reports.cross_validation import CrossValidationReport
    from nbcli.reports.tuning import TuningReport

    if isinstance(report, CrossValidationReport):
        from nbcli.render.selection import render_cross_validation

        return render_cross_validation(report)
    if isinstance(report, TuningReport):
        from nbcli.render.selection import render_tuning

        return render_tuning(report)
    if isinstance(report, ComparisonReport):
        return render_comparison(report)
    if isinstance(report, RecalibrationReport):
        from rich.text import Text

        from nbcli.render.model import calibrator_text
        from nbcli.render.tables import verdict_table

        refused = report.verdict is not None and report.verdict.chosen is None
        title = "Best candidate, not accepted" if refused else "Fitted calibrator"
        fitted = Text(f"{title}: {calibrator_text(report.calibrator)}")
        verdict = verdict_table(report.verdict) if report.verdict is not None else []
        return [fitted, *render_calibration(report.after, before=report.before), *verdict]
    if isinstance(report, CalibrationReport):
        return render_calibration(report)
    raise TypeError(f"no renderer for {type(report).__name__}")
