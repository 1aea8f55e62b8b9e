"""``nbcli evaluate`` and ``nbcli compare``: score models on labelled data, for people and for CI."""

from __future__ import annotations

from typing import Annotated

import typer

from nbcli.cli import common
from nbcli.cli.common import inputs_of
from nbcli.errors import THRESHOLD_MISSED, NbcliError

BOOTSTRAP = typer.Option(
    "--bootstrap",
    min=0,
    help="Bootstrap resamples for the confidence intervals (0 turns them off).",
)
CONFIDENCE = typer.Option(
    "--confidence", min=0.5, max=0.9999, help="Confidence level of the intervals."
)
SEED = typer.Option(
    "--seed", min=0, help="Seed of the bootstrap: the same seed gives the same intervals."
)
FAIL_UNDER = typer.Option(
    "--fail-under",
    help="METRIC=VALUE: exit 3 if the metric is below VALUE, e.g. accuracy=0.9 or accuracy.lower=0.85. Repeatable.",
)
FAIL_OVER = typer.Option(
    "--fail-over",
    help="METRIC=VALUE: exit 3 if the metric is above VALUE, for losses, e.g. log_loss=0.5 or ece=0.05. Repeatable.",
)


def _parse_thresholds(fail_under, fail_over, known):
    from nbcli.reports.thresholds import parse_threshold

    out = []
    try:
        for text in fail_under or []:
            out.append(parse_threshold(text, "under", known))
        for text in fail_over or []:
            out.append(parse_threshold(text, "over", known))
    except ValueError as exc:
        raise NbcliError(str(exc)) from None
    return out


def _enforce(metrics: dict, thresholds) -> None:
    if not thresholds:
        return
    from nbcli.reports.thresholds import check_thresholds

    failures = check_thresholds(metrics, thresholds)
    if failures:
        from nbcli.cli.console import error_line

        for line in failures[:-1]:
            error_line(line)
        raise NbcliError(failures[-1], THRESHOLD_MISSED)


def collect_scores(mf, path, *, target, delimiter, chunk_size, x_key, y_key, quiet):
    """All log posteriors and labels of a labelled file, and whether it is the model's training data.

    Returns ``(log_proba (n_samples, n_classes), y_true (n_samples,), training_match)``.
    """
    import numpy as np

    from nbcli.cli.scoring import iter_scores
    from nbcli.io.fingerprint import TrainingFingerprint

    fp = TrainingFingerprint()
    logps, ys = [], []
    for chunk in iter_scores(
        mf,
        path,
        need_target=True,
        target=target,
        delimiter=delimiter,
        chunk_size=chunk_size,
        x_key=x_key,
        y_key=y_key,
        quiet=quiet,
    ):
        fp.update(chunk.X, chunk.y)
        logps.append(chunk.log_proba)
        ys.append(np.asarray(chunk.y))
    if not logps:
        raise NbcliError(f"{path}: no data rows")
    logp = np.concatenate(logps)
    y = np.concatenate([np.asarray(v, dtype=object) for v in ys]) if len(ys) > 1 else ys[0]
    match = fp.matches(mf.training)
    return logp, y, match


