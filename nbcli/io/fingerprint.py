"""Content fingerprint of a data set, to recognise a model's own training data.

The fingerprint is a SHA-256 over the parsed values, not the file bytes, so
the same rows give the same fingerprint whether they come from CSV, gzip or
NPZ, and however they were cut into chunks: each feature column as float64
in row order (hashed column by column, because parsers hand back
column-major blocks whose columns hash without a copy), combined in the
model's feature order, and the labels by their string form, one per line.
"""

from __future__ import annotations

import hashlib

import numpy as np


class DataFingerprint:
    """Accumulate ``(X, y)`` chunks in row order; ``hexdigest()`` gives the SHA-256."""

    def __init__(self):
        self._columns: list = []
        self._y = hashlib.sha256()
        self.n_samples = 0

    def update(self, X: np.ndarray, y) -> None:
        """Add rows: ``X`` of shape (n_samples, n_features), ``y`` of shape (n_samples,) or None."""
        X = np.asarray(X, dtype=np.float64)
        if not self._columns:
            self._columns = [hashlib.sha256() for _ in range(X.shape[1])]
        for hasher, column in zip(self._columns, X.T):
            hasher.update(np.ascontiguousarray(column).data)
        if y is not None:
            self._y.update(("\n".join(map(str, np.asarray(y).tolist())) + "\n").encode())
        self.n_samples += X.shape[0]

    def hexdigest(self) -> str:
        joined = b"".join(h.digest() for h in self._columns) + self._y.digest()
        return hashlib.sha256(joined).hexdigest()


def fingerprint(X, y) -> str:
    """SHA-256 fingerprint of one in-memory data set (see module docstring)."""
    fp = DataFingerprint()
    fp.update(X, y)
    return fp.hexdigest()
