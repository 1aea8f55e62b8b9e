"""Mergeable per-class sufficient statistics.

Every estimator in :mod:`nbcli.models` is fitted from statistics that can be
accumulated chunk by chunk and merged in any order:

* :class:`ClassCounts` - weighted class counts and per-feature sums (multinomial
  and Bernoulli naive Bayes).
* :class:`ClassMoments` - weighted count, mean and centred sum of squares per
  feature (Gaussian naive Bayes).
* :class:`ClassScatter` - weighted count, mean and centred scatter matrix
  per class (QDA, and LDA with Ledoit-Wolf shrinkage), optionally with the
  centred third and fourth co-moments that the Ledoit-Wolf intensity needs.
* :class:`PooledScatter` - per-class count and mean with one pooled
  within-class scatter matrix (LDA otherwise).

Within a chunk the moments are sums about a shift, one of the chunk's rows
(the shifted-data formula), or, for a class whose mean lies far from it, by
the corrected two-pass algorithm; chunks are merged with the pairwise update of Chan, Golub and LeVeque,
"Updating formulae and a pairwise algorithm for computing sample variances"
(1982), in its matrix form (Schubert and Gertz, "Numerically stable parallel
computation of (co-)variance", SSDBM 2018). Sums of squares are never formed
as E[x^2] - E[x]^2, which loses all precision when the mean is large against
the spread. Higher co-moments are moved to the merged mean by the binomial
shift of central moments (Pebay, "Formulas for robust, one-pass parallel
computation of covariances and arbitrary-order statistical moments", Sandia
report SAND2008-6212).

All arrays have the class on their first axis; statistics of different chunks
are merged only after both use the same class order (see ``reindex``).
"""

from __future__ import annotations

from dataclasses import Field, dataclass, field, fields, replace
from typing import Any, ClassVar

import numpy as np

from nbcli.distinct import grouped_order


def _class_blocks(y_idx: np.ndarray, n_classes: int):
    """Yield ``(k, rows)``: for each class present, the indices of its rows."""
    order, bounds = grouped_order(y_idx, n_classes)
    for k in range(n_classes):
        lo, hi = bounds[k], bounds[k + 1]
        if hi > lo:
            yield k, order[lo:hi]


def _centred_block(X, rows, w, *, exact: bool = True):
    """Rows of one class, centred at their weighted mean.

    Returns ``(count, shift, offset, B, corr)``: the class mean is
    ``shift + offset``, where ``shift`` is the class's first row, and ``B`` is
    a fresh array of the rows minus that mean. Working relative to a data row
    keeps the subtraction exact-ish even when the mean is huge against the
    spread, and the offset comes from the corrected two-pass algorithm: a
    first estimate, then the mean of the residuals ``corr`` added back. With
    ``exact=False`` the rows are left centred at the first estimate (one pass
    fewer) and the caller corrects sums of squares by ``count * corr**2``.
    """
    shift = X[rows[0]].copy()
    B = X[rows]
    B -= shift
    if w is None:
        count = float(B.shape[0])
        offset = B.mean(axis=0)
        B -= offset
        corr = B.mean(axis=0)
    else:
        wk = w[rows]
        count = float(wk.sum())
        if count <= 0:
            zeros = np.zeros(X.shape[1])
            return 0.0, zeros, zeros, None, zeros
        offset = (wk @ B) / count
        B -= offset
        corr = (wk @ B) / count
    if exact:
        B -= corr
    return count, shift, offset + corr, B, corr


