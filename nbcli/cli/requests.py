"""The one place a command's data options become a :class:`~nbcli.io.request.DataRequest`.

Every command that reads data calls :func:`data_request` with its options
(the command function's ``locals()``: one parameter per option) and, for the
commands that fit, its config file and hyperparameters. A new reading
option is one line here, one field of the request and one line in the
reader that uses it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from nbcli.io.request import DataRequest

__all__ = ["data_request"]


def data_request(
    options: Mapping[str, Any],
    cfg: dict | None = None,
    config: str | None = None,
    params: dict | None = None,
) -> DataRequest:
    """The data request of a command.

    Parameters
    ----------
    options : mapping
        The command's options by parameter name; those it does not have are
        left at the request's defaults: ``data`` or ``data_files``,
        ``target``, ``features``, ``drop``, ``column``, ``na_values``,
        ``na_labels``,
        ``delimiter``, ``chunk_size``, ``x_key``, ``y_key``, ``missing``,
        ``unseen``, the text options (``text``, ``ngram``, ``min_df``,
        ``max_df``, ``max_features``, ``stop_words``, ``lowercase``) and
        ``json_out`` (a JSON report hashes its inputs; without one they are
        named only, as hashing reads the files again).
    cfg, config : dict and str, optional
        A fitting command's config file (read) and its path: its ``[data]``
        (target, features, drop, na_values, na_labels, columns) and ``[text]`` tables
        fill in the options not given.
    params : dict, optional
        A fitting command's hyperparameters: ``missing`` and ``unseen`` are
        hyperparameters of the models that declare them.

    Raises
    ------
    NbcliError
        For an unknown ``--unseen`` policy, a malformed ``--column``, or
        invalid text options (naming the flag or config key).
    """
    from nbcli.cli import text_options
    from nbcli.cli.common import grouped_options
    from nbcli.cli.options import data_columns, split_list
    from nbcli.errors import NbcliError
    from nbcli.io.request import DataRequest
    from nbcli.workflows.tables import UNSEEN_POLICIES, parse_column_types

    options = grouped_options(options)
    cfg = cfg or {}
    data_cfg = cfg.get("data", {})
    data = options.get("data_files", options.get("data"))
    paths = () if data is None else (data,) if isinstance(data, str) else tuple(data)
    target, features, drop = data_columns(
        cfg, options.get("target"), options.get("features"), options.get("drop")
    )
    if params is not None:
        missing, unseen = params.get("missing"), params.get("unseen", "error")
        if unseen not in UNSEEN_POLICIES:
            raise NbcliError(
                f"--unseen must be one of {', '.join(UNSEEN_POLICIES)}; got {unseen!r}"
            )
    else:
        missing, unseen = options.get("missing"), options.get("unseen")
    na_values = split_list(options.get("na_values")) or split_list(
        _as_list(data_cfg.get("na_values"))
    )
    na_labels = split_list(options.get("na_labels")) or split_list(
        _as_list(data_cfg.get("na_labels"))
    )
    column_types = parse_column_types(data_cfg.get("columns"))
    column_types.update(parse_column_types(options.get("column")))
    return DataRequest.of(
        paths,
        sha256=options.get("json_out") is not None,
        target=target,
        delimiter=options.get("delimiter"),
        chunk_size=options.get("chunk_size"),
        x_key=options.get("x_key", "X"),
        y_key=options.get("y_key", "y"),
        na_values=na_values,
        na_labels=na_labels,
        features=features,
        drop=drop,
        column_types=column_types,
        missing=missing,
        unseen=unseen,
        text=text_options.text_settings(cfg, config, options),
    )


def _as_list(value) -> list[str] | None:
    """A config value given as a list or as one comma-separated string."""
    if value is None:
        return None
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]
