"""Gaussian log-likelihood terms and var_smoothing rules shared by GaussianNB and MixedNB."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_LOG_2PI = np.log(2.0 * np.pi)

EPSILON_SHARE = 0.1
"""The share of a class's variance of a feature above which ``epsilon`` is
listed in ``large_epsilon_`` (and ``nbcli fit`` warns): smoothing that adds
more than 10% to a variance scales that feature's term of the log-likelihood
by as much, which moves posteriors and can change predictions (breast cancer
under scikit-learn's default: 30 such pairs, 7 predictions of 569 change
with a per-feature epsilon)."""


def smoothing_epsilon(var_smoothing: float, var_all: np.ndarray, scale: str) -> np.ndarray:
    """``epsilon_j`` of each feature, shape (n_features,).

    Parameters
    ----------
    var_smoothing : float
    var_all : ndarray of shape (n_features,)
        Each feature's variance over all (observed) training values.
    scale : {"global", "feature"}
        ``"global"``: ``var_smoothing * max_i var_i`` for every feature
        (scikit-learn's rule); ``"feature"``: ``var_smoothing * var_j``,
        except that a feature constant in all the training data (``var_j =
        0``, nothing to scale) gets the global value: it is the same in
        every class, where the feature's mean is the same too, so it changes
        no posterior and rescaling another column still changes none.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        top = var_smoothing * (var_all.max() if var_all.size else 0.0)
        if scale == "feature":
            return np.where(var_all > 0, var_smoothing * var_all, top)
        return np.full(var_all.shape, top)


def large_epsilon(present: np.ndarray, raw: np.ndarray, eps: np.ndarray) -> np.ndarray:
    """``(class, feature)`` pairs, shape (n_pairs, 2), whose positive variance
    ``raw`` (n_classes, n_features) gets more than :data:`EPSILON_SHARE` of
    itself from ``eps`` (n_features,) (zero variances are ``zero_variance_``'s)."""
    with np.errstate(invalid="ignore"):
        return np.argwhere(present[:, None] & (raw > 0) & (eps > EPSILON_SHARE * raw))


@dataclass(frozen=True)
class StandardisedTerms:
    """Scoring constants of diagonal Gaussian log densities, per class and column.

    In standardised coordinates ``z = (x - centre) * inv_scale`` a class's
    log density is ``sum_j a_j z_j^2 + b_j z_j + c``: two matrix products
    for every class at once. Columns in ``stiff``, whose expanded terms are
    large enough for rounding to matter, are scored exactly, class by class.
    """

    centre: np.ndarray  # (d,)
    inv_scale: np.ndarray  # (d,)
    stiff: np.ndarray  # (s,) column indices
    stiff_theta: np.ndarray  # (1, s, K)
    stiff_a: np.ndarray  # (1, s, K)
    aT: np.ndarray  # (K, d)
    bT: np.ndarray  # (K, d)
    #: Each column's share of the constant, taken back out for a missing cell.
    c_feature: np.ndarray  # (K, d)
    c: np.ndarray  # (K, 1)

    @classmethod
    def of(cls, centre, scale, theta_z, a, stiff, var, c=None) -> StandardisedTerms:
        """The terms of class means ``theta_z`` and inverse variances ``a`` in
        standardised units, ``stiff`` a mask of the columns scored exactly,
        ``var`` the variances in the data's units; ``c`` (n_classes,) is the
        constant, by default the sum of the columns' shares."""
        flat = ~stiff
        c_feature = -0.5 * (_LOG_2PI + np.log(var)) - 0.5 * theta_z**2 * a * flat
        return cls(
            centre=centre,
            inv_scale=1.0 / scale,
            stiff=np.flatnonzero(stiff),
            stiff_theta=theta_z[:, stiff].T[None],
            stiff_a=-0.5 * a[:, stiff].T[None],
            aT=-0.5 * a * flat,
            bT=theta_z * a * flat,
            c_feature=c_feature,
            c=(c_feature.sum(axis=1) if c is None else c)[:, None],
        )

    def scores(self, X: np.ndarray, missing: np.ndarray | None) -> np.ndarray:
        """The log densities of the rows of ``X``, shape (n_classes, n_rows);
        ``missing`` (a mask of ``X``, or None) leaves those cells out."""
        Z = X - self.centre
        Z *= self.inv_scale
        if missing is not None:
            Z[missing] = 0.0
        out = self.bT @ Z.T
        if self.stiff.size:
            D = Z[:, self.stiff, None] - self.stiff_theta  # (rows, s, K)
            D *= D
            D *= self.stiff_a
            if missing is not None:
                D[missing[:, self.stiff]] = 0.0
            out += D.sum(axis=1).T
        Z *= Z
        out += self.aT @ Z.T
        out += self.c
        if missing is not None:
            out -= self.c_feature @ missing.T.astype(np.float64)
        return out