class _Grouped:
    """A chunk's rows grouped by class and centred at their class means.

    ``B`` holds every row of a class with positive weight, rows of class
    ``k`` in ``B[bounds[k]:bounds[k + 1]]``, minus that class's mean; the
    mean is ``shift[k] + offset[k]`` with ``shift[k]`` the class's first row
    (see :func:`_centred_block`, whose corrected two-pass algorithm this is,
    for all classes in one gathered copy). The residual means ``corr`` (the
    second pass's correction, rounding-sized) are left in ``B``: a sum of
    products ``sum w b b^T`` is exact once ``count * corr corr^T`` is taken
    off (:meth:`correction`). Gathering once and working on one slice per
    class costs a few passes over the chunk, where gathering each class from
    a column-major chunk cost a strided copy per class.
    """

    def __init__(self, X, y_idx, w, n_classes: int):
        n, d = X.shape
        order, bounds = grouped_order(y_idx, n_classes)
        if X.flags.f_contiguous:
            B = np.empty((n, d), dtype=X.dtype, order="F")
            for j in range(d):
                np.take(X[:, j], order, out=B[:, j])
        else:
            B = X[order]
        ws = None if w is None else w[order]
        self.count = np.zeros(n_classes)
        self.shift = np.zeros((n_classes, d))
        self.offset = np.zeros((n_classes, d))
        self.corr = np.zeros((n_classes, d))
        self.B, self.w, self.bounds = B, ws, bounds
        for k in range(n_classes):
            lo, hi = bounds[k], bounds[k + 1]
            if hi == lo:
                continue
            S = B[lo:hi]
            if ws is None:
                count = float(hi - lo)
                shift = S[0].copy()
                S -= shift
                offset = S.sum(axis=0) / count
                S -= offset
                corr = S.sum(axis=0) / count
            else:
                wk = ws[lo:hi]
                count = float(wk.sum())
                if count <= 0:
                    S[...] = 0.0  # a class of zero weight adds nothing
                    continue
                shift = S[0].copy()
                S -= shift
                offset = (wk @ S) / count
                S -= offset
                corr = (wk @ S) / count
            self.count[k], self.shift[k], self.offset[k], self.corr[k] = count, shift, offset, corr

    def rows(self, k: int) -> tuple[np.ndarray, np.ndarray | None]:
        """Centred rows of class ``k`` and their weights (None: all ones)."""
        lo, hi = self.bounds[k], self.bounds[k + 1]
        return self.B[lo:hi], None if self.w is None else self.w[lo:hi]

    def live(self):
        """Classes with rows of positive total weight."""
        return np.flatnonzero(self.count > 0)

    def correction(self, k=None) -> np.ndarray:
        """``count * corr corr^T`` of class ``k``, or summed over every class."""
        if k is not None:
            return self.count[k] * np.outer(self.corr[k], self.corr[k])
        return (self.corr * self.count[:, None]).T @ self.corr


# Sums of squares about the class's first row are used directly while
# n * offset**2 <= this times the centred sum: the subtraction then loses at
# most log10(1 + 1e3) ~ 3 of 16 digits. Beyond (a first row far out in a
# tail), the class is centred again at its mean.
_SHIFTED_SUMS_LIMIT = 1e3


def _shifted_moments(X, rows, w):
    """Count, shift, offset and centred sum of squares of one class, in three passes.

    The rows minus the class's first row ``shift`` give the offset of the mean
    and the sum of squares about ``shift``; ``m2 = sum (x - shift)**2 - n
    offset**2`` (the shifted-data formula, Chan, Golub and LeVeque 1983)
    is exact to rounding while the first row is not far from the mean
    against the spread (:data:`_SHIFTED_SUMS_LIMIT`); otherwise the class
    falls back to the corrected two-pass algorithm of :func:`_centred_block`.
    """
    shift = X[rows[0]].copy()
    B = X[rows]
    B -= shift
    if w is None:
        count = float(B.shape[0])
        offset = B.sum(axis=0) / count
        sq = np.einsum("ij,ij->j", B, B)
    else:
        wk = w[rows]
        count = float(wk.sum())
        if count <= 0:
            return None
        offset = (wk @ B) / count
        sq = np.einsum("i,ij,ij->j", wk, B, B)
    about_mean = count * offset**2
    m2 = sq - about_mean
    if np.any(about_mean > _SHIFTED_SUMS_LIMIT * m2):
        ck, sk, ok, C, corr = _centred_block(X, rows, w, exact=False)
        if w is None:
            sq = np.einsum("ij,ij->j", C, C)
        else:
            sq = np.einsum("i,ij,ij->j", w[rows], C, C)
        return ck, sk, ok, sq - ck * corr**2
    return count, shift, offset, m2


