"""``nbcli tune``: search hyperparameters by cross-validation on one pass of statistics."""

from __future__ import annotations

import inspect
from typing import Annotated

import typer

from nbcli.cli import common, table_options
from nbcli.cli import text_options as text_opts
from nbcli.cli.cv_cmd import CONFIG, DATA, MODEL_TYPE, TEN_FOLDS, FoldOptions, with_search_options
from nbcli.cli.evaluate_cmd import BOOTSTRAP, CONFIDENCE
from nbcli.cli.fit_cmd import _MODEL_TYPES
from nbcli.models import registry

TUNE_FAIL_UNDER = common.fail_option(
    "under", "accuracy=0.9 or accuracy.lower=0.85", " for the best combination"
)
TUNE_FAIL_OVER = common.fail_option(
    "over", "log_loss=0.5 or brier.upper=0.3", " for the best combination's losses"
)

POS_LABEL = common.pos_label_option("every combination's average precision is of it")


def grid_flags() -> list[registry.Flag]:
    """The hyperparameter flags a grid can list: numbers, and the choices that
    are applied when statistics become a model (``searchable``)."""
    return [f for f in registry.flags().values() if f.spec.searched]


def fixed_flags() -> list[registry.Flag]:
    """The other hyperparameter flags (binarize, priors, ...): one value, as ``fit`` takes it."""
    grid = {f.dest for f in grid_flags()}
    return [f for f in registry.flags().values() if f.dest not in grid]


@with_search_options
def tune(
    data_files: Annotated[list[str], DATA],
    model: Annotated[_MODEL_TYPES | None, MODEL_TYPE] = None,  # type: ignore[valid-type]
    metric: Annotated[
        str,
        typer.Option(
            "--metric",
            help="Pooled out-of-fold metric to optimise: log_loss, accuracy, brier, roc_auc, ... "
            "(losses are minimised).",
        ),
    ] = "log_loss",
    output: Annotated[
        str | None,
        typer.Option("--output", "-o", help="Write the best model, fitted on all rows, here."),
    ] = None,
    folds: FoldOptions = TEN_FOLDS,
    columns: table_options.ColumnOptions = table_options.ALL_COLUMNS,
    config: Annotated[str | None, CONFIG] = None,
    bootstrap: Annotated[int, BOOTSTRAP] = 1000,
    confidence: Annotated[float, CONFIDENCE] = 0.95,
    json_out: Annotated[str | None, common.JSON] = None,
    force: Annotated[bool, common.FORCE] = False,
    pos_label: Annotated[str | None, POS_LABEL] = None,
    read: common.ReadOptions = common.READING,
    fail_under: Annotated[list[str] | None, TUNE_FAIL_UNDER] = None,
    fail_over: Annotated[list[str] | None, TUNE_FAIL_OVER] = None,
    quiet: Annotated[bool, common.QUIET] = False,
    engine: common.EngineOptions = common.LOCAL,
    text: text_opts.TextOptions = text_opts.NO_TEXT,
    **grid_values,
):
    """Search hyperparameter values by cross-validation: every combination is scored on
    the same per-fold statistics (one pass over the data, no refit); the best is fitted
    on all rows and, with --output, saved with the search summary in its metadata.

    Values: a list (--alpha 0.01,0.1,1) or a range (--var-smoothing log:1e-9..1:20,
    --reg-param lin:0..0.5:6); or a [grid] table in --config. The first name
    given varies slowest; ties go to the first combination in that order. With
    --text, --ngram 1,1:1,2, --min-df 1,2,5 and --max-df 0.5,1.0 are searched too
    (slower than the hyperparameters), from counts made once.
    Example: nbcli tune -m gaussian -d sample_data/iris_train.csv --var-smoothing log:1e-9..1:10.
    A folder or glob of parts, or --engine dask, is read part by part, as cv reads it.
    """
    data_list = list(data_files)
    data = common.data_name(data_list)
    from nbcli.cli.console import info
    from nbcli.cli.fit_cmd import _estimator
    from nbcli.cli.options import read_config
    from nbcli.cli.progress import ConsoleReporter
    from nbcli.cli.requests import data_request
    from nbcli.errors import NbcliError
    from nbcli.workflows.settings import ScoreSettings, Search
    from nbcli.workflows.tune import grid_values as values_of
    from nbcli.workflows.tune import refuse_repeated_values, tune

    common.check_model_outputs(output, json_out, data_list, config, force)
    thresholds = common.parse_thresholds(fail_under, fail_over, _tuned_metrics(metric), bootstrap)
    cfg = read_config(config, tables=("grid",))
    fixed = {f.dest: grid_values.pop(f.dest, None) for f in fixed_flags()}
    estimator, params = _estimator(model, cfg, config, fixed)
    grid: dict[str, list] = {}
    cfg_grid = cfg.get("grid", {})
    if not isinstance(cfg_grid, dict):
        raise NbcliError(f"{config}: [grid] must be a table")
    specs = {s.name: s for s in estimator.hyperparameters}
    told: list[str] = []
    for name, values in cfg_grid.items():
        where = f"{config}: [grid] {name}"
        parse = specs[name].parse if name in specs else None
        if isinstance(values, str):
            grid[name], note = values_of(values, where, specs.get(name))
            told.extend([note] if note else [])
        elif isinstance(values, list):
            grid[name] = [parse(v, where) if parse and isinstance(v, str) else v for v in values]
            refuse_repeated_values(grid[name], where)
        else:
            raise NbcliError(
                f"{where}: expected a list of values or a range such as 'log:1e-3..1:10'"
            )
    from nbcli.cli.app import option_order

    by_flag = {f.flag: f for f in grid_flags()}
    for flag in (by_flag[name] for name in option_order(by_flag)):
        given = grid_values.get(flag.dest)
        if given is None:
            continue
        name = flag.params.get(estimator.name)
        if name is None:
            raise NbcliError(f"{flag.flag} does not apply to the {estimator.name} model")
        grid[name], note = values_of(given, flag.flag, flag.spec)
        told.extend([note] if note else [])
    for name in grid:
        params.pop(name, None)
    text_grid = text_opts.text_grid(text.ngram, text.min_df, text.max_df)
    if text_grid:
        # The documents are tokenised once, with the widest n-gram range searched;
        # each setting's vocabulary is chosen from those counts.
        from dataclasses import replace

        ranges = text_grid.get("ngram_range")
        text = replace(
            text,
            ngram=f"{min(r[0] for r in ranges)},{max(r[1] for r in ranges)}"
            if ranges
            else text.ngram,
            min_df=None if "min_df" in text_grid else text.min_df,
            max_df=None if "max_df" in text_grid else text.max_df,
        )
    request = data_request(locals(), cfg, config, params)
    prior = params.get(estimator.prior_param)
    with common.engine_for(data_list, engine) as eng:
        report, model_file = tune(
            estimator,
            request if eng is not None else request.reading(data=(data,)),
            Search(grid, metric, text_grid, tuple(told)),
            folds.settings(),
            ScoreSettings(bootstrap, confidence, folds.seed, pos_label=pos_label),
            priors_by_label=prior if isinstance(prior, dict) else None,
            reporter=ConsoleReporter(quiet),
            engine=eng,
        )
    from nbcli.io.atomic import outputs_together, signals_deferred
    from nbcli.io.modelfile import save_model

    common.show_warnings(report.warnings)
    # The model file and the JSON report replace their files together; from
    # here the command finishes, as fit does, so that a "wrote" line said
    # before the files are in place is never taken back by a signal.
    with signals_deferred(), outputs_together():
        if output is not None:
            save_model(model_file, output)
            report.output = output
        common.record_thresholds(report, thresholds)
        common.write_report_json(report, json_out, quiet=quiet)
    common.show_report(report, json_out, quiet=quiet)
    if output is not None:
        info(f"wrote {output}", quiet or json_out == "-")
    common.enforce_thresholds(report.threshold_values(), thresholds)
    return 0


