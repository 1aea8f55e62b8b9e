"""Missing cells (NaN) for the models that can leave them out.

A model that mixes in :class:`MissingAware` takes ``missing="error"`` (NaN
refused, as scikit-learn refuses it) or ``missing="ignore"``: a NaN cell is
left out of its feature's statistics at fit and out of the product of
per-feature likelihoods at predict. In naive Bayes that is exact
marginalisation of the missing feature under missing-at-random (Little and
Rubin, *Statistical Analysis with Missing Data*, 2nd ed., 2002, section 1.3):
``sum_v p(x_j = v | k) = 1``, so summing the joint likelihood over the
unobserved value removes the feature's factor and nothing else.

Infinity is never missing: it stays an error in both modes.
"""

from __future__ import annotations

import numpy as np

from nbcli.models._base import _BLOCK_ELEMENTS
from nbcli.models._validation import DataValueError, check_array, check_finite

MISSING_MODES = ("error", "ignore")
UNSEEN_MODES = ("error", "ignore")


def check_mode(value, name: str, modes: tuple[str, ...]) -> str:
    """Return ``value`` if it is one of ``modes``, else raise ``ValueError``."""
    if not isinstance(value, str) or value not in modes:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, modes))}; got {value!r}")
    return value


def check_no_infinity(X: np.ndarray, *, name: str = "X", row_offset: int = 0) -> None:
    """Raise ``DataValueError`` naming the first infinite entry of ``X`` (NaN allowed)."""
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


class MissingAware:
    """Validation of cells for models with a ``missing`` hyperparameter.

    The model's own checks of observed values go in ``_check_values(X,
    row_offset)`` (NaN cells must pass when ``missing="ignore"``) and, for
    values the fitted model cannot score, ``_check_unseen(X, row_offset)``.
    Both get the row offset of the block, so messages name rows of the
    whole array. Unlike the default path of :class:`BayesClassifier`, a
    value error in a block with missing cells is reported as itself rather
    than as the NaN.
    """

    missing: str
    n_features_in_: int

    def _check_nonfinite(self, X: np.ndarray, row_offset: int = 0) -> None:
        if self.missing == "ignore":
            check_no_infinity(X, row_offset=row_offset)
        else:
            check_finite(X, row_offset=row_offset)

    def _prepare_X(self, X) -> np.ndarray:
        # Value checks that need the column layout run in ``_new_stats``,
        # once the feature names of the chunk are known.
        X = check_array(X, finite=False)
        self._check_nonfinite(X)
        return X

    def _check_values(self, X: np.ndarray, row_offset: int = 0) -> None:
        """Model-specific checks of the observed cells of a block."""

    def _check_unseen(self, X: np.ndarray, row_offset: int = 0) -> None:
        """Refuse values the fitted model has no parameters for (scoring only)."""

    def _jll_block(self, X: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _scored_blocks(self, X):
        step = max(64, _BLOCK_ELEMENTS // max(1, self.n_features_in_))
        for lo in range(0, X.shape[0], step):
            rows = slice(lo, min(X.shape[0], lo + step))
            block = X[rows]
            self._check_nonfinite(block, lo)
            self._check_values(block, lo)
            self._check_unseen(block, lo)
            with np.errstate(invalid="ignore", over="ignore"):
                jll = self._jll_block(block)
            yield rows, jll
