"""``nbcli evaluate`` and ``nbcli compare``: score models on labelled data, for people and for CI."""

from __future__ import annotations

import math
from enum import Enum
from typing import Annotated

import typer

from nbcli.cli import common, table_options
from nbcli.errors import NbcliError

BOOTSTRAP = typer.Option(
    "--bootstrap",
    callback=common.check_bootstrap,
    metavar="N",
    help="Bootstrap resamples for the confidence intervals: 0 (no intervals) or 100 to 1,000,000.",
)
CONFIDENCE_RANGE = (0.5, 0.9999)


POS_LABEL = common.pos_label_option(
    "average precision and the binary precision, recall and F1 are of it"
)


def check_confidence(value: float | None) -> float | None:
    """``--confidence``: NaN is refused as out of range (a range check alone
    lets it through, since every comparison with NaN is false)."""
    if value is not None and math.isnan(value):
        low, high = CONFIDENCE_RANGE
        raise typer.BadParameter(f"{value} is not in the range {low}<=x<={high}.")
    return value


CONFIDENCE = typer.Option(
    "--confidence",
    min=CONFIDENCE_RANGE[0],
    max=CONFIDENCE_RANGE[1],
    callback=check_confidence,
    help="Confidence level of the intervals.",
)
SEED = typer.Option(
    "--seed", min=0, help="Seed of the bootstrap: the same seed gives the same intervals."
)


class PlotFormat(str, Enum):
    png = "png"
    svg = "svg"


MISSING = typer.Option(
    "--missing",
    metavar="error|ignore|drop",
    help="Missing feature cells: error (refuse), ignore (naive Bayes: leave the cell out) or "
    "drop (leave the row out of the evaluation; the report counts it). Default: the model's "
    "policy, except that a row it would drop is refused.",
)
FAIL_UNDER = common.fail_option("under", "accuracy=0.9 or accuracy.lower=0.85")
FAIL_OVER = common.fail_option("over", "log_loss=0.5 or ece=0.05", " for losses")
COMPARE_FAIL_UNDER = common.fail_option("under", "difference.upper=0 or accuracy_b=0.9")
COMPARE_FAIL_OVER = common.fail_option("over", "p_value=0.05 or difference.lower=0.1")


@common.with_engine_options
@common.with_read_options
def evaluate(
    model: Annotated[str, common.MODEL],
    data_files: Annotated[
        list[str],
        common.data_option(
            "Labelled test data (CSV, NPZ, Parquet, - for stdin); a folder or quoted glob "
            "of CSV/Parquet parts is one data set."
        ),
    ],
    target: Annotated[str | None, common.SCORING_TARGET] = None,
    bootstrap: Annotated[int, BOOTSTRAP] = 1000,
    confidence: Annotated[float, CONFIDENCE] = 0.95,
    seed: Annotated[int, SEED] = 0,
    bins: Annotated[
        int | None,
        typer.Option(
            "--bins",
            min=1,
            max=1000,
            metavar="N",
            help="Equal-width confidence bins of the calibration summary: 1 to 1,000, "
            "at most the number of rows. Default: 10 (fewer for fewer rows).",
        ),
    ] = None,
    json_out: Annotated[str | None, common.JSON] = None,
    plot: Annotated[
        str | None,
        typer.Option(
            "--plot",
            metavar="PREFIX",
            help="Also draw PREFIX.reliability, PREFIX.roc and PREFIX.confusion images (needs matplotlib).",
        ),
    ] = None,
    plot_format: Annotated[
        PlotFormat,
        typer.Option("--plot-format", help="Image format of --plot.", case_sensitive=False),
    ] = PlotFormat.png,
    fail_under: Annotated[list[str] | None, FAIL_UNDER] = None,
    fail_over: Annotated[list[str] | None, FAIL_OVER] = None,
    missing: Annotated[str | None, MISSING] = None,
    unseen: Annotated[str | None, table_options.UNSEEN] = None,
    na_values: Annotated[list[str] | None, table_options.SCORING_NA_VALUES] = None,
    read: common.ReadOptions = common.READING,
    quiet: Annotated[bool, common.QUIET] = False,
    engine: common.EngineOptions = common.LOCAL,
    force: Annotated[bool, common.FORCE] = False,
    pos_label: Annotated[str | None, POS_LABEL] = None,
):
    """Score a model on labelled data: metrics with bootstrap intervals, confusion matrix,
    per-class table and calibration summary.

    With --engine dask, or a folder or glob of parts, each part is scored where it is read and
    only sums travel; the figures and intervals are those of the parts joined into one file.
    Exit codes: 0 ok, 2 bad command or input, 3 a --fail-under/--fail-over threshold missed.
    Example: nbcli evaluate -m iris.npz -d sample_data/iris_test.csv --fail-under accuracy.lower=0.8
    """
    from nbcli.cli.progress import ConsoleReporter
    from nbcli.io.atomic import check_outputs
    from nbcli.reports.thresholds import EVALUATION_METRICS
    from nbcli.workflows.evaluate import evaluate as run_evaluation

    thresholds = common.parse_thresholds(fail_under, fail_over, EVALUATION_METRICS, bootstrap)
    data_list = list(data_files)
    data = common.data_name(data_list)
    common.check_model_file(model)
    plots = plot_paths(plot, plot_format.value)
    check_outputs(
        [("--json", json_out), *(("--plot", p) for p in plots.values())],
        [("--model", model), *(("--data", d) for d in data_list)],
        force=force,
    )
    if plots:
        common.check_plot(plots["reliability"])
    from nbcli.cli.requests import data_request
    from nbcli.workflows.settings import ScoreSettings

    request = data_request(locals())
    if engine.uses_parts(data_list):
        from nbcli.workflows.evaluate_parts import evaluate_parts

        if plots:
            # The part-wise path reduces rows to sums where they are read;
            # curves need every row's scores in one place.
            raise NbcliError("--plot needs the rows in one file; it does not work on parts")
        if missing == "drop":
            # Part sums have no count of the rows left out for the report to give.
            raise NbcliError("--missing drop needs the rows in one file; it does not work on parts")
        if pos_label is not None:
            raise NbcliError(
                "--pos-label needs the rows in one file: the binary figures it chooses are "
                "not computed over parts"
            )
        with engine.open() as eng:
            scores = ScoreSettings(bootstrap, confidence, seed, bins)
            report = evaluate_parts(model, request, eng, scores)
    else:
        engine.open()  # refuses Dask options
        report = run_evaluation(
            model,
            # Hashing reads the files again: only for a JSON report, as cv does.
            request.reading(data=(data,)),
            ScoreSettings(bootstrap, confidence, seed, bins),
            reporter=ConsoleReporter(quiet),
            pos_label=pos_label,
        )
    # Drawn before anything is written, so that a failure leaves no output behind.
    images = evaluation_images(report, f".{plot_format.value}") if plots else {}
    common.show_warnings(report.warnings)
    common.record_thresholds(report, thresholds)
    common.emit_report(report, json_out, quiet=quiet)
    if images:
        import sys

        from nbcli.io.atomic import atomic_write

        for name, path in plots.items():
            with atomic_write(path, "wb") as f:
                f.write(images[name])
            if not quiet and json_out != "-":
                sys.stderr.write(f"wrote {path}\n")
    common.enforce_thresholds(report.threshold_values(), thresholds)
    return 0


