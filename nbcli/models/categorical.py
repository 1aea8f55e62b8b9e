"""Categorical naive Bayes over integer-coded features, with missing cells."""

from __future__ import annotations

import numpy as np

from nbcli.models._base import BayesClassifier
from nbcli.models._indicative import CATEGORY_DEFINITION, category_divergences
from nbcli.models._missing import all_finite
from nbcli.models._sklearn_api import NaiveBayesAPI
from nbcli.models._table_stats import CategoryCounts, category_offsets, grow_categories
from nbcli.models._validation import DataValueError, check_priors
from nbcli.models.discrete import AlphaSmoothing, alpha_text
from nbcli.models.hyperparameters import (
    alpha,
    fit_prior,
    force_alpha,
    min_categories,
    missing,
    priors,
    unseen,
)

# A code this large would need a count array of that many columns per class;
# a "category" with so many values is an identifier, not a category.
MAX_CODE = 1 << 24


def class_log_prior(class_count: np.ndarray, fit_prior: bool, class_prior) -> np.ndarray:
    """Log class priors as scikit-learn's discrete naive Bayes sets them.

    ``class_prior`` if given (validated: one non-negative value per class,
    summing to 1), else the classes' weighted frequencies when ``fit_prior``,
    else uniform. Shape (n_classes,).
    """
    k = class_count.shape[0]
    if class_prior is not None:
        with np.errstate(divide="ignore"):
            return np.log(check_priors(class_prior, k, "class_prior"))
    if fit_prior:
        with np.errstate(divide="ignore"):
            return np.log(class_count) - np.log(class_count.sum())
    return np.full(k, -np.log(k))


def feature_label(model, j: int) -> str:
    """``column 3`` or ``column 3 ('island')`` for messages."""
    names = getattr(model, "feature_names_in_", None)
    return f"column {j}" if names is None else f"column {j} ({names[j]!r})"


def value_text(v: float) -> str:
    """A cell value for messages: ``7`` for integral values, else ``2.5``."""
    return str(int(v)) if v == np.floor(v) and abs(v) < 1e15 else f"{v:.10g}"


def cell_error(model, row: int, j: int, reason: str) -> DataValueError:
    """The error for one refused cell: ``reason``, then its row and column ``j``."""
    return DataValueError(
        f"{reason}; found at row {row}, {feature_label(model, j)}", row, j, reason
    )


def refuse_cells(
    model, V: np.ndarray, bad: np.ndarray, columns, row_offset: int, what: str
) -> None:
    """Refuse the first cell of ``V`` where ``bad`` holds, as ``value 2.5 <what>``.

    ``columns`` are the indices in the table of ``V``'s columns.
    """
    if not bad.any():
        return
    i, jj = (int(v) for v in np.argwhere(bad)[0])
    raise cell_error(
        model, i + row_offset, int(columns[jj]), f"value {value_text(V[i, jj])} {what}"
    )


def check_codes(model, C: np.ndarray, columns: np.ndarray, row_offset: int = 0) -> None:
    """Refuse observed cells of categorical columns that are not integer codes.

    ``C`` holds the categorical columns of a block (NaN: missing, already
    allowed or refused), ``columns`` their indices in the table.
    """
    if C.size and all_finite(C):
        # Most blocks: no missing cell, and the extremes and one comparison
        # with the codes' floors tell that every cell is a code.
        if C.min() >= 0 and C.max() < MAX_CODE and np.array_equal(np.floor(C), C):
            return
    with np.errstate(invalid="ignore"):
        negative = C < 0
        bad = negative if negative.any() else (C != np.floor(C)) | (C >= MAX_CODE)
        bad &= ~np.isnan(C)
    if not bad.any():
        return
    i, jj = (int(v) for v in np.argwhere(bad)[0])
    j = int(columns[jj])
    reason = (
        f"value {value_text(C[i, jj])} is not a category code: categorical features take integer "
        f"codes 0, 1, 2, ... (below {MAX_CODE})"
    )
    if negative.any():
        reason += f" (Negative values in data passed to {type(model).__name__} (input X))"
    if C[i, jj] != np.floor(C[i, jj]) or negative.any():
        # A measurement, not a code: what to do instead.
        instead = (
            "give the column the type gaussian (--column NAME=gaussian)"
            if getattr(model, "name", None) == "mixed"
            else "use the mixed model, whose numbers are Gaussian features"
        )
        reason += f"; a column of measurements is not categorical: {instead}, or leave it out"
    raise cell_error(model, i + row_offset, j, reason)


