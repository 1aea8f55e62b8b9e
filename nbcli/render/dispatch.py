"""One entry point from a report to its Rich renderables, chosen by the report's schema."""

from __future__ import annotations

import importlib

_RENDERERS = {
    "nbcli.training": ("nbcli.render.summaries", "render_training"),
    "nbcli.batch": ("nbcli.render.summaries", "render_batch"),
    "nbcli.evaluation": ("nbcli.render.tables", "render_evaluation"),
    "nbcli.comparison": ("nbcli.render.tables", "render_comparison"),
    "nbcli.calibration": ("nbcli.render.tables", "render_calibration"),
}


def render(report) -> list:
    """Rich renderables for any nbcli report (it has a ``schema`` name)."""
    module, func = _RENDERERS[report.schema]
    return getattr(importlib.import_module(module), func)(report)
