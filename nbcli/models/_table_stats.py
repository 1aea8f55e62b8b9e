"""Mergeable statistics for tables: category counts and moments with missing cells.

* :class:`CategoryCounts` - per class, the weighted count of every category
  of every feature (categorical naive Bayes). Integer codes ``0..K_j - 1``;
  a later chunk may show a larger code, and merging grows the count arrays.
* :class:`MixedStats` - per column type, what :class:`nbcli.models.MixedNB`
  needs: moments of the Gaussian columns with per-class, per-feature
  observed weights (missing cells make those counts differ by feature),
  category counts, and sums with observed weights for Bernoulli and
  multinomial columns.

Missing cells (NaN) are left out of every statistic of their feature. The
moments follow :mod:`nbcli.models._stats`: the corrected two-pass algorithm
within a chunk and the pairwise update of Chan, Golub and LeVeque (1982)
between chunks, here feature by feature because the counts are.

Category counts of all features sit side by side in one array of shape
``(n_classes, sum_j K_j)``; feature ``j`` owns the ``K_j`` columns starting at
``sum_{i<j} K_i``. ``n_categories`` (float64, integral) gives the ``K_j``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from nbcli.models import _value_table
from nbcli.models._stats import ClassMoments, _class_blocks, _Stats


def category_offsets(n_categories: np.ndarray) -> np.ndarray:
    """Start of each feature's block in the side-by-side count array, shape (n_features,)."""
    n = np.asarray(n_categories, dtype=np.intp)
    return np.concatenate(([0], np.cumsum(n)[:-1])).astype(np.intp)


def count_categories(C: np.ndarray, y_idx, w, n_classes: int):
    """Category counts of one chunk.

    Parameters
    ----------
    C : ndarray of shape (n_samples, n_features)
        Non-negative integer codes as float64; NaN marks a missing cell.
    y_idx : ndarray of shape (n_samples,)
        Class index of each row.
    w : ndarray of shape (n_samples,) or None
        Sample weights (None: all ones).
    n_classes : int

    Returns
    -------
    counts : ndarray of shape (n_classes, sum_j K_j)
    n_categories : ndarray of shape (n_features,)
        ``K_j``: the largest observed code plus one (0 when none is observed).
    """
    n, c = C.shape
    observed = ~np.isnan(C)
    if observed.all():
        return _count_complete(C, y_idx, w, n_classes)
    codes = np.where(observed, C, 0.0).astype(np.intp)
    n_cat = np.where(observed.any(axis=0), codes.max(axis=0, initial=-1) + 1, 0)
    total = int(n_cat.sum())
    flat = codes + category_offsets(n_cat)
    flat += (np.asarray(y_idx, dtype=np.intp) * total)[:, None]
    weights = np.broadcast_to((np.ones(n) if w is None else w)[:, None], (n, c))
    counts = np.bincount(
        flat[observed], weights=weights[observed], minlength=n_classes * total
    ).reshape(n_classes, total)
    return counts, n_cat.astype(np.float64)


def _count_complete(C: np.ndarray, y_idx, w, n_classes: int):
    """:func:`count_categories` of a chunk without missing cells.

    One weighted count of the class-and-category index per column: no masks,
    and no code array of the whole chunk (a column of codes at a time).
    """
    n, c = C.shape
    n_cat = (C.max(axis=0) + 1).astype(np.intp) if n else np.zeros(c, dtype=np.intp)
    total = int(n_cat.sum())
    offsets = category_offsets(n_cat)
    row_base = np.asarray(y_idx, dtype=np.intp) * total
    counts = np.zeros(n_classes * total)
    index = np.empty(n, dtype=np.intp)
    for j in range(c):
        np.add(row_base, offsets[j], out=index)
        index += C[:, j].astype(np.intp)
        counts += np.bincount(index, weights=w, minlength=n_classes * total)
    return counts.reshape(n_classes, total), n_cat.astype(np.float64)


def _columns(X: np.ndarray, index: np.ndarray) -> np.ndarray:
    """``X[:, index]``: a view when the columns are a run of neighbours (no copy)."""
    if index.size and np.array_equal(index, np.arange(index[0], index[0] + index.size)):
        return X[:, int(index[0]) : int(index[0]) + index.size]
    return X[:, index]


