"""``nbcli calibrate``: measure and repair over-confident posteriors."""

from __future__ import annotations

import typer
from typing_extensions import Annotated

from nbcli.cli import common
from nbcli.errors import NbcliError


def calibrate(
    model: Annotated[str, common.MODEL],
    data: Annotated[str, typer.Option("--data", "-d", help="Held-out labelled data.")],
):
    """Reliability of the model's posteriors, and temperature or isotonic repair."""
    raise NbcliError("calibrate is not available yet")