def unseen_counts(C, n_categories) -> np.ndarray:
    """Cells per column of ``C`` (n_samples, n_columns) whose code is not below
    its column's ``n_categories``: categories unseen in training (NaN is not)."""
    with np.errstate(invalid="ignore"):
        return (C >= n_categories).sum(axis=0)


def check_known(model, C, columns, n_categories, row_offset: int = 0) -> None:
    """Refuse a code outside ``0..K_j - 1`` of its feature (a category unseen in training)."""
    with np.errstate(invalid="ignore"):
        bad = C >= n_categories
    if not bad.any():
        return
    i, jj = (int(v) for v in np.argwhere(bad)[0])
    j = int(columns[jj])
    k = int(n_categories[jj])
    reason = f"category {value_text(C[i, jj])} was not seen in training (the model knows codes 0..{k - 1})"
    raise DataValueError(
        f"unseen category {value_text(C[i, jj])} at row {i + row_offset}, {feature_label(model, j)}: "
        f"{reason}; set unseen='ignore' to leave it out of the product",
        i + row_offset,
        j,
        reason,
        remedy=("unseen", "ignore", "to leave it out of the product"),
    )


def check_min_categories(value, n_features: int) -> np.ndarray | None:
    """``min_categories`` (valid, see its spec) as an int array of shape (n_features,), or None.

    Raises
    ------
    ValueError
        When a list does not give one value per feature.
    """
    if value is None:
        return None
    arr = np.asarray(value, dtype=np.intp)
    if arr.ndim == 1 and arr.shape[0] != n_features:
        raise ValueError(
            f"min_categories has {arr.shape[0]} values but there are {n_features} features"
        )
    return np.broadcast_to(arr, (n_features,)).astype(np.intp)


def segment_sums(A: np.ndarray, n_categories: np.ndarray) -> np.ndarray:
    """Sum of each feature's block of columns of ``A`` (n_rows, sum K_j): (n_rows, n_features)."""
    n = np.asarray(n_categories, dtype=np.intp)
    out = np.zeros((A.shape[0], n.shape[0]))
    live = n > 0
    if live.any():
        # Empty blocks have zero width, so the next live start ends each sum.
        out[:, live] = np.add.reduceat(A, category_offsets(n)[live], axis=1)
    return out


def category_log_prob(counts, n_seen, alpha, min_categories=None):
    """Smoothed log-probabilities of every category, features side by side.

    ``log P(x_j = v | c) = log(N_cjv + alpha_j) - log(sum_u (N_cju + alpha_j))``,
    the denominator being ``N_cj + alpha_j K_j`` with ``K_j = max(n_seen_j,
    min_categories_j)``; ``alpha`` is one number or one per feature, shape
    (n_features,).

    Returns
    -------
    log_prob : ndarray of shape (n_classes, sum_j K_j + 1)
        The last column is zero: the term of a missing or ignored cell.
    counts : ndarray of shape (n_classes, sum_j K_j)
        ``counts`` grown to the final ``K_j``.
    n_categories : ndarray of shape (n_features,), int

    Raises
    ------
    ValueError
        When the smoothed counts overflow, or ``alpha = 0`` leaves a class
        with no observed value of a feature (0 / 0).
    """
    n_cat = np.asarray(n_seen, dtype=np.intp)
    if min_categories is not None:
        n_cat = np.maximum(n_cat, min_categories)
    counts = grow_categories(counts, n_seen, n_cat)
    a = np.asarray(alpha, dtype=np.float64)
    per_category = a if a.ndim == 0 else np.repeat(a, n_cat)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        smoothed = counts + per_category
        total = segment_sums(smoothed, n_cat)
        log_prob = np.log(smoothed) - np.repeat(np.log(total), n_cat, axis=1)
    if not (np.all(np.isfinite(smoothed)) and np.all(np.isfinite(total))):
        raise ValueError(
            f"alpha={alpha_text(alpha)} is too large: the smoothed counts overflow float64; "
            "use a smaller alpha (1 is Laplace smoothing)"
        )
    if np.isnan(log_prob).any():
        # -inf is the log of a zero probability (alpha = 0 kept as given).
        raise ValueError(
            "alpha=0 leaves a class with no observed value of a feature (0 / 0); use "
            "alpha > 0, or force_alpha=False, which raises it to 1e-10"
        )
    return np.hstack([log_prob, np.zeros((counts.shape[0], 1))]), counts, n_cat


