"""The local engine: every part in this process, one after another or with joblib."""

from __future__ import annotations

from collections.abc import Callable, Sequence
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

    def sum_over_parts(
        self, parts: Sequence[Any], fn: Callable[..., Any], shared: Any = None
    ) -> Any:
        """Sum of ``fn(index, part, shared)``; see :meth:`DaskEngine.sum_over_parts`."""
        return tree_reduce(self._map(fn, parts, shared), add)


def _guarded_write(index: int, part: Any, fn: Callable[..., Any], shared: Any) -> PartOutcome:
    return guarded(fn, index, part, shared)


def _read_statistics(index: int, part: Any, read_part: PartReader, estimator):
    return part_statistics(estimator, read_part(part))
