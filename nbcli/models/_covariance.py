"""Covariance estimates from mergeable statistics: Ledoit-Wolf shrinkage, and
which of scikit-learn's covariance estimators such statistics can serve.

NumPy only; used by LDA and QDA (:mod:`nbcli.models.discriminant`).
"""

from __future__ import annotations

import numpy as np


def ledoit_wolf_from_stats(
    count: float, scatter: np.ndarray, fourth: np.ndarray, *, standardise: bool = True
):
    """Ledoit-Wolf shrunk covariance of one class, from its co-moments.

    The features are standardised (centred, divided by their standard
    deviation, a zero deviation counting as 1), the optimal shrinkage towards
    ``mu * I`` is estimated by the formula of Ledoit and Wolf, "A well-conditioned
    estimator for large-dimensional covariance matrices", J. Multivariate
    Analysis 88 (2004), and the result is scaled back. This is what
    scikit-learn's LDA does with ``shrinkage="auto"``, but computed from the
    mergeable statistics rather than the rows.

    Parameters
    ----------
    count : float
        Weighted number of samples ``n``.
    scatter : ndarray of shape (n_features, n_features)
        ``sum_i w_i c_i c_i^T`` with ``c_i`` the centred rows.
    fourth : ndarray of shape (n_features, n_features)
        ``sum_i w_i c_ij^2 c_ik^2``.
    standardise : bool, default=True
        False: shrink the covariance of the features as they are (what
        scikit-learn's ``LedoitWolf`` estimator does), not standardised.

    Returns
    -------
    cov : ndarray of shape (n_features, n_features)
    shrinkage : float in [0, 1]
    """
    d = scatter.shape[0]
    s = np.sqrt(np.diag(scatter) / count)
    s[s < 10 * np.finfo(np.float64).eps] = 1.0
    if not standardise:
        s[:] = 1.0
    emp = scatter / count / np.outer(s, s)
    if d == 1:
        return emp * np.outer(s, s), 0.0
    mu = np.trace(emp) / d
    inv_s2 = 1.0 / s**2
    beta_ = inv_s2 @ fourth @ inv_s2
    delta_ = np.sum(emp**2)
    beta = (beta_ / count - delta_) / (d * count)
    delta = (delta_ - 2.0 * mu * np.trace(emp) + d * mu**2) / d
    beta = min(beta, delta)
    shrinkage = 0.0 if beta == 0 else beta / delta
    shrunk = (1.0 - shrinkage) * emp
    shrunk.flat[:: d + 1] += shrinkage * mu
    return shrunk * np.outer(s, s), float(shrinkage)


def covariance_estimate(estimator):
    """What a scikit-learn covariance estimator computes, in terms of mergeable statistics.

    Parameters
    ----------
    estimator : object or None
        ``None``, or an instance of scikit-learn's ``EmpiricalCovariance``,
        ``ShrunkCovariance`` or ``LedoitWolf`` (by class name, so scikit-learn
        is not imported), with ``assume_centered=False``.

    Returns
    -------
    None, float or "ledoit-wolf"
        ``None``: the empirical covariance; a float: linear shrinkage
        towards ``tr(Sigma)/d I`` with that intensity; ``"ledoit-wolf"``:
        Ledoit-Wolf shrinkage of the features as they are.

    Raises
    ------
    ValueError
        For an estimator that does not follow from counts, means and
        scatter matrices (``OAS``, ``MinCovDet``, ``GraphicalLasso``, ...),
        or one with ``assume_centered=True``.
    """
    if estimator is None:
        return None
    kind = type(estimator).__name__
    supported = ("EmpiricalCovariance", "ShrunkCovariance", "LedoitWolf")
    if kind not in supported or getattr(estimator, "assume_centered", False):
        raise ValueError(
            f"covariance_estimator={kind} is not supported: the covariance must follow "
            f"from mergeable statistics, which {', '.join(supported)} (with "
            "assume_centered=False) do; use shrinkage for a fixed or Ledoit-Wolf intensity"
        )
    if kind == "ShrunkCovariance":
        return float(estimator.shrinkage)
    return "ledoit-wolf" if kind == "LedoitWolf" else None
