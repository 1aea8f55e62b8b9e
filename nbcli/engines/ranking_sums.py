"""ROC AUC and average precision from sums over parts: bucket counts, then levels.

A one-vs-rest ranking figure depends on the rows only through, for each
distinct score, how many positive and negative rows hold it (see
:mod:`nbcli.reports.ranking_columns`, "runs"). Those counts add across
parts, but the distinct scores of a large data set are about as many as its
rows, so they are gathered in two passes over the parts:

1. :class:`BucketCounts`: per class, the positives and negatives in each of
   a fixed grid of buckets of neighbouring scores (the top 16 bits of a
   posterior's float64 pattern: 16 buckets to each power of two, the same
   grid for every part, so counts add).
2. :class:`LevelCounts`: per class, only in the buckets that hold a positive,
   every distinct score with its positive and negative counts (merged by
   value). A bucket without a positive is one run of negatives: no positive
   ties with them or lies between them, so none of the figures needs their
   order.

The runs so obtained are those of a one-file sort of every row, so the AUC
(whole numbers and halves over one division) is the one-file value to the
last bit and the average precision and DeLong's variance add the same
terms in another order (to rounding, far below 1e-12).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

#: Bits of a non-negative float64 kept as its bucket (sign, exponent, 4 mantissa bits).
_SHIFT = 48
#: Buckets of scores in [0, 1]: the bucket of 1.0 is the last.
N_BUCKETS = (int(np.float64(1.0).view(np.int64)) >> _SHIFT) + 1


def bucket_of(scores: np.ndarray) -> np.ndarray:
    """Bucket (intp) of each posterior in [0, 1]; order-preserving."""
    s = np.ascontiguousarray(scores, dtype=np.float64) + 0.0  # -0.0 as 0.0
    return (s.view(np.int64) >> _SHIFT).astype(np.intp)


@dataclass
class BucketCounts:
    """Per class, the positive and negative rows of each bucket, shape (k, N_BUCKETS)."""

    positive: np.ndarray
    negative: np.ndarray

    @classmethod
    def empty(cls, k: int) -> BucketCounts:
        return cls(np.zeros((k, N_BUCKETS), np.int64), np.zeros((k, N_BUCKETS), np.int64))

    @classmethod
    def of(cls, codes: np.ndarray, proba: np.ndarray) -> BucketCounts:
        """Counts of the rows whose true class ``codes`` is a column of ``proba``."""
        k = proba.shape[1]
        out = cls.empty(k)
        for c in range(k):
            key = bucket_of(proba[:, c])
            hit = codes == c
            out.positive[c] = np.bincount(key[hit], minlength=N_BUCKETS)
            out.negative[c] = np.bincount(key[~hit], minlength=N_BUCKETS)
        return out

    def merge(self, other: BucketCounts) -> BucketCounts:
        return BucketCounts(self.positive + other.positive, self.negative + other.negative)

    def columns(self, lo: int, hi: int) -> BucketCounts:
        """The counts of classes ``lo:hi``."""
        return BucketCounts(self.positive[lo:hi], self.negative[lo:hi])


@dataclass
class LevelCounts:
    """Per class, the distinct scores in buckets holding a positive (sorted),
    with the positive and negative rows holding each."""

    values: list
    positive: list
    negative: list

    @classmethod
    def of(cls, codes: np.ndarray, proba: np.ndarray, shared: np.ndarray) -> LevelCounts:
        """Levels of the rows in the buckets ``shared`` (bool, shape (k, N_BUCKETS)) marks."""
        values: list = []
        positive: list = []
        negative: list = []
        for c in range(proba.shape[1]):
            s = proba[:, c]
            keep = shared[c][bucket_of(s)]
            v, inverse = np.unique(s[keep] + 0.0, return_inverse=True)
            hit = (codes[keep] == c).astype(np.float64)
            p = np.bincount(inverse, weights=hit, minlength=v.size)
            values.append(v)
            positive.append(p.astype(np.int64))
            negative.append((np.bincount(inverse, minlength=v.size) - p).astype(np.int64))
        return cls(values, positive, negative)

    def columns(self, lo: int, hi: int) -> LevelCounts:
        """The levels of classes ``lo:hi``."""
        return LevelCounts(self.values[lo:hi], self.positive[lo:hi], self.negative[lo:hi])

    @classmethod
    def joined(cls, counts: list[LevelCounts]) -> LevelCounts:
        """The levels of all of ``counts`` (one or more), merged at once: one sort a class."""
        if len(counts) == 1:
            return counts[0]
        values: list = []
        positive: list = []
        negative: list = []
        for c in range(len(counts[0].values)):
            v = np.concatenate([x.values[c] for x in counts])
            order = np.argsort(v, kind="stable")
            v = v[order]
            starts = np.flatnonzero(np.r_[True, v[1:] != v[:-1]]) if v.size else np.zeros(0, int)
            for field, out in (("positive", positive), ("negative", negative)):
                n = np.concatenate([getattr(x, field)[c] for x in counts])[order]
                out.append(np.add.reduceat(n, starts) if v.size else n)
            values.append(v[starts])
        return cls(values, positive, negative)

    def merge(self, other: LevelCounts) -> LevelCounts:
        values: list = []
        positive: list = []
        negative: list = []
        for c in range(len(self.values)):
            # Two sorted runs: a stable sort merges them in linear time.
            v = np.concatenate([self.values[c], other.values[c]])
            order = np.argsort(v, kind="stable")
            v = v[order]
            starts = np.flatnonzero(np.r_[True, v[1:] != v[:-1]]) if v.size else np.zeros(0, int)
            for mine, theirs, out in (
                (self.positive[c], other.positive[c], positive),
                (self.negative[c], other.negative[c], negative),
            ):
                counts = np.concatenate([mine, theirs])[order]
                out.append(np.add.reduceat(counts, starts) if v.size else counts)
            values.append(v[starts])
        return LevelCounts(values, positive, negative)


@dataclass(frozen=True)
class ColumnFigures:
    """One class's ROC AUC, average precision and DeLong variance (NaN where undefined)."""

    auc: float
    average_precision: float
    variance: float
    n_positive: int
    n_negative: int


