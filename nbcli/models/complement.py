"""Complement naive Bayes for counts (Rennie et al. 2003)."""

from __future__ import annotations

import numpy as np

from nbcli.models import _sparse
from nbcli.models._base import BayesClassifier, ColumnUndeterminedError
from nbcli.models._missing import first_negative, zero_missing
from nbcli.models._sklearn_api import NaiveBayesAPI
from nbcli.models._stats import ClassCounts
from nbcli.models._validation import DataValueError
from nbcli.models.categorical import class_log_prior
from nbcli.models.discrete import AlphaSmoothing, _sparse_counts, alpha_text, count_scores
from nbcli.models.hyperparameters import (
    Hyperparameter,
    alpha,
    fit_prior,
    force_alpha,
    missing,
    priors,
)


class ComplementNB(AlphaSmoothing, NaiveBayesAPI, BayesClassifier):
    """Complement naive Bayes: each class scored by the counts of all other classes.

    Rennie, Shih, Teevan and Karger, "Tackling the poor assumptions of naive
    Bayes text classifiers", ICML 2003, section 3.2. The per-feature
    probabilities are estimated from the *complement* of each class, which
    evens out the amount of training data behind each class::

        theta~_cj = (alpha + sum_{k != c} N_kj) / (alpha * n + sum_{k != c} sum_i N_ki)
        w_cj = log theta~_cj

    (the denominator's ``alpha * n`` written here as the sum of the smoothed
    numerators over features, which it equals). A document matches a class
    poorly when it matches that class's complement well, so the score is
    ``-x @ w_c``. With ``norm=True`` the weights are normalised as in
    Rennie et al.'s weight normalisation, ``w_cj / sum_i w_ci`` (both
    negative, so the score is ``x @ (w_c / sum_i w_ci)``).

    The joint log-likelihood follows scikit-learn's ``ComplementNB`` exactly
    (``sklearn/naive_bayes.py``): it is the score above, *without* the class
    prior, except when the training data have a single class, where the
    (then zero) log prior is added. ``predict_proba`` is a softmax of these
    scores, as there; it equals scikit-learn's to 1e-8.

    Parameters
    ----------
    alpha : float or array-like of shape (n_features,), default=1.0
        Additive (Lidstone) smoothing, one number or one per feature.
    force_alpha : bool, default=True
        Use ``alpha`` as given; with False, values below 1e-10 are raised to
        1e-10 with a warning, as in scikit-learn. The command line uses False.
    norm : bool, default=False
        Normalise the weights of each class (Rennie et al., section 3.3).
    fit_prior : bool, default=True
        Learn class priors from class frequencies (``class_log_prior_``);
        they enter the scores only with a single class, as in scikit-learn.
    class_prior : array-like of shape (n_classes,), optional
        Fixed class priors, overriding ``fit_prior``; must sum to 1.
    missing : {"error", "ignore", "drop"}, default="error"
        ``"ignore"``: a missing count contributes nothing, which is the same
        as a count of 0 at fit and in the product; ``"drop"``: rows with a
        NaN cell are skipped at fit and get NaN posteriors at predict.

    Notes
    -----
    ``X`` may be a ``scipy.sparse`` matrix or array (a document-term
    matrix), validated as CSR and never made dense (:mod:`nbcli.models._sparse`).

    Conventions (as scikit-learn's): the weights are those of Rennie et
    al.'s equations 6 and 8 (complement counts smoothed with ``alpha`` per
    feature, log, optionally normalised), without their TF-IDF and length
    normalisation of the documents, which belong to the input; the score of
    a class is ``x @ feature_log_prob_[c]``, the negated complement fit.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    class_count_ : ndarray of shape (n_classes,)
    feature_count_ : ndarray of shape (n_classes, n_features)
        ``N_cj``, the weighted sum of feature ``j`` over class ``c``.
    feature_all_ : ndarray of shape (n_features,)
        ``sum_c N_cj``.
    feature_log_prob_ : ndarray of shape (n_classes, n_features)
        The scoring weights: ``-w_c``, or ``w_c / sum_i w_ci`` with ``norm``.
    class_log_prior_ : ndarray of shape (n_classes,)
    stats_ : ClassCounts

    Raises
    ------
    ValueError
        When ``X`` has a negative value, NaN or infinity (the message gives
        its row and column).

    Examples
    --------
    >>> import numpy as np
    >>> from nbcli.models import ComplementNB
    >>> X = np.array([[3, 0, 1], [4, 1, 0], [2, 0, 0], [0, 3, 2], [1, 4, 3], [0, 2, 4]])
    >>> model = ComplementNB().fit(X, ["a", "a", "a", "b", "b", "b"])
    >>> model.predict([[3, 0, 0], [0, 3, 3]]).tolist()
    ['a', 'b']
    >>> model.predict_proba([[3, 0, 0]]).shape
    (1, 2)
    """

    name = "complement"

    def scoring_form(self):
        from nbcli.models._forms import AffineForm

        self._check_fitted()
        return AffineForm(self.feature_log_prob_, self._b[:, 0])

    sklearn_equivalent = "sklearn.naive_bayes.ComplementNB"
    feature_kinds = ("multinomial",)
    text_statistic = "complement"
    hyperparameters = (
        alpha(per_feature=True),
        force_alpha(),
        Hyperparameter(
            "norm",
            "bool",
            False,
            "normalise each class's weights (Rennie et al. 2003, section 3.3)",
            flag="--norm/--no-norm",
            default_text="no",
        ),
        fit_prior(),
        priors("class_prior"),
        missing(),
    )
    statistics = (ClassCounts,)
    prior_param = "class_prior"
    # As scikit-learn's discrete naive Bayes: not meant for its Gaussian test blobs.
    sklearn_tags = {"positive_only": True, "poor_score": True, "sparse": True}

    def __init__(
        self,
        *,
        alpha=1.0,
        force_alpha=True,
        norm=False,
        fit_prior=True,
        class_prior=None,
        missing="error",
    ):
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.norm = norm
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.missing = missing

    def _check_values(self, X, row_offset=0):
        if _sparse.is_sparse(X):
            entry = _sparse.first_negative_entry(X)
            found = None if entry is None else entry[:2]
            value = None if entry is None else entry[2]
        else:
            found = first_negative(X)
            value = None if found is None else X[found]
        if found is not None:
            i, j = int(found[0]), int(found[1])
            raise DataValueError(
                f"negative value {value:g} at row {i + row_offset}, column {j}: complement "
                "naive Bayes needs non-negative counts (Negative values in data passed to "
                "ComplementNB (input X))",
                i + row_offset,
                j,
                f"negative value {value:g}: the complement model needs non-negative counts",
            )

    # -- sparse input (scipy.sparse): validated as CSR, never made dense ---------
    def _prepare_X(self, X):
        if _sparse.is_sparse(X):
            return _sparse.prepare_fit(self, X)
        return super()._prepare_X(X)

    def _check_predict_input(self, X):
        if _sparse.is_sparse(X):
            return _sparse.prepare_predict(self, X)
        return super()._check_predict_input(X)

    def _each_block(self, X, consume) -> None:
        if _sparse.is_sparse(X):
            return _sparse.each_block(self, X, consume)
        return super()._each_block(X, consume)

    def accumulate(self, X, y_idx, sample_weight, n_classes):
        if _sparse.is_sparse(X):
            return _sparse_counts(X, y_idx, sample_weight, n_classes)
        stats = ClassCounts.from_data(X, y_idx, sample_weight, n_classes)
        if self.missing == "ignore" and np.isnan(stats.feature_count).any():
            stats = ClassCounts.from_data(zero_missing(X), y_idx, sample_weight, n_classes)
        return stats

    def finalize(self):
        alpha = self._smoothing()
        st = self.stats_
        if self.norm and self.n_features_in_ == 1:
            # The one weight is log 1 = 0, and normalising it divides 0 by 0.
            raise ValueError(
                "norm=True needs at least two features (n_features = 1): the weights of "
                "one feature cannot be normalised"
            )
        self.class_count_ = st.class_count.copy()
        self.feature_count_ = st.feature_count.copy()
        self.feature_all_ = st.feature_count.sum(axis=0)
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            comp = self.feature_all_ + alpha - st.feature_count
            logged = np.log(comp / comp.sum(axis=1, keepdims=True))
            if self.norm:
                weights = logged / logged.sum(axis=1, keepdims=True)
            else:
                weights = -logged
        if not np.all(np.isfinite(weights)):
            if np.any(np.asarray(alpha) == 0) and np.any(comp == 0):
                raise ValueError(
                    "alpha=0 leaves a feature with no count in the complement of a class, "
                    "whose weight is then log 0; use alpha > 0 (or force_alpha=False, which "
                    "raises it to 1e-10)"
                )
            # Counts so large that alpha and the other classes' counts are lost
            # in rounding (a complement of 0), or that sum past float64: the
            # counts are at fault, not alpha. The largest column is named.
            lost = ~np.isfinite(comp) | (comp <= 0)
            if np.any(lost) or not np.all(np.isfinite(self.feature_all_)):
                sizes = np.where(np.isfinite(self.feature_all_), self.feature_all_, np.inf)
                j = int(np.argmax(sizes))
                raise ColumnUndeterminedError(
                    "the counts of ",
                    j,
                    f" (up to {float(np.max(st.feature_count[:, j])):.3g}) are so large that "
                    "alpha and the other counts vanish beside them in float64, so the "
                    "complement weights are not finite; rescale that column's counts or "
                    "leave the column out",
                    names=getattr(self, "feature_names_in_", None),
                )
            raise ValueError(
                f"alpha={alpha_text(alpha)} is too large or the counts too large: the complement "
                "weights are not finite in float64; use a smaller alpha (1 is Laplace smoothing)"
            )
        self.feature_log_prob_ = weights
        self.class_log_prior_ = class_log_prior(st.class_count, self.fit_prior, self.class_prior)
        # scikit-learn adds the prior only for a single class (it is log 1 = 0 then).
        single = len(self.classes_) == 1
        self._b = (self.class_log_prior_ if single else np.zeros(len(self.classes_)))[:, None]

    def joint_log_likelihood_block(self, X):
        return count_scores(self, X)
