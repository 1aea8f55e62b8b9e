"""Distinct values of a label array and the code of every row (NumPy only)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["LabelCoding", "grouped_order", "unique_inverse"]


@dataclass(frozen=True)
class LabelCoding:
    """The labels of a block of rows, coded once: the distinct labels and the
    code of every row, carried beside the labels so that the fingerprint and
    the model's statistics need not code them again.

    Attributes
    ----------
    labels : ndarray of shape (n_samples,)
        The labels themselves (what :attr:`uniques` and :attr:`codes` describe).
    uniques : ndarray of shape (n_distinct,)
        The distinct labels in ascending order, each present in ``labels``.
    codes : ndarray of intp, shape (n_samples,)
        ``uniques[codes]`` equals ``labels``.
    """

    labels: np.ndarray
    uniques: np.ndarray
    codes: np.ndarray

    def describes(self, labels) -> bool:
        """Whether this coding is of ``labels`` (the very same array)."""
        return labels is self.labels

    def take(self, keep: np.ndarray, labels: np.ndarray | None = None) -> LabelCoding:
        """The coding of the rows where ``keep`` (bool, shape (n_samples,)) is
        true; labels no kept row has are left out of :attr:`uniques`.
        ``labels``: ``self.labels[keep]`` when already made."""
        codes = self.codes[keep]
        kept = self.labels[keep] if labels is None else labels
        present = np.bincount(codes, minlength=len(self.uniques)) > 0
        if present.all():
            return LabelCoding(kept, self.uniques, codes)
        new = np.cumsum(present) - 1
        return LabelCoding(kept, self.uniques[present], new[codes].astype(np.intp, copy=False))


def grouped_order(codes: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """The rows grouped by their code, each group in its rows' order.

    Parameters
    ----------
    codes : ndarray of non-negative int, shape (n_samples,)
        The group of every row (a class, a fold), below ``n_groups``.
    n_groups : int

    Returns
    -------
    order : ndarray of intp, shape (n_samples,)
        Row indices, group 0's first; increasing within each group.
    bounds : ndarray of intp, shape (n_groups + 1,)
        Group ``g``'s rows are ``order[bounds[g]:bounds[g + 1]]``.

    Notes
    -----
    On codes narrowed to 8 or 16 bits NumPy's stable sort is a radix sort:
    O(n), not O(n log n).
    """
    small = np.min_scalar_type(max(0, n_groups - 1))
    narrow = codes.astype(small, copy=False) if small.itemsize < codes.itemsize else codes
    order = np.argsort(narrow, kind="stable")
    return order, np.searchsorted(narrow[order], np.arange(n_groups + 1))


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
    if y.dtype == object and y.size:
        values = y.reshape(-1).tolist()
        text = _short_text(values)
        if text is not None:
            # Fixed-width text sorts in C; Python strings compare one pair at a time.
            uniques, inverse = np.unique(text, return_inverse=True)
            found = uniques.astype(object)
            # NumPy's fixed-width text drops trailing NUL characters: used only
            # when that changed no label (then the distinct labels map one to one).
            distinct = set(values)
            if len(found) == len(distinct) and all(u in distinct for u in found.tolist()):
                return found, inverse.reshape(-1)
    return np.unique(y, return_inverse=True)


# Longest label sorted as fixed-width text, whose copy takes four bytes a
# character in every row (6.4 MB for 100,000 rows); longer ones keep the object sort.
_SHORT_TEXT = 16


def _short_text(values: list) -> np.ndarray | None:
    """``values`` as fixed-width unicode when every value is a ``str`` of at
    most :data:`_SHORT_TEXT` characters, else None."""
    if set(map(type, values)) != {str} or max(map(len, values)) > _SHORT_TEXT:
        return None
    return np.array(values, dtype=str)
