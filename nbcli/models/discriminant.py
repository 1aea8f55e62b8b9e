"""Linear discriminant analysis, and the base it shares with quadratic
discriminant analysis (:mod:`nbcli.models.quadratic`): Gaussian
class-conditionals with full covariance."""

from __future__ import annotations

import warnings

import numpy as np

from nbcli.models._base import BayesClassifier, ColumnUndeterminedError, UndeterminedError
from nbcli.models._blocks import affine_scores
from nbcli.models._covariance import covariance_estimate, ledoit_wolf_from_stats
from nbcli.models._directions import discriminant_directions
from nbcli.models._projection import Projected
from nbcli.models._sklearn_api import (
    ClassNamePrefixFeaturesOut,
    DiscriminantAPI,
)
from nbcli.models._stats import ClassScatter, PooledScatter, means_about
from nbcli.models._validation import (
    ColumnsMessage,
    check_finite,
    check_priors,
    refuse_priors_by_label,
)
from nbcli.models.hyperparameters import (
    MISSING_ROWS_ONLY,
    Hyperparameter,
    covariance_estimator,
    covariance_method,
    missing,
    pca,
    priors,
    shrinkage,
    solver,
    standardize,
    store_covariance,
)

_LOG_2PI = np.log(2.0 * np.pi)


class CollinearWarning(ColumnsMessage, UserWarning):
    """LDA dropped directions of the pooled covariance: constant or collinear
    features (MASS's "variables are collinear"). ``features`` holds the
    indices of the features involved, ``n_dropped`` the directions dropped."""

    def __init__(self, *pieces, n_dropped: int = 0, names=None):
        super().__init__(*pieces, names=names)
        listed = [p for p in pieces if isinstance(p, tuple)]
        self.features = list(listed[0]) if listed else []
        self.n_dropped = int(n_dropped)


def _collinear_features(std, evecs, keep) -> list[int]:
    """Indices of the features in the dropped directions: constant ones and
    those that load on a dropped eigenvector (|loading| > 0.1; the vectors
    have unit length)."""
    involved = np.zeros(len(std), dtype=bool)
    involved |= std == 0
    if np.any(~keep):
        involved |= np.any(np.abs(evecs[:, ~keep]) > 0.1, axis=1)
    return [int(i) for i in np.flatnonzero(involved)]


class _DiscriminantBase(DiscriminantAPI, BayesClassifier):
    # Hyperparameters both subclasses have (set by their __init__).
    priors: object
    shrinkage: object
    covariance_method: str

    def _priors(self):
        if self.priors is None:
            count = self.stats_.count
            return count / count.sum()
        refuse_priors_by_label(self.priors)
        # A copy: the caller's array may change after fit, priors_ must not.
        p = np.array(self.priors, dtype=np.float64).ravel()
        if p.shape[0] == len(self.classes_) and p.sum() > 0 and abs(p.sum() - 1.0) > 1e-5:
            warnings.warn("The priors do not sum to 1. Renormalizing", UserWarning, stacklevel=2)
            p = p / p.sum()
        return check_priors(p, len(self.classes_))

    def _covariance_kind(self):
        """``None``, a float, ``"auto"`` or ``"ledoit-wolf"``: the shrinkage asked for."""
        est = getattr(self, "covariance_estimator", None)
        if est is not None and self.shrinkage is not None:
            raise ValueError(
                "covariance_estimator and shrinkage parameters are not None. "
                "Only one of the two can be set."
            )
        return self.shrinkage if est is None else covariance_estimate(est)

    def _check_enough_samples(self):
        count = self.stats_.count
        if count.sum() <= np.count_nonzero(count):
            raise UndeterminedError(
                f"{count.sum():g} samples for {np.count_nonzero(count)} classes give no "
                "within-class spread (The number of samples must be more than the number "
                "of classes)"
            )


