"""One-line errors of data chunks and model errors, naming file, column and row.

Apart from :mod:`nbcli.workflows.train`, which re-exports them, so that the
commands that only score (``predict``, ``evaluate``) do not load training.
"""

from __future__ import annotations

import re

from nbcli.errors import NbcliError
from nbcli.models import ColumnsMessage, DataValueError

# scikit-learn's wording, which the models' messages end with in parentheses
# so that code written against scikit-learn's estimators matches them; the
# line before it says the same in this project's words.
_SKLEARN_WORDING = re.compile(
    r" \((?:Negative values in data passed to [^()]*(?:\([^()]*\))?"
    r"|The covariance matrix of class .* is not full rank\."
    r"|Number of priors must match number of classes)\)"
)


def data_error(path: str, exc: ValueError, feature_names, row_offset: int, rows=None) -> NbcliError:
    """Turn a core ``ValueError`` about a data chunk into a one-line error naming file, column and row.

    ``rows``, when given, maps the chunk's rows to their 0-based rows in the
    file (rows were skipped before the model saw the chunk).
    """
    if isinstance(exc, DataValueError) and feature_names is not None:
        col = feature_names[exc.column] if exc.column < len(feature_names) else exc.column
        row = row_offset + exc.row
        if rows is not None and 0 <= exc.row < len(rows):
            row = int(rows[exc.row])
        remedy = ""
        if exc.remedy is not None:
            name, value, effect = exc.remedy
            remedy = f"; pass --{name.replace('_', '-')} {value} {effect}"
        reason = _SKLEARN_WORDING.sub("", exc.reason)
        return NbcliError(f"{path}: column {col!r}, row {row + 1}: {reason}{remedy}")
    return NbcliError(f"{path}: {model_message(exc, feature_names)}")


def model_message(said, feature_names) -> str:
    """What a model's error or warning ``said``, its columns called by
    ``feature_names`` (the names of the model's input) where it names them."""
    if isinstance(said, ColumnsMessage) and feature_names is not None:
        return _SKLEARN_WORDING.sub("", said.named(feature_names))
    return _SKLEARN_WORDING.sub("", str(said))


def remedy(exc: BaseException, estimator, feature_names) -> str:
    """What to do about a model error that names a column, as the end of its
    line (``""`` when there is nothing to add): a column without any value
    is left out with ``--drop``; one in which a class has no observed value
    is left out, or read as categorical (by this model where it takes a
    distribution per column, else by one that does)."""
    from nbcli.models import EmptyColumnError, NoObservedValueError

    names = list(feature_names)
    if not isinstance(exc, NoObservedValueError) or not 0 <= exc.feature < len(names):
        return ""
    name = names[exc.feature]
    drop = f": leave the column out with --drop {name}"
    if isinstance(exc, EmptyColumnError):
        return drop  # no class has a value: categories would not help either
    kinds = getattr(type(estimator), "feature_kinds", ())
    if len(kinds) > 1 and "categorical" in kinds:
        return f"{drop}, or read it as categorical with --column {name}=categorical"
    from nbcli.models.registry import model_classes

    # A model of both kinds reads such a column as categories (a class
    # without a value in it gets the smoothed counts).
    both = [
        model
        for model, cls in model_classes().items()
        if {"gaussian", "categorical"} <= set(cls.feature_kinds)
    ]
    return drop + (f", or fit --model {both[0]} with --column {name}=categorical" if both else "")