def _class_runs(buckets: BucketCounts, levels: LevelCounts, c: int):
    """Class ``c``'s runs of equal score, ascending: positives, negatives, and for
    each run the negative-only bucket (``>= 0``) or level (``-1 - index``) it is."""
    pos_b, neg_b = buckets.positive[c], buckets.negative[c]
    only_negative = np.flatnonzero((pos_b == 0) & (neg_b > 0))
    level_bucket = bucket_of(levels.values[c])
    # Buckets with a positive hold levels; the others are one run each.
    key = np.concatenate([only_negative, level_bucket])
    within = np.concatenate([np.full(only_negative.size, -1.0), levels.values[c]])
    order = np.lexsort((within, key))
    p = np.concatenate([np.zeros(only_negative.size, np.int64), levels.positive[c]])[order]
    q = np.concatenate([neg_b[only_negative], levels.negative[c]])[order]
    source = np.concatenate([only_negative, -1 - np.arange(level_bucket.size)])[order]
    return p.astype(np.float64), q.astype(np.float64), source


def runs(buckets: BucketCounts, levels: LevelCounts, c: int) -> tuple[np.ndarray, np.ndarray]:
    """Positives and negatives of class ``c``'s runs of equal score, ascending."""
    p, q, _ = _class_runs(buckets, levels, c)
    return p, q


def _placements(p: np.ndarray, q: np.ndarray):
    """Positives below-or-tied count, positives in earlier runs and the totals."""
    m, n = float(p.sum()), float(q.sum())
    before = np.cumsum(p) - p
    rows_before = np.cumsum(p + q) - (p + q)
    return m, n, before, rows_before


