"""``nbcli inspect``: what a model file holds."""

from __future__ import annotations

from typing import Annotated

import typer

from nbcli.cli import common
from nbcli.errors import NbcliError


def inspect(
    model: Annotated[
        str,
        typer.Argument(metavar="MODEL", help="Model file written by nbcli fit, calibrate or tune."),
    ],
    top: Annotated[
        int,
        typer.Option("--top", help="Features shown per class (naive Bayes) or direction (LDA)."),
    ] = 10,
    json_out: Annotated[str | None, common.JSON] = None,
    quiet: Annotated[bool, common.QUIET] = False,
    force: Annotated[bool, common.FORCE] = False,
):
    """Describe a model file: versions, model, hyperparameters, classes, features,
    training data, calibrator, search; and what the model learnt.

    Naive Bayes: the most indicative features of each class (log-probability
    ratios against the other classes). LDA: the discriminant directions with
    their share of the between-class variance. QDA: each class covariance's
    log-determinant and condition number.
    Example: nbcli inspect iris.npz --top 3 --json -
    """
    from nbcli.io.atomic import check_outputs
    from nbcli.workflows.inspect import inspect_model

    if top < 1:
        raise NbcliError(f"--top must be at least 1; got {top}")
    check_outputs([("--json", json_out)], [("MODEL", model)], force=force)
    report = inspect_model(model, top=top)
    common.emit_report(report, json_out, quiet=quiet)
    if not quiet:
        from nbcli.cli.console import warn

        for message in report.warnings:
            warn(message)
    return 0
