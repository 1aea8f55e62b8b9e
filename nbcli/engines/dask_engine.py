"""The Dask engine: parts read, fitted and scored on the workers of a Dask cluster.

Imported only for ``--engine dask`` (:func:`nbcli.engines.open_engine` checks
first that Dask is installed); nothing else in nbcli imports Dask.

Each part is one task, run where a worker thread is free, and a part's rows
never leave its worker: a worker returns the part's statistics (or sums),
which are merged in the fixed tree of :mod:`nbcli.engines._reduce` by merge
tasks on the workers, so the client receives one object, the size of the
model's statistics, whatever the number of parts.

Errors. An ``NbcliError`` raised while reading a part is the part's data
being wrong, so retrying cannot help: the task returns it as a value, merges
pass the failure of the lowest part index up, and the client raises that
exception itself (same type, same one-line message) once the tree is done.
Any other exception is retried ``retries`` times (a file system that was
briefly unreachable) and then raised at the client as Dask re-raises it.
A worker that dies mid-task is not an exception: the scheduler reruns its
tasks on the other workers, up to ``distributed.scheduler.allowed-failures``
times (3 by default) per task.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from nbcli.engines._reduce import (
    FitStatistics,
    PartOutcome,
    PartReader,
    add,
    column_ranges,
    guarded,
    merge_optional,
    part_statistics,
    tree_pairs,
)
from nbcli.errors import NO_SUCH_FILE, NbcliError


class _Failed:
    """A part's ``NbcliError``, carried through the merge tree as a value."""

    def __init__(self, index: int, error: NbcliError):
        self.index = index
        self.error = error


def _catching(fn: Callable[..., Any], index: int, *args):
    if args and isinstance(args[0], _Failed):
        return args[0]  # a kept part that failed (DaskEngine.keep_parts)
    try:
        if args:
            _check_visible(args[0])
        return fn(index, *args)
    except NbcliError as exc:
        return _Failed(index, exc)


def _columns_of(value: Any, lo: int, hi: int):
    """A part's share of columns ``lo:hi`` (a failed part passes on as it is)."""
    return value if isinstance(value, _Failed) else value.columns(lo, hi)


def _range_value(column_fn: Callable[..., list], lo: int, hi: int, shared: Any, *pieces):
    for piece in pieces:
        if isinstance(piece, _Failed):
            return piece  # the lowest-indexed failed part
    return column_fn(lo, hi, list(pieces), shared)


def _is_local_path(value: Any) -> bool:
    # The workflows send absolute paths (nbcli.workflows.parts.at_client);
    # other parts (names, URLs) are the task's own business.
    return isinstance(value, str) and os.path.isabs(value)


def _check_visible(part: Any) -> None:
    """On a worker: refuse a part whose input (or, for ``(input, output)``,
    the output's folder) this worker cannot see, naming the worker and the path.

    Raises
    ------
    NbcliError
    """
    inputs, folders = [], []
    if _is_local_path(part):
        inputs.append(part)
    elif isinstance(part, tuple) and len(part) == 2 and all(map(_is_local_path, part)):
        inputs.append(part[0])
        folders.append(os.path.dirname(part[1]) or ".")
    missing = [p for p in inputs if not os.path.exists(p)]
    missing += [f for f in folders if not os.path.isdir(f)]
    if missing:
        try:
            from distributed import get_worker

            worker = get_worker().address
        except (ImportError, ValueError):
            worker = "a worker"
        raise NbcliError(
            f"{missing[0]}: the Dask worker {worker} cannot see this path; the workers need "
            "the same file system as the client (the same paths)"
        )


def _combine(combine: Callable[[Any, Any], Any], a, b):
    # The failure of the lower part index wins, so the error reported does
    # not depend on which worker finished first.
    if isinstance(a, _Failed):
        return a
    if isinstance(b, _Failed):
        return b
    try:
        return combine(a, b)
    except NbcliError as exc:
        # Parts that cannot be merged (different columns): an error of the
        # data, which a retry cannot mend.
        return _Failed(-1, exc)