def grow_categories(counts: np.ndarray, n_old, n_new) -> np.ndarray:
    """Count array laid out for ``n_new`` categories per feature (new ones zero).

    ``n_new`` must be at least ``n_old`` feature by feature.
    """
    n_old = np.asarray(n_old, dtype=np.intp)
    n_new = np.asarray(n_new, dtype=np.intp)
    if np.array_equal(n_old, n_new):
        return counts
    col = np.repeat(np.arange(n_old.shape[0]), n_old)
    pos = np.arange(int(n_old.sum())) - category_offsets(n_old)[col] + category_offsets(n_new)[col]
    out = np.zeros((counts.shape[0], int(n_new.sum())))
    out[:, pos] = counts
    return out


def recode_categories(counts: np.ndarray, n_old, codes, n_new) -> np.ndarray:
    """Count array with each feature's categories renumbered.

    Parameters
    ----------
    counts : ndarray of shape (n_classes, sum_j n_old[j])
    n_old : array of shape (n_features,)
        The ``K_j`` that lay out ``counts``.
    codes : sequence of integer arrays, one per feature
        ``codes[j][v]`` is the new code of feature ``j``'s old code ``v``
        (at least ``n_old[j]`` entries; distinct codes below ``n_new[j]``).
    n_new : array of shape (n_features,)
        The ``K_j`` of the result; new categories count zero.

    Returns
    -------
    ndarray of shape (n_classes, sum_j n_new[j])
    """
    n_old = np.asarray(n_old, dtype=np.intp)
    n_new = np.asarray(n_new, dtype=np.intp)
    new_offsets = category_offsets(n_new)
    pos = np.concatenate(
        [np.zeros(0, np.intp)]
        + [new_offsets[j] + np.asarray(c, dtype=np.intp)[: n_old[j]] for j, c in enumerate(codes)]
    )
    out = np.zeros((counts.shape[0], int(n_new.sum())))
    out[:, pos] = counts
    return out


def _merged_categories(a, b) -> dict:
    """``category_count`` and ``n_categories`` of two chunks' statistics merged:
    counts add, after growing to the larger ``K_j``."""
    n = np.maximum(a.n_categories, b.n_categories)
    counts = grow_categories(a.category_count, a.n_categories, n) + grow_categories(
        b.category_count, b.n_categories, n
    )
    return {"category_count": counts, "n_categories": n}


def _recoded_categories(stats, codes, n_new) -> dict:
    """``category_count`` and ``n_categories`` of ``stats`` with the categories
    renumbered (:func:`recode_categories`)."""
    return {
        "category_count": recode_categories(stats.category_count, stats.n_categories, codes, n_new),
        "n_categories": np.asarray(n_new, dtype=np.float64),
    }


@dataclass
class CategoryCounts(_Stats):
    """Weighted category counts per class and feature.

    Attributes
    ----------
    class_count : ndarray of shape (n_classes,)
        Sum of sample weights per class (every row, observed or not).
    category_count : ndarray of shape (n_classes, sum_j K_j)
        ``N_cjv``: sum of the weights of class-``c`` rows whose feature ``j``
        is ``v``, features side by side (see the module notes).
    n_categories : ndarray of shape (n_features,)
        ``K_j`` seen so far: the largest code plus one.
    """

    class_count: np.ndarray
    category_count: np.ndarray
    n_categories: np.ndarray

    shapes = {"class_count": "K", "category_count": "KS", "n_categories": "d"}
    extra_dims = ("S",)
    _pooled_fields = ("n_categories",)
    _non_negative = {"category_count": "category counts"}

    def implausible(self) -> str | None:
        """As :meth:`_Stats.implausible`, and ``n_categories`` must lay out the counts."""
        return super().implausible() or _categories_implausible(
            self.n_categories, self.category_count
        )

    @classmethod
    def from_data(cls, C, y_idx, w, n_classes):
        """Statistics of one chunk of validated codes (NaN: missing)."""
        counts, n_cat = count_categories(C, y_idx, w, n_classes)
        weights = np.ones(C.shape[0]) if w is None else w
        class_count = np.bincount(y_idx, weights=weights, minlength=n_classes).astype(np.float64)
        return cls(class_count=class_count, category_count=counts, n_categories=n_cat)

    def recode(self, codes, n_new) -> CategoryCounts:
        """These counts with categories renumbered (:func:`recode_categories`)."""
        return replace(self, **_recoded_categories(self, codes, n_new))

    def merge(self, other: CategoryCounts) -> CategoryCounts:
        """Statistics of both chunks: counts add, after growing to the larger ``K_j``."""
        return CategoryCounts(
            class_count=self.class_count + other.class_count,
            **_merged_categories(self, other),
        )


