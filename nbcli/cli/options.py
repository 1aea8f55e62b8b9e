"""Parsing of option values shared by several commands (no heavy imports here)."""

from __future__ import annotations

import math
import numbers
import sys

from nbcli.errors import NbcliError

HYPERPARAMETER_FLAGS = {
    # flag name -> (hyperparameter, model types it applies to)
    "--var-smoothing": ("var_smoothing", ("gaussian",)),
    "--alpha": ("alpha", ("multinomial", "bernoulli")),
    "--binarize": ("binarize", ("bernoulli",)),
    "--fit-prior/--no-fit-prior": ("fit_prior", ("multinomial", "bernoulli")),
    "--shrinkage": ("shrinkage", ("lda",)),
    "--reg-param": ("reg_param", ("qda",)),
    "--priors": ("priors", ("gaussian", "multinomial", "bernoulli", "lda", "qda")),
}


def split_list(values: list[str] | None) -> list[str] | None:
    """``["a,b", "c"]`` -> ``["a", "b", "c"]``; None stays None."""
    if not values:
        return None
    out = []
    for v in values:
        out.extend(part.strip() for part in v.split(",") if part.strip())
    return out or None


def parse_shrinkage(text: str | None):
    if text is None:
        return None
    t = text.strip().lower()
    if t == "auto":
        return "auto"
    if t in ("none", ""):
        return None
    try:
        value = float(t)
    except ValueError:
        raise NbcliError(
            f"--shrinkage must be 'auto' or a number in [0, 1], got {text!r}"
        ) from None
    if not 0.0 <= value <= 1.0:
        raise NbcliError(f"--shrinkage must be 'auto' or a number in [0, 1], got {text!r}")
    return value


def parse_priors(text: str | None):
    """``"0.2,0.8"`` (class order) or ``"spam=0.4,ham=0.6"`` (by label).

    Returns a list of floats, or a dict ``{label_text: float}`` to be ordered
    once the classes are known (see :func:`order_priors`).
    """
    if text is None:
        return None
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise NbcliError("--priors is empty; give e.g. 0.3,0.7 or spam=0.4,ham=0.6")
    try:
        if all("=" in p for p in parts):
            pairs = [(k.strip(), float(v)) for k, v in (p.rsplit("=", 1) for p in parts)]
            labels = [k for k, _ in pairs]
            repeated = list(dict.fromkeys(k for k in labels if labels.count(k) > 1))
            if repeated:
                raise NbcliError(
                    f"--priors gives class {', '.join(repeated)} more than once; give each "
                    "class one prior"
                )
            return dict(pairs)
        return [float(p) for p in parts]
    except ValueError:
        raise NbcliError(
            f"--priors must be numbers, e.g. 0.3,0.7 or spam=0.4,ham=0.6; got {text!r}"
        ) from None


def order_priors(priors, classes) -> list | None:
    """Priors as a list in the order of ``classes`` (labels matched by their text)."""
    if priors is None or isinstance(priors, list):
        return priors
    names = [str(c) for c in classes]
    unknown = sorted(set(priors) - set(names))
    if unknown:
        raise NbcliError(
            f"--priors names labels not in the training data: {', '.join(unknown)} "
            f"(classes: {', '.join(names)})"
        )
    missing = [n for n in names if n not in priors]
    if missing:
        raise NbcliError(f"--priors gives no prior for classes {', '.join(missing)}")
    return [priors[n] for n in names]


def read_config(path: str | None) -> dict:
    """Read a TOML config: ``model``, ``[hyperparameters]``, ``[data]``.

    Raises
    ------
    NbcliError
        For a missing or invalid file, or keys nbcli does not know.
    """
    if path is None:
        return {}
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        with open(path, "rb") as f:
            config = tomllib.load(f)
    except FileNotFoundError:
        raise NbcliError(f"{path}: no such config file") from None
    except OSError as exc:
        raise NbcliError(f"{path}: cannot read the config file ({exc.strerror or exc})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise NbcliError(f"{path}: invalid TOML ({' '.join(str(exc).split())})") from None
    unknown = sorted(set(config) - {"model", "hyperparameters", "data"})
    if unknown:
        raise NbcliError(
            f"{path}: unknown config keys {', '.join(unknown)} (known: model, hyperparameters, data)"
        )
    data = config.get("data", {})
    if not isinstance(data, dict) or set(data) - {"target", "features", "drop"}:
        raise NbcliError(f"{path}: [data] may hold target, features and drop only")
    if "target" in data and not isinstance(data["target"], str):
        raise NbcliError(
            f"{path}: [data] target must be a column name (a string), got {data['target']!r}"
        )
    for key in ("features", "drop"):
        if key in data:
            data[key] = column_names(data[key], f"{path}: [data] {key}")
    if not isinstance(config.get("hyperparameters", {}), dict):
        raise NbcliError(f"{path}: [hyperparameters] must be a table")
    return config


def column_names(value, where: str) -> list[str] | None:
    """Column names from a config value: one string (a name, or names
    separated by commas) or a list of strings.

    Raises NbcliError naming ``where`` for anything else.
    """
    if isinstance(value, str):
        return split_list([value])
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return split_list(value)
    raise NbcliError(
        f"{where} must be a column name, names separated by commas, or a list "
        f"of names; got {value!r}"
    )


def _number(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _finite_in(low, high=math.inf, *, high_open=False):
    """A check that a value is a finite number in [low, high] (or [low, high)),
    and how such a value is described."""

    def check(value):
        if not _number(value) or not math.isfinite(value) or value < low:
            return False
        return value < high if high_open else value <= high

    if math.isinf(high):
        return check, f"a finite number >= {low:g}"
    return check, f"a number in [{low:g}, {high:g}{')' if high_open else ']'}"


def _optional_number(value) -> bool:
    return value is None or (_number(value) and math.isfinite(value))


def _shrinkage(value) -> bool:
    return value is None or value == "auto" or (_number(value) and 0.0 <= value <= 1.0)


def _priors(value) -> bool:
    values = list(value.values()) if isinstance(value, dict) else value
    if not isinstance(values, list) or not values:
        return False
    if not all(_number(v) and math.isfinite(v) and v >= 0 for v in values):
        return False
    return abs(math.fsum(values) - 1.0) <= 1e-8


_PRIORS = (
    _priors,
    "non-negative numbers that sum to 1, as a list in class order or a table by class label",
)

#: Each hyperparameter's check and how a valid value is described.
HYPERPARAMETERS = {
    "var_smoothing": _finite_in(0.0),
    "alpha": _finite_in(0.0),
    "binarize": (_optional_number, "a finite number"),
    "fit_prior": (lambda v: isinstance(v, bool), "true or false"),
    "shrinkage": (_shrinkage, "'auto' or a number in [0, 1]"),
    "reg_param": _finite_in(0.0, 1.0),
    "tol": _finite_in(0.0, 1.0, high_open=True),
    "priors": _PRIORS,
    "class_prior": _PRIORS,
}


def check_hyperparameters(params: dict, origins: dict) -> None:
    """Check the type and range of every hyperparameter before any fitting.

    ``origins`` names where each value came from (a flag such as
    ``--alpha``, or ``FILE [hyperparameters] alpha``) for the message.

    Raises
    ------
    NbcliError
        For a value of the wrong type (``fit_prior = "no"``), not finite, or
        out of range (``tol = 1e308``, ``--reg-param 2``).
    """
    for name, value in params.items():
        rule = HYPERPARAMETERS.get(name)
        if rule is None:
            continue
        check, wanted = rule
        if not check(value):
            raise NbcliError(f"{origins.get(name, name)} must be {wanted}; got {value!r}")
