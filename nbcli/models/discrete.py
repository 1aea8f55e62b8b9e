"""Naive Bayes for counts (multinomial) and for binary features (Bernoulli)."""

from __future__ import annotations

import warnings
from typing import Any, ClassVar

import numpy as np

from nbcli.models import _sparse
from nbcli.models._base import BayesClassifier
from nbcli.models._blocks import _BLOCK_ELEMENTS, affine_scores
from nbcli.models._indicative import COUNT_DEFINITION, PRESENCE_DEFINITION, log_probability_ratios
from nbcli.models._missing import all_finite, first_negative, zero_missing
from nbcli.models._sklearn_api import NaiveBayesAPI
from nbcli.models._stats import ClassCounts, _Stats
from nbcli.models._table_stats import ObservedCounts
from nbcli.models._validation import DataValueError, check_priors
from nbcli.models.hyperparameters import (
    Hyperparameter,
    alpha,
    fit_prior,
    force_alpha,
    missing,
    priors,
)

# Below this, a Lidstone alpha would let an unseen feature drive a log
# probability to -inf; scikit-learn uses the same floor.
ALPHA_FLOOR = 1e-10


def _alpha(alpha, force: bool = False) -> float:
    """The smoothing applied: ``alpha`` (valid, see its spec), raised to the floor
    unless ``force`` (scikit-learn's ``force_alpha``)."""
    alpha = float(alpha)
    return alpha if force or alpha >= ALPHA_FLOOR else ALPHA_FLOOR


def smoothing(alpha, force: bool, n_features: int | None) -> float | np.ndarray:
    """The smoothing applied: one number, or one per feature, shape (n_features,).

    ``alpha`` (valid, see its spec) is a number or an array of shape
    ``(n_features,)``; values below 1e-10 are raised to 1e-10 unless ``force``
    (scikit-learn's ``force_alpha``). ``n_features`` None skips the shape check.

    Raises
    ------
    ValueError
        When an array ``alpha`` does not hold one value per feature.
    """
    a = np.asarray(alpha, dtype=np.float64)
    if a.ndim == 0:
        return _alpha(float(a), force)
    if n_features is not None and a.shape != (n_features,):
        raise ValueError(
            f"alpha has {a.size} values but there are {n_features} features (When alpha is "
            "an array, it should contains `n_features` elements)"
        )
    return a if force else np.maximum(a, ALPHA_FLOOR)


def _below_floor(alpha) -> bool:
    a = np.asarray(alpha, dtype=np.float64)
    return bool(np.all(a >= 0) and np.any(a < ALPHA_FLOOR))


def _warn_alpha_floor(model) -> None:
    """scikit-learn's warning when the floor replaces ``alpha``, from ``fit`` and
    ``partial_fit`` as there; ``fit_chunks`` (the command line's path, whose
    floor is documented) and rebuilding a stored model stay quiet."""
    if not model.force_alpha and _below_floor(model.alpha):
        warnings.warn(
            f"alpha too small will result in numeric errors, setting alpha = {ALPHA_FLOOR:.1e}. "
            "Use `force_alpha=True` to keep alpha unchanged.",
            UserWarning,
            stacklevel=3,
        )


class AlphaSmoothing:
    """``alpha`` and ``force_alpha`` as scikit-learn's discrete naive Bayes has them.

    For a model with ``alpha`` (a number, or one per feature) and
    ``force_alpha``: the warning of ``fit`` and ``partial_fit`` when the
    1e-10 floor replaces ``alpha``, and :meth:`_check_alpha`.
    """

    alpha: Any
    force_alpha: bool

    def _smoothing(self) -> float | np.ndarray:
        """The smoothing :meth:`finalize` applies (see :func:`smoothing`), without a warning."""
        return smoothing(self.alpha, self.force_alpha, getattr(self, "n_features_in_", None))

    def _check_alpha(self) -> float | np.ndarray:
        """The smoothing applied, warning where the floor replaces ``alpha``
        (scikit-learn's name and behaviour).

        Raises
        ------
        ValueError
            For a negative ``alpha``, or an array without one value per feature.
        """
        spec = next(h for h in type(self).hyperparameters if h.name == "alpha")  # type: ignore[attr-defined]
        spec.check(self.alpha)
        _warn_alpha_floor(self)
        return self._smoothing()

    def fit(self, X, y, sample_weight=None):
        _warn_alpha_floor(self)
        return super().fit(X, y, sample_weight)  # type: ignore[misc]

    def partial_fit(self, X, y, classes=None, sample_weight=None):
        _warn_alpha_floor(self)
        return super().partial_fit(X, y, classes, sample_weight)  # type: ignore[misc]


