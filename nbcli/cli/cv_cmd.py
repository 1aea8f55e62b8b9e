"""``nbcli cv``: k-fold cross-validation from per-fold statistics (no refit)."""

from __future__ import annotations

from typing import Annotated

import typer

from nbcli.cli import common, table_options
from nbcli.cli import text_options as text_opts
from nbcli.cli.evaluate_cmd import BOOTSTRAP, CONFIDENCE, FAIL_OVER, FAIL_UNDER
from nbcli.cli.fit_cmd import _MODEL_TYPES, _with_hyperparameter_options
from nbcli.io.limits import MAX_REPEATS

FOLDS = typer.Option(
    "--folds", "-k", min=2, help="Number of stratified folds (ignored with --fold-column)."
)
FOLD_COLUMN = typer.Option(
    "--fold-column", help="Column whose values are the folds (one fold per distinct value)."
)
GROUP_COLUMN = typer.Option(
    "--group-column", help="Column of groups: the rows of a group stay in one fold."
)
REPEATS = typer.Option(
    "--repeats",
    min=1,
    max=MAX_REPEATS,
    help=f"Independent fold plans (repeated k-fold), 1 to {MAX_REPEATS}.",
)
SEED = typer.Option(
    "--seed", min=0, help="Seed of the fold plan and the bootstrap: same seed, same folds."
)
DATA = typer.Option("--data", "-d", help="Labelled data (CSV, NPZ, Parquet, - for stdin).")
MODEL_TYPE = typer.Option(
    "--model", "-m", help="Model type (or 'model' in --config).", case_sensitive=False
)
CONFIG = typer.Option(
    "--config",
    "-c",
    help="TOML file with model, [hyperparameters], [data] and [text]; flags override it.",
)


def cv(
    data_files: Annotated[list[str], DATA],
    model: Annotated[_MODEL_TYPES | None, MODEL_TYPE] = None,  # type: ignore[valid-type]
    folds: Annotated[int, FOLDS] = 10,
    fold_column: Annotated[str | None, FOLD_COLUMN] = None,
    group_column: Annotated[str | None, GROUP_COLUMN] = None,
    repeats: Annotated[int, REPEATS] = 1,
    seed: Annotated[int, SEED] = 0,
    target: Annotated[str | None, common.TARGET] = None,
    features: Annotated[list[str] | None, common.FEATURES] = None,
    drop: Annotated[list[str] | None, common.DROP] = None,
    column: Annotated[list[str] | None, table_options.COLUMN] = None,
    na_values: Annotated[list[str] | None, table_options.NA_VALUES] = None,
    na_labels: Annotated[list[str] | None, table_options.NA_LABELS] = None,
    config: Annotated[str | None, CONFIG] = None,
    bootstrap: Annotated[int, BOOTSTRAP] = 1000,
    confidence: Annotated[float, CONFIDENCE] = 0.95,
    bins: Annotated[
        int,
        typer.Option(
            "--bins", min=1, help="Equal-width confidence bins of the calibration summary."
        ),
    ] = 10,
    oof_output: Annotated[
        str | None,
        typer.Option(
            "--oof-output",
            help="Write the out-of-fold predictions here (as predict --proba, with a fold column).",
        ),
    ] = None,
    json_out: Annotated[str | None, common.JSON] = None,
    force: Annotated[bool, common.FORCE] = False,
    pos_label: Annotated[
        str | None,
        typer.Option(
            "--pos-label",
            metavar="LABEL",
            help="With two classes, the positive one: every fold's and the pooled average "
            "precision, and the pooled binary precision, recall and F1, are of it (ROC AUC is "
            "the same either way). Default: the second in sorted order.",
        ),
    ] = None,
    fail_under: Annotated[list[str] | None, FAIL_UNDER] = None,
    fail_over: Annotated[list[str] | None, FAIL_OVER] = None,
    delimiter: Annotated[str | None, common.DELIMITER] = None,
    chunk_size: Annotated[int | None, common.CHUNK_SIZE] = None,
    x_key: Annotated[str, common.X_KEY] = "X",
    y_key: Annotated[str, common.Y_KEY] = "y",
    quiet: Annotated[bool, common.QUIET] = False,
    text: Annotated[list[str] | None, text_opts.TEXT] = None,
    ngram: Annotated[str | None, text_opts.NGRAM] = None,
    min_df: Annotated[str | None, text_opts.MIN_DF] = None,
    max_df: Annotated[str | None, text_opts.MAX_DF] = None,
    max_features: Annotated[int | None, text_opts.MAX_FEATURES] = None,
    stop_words: Annotated[str | None, text_opts.STOP_WORDS] = None,
    lowercase: Annotated[bool | None, text_opts.LOWERCASE] = None,
    tfidf: Annotated[bool | None, text_opts.TFIDF] = None,
    sublinear_tf: Annotated[bool | None, text_opts.SUBLINEAR_TF] = None,
    smooth_idf: Annotated[bool | None, text_opts.SMOOTH_IDF] = None,
    tfidf_norm: Annotated[str | None, text_opts.NORM] = None,
    **hyperparameter_flags,
):
    """Cross-validate a model type: per-fold and pooled out-of-fold metrics with bootstrap
    intervals, confusion matrix, per-class table and calibration summary.

    Every fold's model is the merge of the other folds' statistics, gathered in one
    pass: no refit. Exit codes: 0 ok, 2 bad command or input, 3 a threshold missed.
    Example: nbcli cv --model gaussian --data sample_data/iris_train.csv --folds 5;
    with text: nbcli cv -m multinomial -d sample_data/austen_train.csv --text text --min-df 2
    """
    data = common.one_data_file(data_files)
    from nbcli.cli.fit_cmd import _estimator
    from nbcli.cli.options import read_config
    from nbcli.cli.progress import ConsoleReporter
    from nbcli.cli.requests import data_request
    from nbcli.errors import NbcliError
    from nbcli.io.atomic import check_outputs, writes_to_stdout
    from nbcli.reports.thresholds import EVALUATION_METRICS
    from nbcli.workflows.cv import cross_validate
    from nbcli.workflows.settings import FoldSettings, ScoreSettings

    thresholds = common.parse_thresholds(fail_under, fail_over, EVALUATION_METRICS)
    if writes_to_stdout(json_out) and writes_to_stdout(oof_output):
        raise NbcliError("--json and --oof-output cannot both go to stdout; send one to a file")
    check_outputs(
        [("--json", json_out), ("--oof-output", oof_output)],
        [("--data", data), ("--config", config)],
        kinds={"--oof-output": "predictions"},
        force=force,
    )
    cfg = read_config(config)
    estimator, params = _estimator(model, cfg, config, hyperparameter_flags)
    request = data_request(locals(), cfg, config, params).reading(data=(data,))
    prior = params.get(estimator.prior_param)
    report = cross_validate(
        estimator,
        request,
        FoldSettings(folds, fold_column, group_column, repeats, seed),
        ScoreSettings(bootstrap, confidence, seed, bins, pos_label=pos_label),
        priors_by_label=prior if isinstance(prior, dict) else None,
        oof_output=oof_output,
        reporter=ConsoleReporter(quiet),
    )
    common.show_warnings(report.warnings)
    common.emit_report(report, json_out, quiet=quiet, stdout_has_data=oof_output == "-")
    common.enforce_thresholds(report.threshold_values(), thresholds)
    return 0


cv = _with_hyperparameter_options(cv)
