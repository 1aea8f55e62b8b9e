"""Row-block scoring shared by every model: blocks checked and scored while in
cache, class-major, in runs of a few blocks on several threads when there
are enough of them; and :func:`affine_scores`, the product of the affine
models.

A mixin of :class:`~nbcli.models._base.BayesClassifier`; it calls the
model's ``joint_log_likelihood_block`` and value checks.
"""

from __future__ import annotations

from concurrent.futures import wait
from typing import TYPE_CHECKING

import numpy as np

from nbcli.models._missing import score_with_missing
from nbcli.models._parallel import one_blas_thread, scoring_pool, scoring_threads
from nbcli.models._validation import check_finite

# Rows scored per block: enough for BLAS to run at full speed, small enough
# for the block's temporaries to stay in cache.
_BLOCK_ELEMENTS = 1 << 18

# Products of at most this many multiply-adds (rows x features x classes) are
# taken by OpenBLAS's small-matrix kernels, which skip the packing of larger
# products and run about twice as fast on rows in cache (measured at 100
# features and 10 classes); :func:`affine_scores` takes its products in
# pieces of that size. Harmless with other BLAS libraries.
_SMALL_PRODUCT = 1_000_000

# Blocks are scored in parallel threads (NumPy releases the GIL in matrix
# products, exp and the reductions) once there are at least this many; below
# that the pool costs more than it saves.
_PARALLEL_BLOCKS = 4

# Blocks per run handed to a thread and turned into posteriors at once: the
# GIL changes hands at every NumPy call, and on two cores calls on one
# block's scores (n_classes x 2,621 values at 100 features) are too short
# for the threads to run side by side rather than in turns.
_TASK_BLOCKS = 4
# ... as long as the run's scores (classes x rows) stay within this many values.
_TASK_SCORES = 1 << 18


def affine_scores(
    X: np.ndarray,
    coef: np.ndarray,
    intercept: np.ndarray,
    *,
    threshold: float | None = None,
    centre: np.ndarray | None = None,
) -> np.ndarray:
    """Class-major scores ``coef @ f(x) + intercept`` of every row of a block.

    The score of the affine models (multinomial and Bernoulli naive Bayes,
    LDA), taken as a stack of products small enough for BLAS's small-matrix
    kernels (see ``_SMALL_PRODUCT``), in one call.

    Parameters
    ----------
    X : ndarray of shape (n_rows, n_features), float64
    coef : ndarray of shape (n_classes, n_features)
    intercept : ndarray of shape (n_classes,)
    threshold : float, optional
        ``f(x) = 1`` where ``x > threshold``, else 0 (a NaN cell gives 0).
    centre : ndarray of shape (n_features,), optional
        ``f(x) = x - centre``.

    Returns
    -------
    ndarray of shape (n_classes, n_rows)
        C-contiguous.
    """
    n, d = X.shape
    k = coef.shape[0]
    if threshold is not None:
        rows = np.empty((n, d))
        np.greater(X, threshold, out=rows)
    elif centre is not None:
        rows = np.subtract(X, centre)
    else:
        rows = X
    W = np.ascontiguousarray(coef.T)  # the small kernels take (d, k) row-major only
    scores = np.empty((n, k))
    step = _SMALL_PRODUCT // max(1, d * k)
    stacked = n // step if step >= 64 and rows.flags.c_contiguous else 0
    if stacked:
        done = stacked * step
        np.matmul(
            rows[:done].reshape(stacked, step, d), W, out=scores[:done].reshape(stacked, step, k)
        )
        if done < n:
            np.matmul(rows[done:], W, out=scores[done:])
    else:
        np.matmul(rows, W, out=scores)
    scores += intercept
    return np.ascontiguousarray(scores.T)


class BlockScoring:
    """Scoring of validated rows block by block (see the module docstring)."""

    n_features_in_: int

    if TYPE_CHECKING:
        # Supplied by BayesClassifier and the model classes.
        @property
        def missing_policy(self) -> str: ...

        @property
        def _scan_for_nonfinite(self) -> bool: ...

        def _check_values(self, X, row_offset: int = 0) -> None: ...

        def _check_unseen(self, X, row_offset: int = 0) -> None: ...

        def joint_log_likelihood_block(self, X: np.ndarray) -> np.ndarray: ...

    def _block_step(self) -> int:
        return max(64, _BLOCK_ELEMENTS // max(1, self.n_features_in_))

    def _score_block(self, X, lo: int, hi: int) -> np.ndarray:
        """Joint log-likelihood of rows ``lo:hi`` of validated ``X``, shape (n_classes, hi - lo).

        Values are checked here, while the block is in cache, and the
        class-major layout makes the reductions over classes run along
        contiguous memory.
        """
        block = X[lo:hi]
        # Sparse counts (text columns) have no missing cells to leave out.
        if self.missing_policy != "error" and not hasattr(block, "tocsr"):
            return score_with_missing(self, block, lo)
        scanned = self._scan_for_nonfinite
        if scanned:
            check_finite(block, row_offset=lo)
        try:
            self._check_values(block, lo)
            self._check_unseen(block, lo)
        except ValueError:
            check_finite(block, row_offset=lo)  # a NaN gets its own message
            raise
        with np.errstate(invalid="ignore", over="ignore"):
            jll = self.joint_log_likelihood_block(block)
        # NaN or infinity in a row makes its scores non-finite, so the
        # (smaller) score block tells whether the rows need a closer look.
        if not scanned and not np.isfinite(jll).all():
            check_finite(block, row_offset=lo)
        return jll

    def _score_rows(self, X, lo: int, hi: int) -> np.ndarray:
        """:meth:`_score_block` of rows ``lo:hi`` block by block, joined: (n_classes, hi - lo)."""
        step = self._block_step()
        if hi - lo <= step:
            return self._score_block(X, lo, hi)
        parts = [self._score_block(X, a, min(hi, a + step)) for a in range(lo, hi, step)]
        return np.concatenate(parts, axis=1)

    def _each_block(self, X, consume) -> None:
        """Call ``consume(rows, jll)`` for every run of blocks of validated ``X``.

        Blocks are scored while in cache, and ``consume`` gets
        :data:`_TASK_BLOCKS` of them at a time, so that each of its NumPy
        calls has enough rows to outweigh the call. With enough blocks and
        several cores the runs are scored by a pool of
        :func:`scoring_threads` threads with BLAS held to one thread each,
        so the cores are shared between runs rather than oversubscribed.
        Every run is computed as in the sequential path, so the results are
        bit for bit the same; ``consume`` must write disjoint rows. Errors
        surface in row order: the first bad block's message, as sequentially.
        """
        step = self._block_step()
        n = X.shape[0]
        # Many classes make each block's scores large enough on their own.
        classes = len(getattr(self, "classes_", ()))
        span = step * max(1, min(_TASK_BLOCKS, _TASK_SCORES // max(1, classes * step)))
        starts = range(0, n, span)
        threads = scoring_threads()

        def work(lo: int) -> None:
            hi = min(n, lo + span)
            consume(slice(lo, hi), self._score_rows(X, lo, hi))

        if threads < 2 or -(-n // step) < _PARALLEL_BLOCKS or len(starts) < 2:
            for lo in starts:
                work(lo)
            return
        with one_blas_thread():
            pool = scoring_pool(threads)
            futures = [pool.submit(work, lo) for lo in starts]
            try:
                for future in futures:
                    future.result()
            finally:
                # No run outlives the call (a failed one leaves the others
                # writing): those not started are dropped, the rest awaited.
                for future in futures:
                    future.cancel()
                wait(futures)
