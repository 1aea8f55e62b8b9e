"""How many threads score row blocks, and BLAS held to one thread while they run."""

from __future__ import annotations

import os
import sys


def scoring_threads() -> int:
    """Threads that score row blocks: the cores this process may run on, at most 8.

    ``NBCLI_THREADS`` overrides it (1 scores sequentially).
    """
    env = os.environ.get("NBCLI_THREADS", "").strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, min(8, cores))


_BLAS_CONTROLLER = None
_BLAS_SEEN_SCIPY = False
#: (process id, threads, pool) of :func:`scoring_pool`.
_POOL: tuple | None = None


def scoring_pool(threads: int):
    """A pool of ``threads`` threads for row blocks, made once per process and kept.

    A search scores the same rows under hundreds of models (``tune``: grid
    values x folds), each call too short to repay starting threads of its
    own. The pool is made again in a forked child, where its threads do
    not exist, and when another size is asked for.
    """
    global _POOL
    pid = os.getpid()
    if _POOL is None or _POOL[0] != pid or _POOL[1] != threads:
        from concurrent.futures import ThreadPoolExecutor

        if _POOL is not None and _POOL[0] == pid:
            _POOL[2].shutdown(wait=False)
        _POOL = (pid, threads, ThreadPoolExecutor(threads, thread_name_prefix="nbcli-score"))
    return _POOL[2]


def one_blas_thread():
    """A context in which BLAS runs single-threaded, so block threads do not oversubscribe.

    OpenBLAS and MKL thread counts are process-wide, so the limit holds for
    every block thread at once. threadpoolctl is imported on first use only.
    """
    global _BLAS_CONTROLLER, _BLAS_SEEN_SCIPY
    # A controller knows the BLAS libraries loaded when it was made; SciPy
    # brings its own (QDA's factorisations), so it is made again once SciPy's
    # linear algebra has been loaded, rather than scanning at every call.
    scipy_loaded = "scipy.linalg" in sys.modules
    if _BLAS_CONTROLLER is None or scipy_loaded != _BLAS_SEEN_SCIPY:
        from threadpoolctl import ThreadpoolController

        _BLAS_CONTROLLER = ThreadpoolController()
        _BLAS_SEEN_SCIPY = scipy_loaded
    return _BLAS_CONTROLLER.limit(limits=1, user_api="blas")
