"""Parsing of option values shared by several commands (no heavy imports here)."""

from __future__ import annotations

import sys

from nbcli.errors import NbcliError


def split_list(values: list[str] | None) -> list[str] | None:
    """``["a,b", "c"]`` -> ``["a", "b", "c"]``; None stays None."""
    if not values:
        return None
    out: list[str] = []
    for v in values:
        out.extend(part.strip() for part in v.split(",") if part.strip())
    return out or None


def read_config(path: str | None, tables: tuple[str, ...] = ()) -> dict:
    """Read a TOML config: ``model``, ``[hyperparameters]``, ``[data]``, and the
    command's own ``tables`` (``nbcli tune``'s ``[grid]``).

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
    known = ("model", "hyperparameters", "data", "text", *tables)
    unknown = sorted(set(config) - set(known))
    if unknown:
        raise NbcliError(
            f"{path}: unknown config keys {', '.join(unknown)} (known: {', '.join(known)})"
        )
    data = config.get("data", {})
    keys = ("target", "features", "drop", "na_values", "na_labels", "columns")
    if not isinstance(data, dict) or set(data) - set(keys):
        raise NbcliError(f"{path}: [data] may hold {', '.join(keys[:-1])} and {keys[-1]} only")
    if "columns" in data and not isinstance(data["columns"], dict):
        raise NbcliError(
            f"{path}: [data] columns must be a table of column types, such as "
            'columns = {"Sample Number" = "categorical"}'
        )
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


def data_columns(cfg: dict, target: str | None, features, drop):
    """``--target``, ``--features`` and ``--drop`` (the last two as lists), each
    else the config's ``[data]`` one.

    Raises
    ------
    NbcliError
        For options that contradict each other (``check_columns``):
        every command that selects columns refuses the same ones.
    """
    check_columns(target, features, drop)
    data_cfg = cfg.get("data", {})
    return (
        target if target is not None else data_cfg.get("target"),
        split_list(features) or data_cfg.get("features"),
        split_list(drop) or data_cfg.get("drop"),
    )


def check_columns(target: str | None, features: list[str] | None, drop: list[str] | None) -> None:
    """Refuse, before reading, column options that contradict each other.

    ``features`` and ``drop`` are the raw option values (``--features ''``
    names no column, which is refused rather than read as "all").

    Raises
    ------
    NbcliError
        For an empty ``--features`` or ``--drop``, a column both in
        ``--features`` and ``--drop``, or a ``--target`` that is dropped.
    """
    from nbcli.errors import NbcliError

    for option, values in (("--features", features), ("--drop", drop)):
        if values is not None and split_list(values) is None:
            raise NbcliError(f"{option} {values[0]!r}: names no column; give column names")
    both = sorted(set(split_list(features) or []) & set(split_list(drop) or []))
    if both:
        raise NbcliError(
            f"column {both[0]!r} is in both --features and --drop; give it in one of them"
        )
    if target is not None and target in (split_list(drop) or []):
        raise NbcliError(f"--target {target} is also in --drop; the target cannot be dropped")
