"""What ``nbcli predict`` did: rows scored, rows left empty, unseen categories.

A plain data object like the reports of :mod:`nbcli.reports`, kept out of
that package because predicting a small file must not load SciPy (which
the reports package does).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class PredictionSummary:
    """The summary of one prediction run (JSON schema ``nbcli.prediction``).

    Attributes
    ----------
    rows : int
        Rows read and written.
    scored : int
        Rows with a prediction.
    missing : str
        The missing-value policy in force (``error``, ``ignore``, ``drop``).
    unseen_policy : str
        What an unseen category got (``error`` or ``ignore``).
    unseen : dict of str to int
        Per categorical column, cells whose category the model never saw
        (left out of the product under ``ignore``).
    unseen_words : int
        Word occurrences in text columns that are not in the model's
        vocabulary (ignored, as scikit-learn's CountVectorizer ignores them).
    model, data, output : str or None
        The files involved (``output`` None: stdout).
    inputs : dict
        The JSON report's ``inputs`` (paths and SHA-256 of the model and the
        data), filled in when a report is asked for.
    settings : dict
        The options that shaped the output (``proba``, ``digits``, ``keep``).
    """

    rows: int = 0
    scored: int = 0
    missing: str = "error"
    unseen_policy: str = "error"
    unseen: dict = field(default_factory=dict)
    unseen_words: int = 0
    model: str | None = None
    data: str | None = None
    output: str | None = None
    inputs: dict = field(default_factory=dict)
    settings: dict = field(default_factory=dict)

    schema = "nbcli.prediction"
    schema_version = 1

    @property
    def empty(self) -> int:
        """Rows left with an empty prediction (a missing cell under ``drop``)."""
        return self.rows - self.scored

    def line(self) -> str:
        """The one-line summary predict prints on stderr."""
        unseen = sum(self.unseen.values())
        text = f"{self.rows} rows: {self.scored} scored, {self.empty} left empty"
        if self.unseen:
            text += f", {unseen} unseen categor{'y' if unseen == 1 else 'ies'}"
            if unseen:
                text += " (" + ", ".join(f"{k}: {v}" for k, v in self.unseen.items() if v) + ")"
        if self.unseen_words:
            text += f", {self.unseen_words} words not in the vocabulary ignored"
        return text

    def to_dict(self) -> dict:
        from nbcli import __version__

        return {
            "schema": self.schema,
            "schema_version": self.schema_version,
            "nbcli_version": __version__,
            "inputs": dict(self.inputs),
            "settings": dict(self.settings),
            "model": self.model,
            "data": self.data,
            "output": self.output,
            "rows": self.rows,
            "scored": self.scored,
            "empty": self.empty,
            "missing": self.missing,
            "unseen": {"policy": self.unseen_policy, "cells": dict(self.unseen)},
            "unseen_words": self.unseen_words,
        }
