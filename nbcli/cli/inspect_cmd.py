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
        typer.Option(
            "--top",
            help="Features shown per class (naive Bayes) or direction (LDA); columns, and "
            "categories per column, whose learnt parameters are shown.",
        ),
    ] = 10,
    min_df: Annotated[
        str | None,
        typer.Option(
            "--min-df",
            "--min-count",
            metavar="N",
            help="Models with counts (multinomial, Bernoulli; text): list as indicative only "
            "features found in at least N training documents (document frequency, over all "
            "classes; occurrences for a model file that stores no document frequencies), or, "
            "N a fraction in (0, 1] (with a point: 1.0 is every row, 1 one row), that share of the "
            "training rows (default 0.01). 0 lists every feature. "
            "--min-count is the same option.",
        ),
        # nbcli.reports.model.MIN_DF, not imported here: --help stays free of NumPy.
    ] = None,
    json_out: Annotated[str | None, common.JSON] = None,
    quiet: Annotated[bool, common.QUIET] = False,
    force: Annotated[bool, common.FORCE] = False,
):
    """Describe a model file: versions, model, hyperparameters, classes, features,
    training data, calibrator, search; and what the model learnt.

    Naive Bayes: the most indicative features of each class (log-probability
    ratios against the other classes; words found in at least --min-df
    training documents); per column, what was learnt (Gaussian means and standard
    deviations, categorical P(category | class) tables). LDA: the discriminant directions with
    their share of the between-class variance. QDA: each class covariance's
    log-determinant and condition number.
    Example: nbcli inspect iris.npz --top 3 --json -
    """
    from nbcli.io.atomic import check_outputs
    from nbcli.workflows.inspect import inspect_model

    if top < 1:
        raise NbcliError(f"--top must be at least 1; got {top}")
    floor = _min_df("0.01" if min_df is None else min_df)
    check_outputs([("--json", json_out)], [("MODEL", model)], force=force)
    report = inspect_model(model, top=top, min_df=floor)
    common.emit_report(report, json_out, quiet=quiet)
    if not quiet:
        from nbcli.cli.console import warn

        for message in report.warnings:
            warn(message)
        if min_df is not None and report.below_min_count is None:
            # No count the floor applies to: say so rather than seem to apply it.
            warn(
                f"--min-df applies to models with counts (multinomial, Bernoulli, text "
                f"columns); the {report.model} model in {model} has none, so it changes nothing"
            )
    return 0


def _min_df(text: str) -> float:
    """``--min-df`` (``--min-count``): a whole number >= 0, or a fraction in
    (0, 1]; as ``fit --min-df`` reads it, ``1.0`` is every row, ``1`` one."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not (value >= 0 and (value.is_integer() or value < 1)):
        raise NbcliError(
            f"--min-df must be a whole number >= 0 or a fraction in (0, 1]; got {text!r}"
        )
    if value == 1 and any(c in text for c in ".eE"):
        return 1.0
    return int(value) if value.is_integer() else value
