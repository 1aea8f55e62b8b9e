"""Poisson naive Bayes: every feature a count with a class-dependent rate."""

from __future__ import annotations

import numpy as np

from nbcli.models._base import BayesClassifier, EmptyColumnError, NoObservedValueError
from nbcli.models._sklearn_api import NaiveBayesAPI
from nbcli.models._table_stats import ObservedCounts
from nbcli.models._validation import label_text
from nbcli.models.categorical import class_log_prior, refuse_cells
from nbcli.models.discrete import _alpha
from nbcli.models.hyperparameters import alpha, fit_prior, missing, priors


def poisson_terms(X: np.ndarray, rate: np.ndarray, log_rate: np.ndarray) -> np.ndarray:
    """``sum_j x_j log lambda_cj - lambda_cj - log Gamma(x_j + 1)`` over the
    observed cells of ``X`` (n_rows, n_features; NaN: missing), per class:
    shape (n_classes, n_rows). ``rate`` and ``log_rate``: (n_classes, n_features)."""
    from scipy.special import gammaln  # not at import: --help stays light

    seen = ~np.isnan(X)
    counts = np.where(seen, X, 0.0)
    out = log_rate @ counts.T - rate @ seen.T.astype(np.float64)
    out -= gammaln(counts + 1.0).sum(axis=1)
    return out


def poisson_form(rate: np.ndarray, log_rate: np.ndarray, intercept: np.ndarray):
    """The Poisson terms as an :class:`~nbcli.models._forms.AffineForm`:
    ``x @ log_rate.T - seen @ rate.T``, written as ``- sum(rate) + missing @
    rate.T``. ``- log Gamma(x + 1)`` is left out: it is the same for every
    class, so it changes no posterior."""
    from nbcli.models._forms import AffineForm

    return AffineForm(log_rate, intercept - rate.sum(axis=1), missing_coef=rate)


def poisson_rates(total: np.ndarray, count: np.ndarray, alpha: float) -> np.ndarray:
    """Smoothed Poisson rates ``(total + alpha) / count`` per class and column.

    ``total`` is the sum of the observed values, ``count`` their (weighted)
    number; a rate with nothing observed is 1 (its class has no rows).

    Raises
    ------
    ValueError
        When ``alpha`` is so large that a rate overflows float64.
    """
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        rate = np.where(count > 0, (total + alpha) / count, 1.0)
    if not np.all(np.isfinite(rate)):
        raise ValueError(
            f"alpha={alpha:g} is too large: the Poisson rates overflow float64; use a smaller "
            "alpha (1 is Laplace smoothing)"
        )
    return rate


def refuse_negative(model, X: np.ndarray, columns, row_offset: int = 0, note: str = "") -> None:
    """Refuse a negative (observed) cell of Poisson columns, naming row and column
    (``note`` is added to the message)."""
    with np.errstate(invalid="ignore"):
        bad = X < 0
    refuse_cells(
        model, X, bad, columns, row_offset, f"is negative: Poisson columns take counts{note}"
    )