def _merge_location(a, b):
    """Counts and means of two statistics merged: ``(n, shift, offset, delta, cross)``.

    ``delta`` is mean_b - mean_a, formed from the difference of the shifts
    (exact for nearby values) plus the difference of the small offsets, so
    it keeps full precision when the means are large; ``cross`` is
    ``n_a n_b / n``.
    """
    n, fb, cross = _chan_weights(a.count, b.count)
    delta = (b.shift - a.shift) + (b.offset - a.offset)
    take_b = (a.count == 0)[:, None]
    shift = np.where(take_b, b.shift, a.shift)
    offset = np.where(take_b, b.offset, a.offset + delta * fb[:, None])
    return n, shift, offset, delta, cross


class _Stats:
    """Shared behaviour: zero construction, class re-indexing, copying.

    Every statistics class declares ``shapes``: the arrays it stores and the
    shape of each in units of ``K`` (n_classes) and ``d`` (n_features),
    e.g. ``{"count": "K", "m2": "Kd"}``; model files are checked against it.
    Arrays in ``optional`` may be absent (``None``).
    """

    # Every concrete statistics class is a dataclass (``fields`` and
    # ``replace`` below rely on it); the decorator sets this on each.
    __dataclass_fields__: ClassVar[dict[str, Field[Any]]]
    shapes: ClassVar[dict[str, str]] = {}
    optional: ClassVar[tuple[str, ...]] = ()
    #: Dimensions ``shapes`` uses besides ``K`` and ``d``, one letter each
    #: (``S``: the total number of categories, ``sum_j K_j``). Their sizes
    #: follow from the data, not from the metadata every model file has, so
    #: :meth:`dimensions` gives them and model files store them with the
    #: statistics.
    extra_dims: ClassVar[tuple[str, ...]] = ()
    # Fields without a leading class axis (kept as they are when re-indexing).
    _pooled_fields: ClassVar[tuple[str, ...]] = ()
    # Fields that sum non-negative terms, and what they are called in messages.
    _non_negative: ClassVar[dict[str, str]] = {}

    @classmethod
    def array_shapes(
        cls, n_classes: int, n_features: int, dims: dict[str, int] | None = None
    ) -> dict[str, tuple[int, ...]]:
        """Shape of each array these statistics store.

        ``dims`` gives the size of each of :attr:`extra_dims` (as
        :meth:`dimensions` returned it).
        """
        size = {"K": n_classes, "d": n_features, **(dims or {})}
        # An optional array whose sizes are not given is absent.
        return {
            name: tuple(size[c] for c in units)
            for name, units in cls.shapes.items()
            if all(c in size for c in units)
        }

    def dimensions(self) -> dict[str, int]:
        """Size of each of :attr:`extra_dims`, read off the arrays (empty for most statistics)."""
        out: dict[str, int] = {}
        for name, units in self.shapes.items():
            a = getattr(self, name)
            if a is None:
                continue
            for axis, unit in enumerate(units):
                if unit in self.extra_dims:
                    out[unit] = int(a.shape[axis])
        return out

    def reindex(self, new_index: np.ndarray, n_classes: int):
        """Return a copy whose class ``k`` is this one's class ``i`` where ``new_index[i] == k``.

        Classes with no source row are all-zero (no samples seen).
        """
        out = {}
        for f in fields(self):
            a = getattr(self, f.name)
            if a is None or f.name in self._pooled_fields:
                out[f.name] = None if a is None else a.copy()
                continue
            b = np.zeros((n_classes,) + a.shape[1:], dtype=a.dtype)
            b[new_index] = a
            out[f.name] = b
        return replace(self, **out)

    @property
    def class_counts(self) -> np.ndarray:
        """Weighted number of samples per class, shape (n_classes,)."""
        # "count" in the moment statistics, "class_count" in the others (those
        # with per-feature observed counts keep the rows' count there).
        counts = getattr(self, "class_count", None)
        return self.count if counts is None else counts  # type: ignore[attr-defined]

    def implausible(self) -> str | None:
        """What no data set could have given in these statistics, or None.

        Model files are untrusted: a loaded file's statistics must be
        finite, with non-negative class counts that are not all zero, and
        non-negative sums where only squares or non-negative values were
        added (the names in ``_non_negative``; the diagonal of a ``dd`` matrix).
        Subtler damage shows in the model rebuilt from them.
        """
        arrays = self.arrays()
        if not all(np.all(np.isfinite(a)) for a in arrays.values()):
            return "non-finite statistics"
        counts = self.class_counts
        if np.any(counts < 0) or not counts.sum() > 0:
            return "class counts that are negative or all zero"
        for name, what in self._non_negative.items():
            a = arrays.get(name)
            if a is not None and self.shapes[name].endswith("dd"):
                a = np.diagonal(a, axis1=-2, axis2=-1)  # a scatter matrix: its squares
            if a is not None and np.any(a < 0):
                return f"negative {what}"
        return None

    def copy(self):
        out = replace(
            self,
            **{
                f.name: (None if getattr(self, f.name) is None else getattr(self, f.name).copy())
                for f in fields(self)
            },
        )
        # What was derived from these sums (a projection's eigendecomposition)
        # holds for the copy too: shared, never changed in place.
        out.__dict__["_derived"] = self.__dict__.setdefault("_derived", {})
        return out

    def arrays(self) -> dict[str, np.ndarray]:
        """The statistics as named float64 arrays (for model files)."""
        return {
            f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None
        }


