"""``nbcli calibrate``: measure and repair over-confident posteriors."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from nbcli.cli import common, table_options
from nbcli.cli.evaluate_cmd import BOOTSTRAP, CONFIDENCE, SEED
from nbcli.errors import NbcliError

FAIL_UNDER = common.fail_option("under", "accuracy=0.9 or mean_confidence=0.5")
FAIL_OVER = common.fail_option("over", "ece=0.05 or brier.upper=0.2", " for losses")
MAX_BINS = 1000


class Method(str, Enum):
    auto = "auto"
    temperature = "temperature"
    sigmoid = "sigmoid"
    isotonic = "isotonic"
    none = "none"


class Strategy(str, Enum):
    uniform = "uniform"
    quantile = "quantile"


def parse_bins(text: str):
    """``"10"`` -> 10 bins; ``"0,0.9,0.99,1"`` -> explicit edges."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    try:
        if len(parts) == 1:
            n = int(parts[0])
            if n < 1:
                raise ValueError
        else:
            edges = [float(p) for p in parts]
    except ValueError:
        raise NbcliError(
            f"--bins must be a number of bins (e.g. 10) or increasing edges in [0, 1] "
            f"(e.g. 0,0.9,0.99,0.999,1); got {text!r}"
        ) from None
    count = n if len(parts) == 1 else len(parts) - 1
    if count > MAX_BINS:
        raise NbcliError(f"--bins takes 1 to {MAX_BINS:,} bins; got {count:,}")
    if len(parts) == 1:
        return n
    # Checked before any data is read: a typo in the edges costs no scoring pass.
    from nbcli.reports.reliability import validate_edges

    try:
        validate_edges(edges)
    except ValueError as exc:
        raise NbcliError(f"--bins {text}: {exc}") from None
    return edges


