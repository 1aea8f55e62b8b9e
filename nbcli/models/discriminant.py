"""Linear and quadratic discriminant analysis (Gaussian class-conditionals with full covariance)."""

from __future__ import annotations

import warnings

import numpy as np

from nbcli.models._base import BayesClassifier
from nbcli.models._stats import ClassScatter, PooledScatter, means_about
from nbcli.models._validation import check_priors, label_text
from nbcli.models.hyperparameters import Hyperparameter, parse_float_or_option, priors

_LOG_2PI = np.log(2.0 * np.pi)


class CollinearWarning(UserWarning):
    """LDA dropped directions of the pooled covariance: constant or collinear
    features (MASS's "variables are collinear"). ``features`` holds the
    indices of the features involved, ``n_dropped`` the directions dropped."""

    def __init__(self, message: str, features=(), n_dropped: int = 0):
        super().__init__(message)
        self.features = list(features)
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


def ledoit_wolf_from_stats(count: float, scatter: np.ndarray, fourth: np.ndarray):
    """Ledoit-Wolf shrunk covariance of one class, from its co-moments.

    The features are standardised (centred, divided by their standard
    deviation, a zero deviation counting as 1), the optimal shrinkage towards
    ``mu * I`` is estimated by the formula of Ledoit and Wolf, "A well-conditioned
    estimator for large-dimensional covariance matrices", J. Multivariate
    Analysis 88 (2004), and the result is scaled back. This is what
    scikit-learn's LDA does with ``shrinkage="auto"``, but computed from the
    mergeable statistics rather than the rows.

    Parameters
    ----------
    count : float
        Weighted number of samples ``n``.
    scatter : ndarray of shape (n_features, n_features)
        ``sum_i w_i c_i c_i^T`` with ``c_i`` the centred rows.
    fourth : ndarray of shape (n_features, n_features)
        ``sum_i w_i c_ij^2 c_ik^2``.

    Returns
    -------
    cov : ndarray of shape (n_features, n_features)
    shrinkage : float in [0, 1]
    """
    d = scatter.shape[0]
    s = np.sqrt(np.diag(scatter) / count)
    s[s < 10 * np.finfo(np.float64).eps] = 1.0
    emp = scatter / count / np.outer(s, s)
    if d == 1:
        return emp * np.outer(s, s), 0.0
    mu = np.trace(emp) / d
    inv_s2 = 1.0 / s**2
    beta_ = inv_s2 @ fourth @ inv_s2
    delta_ = np.sum(emp**2)
    beta = (beta_ / count - delta_) / (d * count)
    delta = (delta_ - 2.0 * mu * np.trace(emp) + d * mu**2) / d
    beta = min(beta, delta)
    shrinkage = 0.0 if beta == 0 else beta / delta
    shrunk = (1.0 - shrinkage) * emp
    shrunk.flat[:: d + 1] += shrinkage * mu
    return shrunk * np.outer(s, s), float(shrinkage)


class _DiscriminantBase(BayesClassifier):
    def _priors(self):
        if self.priors is not None:
            return check_priors(self.priors, len(self.classes_))
        count = self.stats_.count
        return count / count.sum()