def _categories_implausible(n_categories: np.ndarray, counts: np.ndarray) -> str | None:
    """Why ``n_categories`` cannot describe the columns of ``counts``, or None."""
    if np.any(n_categories < 0) or np.any(n_categories != np.floor(n_categories)):
        return "numbers of categories that are not non-negative integers"
    if n_categories.sum() != counts.shape[1]:
        return "numbers of categories that do not add up to the category counts' width"
    return None


def observed_moments(X: np.ndarray, y_idx, w, n_classes: int):
    """Per class and feature: observed weight, mean (as shift + offset) and centred m2.

    ``X`` has shape (n_samples, n_features) with NaN for missing cells. The
    shift of a feature is its first observed value in the class; the offset
    comes from the corrected two-pass algorithm (Chan, Golub and LeVeque
    1983, eq. 1.7), so sums of squares keep full precision when the mean is
    large against the spread.

    Returns
    -------
    count, shift, offset, m2 : ndarrays of shape (n_classes, n_features)
    """
    d = X.shape[1]
    count, shift, offset, m2 = (np.zeros((n_classes, d)) for _ in range(4))
    for k, rows in _class_blocks(y_idx, n_classes):
        B = X[rows]
        seen = ~np.isnan(B)
        W = seen.astype(np.float64)
        if w is not None:
            W *= w[rows][:, None]
        ck = W.sum(axis=0)
        live = ck > 0
        sk = np.where(live, B[np.argmax(seen, axis=0), np.arange(d)], 0.0)
        B -= sk
        B[~seen] = 0.0
        with np.errstate(invalid="ignore", divide="ignore"):
            ok = np.where(live, np.einsum("ij,ij->j", W, B) / ck, 0.0)
            B -= ok
            corr = np.where(live, np.einsum("ij,ij->j", W, B) / ck, 0.0)
        count[k], shift[k], offset[k] = ck, sk, ok + corr
        m2[k] = np.where(live, np.einsum("ij,ij,ij->j", W, B, B) - ck * corr**2, 0.0)
    return count, shift, offset, m2


def merge_moments(a, b):
    """Chan-Golub-LeVeque update of ``(count, shift, offset, m2)`` tuples, elementwise."""
    na, sa, oa, ma = a
    nb, sb, ob, mb = b
    n = na + nb
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        fb = np.where(n > 0, nb / n, 0.0)
        cross = np.where(n > 0, na * nb / n, 0.0)
        delta = (sb - sa) + (ob - oa)
        take_b = na == 0
        shift = np.where(take_b, sb, sa)
        offset = np.where(take_b, ob, oa + delta * fb)
        m2 = ma + mb + np.where(cross > 0, delta**2 * cross, 0.0)
    return n, shift, offset, m2


def pooled_moments(count, shift, offset, m2):
    """Observed weight, mean and m2 per feature over all classes, each of shape (n_features,)."""
    total = (count[0], shift[0], offset[0], m2[0])
    for k in range(1, count.shape[0]):
        total = merge_moments(total, (count[k], shift[k], offset[k], m2[k]))
    n, s, o, m = total
    return n, s + o, m


