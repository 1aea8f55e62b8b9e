"""Engines: where per-part work runs (this process, or a Dask cluster).

A data set given as several part files is fitted, scored and evaluated
part by part. An engine runs three kinds of per-part work and combines the
results in one fixed tree over the part index (see :mod:`nbcli.engines._reduce`),
so every engine gives the same bits for the same parts:

* :meth:`Engine.fit_statistics` - each part's training statistics, merged;
  the model is made from them once (:meth:`FitStatistics.to_estimator`).
* :meth:`Engine.map_write` - a function per part that writes its own output
  (batch prediction); failures are reported per part.
* :meth:`Engine.sum_over_parts` - per-part sums, added (evaluation: see
  :mod:`nbcli.engines.sums`).

The local engine also has :meth:`~nbcli.engines.local.LocalEngine.map`, the
plain task map that local batch prediction runs its files through.

>>> import numpy as np
>>> from nbcli.engines import open_engine
>>> from nbcli.models import GaussianNB
>>> def read_part(path):  # runs where the part is read: yields chunks (X, y)
...     start = int(path.split("-")[1])
...     x = np.arange(start, start + 4, dtype=float)[:, None]
...     yield x, (x[:, 0] % 2).astype(int)
>>> with open_engine("local") as engine:
...     stats = engine.fit_statistics(["part-0", "part-4"], read_part, GaussianNB())
>>> stats.to_estimator(GaussianNB()).class_count_.tolist()
[4.0, 4.0]

Nothing here imports Dask; ``open_engine("dask")`` does, after
:func:`require_dask` has checked that it is installed.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from nbcli.engines._reduce import (
    FitStatistics,
    PartOutcome,
    PartReader,
    finish_fit,
    tree_pairs,
    tree_reduce,
)
from nbcli.errors import NbcliError

ENGINES = ("local", "dask")

DASK_INSTALL_HINT = "pip install 'nbcli[dask]'"


class Engine(Protocol):
    """What the workflows need of an engine (see :class:`DaskEngine` for the details)."""

    name: str

    def __enter__(self) -> Engine: ...

    def __exit__(self, *exc) -> None: ...

    def fit_statistics(
        self, parts: Sequence[Any], read_part: PartReader, estimator
    ) -> FitStatistics | None: ...

    def map_write(
        self, parts: Sequence[Any], fn: Callable[..., Any], shared: Any = None
    ) -> list[PartOutcome]: ...

    def sum_over_parts(
        self, parts: Sequence[Any], fn: Callable[..., Any], shared: Any = None
    ) -> Any: ...

    def gather_parts(
        self, parts: Sequence[Any], fn: Callable[..., Any], shared: Any = None
    ) -> list: ...

    def gather_columns(
        self,
        parts: Sequence[Any],
        fn: Callable[..., Any],
        shared: Any,
        n_columns: int,
        column_fn: Callable[..., list],
        column_shared: Any = None,
    ) -> list: ...

    def keep_parts(
        self, parts: Sequence[Any], fn: Callable[..., Any], shared: Any = None
    ) -> list | None: ...


def dask_missing() -> list[str]:
    """The distributions ``--engine dask`` needs that are not installed (none: ``[]``)."""
    needed = {"dask": "dask", "distributed": "distributed"}
    return [dist for module, dist in needed.items() if importlib.util.find_spec(module) is None]


def require_dask() -> None:
    """Check that the Dask engine can run, without importing Dask.

    Raises
    ------
    NbcliError
        One line naming what is missing and the command that installs it.
    """
    missing = dask_missing()
    if missing:
        raise NbcliError(
            f"--engine dask needs {' and '.join(missing)}, which "
            f"{'is' if len(missing) == 1 else 'are'} not installed: {DASK_INSTALL_HINT}"
        )


def open_engine(
    name: str = "local",
    *,
    scheduler: str | None = None,
    workers: int | None = None,
    worker_memory: str | int | None = None,
    security: Any = None,
    n_jobs: int = 1,
    processes: bool = True,
    connect_timeout: float | None = None,
) -> Engine:
    """The engine called ``name``, to be used as a context manager.

    Parameters
    ----------
    name : {"local", "dask"}
    scheduler : str, optional
        ``--scheduler``: Dask scheduler address; without it a local cluster.
    workers, worker_memory : optional
        ``--workers`` and ``--worker-memory``: size of the local Dask cluster
        (number of workers; memory limit per worker such as ``"2GiB"``).
    security : distributed.Security, optional
        TLS settings for a ``tls://`` scheduler.
    n_jobs : int
        joblib processes of the local engine.
    processes : bool
        Local Dask workers as processes (True) or threads.
    connect_timeout : float, optional
        ``--connect-timeout``: seconds to wait for the scheduler at
        ``scheduler`` to answer (default 30).

    Raises
    ------
    NbcliError
        For an unknown name, Dask options given to the local engine, or
        Dask not installed.

    Examples
    --------
    >>> from nbcli.engines import open_engine
    >>> with open_engine("local") as engine:
    ...     type(engine).__name__
    'LocalEngine'
    """
    if name == "local":
        given = [
            flag
            for flag, value in (
                ("--scheduler", scheduler),
                ("--workers", workers),
                ("--worker-memory", worker_memory),
                ("--connect-timeout", connect_timeout),
            )
            if value is not None
        ]
        if given:
            verb = "applies" if len(given) == 1 else "apply"
            raise NbcliError(f"{', '.join(given)} only {verb} with --engine dask")
        from nbcli.engines.local import LocalEngine

        return LocalEngine(n_jobs=n_jobs)
    if name == "dask":
        require_dask()
        if scheduler and (workers is not None or worker_memory is not None):
            raise NbcliError(
                "--workers and --worker-memory size a local cluster; with --scheduler the "
                "cluster's own workers are used"
            )
        if connect_timeout is not None and not connect_timeout > 0:
            raise NbcliError(
                f"--connect-timeout must be a positive number of seconds, got {connect_timeout}"
            )
        if connect_timeout is not None and not scheduler:
            raise NbcliError("--connect-timeout applies with --scheduler (a running cluster)")
        from nbcli.engines.dask_engine import DaskEngine

        return DaskEngine(
            scheduler,
            n_workers=workers,
            memory_limit="auto" if worker_memory is None else worker_memory,
            security=security,
            processes=processes,
            connect_timeout=30.0 if connect_timeout is None else float(connect_timeout),
        )
    raise NbcliError(f"unknown engine {name!r}: choose one of {', '.join(ENGINES)}")


__all__ = [
    "DASK_INSTALL_HINT",
    "ENGINES",
    "Engine",
    "FitStatistics",
    "PartOutcome",
    "dask_missing",
    "finish_fit",
    "open_engine",
    "require_dask",
    "tree_pairs",
    "tree_reduce",
]
