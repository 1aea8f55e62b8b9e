"""``nbcli fit``: train a model from a data file and save it."""

import inspect
from typing import Annotated, Literal

import typer

from nbcli.cli import common, table_options
from nbcli.cli import text_options as text_opts
from nbcli.cli.console import info, warn
from nbcli.cli.options import read_config
from nbcli.errors import NbcliError
from nbcli.models import registry
from nbcli.models.hyperparameters import SAME

# The choices of --model: every model type of the registry.
_MODEL_TYPES = Literal[tuple(registry.model_classes())]  # type: ignore[valid-type]


@common.with_engine_options
@common.with_read_options
@text_opts.with_text_options
@table_options.with_column_options
def fit(
    data_files: Annotated[
        list[str],
        common.data_option(
            "Training data: CSV (.csv, .csv.gz), NPZ, Parquet, Feather, ARFF, svmlight, or - for stdin; a folder or "
            "quoted glob of CSV/Parquet parts is one data set."
        ),
    ],
    model: Annotated[
        _MODEL_TYPES | None,  # type: ignore[valid-type]
        typer.Option(
            "--model",
            "-m",
            help="Model type to train (a name, not a model file; or 'model' in --config).",
            case_sensitive=False,
        ),
    ] = None,
    output: Annotated[
        str, typer.Option("--output", "-o", help="Where to write the model file.")
    ] = "model.npz",
    columns: table_options.ColumnOptions = table_options.ALL_COLUMNS,
    config: Annotated[
        str | None,
        typer.Option(
            "--config",
            "-c",
            help=(
                "TOML file with model, [hyperparameters] and [data] (target, features, drop, "
                "na_values, columns = {NAME = TYPE}); flags override it."
            ),
        ),
    ] = None,
    read: common.ReadOptions = common.READING,
    json_out: Annotated[str | None, common.JSON] = None,
    quiet: Annotated[bool, common.QUIET] = False,
    engine: common.EngineOptions = common.LOCAL,
    text: text_opts.TextOptions = text_opts.NO_TEXT,
    force: Annotated[bool, common.FORCE] = False,
    **hyperparameter_flags,
):
    """Train a model on labelled data and save it as a .npz model file.

    Example: nbcli fit --model gaussian --data sample_data/iris_train.csv --output iris.npz
    """

    data_list = list(data_files)
    data = common.data_name(data_list)
    # Fail before reading what may be a large file, not after training on it.
    common.check_model_outputs(output, json_out, data_list, config, force)
    cfg = read_config(config)
    estimator, params = _estimator(model, cfg, config, hyperparameter_flags)
    from nbcli.cli.requests import data_request

    request = data_request(locals(), cfg, config, params)

    from nbcli.cli.progress import progress_iter
    from nbcli.workflows.train import train

    prior = params.get(estimator.prior_param)
    priors_by_label = prior if isinstance(prior, dict) else None
    from nbcli.io.part_paths import expand_parts

    if engine.uses_parts(data_list):
        from nbcli.workflows.parts import train_parts

        if request.text is not None and getattr(type(estimator), "text_term", None):
            # Its table columns need the one-file column plan (categories).
            raise NbcliError(
                f"--text under the {estimator.name} model is not supported on parts (a folder, "
                "a glob, several --data files or --engine dask); join the parts into one file "
                "first"
            )

        if request.na_labels:
            raise NbcliError(
                "--na-labels is not read part by part yet (a folder, a glob, several --data "
                "files or --engine dask); blank those labels, or join the parts into one file"
            )
        with engine.open() as eng:
            result = train_parts(estimator, request, eng, priors_by_label=priors_by_label)
    else:
        engine.open()  # refuses Dask options
        result = train(
            estimator,
            request.reading(data=(data,)),
            priors_by_label=priors_by_label,
            progress=lambda chunks, what: progress_iter(chunks, what, quiet=quiet),
        )
    for w in result.warnings:
        warn(w)
    for note in result.notes:
        info(note, quiet)

    # From here the old model file may already be replaced: finish, whatever arrives.
    from nbcli.io.atomic import outputs_together, signals_deferred
    from nbcli.io.modelfile import save_model

    # The model file and the JSON report replace their files together: a
    # report that cannot be written leaves the old model file as it was.
    report = None
    with signals_deferred(), outputs_together():
        save_model(result.model_file, output)
        if json_out is not None or not quiet:
            report = result.summary(output)
            if json_out is not None:
                # Hashing reads the files again: only when a report is asked for.
                if engine.uses_parts(data_list):
                    # Parts may be readable only by the workers: named, not hashed.
                    report.inputs = {
                        "data": {"path": data, "parts": expand_parts(data_list)},
                        **common.inputs_of(**({"config": config} if config else {})),
                    }
                else:
                    report.inputs = common.inputs_of(
                        data=data, **({"config": config} if config else {})
                    )
                report.settings = {
                    "chunk_size": request.chunk_size,
                    "config": config,
                    "delimiter": request.delimiter,
                    "target": request.target,
                    "features": _listed(request.features),
                    "drop": _listed(request.drop),
                    "missing": result.model_file.training.get("missing"),
                    "unseen": request.unseen,
                    "na_values": _listed(request.na_values),
                    "columns": dict(request.column_types) or None,
                }
                if columns.na_labels:
                    report.settings["na_labels"] = columns.na_labels
                if engine.uses_parts(data_list):
                    report.settings["engine"] = engine.name
                if request.text is not None:
                    report.settings["text"] = request.text.to_metadata()
            common.write_report_json(report, json_out, quiet=quiet)
    # Shown once the files are in place: a reader of stdout that goes away
    # (`| head`) cannot keep them from being written.
    if report is not None:
        common.show_report(report, json_out, quiet=quiet)
    info(f"wrote {output}", quiet or json_out == "-")


