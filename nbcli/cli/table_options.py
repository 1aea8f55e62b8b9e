"""Options about tables as they come: missing cells, unseen categories, column types."""

from dataclasses import dataclass
from typing import ClassVar

import typer

from nbcli.cli.common import DROP, FEATURES, TARGET, option_group

MISSING = typer.Option(
    "--missing",
    help=(
        "Missing feature cells: error (refuse), ignore (leave the cell out of its feature's "
        "likelihood) or drop (skip the row). Fit default: ignore for naive Bayes models, drop "
        "for LDA/QDA; predict and evaluate default: the model's."
    ),
    metavar="error|ignore|drop",
)
UNSEEN = typer.Option(
    "--unseen",
    help=(
        "A category never seen in training: error, or ignore (left out of the product like a "
        "missing cell). Stored in the model at fit; predict can override it."
    ),
    metavar="error|ignore",
)
NA_VALUES = typer.Option(
    "--na-values",
    help=(
        "Cell texts that mean a missing value (comma-separated or repeated; the empty cell "
        "always does). Default: NA, NaN, null, None, N/A, empty and the other usual spellings."
    ),
)
SCORING_NA_VALUES = typer.Option(
    "--na-values",
    help=(
        "Cell texts that mean a missing value in this file (comma-separated or repeated), "
        "instead of those the model was fitted with."
    ),
)
NA_LABELS = typer.Option(
    "--na-labels",
    help=(
        "Label texts that mean a missing label, such as NA as R writes it (comma-separated "
        "or repeated; the empty cell always does). Default: none, labels are taken as "
        "written."
    ),
)
COLUMN = typer.Option(
    "--column",
    help=(
        "Per-column distribution of the mixed model, NAME=gaussian|categorical|bernoulli|"
        "multinomial|poisson|kernel|discretized (repeatable, or comma-separated). Default: "
        "text and boolean columns categorical, numbers gaussian."
    ),
    metavar="NAME=TYPE",
)


@dataclass(frozen=True)
class ColumnOptions:
    """Which columns a fitting command reads, and how: ``--target``,
    ``--features``, ``--drop``, ``--column``, ``--na-values``, ``--na-labels``."""

    option_group: ClassVar[bool] = True
    target: str | None = None
    features: list[str] | None = None
    drop: list[str] | None = None
    column: list[str] | None = None
    na_values: list[str] | None = None
    na_labels: list[str] | None = None


#: The column options of a command that gives none.
ALL_COLUMNS = ColumnOptions()

#: The column options in place of a command's ``columns`` parameter (one :class:`ColumnOptions`).
with_column_options = option_group(
    "columns",
    ColumnOptions,
    (
        ("target", str | None, TARGET, None),
        ("features", list[str] | None, FEATURES, None),
        ("drop", list[str] | None, DROP, None),
        ("column", list[str] | None, COLUMN, None),
        ("na_values", list[str] | None, NA_VALUES, None),
        ("na_labels", list[str] | None, NA_LABELS, None),
    ),
)
