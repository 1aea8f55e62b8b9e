"""Reading columns of the :data:`~nbcli.io.plan.WORDS` kind: text to be split into words.

A WORDS column is read as text, cell by cell: a missing cell (empty, or
null in Parquet) is an empty document, which has no words, so it adds
nothing to the term counts and is scored on the prior and the other
columns alone. Values that are not text in Parquet (numbers, booleans)
are read as their text. Tokenising is :mod:`nbcli.text`'s job, not the
reader's.
"""

from __future__ import annotations

import numpy as np

from nbcli.io.plan import WORDS, ColumnPlan

__all__ = ["word_columns", "words_of"]


def word_columns(plan: ColumnPlan) -> list[str]:
    """The WORDS features of ``plan``, in feature order."""
    return [c for c in plan.features if plan.kinds.get(c) == WORDS]


def words_of(frame, plan: ColumnPlan) -> dict[str, np.ndarray]:
    """Every WORDS column of a polars frame as an object array of str (missing cells ``""``)."""
    import polars as pl

    out = {}
    for name in word_columns(plan):
        column = frame.get_column(name)
        if column.dtype != pl.String:
            column = column.cast(pl.String)
        out[name] = np.asarray(column.fill_null("").to_list(), dtype=object)
    return out
