"""Gaussian naive Bayes."""

from __future__ import annotations

import numpy as np

from nbcli.models._base import (
    BayesClassifier,
    ColumnUndeterminedError,
    EmptyColumnError,
    NoObservedValueError,
    UndeterminedError,
)
from nbcli.models._gaussian_terms import (  # noqa: F401
    _LOG_2PI,
    EPSILON_SHARE,
    StandardisedTerms,
    large_epsilon,
    smoothing_epsilon,
)
from nbcli.models._indicative import GAUSSIAN_DEFINITION, gaussian_divergences
from nbcli.models._logspace import _log_normalise_columns
from nbcli.models._projection import Projected
from nbcli.models._sklearn_api import NaiveBayesAPI
from nbcli.models._stats import ClassMoments, ClassScatter, means_about
from nbcli.models._table_stats import MixedStats, ObservedMoments
from nbcli.models._validation import check_priors, label_text
from nbcli.models.hyperparameters import (
    bandwidth,
    bandwidth_adjust,
    missing,
    numeric_estimator,
    pca,
    priors,
    standardize,
    var_smoothing,
    var_smoothing_scale,
)


class GaussianNB(Projected, NaiveBayesAPI, BayesClassifier):
    """Gaussian naive Bayes: features independent and normal within each class.

    The likelihood of class ``k`` is ``prod_j N(x_j; theta_kj, var_kj)`` with
    the maximum-likelihood mean ``theta_kj`` and variance ``var_kj`` of the
    class's samples (Murphy, *Machine Learning: A Probabilistic Perspective*,
    2012, section 3.5). The joint log-likelihood is a quadratic form whose
    per-class constants are precomputed at fit time, so scoring a block of
    rows is two matrix products::

        log p(x, k) = log pi_k - 1/2 sum_j log(2 pi var_kj)
                      - 1/2 sum_j (x_j - theta_kj)^2 / var_kj
                    = c_k + z @ b_k - 1/2 (z * z) @ a_k

    where ``z`` is ``x`` centred and divided by the overall standard
    deviation. The centre of each feature is the precision-weighted mean of
    the class means, which sits on the tightest class, where the expansion
    would cancel worst; scaling keeps squares of large or tiny magnitudes
    (1e150, 1e-150) in range. The few features on which rounding in the
    expansion could still exceed about 1e-10 nats (two classes tight around
    different values) are scored exactly, class by class.

    Parameters
    ----------
    priors : array-like of shape (n_classes,), optional
        Prior probabilities of the classes, in the order of ``classes_``; must
        be non-negative and sum to 1. Default: the classes' (weighted)
        relative frequencies in the training data.
    var_smoothing : float, default=1e-9
        Fraction of the largest feature variance (over all training data)
        added to every per-class variance, which keeps a feature that is
        constant within a class from giving a zero variance. Same meaning as
        in scikit-learn.
    var_smoothing_scale : {"global", "feature"}, default="global"
        ``"global"``: ``epsilon = var_smoothing * max_j var_j``, as
        scikit-learn (a column of large units then sets every feature's
        smoothing); ``"feature"``: ``epsilon_j = var_smoothing * var_j``,
        each feature's own variance, so rescaling a column changes no
        posterior. A feature constant in all the training data has no
        variance to scale: it gets the global epsilon, the same in every
        class, which changes no posterior (see :func:`smoothing_epsilon`).
    numeric_estimator : {"gaussian", "kernel", "discretized"}, default="gaussian"
        The class-conditional distribution of every feature: normal (the
        model above), a Gaussian kernel density of the class's values, or
        the feature cut at Fayyad and Irani's MDL cut points with one
        Laplace-smoothed probability per interval (Weka NaiveBayes' ``-K``
        and ``-D``). The last two are the estimators of
        :class:`nbcli.models.MixedNB`'s ``kernel`` and ``discretized``
        columns, applied to every feature (see its docstring): the
        statistics are then the distinct values of each feature with their
        weight per class (:class:`~nbcli.models._table_stats.MixedStats`),
        which merge exactly, and the model scores as that mixed model with
        ``alpha=1`` and these ``priors``. ``var_smoothing`` then does
        nothing; ``pca`` and ``standardize`` are refused with them.
    bandwidth_adjust : float, default=1.0
        With ``numeric_estimator="kernel"``: multiplier of every bandwidth.
    bandwidth : {"nrd0", "weka"}, default="nrd0"
        With ``numeric_estimator="kernel"``: Silverman's rule of thumb
        (R's ``bw.nrd0``), or Weka ``NaiveBayes -K``'s estimator.
    missing : {"error", "ignore", "drop"}, default="error"
        ``"ignore"``: a NaN cell is left out of its feature's weight, mean
        and variance in its class at fit (the statistics keep per class and
        feature observed weights) and out of the product at predict:
        ``log p(x, k) = log pi_k + sum_{j observed} log N(x_j; theta_kj,
        var_kj)``, exact marginalisation under missing-at-random, and
        ``var_j`` behind ``epsilon`` is that of the observed cells.
        ``"drop"``: rows with a NaN cell are skipped at fit (counted in
        ``n_dropped_``) and get NaN posteriors at predict. Under ``pca`` or
        ``standardize``, ``"ignore"`` acts as ``"drop"``.
    pca : int, float or None, default=None
        Fit on the first principal components of the training rows: a count,
        or the fewest components whose share of the variance exceeds a
        fraction in (0, 1) (see :mod:`nbcli.models._projection`); the
        statistics are then per-class scatter matrices in the input space.
        The same as scikit-learn's ``Pipeline([PCA(pca), GaussianNB()])``.
    standardize : bool, default=False
        Centre and scale every column to unit variance first (before
        ``pca``), as scikit-learn's ``StandardScaler``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    class_count_ : ndarray of shape (n_classes,)
        Weighted number of training samples per class.
    class_prior_ : ndarray of shape (n_classes,)
    theta_ : ndarray of shape (n_classes, n_features)
        Per-class feature means.
    var_ : ndarray of shape (n_classes, n_features)
        Per-class feature variances, including ``epsilon_``.
    epsilon_ : float, or ndarray of shape (n_features,)
        ``var_smoothing`` times the largest feature variance; with
        ``var_smoothing_scale="feature"``, one value per feature.
    zero_variance_ : ndarray of shape (n_pairs, 2), int
        ``(class index, feature index)`` pairs whose within-class variance is
        zero before smoothing: their variance is ``epsilon`` alone, which can
        rule the class out on that feature by itself.
    zero_variance_spread_ : ndarray of shape (n_pairs,), bool
        For each pair of ``zero_variance_``: True where the class's values of
        the feature are not all equal (the mean differs from a value), so
        that their variance underflowed float64 (values near 1e-310) rather
        than being zero.
    large_epsilon_ : ndarray of shape (n_pairs, 2), int
        ``(class index, feature index)`` pairs whose within-class variance is
        positive but below ``epsilon / EPSILON_SHARE``: the smoothing adds
        more than :data:`EPSILON_SHARE` (10%) to it, which moves posteriors.
        Under the global scale a column in large units causes it.
    largest_variance_feature_ : int
        The feature whose variance (over all training data) is the largest:
        the one that sets ``epsilon_`` under the global scale.
    n_dropped_ : int
        Training rows skipped for a missing cell (``missing="drop"``).
    stats_ : ClassMoments, ObservedMoments with ``missing="ignore"``, ClassScatter with ``pca``
        Mergeable sufficient statistics, in the input space.
    projection_ : Projection or None
        With ``pca`` or ``standardize``: the centring, scaling and principal
        axes applied to raw rows; ``theta_``, ``var_`` and the rest are then
        in the projected space.
    columns_ : MixedNB or None
        With a ``numeric_estimator`` other than ``"gaussian"``: the fitted
        model of the features (``bandwidth_``, ``cut_points_``,
        ``interval_log_prob_``, ...), which scores the rows; ``theta_``,
        ``var_`` and ``epsilon_`` are then not set. None otherwise.

    Notes
    -----
    With ``sample_weight``, the variance behind ``epsilon_`` is weighted too,
    so that a weight of 2 equals a repeated row; scikit-learn's ``GaussianNB``
    uses the unweighted variance there. Without weights the two agree.

    Examples
    --------
    >>> import numpy as np
    >>> from nbcli.models import GaussianNB
    >>> X = np.array([[1.0, 2.1], [1.3, 1.8], [0.8, 2.4], [3.1, 4.0], [2.7, 4.3], [3.4, 3.7]])
    >>> model = GaussianNB().fit(X, ["a", "a", "a", "b", "b", "b"])
    >>> model.predict([[1.0, 2.0], [3.0, 4.0]]).tolist()
    ['a', 'b']
    >>> model.predict_proba([[1.0, 2.0]]).shape
    (1, 2)

    Every feature a kernel density instead (Weka NaiveBayes ``-K``):

    >>> kernel = GaussianNB(numeric_estimator="kernel").fit(X, ["a", "a", "a", "b", "b", "b"])
    >>> kernel.predict([[1.0, 2.0], [3.0, 4.0]]).tolist()
    ['a', 'b']
    >>> kernel.columns_.bandwidth_.shape
    (2, 2)
    """

    name = "gaussian"

    def scoring_form(self):
        from nbcli.models._forms import DiagonalGaussianForm

        self._check_fitted()
        if self.columns_ is not None:
            return self.columns_.scoring_form()
        with np.errstate(divide="ignore"):
            log_prior = np.log(self.class_prior_)
        log_norm = -0.5 * np.log(2.0 * np.pi * self.var_)
        return DiagonalGaussianForm(self.theta_, 1.0 / np.sqrt(self.var_), log_norm, log_prior)

    sklearn_equivalent = "sklearn.naive_bayes.GaussianNB"
    fit_checks = ("gaussian_spread",)
    # As scikit-learn's GaussianNB on float32 input (scoring in float32 too).
    float32_attributes = ("theta_", "var_", "class_count_", "class_prior_")
    hyperparameters = (
        priors("priors"),
        var_smoothing(),
        var_smoothing_scale(),
        numeric_estimator(),
        bandwidth_adjust(),
        bandwidth(),
        missing(),
        pca(),
        standardize(),
    )
    indicative_definition = GAUSSIAN_DEFINITION
    inspection_sections = ("column_parameters",)
    statistics = (ClassMoments, ObservedMoments, ClassScatter, MixedStats)
    _pca_shapes = {k: v for k, v in ClassScatter.shapes.items() if k not in ClassScatter.optional}
    _pca_only = (ClassScatter,)
    # One sample per class gives no variance.
    min_samples_per_class = 2

    def indicative_features(self) -> tuple[np.ndarray, np.ndarray]:
        """Per class and feature (n_classes, n_features): the divergence of
        :data:`~nbcli.models._indicative.GAUSSIAN_DEFINITION`, and whether
        the class mean lies above the other classes'. Kernel and discretized
        features are not ranked (NaN: ``learnt_columns`` describes them)."""
        if self.columns_ is not None:
            return self.columns_.indicative_features()
        return gaussian_divergences(self, self.theta_, self.var_)

    def learnt_columns(self) -> list[dict]:
        """Per feature, ``{"type": "gaussian", "mean", "variance"}``: arrays of
        shape (n_classes,), the variance with ``epsilon_``, as scoring uses it; for
        kernel or discretized features, what ``columns_`` learnt (see
        :meth:`nbcli.models.MixedNB.learnt_columns`)."""
        if self.columns_ is not None:
            return self.columns_.learnt_columns()
        return [
            {"type": "gaussian", "mean": self.theta_[:, j], "variance": self.var_[:, j]}
            for j in range(self.theta_.shape[1])
        ]

    def __init__(
        self,
        *,
        priors=None,
        var_smoothing=1e-9,
        var_smoothing_scale="global",
        numeric_estimator="gaussian",
        bandwidth_adjust=1.0,
        bandwidth="nrd0",
        missing="error",
        pca=None,
        standardize=False,
    ):
        self.priors = priors
        self.var_smoothing = var_smoothing
        self.var_smoothing_scale = var_smoothing_scale
        self.numeric_estimator = numeric_estimator
        self.bandwidth_adjust = bandwidth_adjust
        self.bandwidth = bandwidth
        self.missing = missing
        self.pca = pca
        self.standardize = standardize

    def check_hyperparameters(self) -> None:
        super().check_hyperparameters()
        self._check_projection()

    def _check_projection(self) -> None:
        super()._check_projection()
        if self._by_columns and self._projects:
            raise ValueError(
                f"numeric_estimator={self.numeric_estimator!r} models each feature as it is; "
                "it cannot be combined with pca or standardize (use numeric_estimator="
                "'gaussian')"
            )

    # -- kernel and discretized features: the mixed model's columns ---------------
    @property
    def _by_columns(self) -> bool:
        """Whether the features are kernel or discretized columns (``columns_``)."""
        return self.numeric_estimator != "gaussian"

    @property
    def _scan_for_nonfinite(self) -> bool:
        # The columns' scores leave a NaN cell out rather than showing it.
        return self._by_columns

    def gathered_statistics(self) -> list[dict[str, str]]:
        own = dict(MixedStats.shapes)
        if self._by_columns:
            return [own]
        return [shapes for shapes in super().gathered_statistics() if shapes != own]

    def _columns_model(self):
        """The mixed model whose every column is of the ``numeric_estimator`` type,
        with this model's classes, features and settings (not fitted)."""
        from nbcli.models.mixed import MixedNB

        inner = MixedNB(
            column_types=self.numeric_estimator,
            numeric_estimator=self.numeric_estimator,
            bandwidth_adjust=self.bandwidth_adjust,
            bandwidth=self.bandwidth,
            class_prior=self.priors,
            missing=self.missing,
        )
        inner.n_features_in_ = self.n_features_in_
        if hasattr(self, "classes_"):
            inner.classes_ = self.classes_
        names = getattr(self, "feature_names_in_", None)
        if names is not None:
            inner.feature_names_in_ = names
        return inner

    def merge_statistics(self, a, b):
        if isinstance(a, MixedStats):
            # The mixed model names the column whose distinct values overflow.
            inner = self._columns_model()
            inner._layout = inner._resolve_layout()
            return inner.merge_statistics(a, b)
        return super().merge_statistics(a, b)

    def _finalize_columns(self) -> None:
        """``finalize`` of kernel or discretized features: the mixed model's."""
        if not isinstance(self.stats_, MixedStats):
            raise ValueError(
                f"numeric_estimator={self.numeric_estimator!r} needs the distinct values of "
                "each feature, which these statistics do not hold; refit the model with it"
            )
        inner = self._columns_model()
        inner.stats_ = self.stats_
        inner.finalize()
        self.columns_ = inner
        self.class_count_ = inner.class_count_.copy()
        self.class_prior_ = np.exp(inner.class_log_prior_)
        for attr in ("theta_", "var_", "epsilon_", "_terms", "_centre", "_terms_about"):
            self.__dict__.pop(attr, None)
        # What the fit workflow's warnings read: no variances, nothing to warn of.
        self.zero_variance_ = np.zeros((0, 2), dtype=np.intp)
        self.zero_variance_spread_ = np.zeros(0, dtype=bool)
        self.large_epsilon_ = np.zeros((0, 2), dtype=np.intp)
        self.largest_variance_feature_ = -1

    def _projected_type(self, stats) -> type:
        return ClassMoments

    @staticmethod
    def _update_mean_variance(n_past, mu, var, X, sample_weight=None):
        """One class's mean and variance after adding the rows ``X`` (scikit-learn's name).

        The earlier ``n_past`` (weighted) rows are summarised by their mean
        ``mu`` and variance ``var``; the new rows' moments come from
        :meth:`ClassMoments.from_data` and the two are merged by the pairwise
        update of Chan, Golub and LeVeque (1982), as chunks merge in ``fit``.

        Parameters
        ----------
        n_past : float
        mu, var : float or ndarray of shape (n_features,)
        X : array-like of shape (n_new, n_features)
        sample_weight : array-like of shape (n_new,), optional

        Returns
        -------
        total_mu, total_var : ndarray of shape (n_features,)
            ``mu`` and ``var`` unchanged when ``X`` has no rows (or no weight).
        """
        X = np.asarray(X, dtype=np.float64)
        w = None if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        if X.shape[0] == 0 or (w is not None and not w.sum() > 0):
            return mu, var
        d = X.shape[1]
        new = ClassMoments.from_data(X, np.zeros(X.shape[0], dtype=np.intp), w, 1)
        if not n_past > 0:
            return new.mean[0], new.m2[0] / new.count[0]
        mean = np.broadcast_to(np.asarray(mu, dtype=np.float64), (1, d)).copy()
        past = ClassMoments(
            count=np.array([float(n_past)]),
            shift=mean,
            offset=np.zeros((1, d)),
            m2=np.broadcast_to(np.asarray(var, dtype=np.float64) * n_past, (1, d)).copy(),
        )
        total = past.merge(new)
        return total.mean[0], total.m2[0] / total.count[0]

    def accumulate(self, X, y_idx, sample_weight, n_classes):
        if self._by_columns:
            return self._columns_model().accumulate(X, y_idx, sample_weight, n_classes)
        if self.pca is not None:
            # Principal axes need the full scatter of every class.
            return ClassScatter.from_data(X, y_idx, sample_weight, n_classes)
        if self.missing_policy == "ignore":
            return ObservedMoments.from_data(X, y_idx, sample_weight, n_classes)
        return ClassMoments.from_data(X, y_idx, sample_weight, n_classes)

    def finalize(self):
        if self._by_columns:
            return self._finalize_columns()
        if isinstance(self.stats_, MixedStats):
            raise ValueError(
                "these statistics are a kernel or discretized model's distinct values; "
                "numeric_estimator='gaussian' needs moments: refit the model with it"
            )
        self.columns_ = None
        st = self.stats_
        count = st.class_counts
        if isinstance(st, ObservedMoments):
            n_all, _, m2_all = st.pooled()
            total = float(count.sum())
            with np.errstate(divide="ignore", invalid="ignore"):
                var_all = np.where(n_all > 0, m2_all / n_all, 0.0)
            cell_count = st.count
        else:
            total, _, m2_all = st.pooled()
            var_all = m2_all / total
            cell_count = np.repeat(count[:, None], var_all.shape[0], axis=1)
        eps = smoothing_epsilon(self.var_smoothing, var_all, self.var_smoothing_scale)
        # One number under the global scale, as scikit-learn's epsilon_.
        self.epsilon_: float | np.ndarray = (
            eps if self.var_smoothing_scale == "feature" else float(eps[0]) if eps.size else 0.0
        )
        if not np.all(np.isfinite(eps)) and np.all(np.isfinite(var_all)):
            raise ValueError(
                f"var_smoothing={self.var_smoothing:g} is too large: times the feature "
                "variance it overflows float64; use a fraction such as 1e-9 to 1"
            )
        present = count > 0
        unobserved = present[:, None] & (cell_count <= 0)
        if unobserved.any():
            k, j = np.argwhere(unobserved)[0]
            # No value in any class: only leaving the column out helps.
            error = EmptyColumnError if not np.any(cell_count[:, j] > 0) else NoObservedValueError
            where = (
                "training" if error is EmptyColumnError else f"class {label_text(self.classes_[k])}"
            )
            raise error(
                int(j),
                f" has no observed value in {where}; a mean and variance need at least one",
                names=getattr(self, "feature_names_in_", None),
            )
        with np.errstate(divide="ignore", invalid="ignore"):
            var = np.where(cell_count > 0, st.m2 / cell_count, 0.0)
        self.zero_variance_ = np.argwhere(present[:, None] & (var <= 0))
        # Equal values give an offset of exactly 0 from the class's first value.
        k, j = self.zero_variance_.T
        self.zero_variance_spread_ = st.offset[k, j] != 0
        self.large_epsilon_ = large_epsilon(present, var, eps)
        self.largest_variance_feature_ = int(np.argmax(var_all)) if var_all.size else -1
        self.var_ = var + eps
        self.theta_ = st.mean.copy()
        self.class_count_ = count.copy()
        if self.priors is not None:
            self.class_prior_ = check_priors(self.priors, len(self.classes_))
        else:
            self.class_prior_ = count / count.sum()
        if not np.any(var_all > 0) and self.var_smoothing > 0:
            raise UndeterminedError(
                f"every feature is constant in the training data (n_samples = {total:g}), so "
                "there is no variance to smooth with; Gaussian NB needs at least one feature "
                "that varies (one sample is not enough)"
            )
        if np.any(self.var_[present] <= 0):
            k, j = np.argwhere(present[:, None] & (self.var_ <= 0))[0]
            fix = "set var_smoothing > 0"
            raise ColumnUndeterminedError(
                int(j),
                f" has zero variance in class {label_text(self.classes_[k])}; {fix}",
                names=getattr(self, "feature_names_in_", None),
            )
        self._terms, reference, centre_ref = self._standardised_terms(var_all)
        # What log_proba_together needs to score models of these statistics about one centre.
        self._centre = (reference, centre_ref, var_all)
        self.__dict__.pop("_terms_about", None)

    def _standardised_terms(self, var_all, centre_ref=None):
        """``(terms, reference, centre_ref)``: the scoring constants in
        standardised coordinates ``z = (x - centre) / scale``
        (:class:`StandardisedTerms`), with ``centre = reference + centre_ref``.

        The centre is the precision-weighted mean of the class means, so it
        sits on the mean of the tightest class, where cancellation would cost
        most; ``centre_ref`` (n_features,), relative to the first present
        class's shift, puts it elsewhere (another model's centre, for
        :meth:`log_proba_together`): the same densities, rounded about that
        point instead.
        """
        st = self.stats_
        scale = np.sqrt(var_all)
        scale[~(scale > 0)] = 1.0
        present = st.class_counts > 0
        reference = st.shift[np.flatnonzero(present)[0]]
        if centre_ref is None:
            precision = 1.0 / self.var_[present]
            centre_ref = (precision * means_about(st, reference)[present]).sum(
                axis=0
            ) / precision.sum(axis=0)
        centre = reference + centre_ref
        var_z = self.var_ / scale**2
        theta_z = (means_about(st, reference) - centre_ref) / scale
        a = 1.0 / var_z
        # Features whose expanded terms would be large enough for rounding
        # to matter (more than ~1e-10 nats) are scored exactly, class by class.
        stiff = np.zeros(a.shape[1], dtype=bool)
        stiff[:] = (a[present] * theta_z[present] ** 2).max(axis=0) > 1e6
        flat = ~stiff
        with np.errstate(divide="ignore"):
            log_prior = np.log(self.class_prior_)
        terms = StandardisedTerms.of(
            centre,
            scale,
            theta_z,
            a,
            stiff,
            self.var_,
            c=log_prior
            - 0.5 * np.sum(_LOG_2PI + np.log(self.var_), axis=1)
            - 0.5 * np.sum(theta_z**2 * a * flat, axis=1),
        )
        return terms, reference, centre_ref

    @classmethod
    def log_proba_together(cls, models: list, X: np.ndarray) -> list[np.ndarray] | None:
        """``predict_log_proba(X)`` of several models of the same statistics at once, or None.

        The models of one fold in a search differ in ``var_smoothing`` only:
        their class means, and the overall spread that scales the rows, are
        the same. The rows are then standardised once, about the first
        model's centre (each other model's terms taken about that centre:
        the same densities, rounded about another point), and every model's
        joint log-likelihood comes from two products of the rows with the
        models' terms stacked, instead of three passes over the rows per
        model.

        Parameters
        ----------
        models : list of GaussianNB
            Fitted on moments (not kernel or discretized columns), without a
            projection.
        X : ndarray of shape (n_samples, n_features)

        Returns
        -------
        list of ndarray of shape (n_samples, n_classes), or None
            Entry ``i`` for ``models[i]``; None when the models cannot be
            scored together (different statistics, columns scored exactly,
            float32 scores, missing or non-finite cells: each model's own
            :meth:`predict_log_proba` then scores, and refuses, as usual).
        """
        from nbcli.models._missing import all_finite

        first = models[0]
        if len(models) < 2 or any(
            m.__dict__.get("columns_") is not None
            or "_centre" not in m.__dict__
            or m._scores_float32
            or m.__dict__.get("projection_") is not None
            for m in models
        ):
            return None
        reference, centre_ref, var_all = first._centre
        terms = [first._terms]
        for m in models[1:]:
            ref, _, var = m._centre
            if not (np.array_equal(ref, reference) and np.array_equal(var, var_all)):
                return None
            # A fold's models score its held rows piece by piece: the terms
            # about the first model's centre are made once (that centre's
            # array is held by the first model, so its identity names it).
            about = m.__dict__.get("_terms_about")
            if about is None or about[0] is not centre_ref:
                about = (centre_ref, m._standardised_terms(var_all, centre_ref)[0])
                m._terms_about = about
            terms.append(about[1])
        if any(t.stiff.size for t in terms):
            return None
        rows = first._check_predict_input(X)
        if rows.shape[0] == 0 or not all_finite(rows):
            return None
        k, n_models = len(first.classes_), len(models)
        A = np.vstack([t.aT for t in terms])
        B = np.vstack([t.bT for t in terms])
        C = np.vstack([t.c for t in terms])
        out = np.empty((n_models, rows.shape[0], k))
        step = max(64, (1 << 18) // max(1, rows.shape[1]))
        for lo in range(0, rows.shape[0], step):
            Z = rows[lo : lo + step] - first._terms.centre
            Z *= first._terms.inv_scale
            jll = B @ Z.T
            Z *= Z
            jll += A @ Z.T
            jll += C
            # Every model's classes as the rows of one class-major block: the
            # normalisation works column by column, so one call does all.
            m = jll.shape[1]
            block = jll.reshape(n_models, k, m).transpose(1, 0, 2).reshape(k, n_models * m)
            _log_normalise_columns(block)
            out[:, lo : lo + m] = block.reshape(k, n_models, m).transpose(1, 2, 0)
        return list(out)

    def joint_log_likelihood_block(self, X):
        columns = self.__dict__.get("columns_")
        if columns is not None:
            return columns.joint_log_likelihood_block(X)
        out = self._scores(X, None)
        if self.missing_policy == "ignore" and np.isnan(out).any():
            # Only blocks with a missing cell pay for the mask.
            out = self._scores(X, np.isnan(X))
        return out

    def _scores(self, X, missing):
        return self._terms.scores(X, missing)