class _Located(_Stats):
    """Statistics that keep each class mean as ``shift + offset``."""

    shift: np.ndarray
    offset: np.ndarray

    @property
    def mean(self) -> np.ndarray:
        """Class means, shape (n_classes, n_features)."""
        return self.shift + self.offset


@dataclass
class ClassCounts(_Stats):
    """Weighted class counts and per-class feature sums.

    Attributes
    ----------
    class_count : ndarray of shape (n_classes,)
        Sum of sample weights per class.
    feature_count : ndarray of shape (n_classes, n_features)
        Sum over the class's samples of weight times feature value.
    """

    class_count: np.ndarray
    feature_count: np.ndarray

    shapes = {"class_count": "K", "feature_count": "Kd"}
    _non_negative = {"feature_count": "feature counts"}

    @classmethod
    def from_data(cls, X, y_idx, w, n_classes):
        """Statistics of one chunk; ``X`` of shape (n_samples, n_features)."""
        n, d = X.shape
        if X.flags.f_contiguous and not X.flags.c_contiguous:
            # Columns are contiguous: one weighted count of the class codes per column.
            feature_count = np.empty((n_classes, d))
            for j in range(d):
                column = X[:, j]
                feature_count[:, j] = np.bincount(
                    y_idx, weights=column if w is None else column * w, minlength=n_classes
                )
            class_count = np.bincount(y_idx, weights=w, minlength=n_classes).astype(np.float64)
            return cls(class_count=class_count, feature_count=feature_count)
        weights = np.ones(n) if w is None else w
        onehot = np.zeros((n_classes, n))
        onehot[y_idx, np.arange(n)] = weights
        return cls(class_count=onehot.sum(axis=1), feature_count=onehot @ X)

    def merge(self, other: ClassCounts) -> ClassCounts:
        """Statistics of the union of both chunks (sums simply add)."""
        return ClassCounts(
            class_count=self.class_count + other.class_count,
            feature_count=self.feature_count + other.feature_count,
        )


def means_about(stats, reference: np.ndarray) -> np.ndarray:
    """Class means minus ``reference`` (n_features,), without rounding them first.

    Differences between class means that are huge against their spread
    (mean 1e9, spread 1) keep full precision this way, because the shift is
    subtracted before the small offset is added.
    """
    return (stats.shift - reference) + stats.offset


def _chan_weights(na, nb):
    n = na + nb
    with np.errstate(invalid="ignore", divide="ignore"):
        fb = np.where(n > 0, nb / n, 0.0)  # share of b in the merged mean
        cross = np.where(n > 0, na * nb / n, 0.0)
    return n, fb, cross