@dataclass
class MixedStats(_Stats):
    """Sufficient statistics of a mixed naive Bayes, one group of arrays per column type.

    Columns of each type are taken in the order of the table; ``g``, ``c``,
    ``b``, ``m`` below are the numbers of Gaussian, categorical, Bernoulli and
    multinomial columns.

    Attributes
    ----------
    class_count : ndarray of shape (n_classes,)
        Sum of sample weights per class (every row).
    gaussian_count, gaussian_shift, gaussian_offset, gaussian_m2 : ndarray of shape (n_classes, g)
        Observed weight, mean (``shift + offset``) and centred sum of squares
        of each Gaussian column in each class.
    category_count : ndarray of shape (n_classes, sum_j K_j)
    n_categories : ndarray of shape (c,)
        As in :class:`CategoryCounts`, over the categorical columns.
    bernoulli_count, bernoulli_observed : ndarray of shape (n_classes, b)
        Weight of the rows where the column is 1, and where it is observed.
    multinomial_count : ndarray of shape (n_classes, m)
        Weighted sum of each multinomial column's observed values.
    poisson_count, poisson_sum : ndarray of shape (n_classes, p) or None
        Observed weight and weighted sum of each Poisson column (None: no
        Poisson columns; model files from before they existed).
    value_points : ndarray of shape (sum_j V_j,) or None
    value_count : ndarray of shape (n_classes, sum_j V_j) or None
    n_values : ndarray of shape (q,) or None
        The distinct values of the ``q`` kernel and discretized columns, in
        table order, and per class the weight of each
        (:mod:`nbcli.models._value_table`); None: no such columns.
    """

    class_count: np.ndarray
    gaussian_count: np.ndarray
    gaussian_shift: np.ndarray
    gaussian_offset: np.ndarray
    gaussian_m2: np.ndarray
    category_count: np.ndarray
    n_categories: np.ndarray
    bernoulli_count: np.ndarray
    bernoulli_observed: np.ndarray
    multinomial_count: np.ndarray
    poisson_count: np.ndarray | None = None
    poisson_sum: np.ndarray | None = None
    value_points: np.ndarray | None = None
    value_count: np.ndarray | None = None
    n_values: np.ndarray | None = None

    shapes = {
        "class_count": "K",
        "gaussian_count": "Kg",
        "gaussian_shift": "Kg",
        "gaussian_offset": "Kg",
        "gaussian_m2": "Kg",
        "category_count": "KS",
        "n_categories": "c",
        "bernoulli_count": "Kb",
        "bernoulli_observed": "Kb",
        "multinomial_count": "Km",
        "poisson_count": "Kp",
        "poisson_sum": "Kp",
        "value_points": "V",
        "value_count": "KV",
        "n_values": "q",
    }
    extra_dims = ("g", "S", "c", "b", "m", "p", "V", "q")
    # Arrays of the column kinds added after the first model files: a file
    # without them has no such columns.
    optional = ("poisson_count", "poisson_sum", "value_points", "value_count", "n_values")
    _pooled_fields = ("n_categories", "value_points", "n_values")
    _non_negative = {
        "gaussian_count": "observed weights",
        "gaussian_m2": "sums of squares",
        "category_count": "category counts",
        "bernoulli_count": "counts",
        "bernoulli_observed": "observed weights",
        "multinomial_count": "counts",
        "poisson_count": "observed weights",
        "poisson_sum": "counts",
        "value_count": "value weights",
    }

    def implausible(self) -> str | None:
        """As :meth:`_Stats.implausible`, with the category layout, Bernoulli
        counts and the value table checked."""
        why = super().implausible() or _categories_implausible(
            self.n_categories, self.category_count
        )
        if why is None and np.any(self.bernoulli_count > self.bernoulli_observed):
            return "Bernoulli counts above the observed weights"
        if why is None and (self.poisson_count is None) != (self.poisson_sum is None):
            return "Poisson sums without observed weights"
        table = (self.value_points, self.value_count, self.n_values)
        if why is None and any(a is None for a in table) and any(a is not None for a in table):
            return "a value table without its values, weights or sizes"
        if why is None and self.n_values is not None:
            points, counts, sizes = self.values
            why = _categories_implausible(sizes, counts)
            if why is None and points.size != counts.shape[1]:
                why = "value tables whose values and weights differ in number"
            if why is None and any(
                np.any(np.diff(v) <= 0) for v, _ in _value_table.split(points, counts, sizes)
            ):
                why = "value tables whose values are not sorted and distinct"
        return why

    @property
    def poisson(self):
        """``(observed weight, sum)`` of the Poisson columns, each (n_classes, p)."""
        k = self.class_count.shape[0]
        if self.poisson_count is None or self.poisson_sum is None:
            return np.zeros((k, 0)), np.zeros((k, 0))
        return self.poisson_count, self.poisson_sum

    @property
    def values(self):
        """``(points, counts, sizes)`` of the kernel and discretized columns."""
        if self.value_points is None or self.value_count is None or self.n_values is None:
            return np.zeros(0), np.zeros((self.class_count.shape[0], 0)), np.zeros(0)
        return self.value_points, self.value_count, self.n_values

    @classmethod
    def from_data(cls, X, y_idx, w, n_classes, layout):
        """Statistics of one validated chunk; ``layout`` maps column types to column indices."""
        n = X.shape[0]
        class_count = np.bincount(y_idx, weights=w, minlength=n_classes).astype(np.float64)
        Xg = _columns(X, layout.gaussian)
        if np.isnan(Xg).any():
            g, s, o, m2 = observed_moments(Xg, y_idx, w, n_classes)
        else:
            # Complete columns: the moments of whole rows, one weight per class.
            full = ClassMoments.from_data(Xg, y_idx, w, n_classes)
            g = np.repeat(full.count[:, None], Xg.shape[1], axis=1)
            s, o, m2 = full.shift, full.offset, full.m2
        cat, n_cat = count_categories(_columns(X, layout.categorical), y_idx, w, n_classes)
        Xb = _columns(X, layout.bernoulli)
        seen_b = ~np.isnan(Xb)
        Xm = _columns(X, layout.multinomial)
        onehot = None
        if Xb.shape[1] + Xm.shape[1] + layout.poisson.size:
            onehot = np.zeros((n_classes, n))
            onehot[y_idx, np.arange(n)] = 1.0 if w is None else w

        def sums(A):  # class sums of A's columns
            return np.zeros((n_classes, A.shape[1])) if onehot is None else onehot @ A

        extra = {}
        if layout.poisson.size:
            Xp = _columns(X, layout.poisson)
            seen_p = ~np.isnan(Xp)
            extra["poisson_count"] = sums(seen_p.astype(np.float64))
            extra["poisson_sum"] = sums(np.where(seen_p, Xp, 0.0))
        if layout.valued.size:
            table = _value_table.count_values(X[:, layout.valued], y_idx, w, n_classes)
            extra.update(zip(("value_points", "value_count", "n_values"), table))
        return cls(
            class_count=class_count,
            gaussian_count=g,
            gaussian_shift=s,
            gaussian_offset=o,
            gaussian_m2=m2,
            category_count=cat,
            n_categories=n_cat,
            bernoulli_count=sums(np.where(seen_b, Xb, 0.0)),
            bernoulli_observed=sums(seen_b.astype(np.float64)),
            multinomial_count=sums(np.where(np.isnan(Xm), 0.0, Xm)),
            **extra,
        )

    def gaussian(self):
        """The Gaussian moments as a ``(count, shift, offset, m2)`` tuple."""
        return self.gaussian_count, self.gaussian_shift, self.gaussian_offset, self.gaussian_m2

    def recode(self, codes, n_new) -> MixedStats:
        """These statistics with the categorical columns' categories renumbered
        (:func:`recode_categories`; ``codes`` and ``n_new`` over those columns)."""
        return replace(self, **_recoded_categories(self, codes, n_new))

    def merge(self, other: MixedStats) -> MixedStats:
        """Statistics of both chunks (moments by Chan et al., counts add)."""
        g, s, o, m2 = merge_moments(self.gaussian(), other.gaussian())
        return MixedStats(
            class_count=self.class_count + other.class_count,
            gaussian_count=g,
            gaussian_shift=s,
            gaussian_offset=o,
            gaussian_m2=m2,
            **_merged_categories(self, other),
            bernoulli_count=self.bernoulli_count + other.bernoulli_count,
            bernoulli_observed=self.bernoulli_observed + other.bernoulli_observed,
            multinomial_count=self.multinomial_count + other.multinomial_count,
            **_merge_extra(self, other),
        )


