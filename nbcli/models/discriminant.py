"""Linear and quadratic discriminant analysis (Gaussian class-conditionals with full covariance)."""

from __future__ import annotations

import warnings

import numpy as np

from nbcli.models._base import BayesClassifier, UndeterminedError
from nbcli.models._covariance import covariance_estimate, ledoit_wolf_from_stats
from nbcli.models._sklearn_api import (
    ClassNamePrefixFeaturesOut,
    DiscriminantAPI,
    qda_decision_offset,
)
from nbcli.models._stats import ClassScatter, PooledScatter, means_about
from nbcli.models._validation import check_priors, label_text
from nbcli.models.hyperparameters import (
    Hyperparameter,
    parse_float_or_option,
    priors,
    solver,
)

_LOG_2PI = np.log(2.0 * np.pi)

PRODUCT_RCOND = 1e-5
"""QDA scores by products with the inverse Cholesky factors while every factor's
reciprocal condition number (LAPACK ``dtrcon``, 1-norm) is at least this; the
product's error then stays below ``1e6 eps`` of the Mahalanobis terms' size, as
the solve's does; below it, by triangular solves."""

# Elements of the (rows x classes*features) product QDA forms at a time.
_QDA_PRODUCT_ELEMENTS = 1 << 18


class _DiscriminantBase(DiscriminantAPI, BayesClassifier):
    # Hyperparameters both subclasses have (set by their __init__).
    priors: object
    shrinkage: object

    def _priors(self):
        if self.priors is None:
            count = self.stats_.count
            return count / count.sum()
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


class LinearDiscriminantAnalysis(ClassNamePrefixFeaturesOut, _DiscriminantBase):
    """Linear discriminant analysis: Gaussian classes sharing one covariance.

    The shared covariance is the maximum-likelihood pooled within-class
    covariance ``Sigma = sum_k S_k / n`` (``S_k`` the class scatter matrices),
    optionally shrunk towards a multiple of the identity. The discriminant of
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
    covariance_estimator : object, optional
        scikit-learn's ``EmpiricalCovariance``, ``ShrunkCovariance`` or
        ``LedoitWolf`` (each class's covariance estimated by it, then
        pooled); others are refused, as they do not follow from mergeable
        statistics (see :func:`covariance_estimate`). Not with ``shrinkage``.

    Attributes
    ----------
    classes_, priors_ (n_classes,), means_ (n_classes, n_features),
    covariance_ (n_features, n_features), coef_ (n_classes, n_features),
    intercept_ (n_classes,): the discriminant is ``x @ coef_.T + intercept_``,
    though scoring evaluates it as ``(x - xbar_) @ coef_.T + ...`` for
    precision; rank_ (int), xbar_ (n_features,) the prior-weighted mean,
    shrinkage_ (n_classes,) for ``"auto"``, stats_ : ClassScatter

    Notes
    -----
    Classes are pooled with their sample counts as weights whatever
    ``priors`` says; scikit-learn's ``lsqr``/``eigen`` solvers weight class
    covariances by the priors instead, so with both user priors and shrinkage
    the two differ (the pooled maximum-likelihood covariance does not depend
    on the priors).
    """

    name = "lda"
    hyperparameters = (
        solver(("svd", "lsqr", "eigen")),
        priors("priors", sums_to_one=False),
        Hyperparameter(
            "shrinkage",
            "float",
            None,
            "'auto' (Ledoit-Wolf) or a number in [0, 1]",
            low=0.0,
            high=1.0,
            allow_none=True,
            options=("auto",),
            flag="--shrinkage",
            parse=parse_float_or_option(("auto",), "'auto' or a number in [0, 1]"),
        ),
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
            "covariance_estimator",
            "object",
            None,
            "a scikit-learn covariance estimator (Python API only)",
            allow_none=True,
        ),
    )
    # The second for Ledoit-Wolf shrinkage, which shrinks each class on its own.
    statistics = (PooledScatter, ClassScatter)
    min_samples_per_class = 2

    def __init__(
        self, *, solver="svd", priors=None, shrinkage=None, tol=1e-4, covariance_estimator=None
    ):
        self.solver = solver
        self.priors = priors
        self.shrinkage = shrinkage
        self.tol = tol
        self.covariance_estimator = covariance_estimator

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
            if not isinstance(st, ClassScatter):
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
        self.covariance_ = cov
        self.means_ = st.mean.copy()
        self.priors_ = self._priors()

        std = np.sqrt(np.diag(cov))
        std[std == 0] = 1.0
        corr = cov / np.outer(std, std)
        evals, evecs = np.linalg.eigh(corr)
        keep = evals > self.tol**2
        self.rank_ = int(keep.sum())
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

    def joint_log_likelihood_block(self, X):
        out = self.coef_ @ (X - self.xbar_).T if self._centre_rows else self.coef_ @ X.T
        out += self._b
        return out


