"""One sort per class: everything the one-vs-rest ranking figures of a report need.

Sorting a class's column of posteriors is the costly step of every ranking
figure (a million rows take about 0.1 s a column); after it, the ROC and
precision-recall curves, the ROC AUC, the average precision and DeLong's
placement values all follow from cumulative counts over runs of equal scores
in O(n). :func:`rank_column` does that for one binary problem and
:func:`one_vs_rest` for every class of a posterior matrix, with DeLong's
covariance of the class AUCs (:mod:`nbcli.reports.delong`), the columns on
threads (NumPy releases the GIL while it sorts and gathers).

Within a run of equal scores the order of the rows does not matter to any
of these figures (tied rows enter a curve together and count one half
against each other in an AUC), so the sort need not be stable: the values
are those of :func:`nbcli.reports.ranking.threshold_counts` exactly, counts
being whole numbers.

NumPy only: no file I/O, no printing.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class ColumnRanks:
    """One binary problem's scores sorted once and reduced to runs of equal scores.

    ``fps``, ``tps`` and ``thresholds`` are those of
    :func:`nbcli.reports.ranking.threshold_counts` (distinct scores,
    decreasing, with the negatives and positives scoring at or above each).
    ``placement`` has one value per row, in row order: DeLong's ``V10`` (the
    share of negatives scoring below the row, ties one half) for a positive
    row and ``V01`` (the share of positives scoring above it) for a
    negative one; ``None`` when not asked for. ``auc`` is their common mean,
    the Mann-Whitney form of the ROC AUC (NaN without a positive or a
    negative row).
    """

    fps: np.ndarray
    tps: np.ndarray
    thresholds: np.ndarray
    auc: float
    n_positive: int
    n_negative: int
    placement: np.ndarray | None = None


def rank_column(is_positive, score, *, placement: bool = True) -> ColumnRanks:
    """Sort one binary problem once and take every ranking count from the runs.

    Parameters
    ----------
    is_positive : array-like of bool, shape (n_samples,)
    score : array-like of float, shape (n_samples,)
        Finite scores (checked by the callers, through
        :func:`nbcli.reports.ranking.check_scores`).
    placement : bool
        Also give every row's placement value (one more array of n floats).

    Returns
    -------
    ColumnRanks

    Notes
    -----
    One unstable ``argsort`` (O(n log n)) and O(n) passes. With ``r`` runs
    of equal scores in increasing order, ``P<`` and ``N<`` the positives and
    negatives in earlier runs and ``p``, ``q`` those in the run, a positive
    of the run has ``V10 = (N< + q / 2) / n`` and a negative
    ``V01 = (m - P< - p + p / 2) / m`` (m positives, n negatives), which is
    Sun and Xu's midrank form (2014) without the midranks. Sums of halves of
    whole numbers are exact in float64 up to 2**52, so ``auc`` is exact up
    to its one division.
    """
    y = np.asarray(is_positive, dtype=bool)
    s = np.asarray(score, dtype=np.float64)
    size = s.size
    if size == 0:
        empty = np.zeros(0)
        return ColumnRanks(empty, empty, empty, math.nan, 0, 0, empty if placement else None)
    order = np.argsort(s)
    ordered = s[order]
    hit = y[order]
    first = np.empty(size, dtype=bool)
    first[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    ends = np.empty_like(starts)
    ends[:-1] = starts[1:]
    ends[-1] = size
    through = np.cumsum(hit, dtype=np.int64)[ends - 1]  # positives up to each run's end
    before = np.empty_like(through)  # positives in earlier runs
    before[0] = 0
    before[1:] = through[:-1]
    m = int(through[-1])
    n = size - m
    # Descending thresholds, as threshold_counts gives them: the rows at or
    # above a run are those from its start up.
    tps = (m - before)[::-1].astype(np.float64)
    fps = ((size - starts) - (m - before))[::-1].astype(np.float64)
    thresholds = ordered[starts][::-1]
    pos_in = through - before
    neg_before = starts - before
    neg_in = (ends - starts) - pos_in
    if m == 0 or n == 0:
        values = np.full(size, math.nan) if placement else None
        return ColumnRanks(fps, tps, thresholds, math.nan, m, n, values)
    below = neg_before + 0.5 * neg_in  # negatives under a positive of the run, ties half
    auc = float(pos_in @ below) / (float(m) * float(n))
    values = None
    if placement:
        v10 = below / n
        v01 = ((m - through) + 0.5 * pos_in) / m
        if starts.size == size:  # no ties: one row a run
            sorted_values = np.where(hit, v10, v01)
        else:
            run = np.cumsum(first, dtype=np.intp) - 1
            sorted_values = np.where(hit, v10[run], v01[run])
        values = np.empty(size)
        values[order] = sorted_values
    return ColumnRanks(fps, tps, thresholds, auc, m, n, values)


@dataclass(frozen=True)
class OneVsRest:
    """Every class of a posterior matrix against the rest, each column sorted once.

    ``ranks`` holds one :class:`ColumnRanks` per class in column order
    (without placements: they are folded into ``covariance``); ``auc`` the
    classes' Mann-Whitney AUCs, ``covariance`` DeLong's covariance of them
    (see :func:`nbcli.reports.delong.ovr_covariance`; ``None`` when not
    asked for) and ``class_sizes`` the rows of each class.
    """

    ranks: list[ColumnRanks]
    auc: np.ndarray
    covariance: np.ndarray | None
    class_sizes: np.ndarray


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
        The columns whose placements enter ``covariance`` (default all);
        every column is ranked.
    covariance : bool
        Compute DeLong's covariance (it holds ``len(columns)`` values per row).
    threads : int, optional
        Columns ranked at once; default the scoring threads
        (``NBCLI_THREADS``, else the cores, at most 8).

    Returns
    -------
    OneVsRest
        Rows and columns of ``covariance`` outside ``columns`` or of classes
        whose AUC is undefined are NaN; its diagonal is DeLong's variance
        ``S10 / m + S01 / n`` (NaN with fewer than two rows on a side), the
        rest ``sum_i D_c(i) D_d(i)``.
    """
    k = proba.shape[1]
    n_rows = codes.size
    wanted = list(range(k)) if columns is None else [int(c) for c in columns]
    contribution_row = {c: i for i, c in enumerate(wanted)} if covariance else {}
    d = np.zeros((len(contribution_row), n_rows)) if covariance else None
    variance = np.full(k, math.nan)

    def rank(c: int) -> ColumnRanks:
        pos = codes == c
        ranks = rank_column(pos, proba[:, c], placement=c in contribution_row)
        if ranks.placement is None:
            return ranks
        if d is not None and math.isfinite(ranks.auc):
            m, n = ranks.n_positive, ranks.n_negative
            row = d[contribution_row[c]]
            np.subtract(ranks.placement, ranks.auc, out=row)
            row /= np.where(pos, float(m), float(n))
            if m > 1 and n > 1:
                # As Placements.variance takes it, so that one AUC has one
                # interval whichever function gives it.
                v10, v01 = ranks.placement[pos], ranks.placement[~pos]
                variance[c] = float(np.var(v10, ddof=1) / m + np.var(v01, ddof=1) / n)
        # The placements now live in d; the curves keep only the counts.
        return ColumnRanks(
            ranks.fps, ranks.tps, ranks.thresholds, ranks.auc, ranks.n_positive, ranks.n_negative
        )

    workers = min(_threads() if threads is None else max(1, int(threads)), k)
    if workers > 1 and n_rows >= _PARALLEL_ROWS:
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="nbcli-rank") as pool:
            ranked = list(pool.map(rank, range(k)))
    else:
        ranked = [rank(c) for c in range(k)]
    auc = np.array([r.auc for r in ranked])
    cov = None
    if d is not None:
        cov = np.full((k, k), math.nan)
        index = np.array(wanted, dtype=np.intp)
        cov[np.ix_(index, index)] = d @ d.T
        for c in wanted:
            cov[c, c] = variance[c]
        undefined = ~np.isfinite(auc)
        cov[undefined, :] = math.nan
        cov[:, undefined] = math.nan
    sizes = np.bincount(codes, minlength=k).astype(np.float64)
    return OneVsRest(ranked, auc, cov, sizes)


# Below this many rows the columns are ranked on one thread: a pool costs
# more than it saves.
_PARALLEL_ROWS = 50_000


def _threads() -> int:
    from nbcli.models._parallel import scoring_threads

    return scoring_threads()