@common.with_engine_options
@common.with_read_options
def calibrate(
    model: Annotated[str, common.MODEL],
    data_files: Annotated[
        list[str],
        common.data_option(
            "Held-out labelled data (not the training data); a folder, a quoted glob or "
            "several --data files of CSV/Parquet parts are one data set."
        ),
    ],
    target: Annotated[str | None, common.SCORING_TARGET] = None,
    method: Annotated[
        Method,
        typer.Option(
            "--method",
            help="Repair: auto (the one with the lowest cross-fitted log-loss among those that "
            "improve it beyond its margin), temperature scaling (one T > 0), sigmoid (Platt "
            "scaling: one-vs-rest sigmoids of the log-odds), isotonic (one-vs-rest maps), or "
            "none (measure only).",
            case_sensitive=False,
        ),
    ] = Method.auto,
    folds: Annotated[
        int,
        typer.Option(
            "--folds",
            min=2,
            max=1000,
            help="Folds of the cross-fitting that judges the calibrator (stratified, seeded "
            "by --seed): each row's 'after' posterior comes from a calibrator fitted on the "
            "other folds. Fewer rows than folds: one fold per row, with a warning.",
        ),
    ] = 5,
    output: Annotated[
        str | None,
        common.output_option("Write a model file that carries the fitted calibrator."),
    ] = None,
    bins: Annotated[
        str | None,
        typer.Option(
            "--bins",
            help="Number of confidence bins (at most the rows), or explicit edges such as "
            "0,0.9,0.99,0.999,1. Default: 10, or one per row when there are fewer.",
        ),
    ] = None,
    strategy: Annotated[
        Strategy,
        typer.Option(
            "--strategy",
            help="uniform: equal-width bins; quantile: equal counts.",
            case_sensitive=False,
        ),
    ] = Strategy.uniform,
    plot: Annotated[
        str | None,
        typer.Option(
            "--plot",
            help="Also draw the reliability diagram to FILE.png or FILE.svg (needs matplotlib).",
        ),
    ] = None,
    allow_training_data: Annotated[
        bool,
        typer.Option(
            "--allow-training-data", help="Calibrate even on the rows the model was trained on."
        ),
    ] = False,
    allow_worse: Annotated[
        bool,
        typer.Option(
            "--allow-worse",
            help="Write the calibrated model even when the calibrator does not improve the "
            "cross-fitted log-loss beyond its margin (with --method auto: the candidate with "
            "the lowest cross-fitted log-loss).",
        ),
    ] = False,
    bootstrap: Annotated[int, BOOTSTRAP] = 1000,
    confidence: Annotated[float, CONFIDENCE] = 0.95,
    seed: Annotated[int, SEED] = 0,
    json_out: Annotated[str | None, common.JSON] = None,
    fail_under: Annotated[list[str] | None, FAIL_UNDER] = None,
    fail_over: Annotated[list[str] | None, FAIL_OVER] = None,
    missing: Annotated[
        str | None,
        typer.Option(
            "--missing",
            metavar="error|ignore|drop",
            help="Missing feature cells: error (refuse), ignore (naive Bayes: leave the cell "
            "out) or drop (leave the row out of the calibration; the report counts it). "
            "Default: the model's policy, except that a row it would drop is refused.",
        ),
    ] = None,
    unseen: Annotated[str | None, table_options.UNSEEN] = None,
    na_values: Annotated[list[str] | None, table_options.SCORING_NA_VALUES] = None,
    read: common.ReadOptions = common.READING,
    quiet: Annotated[bool, common.QUIET] = False,
    engine: common.EngineOptions = common.LOCAL,
    force: Annotated[bool, common.FORCE] = False,
):
    """Reliability of the model's posteriors on held-out data, and a repair.

    Prints the reliability table (confidence bins: count, claimed confidence,
    achieved accuracy, gap), ECE, MCE, Brier score and log-loss, then fits the
    calibrator and shows the same after it, cross-fitted (each row calibrated
    by a calibrator fitted on the other folds). With --output, writes a model
    file that carries the calibrator when it improves the cross-fitted
    log-loss beyond its margin; predict --proba, evaluate and calibrate apply it.
    When no calibrator is accepted, nothing is written and the command exits 3,
    as for a missed --fail-under (a quality gate not met; the --json report is
    written); --allow-worse writes the best candidate anyway.
    Example: nbcli calibrate -m digits.npz -d sample_data/digits_calib.csv -o digits-cal.npz.
    Parts (a folder, a glob, --engine dask) are scored where they are read; the posteriors
    come back, and every method fits and is judged as on the parts joined into one file.
    """
    from nbcli.cli.progress import ConsoleReporter
    from nbcli.io.atomic import check_outputs
    from nbcli.reports.thresholds import CALIBRATION_METRICS
    from nbcli.workflows.calibrate import calibrate as run_calibration

    edges_or_n = None if bins is None else parse_bins(bins)
    if isinstance(edges_or_n, list) and strategy is Strategy.quantile:
        raise NbcliError("--strategy quantile makes its own edges; give --bins as a number with it")
    thresholds = common.parse_thresholds(fail_under, fail_over, CALIBRATION_METRICS, bootstrap)
    data_list = list(data_files)
    data = common.data_name(data_list)
    common.check_model_file(model)
    if output is not None and method is Method.none:
        raise NbcliError(
            "--output needs a calibrator; choose --method auto, temperature, sigmoid or isotonic"
        )
    check_outputs(
        [("--output", output), ("--json", json_out), ("--plot", plot)],
        [("--model", model), *(("--data", d) for d in data_list)],
        models=["--output"],
        force=force,
    )
    if plot is not None:
        common.check_plot(plot)

    from nbcli.cli.requests import data_request
    from nbcli.workflows.settings import CalibrationChecks, ScoreSettings

    # The inputs' SHA-256 are read only by the JSON report and the model file.
    request = data_request(locals()).reading(sha256=json_out is not None or output is not None)
    with common.engine_for(data_list, engine) as eng:
        result = run_calibration(
            model,
            request if eng is not None else request.reading(data=(data,)),
            ScoreSettings(bootstrap, confidence, seed, edges_or_n, strategy.value),
            method=method.value,
            allow_training_data=allow_training_data,
            reporter=ConsoleReporter(quiet),
            checks=CalibrationChecks(folds, allow_worse),
            engine=eng,
        )
    report = result.report
    refused = result.fitted and output is not None and not result.accepted
    # A refusal's error line gives the verdict's figures again: the warning is
    # left to the report (and its JSON) rather than printed twice.
    fails = refused and not allow_worse and not result.certain
    common.show_warnings([w for w in report.warnings if not (fails and w == result.refusal)])
    if result.certain and output is not None:
        # Show what was measured, write nothing, and say why.
        common.record_thresholds(report, thresholds)
        common.emit_report(report, None, quiet=quiet, stdout_has_data=json_out == "-")
        raise NbcliError(
            f"{data}: the calibration data has no errors, so temperature scaling would make "
            "every prediction certain; use more or harder held-out data (nothing was written)"
        )
    diagram = None
    if plot is not None:
        # Drawn before anything is written, so that a failure leaves no output behind.
        from pathlib import Path

        from nbcli.render.plot import reliability_image

        before = report.before if result.fitted else report
        bins_after = report.after.diagram.to_dict()["bins"] if result.fitted else None
        diagram = reliability_image(before.diagram.to_dict()["bins"], bins_after, Path(plot).suffix)
    # Once the model file may be replaced, the command finishes, whatever arrives.
    # The model file, the JSON report and the plot replace their files together:
    # a report that cannot be written leaves the old model file as it was.
    from nbcli.cli.console import info
    from nbcli.io.atomic import outputs_together, signals_deferred

    with signals_deferred(), outputs_together():
        if result.fitted and output is not None and (allow_worse or not refused):
            from nbcli.io.modelfile import save_model

            save_model(result.model, output)
        common.record_thresholds(report, thresholds)
        common.write_report_json(report, json_out, quiet=quiet)
        if diagram is not None:
            from nbcli.io.atomic import atomic_write

            with atomic_write(plot, "wb") as f:
                f.write(diagram)
    # Shown once the files are in place (a reader of stdout that goes away
    # cannot keep them from being written).
    common.show_report(report, json_out, quiet=quiet)
    if diagram is not None:
        info(f"wrote {plot}", quiet or json_out == "-")
    # Raised once the block has ended, so that the report of a refusal is written.
    if refused and not allow_worse:
        from nbcli.errors import THRESHOLD_MISSED

        raise NbcliError(refusal(report.verdict, method.value, data, output), THRESHOLD_MISSED)
    if output is not None:
        info(f"wrote {output}", quiet or json_out == "-")
    common.enforce_thresholds(report.threshold_values(), thresholds)
    return 0


