"""Settings that travel together through the workflows, one frozen value each.

Beside the :class:`~nbcli.io.request.DataRequest` (what to read), a workflow
takes these: how the folds of ``cv`` and ``tune`` are planned
(:class:`FoldSettings`), how a report's figures are summarised
(:class:`ScoreSettings`: bootstrap intervals and reliability bins), what a
predictions file holds (:class:`PredictionColumns`) and what ``tune``
searches (:class:`Search`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from nbcli.errors import NbcliError

__all__ = [
    "MEMORY_BUDGET",
    "CalibrationChecks",
    "FoldSettings",
    "PredictionColumns",
    "ScoreSettings",
    "Search",
]

#: Bytes of validated rows a fold computation keeps in memory; beyond, the
#: file is read again for each later pass.
MEMORY_BUDGET = 1 << 30


@dataclass(frozen=True)
class FoldSettings:
    """How the folds of a cross-validation are made.

    Attributes
    ----------
    n_folds : int
        Stratified folds (ignored with ``fold_column``).
    fold_column : str or None
        Column whose values are the folds.
    group_column : str or None
        Column of groups: the rows of a group stay in one fold.
    n_repeats : int
        Independent fold plans (repeated k-fold).
    seed : int or None
        Seed of the fold plan (and, in ``cv``, of the bootstrap).
    memory_budget : int
        Bytes of validated rows kept in memory between passes.
    carry : tuple of str
        Input columns read beside the rows and copied next to the
        out-of-fold predictions (an ID), as ``predict --keep`` copies them.
    """

    n_folds: int = 10
    fold_column: str | None = None
    group_column: str | None = None
    n_repeats: int = 1
    seed: int | None = 0
    memory_budget: int = MEMORY_BUDGET
    carry: tuple[str, ...] = ()

    def check(self) -> None:
        """Refuse contradictory settings.

        Raises
        ------
        NbcliError
            For a fold column with a group column, or with repeats.
        """
        if self.fold_column is not None and self.group_column is not None:
            raise NbcliError("give --fold-column or --group-column, not both")
        if self.fold_column is not None and self.n_repeats != 1:
            raise NbcliError("--repeats needs planned folds; a --fold-column gives one plan")

    @property
    def keep(self) -> list[str]:
        """The columns read beside the features: the fold or group column, and those carried."""
        planned = [c for c in (self.fold_column, self.group_column) if c is not None]
        return list(dict.fromkeys([*planned, *self.carry]))

    @property
    def keep_for(self) -> str:
        """What the kept columns are for, in the message for one that is not there."""
        options = [
            option
            for option, given in (
                ("--fold-column", self.fold_column),
                ("--group-column", self.group_column),
                ("--keep", self.carry),
            )
            if given
        ]
        return f"for {' or '.join(options)}"

    def planning(self) -> dict:
        """The keywords of :func:`nbcli.workflows.fold_plan.plan_folds`."""
        return {
            "n_folds": self.n_folds,
            "fold_column": self.fold_column,
            "group_column": self.group_column,
            "n_repeats": self.n_repeats,
            "seed": self.seed,
        }


@dataclass(frozen=True)
class ScoreSettings:
    """How a report's figures are summarised.

    Attributes
    ----------
    bootstrap : int
        Bootstrap resamples of the intervals (0: none).
    confidence : float
        Level of the intervals.
    seed : int
        Seed of the resampling.
    bins : int, list of float or None
        Reliability bins (a number, or edges in [0, 1]); None: the
        command's default.
    strategy : {"uniform", "quantile"}
        Equal-width bins or equal counts.
    pos_label : str or None
        With two classes, the one average precision is of (``--pos-label``);
        None: the second in sorted order.
    """

    bootstrap: int = 1000
    confidence: float = 0.95
    seed: int = 0
    bins: int | list[float] | None = None
    strategy: str = "uniform"
    pos_label: str | None = None


@dataclass(frozen=True)
class PredictionColumns:
    """What a predictions file holds beside each row's label.

    Attributes
    ----------
    proba : bool
        One ``proba_<label>`` column per class.
    keep : tuple of str or None
        Input columns copied next to the predictions.
    digits : int or None
        Decimal places of the probabilities; None: every digit needed to
        read them back exactly.
    """

    proba: bool = False
    keep: tuple[str, ...] | None = None
    digits: int | None = None

    def __post_init__(self):
        if self.keep is not None:
            object.__setattr__(self, "keep", tuple(str(k) for k in self.keep))


@dataclass(frozen=True)
class Search:
    """What ``tune`` searches: the values of each hyperparameter, and the metric.

    Attributes
    ----------
    grid : dict of str to list
        Values of each searched hyperparameter, combinations in the order given.
    metric : str
        Pooled out-of-fold metric to optimise; losses are minimised.
    text_grid : dict of str to list
        Values of text settings searched (``ngram_range``, ``min_df``,
        ``max_df``: fields of :class:`nbcli.text.settings.TextSettings`),
        varying slower than ``grid``, combinations in the order given.
    warnings : tuple of str
        What reading the grid had to tell (range points rounded to whole
        numbers that made the grid smaller); the report gives them first.
    """

    grid: dict[str, list] = field(default_factory=dict)
    metric: str = "log_loss"
    text_grid: dict[str, list] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class CalibrationChecks:
    """How ``calibrate`` judges a calibrator.

    Attributes
    ----------
    folds : int
        Folds of the cross-fitting (stratified, seeded by the scoring seed).
    allow_worse : bool
        Whether a calibrator the verdict does not accept is still written
        (``--allow-worse``); only the verdict's warning depends on it.
    """

    folds: int = 5
    allow_worse: bool = False
