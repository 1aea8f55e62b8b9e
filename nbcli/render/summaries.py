"""Rich tables for ``nbcli fit`` and batch ``nbcli predict``."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text

from nbcli.terminal import escape_controls


def _fmt_param(value) -> str:
    return "default" if value is None else str(value)


def render_training(report) -> list:
    """Summary of a fit: model, data, classes with counts and priors, time, training accuracy."""
    head = Table(title="Model", show_header=False, box=None, pad_edge=False, title_justify="left")
    head.add_column(style="bold", no_wrap=True)
    head.add_column(overflow="fold")
    head.add_row("model", report.model_type)
    params = ", ".join(f"{k}={_fmt_param(v)}" for k, v in report.hyperparameters.items())
    head.add_row("hyperparameters", params or "-")
    head.add_row("data", report.data)
    head.add_row("target", str(report.target))
    head.add_row("samples", f"{report.n_samples:,}")
    n = len(report.feature_names)
    shown = ", ".join(report.feature_names[:8]) + (f", ... ({n - 8} more)" if n > 8 else "")
    head.add_row("features", f"{n}: {shown}")
    head.add_row(
        "time",
        f"{report.seconds:.3f} s" + (f" ({report.n_chunks} chunks)" if report.n_chunks > 1 else ""),
    )
    if report.training_accuracy is not None:
        head.add_row("training accuracy", f"{report.training_accuracy:.4f}")
    else:
        head.add_row("training accuracy", "not computed for streamed data; use nbcli evaluate")
    if report.output:
        head.add_row("written to", report.output)

    classes = Table(title="Classes")
    classes.add_column("class", overflow="fold")
    classes.add_column("count", justify="right")
    classes.add_column("prior", justify="right")
    for label, count, prior in zip(report.classes, report.class_counts, report.priors):
        classes.add_row(
            Text(escape_controls(str(label))),
            f"{count:,}" if isinstance(count, int) else f"{count:g}",
            f"{prior:.4f}",
        )
    return [head, classes]


def render_batch(report) -> list:
    """One row per input file: rows scored and the output, or why it was skipped."""
    table = Table(title="Batch prediction")
    table.add_column("input", overflow="fold")
    table.add_column("rows", justify="right")
    table.add_column("output / error", overflow="fold")
    for inp, out, rows, error in report.rows:
        table.add_row(
            inp,
            f"{rows:,}" if error is None else "-",
            out if error is None else Text("skipped: " + escape_controls(error)),
        )
    return [table]
