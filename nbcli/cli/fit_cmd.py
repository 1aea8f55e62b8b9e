"""``nbcli fit``: train a model from a data file and save it."""

from __future__ import annotations

from enum import Enum
from typing import Annotated

import typer

from nbcli.cli import common
from nbcli.cli.console import info, warn
from nbcli.cli.options import (
    HYPERPARAMETER_FLAGS,
    check_hyperparameters,
    order_priors,
    parse_priors,
    parse_shrinkage,
    read_config,
    split_list,
)
from nbcli.errors import NbcliError


class ModelType(str, Enum):
    gaussian = "gaussian"
    multinomial = "multinomial"
    bernoulli = "bernoulli"
    lda = "lda"
    qda = "qda"


def fit(
    data: Annotated[
        str,
        typer.Option(
            "--data", "-d", help="Training data: CSV (.csv, .csv.gz), NPZ, Parquet, or - for stdin."
        ),
    ],
    model: Annotated[
        ModelType | None,
        typer.Option(
            "--model", "-m", help="Model type (or 'model' in --config).", case_sensitive=False
        ),
    ] = None,
    output: Annotated[
        str, typer.Option("--output", "-o", help="Where to write the model file.")
    ] = "model.npz",
    target: Annotated[str | None, common.TARGET] = None,
    features: Annotated[list[str] | None, common.FEATURES] = None,
    drop: Annotated[list[str] | None, common.DROP] = None,
    config: Annotated[
        str | None,
        typer.Option(
            "--config",
            "-c",
            help="TOML file with model, [hyperparameters] and [data]; flags override it.",
        ),
    ] = None,
    var_smoothing: Annotated[
        float | None,
        typer.Option(
            "--var-smoothing",
            help="gaussian: fraction of the largest feature variance added to every variance [default: 1e-9].",
        ),
    ] = None,
    alpha: Annotated[
        float | None,
        typer.Option(
            "--alpha",
            help="multinomial, bernoulli: Lidstone smoothing (1 = Laplace) [default: 1.0].",
        ),
    ] = None,
    binarize: Annotated[
        float | None,
        typer.Option(
            "--binarize",
            help="bernoulli: values above this become 1, others 0 [default: input must be 0/1].",
        ),
    ] = None,
    fit_prior: Annotated[
        bool | None,
        typer.Option(
            "--fit-prior/--no-fit-prior",
            help="multinomial, bernoulli: learn class priors from frequencies, or use uniform ones.",
            show_default=False,
        ),
    ] = None,
    shrinkage: Annotated[
        str | None,
        typer.Option(
            "--shrinkage", help="lda: 'auto' (Ledoit-Wolf) or a number in [0, 1] [default: none]."
        ),
    ] = None,
    reg_param: Annotated[
        float | None,
        typer.Option("--reg-param", help="qda: covariance regularisation in [0, 1] [default: 0]."),
    ] = None,
    priors: Annotated[
        str | None,
        typer.Option(
            "--priors", help="Class priors: 0.3,0.7 (in class order) or spam=0.4,ham=0.6."
        ),
    ] = None,
    delimiter: Annotated[str | None, common.DELIMITER] = None,
    chunk_size: Annotated[int | None, common.CHUNK_SIZE] = None,
    x_key: Annotated[str, common.X_KEY] = "X",
    y_key: Annotated[str, common.Y_KEY] = "y",
    json_out: Annotated[str | None, common.JSON] = None,
    quiet: Annotated[bool, common.QUIET] = False,
):
    """Train a model on labelled data and save it as a .npz model file.

    Example: nbcli fit --model gaussian --data sample_data/iris_train.csv --output iris.npz
    """
    from nbcli.io.atomic import check_outputs

    # Fail before reading what may be a large file, not after training on it.
    check_outputs(
        [("--output", output), ("--json", json_out)],
        [("--data", data), ("--config", config)],
        models=["--output"],
    )
    cfg = read_config(config)
    model_name = model.value if model is not None else cfg.get("model")
    if model_name is None:
        raise NbcliError(
            "no model type: give --model (gaussian, multinomial, bernoulli, lda, qda) or 'model' in --config"
        )
    from nbcli.models import MODELS

    if model_name not in MODELS:
        raise NbcliError(
            f"{config}: unknown model {model_name!r}; choose one of {', '.join(MODELS)}"
        )
    cls = MODELS[model_name]

    params = dict(cfg.get("hyperparameters", {}))
    origins = {name: f"{config}: [hyperparameters] {name}" for name in params}
    valid = set(cls._get_param_names())
    unknown = sorted(set(params) - valid)
    if unknown:
        raise NbcliError(
            f"{config}: hyperparameters {', '.join(unknown)} do not apply to the {model_name} model "
            f"(it takes {', '.join(sorted(valid))})"
        )
    flags = {
        "--var-smoothing": var_smoothing,
        "--alpha": alpha,
        "--binarize": binarize,
        "--fit-prior/--no-fit-prior": fit_prior,
        "--shrinkage": parse_shrinkage(shrinkage),
        "--reg-param": reg_param,
        "--priors": parse_priors(priors),
    }
    for flag, value in flags.items():
        if value is None:
            continue
        name, applies = HYPERPARAMETER_FLAGS[flag]
        shown = flag.split("/")[0] if value is not False else flag.split("/")[-1]
        if model_name not in applies:
            raise NbcliError(f"{shown} does not apply to the {model_name} model")
        params[name] = value
        origins[name] = shown
    if "shrinkage" in params and isinstance(params["shrinkage"], str):
        params["shrinkage"] = parse_shrinkage(params["shrinkage"])
    prior_key = "class_prior" if model_name in ("multinomial", "bernoulli") else "priors"
    if "priors" in params and prior_key != "priors":
        params[prior_key] = params.pop("priors")
        origins[prior_key] = origins.pop("priors")
    check_hyperparameters(params, origins)
    try:
        estimator = cls(**params)
        estimator._hyperparameter_check()
    except (TypeError, ValueError) as exc:
        raise NbcliError(f"invalid hyperparameter for {model_name}: {exc}") from None

    data_cfg = cfg.get("data", {})
    target = target if target is not None else data_cfg.get("target")
    features = split_list(features) or data_cfg.get("features")
    drop = split_list(drop) or data_cfg.get("drop")

    from nbcli.cli.training import train

    result = train(
        estimator,
        data,
        target=target,
        features=features,
        drop=drop,
        delimiter=delimiter,
        chunk_size=chunk_size,
        x_key=x_key,
        y_key=y_key,
        priors_by_label=params.get(prior_key) if isinstance(params.get(prior_key), dict) else None,
        order_priors=order_priors,
        quiet=quiet,
    )
    for w in result.warnings:
        warn(w)

    from nbcli.io.modelfile import save_model

    save_model(result.model_file, output)
    if json_out is not None or not quiet:
        report = result.summary(output)
        if json_out is not None:
            # Hashing reads the files again: only when a report is asked for.
            report.inputs = common.inputs_of(data=data, **({"config": config} if config else {}))
            report.settings = {
                "chunk_size": chunk_size,
                "config": config,
                "delimiter": delimiter,
                "target": target,
                "features": features,
                "drop": drop,
            }
        common.emit_report(report, json_out, quiet=quiet)
    info(f"wrote {output}", quiet or json_out == "-")
