"""Where a workflow reports what happens (a reporter); engines live in :mod:`nbcli.engines`.

Workflows never print. They send progress and warnings to a
:class:`Reporter` (the command line passes one that draws progress bars
and prints warnings; the default keeps warnings in a list and shows
nothing), and they hand independent work to an engine: the
:class:`~nbcli.engines.local.LocalEngine` of this machine, or the Dask
engine (``--engine dask``), both from :func:`nbcli.engines.open_engine`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeVar

from nbcli.engines import Engine
from nbcli.engines.local import LocalEngine

T = TypeVar("T")

__all__ = ["Engine", "LocalEngine", "Reporter"]


class Reporter:
    """Receives a workflow's progress and warnings; shows nothing itself.

    Attributes
    ----------
    warnings : list of str
        Every warning and piece of advice, in the order they were given.
    """

    def __init__(self) -> None:
        self.warnings: list[str] = []

    def warn(self, message: str) -> None:
        """Something the user should know about the result (always shown by the CLI)."""
        self.warnings.append(message)

    def advise(self, message: str) -> None:
        """Advice on what to do next (the CLI leaves it out under ``--quiet``)."""
        self.warnings.append(message)

    def progress(
        self, iterable: Iterable[T], description: str, *, total: int | None = None
    ) -> Iterable[T]:
        """``iterable`` itself; a reporter that draws progress wraps it."""
        return iterable
