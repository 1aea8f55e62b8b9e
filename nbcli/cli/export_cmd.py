"""``nbcli export``: a model file as an ONNX graph."""

from __future__ import annotations

from typing import Annotated

import typer

from nbcli.cli import common


def export(
    model: Annotated[
        str,
        typer.Argument(metavar="MODEL", help="Model file written by nbcli fit or tune."),
    ],
    output: Annotated[
        str, typer.Option("--output", "-o", help="Where to write the exported model (.onnx).")
    ] = "model.onnx",
    fmt: Annotated[str, typer.Option("--format", help="Export format: onnx.")] = "onnx",
    quiet: Annotated[bool, common.QUIET] = False,
    force: Annotated[bool, common.FORCE] = False,
):
    """Write a model file as an ONNX graph that ONNX Runtime (or any ONNX runtime) serves.

    The graph takes one float64 input X (rows x the model's features, in the
    model file's order; NaN for a missing cell), or, for a model with
    categorical or text columns, one input a column (text for a categorical
    one, term counts for a text one), and outputs label and probabilities
    (classes in nbcli's order). Every model type is exported, calibrators
    included.
    Example: nbcli export iris.npz -o iris.onnx
    """
    from nbcli.cli.console import info
    from nbcli.workflows.export import export_model

    report = export_model(model, output, fmt.lower(), force=force)
    info(
        f"wrote {report.output} ({report.model_type}: {report.n_features} features, "
        f"{report.n_classes} classes)",
        quiet,
    )
    return 0
