"""``nbcli tune``: search hyperparameters by cross-validation on one pass of statistics."""

from __future__ import annotations

import inspect
from typing import Annotated

import typer

from nbcli.cli import common, table_options
from nbcli.cli import text_options as text_opts
from nbcli.cli.cv_cmd import (
    CONFIG,
    DATA,
    FOLD_COLUMN,
    FOLDS,
    GROUP_COLUMN,
    MODEL_TYPE,
    REPEATS,
    SEED,
)
from nbcli.cli.evaluate_cmd import BOOTSTRAP, CONFIDENCE
from nbcli.cli.fit_cmd import _MODEL_TYPES
from nbcli.models import registry


def grid_flags() -> list[registry.Flag]:
    """The hyperparameter flags a grid can list: numbers, and the choices that
    are applied when statistics become a model (``searchable``)."""
    return [
        f
        for f in registry.flags().values()
        if (f.spec.kind == "float" or (f.spec.kind == "choice" and f.spec.searchable))
        and not f.spec.shapes_statistics
    ]


def fixed_flags() -> list[registry.Flag]:
    """The other hyperparameter flags (binarize, priors, ...): one value, as ``fit`` takes it."""
    grid = {f.dest for f in grid_flags()}
    return [f for f in registry.flags().values() if f.dest not in grid]


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
    json_out: Annotated[str | None, common.JSON] = None,
    force: Annotated[bool, common.FORCE] = False,
    pos_label: Annotated[
        str | None,
        typer.Option(
            "--pos-label",
            metavar="LABEL",
            help="With two classes, the positive one: every combination's average precision "
            "is of it (ROC AUC is the same either way). Default: the second in sorted order.",
        ),
    ] = None,
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
    **grid_values,
):
    """Search hyperparameter values by cross-validation: every combination is scored on
    the same per-fold statistics (one pass over the data, no refit); the best is fitted
    on all rows and, with --output, saved with the search summary in its metadata.

    Values: a list (--alpha 0.01,0.1,1) or a range (--var-smoothing log:1e-9..1:20,
    --reg-param lin:0..0.5:6); or a [grid] table in --config. The first name
    given varies slowest; ties go to the first combination in that order.
    Example: nbcli tune -m gaussian -d sample_data/iris_train.csv --var-smoothing log:1e-9..1:10
    """
    data = common.one_data_file(data_files)
    from nbcli.cli.console import info
    from nbcli.cli.fit_cmd import _estimator
    from nbcli.cli.options import read_config
    from nbcli.cli.progress import ConsoleReporter
    from nbcli.cli.requests import data_request
    from nbcli.errors import NbcliError
    from nbcli.io.atomic import check_outputs
    from nbcli.workflows.settings import FoldSettings, ScoreSettings, Search
    from nbcli.workflows.tune import parse_values, tune

    check_outputs(
        [("--output", output), ("--json", json_out)],
        [("--data", data), ("--config", config)],
        models=["--output"],
        force=force,
    )
    cfg = read_config(config, tables=("grid",))
    fixed = {f.dest: grid_values.pop(f.dest, None) for f in fixed_flags()}
    estimator, params = _estimator(model, cfg, config, fixed)
    grid: dict[str, list] = {}
    cfg_grid = cfg.get("grid", {})
    if not isinstance(cfg_grid, dict):
        raise NbcliError(f"{config}: [grid] must be a table")
    specs = {s.name: s for s in estimator.hyperparameters}
    for name, values in cfg_grid.items():
        where = f"{config}: [grid] {name}"
        parse = specs[name].parse if name in specs else None
        if isinstance(values, str):
            grid[name] = parse_values(values, where, parse)
        elif isinstance(values, list):
            grid[name] = [parse(v, where) if parse and isinstance(v, str) else v for v in values]
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
        grid[name] = parse_values(given, flag.flag, flag.spec.parse)
    for name in grid:
        params.pop(name, None)
    request = data_request(locals(), cfg, config, params).reading(data=(data,))
    prior = params.get(estimator.prior_param)
    report, model_file = tune(
        estimator,
        request,
        Search(grid, metric),
        FoldSettings(folds, fold_column, group_column, repeats, seed),
        ScoreSettings(bootstrap, confidence, seed, pos_label=pos_label),
        priors_by_label=prior if isinstance(prior, dict) else None,
        reporter=ConsoleReporter(quiet),
    )
    from nbcli.io.atomic import outputs_together
    from nbcli.io.modelfile import save_model

    common.show_warnings(report.warnings)
    # The model file and the JSON report replace their files together.
    with outputs_together():
        if output is not None:
            save_model(model_file, output)
            report.output = output
        common.emit_report(report, json_out, quiet=quiet)
    if output is not None:
        info(f"wrote {output}", quiet or json_out == "-")
    return 0


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
    return inspect.Parameter(
        flag.dest,
        inspect.Parameter.KEYWORD_ONLY,
        default=None,
        annotation=Annotated[str | None, option],
    )


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

    def command(**options):
        values = {name: options.pop(name) for name in names}
        return func(**options, **values)

    command.__name__ = command.__qualname__ = func.__name__
    command.__doc__ = func.__doc__
    command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in parameters}
    return command


tune = _with_grid_options(tune)
