"""What a fitted model's joint log-likelihood is, as a formula over its
arrays: the form a model declares (:meth:`BayesClassifier.scoring_form`) so
that its scoring can be written out in another language (ONNX graphs,
:mod:`nbcli.export`) without knowing the model by name.

Each form gives ``jll``, shape (n_rows, n_classes), of rows ``x`` of
float64 features, where a missing cell is NaN. The posteriors are the
softmax of ``jll`` over the classes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = [
    "AffineForm",
    "CategoryForm",
    "CompositeForm",
    "DiagonalGaussianForm",
    "IntervalForm",
    "KernelDensityForm",
    "NoForm",
    "QuadraticForm",
]


@dataclass(frozen=True)
class AffineForm:
    """``jll = f(x) @ coef.T + missing_coef-term + intercept``.

    ``f(x)`` is ``x`` (``x - centre`` where ``centre`` is given, ``1[x >
    threshold]`` where ``threshold`` is given), with a missing cell's
    entry 0; where ``missing_coef`` is given, ``isnan(x) @ missing_coef.T``
    is added.

    Attributes
    ----------
    coef : ndarray of shape (n_classes, n_features)
    intercept : ndarray of shape (n_classes,)
    threshold : float or None
    centre : ndarray of shape (n_features,) or None
    missing_coef : ndarray of shape (n_classes, n_features) or None
    """

    coef: np.ndarray
    intercept: np.ndarray
    threshold: float | None = None
    centre: np.ndarray | None = None
    missing_coef: np.ndarray | None = None


@dataclass(frozen=True)
class DiagonalGaussianForm:
    """``jll[k] = log_prior[k] + sum over present cells j of
    log_norm[k, j] - 0.5 * ((x_j - theta[k, j]) * inv_sd[k, j])**2``
    (a missing cell is left out of the sum; ``log_norm`` is
    ``-0.5 log(2 pi var)``).

    Attributes
    ----------
    theta, inv_sd, log_norm : ndarray of shape (n_classes, n_features)
    log_prior : ndarray of shape (n_classes,)
    """

    theta: np.ndarray
    inv_sd: np.ndarray
    log_norm: np.ndarray
    log_prior: np.ndarray


@dataclass(frozen=True)
class CategoryForm:
    """``jll = sum over columns j of log_prob[:, offset_j + x_j]`` for category
    codes ``x_j`` in ``0 .. n_categories[j] - 1``; a missing cell (NaN) or a
    code outside that range is left out (its term is 0).

    Attributes
    ----------
    log_prob : ndarray of shape (n_classes, sum(n_categories))
        The columns' tables, one after another.
    n_categories : ndarray of shape (n_features,), int
    """

    log_prob: np.ndarray
    n_categories: np.ndarray


@dataclass(frozen=True)
class CompositeForm:
    """``jll = log_prior + the sum of the parts' jll``, each part a form (with
    its own prior term 0) over some of the columns.

    Attributes
    ----------
    log_prior : ndarray of shape (n_classes,)
    parts : tuple of (ndarray of int, form)
        The columns of each part and its form.
    """

    log_prior: np.ndarray
    parts: tuple


@dataclass(frozen=True)
class QuadraticForm:
    """``jll[k] = const[k] - 0.5 * || whiten[k] @ (x - means[k]) ||**2``.

    Attributes
    ----------
    means : ndarray of shape (n_classes, n_features)
    whiten : ndarray of shape (n_classes, n_features, n_features)
        The inverse of each class's Cholesky factor of its covariance.
    const : ndarray of shape (n_classes,)
    """

    means: np.ndarray
    whiten: np.ndarray
    const: np.ndarray


@dataclass(frozen=True)
class IntervalForm:
    """``jll = sum over columns j of log_prob[:, offset_j + v_j(x_j)]`` with
    ``v_j(x)`` the number of column ``j``'s cut points below ``x`` (the
    interval ``cut_{v-1} < x <= cut_v``); a missing cell is left out.

    Attributes
    ----------
    cuts : ndarray of shape (n_features, max_cuts)
        Each column's sorted cut points, padded with ``+inf``.
    log_prob : ndarray of shape (n_classes, sum(n_intervals))
        The columns' interval tables, one after another.
    n_intervals : ndarray of shape (n_features,), int
    """

    cuts: np.ndarray
    log_prob: np.ndarray
    n_intervals: np.ndarray


@dataclass(frozen=True)
class KernelDensityForm:
    """``jll[k] = sum over present cells j of log sum_i exp(log_weight[j, k, i]
    - 0.5 ((x_j - centres[j, k, i]) / bandwidth[k, j])**2) - log bandwidth[k, j]
    - 0.5 log(2 pi)``: a Gaussian kernel density per class and column
    (:func:`nbcli.models._value_table.kernel_log_density`).

    Attributes
    ----------
    centres, log_weight : ndarray of shape (n_features, n_classes, max_centres)
        Each class's kernel centres and log weights, padded with centre 0
        and log weight ``-inf``.
    bandwidth : ndarray of shape (n_classes, n_features)
    """

    centres: np.ndarray
    log_weight: np.ndarray
    bandwidth: np.ndarray


@dataclass(frozen=True)
class NoForm:
    """A fitted model whose scoring has no exact form here, and why: a
    setting named in ``reason`` (one line, what to do instead)."""

    reason: str
