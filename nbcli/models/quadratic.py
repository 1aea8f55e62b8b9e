"""Quadratic discriminant analysis: a Gaussian class-conditional with its own
full covariance per class."""

from __future__ import annotations

import numpy as np

from nbcli.models._base import UndeterminedError
from nbcli.models._covariance import ledoit_wolf_from_stats
from nbcli.models._projection import Projected
from nbcli.models._sklearn_api import qda_decision_offset
from nbcli.models._stats import ClassScatter
from nbcli.models._validation import label_text
from nbcli.models.discriminant import _LOG_2PI, _DiscriminantBase
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

PRODUCT_RCOND = 1e-5
"""QDA scores by products with the inverse Cholesky factors while every factor's
reciprocal condition number (1-norm, ``1 / (|L|_1 |L^-1|_1)``) is at least this; the
product's error then stays below ``1e6 eps`` of the Mahalanobis terms' size, as
the solve's does; below it, by triangular solves."""

# Elements of the block of centred rows QDA forms at a time (it stays in cache).
_QDA_PRODUCT_ELEMENTS = 1 << 18
# Row bands of the inverse factors: about this many rows each, at most this many.
_QDA_BAND_ROWS = 32
_QDA_MAX_BANDS = 4


class QuadraticDiscriminantAnalysis(Projected, _DiscriminantBase):
    """Quadratic discriminant analysis: Gaussian classes, each with its own covariance.

    Class ``k`` has the maximum-likelihood covariance ``S_k / n_k`` (as
    scikit-learn), or with ``covariance_method="moment"`` the unbiased
    ``S_k / (n_k - 1)`` of MASS's ``qda`` (Venables and Ripley, *Modern
    Applied Statistics with S*, 4th ed., 2002, section 12.1), regularised as
    ``(1 - reg_param) Sigma_k + reg_param I`` (as in scikit-learn). The joint log-likelihood is the multivariate normal log
    density plus the log prior (Hastie, Tibshirani and Friedman, *The
    Elements of Statistical Learning*, 2nd ed., 2009, section 4.3, eq. 4.12)::

        log p(x, k) = log pi_k - 1/2 log det(2 pi Sigma_k) - 1/2 ||L_k^-1 (x - mu_k)||^2

    with ``Sigma_k = L_k L_k'`` the Cholesky factorisation: the log-determinant
    is ``2 sum log diag L_k``. For the Mahalanobis term the inverse factors
    ``L_k^-1`` are formed once at fit, and a block of rows, centred at each
    class mean in turn, is multiplied by them, which runs at matrix-product
    speed where per-class triangular solves do not. Each factor is
    triangular, so its rows are taken in a few bands, each multiplied by
    the columns it has, for about two thirds of a full product's work. Where a
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
        Applied after any shrinkage, ``(1 - reg_param) Sigma_k + reg_param I``,
        with either solver. (For a fixed shrinkage the order does not matter.)
        scikit-learn 1.9 applies it only in its ``svd`` solver, which takes
        no shrinkage; its ``eigen`` solver leaves it out.
    covariance_method : {"mle", "moment"}, default="mle"
        The divisor of each class covariance: ``n_k`` (maximum likelihood,
        as scikit-learn) or ``n_k - 1`` (unbiased, MASS's default ``method =
        "moment"``), before shrinkage and ``reg_param``. Sample weights count
        as frequencies (``n_k`` their sum in the class, which must exceed 1).
    covariance_estimator : object, optional
        As LDA's (:func:`covariance_estimate`); not with ``shrinkage``.
    missing : {"error", "drop"}, default="error"
        As for :class:`LinearDiscriminantAnalysis`.
    pca : int, float or None, default=None
        Fit on the first principal components of the training rows, as
        scikit-learn's ``Pipeline([PCA(pca), QDA()])`` (see
        :class:`~nbcli.models.GaussianNB`); not with Ledoit-Wolf shrinkage.
    standardize : bool, default=False
        Standardise every column first, as scikit-learn's ``StandardScaler``.

    Attributes
    ----------
    classes_, priors_ (n_classes,), means_ (n_classes, n_features),
    covariance_ (n_classes, n_features, n_features) regularised (always
    set: ``store_covariance`` is accepted for scikit-learn's sake),
    log_det_ (n_classes,), rotations_ (list of n_classes arrays of shape
    (n_features, n_features)) and scalings_ (list of n_classes arrays of
    shape (n_features,)): as in scikit-learn, the eigenvectors (columns) and
    eigenvalues, in decreasing order, of each class's regularised
    covariance; stats_ : ClassScatter (in the input space); projection_ :
    Projection or None (with ``pca`` or ``standardize``, the parameters
    above are in the projected space)

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

    Examples
    --------
    >>> import numpy as np
    >>> from nbcli.models import QuadraticDiscriminantAnalysis
    >>> X = np.array([[1.0, 2.1], [1.3, 1.8], [0.8, 2.4], [3.1, 4.0], [2.7, 4.3], [3.4, 3.7]])
    >>> model = QuadraticDiscriminantAnalysis().fit(X, ["a", "a", "a", "b", "b", "b"])
    >>> model.predict([[1.0, 2.0], [3.0, 4.0]]).tolist()
    ['a', 'b']
    >>> model.predict_proba([[1.0, 2.0]]).shape
    (1, 2)
    """

    name = "qda"

    def scoring_form(self):
        from scipy.linalg import solve_triangular

        from nbcli.models._forms import QuadraticForm

        self._check_fitted()
        eye = np.eye(self.means_.shape[1])
        whiten = np.stack([solve_triangular(L, eye, lower=True) for L in self._chol])
        return QuadraticForm(self.means_, whiten, self._const)

    sklearn_equivalent = "sklearn.discriminant_analysis.QuadraticDiscriminantAnalysis"
    inspection_sections = ("class_covariances",)
    hyperparameters = (
        solver(("svd", "eigen")),
        shrinkage(on_command_line=False),
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
        store_covariance(),
        covariance_estimator(),
        missing(MISSING_ROWS_ONLY),
        covariance_method(),
        pca(),
        standardize(),
    )
    statistics = (ClassScatter,)
    _pca_shapes = {k: v for k, v in ClassScatter.shapes.items() if k not in ClassScatter.optional}
    min_samples_per_class = 2

    def __init__(
        self,
        *,
        solver="svd",
        shrinkage=None,
        priors=None,
        reg_param=0.0,
        store_covariance=False,
        covariance_estimator=None,
        missing="error",
        covariance_method="mle",
        pca=None,
        standardize=False,
    ):
        self.solver = solver
        self.shrinkage = shrinkage
        self.priors = priors
        self.reg_param = reg_param
        self.store_covariance = store_covariance
        self.covariance_estimator = covariance_estimator
        self.missing = missing
        self.covariance_method = covariance_method
        self.pca = pca
        self.standardize = standardize

    def check_hyperparameters(self) -> None:
        super().check_hyperparameters()
        self._covariance_kind()
        self._check_projection()

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
        self.scalings_: list[np.ndarray] = []
        self.rotations_: list[np.ndarray] = []
        for k in range(K):
            label = self.classes_[k]
            n_k = st.count[k]
            if n_k <= 0:
                raise UndeterminedError(
                    f"class {label_text(label)} has no samples (all its weights are zero)"
                )
            if self.covariance_method == "moment" and n_k <= 1:
                raise UndeterminedError(
                    f"class {label_text(label)} has {n_k:g} samples; the unbiased covariance "
                    "(covariance_method='moment', divisor n_k - 1) needs more than one"
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
            cov = self._class_covariance(k, kind)
            if self.covariance_method == "moment":
                # Linear in the scatter (Ledoit-Wolf's intensity is scale-free).
                cov = cov * (n_k / (n_k - 1.0))
            cov = (1.0 - r) * cov
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
            # scikit-learn's description of the same covariance: its
            # principal axes, variances in decreasing order.
            evals, evecs = np.linalg.eigh(cov)
            self.scalings_.append(evals[::-1].copy())
            self.rotations_.append(evecs[:, ::-1].copy())
        with np.errstate(divide="ignore"):
            self._const = np.log(self.priors_) - 0.5 * (self.log_det_ + d * _LOG_2PI)
        self._decision_offset = qda_decision_offset(d)
        self._product_factors()

    def _product_factors(self):
        """``_inv_chol`` of shape (K, d, d): the lower-triangular ``L_k^-1``, and its row bands.

        ``L_k^-1 (x - mu_k)`` is taken band by band of rows: band ``j`` needs
        only the columns up to its last row (the rest are zero), which saves
        a third of the product's work with three bands and still runs at
        matrix-product speed.
        """
        K, d = self.means_.shape
        # NumPy's inverse, not SciPy's triangular solve: scoring a well
        # conditioned model then never imports SciPy (a third of a small
        # command's time). Its rounding above the diagonal is cleared.
        try:
            inv = np.tril(np.linalg.inv(self._chol))
        except np.linalg.LinAlgError:
            self._use_product = False
            return
        with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
            rcond = 1.0 / (
                np.abs(self._chol).sum(axis=1).max(axis=1) * np.abs(inv).sum(axis=1).max(axis=1)
            )
        self._use_product = bool(K == 0 or np.min(rcond) >= PRODUCT_RCOND)
        if not self._use_product:
            return
        self._inv_chol = inv
        n_bands = min(_QDA_MAX_BANDS, max(1, d // _QDA_BAND_ROWS))
        edges = np.linspace(0, d, n_bands + 1).round().astype(int)
        self._bands = [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:])]

    def joint_log_likelihood_block(self, X):
        if self._use_product:
            return self._jll_product(X)
        return self._jll_solve(X)

    def _jll_product(self, X):
        # Each class's rows are centred at that class's own mean before the
        # product: centring at one shared point would leave a difference of
        # two large terms wherever class means lie far apart (mean 1e6, a
        # spread of 1e5 between classes), losing digits to cancellation.
        K, d = self.means_.shape
        n = X.shape[0]
        out = np.empty((K, n))
        step = min(n, max(16, _QDA_PRODUCT_ELEMENTS // max(1, d)))
        centred = np.empty((step, d))
        widest = max(b - a for a, b in self._bands)
        band = np.empty((widest, step))
        for lo in range(0, n, step):
            hi = min(n, lo + step)
            c = centred[: hi - lo]
            # L^-1 @ c.T rather than c @ L^-T: the product's output is then
            # (band rows, rows), the faster shape for BLAS here, and the
            # squares are summed down contiguous rows.
            ct = c.T
            for k in range(K):
                np.subtract(X[lo:hi], self.means_[k], out=c)
                mahalanobis = out[k, lo:hi]
                for j, (a, b) in enumerate(self._bands):
                    Z = np.matmul(self._inv_chol[k, a:b, :b], ct[:b], out=band[: b - a, : hi - lo])
                    if j == 0:
                        np.einsum("ij,ij->j", Z, Z, out=mahalanobis)
                    else:
                        mahalanobis += np.einsum("ij,ij->j", Z, Z)
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