def plot_paths(prefix: str | None, fmt: str) -> dict[str, str]:
    """``{"reliability": PREFIX.reliability.png, "roc": ..., "confusion": ...}`` (empty without a prefix)."""
    if prefix is None:
        return {}
    return {name: f"{prefix}.{name}.{fmt}" for name in ("reliability", "roc", "confusion")}


def evaluation_images(report, suffix: str) -> dict[str, bytes]:
    """The reliability diagram, ROC curves and confusion matrix of ``report`` as image bytes."""
    from nbcli.render.plot import confusion_image, reliability_image, roc_image

    classes = report.labels[: len(report.labels) - len(report.unseen_labels)]
    bins = report.calibration.to_dict()["bins"]
    return {
        "reliability": reliability_image(bins, None, suffix),
        "roc": roc_image(report.roc_curves or [], classes if report.roc_curves else [], suffix),
        "confusion": confusion_image(report.confusion, report.labels, suffix),
    }


@common.with_read_options
def compare(
    models: Annotated[
        list[str], typer.Option("--model", "-m", help="Model file; give exactly two: A then B.")
    ],
    data_files: Annotated[
        list[str], typer.Option("--data", "-d", help="Labelled test data scored by both models.")
    ],
    target: Annotated[str | None, common.SCORING_TARGET] = None,
    bootstrap: Annotated[int, BOOTSTRAP] = 1000,
    confidence: Annotated[float, CONFIDENCE] = 0.95,
    seed: Annotated[int, SEED] = 0,
    json_out: Annotated[str | None, common.JSON] = None,
    fail_under: Annotated[list[str] | None, COMPARE_FAIL_UNDER] = None,
    fail_over: Annotated[list[str] | None, COMPARE_FAIL_OVER] = None,
    missing: Annotated[str | None, MISSING] = None,
    unseen: Annotated[str | None, table_options.UNSEEN] = None,
    na_values: Annotated[list[str] | None, table_options.SCORING_NA_VALUES] = None,
    read: common.ReadOptions = common.READING,
    quiet: Annotated[bool, common.QUIET] = False,
    force: Annotated[bool, common.FORCE] = False,
):
    """Compare two models on the same rows: accuracies, the paired difference B - A with a
    bootstrap interval, the agreement table and McNemar's exact test.

    Example (fail when B is significantly worse than A):
    nbcli compare -m a.npz -m b.npz -d test.csv --fail-under difference.upper=0
    """
    if len(models) != 2:
        raise NbcliError(f"compare needs exactly two --model files (A and B), got {len(models)}")
    from nbcli.cli.progress import ConsoleReporter
    from nbcli.io.atomic import check_outputs
    from nbcli.reports.thresholds import COMPARISON_METRICS
    from nbcli.workflows.evaluate import compare as run_comparison

    thresholds = common.parse_thresholds(fail_under, fail_over, COMPARISON_METRICS, bootstrap)
    data = common.one_data_file(data_files)
    for m in models:
        common.check_model_file(m)
    check_outputs(
        [("--json", json_out)],
        [*(("--model", m) for m in models), ("--data", data)],
        force=force,
    )
    from nbcli.cli.requests import data_request
    from nbcli.workflows.settings import ScoreSettings

    report = run_comparison(
        models,
        data_request(locals()).reading(data=(data,)),
        ScoreSettings(bootstrap, confidence, seed),
        reporter=ConsoleReporter(quiet),
    )
    common.show_warnings(report.warnings)
    common.record_thresholds(report, thresholds)
    common.emit_report(report, json_out, quiet=quiet)
    common.enforce_thresholds(report.threshold_values(), thresholds)
    return 0