def evaluate(
    model: Annotated[str, common.MODEL],
    data: Annotated[
        str,
        typer.Option("--data", "-d", help="Labelled test data (CSV, NPZ, Parquet, - for stdin)."),
    ],
    target: Annotated[str | None, common.TARGET] = None,
    bootstrap: Annotated[int, BOOTSTRAP] = 1000,
    confidence: Annotated[float, CONFIDENCE] = 0.95,
    seed: Annotated[int, SEED] = 0,
    bins: Annotated[
        int,
        typer.Option(
            "--bins", min=1, help="Equal-width confidence bins of the calibration summary."
        ),
    ] = 10,
    json_out: Annotated[str | None, common.JSON] = None,
    fail_under: Annotated[list[str] | None, FAIL_UNDER] = None,
    fail_over: Annotated[list[str] | None, FAIL_OVER] = None,
    delimiter: Annotated[str | None, common.DELIMITER] = None,
    chunk_size: Annotated[int | None, common.CHUNK_SIZE] = None,
    x_key: Annotated[str, common.X_KEY] = "X",
    y_key: Annotated[str, common.Y_KEY] = "y",
    quiet: Annotated[bool, common.QUIET] = False,
):
    """Score a model on labelled data: metrics with bootstrap intervals, confusion matrix,
    per-class table and calibration summary.

    Exit codes: 0 ok, 2 bad command or input, 3 a --fail-under/--fail-over threshold missed.
    Example: nbcli evaluate -m iris.npz -d sample_data/iris_test.csv --fail-under accuracy.lower=0.8
    """
    import numpy as np

    from nbcli.reports.evaluation import build_evaluation
    from nbcli.reports.thresholds import EVALUATION_METRICS

    thresholds = _parse_thresholds(fail_under, fail_over, EVALUATION_METRICS)
    from nbcli.io.atomic import check_outputs
    from nbcli.io.modelfile import load_model

    check_outputs([("--json", json_out)], [("--model", model), ("--data", data)])

    mf = load_model(model)
    log_proba, y_true, match = collect_scores(
        mf,
        data,
        target=target,
        delimiter=delimiter,
        chunk_size=chunk_size,
        x_key=x_key,
        y_key=y_key,
        quiet=quiet,
    )
    settings = {
        "bootstrap_resamples": bootstrap,
        "confidence": confidence,
        "seed": seed,
        "bins": bins,
    }
    report = build_evaluation(
        mf.classes,
        y_true,
        np.exp(log_proba, out=log_proba),
        n_resamples=bootstrap,
        confidence=confidence,
        seed=seed,
        bins=bins,
        training_match=match,
        inputs=inputs_of(model=model, data=data),
        settings=settings,
    )
    from nbcli.cli.console import warn

    for w in report.warnings:
        warn(w)
    common.emit_report(report, json_out, quiet=quiet)
    _enforce(report.threshold_values(), thresholds)
    return 0


def compare(
    models: Annotated[
        list[str], typer.Option("--model", "-m", help="Model file; give exactly two: A then B.")
    ],
    data: Annotated[
        str, typer.Option("--data", "-d", help="Labelled test data scored by both models.")
    ],
    target: Annotated[str | None, common.TARGET] = None,
    bootstrap: Annotated[int, BOOTSTRAP] = 1000,
    confidence: Annotated[float, CONFIDENCE] = 0.95,
    seed: Annotated[int, SEED] = 0,
    json_out: Annotated[str | None, common.JSON] = None,
    fail_under: Annotated[list[str] | None, FAIL_UNDER] = None,
    fail_over: Annotated[list[str] | None, FAIL_OVER] = None,
    delimiter: Annotated[str | None, common.DELIMITER] = None,
    chunk_size: Annotated[int | None, common.CHUNK_SIZE] = None,
    x_key: Annotated[str, common.X_KEY] = "X",
    y_key: Annotated[str, common.Y_KEY] = "y",
    quiet: Annotated[bool, common.QUIET] = False,
):
    """Compare two models on the same rows: accuracies, the paired difference B - A with a
    bootstrap interval, the agreement table and McNemar's exact test.

    Example (fail when B is significantly worse than A):
    nbcli compare -m a.npz -m b.npz -d test.csv --fail-under difference.upper=0
    """
    import numpy as np

    if len(models) != 2:
        raise NbcliError(f"compare needs exactly two --model files (A and B), got {len(models)}")
    from nbcli.reports.comparison import build_comparison
    from nbcli.reports.thresholds import COMPARISON_METRICS

    thresholds = _parse_thresholds(fail_under, fail_over, COMPARISON_METRICS)
    from nbcli.io.atomic import check_outputs
    from nbcli.io.modelfile import load_model

    check_outputs([("--json", json_out)], [*(("--model", m) for m in models), ("--data", data)])

    a, b = (load_model(m) for m in models)
    opts = dict(
        target=target,
        delimiter=delimiter,
        chunk_size=chunk_size,
        x_key=x_key,
        y_key=y_key,
        quiet=quiet,
    )
    logp_a, y_a, _ = collect_scores(a, data, **opts)
    logp_b, y_b, _ = collect_scores(b, data, **opts)
    if len(y_a) != len(y_b) or any(str(p) != str(q) for p, q in zip(y_a, y_b)):
        raise NbcliError(f"{data}: the two models read different rows or labels (check --target)")
    settings = {"bootstrap_resamples": bootstrap, "confidence": confidence, "seed": seed}
    report = build_comparison(
        a.classes,
        np.exp(logp_a, out=logp_a),
        b.classes,
        np.exp(logp_b, out=logp_b),
        y_a,
        n_resamples=bootstrap,
        confidence=confidence,
        seed=seed,
        inputs=inputs_of(models=list(models), data=data),
        settings=settings,
    )
    from nbcli.cli.console import warn

    for w in report.warnings:
        warn(w)
    common.emit_report(report, json_out, quiet=quiet)
    _enforce(report.threshold_values(), thresholds)
    return 0