def _tuned_metrics(metric: str) -> dict:
    """The metrics every combination's row holds (and the one searched on),
    as ``--fail-under``/``--fail-over`` know them."""
    from nbcli.reports.thresholds import EVALUATION_METRICS
    from nbcli.reports.tuning import RESULT_KEYS

    return {k: v for k, v in EVALUATION_METRICS.items() if k in RESULT_KEYS or k == metric}


def _grid_parameter(flag: registry.Flag) -> inspect.Parameter:
    option = typer.Option(
        flag.flag,
        help=(
            f"Values of {flag.spec.name} to search ({', '.join(flag.models)}): "
            + (
                f"a list such as {','.join(flag.spec.options)}."
                if flag.spec.kind == "choice"
                else "a list such as 0.01,0.1,1 or a range log:A..B:N / lin:A..B:N."
            )
        ),
        show_default=False,
    )
    return common.option_parameter(flag.dest, str | None, option)


def _with_grid_options(func):
    """``func`` with one list-valued option per searchable hyperparameter flag, and
    one single-valued option per other flag (as ``fit`` has them)."""
    from nbcli.cli.fit_cmd import _hyperparameter_parameter

    signature = inspect.signature(func, eval_str=True)
    fixed = [
        p.replace(kind=inspect.Parameter.KEYWORD_ONLY)
        for p in signature.parameters.values()
        if p.kind != p.VAR_KEYWORD
    ]
    at = [p.name for p in fixed].index("output") + 1
    generated = [_grid_parameter(f) for f in grid_flags()]
    generated += [_hyperparameter_parameter(f) for f in fixed_flags()]
    parameters = fixed[:at] + generated + fixed[at:]
    names = {f.dest for f in grid_flags()} | {f.dest for f in fixed_flags()}
    return common.command_with(func, parameters, names)


tune = _with_grid_options(tune)