def column_figures(p: np.ndarray, q: np.ndarray) -> ColumnFigures:
    """The figures of :func:`nbcli.reports.ranking_columns.rank_column` from its runs."""
    nan = math.nan
    m, n, before, rows_before = _placements(p, q)
    size = m + n
    above = size - rows_before
    tps = m - before
    with np.errstate(divide="ignore", invalid="ignore"):
        ap = float(np.sum(p * np.where(p > 0, tps / above, 0.0))) / m if m > 0 else nan
    if m == 0 or n == 0:
        return ColumnFigures(nan, ap, nan, int(m), int(n))
    below = rows_before - before + 0.5 * q
    auc = float(np.sum(p * below)) / (m * n)
    variance = nan
    if m > 1 and n > 1:
        d10 = below / n - auc
        d01 = (m - before - 0.5 * p) / m - auc
        variance = (
            float(np.sum(p * d10 * d10)) / (m - 1) / m + float(np.sum(q * d01 * d01)) / (n - 1) / n
        )
    return ColumnFigures(auc, ap, variance, int(m), int(n))


@dataclass(frozen=True)
class Contributions:
    """What a row's contribution to each class AUC needs (:mod:`nbcli.reports.delong`,
    ``D_c(i)``): by level for the buckets holding a positive, by bucket for the others."""

    shared: np.ndarray  # bool (k, N_BUCKETS)
    values: list  # per class: the levels
    positive: list  # per class: D of a positive row at each level
    negative: list  # per class: D of a negative row at each level
    bucket_negative: np.ndarray  # (k, N_BUCKETS): D of a negative in a negative-only bucket
    defined: np.ndarray  # bool (k,)

    def of(self, codes: np.ndarray, proba: np.ndarray) -> np.ndarray:
        """``sum_i D_c(i) D_d(i)`` over these rows, shape (k, k)."""
        k = proba.shape[1]
        D = np.zeros((proba.shape[0], k))
        for c in np.flatnonzero(self.defined):
            s = proba[:, c] + 0.0
            b = bucket_of(s)
            in_level = self.shared[c][b]
            # Sorted keys search the levels in order: far fewer cache misses.
            looked = s[in_level]
            order = np.argsort(looked)
            j = np.empty(looked.size, np.intp)
            j[order] = np.searchsorted(self.values[c], looked[order])
            hit = codes[in_level] == c
            D[in_level, c] = np.where(hit, self.positive[c][j], self.negative[c][j])
            D[~in_level, c] = self.bucket_negative[c][b[~in_level]]
        return D.T @ D


def class_figures(lo: int, hi: int, levels: list[LevelCounts], buckets: BucketCounts) -> list:
    """:class:`ColumnFigures` of classes ``lo:hi`` from every part's levels of those
    classes and the merged ``buckets`` of all classes (the ranges' merge of
    :meth:`nbcli.engines.dask_engine.DaskEngine.gather_columns`)."""
    merged = LevelCounts.joined(levels)
    own = buckets.columns(lo, hi)
    return [column_figures(*runs(own, merged, c)) for c in range(hi - lo)]


def contributions(buckets: BucketCounts, levels: LevelCounts) -> Contributions:
    """:class:`Contributions` of every class from the merged counts."""
    k = buckets.positive.shape[0]
    positive, negative = [], []
    bucket_negative = np.zeros((k, N_BUCKETS))
    defined = np.zeros(k, bool)
    for c in range(k):
        p, q, source = _class_runs(buckets, levels, c)
        m, n, before, rows_before = _placements(p, q)
        size = levels.values[c].size
        pos, neg = np.zeros(size), np.zeros(size)
        if m > 0 and n > 0:
            defined[c] = True
            below = rows_before - before + 0.5 * q
            auc = float(np.sum(p * below)) / (m * n)
            d10 = (below / n - auc) / m
            d01 = ((m - before - 0.5 * p) / m - auc) / n
            at_level = source < 0
            pos[-1 - source[at_level]] = d10[at_level]
            neg[-1 - source[at_level]] = d01[at_level]
            bucket_negative[c, source[~at_level]] = d01[~at_level]
        positive.append(pos)
        negative.append(neg)
    return Contributions(
        buckets.positive > 0, list(levels.values), positive, negative, bucket_negative, defined
    )
