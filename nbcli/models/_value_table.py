"""Distinct values with per-class weights: the statistics of kernel and
discretized columns, and what is computed from them.

A kernel density (Gaussian kernel) or a supervised discretisation of a
column needs its values, not sums of them. The values are kept as a table:
per column, its sorted distinct observed values, and per class the summed
weight of the rows holding each value. Two tables merge exactly (union of
the values, weights added), so a fit over chunks, parts or a cluster gives
the table of one fit over all rows, and everything derived from it (cut
points, bandwidths, densities) is that of one fit.

Memory is bounded by :data:`MAX_DISTINCT` distinct values per column; a
column with more is refused (at the chunk or merge where the union first
exceeds it, which does not depend on how the rows were split).

Columns' values sit side by side in ``points`` (shape ``(sum_j V_j,)``),
column ``j`` owning the ``V_j`` entries starting at ``sum_{i<j} V_i``;
``counts`` (shape ``(n_classes, sum_j V_j)``) has the weights in the same
order; ``sizes`` (float64, integral) gives the ``V_j``.
"""

from __future__ import annotations

import numpy as np

from nbcli.models._validation import ColumnValueError

#: Largest number of distinct values of one kernel or discretized column.
MAX_DISTINCT = 100_000

_LOG_SQRT_2PI = 0.5 * np.log(2.0 * np.pi)


class TooManyValuesError(ValueError):
    """A kernel or discretized column has more than :data:`MAX_DISTINCT` distinct values."""

    def __init__(self, column: int, n_values: int):
        self.column = column
        self.n_values = n_values
        super().__init__(
            f"kernel or discretized column {column} (counted from 0 among those columns) has "
            f"{n_values} distinct values, more than the {MAX_DISTINCT} such a column may hold; "
            "round its values or make it a gaussian column"
        )


def too_many_values_error(error: TooManyValuesError, types, names=None) -> ColumnValueError:
    """``error`` said of its column of the table: ``types`` are the table's
    column types in order (the kernel and discretized ones are those the
    error counts among), ``names`` the model's column names if it has them."""
    valued = [j for j, t in enumerate(types) if t in ("kernel", "discretized")]
    j = valued[error.column]
    return ColumnValueError(
        f"{types[j]} ",
        j,
        f" has more than {MAX_DISTINCT} distinct values, the most such a "
        "column may hold; round its values or make it a gaussian column",
        names=names,
    )


def offsets(sizes) -> np.ndarray:
    """Start of each column's values in ``points``, shape (n_columns,)."""
    n = np.asarray(sizes, dtype=np.intp)
    return np.concatenate(([0], np.cumsum(n)[:-1])).astype(np.intp)


def split(points: np.ndarray, counts: np.ndarray, sizes):
    """``[(values, weights)]`` per column: values (V_j,), weights (n_classes, V_j)."""
    ends = np.cumsum(np.asarray(sizes, dtype=np.intp))
    starts = ends - np.asarray(sizes, dtype=np.intp)
    return [(points[a:b], counts[:, a:b]) for a, b in zip(starts, ends)]


