"""Sparse input for the count models: validation and the two matrix products.

A document-term matrix has a handful of non-zeros per row over a vocabulary
of tens of thousands of columns, so it is never made dense. The count
models need only two products of it, both sparse-times-dense:

* statistics, per class and feature: ``X.T @ onehot(y)`` (n_features, n_classes);
* scores, per class and row: ``W @ X.T`` (n_classes, n_rows) for a dense
  parameter matrix ``W`` (n_classes, n_features).

A model that takes sparse input (tag ``sparse``) routes it through
:func:`prepare_fit`, :func:`prepare_predict` and :func:`each_block` from its
``_prepare_X``, ``_check_predict_input`` and ``_each_block``.

Memory grows with the non-zeros of ``X`` and the size of the results, not
with rows times features. SciPy is imported only when a sparse matrix is
passed, so dense callers pay nothing.
"""

from __future__ import annotations

import numpy as np

from nbcli.models._blocks import _BLOCK_ELEMENTS
from nbcli.models._validation import DataValueError


def is_sparse(X) -> bool:
    """True for a ``scipy.sparse`` matrix or array (without importing SciPy otherwise)."""
    if not (hasattr(X, "tocsr") and hasattr(X, "nnz")):
        return False
    import scipy.sparse as sp

    return bool(sp.issparse(X))


def check_sparse(X, *, name: str = "X"):
    """``X`` as a 2-D float64 CSR array with sorted indices and finite entries.

    Parameters
    ----------
    X : scipy.sparse matrix or array of shape (n_samples, n_features)

    Returns
    -------
    scipy.sparse.csr_array of float64
        ``X`` itself when it already is one (no copy).

    Raises
    ------
    ValueError
        For an empty matrix or one without features, complex values, or a
        NaN or infinity (:class:`DataValueError` naming its row and column, 0-based).
    """
    import scipy.sparse as sp

    if X.ndim != 2:
        raise ValueError(f"expected a 2-D sparse matrix for {name}, got {X.ndim}-D")
    if X.dtype.kind == "c":
        raise ValueError(f"Complex data not supported: {name} holds complex values")
    if X.dtype.kind not in "biuf":
        raise ValueError(f"{name} has dtype {X.dtype}; expected numbers")
    n, d = X.shape
    if n < 1:
        raise ValueError(
            f"Found array with 0 sample(s) (shape=({n}, {d})) while a minimum of 1 is required."
        )
    if d < 1:
        raise ValueError(
            f"Found array with 0 feature(s) (shape=({n}, {d})) while a minimum of 1 is required."
        )
    if not (isinstance(X, sp.csr_array) and X.dtype == np.float64):
        X = sp.csr_array(X, dtype=np.float64)
    if not X.has_sorted_indices:
        X = X.sorted_indices()
    bad = ~np.isfinite(X.data)
    if bad.any():
        i, j, v = first_entry(X, bad)
        what = "NaN" if np.isnan(v) else "infinity"
        raise DataValueError(
            f"{name} contains {what} at row {i}, column {j}; "
            "input must not contain NaN or infinity",
            i,
            j,
            f"{what} is not allowed",
        )
    return X


def prepare_fit(model, X):
    """Sparse ``X`` validated for fitting ``model``: :func:`check_sparse`, then
    the model's ``_check_values`` (no negative counts...)."""
    X = check_sparse(X)
    model._check_values(X)
    return X


def prepare_predict(model, X):
    """Sparse ``X`` validated for scoring with fitted ``model`` (its values are
    checked block by block while scoring, as dense input's are)."""
    model._check_fitted()
    X = check_sparse(X)
    model._check_n_features(X)
    return X


def each_block(model, X, consume) -> None:
    """Call ``consume(rows, jll)`` for row blocks of validated sparse ``X``, in order.

    A sparse block costs its non-zeros, so blocks are sized by the (dense)
    scores they produce, not by rows times features.
    """
    step = max(64, _BLOCK_ELEMENTS // max(1, len(model.classes_)))
    for lo in range(0, X.shape[0], step):
        hi = min(X.shape[0], lo + step)
        consume(slice(lo, hi), model._score_block(X, lo, hi))


def first_negative_entry(X) -> tuple[int, int, float] | None:
    """Row, column and value of the first negative stored entry of CSR ``X``, or None."""
    negative = X.data < 0
    return first_entry(X, negative) if negative.any() else None


def first_entry(X, flagged: np.ndarray) -> tuple[int, int, float]:
    """Row, column and value of the first stored entry of CSR ``X`` where ``flagged`` (over ``X.data``)."""
    k = int(np.argmax(flagged))
    row = int(np.searchsorted(X.indptr, k, side="right") - 1)
    return row, int(X.indices[k]), float(X.data[k])


def class_sums(X, y_idx: np.ndarray, w, n_classes: int) -> np.ndarray:
    """Weighted per-class column sums ``onehot(y).T @ X``, dense (n_classes, n_features)."""
    n = X.shape[0]
    onehot = np.zeros((n, n_classes))
    onehot[np.arange(n), y_idx] = 1.0 if w is None else w
    return np.ascontiguousarray(np.asarray(X.T @ onehot).T)


def scores(W: np.ndarray, X) -> np.ndarray:
    """``W @ X.T`` for dense ``W`` (n_classes, n_features): class-major (n_classes, n_rows)."""
    return np.ascontiguousarray(np.asarray(X @ W.T).T)


def binarize(X, threshold: float):
    """Entries above ``threshold`` as 1, others 0; sparse for a threshold >= 0."""
    if threshold < 0:
        # Every stored zero would become 1: the result is dense anyway.
        return (X.toarray() > threshold).astype(np.float64)
    out = X.copy()
    out.data = (out.data > threshold).astype(np.float64)
    out.eliminate_zeros()
    return out