@dataclass
class ClassMoments(_Located):
    """Weighted count, mean and centred sum of squares, per class and feature.

    Attributes
    ----------
    count : ndarray of shape (n_classes,)
    shift, offset : ndarray of shape (n_classes, n_features)
        The class mean is ``shift + offset`` (see :attr:`mean`); ``shift`` is
        one of the class's rows, ``offset`` small against it.
    m2 : ndarray of shape (n_classes, n_features)
        Sum over the class's samples of ``weight * (x - mean)**2``.
    """

    count: np.ndarray
    shift: np.ndarray
    offset: np.ndarray
    m2: np.ndarray

    shapes = {"count": "K", "shift": "Kd", "offset": "Kd", "m2": "Kd"}
    _non_negative = {"m2": "sums of squares"}

    @classmethod
    def from_data(cls, X, y_idx, w, n_classes):
        """Statistics of one chunk; ``X`` of shape (n_samples, n_features).

        For a column-major chunk (what the readers give), every class is
        first taken about one shift, the chunk's first row: the class sums
        of the shifted values and of their squares are weighted counts of
        the class codes, one column at a time (``numpy.bincount``), with no
        gathering of each class's rows (a strided copy of such a chunk); a
        row-major chunk is taken class by class from its gathered rows. A
        class whose mean lies far from that row against its spread
        (:data:`_SHIFTED_SUMS_LIMIT`) is computed again about a row of its
        own (:func:`_shifted_moments`).
        """
        n, d = X.shape
        count = np.zeros(n_classes)
        shift = np.zeros((n_classes, d))
        offset = np.zeros((n_classes, d))
        m2 = np.zeros((n_classes, d))
        if n == 0:
            return cls(count=count, shift=shift, offset=offset, m2=m2)
        if not X.flags.f_contiguous:
            # Rows are contiguous: gathering each class's rows is the cheap way.
            for k, rows in _class_blocks(y_idx, n_classes):
                moments = _shifted_moments(X, rows, w)
                if moments is not None:
                    count[k], shift[k], offset[k], m2[k] = moments
            return cls(count=count, shift=shift, offset=offset, m2=m2)
        count = np.bincount(y_idx, weights=w, minlength=n_classes).astype(np.float64)
        sums = np.empty((n_classes, d))
        squares = np.empty((n_classes, d))
        column = np.empty(n)
        for j in range(d):
            np.subtract(X[:, j], X[0, j], out=column)
            sums[:, j] = np.bincount(
                y_idx, weights=column if w is None else column * w, minlength=n_classes
            )
            np.square(column, out=column)
            squares[:, j] = np.bincount(
                y_idx, weights=column if w is None else column * w, minlength=n_classes
            )
        live = count > 0
        shift[live] = X[0]
        offset[live] = sums[live] / count[live, None]
        about_mean = count[:, None] * offset**2
        m2[live] = squares[live] - about_mean[live]
        far = live & np.any(about_mean > _SHIFTED_SUMS_LIMIT * m2, axis=1)
        if far.any():
            for k, rows in _class_blocks(y_idx, n_classes):
                if far[k]:
                    moments = _shifted_moments(X, rows, w)
                    if moments is not None:
                        count[k], shift[k], offset[k], m2[k] = moments
        return cls(count=count, shift=shift, offset=offset, m2=m2)

    def merge(self, other: ClassMoments) -> ClassMoments:
        """Chan-Golub-LeVeque pairwise update."""
        n, shift, offset, delta, cross = _merge_location(self, other)
        return ClassMoments(
            count=n,
            shift=shift,
            offset=offset,
            m2=self.m2 + other.m2 + delta**2 * cross[:, None],
        )

    def pooled(self):
        """Count, mean and centred sum of squares of all classes together."""
        total = self._row(0)
        for k in range(1, self.count.shape[0]):
            total = total.merge(self._row(k))
        return float(total.count[0]), total.mean[0], total.m2[0]

    def _row(self, k):
        return ClassMoments(*(getattr(self, f.name)[k : k + 1] for f in fields(self)))


