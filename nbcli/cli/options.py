"""Parsing of option values shared by several commands (no heavy imports here)."""

from __future__ import annotations

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
        raise NbcliError(f"--shrinkage must be 'auto' or a number in [0, 1], got {text!r}") from None
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
            pairs = [p.rsplit("=", 1) for p in parts]
            return {k.strip(): float(v) for k, v in pairs}
        return [float(p) for p in parts]
    except ValueError:
        raise NbcliError(f"--priors must be numbers, e.g. 0.3,0.7 or spam=0.4,ham=0.6; got {text!r}") from None


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
        raise NbcliError(f"{path}: unknown config keys {', '.join(unknown)} (known: model, hyperparameters, data)")
    data = config.get("data", {})
    if not isinstance(data, dict) or set(data) - {"target", "features", "drop"}:
        raise NbcliError(f"{path}: [data] may hold target, features and drop only")
    if not isinstance(config.get("hyperparameters", {}), dict):
        raise NbcliError(f"{path}: [hyperparameters] must be a table")
    return config