class LinearDiscriminantAnalysis(_DiscriminantBase):
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
    priors : array-like of shape (n_classes,), optional
        Class priors; default the (weighted) class frequencies.
    shrinkage : None, "auto" or float in [0, 1], default=None
        ``None``: no shrinkage. A float ``a``: ``(1 - a) Sigma + a tr(Sigma)/d I``.
        ``"auto"``: each class covariance is shrunk with its own Ledoit-Wolf
        intensity (on standardised features) before pooling, as in
        scikit-learn's ``lsqr``/``eigen`` solvers.
    tol : float, default=1e-4
        Relative rank threshold (see above).

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
        priors("priors"),
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
    )
    # The second for shrinkage="auto", which shrinks each class on its own.
    statistics = (PooledScatter, ClassScatter)
    min_samples_per_class = 2

    def __init__(self, *, priors=None, shrinkage=None, tol=1e-4):
        self.priors = priors
        self.shrinkage = shrinkage
        self.tol = tol

    def accumulate(self, X, y_idx, sample_weight, n_classes):
        # Ledoit-Wolf shrinks each class on its own, so it needs per-class
        # moments; otherwise one pooled scatter matrix is all LDA uses.
        if self.shrinkage == "auto":
            return ClassScatter.from_data(X, y_idx, sample_weight, n_classes, higher=True)
        return PooledScatter.from_data(X, y_idx, sample_weight, n_classes)

    def finalize(self):
        st = self.stats_
        d = st.mean.shape[1]
        count = st.count
        total = count.sum()
        present = count > 0
        if self.shrinkage == "auto":
            if not isinstance(st, ClassScatter):
                raise ValueError(
                    "shrinkage='auto' needs per-class statistics; refit the model with it"
                )
            cov = np.zeros((d, d))
            intensities = np.zeros(len(count))
            for k in np.flatnonzero(present):
                ck, intensities[k] = ledoit_wolf_from_stats(count[k], st.scatter[k], st.fourth[k])
                cov += (count[k] / total) * ck
            self.shrinkage_ = intensities
        else:
            if not isinstance(st, PooledScatter):
                raise ValueError(
                    "these statistics were gathered for shrinkage='auto'; refit to change it"
                )
            cov = st.within / total
            if self.shrinkage is not None and self.shrinkage > 0:
                a = float(self.shrinkage)
                mu = np.trace(cov) / d
                cov = (1.0 - a) * cov
                cov.flat[:: d + 1] += a * mu
        self.covariance_ = cov
        self.means_ = st.mean.copy()
        self.priors_ = self._priors()

        std = np.sqrt(np.diag(cov))
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
            shown = ", ".join(str(names[i]) if names is not None else f"x{i}" for i in involved)
            if self.rank_ == 0:
                why = (
                    "; with one sample per class there is no within-class spread"
                    if np.all(count[present] <= 1)
                    else ""
                )
                raise ValueError(
                    f"every direction of the within-class covariance is constant or collinear "
                    f"(features {shown}); LDA has nothing left to score with{why}"
                )
            warnings.warn(
                CollinearWarning(
                    f"variables are collinear: {d - self.rank_} of {d} directions of the "
                    f"within-class covariance dropped (features {shown})",
                    involved,
                    d - self.rank_,
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
    is ``2 sum log diag L_k`` and the Mahalanobis term a triangular solve for
    a whole block of rows at once (no inverse is formed).

    Parameters
    ----------
    priors : array-like of shape (n_classes,), optional
    reg_param : float in [0, 1], default=0.0

    Attributes
    ----------
    classes_, priors_ (n_classes,), means_ (n_classes, n_features),
    covariance_ (n_classes, n_features, n_features) regularised,
    log_det_ (n_classes,), stats_ : ClassScatter

    Raises
    ------
    ValueError
        When a class's covariance is singular: fewer samples than features,
        a feature constant within the class, or collinear features, with
        ``reg_param=0``. The message names the class.

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
    )
    statistics = (ClassScatter,)
    min_samples_per_class = 2

    def __init__(self, *, priors=None, reg_param=0.0):
        self.priors = priors
        self.reg_param = reg_param

    def accumulate(self, X, y_idx, sample_weight, n_classes):
        return ClassScatter.from_data(X, y_idx, sample_weight, n_classes)

    def finalize(self):
        st = self.stats_
        K, d = st.mean.shape
        r = float(self.reg_param)
        self.means_ = st.mean.copy()
        self.priors_ = self._priors()
        self.covariance_ = np.empty((K, d, d))
        self._chol = np.empty((K, d, d))
        self.log_det_ = np.empty(K)
        for k in range(K):
            label = self.classes_[k]
            n_k = st.count[k]
            if n_k <= 0:
                raise ValueError(
                    f"class {label_text(label)} has no samples (all its weights are zero)"
                )
            if r == 0 and n_k <= d:
                raise ValueError(
                    f"class {label_text(label)} has {n_k:g} samples for {d} features, so its covariance "
                    "is singular; QDA needs reg_param > 0 here"
                )
            cov = (1.0 - r) * st.scatter[k] / n_k
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
                raise ValueError(
                    f"the covariance of class {label_text(label)} is singular (a feature constant "
                    "within the class, or collinear features); set reg_param > 0"
                )
            self._chol[k] = L
            self.log_det_[k] = 2.0 * np.sum(np.log(np.diag(L)))
        with np.errstate(divide="ignore"):
            self._const = np.log(self.priors_) - 0.5 * (self.log_det_ + d * _LOG_2PI)

    def joint_log_likelihood_block(self, X):
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