class ValueIndex:
    """Where values sit among sorted distinct values, found in a few passes.

    ``np.searchsorted`` over the distinct values costs a branchy binary
    search per row, slower than the rest of a fit or a prediction of such a
    column. Here the span of the values is cut into cells of equal width;
    each value's cell comes from arithmetic (subtract, scale, floor), the
    first distinct value of every cell from a table, and a few comparisons
    step through the cell's values (the most any cell holds). The cells of
    the distinct values are computed with the same arithmetic, which is
    monotone, so a value equal to a distinct value lands in that value's cell
    and is found: the positions are exact, not approximate. Values far from
    evenly spread (a cell holding more than :data:`_MAX_STEPS` distinct
    values) fall back to the binary search.

    Parameters
    ----------
    values : ndarray of shape (V,)
        Sorted distinct values, no NaN.
    """

    #: Cells per distinct value (within :data:`_MIN_CELLS`, :data:`_MAX_CELLS`).
    _CELLS_PER_VALUE = 4
    _MIN_CELLS = 1024
    _MAX_CELLS = 1 << 20
    #: Most distinct values one cell may hold before the binary search is cheaper.
    _MAX_STEPS = 4

    def __init__(self, values: np.ndarray):
        self.values = np.asarray(values, dtype=np.float64)
        v = self.values.size
        # A NaN after the last value compares unequal (and not less) to every value.
        self._padded = np.append(self.values, np.nan)
        self._first = None
        if v < 2:
            return
        n_cells = int(min(self._MAX_CELLS, max(self._MIN_CELLS, self._CELLS_PER_VALUE * v)))
        span = float(self.values[-1] - self.values[0])
        scale = n_cells / span if span > 0 else 0.0
        if not (np.isfinite(scale) and scale > 0):
            return
        self._origin, self._scale, self._top = float(self.values[0]), scale, float(n_cells - 1)
        cells = self._cells(self.values)
        # The first distinct value of each cell (the next cell's, if empty), one past the last.
        first = np.searchsorted(cells, np.arange(n_cells + 1), side="left")
        steps = int(np.diff(first).max())
        if steps > self._MAX_STEPS:
            return
        self._first, self._steps = first.astype(np.intp), steps

    @property
    def by_cells(self) -> bool:
        """Whether values are found by their cells (else by binary search)."""
        return self._first is not None or self.values.size < 2

    def _cells(self, x: np.ndarray) -> np.ndarray:
        s = np.subtract(x, self._origin)
        s *= self._scale
        np.floor(s, out=s)
        np.clip(s, 0.0, self._top, out=s)
        return s.astype(np.intp)

    def locate(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Positions of ``x`` (shape (n,), no NaN) among the values.

        Returns
        -------
        position : ndarray of intp, shape (n,)
            ``values[position] == x`` where ``found``; meaningless elsewhere
            (within ``0..V``).
        found : ndarray of bool, shape (n,)
        """
        v = self.values.size
        if v == 0:
            return np.zeros(x.shape[0], dtype=np.intp), np.zeros(x.shape[0], dtype=bool)
        if v == 1:
            return np.zeros(x.shape[0], dtype=np.intp), x == self.values[0]
        if self._first is None:
            pos = np.searchsorted(self.values, x, side="left")
            return pos, self._padded[pos] == x
        pos = self._first[self._cells(x)]
        for _ in range(self._steps - 1):
            pos += self._padded[pos] < x
        return pos, self._padded[pos] == x


def _check_size(j: int, n: int) -> None:
    if n > MAX_DISTINCT:
        raise TooManyValuesError(j, n)


def count_values(X: np.ndarray, y_idx, w, n_classes: int):
    """The value table of one chunk.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_columns)
        NaN marks a missing cell, which is left out.
    y_idx : ndarray of shape (n_samples,)
    w : ndarray of shape (n_samples,) or None
    n_classes : int

    Returns
    -------
    points : ndarray of shape (sum_j V_j,)
    counts : ndarray of shape (n_classes, sum_j V_j)
    sizes : ndarray of shape (n_columns,)

    Raises
    ------
    TooManyValuesError
    """
    y_idx = np.asarray(y_idx, dtype=np.intp)
    points, counts, sizes = [np.zeros(0)], [np.zeros((n_classes, 0))], []
    for j in range(X.shape[1]):
        col = X[:, j]
        # Sorting alone is several times faster than sorting with the order
        # (return_inverse); the rows find their value through ValueIndex.
        values = np.unique(col)
        classes, weights = y_idx, w
        if values.size and np.isnan(values[-1]):  # NaN sorts last
            seen = ~np.isnan(col)
            col, classes = col[seen], y_idx[seen]
            weights = None if w is None else w[seen]
            values = values[~np.isnan(values)]
        _check_size(j, values.size)
        index = ValueIndex(values)
        if index.by_cells:
            where, found = index.locate(col)
            if not found.all():  # cannot happen: every row's value is among them
                raise AssertionError("a value was not found among the column's distinct values")
        else:  # sorting with the order beats a binary search per row
            where = np.unique(col, return_inverse=True)[1].ravel()
        flat = classes * values.size + where
        c = np.bincount(flat, weights=weights, minlength=n_classes * values.size)
        points.append(values + 0.0)  # -0.0 and 0.0 are one value
        counts.append(c.reshape(n_classes, values.size).astype(np.float64))
        sizes.append(values.size)
    return np.concatenate(points), np.hstack(counts), np.asarray(sizes, dtype=np.float64)


def merge_values(a, b):
    """The value table of two chunks, each ``(points, counts, sizes)``: values
    united column by column, weights added.

    Raises
    ------
    TooManyValuesError
    """
    pa, ca, na = a
    pb, cb, nb = b
    k = ca.shape[0]
    points, counts = [np.zeros(0)], [np.zeros((k, 0))]
    for j, ((va, wa), (vb, wb)) in enumerate(zip(split(pa, ca, na), split(pb, cb, nb))):
        values = np.union1d(va, vb)
        _check_size(j, values.size)
        c = np.zeros((k, values.size))
        c[:, np.searchsorted(values, va)] += wa
        c[:, np.searchsorted(values, vb)] += wb
        points.append(values)
        counts.append(c)
    sizes = np.asarray([p.size for p in points[1:]], dtype=np.float64)
    return np.concatenate(points), np.hstack(counts), sizes


# -- supervised discretisation -------------------------------------------------


def _entropy_bits(counts: np.ndarray) -> np.ndarray:
    """Entropy in bits of class counts along the last axis (0 for an empty set)."""
    total = counts.sum(axis=-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        p = np.where(total[..., None] > 0, counts / total[..., None], 0.0)
        terms = np.where(p > 0, p * np.log2(np.where(p > 0, p, 1.0)), 0.0)
    return -terms.sum(axis=-1)


def mdl_cut_points(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Fayyad and Irani's MDL cut points of one column.

    The recursive minimal-entropy partitioning of Fayyad and Irani,
    "Multi-interval discretization of continuous-valued attributes for
    classification learning" (IJCAI 1993), as Weka's supervised
    ``Discretize`` filter applies it: in a set of ``N`` rows (their summed
    weight), the boundary between two adjacent distinct values that
    minimises the class entropy of the two halves, weighted by their
    weights, is accepted when the information gain exceeds
    ``(log2(N - 1) + delta) / N`` with ``delta = log2(3^k - 2) - (k E -
    k_1 E_1 - k_2 E_2)`` (``k`` the classes present, ``E`` the entropies in
    bits); each half is then split the same way. The cut is the midpoint of
    the two values; ties between boundaries go to the lowest.

    Parameters
    ----------
    values : ndarray of shape (V,)
        Sorted distinct values.
    counts : ndarray of shape (n_classes, V)
        Per class, the weight of the rows holding each value.

    Returns
    -------
    ndarray of shape (n_cuts,)
        Sorted cut points; a value ``x`` falls into interval ``i`` where
        ``cuts[i - 1] < x <= cuts[i]``.
    """
    table = np.asarray(counts, dtype=np.float64).T  # (V, K)
    cuts: list[float] = []
    _split(np.asarray(values, dtype=np.float64), table, 0, table.shape[0], cuts)
    return np.asarray(sorted(cuts), dtype=np.float64)


