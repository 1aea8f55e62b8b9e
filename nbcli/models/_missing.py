"""Missing cells (NaN): the rule every model follows, and helpers for it.

Every model takes ``missing=``:

* ``"error"`` (the Python default, as scikit-learn refuses NaN): a NaN cell
  is an error naming its row and column;
* ``"ignore"`` (the naive Bayes models): a NaN cell is left out of its
  feature's statistics at fit and out of the product of per-feature
  likelihoods at predict. In naive Bayes that is exact marginalisation of
  the missing feature under missing-at-random (Little and Rubin,
  *Statistical Analysis with Missing Data*, 2nd ed., 2002, section 1.3):
  ``sum_v p(x_j = v | k) = 1`` (an integral for a density), so summing the
  joint likelihood over the unobserved value removes the feature's factor
  and nothing else. For count features (multinomial, complement) a missing
  count contributes nothing, which is the same as a count of 0 at fit and
  in the product;
* ``"drop"`` (every model): a row with a NaN cell is skipped at fit and
  counted (``n_dropped_``), and at predict gets NaN posteriors and no label.

Infinity is never missing: it stays an error whatever ``missing`` says.
The base class (:class:`~nbcli.models._base.BayesClassifier`) applies the
rule at fit and in its scoring loop; a model that ignores cells handles NaN
in ``accumulate`` and ``joint_log_likelihood_block``.
"""

from __future__ import annotations

import contextlib
import contextvars

import numpy as np

from nbcli.models._validation import DataValueError

#: Arrays told finite within :func:`checks_of_one_array`: ``[array, answer]``.
_TOLD: contextvars.ContextVar[list | None] = contextvars.ContextVar("_TOLD", default=None)


@contextlib.contextmanager
def checks_of_one_array():
    """A block in which :func:`all_finite` answers once per array.

    Validating a training chunk asks it up to three times of the same array
    (infinity refused, rows with a missing cell dropped, NaN counted): each
    asking is a pass over the chunk. Inside the block the answer for the
    array last asked about (the same object, unchanged: the callers only
    read it) is kept; outside it nothing is kept, so an array changed
    between two calls is always looked at again. A block within a block
    shares the outer one's answer (a workflow's row filter, then the
    model's validation of the same chunk).
    """
    if _TOLD.get() is not None:
        yield
        return
    token = _TOLD.set([None, False])
    try:
        yield
    finally:
        _TOLD.reset(token)


def all_finite(X: np.ndarray) -> bool:
    """Whether every cell of ``X`` is finite, told by one sum.

    NaN or infinity anywhere makes the sum non-finite; so may an overflow of
    huge finite values, so False means only "look closer". One pass, without
    the boolean array of ``np.isfinite(X)``.
    """
    told = _TOLD.get()
    if told is not None and told[0] is X:
        return told[1]
    with np.errstate(over="ignore", invalid="ignore"):
        answer = bool(np.isfinite(np.add.reduce(X, axis=None)))
    if told is not None:
        told[0], told[1] = X, answer
    return answer


def incomplete_rows(X: np.ndarray) -> np.ndarray:
    """Which rows of ``X`` (2-D) hold a NaN cell: a boolean array of shape (n_samples,).

    The row sums tell the rows that may (a NaN makes its row's sum NaN);
    only those are looked at cell by cell.
    """
    n = X.shape[0]
    if all_finite(X):
        return np.zeros(n, dtype=bool)
    with np.errstate(over="ignore", invalid="ignore"):
        suspects = np.flatnonzero(~np.isfinite(np.add.reduce(X, axis=1)))
    out = np.zeros(n, dtype=bool)
    out[suspects] = np.isnan(X[suspects]).any(axis=1)
    return out


def check_no_infinity(X: np.ndarray, *, name: str = "X", row_offset: int = 0) -> None:
    """Raise ``DataValueError`` naming the first infinite entry of ``X`` (NaN allowed)."""
    if X.size == 0 or all_finite(X):
        return
    bad = np.isinf(X)
    if not bad.any():
        return
    i, j = (int(v) for v in np.argwhere(bad)[0])
    raise DataValueError(
        f"{name} contains infinity at row {i + row_offset}, column {j}; infinity is not "
        "a missing value (NaN is) and is not allowed",
        i + row_offset,
        j,
        "infinity is not allowed",
    )


def zero_missing(X: np.ndarray) -> np.ndarray:
    """``X`` with NaN cells replaced by 0 (a new array), for sums that leave them out."""
    return np.where(np.isnan(X), 0.0, X)


def first_negative(X: np.ndarray):
    """``(row, column)`` of the first negative cell of ``X`` (NaN ignored), or None.

    The minimum answers for a block without NaN in one pass; a NaN minimum
    needs the closer look.
    """
    low = X.min() if X.size else 0.0
    if not (low < 0 or low != low):
        return None
    with np.errstate(invalid="ignore"):
        bad = X < 0
    if not bad.any():
        return None
    i, j = np.argwhere(bad)[0]
    return int(i), int(j)


def drop_incomplete(X: np.ndarray, y: np.ndarray, w, policy: str):
    """``(X, y, w, n_dropped)``: under ``"drop"``, without the rows that have a NaN cell."""
    if policy != "drop" or hasattr(X, "tocsr"):
        # A sparse matrix holds no NaN (it is refused when validated).
        return X, y, w, 0
    complete = ~incomplete_rows(X)
    n_dropped = int(X.shape[0] - complete.sum())
    if n_dropped:
        X, y = X[complete], y[complete]
        w = None if w is None else w[complete]
    return X, y, w, n_dropped


def score_with_missing(model, block: np.ndarray, lo: int) -> np.ndarray:
    """Joint log-likelihood, (n_classes, n_rows), of a block that may hold NaN cells.

    Under ``"ignore"`` the model's ``joint_log_likelihood_block`` leaves NaN
    cells out itself; under ``"drop"`` rows with a NaN cell get NaN scores
    (hence NaN posteriors) and the others are scored as usual. Values are
    checked first (``lo``: the block's first row, for messages).
    """
    if model._scan_for_nonfinite:  # a model whose scores need not show infinity
        check_no_infinity(block, row_offset=lo)
    checked = block
    if model.missing_policy == "drop":
        # A row with a missing cell is dropped whatever its other cells hold:
        # its cells are not checked (an unseen category in it is no error).
        incomplete = np.isnan(block).any(axis=1)
        if incomplete.any():
            checked = block.copy()
            checked[incomplete] = np.nan
    try:
        model._check_values(checked, lo)
        model._check_unseen(checked, lo)
    except ValueError:
        check_no_infinity(block, row_offset=lo)  # infinity gets its own message
        raise
    with np.errstate(invalid="ignore", over="ignore"):
        if model.missing_policy == "ignore":
            jll = model.joint_log_likelihood_block(block)
            # Infinity makes scores non-finite, so only then is the block scanned.
            if not np.isfinite(jll).all():
                check_no_infinity(block, row_offset=lo)
            return jll
        check_no_infinity(block, row_offset=lo)
        incomplete = np.isnan(block).any(axis=1)
        if not incomplete.any():
            return model.joint_log_likelihood_block(block)
        jll = np.full((len(model.classes_), block.shape[0]), np.nan)
        if not incomplete.all():
            jll[:, ~incomplete] = model.joint_log_likelihood_block(block[~incomplete])
        return jll


def labels_of(classes: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """``classes[idx]``; where ``idx`` is -1 (a dropped row), ``None`` in an object array."""
    if not (idx < 0).any():
        return classes[idx]
    labels = classes.astype(object)[idx]
    labels[idx < 0] = None
    return labels