def alpha_text(alpha) -> str:
    """``alpha`` for messages: ``1e+300``, or the largest of one per feature."""
    a = np.asarray(alpha, dtype=np.float64)
    return f"{float(a):g}" if a.ndim == 0 else f"max {float(a.max()):g} (one per feature)"


def _check_representable(smoothed_counts, alpha):
    # The smoothed counts and their totals, not the log-probabilities: -inf
    # there is the log of a zero probability (alpha=0 with force_alpha).
    if not all(np.all(np.isfinite(a)) for a in smoothed_counts):
        raise ValueError(
            f"alpha={alpha_text(alpha)} is too large: the smoothed counts overflow float64; "
            "use a smaller alpha (1 is Laplace smoothing)"
        )


def _sparse_counts(X, y_idx, sample_weight, n_classes) -> ClassCounts:
    w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
    return ClassCounts(
        class_count=np.bincount(y_idx, weights=w, minlength=n_classes).astype(np.float64),
        feature_count=_sparse.class_sums(X, y_idx, w, n_classes),
    )


def _negative(v, row, col) -> DataValueError:
    return DataValueError(
        f"negative value {v:g} at row {row}, column {col}: multinomial naive "
        "Bayes needs non-negative counts (Negative values in data passed to MultinomialNB)",
        int(row),
        int(col),
        f"negative value {v:g}: the multinomial model needs non-negative counts",
    )


def _not_binary(v, row, col, fitted: bool) -> DataValueError:
    # Before the fit nothing was trained yet: the model takes binary features.
    why = (
        "the bernoulli model was trained on binary features; retrain with --binarize THRESHOLD"
        if fitted
        else "the bernoulli model takes binary features; set --binarize THRESHOLD"
    )
    return DataValueError(
        f"value {v:g} at row {row}, column {col} is not 0 or 1: Bernoulli "
        "naive Bayes needs binary features; set binarize to a threshold",
        int(row),
        int(col),
        f"value {v:g} is not 0 or 1: {why}",
    )


def count_scores(model, X) -> np.ndarray:
    """``feature_log_prob_ @ x + _b`` for every row of a block of counts, shape
    (n_classes, n_rows): the score of the multinomial and complement models.

    ``X`` may be sparse; under ``missing="ignore"`` a missing count adds
    nothing, as a count of 0 does.
    """
    if _sparse.is_sparse(X):
        out = _sparse.scores(model.feature_log_prob_, X)
        out += model._b
        return out
    out = affine_scores(X, model.feature_log_prob_, model._b[:, 0])
    if model.missing == "ignore" and np.isnan(out).any():
        out = affine_scores(zero_missing(X), model.feature_log_prob_, model._b[:, 0])
    return out