def _merge_extra(a: MixedStats, b: MixedStats) -> dict:
    """The Poisson sums and value tables of two chunks merged (absent in both: absent)."""
    out: dict = {}
    if a.poisson_count is not None or b.poisson_count is not None:
        (ca, sa), (cb, sb) = a.poisson, b.poisson
        out["poisson_count"], out["poisson_sum"] = ca + cb, sa + sb
    if a.value_points is not None or b.value_points is not None:
        if a.value_points is None or b.value_points is None:
            raise ValueError("statistics of tables with different column types cannot be merged")
        table = _value_table.merge_values(a.values, b.values)
        out.update(zip(("value_points", "value_count", "n_values"), table))
    return out


@dataclass
class ObservedMoments(_Stats):
    """Moments of features with missing cells: per class and feature observed weights.

    What Gaussian naive Bayes with ``missing="ignore"`` keeps: a NaN cell is
    left out of its feature's weight, mean and sum of squares, so the
    weights differ by feature.

    Attributes
    ----------
    class_count : ndarray of shape (n_classes,)
        Sum of sample weights per class (every row, observed or not).
    count, shift, offset, m2 : ndarray of shape (n_classes, n_features)
        Observed weight, mean (``shift + offset``) and centred sum of squares
        of each feature's observed cells in each class.
    """

    class_count: np.ndarray
    count: np.ndarray
    shift: np.ndarray
    offset: np.ndarray
    m2: np.ndarray

    shapes = {"class_count": "K", "count": "Kd", "shift": "Kd", "offset": "Kd", "m2": "Kd"}
    _non_negative = {"count": "observed weights", "m2": "sums of squares"}

    @classmethod
    def from_data(cls, X, y_idx, w, n_classes):
        """Statistics of one chunk; NaN cells of ``X`` are left out."""
        n = X.shape[0]
        weights = np.ones(n) if w is None else w
        class_count = np.bincount(y_idx, weights=weights, minlength=n_classes).astype(np.float64)
        if not np.isnan(X).any():
            # Without missing cells, the moments of complete rows (one weight per class).
            full = ClassMoments.from_data(X, y_idx, w, n_classes)
            count = np.repeat(full.count[:, None], X.shape[1], axis=1)
            return cls(class_count, count, full.shift, full.offset, full.m2)
        count, shift, offset, m2 = observed_moments(X, y_idx, w, n_classes)
        return cls(class_count, count, shift, offset, m2)

    @property
    def mean(self) -> np.ndarray:
        """Per class and feature mean of the observed cells (0 where none)."""
        return np.where(self.count > 0, self.shift + self.offset, 0.0)

    def moments(self):
        return self.count, self.shift, self.offset, self.m2

    def merge(self, other: ObservedMoments) -> ObservedMoments:
        """Chan-Golub-LeVeque update, feature by feature."""
        return ObservedMoments(
            self.class_count + other.class_count, *merge_moments(self.moments(), other.moments())
        )

    def pooled(self):
        """Observed weight, mean and m2 of each feature over all classes, each (n_features,)."""
        return pooled_moments(*self.moments())


