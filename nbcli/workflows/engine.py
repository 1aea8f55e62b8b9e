"""Where a workflow runs (an engine) and where it reports what happens (a reporter).

Workflows never print. They send progress and warnings to a
:class:`Reporter` (the command line passes one that draws progress bars
and prints warnings; the default keeps warnings in a list and shows
nothing), and they hand independent tasks to an engine. :class:`LocalEngine`
runs them in this machine's processes; a distributed engine plugs in with
the same ``map`` method.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


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


class Engine(Protocol):
    """Runs independent tasks; results come back in the order of the tasks."""

    name: str

    def map(
        self, func: Callable[..., Any], tasks: Sequence[tuple], *, jobs: int | None = None
    ) -> Iterator[Any]: ...


class LocalEngine:
    """Tasks in worker processes on this machine (joblib), at most one per core."""

    name = "local"

    def workers(self, jobs: int | None, n_tasks: int) -> int:
        """Worker processes for ``n_tasks`` tasks: ``jobs`` (default: all cores),
        but never more than the cores available to this process nor the tasks;
        more processes than cores only compete for them."""
        from joblib import cpu_count

        cores = max(1, cpu_count())
        wanted = cores if jobs is None else jobs
        return max(1, min(wanted, cores, n_tasks))

    def map(
        self, func: Callable[..., Any], tasks: Sequence[tuple], *, jobs: int | None = None
    ) -> Iterator[Any]:
        """``func(*task)`` for every task, as a generator of results in task order."""
        from joblib import Parallel, delayed

        parallel = Parallel(n_jobs=self.workers(jobs, len(tasks)), return_as="generator")
        return iter(parallel(delayed(func)(*task) for task in tasks))