def _split(values, table, lo: int, hi: int, cuts: list) -> None:
    if hi - lo < 2:
        return
    block = table[lo:hi]
    prior = block.sum(axis=0)
    n = prior.sum()
    left = np.cumsum(block, axis=0)[:-1]  # class counts at or below each boundary
    right = prior - left
    wl, wr = left.sum(axis=1), right.sum(axis=1)
    cond = (wl * _entropy_bits(left) + wr * _entropy_bits(right)) / n
    prior_entropy = float(_entropy_bits(prior))
    best = int(np.argmin(cond))
    if not cond[best] < prior_entropy:
        return
    gain = prior_entropy - float(cond[best])
    k = int(np.count_nonzero(prior > 0))
    k1 = int(np.count_nonzero(left[best] > 0))
    k2 = int(np.count_nonzero(right[best] > 0))
    delta = np.log2(3.0**k - 2.0) - (
        k * prior_entropy
        - k1 * float(_entropy_bits(left[best]))
        - k2 * float(_entropy_bits(right[best]))
    )
    if n <= 1 or not gain > (np.log2(n - 1.0) + delta) / n:
        return
    cut = lo + best
    cuts.append((values[cut] + values[cut + 1]) / 2.0)
    _split(values, table, lo, cut + 1, cuts)
    _split(values, table, cut + 1, hi, cuts)


