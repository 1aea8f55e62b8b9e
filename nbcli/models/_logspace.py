"""Log-sum-exp normalisation of joint log-likelihoods into posteriors."""

from __future__ import annotations

import numpy as np


def log_normalise(jll: np.ndarray) -> np.ndarray:
    """Turn joint log-likelihoods into log posteriors, in place.

    Parameters
    ----------
    jll : ndarray of shape (n_samples, n_classes)
        ``log p(x, y=k)`` up to a term that is the same for every class.

    Returns
    -------
    ndarray of shape (n_samples, n_classes)
        ``jll`` itself, now holding ``log p(y=k | x)``: each row minus its
        log-sum-exp, computed after subtracting the row maximum so that no
        exponential overflows or underflows to an all-zero row.
    """
    top = jll.max(axis=1, keepdims=True)
    _mark_unresolved(jll.T, top[:, 0])
    top[~np.isfinite(top)] = 0.0
    jll -= top
    lse = np.log(np.exp(jll).sum(axis=1, keepdims=True))
    jll -= lse
    return jll


# A joint log-likelihood is a sum of terms; at magnitude M its rounding error
# is taken as M * 2**-46 nats (128 units in the last place: a sum of many
# rounded terms, and the expansion of squares). Where that exceeds one
# nat, the classes' scores are known only to within it, and the posterior
# is trusted only when the best class leads by more than that error plus
# _SATURATED nats (then it is 1 to double precision whatever the error).
_RESOLUTION = 2.0**-46
_SATURATED = 40.0


def _mark_unresolved(jll: np.ndarray, top: np.ndarray) -> None:
    """Set to NaN the columns of the class-major ``jll`` (n_classes, n_rows) whose
    posterior rounding leaves undetermined; ``top`` is each column's maximum.

    Values some 1e7 spreads from every class make every score huge (the
    squared distance), and the classes' small differences drown in its
    rounding: the computed posterior would be an arbitrary one, often an
    exact tie, given as certain. NaN says that it is undefined, as for a row
    whose likelihood underflows for every class.
    """
    error = np.abs(top) * _RESOLUTION
    suspect = error > 1.0
    if jll.shape[0] < 2 or not suspect.any():
        return
    cols = np.flatnonzero(suspect & np.isfinite(top))
    if cols.size == 0:
        return
    scores = jll[:, cols]
    second = np.partition(scores, -2, axis=0)[-2]
    unresolved = (top[cols] - second) < _SATURATED + error[cols]
    jll[:, cols[unresolved]] = np.nan


def _column_max(jll: np.ndarray) -> np.ndarray:
    top = jll.max(axis=0)
    _mark_unresolved(jll, top)
    if not np.isfinite(top).all():
        top[~np.isfinite(top)] = 0.0  # a row that is -inf for every class stays -inf
    return top


def _log_normalise_columns(jll: np.ndarray) -> np.ndarray:
    """:func:`log_normalise` for a class-major block (n_classes, n_rows), in place."""
    jll -= _column_max(jll)
    jll -= np.log(np.exp(jll).sum(axis=0))
    return jll


def _softmax_columns(jll: np.ndarray) -> np.ndarray:
    """Posterior probabilities of a class-major block (n_classes, n_rows), in place."""
    jll -= _column_max(jll)
    np.exp(jll, out=jll)
    total = jll.sum(axis=0)
    np.reciprocal(total, out=total)
    jll *= total
    return jll