class _DiscreteNB(AlphaSmoothing, NaiveBayesAPI, BayesClassifier):
    """Shared prior handling for the count-based models."""

    statistics: ClassVar[tuple[type[_Stats], ...]] = (ClassCounts,)
    prior_param = "class_prior"
    fit_prior: bool
    class_prior: Any  # array-like of shape (n_classes,), or None
    missing: str
    feature_log_prob_: np.ndarray  # (n_classes, n_features), set by finalize

    def indicative_features(self) -> tuple[np.ndarray, None]:
        """Per class and feature (n_classes, n_features): the log ratio of the
        feature's probability under the class to its probability under the
        other classes mixed by prior (:attr:`indicative_definition`)."""
        return log_probability_ratios(self, self.feature_log_prob_), None

    def accumulate(self, X, y_idx, sample_weight, n_classes):
        if _sparse.is_sparse(X):
            return _sparse_counts(X, y_idx, sample_weight, n_classes)
        stats = ClassCounts.from_data(X, y_idx, sample_weight, n_classes)
        if self.missing == "ignore" and np.isnan(stats.feature_count).any():
            # A missing count contributes nothing: the same as a count of 0.
            stats = ClassCounts.from_data(zero_missing(X), y_idx, sample_weight, n_classes)
        return stats

    # -- sparse input (scipy.sparse): validated as CSR, never made dense ---------
    def _prepare_X(self, X):
        if _sparse.is_sparse(X):
            X = _sparse.check_sparse(X)
            self._check_values(X)
            return X
        return super()._prepare_X(X)

    def _check_predict_input(self, X):
        if _sparse.is_sparse(X):
            self._check_fitted()
            X = _sparse.check_sparse(X)
            self._check_n_features(X)
            return X
        return super()._check_predict_input(X)

    def _each_block(self, X, consume) -> None:
        if not _sparse.is_sparse(X):
            return super()._each_block(X, consume)
        # A sparse block costs its non-zeros, so blocks are sized by the
        # (dense) scores they produce, not by rows times features.
        step = max(64, _BLOCK_ELEMENTS // max(1, len(self.classes_)))
        for lo in range(0, X.shape[0], step):
            hi = min(X.shape[0], lo + step)
            consume(slice(lo, hi), self._score_block(X, lo, hi))

    def _class_log_prior(self):
        count = self.stats_.class_count
        if self.class_prior is not None:
            return np.log(check_priors(self.class_prior, len(self.classes_), "class_prior"))
        if self.fit_prior:
            with np.errstate(divide="ignore"):
                return np.log(count) - np.log(count.sum())
        return np.full(len(self.classes_), -np.log(len(self.classes_)))


class MultinomialNB(_DiscreteNB):
    """Multinomial naive Bayes for count features (word counts, pixel intensities).

    The likelihood of class ``k`` is multinomial with per-feature
    probabilities estimated with Lidstone smoothing (Laplace for
    ``alpha=1``; Manning, Raghavan and Schuetze, *Introduction to Information
    Retrieval*, 2008, section 13.2)::

        p_kj = (N_kj + alpha) / (N_k + alpha * n_features)

    where ``N_kj`` is the (weighted) sum of feature ``j`` over class ``k``. The
    joint log-likelihood, without the multinomial coefficient (the same for
    every class), is one matrix product: ``X @ log(p).T + log(prior)``.

    Parameters
    ----------
    alpha : float or array-like of shape (n_features,), default=1.0
        Additive (Lidstone) smoothing: one number, or one per feature
        (``N_kj + alpha_j`` over ``N_k + sum_j alpha_j``), as in scikit-learn.
    force_alpha : bool, default=True
        Use ``alpha`` as given; with False, values below 1e-10 are raised to
        1e-10 with a warning (``alpha=0`` would give log-probabilities of
        minus infinity for unseen features). The command line uses False.
    fit_prior : bool, default=True
        Learn class priors from class frequencies; when False, use a uniform
        prior.
    class_prior : array-like of shape (n_classes,), optional
        Fixed class priors (override ``fit_prior``); must sum to 1.
    missing : {"error", "ignore", "drop"}, default="error"
        ``"ignore"``: a missing count contributes nothing, which is the same
        as a count of 0 at fit (``N_kj`` and ``N_k`` leave it out) and in the
        product; ``"drop"``: rows with a NaN cell are skipped at fit (counted
        in ``n_dropped_``) and get NaN posteriors at predict.

    Attributes
    ----------
    classes_, class_count_ (n_classes,), feature_count_ (n_classes, n_features),
    feature_log_prob_ (n_classes, n_features), class_log_prior_ (n_classes,),
    stats_ : ClassCounts

    Raises
    ------
    ValueError
        In ``fit`` and scoring, when ``X`` has a negative value (the message
        gives its row and column).

    Examples
    --------
    >>> import numpy as np
    >>> from nbcli.models import MultinomialNB
    >>> X = np.array([[3, 0, 1], [4, 1, 0], [2, 0, 0], [0, 3, 2], [1, 4, 3], [0, 2, 4]])
    >>> model = MultinomialNB().fit(X, ["a", "a", "a", "b", "b", "b"])
    >>> model.predict([[3, 0, 0], [0, 3, 3]]).tolist()
    ['a', 'b']
    >>> model.predict_proba([[3, 0, 0]]).shape
    (1, 2)
    """

    name = "multinomial"

    def scoring_form(self):
        from nbcli.models._forms import AffineForm

        self._check_fitted()
        return AffineForm(self.feature_log_prob_, self._b[:, 0])

    sklearn_equivalent = "sklearn.naive_bayes.MultinomialNB"
    hyperparameters = (
        alpha(per_feature=True),
        force_alpha(),
        fit_prior(),
        priors("class_prior"),
        missing(),
    )
    feature_kinds = ("multinomial",)
    text_statistic = "multinomial"
    indicative_definition = COUNT_DEFINITION
    # Counts cannot be negative, and the model is not meant for the Gaussian
    # blobs scikit-learn scores every classifier on (its own tags).
    sklearn_tags = {"positive_only": True, "poor_score": True, "sparse": True}

    def __init__(
        self, *, alpha=1.0, force_alpha=True, fit_prior=True, class_prior=None, missing="error"
    ):
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.missing = missing

    def _check_values(self, X, row_offset=0):
        if _sparse.is_sparse(X):
            negative = X.data < 0
            if negative.any():
                i, j, v = _sparse.first_entry(X, negative)
                raise _negative(v, i + row_offset, j)
            return
        found = first_negative(X)
        if found is not None:
            i, j = found
            raise DataValueError(
                f"negative value {X[i, j]:g} at row {i + row_offset}, column {j}: multinomial naive "
                "Bayes needs non-negative counts (Negative values in data passed to MultinomialNB)",
                int(i + row_offset),
                int(j),
                f"negative value {X[i, j]:g}: the multinomial model needs non-negative counts",
            )

    def finalize(self):
        alpha = self._smoothing()
        st = self.stats_
        self.class_count_ = st.class_count.copy()
        self.feature_count_ = st.feature_count.copy()
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            smoothed = st.feature_count + alpha
            total = smoothed.sum(axis=1, keepdims=True)
            self.feature_log_prob_ = np.log(smoothed) - np.log(total)
        _check_representable((smoothed, total), alpha)
        self.class_log_prior_ = self._class_log_prior()
        self._b = self.class_log_prior_[:, None]

    def joint_log_likelihood_block(self, X):
        return count_scores(self, X)


class BernoulliNB(_DiscreteNB):
    """Bernoulli naive Bayes for binary features.

    Each feature is a coin with class-dependent probability, estimated with
    Lidstone smoothing (``alpha=1`` is the Beta(1, 1) posterior mean, the
    "+1/+2" of Laplace)::

        p_kj = (N_kj + alpha) / (N_k + 2 alpha)

    Because ``log p(x_j | k) = x_j log p_kj + (1 - x_j) log(1 - p_kj)``, the
    joint log-likelihood is affine in ``x`` and scoring is one matrix product
    (McCallum and Nigam, "A comparison of event models for naive Bayes text
    classification", AAAI-98 workshop, 1998)::

        log p(x, k) = x @ (log p_k - log(1 - p_k)) + sum_j log(1 - p_kj) + log prior_k

    Parameters
    ----------
    alpha : float or array-like of shape (n_features,), default=1.0
        Additive (Lidstone) smoothing: one number, or one per feature,
        ``p_kj = (N_kj + alpha_j) / (N_k + 2 alpha_j)`` (scikit-learn 1.9 adds
        such an array to the class counts instead, which fails to broadcast).
    force_alpha : bool, default=True
        As for :class:`MultinomialNB`.
    binarize : float or None, default=0.0
        Threshold: values greater than it become 1, others 0, as in
        scikit-learn. ``None`` means the input is already binary, and any
        value other than 0 or 1 is an error: the command line's default,
        which binarises only when asked to.
    fit_prior : bool, default=True
    class_prior : array-like of shape (n_classes,), optional
    missing : {"error", "ignore", "drop"}, default="error"
        ``"ignore"``: a NaN cell is left out of its feature's counts at fit,
        so ``p_kj = (N_kj + alpha) / (n_kj + 2 alpha)`` with ``n_kj`` the
        weight of the class-``k`` rows where feature ``j`` is observed, and
        out of the product at predict (exact marginalisation under
        missing-at-random); ``"drop"``: rows with a NaN cell are skipped at
        fit and get NaN posteriors at predict.

    Attributes
    ----------
    classes_, class_count_, feature_count_, feature_log_prob_,
    class_log_prior_ : as for :class:`MultinomialNB`.
    stats_ : ClassCounts, or ObservedCounts with ``missing="ignore"``

    Raises
    ------
    ValueError
        With ``binarize=None``, when ``X`` has a value other than 0 or 1.

    Examples
    --------
    >>> import numpy as np
    >>> from nbcli.models import BernoulliNB
    >>> X = np.array([[3, 0, 1], [4, 1, 0], [2, 0, 0], [0, 3, 2], [1, 4, 3], [0, 2, 4]])
    >>> model = BernoulliNB(binarize=1.0).fit(X, ["a", "a", "a", "b", "b", "b"])
    >>> model.predict([[3, 0, 0], [0, 3, 3]]).tolist()
    ['a', 'b']
    >>> model.predict_proba([[3, 0, 0]]).shape
    (1, 2)
    """

    name = "bernoulli"

    def scoring_form(self):
        from nbcli.models._forms import AffineForm

        self._check_fitted()
        # A missing cell's factor, log(1 - p) in the intercept, is taken back out.
        taken_out = -self._neg if self.missing == "ignore" else None
        return AffineForm(self._w, self._b[:, 0], threshold=self.binarize, missing_coef=taken_out)

    sklearn_equivalent = "sklearn.naive_bayes.BernoulliNB"
    feature_kinds = ("bernoulli",)
    text_statistic = "bernoulli"
    indicative_definition = PRESENCE_DEFINITION
    hyperparameters = (
        alpha(per_feature=True),
        force_alpha(),
        Hyperparameter(
            "binarize",
            "float",
            0.0,
            "values above this become 1, others 0",
            allow_none=True,
            flag="--binarize",
            # The command line never binarises unless asked to, whatever
            # the Python default.
            cli_default=None,
            default_text="none: input must be 0/1",
            shapes_statistics=True,
        ),
        fit_prior(),
        priors("class_prior"),
        missing(),
    )
    statistics = (ClassCounts, ObservedCounts)
    sklearn_tags = {"poor_score": True, "sparse": True}

    def __init__(
        self,
        *,
        alpha=1.0,
        force_alpha=True,
        binarize=0.0,
        fit_prior=True,
        class_prior=None,
        missing="error",
    ):
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.binarize = binarize
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.missing = missing

    def _check_values(self, X, row_offset=0):
        if self.binarize is None and _sparse.is_sparse(X):
            bad_data = (X.data != 0) & (X.data != 1)
            if bad_data.any():
                i, j, v = _sparse.first_entry(X, bad_data)
                raise _not_binary(v, i + row_offset, j, hasattr(self, "stats_"))
            return
        if self.binarize is None:
            bad = (X != 0) & (X != 1)
            if bad.any() and self.missing != "error":
                bad &= ~np.isnan(X)
            if bad.any():
                i, j = np.argwhere(bad)[0]
                raise _not_binary(X[i, j], i + row_offset, j, hasattr(self, "stats_"))

    @property
    def _scan_for_nonfinite(self):
        return self.binarize is not None

    def _binary(self, X):
        if self.binarize is None:
            return X
        if _sparse.is_sparse(X):
            return _sparse.binarize(X, self.binarize)
        binary = (X > self.binarize).astype(np.float64)
        if self.missing != "error" and not all_finite(X):
            binary[np.isnan(X)] = np.nan  # missing stays missing
        return binary

    def accumulate(self, X, y_idx, sample_weight, n_classes):
        if _sparse.is_sparse(X):
            return super().accumulate(self._binary(X), y_idx, sample_weight, n_classes)
        if self.missing == "ignore":
            return ObservedCounts.from_data(self._binary(X), y_idx, sample_weight, n_classes)
        return ClassCounts.from_data(self._binary(X), y_idx, sample_weight, n_classes)

    def finalize(self):
        alpha = self._smoothing()
        st = self.stats_
        self.class_count_ = st.class_count.copy()
        self.feature_count_ = st.feature_count.copy()
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            smoothed_fc = st.feature_count + alpha
            if isinstance(st, ObservedCounts):
                smoothed_cc = st.observed_count + 2.0 * alpha
            else:
                # (n_classes, 1), or (n_classes, n_features) with one alpha per feature.
                smoothed_cc = st.class_count[:, None] + 2.0 * alpha
            self.feature_log_prob_ = np.log(smoothed_fc) - np.log(smoothed_cc)
            # log(1 - p) from the counts directly: accurate even when p is near 1.
            neg = np.log(smoothed_cc - smoothed_fc) - np.log(smoothed_cc)
        _check_representable((smoothed_fc, smoothed_cc), alpha)
        self.class_log_prior_ = self._class_log_prior()
        self._w = self.feature_log_prob_ - neg
        self._neg = neg
        self._b = (self.class_log_prior_ + neg.sum(axis=1))[:, None]

    def joint_log_likelihood_block(self, X):
        if self.missing == "error" and not _sparse.is_sparse(X):
            # Binarised block by block, into a buffer the product reads from cache.
            return affine_scores(X, self._w, self._b[:, 0], threshold=self.binarize)
        B = self._binary(X)
        if _sparse.is_sparse(B):
            out = _sparse.scores(self._w, B)
            out += self._b
            return out
        out = self._w @ B.T
        if self.missing == "ignore" and np.isnan(out).any():
            # A missing cell's factor, log(1 - p) in the constant, is taken back out.
            seen = ~np.isnan(B)
            out = self._w @ np.where(seen, B, 0.0).T - self._neg @ (~seen).T.astype(np.float64)
        out += self._b
        return out
