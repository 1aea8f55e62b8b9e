"""Distinct values of a label array and the code of every row (NumPy only)."""

from __future__ import annotations

import numpy as np

__all__ = ["unique_inverse"]


def unique_inverse(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(y, return_inverse=True)``, by counting for integers.

    Parameters
    ----------
    y : ndarray of shape (n_samples,)

    Returns
    -------
    uniques : ndarray of shape (n_distinct,)
        The distinct values in ascending order, of ``y``'s dtype.
    inverse : ndarray of intp, shape (n_samples,)
        ``uniques[inverse] == y``.

    Integers in a range of at most a few times their number are counted
    with ``np.bincount`` (O(n)) rather than sorted (O(n log n)): labels are
    mostly such codes.
    """
    if y.size and np.issubdtype(y.dtype, np.integer) and y.dtype != np.uint64:
        lo, hi = int(y.min()), int(y.max())
        if hi - lo < max(1 << 16, 4 * y.size):
            offset = (y - lo).astype(np.intp, copy=False)
            present = np.flatnonzero(np.bincount(offset))
            code = np.empty(hi - lo + 1, dtype=np.intp)
            code[present] = np.arange(present.size)
            return (present + lo).astype(y.dtype), code[offset]
    return np.unique(y, return_inverse=True)