def _estimator(model: str | None, cfg: dict, config: str | None, flags: dict):
    """The estimator the options and config ask for, every value validated by its spec.

    Returns the estimator and its hyperparameters as given (priors by label
    are put in class order once the classes are known).
    """
    model_name = model.lower() if model is not None else cfg.get("model")
    models = registry.model_classes()
    if model_name is None:
        raise NbcliError(
            f"no model type: give --model ({', '.join(models)}) or 'model' in --config"
        )
    if model_name not in models:
        raise NbcliError(
            f"{config}: unknown model {model_name!r}; choose one of {', '.join(models)}"
        )
    cls = models[model_name]
    specs = {spec.name: spec for spec in cls.hyperparameters}

    params = dict(cfg.get("hyperparameters", {}))
    origins = {name: f"{config}: [hyperparameters] {name}" for name in params}
    unknown = sorted(set(params) - set(specs))
    if unknown:
        said = cfg.get("model")
        other = (
            f"; the config is for model {said!r}, --model says {model_name}: drop one of them"
            if isinstance(said, str) and said.lower() != model_name
            else ""
        )
        raise NbcliError(
            f"{config}: hyperparameters {', '.join(unknown)} do not apply to the {model_name} model "
            f"(it takes {', '.join(sorted(specs))}){other}"
        )
    try:
        for name, value in params.items():
            parse = specs[name].parse
            if isinstance(value, str) and parse is not None:
                params[name] = parse(value, origins[name])
        given = []
        for flag in registry.flags().values():
            value = flag_values(flag, flags.get(flag.dest))
            if value is not None:
                given.append((flag, value))
        for flag, value in given:
            shown = flag.flag.split("/")[0] if value is not False else flag.flag.split("/")[-1]
            name = flag.params.get(model_name)
            if name is None:
                raise NbcliError(f"{shown} does not apply to the {model_name} model")
            params[name] = value
            origins[name] = shown
        for name, value in params.items():
            specs[name].check_setting(value, origins[name])
    except ValueError as exc:
        raise NbcliError(str(exc)) from None
    for spec in cls.hyperparameters:
        # Where the command line insists on its own default (binarize).
        if spec.cli_default is not SAME and spec.name not in params:
            params[spec.name] = spec.cli_default
    estimator = cls(**params)
    # Settings that exclude each other (pca with Ledoit-Wolf shrinkage), before any reading.
    together = getattr(estimator, "_check_projection", None)
    if together is not None:
        try:
            together()
        except ValueError as exc:
            raise NbcliError(str(exc)) from None
    return estimator, params


def _listed(names) -> list[str] | None:
    """A request's tuple of names as the report's list (None stays None)."""
    return None if names is None else list(names)


def flag_values(flag: registry.Flag, value):
    """A flag's value from its text (``--priors 0.3,0.7`` -> a list); None when not given."""
    if value is None or not isinstance(value, str):
        return value
    return flag.spec.from_text(value, flag.flag) if flag.spec.parse else value


def _hyperparameter_parameter(flag: registry.Flag) -> inspect.Parameter:
    spec = flag.spec
    if spec.kind == "bool":
        kind: type = bool
    elif spec.kind == "float" and spec.parse is None:
        kind = float
    else:
        kind = str
    option = typer.Option(
        flag.flag, help=registry.flag_help(flag), show_default=False, metavar=None
    )
    return common.option_parameter(flag.dest, kind | None, option)


def _with_hyperparameter_options(func):
    """``func`` with one Typer option per hyperparameter flag of the registry.

    Typer reads a command's options from ``inspect.signature`` and its type
    hints, so the command gets a signature in which the flags, derived from
    the model classes' specs, take the place of ``**hyperparameter_flags``.
    """
    signature = inspect.signature(func, eval_str=True)
    fixed = [p for p in signature.parameters.values() if p.kind != p.VAR_KEYWORD]
    # Flags the command declares itself (--missing, --unseen: reading
    # policies as much as hyperparameters) are not generated again.
    own = {f"--{p.name.replace('_', '-')}" for p in fixed}
    flags = [f for f in registry.flags().values() if f.flag.split("/")[0] not in own]
    generated = [_hyperparameter_parameter(f) for f in flags]
    at = [p.name for p in fixed].index("config") + 1
    fixed = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in fixed]
    parameters = fixed[:at] + generated + fixed[at:]
    return common.command_with(func, parameters, {f.dest for f in flags})


fit = _with_hyperparameter_options(fit)