def interval_counts(values, counts, cuts) -> np.ndarray:
    """Per class, the weight of each interval ``cuts`` make, shape (n_classes, n_cuts + 1)."""
    which = np.searchsorted(cuts, values, side="left")
    out = np.zeros((counts.shape[0], cuts.size + 1))
    np.add.at(out.T, which, counts.T)
    return out


# -- kernel densities ----------------------------------------------------------


def weighted_quantile(values, weights, q: float) -> float:
    """Quantile ``q`` of values with weights, as R's ``quantile(type = 7)`` of
    the sample with each value repeated its weight's number of times (exact
    for whole-number weights; linear in the cumulative weight otherwise)."""
    keep = weights > 0
    v, cum = values[keep], np.cumsum(weights[keep])
    h = (cum[-1] - 1.0) * q if cum[-1] > 1 else 0.0
    below = np.floor(h)

    def at(i):  # the value at 0-based position i of the repeated sample
        return v[min(int(np.searchsorted(cum, i, side="right")), v.size - 1)]

    return float(at(below) + (h - below) * (at(below + 1) - at(below)))


def nrd0_bandwidth(values, weights) -> float:
    """Silverman's rule of thumb as R's ``bw.nrd0`` (``density``'s default):
    ``0.9 min(sd, IQR / 1.34) n^(-1/5)``, with ``n`` the summed weight and
    ``sd`` the sample standard deviation (divisor ``n - 1``).

    Where that minimum is zero, R's fallbacks: the standard deviation, then
    the absolute value of the values' mean, then 1. One value (``n <= 1``)
    has no standard deviation: the fallbacks start at its absolute value.
    """
    keep = weights > 0
    v, w = values[keep], weights[keep]
    n = float(w.sum())
    mean = float(w @ v) / n
    sd = float(np.sqrt(w @ (v - mean) ** 2 / (n - 1.0))) if n > 1 else 0.0
    iqr = weighted_quantile(v, w, 0.75) - weighted_quantile(v, w, 0.25)
    lo = min(sd, iqr / 1.34)
    if not lo > 0:
        lo = sd if sd > 0 else (abs(mean) if mean != 0 else 1.0)
    return 0.9 * lo * n**-0.2


#: Elements (rows x kernels) of the blocks in which kernel sums are taken.
_CACHED_ELEMENTS = 1 << 16
#: Exponent below which a kernel's share of a log-sum is taken as 0 (see kernel_log_density).
_LOWEST_EXPONENT = -700.0


