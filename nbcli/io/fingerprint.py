"""Content fingerprint of a data set, to recognise a model's own training data.

The fingerprint is a SHA-256 over the parsed values, not the file bytes, so
the same rows give the same fingerprint whether they come from CSV, gzip or
NPZ, and however they were cut into chunks: the features as float64 in row
order (columns in the model's feature order), and the labels by their string
form, one per line.
"""

from __future__ import annotations

import hashlib

import numpy as np


class DataFingerprint:
    """Accumulate ``(X, y)`` chunks in row order; ``hexdigest()`` gives the SHA-256."""

    def __init__(self):
        self._x = hashlib.sha256()
        self._y = hashlib.sha256()
        self.n_samples = 0

    def update(self, X: np.ndarray, y) -> None:
        """Add rows: ``X`` of shape (n_samples, n_features), ``y`` of shape (n_samples,) or None."""
        self._x.update(np.ascontiguousarray(X, dtype=np.float64).tobytes())
        if y is not None:
            self._y.update(("\n".join(map(str, np.asarray(y).tolist())) + "\n").encode())
        self.n_samples += X.shape[0]

    def hexdigest(self) -> str:
        return hashlib.sha256(self._x.digest() + self._y.digest()).hexdigest()


def fingerprint(X, y) -> str:
    """SHA-256 fingerprint of one in-memory data set (see module docstring)."""
    fp = DataFingerprint()
    fp.update(X, y)
    return fp.hexdigest()
