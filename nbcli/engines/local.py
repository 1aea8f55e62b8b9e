"""The local engine: every part in this process, one after another or with joblib.

It is the one local engine of nbcli: the per-part work of the engines
(:meth:`LocalEngine.fit_statistics`, :meth:`LocalEngine.map_write`,
:meth:`LocalEngine.sum_over_parts`) and the plain task map batch
prediction runs its files through (:meth:`LocalEngine.map`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

from nbcli.engines._reduce import (
    FitStatistics,
    PartOutcome,
    PartReader,
    add,
    guarded,
    merge_optional,
    part_statistics,
    tree_reduce,
)


class LocalEngine:
    """Run per-part work in this process.

    Parameters
    ----------
    n_jobs : int, default 1
        1 runs parts one after another; more runs them in joblib worker
        processes (``-1``: one per core). Results are merged in the same
        fixed tree either way, so they do not depend on ``n_jobs``.
    """

    name = "local"

    def __init__(self, n_jobs: int = 1):
        self.n_jobs = int(n_jobs)

    def __enter__(self) -> LocalEngine:
        return self

    def __exit__(self, *exc) -> None:
        return None

    def close(self) -> None:
        """Nothing to release; present for symmetry with the Dask engine."""

    def workers(self, jobs: int | None, n_tasks: int) -> int:
        """Workers for ``n_tasks`` tasks: ``jobs`` (default: all cores), but
        never more than the cores available to this process nor the tasks;
        more workers than cores only compete for them."""
        from joblib import cpu_count

        cores = max(1, cpu_count())
        wanted = cores if jobs is None else jobs
        return max(1, min(wanted, cores, n_tasks))

    def map(
        self, func: Callable[..., Any], tasks: Sequence[tuple], *, jobs: int | None = None
    ) -> Iterator[Any]:
        """``func(*task)`` for every task in joblib threads, as a generator of
        results in task order (so that progress can be shown as they come).

        Threads rather than processes: a task here reads, scores and writes
        a whole file, and polars and NumPy do that with the GIL released, so
        threads run in parallel without the second or so that starting
        worker processes (each importing NumPy and polars) costs, and Ctrl-C
        reaches one process whose clean-up removes unfinished outputs.
        """
        from joblib import Parallel, delayed

        parallel = Parallel(
            n_jobs=self.workers(jobs, len(tasks)), return_as="generator", prefer="threads"
        )
        return iter(parallel(delayed(func)(*task) for task in tasks))

    def _map(self, fn: Callable[..., Any], parts: Sequence[Any], *args) -> list:
        if self.n_jobs == 1 or len(parts) < 2:
            return [fn(i, part, *args) for i, part in enumerate(parts)]
        from joblib import Parallel, delayed

        return Parallel(n_jobs=self.n_jobs)(
            delayed(fn)(i, part, *args) for i, part in enumerate(parts)
        )

    def fit_statistics(
        self, parts: Sequence[Any], read_part: PartReader, estimator
    ) -> FitStatistics | None:
        """Merged training statistics of ``parts``; see :meth:`DaskEngine.fit_statistics`."""
        stats = self._map(_read_statistics, parts, read_part, estimator)
        return tree_reduce(stats, merge_optional) if stats else None

    def map_write(
        self, parts: Sequence[Any], fn: Callable[..., Any], shared: Any = None
    ) -> list[PartOutcome]:
        """``fn(index, part, shared)`` for each part; see :meth:`DaskEngine.map_write`."""
        return self._map(_guarded_write, parts, fn, shared)

    def gather_parts(
        self, parts: Sequence[Any], fn: Callable[..., Any], shared: Any = None
    ) -> list:
        """``fn(index, part, shared)`` of each part, in part order; see
        :meth:`DaskEngine.gather_parts`."""
        return self._map(fn, parts, shared)

    def gather_columns(
        self,
        parts: Sequence[Any],
        fn: Callable[..., Any],
        shared: Any,
        n_columns: int,
        column_fn: Callable[..., list],
        column_shared: Any = None,
    ) -> list:
        """All ``n_columns`` as one range; see :meth:`DaskEngine.gather_columns`."""
        if not parts or n_columns < 1:
            return []
        return column_fn(0, n_columns, self._map(fn, parts, shared), column_shared)

    def keep_parts(self, parts: Sequence[Any], fn: Callable[..., Any], shared: Any = None) -> None:
        """None: this engine keeps nothing between passes over the parts (memory
        stays at a part's), so a workflow reads them again; see
        :meth:`DaskEngine.keep_parts`."""
        return None

    def sum_over_parts(
        self, parts: Sequence[Any], fn: Callable[..., Any], shared: Any = None
    ) -> Any:
        """Sum of ``fn(index, part, shared)``; see :meth:`DaskEngine.sum_over_parts`."""
        return tree_reduce(self._map(fn, parts, shared), add)


def _guarded_write(index: int, part: Any, fn: Callable[..., Any], shared: Any) -> PartOutcome:
    return guarded(fn, index, part, shared)


def _read_statistics(index: int, part: Any, read_part: PartReader, estimator):
    return part_statistics(estimator, read_part(part))
