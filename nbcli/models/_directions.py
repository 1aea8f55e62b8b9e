"""LDA's discriminant directions (Fisher's), as scikit-learn's solvers define them."""

from __future__ import annotations

import numpy as np


def discriminant_directions(
    solver: str,
    count: np.ndarray,
    priors: np.ndarray,
    about_ref: np.ndarray,
    whitened: np.ndarray,
    scalings: np.ndarray,
    *,
    shrinkage=None,
    tol: float = 1e-4,
) -> tuple[np.ndarray, np.ndarray]:
    """The directions that maximise between- against within-class variance.

    Parameters
    ----------
    solver : {"svd", "eigen"}
        ``"svd"``: the right singular vectors of the prior-weighted class
        means in whitened coordinates, those whose singular value exceeds
        ``tol`` times the largest (scikit-learn's ``_solve_svd``, step 3);
        ``"eigen"``: every generalised eigenvector of ``Sb v = lambda Sw v``
        with ``Sb`` the between-class scatter weighted by the class
        frequencies (scikit-learn's ``_solve_eigen``), in decreasing order
        of ``lambda``, solved in whitened coordinates so that directions the
        covariance leaves out stay out.
    count : ndarray of shape (n_classes,)
        Weighted class counts.
    priors : ndarray of shape (n_classes,)
    about_ref : ndarray of shape (n_classes, n_features)
        Class means about a reference point.
    whitened : ndarray of shape (n_classes, r)
        Class means about the prior-weighted mean, times ``scalings``.
    scalings : ndarray of shape (n_features, r)
        Whitening of the within-class covariance ``Sw``:
        ``scalings' Sw scalings = I`` on the ``r`` directions kept.
    shrinkage : None, "auto" or float
        A float shrinks ``Sb`` as scikit-learn's shrinkage of the total and
        within scatters does (their difference, shrinkage being linear);
        ``"auto"`` leaves ``Sb`` unshrunk.
    tol : float

    Returns
    -------
    directions : ndarray of shape (n_features, n_directions)
        Columns normalised so that ``directions' Sw directions = I``; each
        is determined up to its sign.
    ratio : ndarray of shape (n_directions,)
        Share of the between-class variance along each direction.
    """
    K, r = whitened.shape
    d = about_ref.shape[1]
    total = count.sum()
    if solver == "svd":
        fac = 1.0 if K == 1 else 1.0 / (K - 1)
        between = np.sqrt(total * priors * fac)[:, None] * whitened
        _, S, Vt = np.linalg.svd(between, full_matrices=False)
        if not S.size or S[0] <= 0:
            return scalings[:, :0], np.zeros(0)
        rank = int(np.sum(S > tol * S[0]))
        return scalings @ Vt.T[:, :rank], S**2 / np.sum(S**2)
    weight = count / total
    centred = about_ref - weight @ about_ref  # (K, d)
    sb = (centred.T * weight) @ centred
    if shrinkage is not None and shrinkage != "auto" and shrinkage > 0:
        a = float(shrinkage)
        trace = np.trace(sb)
        sb = (1.0 - a) * sb
        sb.flat[:: d + 1] += a * trace / d
    evals, evecs = np.linalg.eigh(scalings.T @ sb @ scalings)
    order = np.argsort(evals)[::-1]
    evals = evals[order]
    total_between = np.sum(evals)
    ratio = evals / total_between if total_between > 0 else np.zeros_like(evals)
    return scalings @ evecs[:, order], ratio
