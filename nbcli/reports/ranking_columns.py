"""One pass per class: everything the one-vs-rest ranking figures of a report need.

Ordering a class's column of posteriors is the costly step of every ranking
figure (a full sort of a million rows takes about 0.06 s a column); after
it, the ROC AUC, the average precision, DeLong's placement values and
variance, and the counts behind the ROC and precision-recall curves all
follow from cumulative counts over runs of equal scores, in O(n).
:func:`rank_column` does that for one binary problem and
:func:`one_vs_rest` for every class of a posterior matrix, with DeLong's
covariance of the class AUCs (:mod:`nbcli.reports.delong`), the columns on
threads (NumPy releases the GIL while it sorts, gathers and adds). Every
figure but the curves needs only part of the order: a large column is cut
into buckets of neighbouring scores, and only the rows of buckets holding
both classes, and the positives, are sorted (:func:`_by_buckets`). The
curves themselves are drawn only when something asks for them
(:class:`LazyCurves`), from a full sort.

Within a run of equal scores the order of the rows does not matter to any
of these figures (tied rows enter a curve together and count one half
against each other in an AUC), so the sort need not be stable: the counts
are those of :func:`nbcli.reports.ranking.threshold_counts` exactly, being
whole numbers.

Runs, in increasing order of score: a run holds ``p`` positives and ``q``
negatives, with ``P<`` and ``N<`` positives and negatives in earlier runs;
with m positives and n negatives in all,

* a positive of the run has ``V10 = (N< + q / 2) / n`` and a negative
  ``V01 = (m - P< - p / 2) / m`` (Sun and Xu's midrank form, 2014, without
  the midranks), and the AUC is ``sum p V10 / m``;
* DeLong's variance is ``S10 / m + S01 / n`` with ``S10 = sum p (V10 -
  AUC)**2 / (m - 1)`` over the runs (``S01`` likewise);
* the threshold at the run has ``tps = m - P<`` and ``tps + fps`` rows at or
  above it, and the average precision is ``sum p / m * tps / (tps + fps)``
  (the gain in recall at the threshold times the precision there).

Sums of halves of whole numbers are exact in float64 up to 2**52, so the
AUC is exact up to its one division.

NumPy only: no file I/O, no printing.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, overload

import numpy as np

from nbcli.reports.curves import pr_curve_from_counts, roc_curve_from_counts

PLACEMENT = "placement"
CONTRIBUTION = "contribution"


@dataclass(frozen=True)
class ColumnRanks:
    """One binary problem's ranking figures, from one sort of its scores.

    ``auc`` is the ROC AUC (Mann-Whitney form; NaN without a positive or a
    negative row), ``average_precision`` the step integral of the
    precision-recall curve (NaN without a positive), ``variance`` DeLong's
    ``S10 / m + S01 / n`` (NaN with fewer than two rows on a side).

    ``fps``, ``tps`` and ``thresholds`` are those of
    :func:`nbcli.reports.ranking.threshold_counts` (distinct scores,
    decreasing, with the negatives and positives scoring at or above each),
    ``None`` unless asked for. ``per_row`` has one value per row in row
    order, ``None`` unless asked for: DeLong's placement value (``V10`` for
    a positive row, ``V01`` for a negative one) or the row's contribution
    to the AUC, ``(V10 - AUC) / m`` or ``(V01 - AUC) / n``.
    """

    auc: float
    average_precision: float
    variance: float
    n_positive: int
    n_negative: int
    fps: np.ndarray | None = None
    tps: np.ndarray | None = None
    thresholds: np.ndarray | None = None
    per_row: np.ndarray | None = None


class _Counts(NamedTuple):
    fps: np.ndarray | None = None
    tps: np.ndarray | None = None
    thresholds: np.ndarray | None = None


def rank_column(
    is_positive,
    score,
    *,
    counts: bool = False,
    per_row: str | None = None,
    out: np.ndarray | None = None,
) -> ColumnRanks:
    """Sort one binary problem once and take its ranking figures from the runs of equal scores.

    Parameters
    ----------
    is_positive : array-like of bool, shape (n_samples,)
    score : array-like of float, shape (n_samples,)
        Finite scores (the callers check them with
        :func:`nbcli.reports.ranking.check_scores`).
    counts : bool
        Also give the threshold counts (three arrays of up to n values).
    per_row : {None, "placement", "contribution"}
        Also give every row's placement value or contribution (module notes).
    out : ndarray of float, shape (n_samples,), optional
        Where to write ``per_row`` (left as it is when the AUC is undefined).

    Returns
    -------
    ColumnRanks

    Notes
    -----
    O(n log n) with a few O(n) passes: without ``counts``, a column of at
    least :data:`_BUCKET_ROWS` rows sorts only its positives and the
    negatives sharing a bucket of neighbouring scores with one
    (:func:`_by_buckets`); otherwise one unstable sort
    (:func:`ascending_order`) of every row.
    """
    y = np.asarray(is_positive, dtype=bool)
    # A column of a posterior matrix is strided: every pass below reads it,
    # and reads a contiguous copy faster than the copy costs (a strided pass
    # reads a cache line per value).
    s = np.ascontiguousarray(score, dtype=np.float64)
    size = s.size
    nan = math.nan
    if size == 0:
        empty = np.zeros(0)
        kept = _Counts(empty, empty, empty) if counts else _Counts()
        return ColumnRanks(nan, nan, nan, 0, 0, *kept, per_row=empty if per_row else None)
    if not counts and size >= _BUCKET_ROWS:
        ranked = _by_buckets(y, s, per_row, out)
        if ranked is not None:
            return ranked
    order = ascending_order(s)
    ordered = s[order]
    hit = y[order]
    first = np.empty(size, dtype=bool)
    first[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    if first.all():
        return _without_ties(order, ordered, hit, counts, per_row, out)
    cumulative = np.cumsum(hit, dtype=np.float64)
    start_index = np.flatnonzero(first)
    starts = start_index.astype(np.float64)
    ends = np.empty_like(start_index)
    ends[:-1] = start_index[1:]
    ends[-1] = size
    through = cumulative[ends - 1]
    pos_in = np.diff(through, prepend=0.0)
    m = int(cumulative[-1])
    n = size - m
    before = through - pos_in  # positives in earlier runs
    above = size - starts  # rows at or above the run's threshold
    tps = m - before
    kept = _Counts()
    if counts:
        kept = _Counts((above - tps)[::-1], tps[::-1], ordered[start_index][::-1])
    ap = float(np.sum(pos_in * (tps / above))) / m if m > 0 else nan
    if m == 0 or n == 0:
        values = out if per_row else None
        if per_row == PLACEMENT:
            values = np.full(size, nan) if out is None else out
            values[...] = nan
        return ColumnRanks(nan, ap, nan, m, n, *kept, per_row=values)
    neg_in = (ends - start_index) - pos_in
    below = (starts - before) + 0.5 * neg_in  # negatives under a positive of the run
    auc = float(np.sum(pos_in * below)) / (float(m) * float(n))
    v10 = below / n
    v01 = (m - before - 0.5 * pos_in) / m
    variance = nan
    if m > 1 and n > 1:
        d10, d01 = v10 - auc, v01 - auc
        s10 = float(np.sum(pos_in * d10 * d10)) / (m - 1)
        s01 = float(np.sum(neg_in * d01 * d01)) / (n - 1)
        variance = s10 / m + s01 / n
    values = None
    if per_row:
        if per_row == CONTRIBUTION:
            v10 = (v10 - auc) / m
            v01 = (v01 - auc) / n
        elif per_row != PLACEMENT:
            raise ValueError(f"per_row must be None, {PLACEMENT!r} or {CONTRIBUTION!r}")
        run = np.cumsum(first, dtype=np.intp) - 1
        values = np.empty(size) if out is None else out
        values[order] = np.where(hit, v10[run], v01[run])
    return ColumnRanks(auc, ap, variance, m, n, *kept, per_row=values)


# Columns of at least this many rows are ranked through buckets of neighbouring
# scores (see _by_buckets).
_BUCKET_ROWS = 10_000

# Buckets per row of a column (a million rows: 250,000 buckets, whose counts
# stay in cache).
_BUCKETS_PER_ROW = 0.25

# Beyond this share of rows in buckets that hold both classes, sorting the
# rows in those buckets costs what sorting every row does: the whole column
# is sorted instead.
_MIXED_SHARE = 0.5

_MAGNITUDE = np.int64(0x7FFF_FFFF_FFFF_FFFF)


def order_keys(x: np.ndarray) -> np.ndarray:
    """int64 keys (shape (n,)) in the order of the finite float64 values ``x``.

    The bit pattern of a non-negative float64 orders as the integer; a
    negative one orders backwards, so its magnitude bits are flipped. -0.0
    becomes 0.0 first, so equal values have equal keys.
    """
    key = (np.asarray(x, dtype=np.float64) + 0.0).view(np.int64)
    if key.size and key.min() < 0:
        key ^= (key >> 63) & _MAGNITUDE
    return key


def _by_buckets(y: np.ndarray, s: np.ndarray, per_row, out) -> ColumnRanks | None:
    """:func:`rank_column` without counts for a large column, sorting only what matters.

    The scores are cut into buckets of neighbouring values (a shift of
    :func:`order_keys`, about :data:`_BUCKETS_PER_ROW` buckets a row). A
    row's figures depend only on how many rows of the other class score
    below it and equal to it. Where its bucket holds no row of the other
    class, those are the other class's rows in lower buckets, read from a
    table of cumulative counts. Only the rows in buckets holding both
    classes ("mixed") are searched among the other class's sorted mixed
    rows; and the positives are sorted, for the average precision, which
    also needs the positives at or above each positive. Posteriors of a
    class put most negatives in buckets without a positive: a million rows
    of eight classes sort about a tenth of their negatives. ``None`` when no
    row has the other class, or when more than :data:`_MIXED_SHARE` of the
    rows are mixed (sorting them all is then as cheap).

    The counts are whole numbers and halves, as in the run form (module
    notes), so the AUC is the same to the last bit; the average precision
    and the variance add the same terms in another order.
    """
    size = s.size
    key, n_buckets = _bucket_keys(s, max(1, int(size * _BUCKETS_PER_ROW)))
    pos_rows = np.flatnonzero(y)
    m = pos_rows.size
    n = size - m
    if m == 0 or n == 0:
        return None
    pos_key = key[pos_rows]
    pos_count = np.bincount(pos_key, minlength=n_buckets)
    neg_count = np.bincount(key, minlength=n_buckets) - pos_count
    mixed = (pos_count > 0) & (neg_count > 0)
    mixed_row = mixed[key]
    if np.count_nonzero(mixed_row) > _MIXED_SHARE * size:
        return None
    pure = ~mixed

    def below(counts: np.ndarray) -> np.ndarray:
        """Rows in lower buckets, as float64 (whole numbers, exact)."""
        return (np.cumsum(counts) - counts).astype(np.float64)

    # Positives in sorted order, with how many positives score below each.
    pos_score = s[pos_rows]
    pos_order = ascending_order(pos_score)
    pos_sorted = pos_score[pos_order]
    pos_key = pos_key[pos_order]
    pos_rows = pos_rows[pos_order]
    first = np.empty(m, dtype=bool)
    first[0] = True
    np.not_equal(pos_sorted[1:], pos_sorted[:-1], out=first[1:])
    pos_lower = np.maximum.accumulate(np.where(first, np.arange(m), 0)).astype(np.float64)

    # Negatives below (and tied with) each positive: v10 * n.
    pos_mixed = mixed[pos_key]
    v10 = below(neg_count)[pos_key]
    neg_lower = v10
    # The mixed negatives in sorted order: searched for, as for the positives,
    # in order, which takes NumPy's search a fraction of the time of probes
    # in row order.
    mixed_neg_rows = np.flatnonzero(mixed_row & ~y)
    mixed_neg = s[mixed_neg_rows]
    neg_order = ascending_order(mixed_neg)
    mixed_neg = mixed_neg[neg_order]
    mixed_neg_rows = mixed_neg_rows[neg_order]
    mixed_pos = pos_sorted[pos_mixed]
    if mixed_neg.size:
        lower, tied = _lower_and_tied(mixed_neg, mixed_pos)
        neg_lower = v10.copy()
        neg_lower[pos_mixed] = below(neg_count * pure)[pos_key[pos_mixed]] + lower
        v10[pos_mixed] = neg_lower[pos_mixed] + 0.5 * tied
    auc = float(np.sum(v10)) / (float(m) * float(n))  # whole numbers and halves: exact
    tps = m - pos_lower
    ap = float(np.sum(tps / (tps + (n - neg_lower)))) / m
    v10 /= n

    # Every negative's v01 = (positives above + half the tied) / m: by bucket
    # where its bucket holds no positive, searched for the mixed ones.
    table = (m - below(pos_count)) / m
    mixed_v01 = np.zeros(0)
    if mixed_neg.size:
        lower, tied = _lower_and_tied(mixed_pos, mixed_neg)
        mixed_v01 = (m - (below(pos_count * pure)[key[mixed_neg_rows]] + lower) - 0.5 * tied) / m

    variance = math.nan
    if m > 1 and n > 1:
        # Negatives in pure buckets share their bucket's value: summed by bucket.
        d10, d01 = v10 - auc, table - auc
        s01 = float(np.sum(neg_count * pure * (d01 * d01)))
        s01 += float(np.sum(np.square(mixed_v01 - auc)))
        variance = float(np.sum(d10 * d10)) / (m - 1) / m + s01 / (n - 1) / n
    values = None
    if per_row:
        if per_row == CONTRIBUTION:
            v10 = (v10 - auc) / m
            table = (table - auc) / n
            mixed_v01 = (mixed_v01 - auc) / n
        elif per_row != PLACEMENT:
            raise ValueError(f"per_row must be None, {PLACEMENT!r} or {CONTRIBUTION!r}")
        values = np.empty(size) if out is None else out
        np.take(table, key, out=values)
        values[pos_rows] = v10
        values[mixed_neg_rows] = mixed_v01
    return ColumnRanks(auc, ap, variance, m, n, per_row=values)


def _bucket_keys(s: np.ndarray, target: int) -> tuple[np.ndarray, int]:
    """Bucket of every score (int64, shape (n,), from 0) and the number of buckets,
    about ``target``: :func:`order_keys` shifted right, so that the buckets keep
    the scores' order."""
    bits = s.view(np.int64)  # s: contiguous float64 (rank_column made it so)
    low = int(bits.min())
    if low < 0:  # negative scores or -0.0: the keys need their own copy
        bits = order_keys(s)
        low = int(bits.min())
    high = int(bits.max())
    # A shift, not a division: the keys stay monotone, and a shifted span fits int64.
    shift = ((high - low) // target).bit_length()
    key = np.right_shift(bits, shift)
    key -= low >> shift
    return key, (high >> shift) - (low >> shift) + 1


def _lower_and_tied(ordered: np.ndarray, probe: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """How many of the sorted ``ordered`` lie below each ``probe`` value, and how many
    equal it (float64 whole numbers, shape of ``probe``); the second search only for
    the probes that have a tie."""
    lower = np.searchsorted(ordered, probe, "left")
    tied = np.zeros(probe.size)
    if ordered.size:
        hit = ordered[np.minimum(lower, ordered.size - 1)] == probe
        if hit.any():
            tied[hit] = np.searchsorted(ordered, probe[hit], "right") - lower[hit]
    return lower.astype(np.float64), tied


# From this many rows a column is sorted by polars: on one thread its sort of
# float64 keys takes about half the time of NumPy's argsort here (60 against
# 110 ms for a million posteriors), which pays for handing the column over.
_POLARS_SORT_ROWS = 100_000


def ascending_order(s: np.ndarray) -> np.ndarray:
    """Indices (intp, shape (n,)) that put the finite scores ``s`` in ascending order,
    tied scores in any order.

    Large columns are sorted by polars on the calling thread
    (``multithreaded=False``: the columns already run on threads of their
    own, see :func:`start_columns`), smaller ones by NumPy.
    """
    if s.size < _POLARS_SORT_ROWS:
        return np.argsort(s)
    import polars as pl

    frame = pl.DataFrame({"score": s})
    order = frame.select(pl.arg_sort_by("score", multithreaded=False)).to_series()
    return order.to_numpy().astype(np.intp)


def _without_ties(order, ordered, hit, counts: bool, per_row, out) -> ColumnRanks:
    """:func:`rank_column` when all scores differ: every figure from the sorted
    positions of the positives and of the negatives (O(m) and O(n) passes).

    With the positives at ascending sorted positions ``i_r`` (r = 0, 1, ...),
    ``i_r - r`` negatives lie below positive r; with the negatives at
    positions ``j_s``, ``j_s - s`` positives lie below negative s.
    """
    nan = math.nan
    size = order.size
    pos_at = np.flatnonzero(hit)
    m = pos_at.size
    n = size - m
    kept = _Counts()
    if counts:
        cumulative = np.cumsum(hit, dtype=np.float64)
        tps = m - (cumulative - hit)
        above = np.arange(size, 0, -1, dtype=np.float64)
        kept = _Counts((above - tps)[::-1], tps[::-1], ordered[::-1])
    rank = np.arange(m, dtype=np.float64)
    ap = float(np.sum((m - rank) / (size - pos_at))) / m if m else nan
    if m == 0 or n == 0:
        values = out if per_row else None
        if per_row == PLACEMENT:
            values = np.full(size, nan) if out is None else out
            values[...] = nan
        return ColumnRanks(nan, ap, nan, m, n, *kept, per_row=values)
    neg_at = np.flatnonzero(~hit)
    v10: np.ndarray = pos_at - rank  # negatives below each positive: whole numbers, summed exactly
    auc = float(v10.sum()) / (float(m) * float(n))
    v10 /= n
    v01: np.ndarray = neg_at - np.arange(n, dtype=np.float64)  # positives below each negative
    v01 = (m - v01) / m
    variance = nan
    if m > 1 and n > 1:
        variance = float(np.var(v10, ddof=1)) / m + float(np.var(v01, ddof=1)) / n
    values = None
    if per_row:
        if per_row == CONTRIBUTION:
            v10 -= auc
            v10 /= m
            v01 -= auc
            v01 /= n
        elif per_row != PLACEMENT:
            raise ValueError(f"per_row must be None, {PLACEMENT!r} or {CONTRIBUTION!r}")
        # Placed in sorted order first (two ordered writes), then into row
        # order by one scatter: half the random accesses of scattering each side.
        ranked = np.empty(size)
        ranked[pos_at] = v10
        ranked[neg_at] = v01
        values = np.empty(size) if out is None else out
        values[order] = ranked
    return ColumnRanks(auc, ap, variance, m, n, *kept, per_row=values)


@dataclass(frozen=True)
class OneVsRest:
    """Every class of a posterior matrix against the rest, each column sorted once.

    ``ranks`` holds one :class:`ColumnRanks` per class in column order
    (without counts or per-row values); ``covariance`` is DeLong's
    covariance of the class AUCs (see
    :func:`nbcli.reports.delong.ovr_covariance`; ``None`` when not asked
    for) and ``class_sizes`` the rows of each class.
    """

    ranks: list[ColumnRanks]
    covariance: np.ndarray | None
    class_sizes: np.ndarray

    @property
    def auc(self) -> np.ndarray:
        return np.array([r.auc for r in self.ranks])

    @property
    def average_precision(self) -> np.ndarray:
        return np.array([r.average_precision for r in self.ranks])


def one_vs_rest(
    codes: np.ndarray,
    proba: np.ndarray,
    *,
    columns: Sequence[int] | None = None,
    covariance: bool = True,
    threads: int | None = None,
) -> OneVsRest:
    """:func:`rank_column` of every class column, and DeLong's covariance of their AUCs.

    Parameters
    ----------
    codes : ndarray of int, shape (n_samples,)
        Validated class codes (column indices of ``proba``).
    proba : ndarray of float, shape (n_samples, n_classes)
        Validated, finite posteriors.
    columns : sequence of int, optional
        The columns that enter ``covariance`` (default all); every column
        is ranked.
    covariance : bool
        Compute DeLong's covariance (it holds ``len(columns)`` values a row
        while it is computed).
    threads : int, optional
        Columns ranked at once; default the scoring threads
        (``NBCLI_THREADS``, else the cores, at most 8).

    Returns
    -------
    OneVsRest
        Rows and columns of ``covariance`` outside ``columns`` or of classes
        whose AUC is undefined are NaN; its diagonal is DeLong's variance
        (NaN with fewer than two rows on a side), the rest the
        influence-function covariance ``sum_i D_c(i) D_d(i)``.
    """
    return start_one_vs_rest(
        codes, proba, columns=columns, covariance=covariance, threads=threads
    )()


def start_one_vs_rest(
    codes: np.ndarray,
    proba: np.ndarray,
    *,
    columns: Sequence[int] | None = None,
    covariance: bool = True,
    threads: int | None = None,
) -> Callable[[], OneVsRest]:
    """:func:`one_vs_rest` started on threads; the returned function waits for it.

    Large columns are sorted on threads from the call on, so the caller can
    do other work meanwhile; calling the returned function gives the
    :class:`OneVsRest` (the same whatever the threads).
    """
    k = proba.shape[1]
    n_rows = codes.size
    wanted = list(range(k)) if columns is None else [int(c) for c in columns]
    slot = {c: i for i, c in enumerate(wanted)} if covariance else {}
    d = np.zeros((len(slot), n_rows)) if slot else None

    def rank(c: int) -> ColumnRanks:
        if d is None or c not in slot:
            return rank_column(codes == c, proba[:, c])
        ranks = rank_column(codes == c, proba[:, c], per_row=CONTRIBUTION, out=d[slot[c]])
        return ColumnRanks(
            ranks.auc, ranks.average_precision, ranks.variance, ranks.n_positive, ranks.n_negative
        )

    gather = start_columns(rank, k, n_rows, threads)

    def finish() -> OneVsRest:
        ranked = gather()
        cov = None
        if d is not None:
            auc = np.array([r.auc for r in ranked])
            cov = np.full((k, k), math.nan)
            index = np.array(wanted, dtype=np.intp)
            cov[np.ix_(index, index)] = d @ d.T
            for c in wanted:
                cov[c, c] = ranked[c].variance
            undefined = ~np.isfinite(auc)
            cov[undefined, :] = math.nan
            cov[:, undefined] = math.nan
        sizes = np.bincount(codes, minlength=k).astype(np.float64)
        return OneVsRest(ranked, cov, sizes)

    return finish


# Below this many rows the columns are ranked on one thread: a pool costs
# more than it saves.
_PARALLEL_ROWS = 50_000


def map_columns(task: Callable[[int], Any], k: int, n_rows: int, threads: int | None) -> list:
    """``[task(c) for c in range(k)]``, on threads for large columns (the results do not
    depend on how many)."""
    return start_columns(task, k, n_rows, threads)()


def start_columns(
    task: Callable[[int], Any], k: int, n_rows: int, threads: int | None
) -> Callable[[], list]:
    """Start ``task(c)`` for ``c in range(k)``; the returned function waits and gives the
    results in column order. Large columns run on threads from the call on, with BLAS
    held to one thread until the results are taken, so that the threads do not
    oversubscribe the cores."""
    if threads is None:
        from nbcli.models._parallel import scoring_threads

        threads = scoring_threads()
    workers = min(max(1, int(threads)), k)
    if workers <= 1 or n_rows < _PARALLEL_ROWS:
        return lambda: [task(c) for c in range(k)]
    from concurrent.futures import ThreadPoolExecutor
    from contextlib import ExitStack

    from nbcli.models._parallel import one_blas_thread

    stack = ExitStack()
    stack.enter_context(one_blas_thread())
    pool = stack.enter_context(
        ThreadPoolExecutor(max_workers=workers, thread_name_prefix="nbcli-rank")
    )
    futures = [pool.submit(task, c) for c in range(k)]

    def gather() -> list:
        with stack:
            return [f.result() for f in futures]

    return gather


class LazyCurves(Sequence):
    """The ROC or precision-recall curve of every class, drawn on first use.

    A report keeps its curves for plots; drawing them costs one more sort per
    class, so they are made when first read (``len``, indexing, iteration)
    and then kept. ``kind`` is ``"roc"`` or ``"pr"``.
    """

    def __init__(self, codes: np.ndarray, proba: np.ndarray, kind: str):
        self._source: tuple[np.ndarray, np.ndarray] | None = (codes, proba)
        self._kind = kind
        self._curves: list | None = None

    def _made(self) -> list:
        if self._curves is None:
            assert self._source is not None
            codes, proba = self._source
            build = roc_curve_from_counts if self._kind == "roc" else pr_curve_from_counts

            def curve(c: int):
                r = rank_column(codes == c, proba[:, c], counts=True)
                return build(r.fps, r.tps, r.thresholds)

            self._curves = map_columns(curve, proba.shape[1], codes.size, None)
            self._source = None
        return self._curves

    def __len__(self) -> int:
        if self._curves is None and self._source is not None:
            return self._source[1].shape[1]
        return len(self._made())

    @overload
    def __getitem__(self, i: int): ...

    @overload
    def __getitem__(self, i: slice) -> list: ...

    def __getitem__(self, i):
        return self._made()[i]

    def __iter__(self) -> Iterator:
        return iter(self._made())

    def __eq__(self, other) -> bool:
        return list(self) == list(other) if isinstance(other, Sequence) else NotImplemented

    def __repr__(self) -> str:
        return f"LazyCurves({self._kind!r}, {len(self)} classes)"