def refusal(verdict, method: str, data: str, output: str | None) -> str:
    """The one line that says why ``output`` was not written: the cross-fitted
    log-loss before and after, and the margin it missed."""
    # The candidate --allow-worse would write, and why the rule refuses it.
    fitted = [c for c in verdict.candidates if not c.never_written] or [
        c for c in verdict.candidates if c.differences
    ]
    best = min(fitted, key=lambda c: c.log_loss)
    d = best.differences["log_loss"]
    # Candidates that improve but are never written (a temperature run to 0) say so first.
    unwritable = [c for c in verdict.candidates if c.differences and c.never_written]
    from nbcli.reports.reliability import BRIER_WORSE
    from nbcli.workflows.calibrate import shortfall

    which = shortfall(method, [c for c in fitted if c not in unwritable], bool(unwritable))
    brier = ""
    if best.note == BRIER_WORSE:
        b = best.differences["brier"]
        brier = f", Brier score difference {b.value:+.3g} with lower bound {b.lower:+.3g}"
    why = "; ".join(
        [f"{c.method}: not taken, {c.note}" for c in unwritable if c is not best]
        + [
            f"{best.method}: cross-fitted log-loss {verdict.before['log_loss']:.4g} -> "
            f"{best.log_loss:.4g}, difference {d.value:+.3g} with upper bound {d.upper:+.3g}"
            f"{brier}: {best.note}"
        ]
    )
    hint = (
        "try --method auto, more held-out rows, or refitting the model with more smoothing"
        if method != "auto"
        else "the model may already be as calibrated as these rows can tell"
    )
    return (
        f"{data}: {which} ({why}), so "
        f"{output} was not written; {hint}; --allow-worse writes it anyway"
    )