def _read_statistics(index: int, part: Any, read_part: PartReader, estimator):
    return part_statistics(estimator, read_part(part))


#: Seconds each of the client and the cluster may take to close after an interruption.
CLOSE_TIMEOUT = 5

#: Loggers that report the tasks, comms and workers an interrupted close cuts short.
_NOISY_LOGGERS = ("distributed", "asyncio", "tornado")

_HELD = (signal.SIGINT, signal.SIGTERM)


def _ignore_loop_exception(loop, context) -> None:
    # "Task exception was never retrieved" and the like, for the scheduler's
    # and comms' tasks an interrupted close cancels.
    return None


@contextlib.contextmanager
def _signals_held():
    """Start a local cluster without its workers printing Ctrl-C tracebacks.

    A terminal's Ctrl-C (and ``timeout -s INT``) signals the whole process
    group, so each worker process would print its own ``KeyboardInterrupt``
    traceback. The workers are spawned (a fresh interpreter, which resets
    the signal mask), so they are given this process's standard error
    pointed at ``/dev/null`` instead; their logs are silenced anyway, and
    the command reports their failures itself. A SIGINT or SIGTERM for this
    process during the start is held and raised once the start is over
    (then the cluster is closed quietly), so that the start is not abandoned
    half done with processes left behind.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    held: list[int] = []
    previous: dict[int, Any] = {}

    def hold(signum, frame):
        held.append(signum)

    for signum in _HELD:
        found = signal.getsignal(signum)
        if callable(found):
            previous[signum] = found
            signal.signal(signum, hold)
    sys.stderr.flush()
    saved = os.dup(2)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            for number, handler in previous.items():
                signal.signal(number, handler)
    except Exception:
        if not held:
            raise
    finally:
        os.close(devnull)
        os.close(saved)
    if held and held[0] in previous:
        # The handler found (nbcli's) raises the interruption.
        previous[held[0]](held[0], None)


def tls_security(ca_file: str, cert_file: str, key_file: str | None = None):
    """Dask TLS settings for a ``tls://`` scheduler from certificate files (PEM).

    ``ca_file`` is the certificate authority that signed the scheduler's and
    workers' certificates; ``cert_file`` (and ``key_file``, unless the key is
    in the certificate file) identify this client. Equivalent to setting
    ``distributed.comm.tls.ca-file`` and ``distributed.comm.tls.client.cert``
    / ``.key`` in Dask's configuration.
    """
    from distributed import Security

    return Security(
        tls_ca_file=ca_file,
        tls_client_cert=cert_file,
        tls_client_key=key_file,
        require_encryption=True,
    )


def check_local_cluster(n_workers: int | None, memory_limit: str | int) -> tuple[int, str | int]:
    """Checked ``--workers`` and ``--worker-memory``: ``(n_workers, memory_limit)``.

    ``n_workers`` None means one worker per available core; ``memory_limit``
    is ``"auto"``, a byte count or a size such as ``"4GiB"`` or ``"500MB"``.

    Raises
    ------
    NbcliError
        For fewer than one worker or a size Dask cannot read.
    """
    from dask.utils import parse_bytes

    if n_workers is None:
        n_workers = _machine_workers()
    if int(n_workers) < 1:
        raise NbcliError(f"--workers must be at least 1, got {n_workers}")
    if memory_limit != "auto":
        try:
            size = parse_bytes(memory_limit)
        except (ValueError, TypeError):
            size = 0
        if size <= 0:
            raise NbcliError(
                f"--worker-memory {memory_limit!r} is not a size; give one such as 4GiB or 500MB"
            )
    return int(n_workers), memory_limit


def _machine_workers() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _input_path(part: Any) -> str | None:
    # The input a part's task opens: the path, or the first of (input, output).
    if isinstance(part, tuple) and len(part) == 2:
        part = part[0]
    return part if _is_local_path(part) else None


def _missing_here(part: Any) -> NbcliError | None:
    """At the client: the local engine's error for a part whose input does not
    exist here either (a mistyped path, not a worker that cannot see it)."""
    path = _input_path(part)
    if path is None or os.path.exists(path):
        return None
    return NbcliError(f"{path}: {NO_SUCH_FILE}")


def _visible_then(index: int, part: Any, fn: Callable[..., Any], shared: Any):
    _check_visible(part)
    return fn(index, part, shared)


def _seconds(timeout: str | float) -> float:
    if isinstance(timeout, (int, float)):
        return float(timeout)
    from dask.utils import parse_timedelta

    return float(parse_timedelta(timeout, default="seconds"))


def probe_scheduler(address: str, timeout: str | float, security: Any = None) -> None:
    """Check, within ``timeout``, that a Dask scheduler answers at ``address``.

    A host that does not resolve and a refused connection fail at once; a
    port that accepts and never answers Dask's handshake (a web server waits
    for a request of its own) fails after ``timeout``; another Dask process
    that answers (a worker) is named as such. Addresses of other protocols than ``tcp``/``tls`` are
    left to Dask.

    Raises
    ------
    NbcliError
        One line, for each of the cases above.
    """
    import asyncio
    import socket

    seconds = _seconds(timeout)
    # Parsed here, before Dask's modules are imported (seconds on a busy
    # machine), so that a refused port or an unknown host fails at once.
    scheme, _, location = address.rpartition("://")
    if (scheme or "tcp") not in ("tcp", "tls"):
        return
    host, _, port_text = location.rpartition(":")
    host = host.strip("[]")
    if not host or not port_text.isdigit():
        raise NbcliError(
            f"--scheduler {address}: not an address with a host and a port; give "
            "tcp://HOST:PORT (8786 for `dask scheduler`)"
        )
    port = int(port_text)
    reach = f"cannot reach the Dask scheduler at {address}"
    try:
        socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise NbcliError(f"{reach}: unknown host {host!r}; check the address") from None
    try:
        with socket.create_connection((host, port), timeout=seconds):
            pass
    except ConnectionRefusedError:
        raise NbcliError(
            f"{reach}: connection refused (nothing listens on port {port}); check that "
            "`dask scheduler` runs there and the port is right"
        ) from None
    except TimeoutError:
        raise NbcliError(
            f"{reach}: no connection within {seconds:g} s (--connect-timeout); check the "
            "address and the firewall"
        ) from None
    except OSError as exc:
        raise NbcliError(f"{reach} ({exc.strerror or exc})") from None

    async def identity():
        from distributed.comm import connect

        args = {} if security is None else security.get_connection_args("client")
        comm = await connect(address, timeout=seconds, **args)
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    async def bounded():
        return await asyncio.wait_for(identity(), seconds)

    try:
        answer = asyncio.run(bounded())
    except (asyncio.TimeoutError, TimeoutError):
        raise NbcliError(
            f"the Dask scheduler at {address} did not answer within {seconds:g} s "
            "(--connect-timeout): something accepts connections there but does not speak "
            "Dask's protocol, or the scheduler is stuck"
        ) from None
    except Exception:  # whatever the peer sent could not be read as Dask's messages
        answer = None
    kind = answer.get("type") if isinstance(answer, dict) else None
    if kind != "Scheduler":
        what = f"a Dask {kind.lower()}" if isinstance(kind, str) else "something else"
        raise NbcliError(
            f"{address} is not a Dask scheduler (it answers as {what}); give the address "
            "that `dask scheduler` prints (tcp://HOST:8786 by default)"
        )


def _raise_cluster_failure(exc: BaseException) -> None:
    """Raise the cluster's own failures (a worker killed, for instance over its
    memory limit, tasks cancelled or forgotten with it, a connection closed)
    as one line naming the likely cause; return for anything else (an
    interrupt, a part's error), for the caller to raise as it is."""
    from distributed import KilledWorker
    from distributed.client import FutureCancelledError
    from distributed.comm.core import CommClosedError

    if not isinstance(exc, (KilledWorker, FutureCancelledError, CommClosedError)):
        return
    said = " ".join(str(exc).split())[:200]
    raise NbcliError(
        f"the Dask cluster lost the work ({type(exc).__name__}: {said}): a worker died or "
        "was stopped, most often over its memory limit; give the workers more memory "
        "(--worker-memory, or the cluster's own limit) or cut the data into smaller parts"
    ) from None


class DaskEngine:
    """Per-part work on a Dask cluster; use as a context manager.

    Parameters
    ----------
    scheduler : str, optional
        Address of a running scheduler, e.g. ``tcp://host:8786`` or
        ``tls://host:8786``. Without one, a ``LocalCluster`` is started on
        this machine and closed on exit.
    n_workers : int, optional
        Workers of the local cluster; default one per available core.
    memory_limit : str or int, default "auto"
        Memory limit per local worker, e.g. ``"4GiB"``; ``"auto"`` shares the
        machine's memory among the workers.
    security : distributed.Security, optional
        TLS settings for ``tls://`` addresses. Without it, Dask's own
        configuration (``distributed.comm.tls.*``) is used.
    processes : bool, default True
        Local workers in separate processes (False: threads of this process,
        for tests and small data).
    retries : int, default 2
        Extra attempts for a task that raised something other than an
        ``NbcliError``.
    client : distributed.Client, optional
        An existing client to use (not closed on exit); overrides the above.
    connect_timeout : str or float, default "30s"
        How long to wait for the scheduler at ``scheduler``.

    Notes
    -----
    Local workers get one thread each, so a worker reads one part at a time
    and its memory holds one part. Workers of a remote cluster should be
    started the same way (``dask worker ADDRESS --nthreads 1``).
    """

    name = "dask"

    def __init__(
        self,
        scheduler: str | None = None,
        *,
        n_workers: int | None = None,
        memory_limit: str | int = "auto",
        security: Any = None,
        processes: bool = True,
        retries: int = 2,
        client: Any = None,
        connect_timeout: str | float = "30s",
    ):
        self.scheduler = scheduler
        self.n_workers = n_workers
        self.memory_limit = memory_limit
        self.security = security
        self.processes = processes
        self.retries = int(retries)
        self._client = client
        self._own_client = client is None
        self._cluster: Any = None
        self.connect_timeout = connect_timeout

    # -- lifetime ------------------------------------------------------------
    def __enter__(self) -> DaskEngine:
        try:
            self.start()
        except BaseException as exc:
            # Cut short while connecting or starting (Ctrl-C, SIGTERM): no
            # __exit__ follows, so the client is closed here, quietly, rather
            # than at exit with Dask's tracebacks of what it cancels.
            if not isinstance(exc, Exception):
                self.close(interrupted=True)
            raise
        return self

    def __exit__(self, kind, value, traceback) -> None:
        from nbcli import interrupts

        self.close(interrupted=kind is not None and issubclass(kind, interrupts.STOPS))

    def start(self) -> None:
        """Connect to the scheduler, or start the local cluster."""
        if self._client is not None:
            return
        from distributed import Client, LocalCluster

        if self.scheduler:
            probe_scheduler(self.scheduler, self.connect_timeout, self.security)
            try:
                self._client = Client(
                    self.scheduler, security=self.security, timeout=self.connect_timeout
                )
            except (OSError, ValueError) as exc:
                # ValueError: an address Dask cannot parse, e.g. an unknown protocol.
                reason = " ".join(str(exc).split())
                raise NbcliError(
                    f"cannot reach the Dask scheduler at {self.scheduler} ({reason}); "
                    "check that `dask scheduler` runs there and the address is right"
                ) from None
            return
        n_workers, memory_limit = check_local_cluster(self.n_workers, self.memory_limit)
        with _signals_held():
            self._start_local(LocalCluster, Client, n_workers, memory_limit)

    def _start_local(self, LocalCluster, Client, n_workers: int, memory_limit: str | int) -> None:
        self._cluster = LocalCluster(
            n_workers=n_workers,
            threads_per_worker=1,
            memory_limit=memory_limit,
            processes=self.processes,
            # A free port: no warning when 8787 is taken by another cluster.
            dashboard_address=":0",
            # Dask's own warnings and errors (a worker restarted, a port taken,
            # a heartbeat cut short by the shutdown) would
            # interleave with nbcli's one-line messages on stderr.
            silence_logs=logging.CRITICAL,
        )
        self._client = Client(self._cluster)
        # The local scheduler runs on this process's loops: what it reports
        # of tasks a Ctrl-C cancels ("Task exception was never retrieved")
        # would come before nbcli's one line, so it never reaches stderr.
        self._quiet_loops()

    def close(self, interrupted: bool = False) -> None:
        """Close the client and the local cluster if this engine started them.

        After an interruption (see :mod:`nbcli.interrupts`) the close is quiet
        and bounded: Dask's and asyncio's messages about the tasks it cuts
        short are not printed, and each close waits at most
        :data:`CLOSE_TIMEOUT` seconds.

        Parameters
        ----------
        interrupted : bool, default False
            Whether the command is being interrupted (also known from
            :func:`nbcli.interrupts.stopping` when nbcli's handlers run).
        """
        from nbcli import interrupts

        interrupted = interrupted or interrupts.stopping()
        if interrupted:
            self._quiet()
        timeout = CLOSE_TIMEOUT if interrupted else None
        try:
            if self._own_client and self._client is not None:
                client, self._client = self._client, None
                client.close(timeout=timeout)
            if self._cluster is not None:
                cluster, self._cluster = self._cluster, None
                cluster.close(timeout=timeout)
        except Exception:
            # A close cut short after an interruption: the command exits
            # anyway, and the workers end with their nanny's process.
            if not interrupted:
                raise

    def _quiet(self) -> None:
        """Silence what Dask and asyncio print while tasks are cut short."""
        # Every logger under them: a parent's `disabled` does not stop its
        # children's records, which reach the parent's handlers all the same.
        names = [*logging.root.manager.loggerDict]
        for prefix in _NOISY_LOGGERS:
            for name in [prefix, *(n for n in names if n.startswith(prefix + "."))]:
                logging.getLogger(name).disabled = True
        self._quiet_loops()

    def _quiet_loops(self) -> None:
        for owner in (self._client, self._cluster):
            loop = getattr(getattr(owner, "loop", None), "asyncio_loop", None)
            if loop is not None:
                loop.set_exception_handler(_ignore_loop_exception)

    @property
    def client(self):
        """The ``distributed.Client`` (the engine is started if needed)."""
        self.start()
        return self._client

    # -- work ----------------------------------------------------------------
    def _broadcast(self, shared: Any) -> Any:
        """One future of ``shared`` on every worker, so tasks do not each carry a copy."""
        try:
            (future,) = self.client.scatter([shared], broadcast=True, hash=False)
        except Exception as exc:
            _raise_cluster_failure(exc)
            raise
        return future

    def _gathered(self, futures: list) -> list:
        """The futures' results at the client; on any failure or interrupt the
        rest are cancelled, so no task keeps a worker busy after the command ends."""
        try:
            return self.client.gather(futures)
        except BaseException as exc:
            self._cut_short(exc, futures)
            raise

    def _cut_short(self, exc: BaseException, futures: list) -> None:
        """After ``exc`` while waiting for ``futures``: cancel them, quietly when
        interrupted (what the client logs of the tasks it cancels is not shown),
        and raise the cluster's own failures as one line (see
        :func:`_raise_cluster_failure`); the caller raises anything else."""
        if not isinstance(exc, Exception):
            self._quiet()
        self.client.cancel(futures)
        _raise_cluster_failure(exc)

    def _submit_parts(self, fn: Callable[..., Any], parts: Sequence[Any], *args) -> list:
        return self._task_per_part("part", _catching, fn, parts, *args)

    def _task_per_part(
        self, kind: str, wrapper: Callable[..., Any], fn: Callable[..., Any], parts, *args
    ) -> list:
        """Futures of ``wrapper(fn, i, part, *args)``, one task per part, under
        keys ``nbcli-<kind>-<run>-<i>`` that no other run shares."""
        run = uuid.uuid4().hex[:12]
        return [
            self.client.submit(
                wrapper,
                fn,
                i,
                part,
                *args,
                key=f"nbcli-{kind}-{run}-{i}",
                retries=self.retries,
                pure=False,
            )
            for i, part in enumerate(parts)
        ]

    def _tree(self, futures: list, combine: Callable[[Any, Any], Any], parts: Sequence[Any]):
        """Merge ``futures`` on the workers along the fixed tree; the result, at the client."""
        client = self.client
        current = futures
        try:
            for level in tree_pairs(len(current)):
                current = [
                    current[a]
                    if b < 0
                    else client.submit(
                        _combine, combine, current[a], current[b], retries=self.retries, pure=False
                    )
                    for a, b in level
                ]
            result = current[0].result()
        except BaseException as exc:
            self._cut_short(exc, futures + current)
            raise
        if isinstance(result, _Failed):
            missing = _missing_here(parts[result.index]) if result.index >= 0 else None
            raise missing or result.error
        return result

    def fit_statistics(
        self, parts: Sequence[Any], read_part: PartReader, estimator
    ) -> FitStatistics | None:
        """Training statistics of all parts, read and merged on the workers.

        Parameters
        ----------
        parts : sequence
            Part descriptions (e.g. file paths), sent to the workers as they
            are; the workers must be able to open them.
        read_part : callable
            ``read_part(part)`` returns an iterable of chunks ``(X, y)`` or
            ``(X, y, sample_weight)`` (X of shape (n_rows, n_features)); it
            runs on a worker, so it must be importable or picklable there.
        estimator : BayesClassifier
            Unfitted estimator with the hyperparameters to use.

        Returns
        -------
        FitStatistics or None
            The merged statistics (None when every part was empty); turn them
            into the model with :meth:`FitStatistics.to_estimator`.

        Raises
        ------
        NbcliError
            The one raised by ``read_part`` for the lowest-indexed bad part,
            with its message unchanged.
        ValueError
            From the model's input checks, or when parts disagree on features.
        """
        if not parts:
            return None
        futures = self._submit_parts(_read_statistics, parts, read_part, estimator)
        return self._tree(futures, merge_optional, parts)

    def map_write(
        self, parts: Sequence[Any], fn: Callable[..., Any], shared: Any = None
    ) -> list[PartOutcome]:
        """Run ``fn(index, part, shared)`` on the workers, one task per part.

        ``shared`` (e.g. the fitted model) is sent to every worker once with
        ``client.scatter(broadcast=True)``, not once per task. ``fn`` writes
        its output itself (atomically) and returns something small, such as
        the rows written. A part whose ``fn`` raises does not stop the others.

        Returns
        -------
        list of PartOutcome
            In part order; a failed part has ``error`` set to a one-line message.
        """
        if not parts:
            return []
        futures = self._task_per_part(
            "map", guarded, _visible_then, parts, fn, self._broadcast(shared)
        )
        outcomes = self._gathered(futures)
        for outcome in outcomes:
            missing = _missing_here(outcome.part) if outcome.error is not None else None
            if missing is not None:
                outcome.error = str(missing)
        # The broadcast model is released with the last reference to its
        # future; cancelling it explicitly races with the release of the
        # tasks that used it (a scheduler assertion in distributed).
        return outcomes

    def gather_parts(
        self, parts: Sequence[Any], fn: Callable[..., Any], shared: Any = None
    ) -> list:
        """``fn(index, part, shared)`` of each part, at the client in part order.

        For values that do not shrink as they merge (each part's travels once,
        where a tree of merges would move it between workers at every level).

        Raises
        ------
        NbcliError
            The one raised by ``fn`` for the lowest-indexed bad part.
        """
        if not parts:
            return []
        results = self._gathered(self._submit_parts(fn, parts, self._broadcast(shared)))
        for result in results:
            if isinstance(result, _Failed):
                missing = _missing_here(parts[result.index])
                raise missing or result.error
        return results

    def gather_columns(
        self,
        parts: Sequence[Any],
        fn: Callable[..., Any],
        shared: Any,
        n_columns: int,
        column_fn: Callable[..., list],
        column_shared: Any = None,
    ) -> list:
        """``column_fn(lo, hi, pieces, column_shared)`` over consecutive ranges of ``n_columns``
        columns, one range a worker, from ``fn(index, part, shared)`` of each part.

        Each part's value (with ``.columns(lo, hi)``, its share of columns
        ``lo:hi``) stays on its worker; each range's task fetches only its
        share of every part from the other workers, so values that do not
        shrink as they merge never travel to the client: only what
        ``column_fn`` returns, a list of ``hi - lo`` values. ``shared`` and
        ``column_shared`` are broadcast once, as in :meth:`map_write`.

        Returns
        -------
        list
            The ``n_columns`` values, in column order.

        Raises
        ------
        NbcliError
            The one raised by ``fn`` for the lowest-indexed bad part.
        """
        if not parts or n_columns < 1:
            return []
        client = self.client
        futures = self._submit_parts(fn, parts, self._broadcast(shared))
        workers = sorted(client.scheduler_info().get("workers", {})) or [None]
        bounds = column_ranges(n_columns, len(workers))
        common = self._broadcast(column_shared)
        run = uuid.uuid4().hex[:12]
        ranges = []
        for j, (lo, hi) in enumerate(bounds):
            # Each range on its own worker, so that the ranges' merges run in parallel.
            where = None if workers[j % len(workers)] is None else [workers[j % len(workers)]]
            pieces = [
                client.submit(
                    _columns_of,
                    f,
                    lo,
                    hi,
                    key=f"nbcli-columns-{run}-{j}-{i}",
                    retries=self.retries,
                    pure=False,
                )
                for i, f in enumerate(futures)
            ]
            ranges.append(
                client.submit(
                    _range_value,
                    column_fn,
                    lo,
                    hi,
                    common,
                    *pieces,
                    key=f"nbcli-range-{run}-{j}",
                    retries=self.retries,
                    pure=False,
                    workers=where,
                    allow_other_workers=True,
                )
            )
        results = self._gathered(ranges)
        out: list = []
        for result in results:
            if isinstance(result, _Failed):
                missing = _missing_here(parts[result.index])
                raise missing or result.error
            out.extend(result)
        return out

    def keep_parts(self, parts: Sequence[Any], fn: Callable[..., Any], shared: Any = None) -> list:
        """``fn(index, part, shared)`` of each part, kept on the worker that computed it.

        Returns one future a part, to be given as the parts of
        :meth:`sum_over_parts`: each of its tasks then runs where its part's
        value is (Dask moves it, or spills it to disk, as it needs), so that
        several passes over the parts read them once. The values live until
        the futures are dropped. An ``NbcliError`` of ``fn`` is raised by the
        first sum over the kept parts, for the lowest-indexed bad part.
        """
        if not parts:
            raise ValueError("nothing to keep: no parts")
        return self._submit_parts(fn, parts, self._broadcast(shared))

    def sum_over_parts(
        self, parts: Sequence[Any], fn: Callable[..., Any], shared: Any = None
    ) -> Any:
        """Sum of ``fn(index, part, shared)`` over the parts, added up on the workers.

        ``fn`` returns something that adds (arrays, numbers) or merges (an
        object with ``.merge``); values are combined along the fixed tree of
        part indices. ``shared`` is broadcast once, as in :meth:`map_write`.

        Raises
        ------
        NbcliError
            The one raised by ``fn`` for the lowest-indexed bad part.
        ValueError
            For no parts.
        """
        if not parts:
            raise ValueError("nothing to sum: no parts")
        futures = self._submit_parts(fn, parts, self._broadcast(shared))
        return self._tree(futures, add, parts)
