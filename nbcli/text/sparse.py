"""Count models on sparse document-term matrices, until the estimators take them directly.

The statistics of the count models are ``onehot(y) @ X`` and their scores
``X @ W.T + b``; both are sparse-times-dense products, so a CSR matrix never
needs to be made dense. These helpers compute them for
:class:`nbcli.models.MultinomialNB` and :class:`nbcli.models.BernoulliNB`
(with ``binarize=0``, as on counts) from the fitted estimators' parameters.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from nbcli.models import BernoulliNB, ClassCounts, MultinomialNB
from nbcli.models._logspace import log_normalise


def class_counts_from_csr(X, y_idx, n_classes: int, sample_weight=None, *, binary=False):
    """Per-class document and feature sums of a sparse ``X`` (n_docs, n_features).

    ``binary=True`` counts documents holding each feature (``X > 0``), the
    statistics of ``BernoulliNB(binarize=0)``. Returns :class:`ClassCounts`.
    """
    X = sp.csr_array(X)
    if binary:
        X = (X > 0).astype(np.float64)
    n = X.shape[0]
    w = np.ones(n) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    onehot = sp.csr_array((w, (np.asarray(y_idx), np.arange(n))), shape=(n_classes, n))
    feature_count = np.asarray((onehot @ X).toarray(), dtype=np.float64)
    return ClassCounts(
        class_count=np.bincount(y_idx, weights=w, minlength=n_classes), feature_count=feature_count
    )


def joint_log_likelihood_sparse(model, X) -> np.ndarray:
    """``log p(x, y=k)`` of a fitted multinomial or Bernoulli model on sparse ``X``.

    Parameters
    ----------
    model : MultinomialNB or BernoulliNB
        Fitted; a Bernoulli model must have ``binarize`` set (0 for counts).
    X : scipy.sparse matrix or array of shape (n_samples, n_features)

    Returns
    -------
    ndarray of shape (n_samples, n_classes)
    """
    X = sp.csr_array(X)
    if X.shape[1] != model.n_features_in_:
        raise ValueError(
            f"X has {X.shape[1]} features, but {type(model).__name__} is expecting "
            f"{model.n_features_in_} features as input"
        )
    if X.nnz and X.data.min() < 0:
        raise ValueError("negative counts: the count models need non-negative values")
    if isinstance(model, MultinomialNB):
        W = model.feature_log_prob_
    elif isinstance(model, BernoulliNB):
        if model.binarize is None:
            raise ValueError(
                "sparse counts need a Bernoulli model with binarize set (0 for counts)"
            )
        X = (X > model.binarize).astype(np.float64)
        W = model._w
    else:
        raise TypeError(f"{type(model).__name__} has no sparse scoring here")
    return np.asarray(X @ W.T) + model._b.T


def predict_proba_sparse(model, X) -> np.ndarray:
    """Posterior ``p(y=k | x)`` of :func:`joint_log_likelihood_sparse`, shape (n_samples, n_classes)."""
    return np.exp(log_normalise(joint_log_likelihood_sparse(model, X)))