def _add_outer(S: np.ndarray, alpha: float, v: np.ndarray) -> None:
    """``S += alpha v v^T`` in place, for a C-ordered float64 ``S`` of shape (d, d).

    One BLAS rank-one update (``dger``) instead of an outer product made
    and then added: one pass over the matrix, no (d, d) temporary. ``v
    v^T`` is symmetric, so updating the Fortran-ordered transpose that
    ``S.T`` is updates ``S``. SciPy's BLAS runs on one thread here, as
    NumPy's does while statistics are gathered: a memory-bound update gains
    nothing from a second thread, whose spinning costs a busy machine.
    """
    if S.dtype != np.float64 or not S.flags.c_contiguous or not S.flags.writeable:
        S += alpha * np.outer(v, v)
        return
    from scipy.linalg.blas import dger

    from nbcli.models._parallel import one_blas_thread

    with one_blas_thread():
        dger(float(alpha), v, v, a=S.T, overwrite_a=True)


@dataclass
class ClassScatter(_Located):
    """Weighted count, mean and centred scatter matrix per class.

    Attributes
    ----------
    count : ndarray of shape (n_classes,)
    shift, offset : ndarray of shape (n_classes, n_features)
        The class mean is ``shift + offset`` (see :class:`ClassMoments`).
    scatter : ndarray of shape (n_classes, n_features, n_features)
        ``sum_i w_i (x_i - mean)(x_i - mean)^T`` over the class's samples.
    third, fourth : ndarray of shape (n_classes, n_features, n_features) or None
        Centred co-moments ``sum_i w_i c_ij^2 c_ik`` and
        ``sum_i w_i c_ij^2 c_ik^2`` with ``c = x - mean``; kept only when asked
        for (Ledoit-Wolf shrinkage needs them).
    """

    count: np.ndarray
    shift: np.ndarray
    offset: np.ndarray
    scatter: np.ndarray
    third: np.ndarray | None = field(default=None)
    fourth: np.ndarray | None = field(default=None)

    shapes = {
        "count": "K",
        "shift": "Kd",
        "offset": "Kd",
        "scatter": "Kdd",
        "third": "Kdd",
        "fourth": "Kdd",
    }
    optional = ("third", "fourth")
    _non_negative = {"scatter": "sums of squares"}

    @classmethod
    def from_data(cls, X, y_idx, w, n_classes, *, higher: bool = False):
        d = X.shape[1]
        scatter = np.zeros((n_classes, d, d))
        third = np.zeros((n_classes, d, d)) if higher else None
        fourth = np.zeros((n_classes, d, d)) if higher else None
        g = _Grouped(X, y_idx, w, n_classes)
        count, shift, offset = g.count, g.shift, g.offset + g.corr
        for k in g.live():
            B, wk = g.rows(k)
            if third is not None:  # the higher co-moments need rows centred exactly
                B -= g.corr[k]
            Bw = B if wk is None else B * wk[:, None]
            scatter[k] = Bw.T @ B
            if third is not None and fourth is not None:  # higher
                B2 = B * B
                B2w = B2 if wk is None else B2 * wk[:, None]
                third[k] = B2w.T @ B
                fourth[k] = B2w.T @ B2
            else:
                _add_outer(scatter[k], -g.count[k], g.corr[k])
        return cls(
            count=count, shift=shift, offset=offset, scatter=scatter, third=third, fourth=fourth
        )

    def _shifted(self, shift, offset):
        """Co-moments of this chunk about the mean ``shift + offset`` instead of its own."""
        n = self.count
        delta = (shift - self.shift) + (offset - self.offset)  # (K, d): c' = c - delta
        S = self.scatter
        S_new = S + n[:, None, None] * delta[:, :, None] * delta[:, None, :]
        if self.third is None:
            return S_new, None, None
        T, Q = self.third, self.fourth
        diagS = np.diagonal(S, axis1=1, axis2=2)  # (K, d)
        dj = delta[:, :, None]
        dk = delta[:, None, :]
        T_new = T - dk * diagS[:, :, None] - 2 * dj * S - n[:, None, None] * dj**2 * dk
        Q_new = (
            Q
            - 2 * dk * T
            - 2 * dj * np.swapaxes(T, 1, 2)
            + dk**2 * diagS[:, :, None]
            + dj**2 * diagS[:, None, :]
            + 4 * dj * dk * S
            + n[:, None, None] * dj**2 * dk**2
        )
        return S_new, T_new, Q_new

    def merge(self, other: ClassScatter) -> ClassScatter:
        """Pairwise update of Chan et al. in matrix form (Schubert and Gertz 2018)."""
        if (self.third is None) != (other.third is None):
            raise ValueError("cannot merge scatter statistics with and without higher moments")
        n, shift, offset, delta, cross = _merge_location(self, other)
        if self.third is None:
            # (S_a + S_b) + cross d d^T, as one expression would sum it, class by
            # class: no (K, d, d) temporaries beyond the result.
            scatter = np.add(self.scatter, other.scatter)
            for k in np.flatnonzero(cross):
                _add_outer(scatter[k], cross[k], delta[k])
            return ClassScatter(count=n, shift=shift, offset=offset, scatter=scatter)
        Sa, Ta, Qa = self._shifted(shift, offset)
        Sb, Tb, Qb = other._shifted(shift, offset)
        return ClassScatter(
            count=n, shift=shift, offset=offset, scatter=Sa + Sb, third=Ta + Tb, fourth=Qa + Qb
        )