class PoissonNB(NaiveBayesAPI, BayesClassifier):
    """Poisson naive Bayes for count features.

    Feature ``j`` of a class-``c`` row is a Poisson count with rate
    ``lambda_cj`` (R naivebayes' ``poisson_naive_bayes``, and its
    ``usepoisson`` columns; Murphy, *Machine Learning: A Probabilistic
    Perspective*, 2012, section 3.5)::

        log p(x, c) = log pi_c + sum_{j observed} x_j log lambda_cj - lambda_cj - log x_j!

        lambda_cj = (S_cj + alpha) / n_cj

    with ``S_cj`` the weighted sum of the feature's observed values in class
    ``c`` and ``n_cj`` their weight: R naivebayes' rate with ``laplace =
    alpha``, the posterior mean of the rate under the (improper) prior
    ``Gamma(alpha, 0)``. ``alpha > 0`` keeps a class that saw only zeros from
    a zero rate, under which every positive count would be impossible (R's
    ``laplace = 0`` replaces such a rate by ``1 / n_cj``; values of alpha
    below 1e-10 are raised to 1e-10 here). Values that are not whole numbers
    are scored by the same formula, ``log x!`` as ``log Gamma(x + 1)``, as R
    computes them; negative values are refused. The statistics are per class
    and feature the observed weight and the sum, which add across chunks.

    Parameters
    ----------
    alpha : float, default=1.0
    fit_prior : bool, default=True
        Learn class priors from the (weighted) class frequencies; when
        False, uniform.
    class_prior : array-like of shape (n_classes,), optional
        Fixed class priors, overriding ``fit_prior``; must sum to 1.
    missing : {"error", "ignore", "drop"}, default="error"
        ``"ignore"``: a NaN cell is left out of its feature's sum and weight
        at fit and out of the product at predict (exact marginalisation under
        missing-at-random); ``"drop"``: rows with a NaN cell are skipped at
        fit and get NaN posteriors at predict.

    Attributes
    ----------
    classes_, class_count_, class_log_prior_ : ndarray of shape (n_classes,)
    rate_ : ndarray of shape (n_classes, n_features)
        ``lambda_cj``.
    stats_ : ObservedCounts

    Raises
    ------
    ValueError
        For a negative value, or NaN under ``missing="error"`` (naming row
        and column); at fit, for a feature with no observed value in a class
        that has rows.

    Examples
    --------
    >>> import numpy as np
    >>> from nbcli.models import PoissonNB
    >>> X = np.array([[3, 0], [4, 1], [2, 0], [0, 3], [1, 4], [0, 2]])
    >>> model = PoissonNB().fit(X, ["a", "a", "a", "b", "b", "b"])
    >>> model.predict([[3, 1], [0, 4]]).tolist()
    ['a', 'b']
    >>> model.rate_.round(3).tolist()
    [[3.333, 0.667], [0.667, 3.333]]
    """

    name = "poisson"
    feature_kinds = ("poisson",)
    hyperparameters = (alpha(), fit_prior(), priors("class_prior"), missing())
    statistics = (ObservedCounts,)
    prior_param = "class_prior"
    sklearn_tags = {"positive_only": True}
    inspection_sections = ("column_parameters",)
    # NaN must be caught before scoring: a NaN cell scores as a missing one.
    _scan_for_nonfinite = True

    def __init__(self, *, alpha=1.0, fit_prior=True, class_prior=None, missing="error"):
        self.alpha = alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.missing = missing

    def _check_values(self, X, row_offset=0):
        # scikit-learn's words for it, which its checks look for.
        note = " (Negative values in data passed to PoissonNB)"
        refuse_negative(self, X, np.arange(X.shape[1]), row_offset, note)

    def accumulate(self, X, y_idx, sample_weight, n_classes):
        return ObservedCounts.from_data(X, y_idx, sample_weight, n_classes)

    def finalize(self):
        st = self.stats_
        a = _alpha(self.alpha)
        self.class_count_ = st.class_count.copy()
        self.class_log_prior_ = class_log_prior(st.class_count, self.fit_prior, self.class_prior)
        live = st.class_count > 0
        empty = live[:, None] & (st.observed_count <= 0)
        if empty.any():
            k, j = np.argwhere(empty)[0]
            # No value in any class: only leaving the column out helps.
            none = not np.any(st.observed_count[:, j] > 0)
            error = EmptyColumnError if none else NoObservedValueError
            where = "training" if none else f"class {label_text(self.classes_[k])}"
            raise error(
                int(j),
                f" has no observed value in {where}; a rate needs at least one",
                names=getattr(self, "feature_names_in_", None),
            )
        self.rate_ = poisson_rates(st.feature_count, st.observed_count, a)
        self._log_rate = np.log(self.rate_)

    def scoring_form(self):
        self._check_fitted()
        return poisson_form(self.rate_, self._log_rate, self.class_log_prior_)

    def learnt_columns(self) -> list[dict]:
        """Per feature, ``{"type": "poisson", "rate"}``: ``lambda_cj``, shape (n_classes,)."""
        return [{"type": "poisson", "rate": self.rate_[:, j]} for j in range(self.rate_.shape[1])]

    def joint_log_likelihood_block(self, X):
        out = poisson_terms(X, self.rate_, self._log_rate)
        out += self.class_log_prior_[:, None]
        return out