def kernel_log_density(x: np.ndarray, values, log_weights, bandwidth: float) -> np.ndarray:
    """``log f(x)`` of the Gaussian kernel density with the given centres.

    ``f(x) = sum_i w_i phi((x - v_i) / h) / h`` with weights ``w_i`` summing
    to 1 (``log_weights`` their logarithms), evaluated in log space so that
    points far from every centre keep a finite log-density. ``x`` must have
    no NaN; shape (n,), returns shape (n,).
    """
    out = np.empty(x.shape[0])
    # Blocks of rows whose temporaries stay in cache: several times faster than larger ones.
    step = max(1, _CACHED_ELEMENTS // max(1, values.size))
    for a in range(0, x.shape[0], step):
        z = (x[a : a + step, None] - values[None, :]) / bandwidth
        t = log_weights[None, :] - 0.5 * z * z
        top = t.max(axis=1)
        t -= top[:, None]
        # Terms below e^-700 are left at 0: they cannot change a sum whose
        # largest term is 1, and exp of their arguments, whose results are
        # subnormal or underflow, runs many times slower than elsewhere.
        e = np.exp(t, where=t > _LOWEST_EXPONENT, out=np.zeros_like(t))
        out[a : a + step] = top + np.log(e.sum(axis=1))
    return out - np.log(bandwidth) - _LOG_SQRT_2PI


# -- Weka's kernel estimator ----------------------------------------------------

#: Weka's ``KernelEstimator``: a sum stops once the rest could add at most this share.
WEKA_MAX_ERROR = 0.01
#: Weka's floor of a precision (``Utils.SMALL``) and of a per-column probability.
WEKA_SMALL = 1e-6
WEKA_FLOOR = 1e-75
#: Weka's precision of a column with fewer than two distinct values.
WEKA_DEFAULT_PRECISION = 0.01


def weka_precision(values: np.ndarray) -> float:
    """Weka ``NaiveBayes``'s precision of a numeric column: the mean gap between
    its sorted distinct observed values, ``(max - min) / (V - 1)``, summed gap
    by gap as Weka sums it; 0.01 for fewer than two values."""
    if values.size < 2:
        return WEKA_DEFAULT_PRECISION
    gaps = np.cumsum(np.diff(values))  # sequential, as Weka's loop adds them
    return max(float(gaps[-1]) / (values.size - 1), WEKA_SMALL)


def weka_kernels(values, weights, precision: float):
    """One class's kernels as Weka's ``KernelEstimator`` keeps them.

    Values are rounded to the precision (``rint(v / precision) *
    precision``) and the weights of equal rounded values added; the kernel
    standard deviation is ``max(range / sqrt(W), precision / 6)`` with
    ``range`` the span of the rounded values and ``W`` their summed weight
    (``precision / 6`` where the span is zero).

    Returns
    -------
    centres, weights : ndarray of shape (m,)
    sd : float
    """
    keep = weights > 0
    rounded = np.rint(values[keep] / precision) * precision
    centres, where = np.unique(rounded, return_inverse=True)
    w = np.bincount(where.ravel(), weights=weights[keep], minlength=centres.size)
    span = float(centres[-1] - centres[0]) if centres.size else 0.0
    sd = max(span / np.sqrt(w.sum()), precision / 6.0) if span > 0 else precision / 6.0
    return centres, w, sd


def weka_log_probability(x: np.ndarray, centres, weights, precision: float, sd: float):
    """``log max(1e-75, P(x))`` of Weka's ``KernelEstimator.getProbability``.

    ``P(x) = sum_i w_i (Phi((c_i - x + precision / 2) / sd) - Phi((c_i - x -
    precision / 2) / sd)) / W``: the mass of each kernel over the interval of
    width ``precision`` about ``x``, summed outward from the centre nearest
    ``x`` (upward first, then downward, as Weka does) and stopped at the first
    kernel whose mass times the weight still to come is below 1% of the sum
    so far (``WEKA_MAX_ERROR``). ``x`` has no NaN; shape (n,).

    The sums mostly stop a few kernels from ``x``, so each row first looks
    at a window of kernels about its start, widened for the rows whose sums
    run past it (and, past :data:`_WEKA_WIDEST`, all kernels): the sums add
    the same terms in the same order as over all kernels, so the result does
    not depend on the window.
    """
    total = float(weights.sum())
    out = np.zeros(x.shape[0])
    # Rows so far beyond every centre that each kernel's mass is exactly 0 (Phi
    # is 0 below -40 and 1 above 40): their sums are 0 however far they run.
    above = (centres[-1] - x + precision / 2) / sd <= -_PHI_SATURATED
    below = (centres[0] - x - precision / 2) / sd >= _PHI_SATURATED
    todo = np.flatnonzero(~(above | below))
    half = _WEKA_FIRST_HALF_WIDTH
    while todo.size and 2 * half < centres.size and half <= _WEKA_WIDEST:
        step = max(1, _CACHED_ELEMENTS // (2 * half))
        left = []
        for a in range(0, todo.size, step):
            rows = todo[a : a + step]
            value, done = _weka_window(x[rows], centres, weights, precision, sd, total, half)
            out[rows[done]] = value[done]
            left.append(rows[~done])
        todo = np.concatenate(left)
        half *= 4
    step = max(1, _CACHED_ELEMENTS // max(1, centres.size))
    for a in range(0, todo.size, step):
        rows = todo[a : a + step]
        out[rows] = _weka_all(x[rows], centres, weights, precision, sd, total)
    return np.log(np.maximum(out / total, WEKA_FLOOR))


#: Where the standard normal's ndtr is exactly 0 (below minus this) or 1 (above it).
_PHI_SATURATED = 40.0
#: Kernels either side of a row's start in the first window of weka_log_probability,
#: and the widest window before all kernels are taken.
_WEKA_FIRST_HALF_WIDTH = 16
_WEKA_WIDEST = 4096


def _weka_window(xb, centres, weights, precision, sd, total, half):
    """Weka's sums for the rows ``xb`` over the ``2 half`` kernels about each
    row's start; ``(sums, done)`` with ``done`` False where a sum runs past
    the window (its value is then meaningless)."""
    from scipy.special import ndtr

    m = centres.size
    start = np.searchsorted(centres, xb, side="left")
    cols = start[:, None] + np.arange(-half, half)[None, :]
    inside = (cols >= 0) & (cols < m)
    at = np.clip(cols, 0, m - 1)
    delta = centres[at] - xb[:, None]
    p = ndtr((delta + precision / 2) / sd) - ndtr((delta - precision / 2) / sd)
    w = np.where(inside, weights[at], 0.0)
    pw = p * w
    rows = np.arange(xb.size)
    # Upward from start: the window's right half, ended at the last centre.
    up_in = inside[:, half:]
    s_up = np.cumsum(np.where(up_in, pw[:, half:], 0.0), axis=1)
    w_up = np.cumsum(w[:, half:], axis=1)
    stop = up_in & (p[:, half:] * (total - w_up) < s_up * WEKA_MAX_ERROR)
    stop |= cols[:, half:] == m - 1
    any_up = stop.any(axis=1)
    last = np.argmax(stop, axis=1)
    s0 = np.where(any_up, s_up[rows, last], 0.0)
    w0 = np.where(any_up, w_up[rows, last], 0.0)
    done = any_up | (start >= m)
    # Downward from start - 1: the left half reversed, the sums carried on.
    dn_in = inside[:, half - 1 :: -1]
    rpw = np.where(dn_in, pw[:, half - 1 :: -1], 0.0)
    rw = w[:, half - 1 :: -1]
    s_dn = np.cumsum(np.hstack([s0[:, None], rpw]), axis=1)[:, 1:]
    w_dn = np.cumsum(np.hstack([w0[:, None], rw]), axis=1)[:, 1:]
    stop_dn = dn_in & (p[:, half - 1 :: -1] * (total - w_dn) < s_dn * WEKA_MAX_ERROR)
    any_dn = stop_dn.any(axis=1)
    first = np.argmax(stop_dn, axis=1)
    # No stop: the sum runs down to the lowest centre, inside the window or not.
    end = np.where(any_dn, first, half - 1)
    done &= any_dn | (start <= half)
    return np.where(start > 0, s_dn[rows, end], s0), done


def _weka_all(xb, centres, weights, precision, sd, total):
    """Weka's sums (before the division by ``total``) for the rows ``xb`` over all kernels."""
    from scipy.special import ndtr

    m = centres.size
    cols = np.arange(m)
    delta = centres[None, :] - xb[:, None]
    p = ndtr((delta + precision / 2) / sd) - ndtr((delta - precision / 2) / sd)
    pw = p * weights[None, :]
    start = np.searchsorted(centres, xb, side="left")[:, None]
    up = cols[None, :] >= start
    s_up = np.cumsum(np.where(up, pw, 0.0), axis=1)
    w_up = np.cumsum(np.where(up, weights[None, :], 0.0), axis=1)
    stop = up & (p * (total - w_up) < s_up * WEKA_MAX_ERROR)
    stop[:, -1] = True  # the loop ends at the last centre
    last = np.argmax(stop, axis=1)
    rows = np.arange(xb.size)
    stopped_up = stop[rows, last] & (last >= start[:, 0])
    s0 = np.where(stopped_up, s_up[rows, last], 0.0)
    w0 = np.where(stopped_up, w_up[rows, last], 0.0)
    # Downward from start - 1, the sums carried on (reversed columns).
    down = (cols[None, :] < start)[:, ::-1]
    rp, rpw, rw = p[:, ::-1], pw[:, ::-1], np.broadcast_to(weights[::-1], p.shape)
    s_dn = np.cumsum(np.hstack([s0[:, None], np.where(down, rpw, 0.0)]), axis=1)[:, 1:]
    w_dn = np.cumsum(np.hstack([w0[:, None], np.where(down, rw, 0.0)]), axis=1)[:, 1:]
    stop_dn = down & (rp * (total - w_dn) < s_dn * WEKA_MAX_ERROR)
    any_dn = stop_dn.any(axis=1)
    first = np.argmax(stop_dn, axis=1)
    # No stop: the sum runs down to the lowest centre (the last column).
    end = np.where(any_dn, first, m - 1)
    return np.where(start[:, 0] > 0, s_dn[rows, end], s0)