@dataclass
class PooledScatter(_Located):
    """Per-class weighted count and mean, with one pooled within-class scatter matrix.

    What LDA needs without Ledoit-Wolf shrinkage: a model file then holds one
    ``(n_features, n_features)`` matrix instead of one per class.

    Attributes
    ----------
    count : ndarray of shape (n_classes,)
    shift, offset : ndarray of shape (n_classes, n_features)
        The class mean is ``shift + offset`` (see :class:`ClassMoments`).
    within : ndarray of shape (n_features, n_features)
        ``sum_k sum_i w_i (x_i - mean_k)(x_i - mean_k)^T`` over every class ``k``.
    """

    count: np.ndarray
    shift: np.ndarray
    offset: np.ndarray
    within: np.ndarray

    shapes = {"count": "K", "shift": "Kd", "offset": "Kd", "within": "dd"}
    _non_negative = {"within": "sums of squares"}
    _pooled_fields = ("within",)

    @classmethod
    def from_data(cls, X, y_idx, w, n_classes):
        """Statistics of one chunk; ``X`` of shape (n_samples, n_features).

        Every row is taken about one shift, the chunk's first row, as
        :meth:`ClassMoments.from_data` does: the class sums of the shifted
        rows are weighted counts of the class codes, one column at a time,
        and the pooled scatter is one product of the shifted rows less each
        class's ``count * offset offset^T``, with no gathering of each
        class's rows. When a class mean lies far from that row against the
        spread (:data:`_SHIFTED_SUMS_LIMIT`, on the diagonal: it bounds the
        rest), the rows are centred at their own class's mean instead.
        """
        n, d = X.shape
        if n and X.flags.f_contiguous:
            count = np.bincount(y_idx, weights=w, minlength=n_classes).astype(np.float64)
            live = count > 0
            B = X - X[0]
            sums = np.empty((n_classes, d))
            for j in range(d):
                column = B[:, j]
                sums[:, j] = np.bincount(
                    y_idx, weights=column if w is None else column * w, minlength=n_classes
                )
            offset = np.zeros((n_classes, d))
            offset[live] = sums[live] / count[live, None]
            within = (B if w is None else B * w[:, None]).T @ B
            about_means = (offset * count[:, None]).T @ offset
            within -= about_means
            if not np.any(np.diagonal(about_means) > _SHIFTED_SUMS_LIMIT * np.diagonal(within)):
                shift = np.zeros((n_classes, d))
                shift[live] = X[0]
                return cls(count=count, shift=shift, offset=offset, within=within)
        # Every row centred at its class's mean, then one product for all
        # classes: the pooled scatter is the sum of the classes' own.
        g = _Grouped(X, y_idx, w, n_classes)
        B = g.B
        within = (B if g.w is None else B * g.w[:, None]).T @ B
        within -= g.correction()
        return cls(count=g.count, shift=g.shift, offset=g.offset + g.corr, within=within)

    def merge(self, other: PooledScatter) -> PooledScatter:
        """Chan et al.'s matrix update, summed over classes."""
        n, shift, offset, delta, cross = _merge_location(self, other)
        within = self.within + other.within + (delta * cross[:, None]).T @ delta
        return PooledScatter(count=n, shift=shift, offset=offset, within=within)