def category_terms(log_prob, C, n_categories) -> np.ndarray:
    """Sum over features of ``log P(x_j | c)``, shape (n_classes, n_rows).

    Missing cells (NaN) and codes beyond ``K_j`` take the last, zero column
    of ``log_prob``: they are left out of the product.
    """
    n, c = C.shape
    # Row by row, each code picks a contiguous row of the transposed table
    # (its value in every class): gathering those beats gathering each
    # class's entries apart, and no code array of the whole block is made.
    table = np.ascontiguousarray(log_prob.T)  # (sum_j K_j + 1, n_classes)
    offsets = category_offsets(n_categories)
    last = table.shape[0] - 1
    out = np.zeros((n, table.shape[1]))
    picked = np.empty_like(out)
    for j in range(c):
        column = C[:, j]
        with np.errstate(invalid="ignore"):
            known = column < n_categories[j]  # False for NaN
        index = np.where(known, column, 0.0).astype(np.intp)
        index += offsets[j]
        if not known.all():
            index[~known] = last
        np.take(table, index, axis=0, out=picked)
        out += picked
    return out.T


class CategoricalNB(AlphaSmoothing, NaiveBayesAPI, BayesClassifier):
    """Categorical naive Bayes: each feature a categorical distribution per class.

    Features hold integer codes ``0..K_j - 1`` (for example from an ordinal
    encoding of text values). With Lidstone smoothing ``alpha`` (Laplace for
    1; Manning, Raghavan and Schuetze, *Introduction to Information
    Retrieval*, 2008, section 13.2)::

        P(x_j = v | c) = (N_cjv + alpha) / (N_cj + alpha * K_j)

        log p(x, c) = log pi_c + sum_{j observed} log P(x_j | c)

    where ``N_cjv`` is the weighted number of class-``c`` training rows whose
    feature ``j`` is ``v``, ``N_cj = sum_v N_cjv`` counts the class-``c`` rows
    where feature ``j`` is observed, and ``K_j`` is the largest code seen in
    training plus one, or ``min_categories`` if larger, as in scikit-learn's
    ``CategoricalNB`` (whose ``predict_proba`` this equals on integer codes).
    A missing feature (with ``missing="ignore"``) is left out of the sum:
    exact marginalisation under missing-at-random.

    Parameters
    ----------
    alpha : float or array-like of shape (n_features,), default=1.0
        Additive (Lidstone) smoothing, one number or one per feature (each
        feature's ``alpha_j`` for all its categories; scikit-learn 1.9 takes
        one number only).
    force_alpha : bool, default=True
        Use ``alpha`` as given; with False, values below 1e-10 are raised to
        1e-10 with a warning, as in scikit-learn. The command line uses False.
    fit_prior : bool, default=True
        Learn class priors from the (weighted) class frequencies; when
        False, uniform.
    class_prior : array-like of shape (n_classes,), optional
        Fixed class priors, overriding ``fit_prior``; must sum to 1.
    min_categories : int or array-like of shape (n_features,), optional
        Lower bound on ``K_j``, for categories that may not occur in training.
    missing : {"error", "ignore", "drop"}, default="error"
        ``"error"`` refuses NaN, as scikit-learn does; ``"ignore"`` leaves a
        NaN cell out of ``N_cjv`` and ``N_cj`` at fit and out of the product
        at predict; ``"drop"`` skips rows with a NaN cell at fit (counted in
        ``n_dropped_``) and gives them NaN posteriors at predict.
    unseen : {"error", "ignore"}, default="error"
        A code ``>= K_j`` at predict: ``"error"`` raises ``ValueError``
        naming the row, the feature and the value; ``"ignore"`` leaves the
        cell out of the product like a missing one.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    class_count_ : ndarray of shape (n_classes,)
    class_log_prior_ : ndarray of shape (n_classes,)
    n_categories_ : ndarray of shape (n_features,), int
        ``K_j``.
    category_count_ : list of n_features ndarrays of shape (n_classes, K_j)
        ``N_cjv``.
    feature_log_prob_ : list of n_features ndarrays of shape (n_classes, K_j)
        ``log P(x_j = v | c)``.
    stats_ : CategoryCounts

    Raises
    ------
    ValueError
        For a value that is not a non-negative integer code (scikit-learn
        truncates 2.5 to 2; this class refuses it), infinity, NaN under
        ``missing="error"``, or an unseen category under ``unseen="error"``;
        messages name the row and the column.

    Examples
    --------
    >>> import numpy as np
    >>> from nbcli.models import CategoricalNB
    >>> X = np.array([[3, 0, 1], [4, 1, 0], [2, 0, 0], [0, 3, 2], [1, 4, 3], [0, 2, 4]])
    >>> model = CategoricalNB().fit(X, ["a", "a", "a", "b", "b", "b"])
    >>> model.predict([[3, 0, 0], [0, 3, 3]]).tolist()
    ['a', 'b']
    >>> model.predict_proba([[3, 0, 0]]).shape
    (1, 2)
    """

    name = "categorical"

    def scoring_form(self):
        from nbcli.models._forms import CategoryForm, CompositeForm

        self._check_fitted()
        # The tables without their last column, the zero term of a left-out cell.
        table = CategoryForm(self._log_prob[:, :-1], self._n_cat)
        return CompositeForm(self.class_log_prior_, ((np.arange(len(self._n_cat)), table),))

    sklearn_equivalent = "sklearn.naive_bayes.CategoricalNB"
    feature_kinds = ("categorical",)
    inspection_sections = ("column_parameters",)
    indicative_definition = CATEGORY_DEFINITION
    hyperparameters = (
        alpha(per_feature=True),
        force_alpha(),
        fit_prior(),
        priors("class_prior"),
        min_categories(),
        missing(),
        unseen(),
    )
    statistics = (CategoryCounts,)
    prior_param = "class_prior"
    sklearn_tags = {"positive_only": True}
    # NaN must be caught before scoring: a NaN cell scores as a missing one.
    _scan_for_nonfinite = True

    def __init__(
        self,
        *,
        alpha=1.0,
        force_alpha=True,
        fit_prior=True,
        class_prior=None,
        min_categories=None,
        missing="error",
        unseen="error",
    ):
        self.alpha = alpha
        self.force_alpha = force_alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.min_categories = min_categories
        self.missing = missing
        self.unseen = unseen

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.categorical = True
        return tags

    def _check_values(self, X, row_offset=0):
        check_codes(self, X, np.arange(X.shape[1]), row_offset)

    def learnt_columns(self) -> list[dict]:
        """Per feature, ``{"type": "categorical", "probability"}``: shape
        (n_classes, K_j), P(category | class) with the smoothing, code by code."""
        return [{"type": "categorical", "probability": np.exp(lp)} for lp in self.feature_log_prob_]

    def indicative_features(self) -> tuple[np.ndarray, None]:
        """Per class and feature (n_classes, n_features): the divergence of
        :data:`~nbcli.models._indicative.CATEGORY_DEFINITION`."""
        return category_divergences(self, self.feature_log_prob_), None

    def _check_unseen(self, X, row_offset=0):
        if self.unseen == "error":
            check_known(self, X, np.arange(X.shape[1]), self._n_cat, row_offset)

    def unseen_cells(self, X) -> np.ndarray:
        """Per feature, the cells of ``X`` (n_samples, n_features) holding a
        code unseen in training (left out under ``unseen="ignore"``), shape
        (n_features,), int."""
        return unseen_counts(np.asarray(X, dtype=float), self._n_cat)

    def accumulate(self, X, y_idx, sample_weight, n_classes):
        return CategoryCounts.from_data(X, y_idx, sample_weight, n_classes)

    def finalize(self):
        st = self.stats_
        if st.n_categories.shape != (self.n_features_in_,):
            raise ValueError("the statistics do not match the number of features; refit the model")
        min_cat = check_min_categories(self.min_categories, self.n_features_in_)
        self._log_prob, counts, self._n_cat = category_log_prob(
            st.category_count, st.n_categories, self._smoothing(), min_cat
        )
        bounds = np.cumsum(self._n_cat)[:-1]
        self.n_categories_ = self._n_cat.astype(np.int64)
        self.category_count_ = np.split(counts, bounds, axis=1)
        self.feature_log_prob_ = np.split(self._log_prob[:, :-1], bounds, axis=1)
        self.class_count_ = st.class_count.copy()
        self.class_log_prior_ = class_log_prior(st.class_count, self.fit_prior, self.class_prior)

    def joint_log_likelihood_block(self, X):
        out = category_terms(self._log_prob, X, self._n_cat)
        out += self.class_log_prior_[:, None]
        return out
