"""Progress bars on stderr, shown only on a terminal and never with --quiet."""

from __future__ import annotations

import sys

from nbcli.cli.console import is_terminal
from nbcli.workflows.engine import Reporter


def progress_iter(iterable, description: str, *, quiet: bool = False, total: int | None = None):
    """Yield from ``iterable`` with a Rich progress bar on stderr when that is a terminal."""
    if quiet or not is_terminal(sys.stderr):
        yield from iterable
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
    )

    from nbcli.cli.console import console

    columns = [
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    ]
    with Progress(*columns, console=console(sys.stderr), transient=True) as progress:
        task = progress.add_task(description, total=total)
        for item in iterable:
            yield item
            progress.advance(task)


class ConsoleReporter(Reporter):
    """A workflow reporter for the terminal: progress bars on stderr, warnings as
    ``warning:`` lines (advice left out under ``--quiet``)."""

    def __init__(self, quiet: bool = False) -> None:
        super().__init__()
        self.quiet = quiet

    def warn(self, message: str) -> None:
        from nbcli.cli.console import warn

        # Said once: a command that reads its data twice (compare: once per
        # model) meets the same finding twice.
        if message in self.warnings:
            return
        self.warnings.append(message)
        warn(message)

    def advise(self, message: str) -> None:
        from nbcli.cli.console import warn

        self.warnings.append(message)
        if not self.quiet:
            warn(message)

    def progress(self, iterable, description: str, *, total: int | None = None):
        return progress_iter(iterable, description, quiet=self.quiet, total=total)
