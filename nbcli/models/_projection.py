"""Standardisation and principal components inside a model, from mergeable statistics.

A model with ``pca`` or ``standardize`` set (Gaussian naive Bayes, LDA,
QDA) gathers its usual statistics *in the input space*: per-class counts,
means and, for ``pca``, full scatter matrices, merged chunk by chunk and
part by part exactly as without a projection (:mod:`nbcli.models._stats`).
Only :meth:`~nbcli.models._base.BayesClassifier.finalize` turns them into
a projection and the model in the projected space:

1. the total mean ``mu`` and total scatter ``T = sum_k S_k + sum_k n_k
   (mu_k - mu)(mu_k - mu)^T`` (the within-class scatters plus the
   between-class scatter; Chan's pairwise merge makes both exact sums);
2. ``standardize``: the scale ``s_j = sqrt(T_jj / n)`` (the population
   standard deviation, 1 for a constant column, as scikit-learn's
   ``StandardScaler``), and ``T <- T / (s s^T)``;
3. ``pca``: the eigendecomposition of ``T`` (``scipy.linalg.eigh``),
   eigenvalues in decreasing order, each eigenvector's sign chosen so that
   its entry of largest magnitude is positive (the first such entry on a
   tie; scikit-learn's ``svd_flip`` rule for PCA), and the first ``q``
   eigenvectors ``P`` kept (a count, or the fewest whose cumulative share
   of the variance exceeds a fraction, as scikit-learn's ``PCA`` counts);
4. each class's statistics in the projected space: mean ``P^T (mu_k -
   mu) / s``, scatter ``P^T (S_k / s s^T) P`` (LDA: the pooled
   within-class scatter the same way; Gaussian naive Bayes: its diagonal),
   which the model then finalises with its usual smoothing or
   regularisation.

Any number of components up to the number of features follows from the
same statistics, so a search over ``pca`` (``nbcli tune --pca 10,20,30``)
needs no refit; the eigendecomposition of one set of statistics is
computed once and kept with them (:func:`decomposition`). Rows are scored
as ``((x - mu) / s) @ P``, the projection the model file stores.

NumPy and SciPy only.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from nbcli.models._parallel import one_blas_thread
from nbcli.models._stats import ClassMoments, ClassScatter, PooledScatter, means_about

#: Values of the rows centred at once by :meth:`Projection.transform` (2 MiB of float64).
_TRANSFORM_BLOCK_VALUES = 1 << 18


@dataclass(frozen=True)
class Projection:
    """The affine map a model applies to raw rows: ``((x - centre) / scale) @ components``.

    Attributes
    ----------
    centre : ndarray of shape (n_features,)
        The (weighted) mean of the training rows.
    scale : ndarray of shape (n_features,)
        Population standard deviations with ``standardize`` (1 for a
        constant column), ones otherwise.
    components : ndarray of shape (n_features, n_components) or None
        Principal axes, unit columns in decreasing order of variance; None
        without ``pca`` (the standardised rows are the model's input).
    explained_variance : ndarray of shape (n_components,) or None
        Variance along each kept axis, with the ``n - 1`` divisor of
        scikit-learn's ``PCA.explained_variance_``.
    total_variance : float
        Sum of the variances of all axes (the same divisor); the share of
        component ``i`` is ``explained_variance[i] / total_variance``.
    """

    centre: np.ndarray
    scale: np.ndarray
    components: np.ndarray | None
    explained_variance: np.ndarray | None
    total_variance: float

    @property
    def n_components(self) -> int:
        """Width of the projected rows."""
        return self.centre.shape[0] if self.components is None else self.components.shape[1]

    @property
    def explained_variance_ratio(self) -> np.ndarray | None:
        """Share of the total variance along each kept axis, shape (n_components,)."""
        if self.explained_variance is None:
            return None
        return self.explained_variance / self.total_variance

    def transform(self, X: np.ndarray) -> np.ndarray:
        """Rows in the model's space, shape (n_rows, n_components).

        With components, the rows are centred and projected a block at a
        time: the centred block stays in cache instead of a centred copy of
        every row being made first.
        """
        if self.components is None:
            return self._centred(X)
        n, d = X.shape
        step = max(1, _TRANSFORM_BLOCK_VALUES // max(1, d))
        if n <= step:
            return self._centred(X) @ self.components
        out = np.empty((n, self.components.shape[1]), dtype=np.result_type(X, self.components))
        for lo in range(0, n, step):
            np.matmul(self._centred(X[lo : lo + step]), self.components, out=out[lo : lo + step])
        return out

    def _centred(self, X: np.ndarray) -> np.ndarray:
        Z = X - self.centre
        if np.any(self.scale != 1.0):
            Z /= self.scale
        return Z

    @property
    def component_names(self) -> list[str]:
        """``pc1``, ``pc2``, ...: what the model's features are called (none without ``pca``)."""
        n = 0 if self.components is None else self.n_components
        return [f"pc{i + 1}" for i in range(n)]

    def arrays(self) -> dict[str, np.ndarray]:
        """The projection as named float64 arrays (model-file members)."""
        out = {"centre": self.centre, "scale": self.scale}
        if self.components is not None and self.explained_variance is not None:
            out["components"] = self.components
            out["explained_variance"] = self.explained_variance
        out["total_variance"] = np.array([self.total_variance])
        return out

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> Projection:
        """Inverse of :meth:`arrays`."""
        return cls(
            centre=np.asarray(arrays["centre"], dtype=np.float64),
            scale=np.asarray(arrays["scale"], dtype=np.float64),
            components=arrays.get("components"),
            explained_variance=arrays.get("explained_variance"),
            total_variance=float(np.asarray(arrays["total_variance"]).ravel()[0]),
        )


def check_pca(pca, covariance_kind, other_way: str = "") -> None:
    """Refuse settings no projection follows from (the model's own check calls it).

    Raises
    ------
    ValueError
        For ``pca`` with Ledoit-Wolf shrinkage (its intensity needs fourth
        moments of the projected rows, which input-space statistics do not
        hold). The value of ``pca`` itself is checked by its spec.
    ``other_way``: another hyperparameter of the model that regularises
    (QDA's ``reg_param``), named in the message beside a fixed shrinkage.
    """
    if pca is not None and covariance_kind in ("auto", "ledoit-wolf"):
        raise ValueError(
            "pca cannot be combined with Ledoit-Wolf shrinkage (shrinkage='auto'): its "
            "intensity needs fourth moments of the projected rows; use a fixed shrinkage "
            f"such as 0.1{f', or {other_way}' if other_way else ''}"
        )


def _location(stats):
    """Total count, total mean (as ``reference + offset``) and class means about it."""
    count = stats.class_counts
    n = float(count.sum())
    present = np.flatnonzero(count > 0)
    reference = stats.shift[present[0]].copy()
    about = means_about(stats, reference)  # (K, d)
    about[count <= 0] = 0.0
    offset = (count @ about) / n
    return n, reference + offset, about - offset


def _between(count, D) -> np.ndarray:
    return (D * count[:, None]).T @ D


def _total_scatter(stats, D, count) -> np.ndarray:
    """The total scatter matrix: within-class scatter plus between-class scatter."""
    if isinstance(stats, ClassScatter):
        within = stats.scatter.sum(axis=0)
    elif isinstance(stats, PooledScatter):
        within = stats.within
    else:
        raise ValueError(
            "pca needs scatter matrices gathered with it; refit the model with pca set"
        )
    T = within + _between(count, D)
    return 0.5 * (T + T.T)


def _total_variances(stats, D, count) -> np.ndarray:
    """Diagonal of the total scatter: per-feature sums of squares about the total mean."""
    if isinstance(stats, ClassMoments):
        within = stats.m2.sum(axis=0)
    elif isinstance(stats, ClassScatter):
        within = np.einsum("kjj->j", stats.scatter)
    else:
        within = np.diag(stats.within).copy()
    return within + count @ (D * D)


def _standard_scale(var: np.ndarray, mean: np.ndarray, n: float) -> np.ndarray:
    """Population standard deviations, 1 where a column is constant.

    Constant as scikit-learn's ``StandardScaler`` judges it: a variance
    within rounding of zero, ``var <= n eps var + (n mean eps)^2``.
    """
    eps = np.finfo(np.float64).eps
    constant = var <= n * eps * var + (n * mean * eps) ** 2
    scale = np.sqrt(var)
    scale[constant] = 1.0
    return scale


def decomposition(stats, standardize: bool):
    """``(n, centre, scale, evals, evecs)`` of the (standardised) total scatter, kept with ``stats``.

    ``evals`` are the scatter's eigenvalues in decreasing order (clipped at
    zero), ``evecs`` the unit eigenvectors as columns with the sign rule of
    the module docstring. Computed once per statistics object: copies made
    by ``copy`` share it, so every ``pca`` value of a search, and every
    copy a fold model takes, reuses one eigendecomposition.
    """
    from scipy.linalg import eigh

    cache = stats.__dict__.setdefault("_derived", {})
    key = ("pca", bool(standardize))
    if key in cache:
        return cache[key]
    n, centre, D = _location(stats)
    count = stats.class_counts
    T = _total_scatter(stats, D, count)
    if standardize:
        scale = _standard_scale(np.diag(T) / n, centre, n)
        T = T / np.outer(scale, scale)
    else:
        scale = np.ones(T.shape[0])
    # On one BLAS thread: a d x d decomposition gains little from a second
    # one and loses several times over when the cores are busy.
    with one_blas_thread():
        evals, evecs = eigh(T, check_finite=False, driver="evd")
    evals = np.clip(evals[::-1], 0.0, None)
    evecs = np.ascontiguousarray(evecs[:, ::-1])
    biggest = np.argmax(np.abs(evecs), axis=0)
    signs = np.sign(evecs[biggest, np.arange(evecs.shape[1])])
    signs[signs == 0] = 1.0
    evecs *= signs
    out = (n, centre, scale, evals, evecs)
    cache[key] = out
    return out


def check_count(pca, n_features: int) -> None:
    """Refuse a count of components above ``n_features`` (a fraction, or none, passes).

    Raises
    ------
    ValueError
        Naming the count and the number of features.
    """
    if pca is not None and float(pca) >= 1.0 and int(float(pca)) > n_features:
        raise ValueError(
            f"pca={int(float(pca))} components, but the data have {n_features} features; "
            f"give at most {n_features}, or a fraction of the variance such as 0.95"
        )


def n_kept(pca, evals: np.ndarray, n_features: int, n: float | None = None) -> int:
    """Components kept for ``pca``: the count, or the fewest whose cumulative
    share of the variance exceeds the fraction (scikit-learn's rule).

    ``n`` is the training rows' total count (weights summed). A count may be
    at most ``min(rows, n_features)``, as scikit-learn's ``PCA`` allows:
    beyond the rows, components have no variance and no defined direction.
    The rows are ``n`` (or, with weights, at least one more than the
    numerical rank of the scatter, which centred rows cannot exceed).

    Raises
    ------
    ValueError
        For a count above the number of features or of rows.
    """
    value = float(pca)
    if value >= 1.0:
        q = int(value)
        check_count(pca, n_features)
        if n is not None and evals.size:
            tol = evals[0] * evals.size * np.finfo(np.float64).eps
            rank = int(np.count_nonzero(evals > tol))
            rows = max(int(np.floor(n + 1e-9)), rank + 1)
            if q > rows:
                raise ValueError(
                    f"pca={q} components, but the {rows} training rows support at most "
                    f"{rows} (their scatter has rank {rank}; PCA keeps at most "
                    f"min(rows, features) components); give at most {rows}, or a fraction "
                    "of the variance such as 0.95"
                )
        return q
    total = evals.sum()
    if not total > 0:
        raise ValueError("pca: the training rows have no variance to keep a fraction of")
    share = np.cumsum(evals) / total
    return int(min(np.searchsorted(share, value, side="right") + 1, n_features))


def projection_of(stats, pca, standardize: bool) -> Projection:
    """The projection the statistics give with these settings (see the module docstring)."""
    if pca is None:
        n, centre, D = _location(stats)
        var = _total_variances(stats, D, stats.class_counts) / n
        scale = _standard_scale(var, centre, n) if standardize else np.ones_like(var)
        return Projection(centre, scale, None, None, float(np.sum(var / scale**2)))
    n, centre, scale, evals, evecs = decomposition(stats, standardize)
    q = n_kept(pca, evals, evecs.shape[0], n)
    divisor = n - 1.0 if n > 1 else n
    return Projection(
        centre=centre,
        scale=scale,
        components=evecs[:, :q].copy(),
        explained_variance=evals[:q] / divisor,
        total_variance=float(evals.sum() / divisor),
    )


def projected_statistics(stats, projection: Projection, want: type):
    """The model's statistics of class ``want`` in the projected space.

    Counts are unchanged; class means become ``P^T (mu_k - mu) / s`` (their
    shift, with a zero offset); scatter matrices ``P^T (S / s s^T) P``
    (Gaussian naive Bayes: their diagonal). Without components ``P`` is the
    identity, and third and fourth co-moments (Ledoit-Wolf shrinkage) are
    rescaled by the powers of ``s`` they carry.
    """
    count = stats.class_counts.copy()
    D = means_about(stats, projection.centre)
    D[count <= 0] = 0.0
    s = projection.scale
    P = projection.components
    D = D / s
    mean = D if P is None else D @ P
    offset = np.zeros_like(mean)

    unscaled = bool(np.all(s == 1.0))

    def matrix(S):
        if not unscaled:
            S = S / np.outer(s, s)
        return S if P is None else (P.T @ S) @ P

    if want is ClassMoments:
        if isinstance(stats, ClassMoments):
            m2 = stats.m2 / s**2
        else:
            m2 = np.stack([np.diag(matrix(S)) for S in stats.scatter])
        return ClassMoments(count=count, shift=mean, offset=offset, m2=m2)
    if want is PooledScatter:
        return PooledScatter(count=count, shift=mean, offset=offset, within=matrix(stats.within))
    third = fourth = None
    if stats.third is not None and stats.fourth is not None:
        # Only without components (check_pca refuses pca with Ledoit-Wolf).
        s2 = s**2
        third = stats.third / (s2[:, None] * s[None, :])
        fourth = stats.fourth / np.outer(s2, s2)
    scatter = np.stack([matrix(S) for S in stats.scatter])
    return ClassScatter(
        count=count, shift=mean, offset=offset, scatter=scatter, third=third, fourth=fourth
    )


def _leading(wide: Projection, narrow: Projection) -> bool:
    """Whether ``narrow`` is ``wide`` restricted to its leading components."""
    P, Q = wide.components, narrow.components
    return (
        P is not None
        and Q is not None
        and Q.shape[1] <= P.shape[1]
        and np.array_equal(wide.centre, narrow.centre)
        and np.array_equal(wide.scale, narrow.scale)
        and np.array_equal(P[:, : Q.shape[1]], Q)
    )


def shared_log_proba(models: list, X: np.ndarray) -> list[np.ndarray]:
    """``model.predict_log_proba(X)`` for each of ``models``, the rows projected once per group.

    Models whose projections are one projection's leading components (the
    models of one set of statistics with different ``pca``: the axes are
    sorted by variance, so a projection to ``q`` components is the first
    ``q`` columns of one to more) score the rows projected once with the
    widest, each taking its leading columns: one product of the rows with
    the widest axes instead of one per model. Models without a projection
    are scored together where their class has a ``log_proba_together``
    (see :meth:`nbcli.models.GaussianNB.log_proba_together`), else one by
    one as usual.

    Parameters
    ----------
    models : list of BayesClassifier
        Fitted models of the same input width.
    X : ndarray of shape (n_samples, n_features)
        Raw rows, validated as for ``predict_log_proba``.

    Returns
    -------
    list of ndarray of shape (n_samples, n_classes)
        Entry ``i`` for ``models[i]``.

    Raises
    ------
    ValueError
        As ``predict_log_proba`` (infinity named in ``X``'s own columns).
    """
    from nbcli.models._missing import check_no_infinity

    out: list = [None] * len(models)
    groups: list[list] = []  # [widest projection, member indices]
    plain: dict[type, list[int]] = {}  # models without a projection, by class
    for i, model in enumerate(models):
        projection = model.__dict__.get("projection_")
        if projection is None or projection.components is None:
            plain.setdefault(type(model), []).append(i)
            continue
        for group in groups:
            if _leading(group[0], projection):
                group[1].append(i)
                break
            if _leading(projection, group[0]):
                group[0] = projection
                group[1].append(i)
                break
        else:
            groups.append([projection, [i]])
    for kind, members in plain.items():
        # A class that can score several models' rows at once says so
        # (GaussianNB.log_proba_together); None means one by one.
        together = getattr(kind, "log_proba_together", None)
        scored = together([models[i] for i in members], X) if together else None
        for n, i in enumerate(members):
            out[i] = scored[n] if scored is not None else models[i].predict_log_proba(X)
    for widest, members in groups:
        if len(members) == 1:
            out[members[0]] = models[members[0]].predict_log_proba(X)
            continue
        rows = models[members[0]]._check_predict_input(X)
        # As a model checks its raw rows before projecting them (a NaN is missing).
        check_no_infinity(rows)
        Z = widest.transform(rows)
        for i in members:
            out[i] = _in_projected_space(models[i]).predict_log_proba(
                Z[:, : models[i].projection_.n_components]
            )
    return out


def _in_projected_space(model):
    """A shallow copy of ``model`` that scores rows already projected by its projection."""
    import copy

    inner = copy.copy(model)
    inner.projection_ = None
    inner.n_features_in_ = model.projection_.n_components
    inner.__dict__.pop("feature_names_in_", None)
    return inner


# Models inside a wrapped call, per thread (scoring runs blocks in a thread
# pool): a subclass's method that calls its parent's is wrapped too, and the
# inner call must not project again.
_inside = threading.local()


@contextlib.contextmanager
def _once(model):
    ids = _inside.__dict__.setdefault("ids", set())
    outer = id(model) not in ids
    ids.add(id(model))
    try:
        yield outer
    finally:
        if outer:
            ids.discard(id(model))


def _wrap_finalize(finalize):
    @functools.wraps(finalize)
    def wrapped(self):
        with _once(self) as outer:
            return _finalize_projected(self, finalize) if outer else finalize(self)

    return wrapped


def _wrap_scores(scores):
    @functools.wraps(scores)
    def wrapped(self, X):
        with _once(self) as outer:
            projection = self.__dict__.get("projection_")
            if outer and projection is not None:
                X = projection.transform(X)
            return scores(self, X)

    return wrapped


def _finalize_projected(model, finalize) -> None:
    """``finalize`` of the model's statistics in the projected space (see :class:`Projected`)."""
    if not model._projects:
        model.projection_ = None
        return finalize(model)
    stats = model.stats_
    stored = model.__dict__.get("_stored_projection")
    if stored is not None:
        _check_stored(stored, model)
    # Products and a decomposition of d x d matrices: on one BLAS thread, as
    # the statistics were gathered (a second thread waits for a busy core).
    with one_blas_thread():
        projection = (
            stored if stored is not None else projection_of(stats, model.pca, model.standardize)
        )
        projected = projected_statistics(stats, projection, model._projected_type(stats))
    width = model.n_features_in_
    names = model.__dict__.get("feature_names_in_")
    model.stats_ = projected
    model.n_features_in_ = projection.n_components
    if names is not None and projection.components is not None:
        # What the model's own messages name: the components it sees.
        model.feature_names_in_ = np.asarray(projection.component_names, dtype=object)
    try:
        finalize(model)
    finally:
        model.stats_ = stats
        model.n_features_in_ = width
        if names is not None:
            model.feature_names_in_ = names
    model.projection_ = projection


def _check_stored(projection: Projection, model) -> None:
    """Refuse a stored projection its model's settings could not have given."""
    arrays = projection.arrays()
    d = model.n_features_in_
    fine = (
        all(np.all(np.isfinite(a)) for a in arrays.values())
        and projection.centre.shape == (d,)
        and np.all(projection.scale > 0)
        and (projection.components is None) == (model.pca is None)
        and (model.standardize or np.all(projection.scale == 1.0))
    )
    if fine and model.pca is not None and float(model.pca) >= 1:
        fine = projection.n_components == int(float(model.pca))
    if not fine:
        raise ValueError("the stored projection does not fit the model's pca and standardize")


class Projected:
    """Mixin of the models that take ``pca`` and ``standardize``.

    The model's own ``accumulate`` gathers input-space statistics (scatter
    matrices where ``pca`` needs them). Its ``finalize`` and
    ``joint_log_likelihood_block``, as each subclass defines them, are
    wrapped: ``finalize`` builds the projection and runs on the statistics
    in the projected space (with ``n_features_in_`` the projected width
    meanwhile), and scoring projects each block of raw rows first.
    ``projection_`` is the :class:`Projection`, or None without either
    setting.
    """

    pca: Any
    standardize: bool
    stats_: Any
    projection_: Projection | None
    _pca_shapes: ClassVar[dict[str, str]] = {}
    #: Statistics classes the model gathers only with ``pca``.
    _pca_only: ClassVar[tuple[type, ...]] = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "finalize" in cls.__dict__:
            setattr(cls, "finalize", _wrap_finalize(cls.__dict__["finalize"]))  # noqa: B010
        if "joint_log_likelihood_block" in cls.__dict__:
            wrapped = _wrap_scores(cls.__dict__["joint_log_likelihood_block"])
            setattr(cls, "joint_log_likelihood_block", wrapped)  # noqa: B010

    @property
    def _projects(self) -> bool:
        return self.pca is not None or bool(self.standardize)

    def check_width(self, n_features: int) -> None:
        """Refuse settings that rows of ``n_features`` columns cannot take
        (more components than columns), before any statistics are gathered.

        Raises
        ------
        ValueError
            As :func:`check_count`.
        """
        check_count(self.pca, n_features)

    def _check_projection(self) -> None:
        covariance_kind = getattr(self, "_covariance_kind", lambda: None)()
        declared = {spec.name for spec in getattr(type(self), "hyperparameters", ())}
        check_pca(self.pca, covariance_kind, "reg_param" if "reg_param" in declared else "")

    @property
    def missing_policy(self) -> str:
        """As the model's, except that ``"ignore"`` acts as ``"drop"`` under a projection.

        A projection mixes (or rescales) every column before the model sees
        the row, so a missing cell cannot be left out on its own: the row is
        left out at fit (counted in ``n_dropped_``) and gets NaN posteriors.
        """
        missing = getattr(self, "missing", "error")
        return "drop" if missing == "ignore" and self._projects else missing

    def gathered_statistics(self) -> list[dict[str, str]]:
        """Shapes of the statistics :meth:`accumulate` may gather with these settings.

        With ``pca``: the scatter matrices in the input space; otherwise the
        model's own statistics, less those it gathers only for ``pca``.
        """
        if self.pca is not None:
            return [dict(self._pca_shapes)]
        own = [s for s in type(self).statistics if s not in self._pca_only]  # type: ignore[attr-defined]
        return [dict(s.shapes) for s in own]

    def _projected_type(self, stats) -> type:
        """The statistics class the model finalises from (its input-space one, by default)."""
        return type(stats)