class QuadraticDiscriminantAnalysis(_DiscriminantBase):
    """Quadratic discriminant analysis: Gaussian classes, each with its own covariance.

    Class ``k`` has the maximum-likelihood covariance ``S_k / n_k``,
    regularised as ``(1 - reg_param) S_k / n_k + reg_param I`` (as in
    scikit-learn). The joint log-likelihood is the multivariate normal log
    density plus the log prior (Hastie, Tibshirani and Friedman, *The
    Elements of Statistical Learning*, 2nd ed., 2009, section 4.3, eq. 4.12)::

        log p(x, k) = log pi_k - 1/2 log det(2 pi Sigma_k) - 1/2 ||L_k^-1 (x - mu_k)||^2

    with ``Sigma_k = L_k L_k'`` the Cholesky factorisation: the log-determinant
    is ``2 sum log diag L_k``. For the Mahalanobis term the inverse factors
    ``L_k^-1`` are formed once at fit, and a block of rows, centred at the
    prior-weighted mean, is multiplied by all of them in one matrix product
    (with ``L_k^-1 (mu_k - xbar)`` folded in as one more row), which runs at
    matrix-product speed where per-class triangular solves do not. Where a
    factor is ill-conditioned (reciprocal condition number below
    :data:`PRODUCT_RCOND`) the explicit inverse could lose digits, and the
    model scores by triangular solves instead.

    Parameters
    ----------
    solver : {"svd", "eigen"}, default="svd"
        scikit-learn's solver; accepted for compatibility, the same model for
        each (shrinkage and ``covariance_estimator`` work with both).
    shrinkage : None, "auto" or float in [0, 1], default=None
        Shrinkage of each class covariance, as LDA's (``"auto"``: the
        Ledoit-Wolf intensity of each class on standardised features).
    priors : array-like of shape (n_classes,), optional
    reg_param : float in [0, 1], default=0.0
        Applied after any shrinkage.
    covariance_estimator : object, optional
        As LDA's (:func:`covariance_estimate`); not with ``shrinkage``.

    Attributes
    ----------
    classes_, priors_ (n_classes,), means_ (n_classes, n_features),
    covariance_ (n_classes, n_features, n_features) regularised,
    log_det_ (n_classes,), stats_ : ClassScatter

    Raises
    ------
    numpy.linalg.LinAlgError
        (a ``ValueError``) When a class's covariance is singular: no more
        samples than features, a feature constant within the class, or
        collinear features, with ``reg_param=0``. The message names the class.
    UndeterminedError
        (a ``ValueError``) When a class has fewer than two samples.

    Notes
    -----
    With ``reg_param > 0`` the covariance is full rank and every direction
    counts. scikit-learn agrees with that (and refuses covariances it finds
    rank-deficient); its rank test uses an absolute eigenvalue threshold of
    1e-4, ours a relative one, so it refuses some small-scaled features we
    accept.
    """

    name = "qda"
    hyperparameters = (
        solver(("svd", "eigen")),
        Hyperparameter(
            "shrinkage",
            "float",
            None,
            "'auto' (Ledoit-Wolf) or a number in [0, 1]",
            low=0.0,
            high=1.0,
            allow_none=True,
            options=("auto",),
        ),
        priors("priors"),
        Hyperparameter(
            "reg_param",
            "float",
            0.0,
            "covariance regularisation in [0, 1]",
            low=0.0,
            high=1.0,
            flag="--reg-param",
        ),
        Hyperparameter(
            "covariance_estimator",
            "object",
            None,
            "a scikit-learn covariance estimator (Python API only)",
            allow_none=True,
        ),
    )
    statistics = (ClassScatter,)
    min_samples_per_class = 2

    def __init__(
        self, *, solver="svd", shrinkage=None, priors=None, reg_param=0.0, covariance_estimator=None
    ):
        self.solver = solver
        self.shrinkage = shrinkage
        self.priors = priors
        self.reg_param = reg_param
        self.covariance_estimator = covariance_estimator

    def check_hyperparameters(self) -> None:
        super().check_hyperparameters()
        self._covariance_kind()

    def accumulate(self, X, y_idx, sample_weight, n_classes):
        higher = self._covariance_kind() in ("auto", "ledoit-wolf")
        return ClassScatter.from_data(X, y_idx, sample_weight, n_classes, higher=higher)

    def _class_covariance(self, k: int, kind) -> np.ndarray:
        """Class ``k``'s covariance before ``reg_param``: empirical, shrunk or Ledoit-Wolf."""
        st = self.stats_
        n_k = st.count[k]
        if kind in ("auto", "ledoit-wolf"):
            if st.fourth is None:
                raise ValueError(
                    "Ledoit-Wolf shrinkage needs per-class fourth moments; refit the model with it"
                )
            return ledoit_wolf_from_stats(
                n_k, st.scatter[k], st.fourth[k], standardise=kind == "auto"
            )[0]
        cov = st.scatter[k] / n_k
        if kind is not None and kind > 0:
            d = cov.shape[0]
            mu = np.trace(cov) / d
            cov = (1.0 - float(kind)) * cov
            cov.flat[:: d + 1] += float(kind) * mu
        return cov

    def finalize(self):
        st = self.stats_
        K, d = st.mean.shape
        r = float(self.reg_param)
        kind = self._covariance_kind()
        shrunk = kind not in (None, 0.0)
        self.means_ = st.mean.copy()
        self.priors_ = self._priors()
        self.covariance_ = np.empty((K, d, d))
        self._chol = np.empty((K, d, d))
        self.log_det_ = np.empty(K)
        for k in range(K):
            label = self.classes_[k]
            n_k = st.count[k]
            if n_k <= 0:
                raise UndeterminedError(
                    f"class {label_text(label)} has no samples (all its weights are zero)"
                )
            if r == 0 and n_k <= 1:
                # scikit-learn's wording: one row has no spread.
                raise UndeterminedError(
                    f"y has only 1 sample in class {label_text(label)}, covariance is ill defined"
                )
            if r == 0 and n_k <= d and not shrunk:
                raise np.linalg.LinAlgError(
                    f"class {label_text(label)} has {n_k:g} samples for {d} features, so its "
                    "covariance is singular; QDA needs reg_param > 0 here (The covariance "
                    f"matrix of class {label_text(label)} is not full rank.)"
                )
            cov = (1.0 - r) * self._class_covariance(k, kind)
            cov.flat[:: d + 1] += r
            self.covariance_[k] = cov
            diag = np.diag(cov).copy()
            try:
                L = np.linalg.cholesky(cov)
                # Pivot_j^2 / Sigma_jj is 1 - R^2 of feature j on the ones before it.
                ratio = np.diag(L) ** 2 / np.where(diag > 0, diag, np.nan)
                singular = not np.all(ratio > 1e-12)
            except np.linalg.LinAlgError:
                singular = True
            if singular:
                raise np.linalg.LinAlgError(
                    f"the covariance of class {label_text(label)} is singular (a feature constant "
                    "within the class, or collinear features); set reg_param > 0 (The "
                    f"covariance matrix of class {label_text(label)} is not full rank.)"
                )
            self._chol[k] = L
            self.log_det_[k] = 2.0 * np.sum(np.log(np.diag(L)))
        with np.errstate(divide="ignore"):
            self._const = np.log(self.priors_) - 0.5 * (self.log_det_ + d * _LOG_2PI)
        self._decision_offset = qda_decision_offset(d)
        self._product_factors()

    def _product_factors(self):
        """``_A`` of shape (d + 1, K d): ``[x - xbar, 1] @ _A`` gives every ``L_k^-1 (x - mu_k)``."""
        from scipy.linalg import solve_triangular
        from scipy.linalg.lapack import dtrcon

        K, d = self.means_.shape
        rcond = [dtrcon(self._chol[k], norm="1", uplo="L")[0] for k in range(K)]
        self._use_product = bool(min(rcond, default=1.0) >= PRODUCT_RCOND)
        if not self._use_product:
            return
        # Centring at one reference keeps mean 1e9, spread 1 data exact: only
        # the class means' offsets from it are multiplied, never raw values.
        self._xbar = self.priors_ @ self.means_ if np.all(np.isfinite(self.priors_)) else 0.0
        A = np.empty((d + 1, K * d))
        eye = np.eye(d)
        for k in range(K):
            inv = solve_triangular(self._chol[k], eye, lower=True, check_finite=False)
            cols = slice(k * d, (k + 1) * d)
            A[:d, cols] = inv.T
            A[d, cols] = -(inv @ (self.means_[k] - self._xbar))
        self._A = A

    def joint_log_likelihood_block(self, X):
        if self._use_product:
            return self._jll_product(X)
        return self._jll_solve(X)

    def _jll_product(self, X):
        K, d = self.means_.shape
        n = X.shape[0]
        out = np.empty((K, n))
        step = max(16, _QDA_PRODUCT_ELEMENTS // (K * d))
        centred = np.empty((min(step, n), d + 1))
        centred[:, d] = 1.0
        for lo in range(0, n, step):
            hi = min(n, lo + step)
            c = centred[: hi - lo]
            np.subtract(X[lo:hi], self._xbar, out=c[:, :d])
            Z = c @ self._A
            Z *= Z
            out[:, lo:hi] = Z.reshape(hi - lo, K, d).sum(axis=2).T
        out *= -0.5
        out += self._const[:, None]
        return out

    def _jll_solve(self, X):
        # SciPy is imported here, not at module level, so that loading any
        # model (and `nbcli --help`) does not pay for it.
        from scipy.linalg import solve_triangular

        out = np.empty((len(self.classes_), X.shape[0]))
        Xt = X.T
        for k in range(len(self.classes_)):
            # Solve on the centred rows (transposed, so LAPACK gets them
            # column-major without a copy) and overwrite them in place.
            D = Xt - self.means_[k][:, None]
            Z = solve_triangular(self._chol[k], D, lower=True, overwrite_b=True, check_finite=False)
            out[k] = np.einsum("ij,ij->j", Z, Z)
            out[k] *= -0.5
            out[k] += self._const[k]
        return out