@dataclass
class ObservedCounts(_Stats):
    """Class counts, per-feature sums and per-feature observed weights.

    What Bernoulli naive Bayes with ``missing="ignore"`` keeps: the
    denominator of ``p_kj`` counts the class-``k`` rows where feature ``j``
    is observed.

    Attributes
    ----------
    class_count : ndarray of shape (n_classes,)
    feature_count : ndarray of shape (n_classes, n_features)
        Weighted sum of the observed values (the ones, for binary features).
    observed_count : ndarray of shape (n_classes, n_features)
        Weight of the rows where the feature is observed.
    """

    class_count: np.ndarray
    feature_count: np.ndarray
    observed_count: np.ndarray

    shapes = {"class_count": "K", "feature_count": "Kd", "observed_count": "Kd"}
    _non_negative = {"feature_count": "feature counts", "observed_count": "observed weights"}

    @classmethod
    def from_data(cls, X, y_idx, w, n_classes):
        """Statistics of one chunk; NaN cells of ``X`` are left out."""
        n = X.shape[0]
        onehot = np.zeros((n_classes, n))
        onehot[y_idx, np.arange(n)] = np.ones(n) if w is None else w
        class_count = onehot.sum(axis=1)
        feature_count = onehot @ X
        if not np.isnan(feature_count).any():
            observed = np.repeat(class_count[:, None], X.shape[1], axis=1)
            return cls(class_count, feature_count, observed)
        seen = ~np.isnan(X)
        return cls(class_count, onehot @ np.where(seen, X, 0.0), onehot @ seen.astype(np.float64))

    def merge(self, other: ObservedCounts) -> ObservedCounts:
        """Statistics of both chunks (sums add)."""
        return ObservedCounts(
            self.class_count + other.class_count,
            self.feature_count + other.feature_count,
            self.observed_count + other.observed_count,
        )
