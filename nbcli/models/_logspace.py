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
    top[~np.isfinite(top)] = 0.0
    jll -= top
    lse = np.log(np.exp(jll).sum(axis=1, keepdims=True))
    jll -= lse
    return jll


def _column_max(jll: np.ndarray) -> np.ndarray:
    top = jll.max(axis=0)
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