class LinearDiscriminantAnalysis(Projected, ClassNamePrefixFeaturesOut, _DiscriminantBase):
    """Linear discriminant analysis: Gaussian classes sharing one covariance.

    The shared covariance is the maximum-likelihood pooled within-class
    covariance ``Sigma = sum_k S_k / n`` (``S_k`` the class scatter matrices),
    or with ``covariance_method="moment"`` the unbiased ``sum_k S_k / (n - K)``
    of MASS's ``lda`` (Venables and Ripley, *Modern Applied Statistics with
    S*, 4th ed., 2002, section 12.1), optionally shrunk towards a multiple
    of the identity. The discriminant of
    class ``k`` is linear in ``x`` (Hastie, Tibshirani and Friedman, *The
    Elements of Statistical Learning*, 2nd ed., 2009, section 4.3, eq. 4.10)::

        delta_k(x) = x' Sigma^+ mu_k - 1/2 mu_k' Sigma^+ mu_k + log pi_k

    so scoring is one matrix product. ``Sigma^+`` comes from the eigendecomposition
    of the covariance standardised to unit diagonal: directions whose eigenvalue
    is below ``tol**2`` (exactly-zero variance such as a constant feature, or
    perfectly collinear features) are left out, which is a pseudo-inverse and
    never an explicit inverse; on a well-posed covariance every direction is
    kept and ``Sigma^+`` is ``Sigma^-1``. This matches scikit-learn's ``svd``
    solver, whose ``tol`` has the same meaning.

    Parameters
    ----------
    solver : {"svd", "lsqr", "eigen"}, default="svd"
        scikit-learn's solver; accepted for compatibility. The model follows
        from the statistics, so every solver gives the same one (shrinkage
        and ``covariance_estimator`` work with each).
    priors : array-like of shape (n_classes,), optional
        Class priors; default the (weighted) class frequencies. Priors that
        do not sum to 1 are renormalised, with a warning, as in scikit-learn.
    shrinkage : None, "auto" or float in [0, 1], default=None
        ``None``: no shrinkage. A float ``a``: ``(1 - a) Sigma + a tr(Sigma)/d I``.
        ``"auto"``: each class covariance is shrunk with its own Ledoit-Wolf
        intensity (on standardised features) before pooling, as in
        scikit-learn's ``lsqr``/``eigen`` solvers.
    tol : float, default=1e-4
        Relative rank threshold (see above).
    covariance_method : {"mle", "moment"}, default="mle"
        The divisor of the pooled covariance: ``n`` (maximum likelihood, as
        scikit-learn) or ``n - K`` (``K`` the classes with rows; unbiased,
        MASS's default ``method = "moment"``). Sample weights count as
        frequencies (``n`` their sum). Any shrinkage is applied to the
        covariance so divided; Ledoit-Wolf's intensity does not depend on
        the scale, so its covariance is the maximum-likelihood one times
        ``n / (n - K)``.
    solver : {"svd", "lsqr", "eigen"}, default="svd"
        scikit-learn's solvers all fit this one model; the choice decides
        what :meth:`transform` returns, as in scikit-learn: ``"svd"`` the
        directions of the SVD of the whitened class means (centred rows),
        ``"eigen"`` the generalised eigenvectors of the between-class
        scatter against ``covariance_`` (uncentred rows), ``"lsqr"`` none.
    n_components : int, optional
        Number of columns :meth:`transform` returns, at most
        ``min(n_classes - 1, n_features)`` (the default).
    store_covariance : bool, default=False
        Accepted for scikit-learn's sake; ``covariance_`` is always set.
    missing : {"error", "drop"}, default="error"
        ``"drop"``: rows with a NaN cell are skipped at fit (counted in
        ``n_dropped_``) and get NaN posteriors at predict. A covariance
        couples the features, so a cell cannot be left out on its own.
    covariance_estimator : object, optional
        scikit-learn's ``EmpiricalCovariance``, ``ShrunkCovariance`` or
        ``LedoitWolf`` (each class's covariance estimated by it, then
        pooled); others are refused, as they do not follow from mergeable
        statistics (see :func:`covariance_estimate`). Not with ``shrinkage``.
    pca : int, float or None, default=None
        Fit on the first principal components of the training rows, as
        scikit-learn's ``Pipeline([PCA(pca), LDA()])`` (see
        :class:`~nbcli.models.GaussianNB`); not with Ledoit-Wolf shrinkage.
        :meth:`transform` takes raw rows and projects them first.
    standardize : bool, default=False
        Standardise every column first, as scikit-learn's ``StandardScaler``.

    Attributes
    ----------
    classes_, priors_ (n_classes,), means_ (n_classes, n_features),
    covariance_ (n_features, n_features), coef_ (n_classes, n_features),
    intercept_ (n_classes,): the discriminant is ``x @ coef_.T + intercept_``,
    though scoring evaluates it as ``(x - xbar_) @ coef_.T + ...`` for
    precision; rank_ (int), xbar_ (n_features,) the prior-weighted mean,
    shrinkage_ (n_classes,) for ``"auto"``, stats_ : ClassScatter;
    scalings_ (n_features, n_directions) and explained_variance_ratio_
    (n_components,) as scikit-learn's ``svd`` or ``eigen`` solver defines
    them (absent with ``"lsqr"``): the discriminant directions, normalised
    so that ``scalings_' covariance_ scalings_`` is the identity, and the
    share of the between-class variance along each

    Notes
    -----
    Classes are pooled with their sample counts as weights whatever
    ``priors`` says; scikit-learn's ``lsqr``/``eigen`` solvers weight class
    covariances by the priors instead, so with both user priors and shrinkage
    the two differ (the pooled maximum-likelihood covariance does not depend
    on the priors). With ``solver="eigen"`` and ``shrinkage="auto"``
    scikit-learn also shrinks the total scatter with its own Ledoit-Wolf
    intensity, which needs the fourth moments about the overall mean; here
    the between-class scatter is not shrunk, so the directions differ.

    Examples
    --------
    >>> import numpy as np
    >>> from nbcli.models import LinearDiscriminantAnalysis
    >>> X = np.array([[1.0, 2.1], [1.3, 1.8], [0.8, 2.4], [3.1, 4.0], [2.7, 4.3], [3.4, 3.7]])
    >>> model = LinearDiscriminantAnalysis().fit(X, ["a", "a", "a", "b", "b", "b"])
    >>> model.predict([[1.0, 2.0], [3.0, 4.0]]).tolist()
    ['a', 'b']
    >>> model.predict_proba([[1.0, 2.0]]).shape
    (1, 2)
    """

    name = "lda"

    def scoring_form(self):
        from nbcli.models._forms import AffineForm

        self._check_fitted()
        centre = self.xbar_ if self._centre_rows else None
        return AffineForm(self.coef_, self._b[:, 0], centre=centre)

    sklearn_equivalent = "sklearn.discriminant_analysis.LinearDiscriminantAnalysis"
    # As scikit-learn's svd solver on float32 input (scoring and transform in float32 too).
    float32_attributes = (
        "coef_",
        "intercept_",
        "means_",
        "priors_",
        "xbar_",
        "scalings_",
        "explained_variance_ratio_",
        "covariance_",
    )
    inspection_sections = ("discriminant_directions",)
    hyperparameters = (
        solver(("svd", "lsqr", "eigen")),
        priors("priors", sums_to_one=False),
        shrinkage(),
        Hyperparameter(
            "tol",
            "float",
            1e-4,
            "relative rank threshold of the standardised covariance",
            low=0.0,
            high=1.0,
            high_open=True,
        ),
        Hyperparameter(
            "n_components",
            "int",
            None,
            "number of discriminant directions transform returns",
            low=1,
            allow_none=True,
            default_text="min(n_classes - 1, n_features)",
        ),
        store_covariance(),
        covariance_estimator(),
        missing(MISSING_ROWS_ONLY),
        covariance_method(),
        pca(),
        standardize(),
    )
    # The second for Ledoit-Wolf shrinkage, which shrinks each class on its own.
    statistics = (PooledScatter, ClassScatter)
    _pca_shapes = dict(PooledScatter.shapes)
    min_samples_per_class = 2

    def __init__(
        self,
        *,
        solver="svd",
        shrinkage=None,
        priors=None,
        n_components=None,
        store_covariance=False,
        tol=1e-4,
        covariance_estimator=None,
        missing="error",
        covariance_method="mle",
        pca=None,
        standardize=False,
    ):
        self.solver = solver
        self.shrinkage = shrinkage
        self.priors = priors
        self.n_components = n_components
        self.store_covariance = store_covariance
        self.tol = tol
        self.missing = missing
        self.covariance_estimator = covariance_estimator
        self.covariance_method = covariance_method
        self.pca = pca
        self.standardize = standardize

    def check_hyperparameters(self) -> None:
        super().check_hyperparameters()
        self._check_projection()

    @property
    def _n_features_out(self) -> int:
        """Number of discriminant components (scikit-learn's ``_max_components``)."""
        n_components = getattr(self, "n_components", None)
        if n_components is not None:
            return int(n_components)
        return min(len(self.classes_) - 1, self.n_features_in_)

    def accumulate(self, X, y_idx, sample_weight, n_classes):
        # Ledoit-Wolf shrinks each class on its own, so it needs per-class
        # moments; otherwise one pooled scatter matrix is all LDA uses.
        if self._covariance_kind() in ("auto", "ledoit-wolf"):
            return ClassScatter.from_data(X, y_idx, sample_weight, n_classes, higher=True)
        return PooledScatter.from_data(X, y_idx, sample_weight, n_classes)

    def finalize(self):
        st = self.stats_
        d = st.mean.shape[1]
        count = st.count
        total = count.sum()
        present = count > 0
        kind = self._covariance_kind()
        self._check_enough_samples()
        if kind in ("auto", "ledoit-wolf"):
            if not isinstance(st, ClassScatter) or st.fourth is None:
                raise ValueError(
                    "Ledoit-Wolf shrinkage needs per-class statistics; refit the model with it"
                )
            cov = np.zeros((d, d))
            intensities = np.zeros(len(count))
            for k in np.flatnonzero(present):
                ck, intensities[k] = ledoit_wolf_from_stats(
                    count[k], st.scatter[k], st.fourth[k], standardise=kind == "auto"
                )
                cov += (count[k] / total) * ck
            self.shrinkage_ = intensities
        else:
            if not isinstance(st, PooledScatter):
                raise ValueError(
                    "these statistics were gathered for Ledoit-Wolf shrinkage; refit to change it"
                )
            cov = st.within / total
            if kind is not None and kind > 0:
                a = float(kind)
                mu = np.trace(cov) / d
                cov = (1.0 - a) * cov
                cov.flat[:: d + 1] += a * mu
        if self.covariance_method == "moment":
            # Every estimate above is linear in the scatter (Ledoit-Wolf's
            # intensity is scale-free), so the divisor is one factor.
            cov = cov * (total / (total - np.count_nonzero(present)))
        self.covariance_ = cov
        self.means_ = st.mean.copy()
        self.priors_ = self._priors()

        # A direction of no variance can come out a rounding error below 0
        # (a projected covariance P^T S P): it is constant, not a NaN.
        std = np.sqrt(np.maximum(np.diag(cov), 0.0))
        constant = std == 0
        std[constant] = 1.0
        corr = cov / np.outer(std, std)
        evals, evecs = np.linalg.eigh(corr)
        keep = evals > self.tol**2
        self.rank_ = int(keep.sum())
        if self.rank_ < d:
            where = np.where(constant, 0.0, std)
            involved = _collinear_features(where, evecs, keep)
            names = getattr(self, "feature_names_in_", None)
            if self.rank_ == 0:
                why = (
                    "; with one sample per class there is no within-class spread"
                    if np.all(count[present] <= 1)
                    else ""
                )
                raise ColumnUndeterminedError(
                    "every direction of the within-class covariance is constant or collinear "
                    "(features ",
                    tuple(involved),
                    f"); LDA has nothing left to score with{why}",
                    names=names,
                )
            warnings.warn(
                CollinearWarning(
                    f"variables are collinear: {d - self.rank_} of {d} directions of the "
                    "within-class covariance dropped (along features ",
                    tuple(involved),
                    ")",
                    n_dropped=d - self.rank_,
                    names=names,
                ),
                stacklevel=2,
            )
        scalings = (evecs[:, keep] / np.sqrt(evals[keep])) / std[:, None]  # (d, r)

        # Class means are centred at their prior-weighted mean before anything
        # is multiplied, and rows are centred the same way when scored: with
        # features of mean 1e9 and spread 1, x @ coef would otherwise cancel
        # catastrophically against the intercept.
        reference = st.shift[np.flatnonzero(present)[0]]
        about_ref = means_about(st, reference)
        xbar_ref = self.priors_ @ about_ref
        self.xbar_ = reference + xbar_ref
        whitened = (about_ref - xbar_ref) @ scalings  # (K, r)
        self.coef_ = whitened @ scalings.T
        with np.errstate(divide="ignore"):
            log_prior = np.log(self.priors_)
        self._directions(about_ref, whitened, scalings)
        self._centred_intercept = -0.5 * np.sum(whitened**2, axis=1) + log_prior
        self.intercept_ = self._centred_intercept - self.coef_ @ self.xbar_
        # Rows are centred before the product only where it matters: when a
        # feature's mean is large against its spread, x @ coef would cancel
        # against the intercept (mean 1e9, spread 1 loses ~1e-7); otherwise
        # the plain product is as accurate and saves a pass over the data.
        self._centre_rows = bool(np.any(np.abs(self.xbar_) > 1e3 * std))
        if self._centre_rows:
            self._b = self._centred_intercept[:, None]
        else:
            self._b = self.intercept_[:, None]

    def _directions(self, about_ref, whitened, scalings):
        K, d = len(self.classes_), self.n_features_in_
        most = min(K - 1, d)
        # One class has no direction to tell apart: nothing to refuse there.
        if self.n_components is not None and self.n_components > most and K > 1:
            raise ValueError(
                f"n_components cannot be larger than min(n_features, n_classes - 1) = {most}; "
                f"got {self.n_components}"
            )
        self._max_components = most if self.n_components is None else min(most, self.n_components)
        for attr in ("scalings_", "explained_variance_ratio_"):
            self.__dict__.pop(attr, None)
        if self.solver != "lsqr":
            directions, ratio = discriminant_directions(
                self.solver,
                self.stats_.count,
                self.priors_,
                about_ref,
                whitened,
                scalings,
                shrinkage=self.shrinkage,
                tol=self.tol,
            )
            self.scalings_ = directions
            self.explained_variance_ratio_ = ratio[: self._max_components]

    def transform(self, X) -> np.ndarray:
        """Project rows onto the discriminant directions (Fisher's LDA).

        As scikit-learn's ``transform``: with ``solver="svd"``
        ``(X - xbar_) @ scalings_``, with ``"eigen"`` ``X @ scalings_``, the
        first ``n_components`` columns. The directions maximise the ratio of
        between-class to within-class variance; each is determined up to
        its sign.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_components)
            ``min(rank, n_components)`` columns with the ``svd`` solver.

        Raises
        ------
        NotImplementedError
            With ``solver="lsqr"``, as scikit-learn.
        NotFittedError, ValueError
            Before ``fit``; for rows of the wrong width.
        """
        if self.solver == "lsqr":
            raise NotImplementedError(
                "transform not implemented for 'lsqr' solver (use 'svd' or 'eigen')."
            )
        X = self._check_predict_input(X)
        check_finite(X)
        if self.projection_ is not None:
            X = self.projection_.transform(X)
        if self.solver == "svd":
            out = (X - self.xbar_) @ self.scalings_
        else:
            out = X @ self.scalings_
        out = out[:, : self._max_components]
        return out.astype(np.float32) if self._scores_float32 else out

    def __sklearn_tags__(self):
        """scikit-learn's tags, and those of a transformer (it has ``transform``)."""
        from sklearn.utils import TransformerTags

        tags = super().__sklearn_tags__()
        tags.transformer_tags = TransformerTags()
        return tags

    def fit_transform(self, X, y, sample_weight=None) -> np.ndarray:
        """``fit(X, y)`` then ``transform(X)``."""
        return self.fit(X, y, sample_weight=sample_weight).transform(X)

    def get_feature_names_out(self, input_features=None) -> np.ndarray:
        """Names of :meth:`transform`'s columns: ``lineardiscriminantanalysis0``, ..."""
        self._check_fitted()
        n = min(self._max_components, self.scalings_.shape[1])
        return np.asarray([f"lineardiscriminantanalysis{i}" for i in range(n)], dtype=object)

    @property
    def _scan_for_nonfinite(self) -> bool:
        # The scan is one streaming pass that leaves the block in cache, from
        # where the product reads it faster than from memory by more than the
        # scan costs; NaN and infinity would show in the scores anyway.
        return True

    def joint_log_likelihood_block(self, X):
        centre = self.xbar_ if self._centre_rows else None
        return affine_scores(X, self.coef_, self._b[:, 0], centre=centre)
