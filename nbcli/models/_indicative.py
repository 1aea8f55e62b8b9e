"""Which features point to which class: the scores ``nbcli inspect`` ranks.

For each class ``k`` a feature's score compares its distribution under
``k`` with its distribution under the other classes taken together, their
distributions mixed by their priors. A model class declares whether it has
such scores (``indicative_definition``) and computes them in
``indicative_features()`` with one of the functions here. NumPy only.
"""

from __future__ import annotations

import numpy as np

COUNT_DEFINITION = (
    "log p(feature j | class) - log p(feature j | other classes) (a word, for a text column), "
    "the other classes' feature probabilities mixed by their priors (nats)"
)
PRESENCE_DEFINITION = (
    "log P(feature j present | class) - log P(feature j present | other classes), "
    "the other classes mixed by their priors (nats)"
)
TEXT_WORD_DEFINITION = (
    "log p(word | class) - log p(word | other classes) of a text column's word, the "
    "other classes' word probabilities mixed by their priors (nats); the table's "
    "columns are shown by what was learnt of them instead"
)
GAUSSIAN_DEFINITION = (
    "expected log-likelihood ratio E[log p(x_j | class) - log p(x_j | other classes)] "
    "under the class: the KL divergence of the class's normal density of feature j from "
    "the normal with the other classes' prior-weighted mean and variance (nats); "
    "'higher' says whether the class mean is above the others'"
)


def class_priors(model) -> np.ndarray:
    """The prior of each class the model scores with, shape (n_classes,)."""
    for attr in ("priors_", "class_prior_"):
        if hasattr(model, attr):
            return np.asarray(getattr(model, attr), dtype=float)
    if hasattr(model, "class_log_prior_"):
        return np.exp(model.class_log_prior_)
    count = class_counts(model)
    return count / count.sum()


def class_counts(model) -> np.ndarray:
    """Weighted training rows of each class, shape (n_classes,)."""
    if hasattr(model, "class_count_"):
        return np.asarray(model.class_count_, dtype=float)
    return np.asarray(model.stats_.count, dtype=float)


def _rest(values: np.ndarray, priors: np.ndarray, k: int) -> np.ndarray:
    """Prior-weighted mean over the classes other than ``k`` of ``values`` (K, d)."""
    w = priors.copy()
    w[k] = 0.0
    if w.sum() <= 0:
        w = np.ones_like(w)
        w[k] = 0.0
    return (w / w.sum()) @ values


def log_probability_ratios(model, log_prob: np.ndarray) -> np.ndarray:
    """``log_prob[k] - log(rest of log_prob mixed by prior)``, shape (n_classes, n_features).

    ``log_prob`` (n_classes, n_features) holds a per-class log probability
    of each feature (a word's multinomial probability, a feature's
    probability of being present).
    """
    priors = class_priors(model)
    theta = np.exp(log_prob)
    out = np.empty_like(theta)
    with np.errstate(divide="ignore"):
        for k in range(theta.shape[0]):
            out[k] = log_prob[k] - np.log(_rest(theta, priors, k))
    return out


def gaussian_divergences(model, mean: np.ndarray, var: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per class and feature, the KL divergence (nats) of the class's normal
    from the moment-matched normal of the other classes' prior-weighted
    mixture, and whether the class mean lies above the others'.

    ``mean`` and ``var`` have shape (n_classes, n_features); both results too.
    """
    priors = class_priors(model)
    out = np.empty_like(mean)
    higher = np.empty(mean.shape, dtype=bool)
    for k in range(mean.shape[0]):
        m_rest = _rest(mean, priors, k)
        v_rest = _rest(var + mean**2, priors, k) - m_rest**2
        v_rest = np.maximum(v_rest, np.finfo(float).tiny)
        out[k] = 0.5 * (np.log(v_rest / var[k]) + (var[k] + (mean[k] - m_rest) ** 2) / v_rest - 1.0)
        higher[k] = mean[k] > m_rest
    return out, higher


CATEGORY_DEFINITION = (
    "KL divergence sum_v P(x_j = v | class) log[P(x_j = v | class) / P(x_j = v | other classes)] "
    "of the class's distribution of categories of feature j from the other classes' "
    "distributions mixed by their priors (nats)"
)


def category_divergences(model, log_probs) -> np.ndarray:
    """Per class and feature, :data:`CATEGORY_DEFINITION`, shape (n_classes, n_features).

    ``log_probs`` is one array of shape (n_classes, K_j) per feature: the
    log probability of each category under each class.
    """
    priors = class_priors(model)
    out = np.empty((len(priors), len(log_probs)))
    for j, log_p in enumerate(log_probs):
        p = np.exp(log_p)
        for k in range(p.shape[0]):
            rest = _rest(p, priors, k)
            with np.errstate(divide="ignore", invalid="ignore"):
                terms = np.where(p[k] > 0, p[k] * (log_p[k] - np.log(rest)), 0.0)
            out[k, j] = terms.sum()
    return out
