"""Post-hoc calibration of predicted class probabilities.

A calibrator is fitted on held-out predictions of an already fitted model
(its posteriors and the true class of each row) and then maps new posteriors
to better calibrated ones:

* :class:`TemperatureScaling` - one temperature ``T`` that divides the log
  posteriors before renormalising (Guo, Pleiss, Sun and Weinberger, "On
  calibration of modern neural networks", ICML 2017). It never changes the
  predicted class.
* :class:`IsotonicCalibration` - one-vs-rest isotonic regression of the
  indicator of each class on its predicted probability, then renormalisation
  (Zadrozny and Elkan, "Transforming classifier scores into accurate
  multiclass probability estimates", KDD 2002), with every value floored
  at ``1 / (n + 2)`` so that no class gets probability 0 or 1. It can change
  the predicted class.
* :class:`SigmoidCalibration` - Platt scaling: one-vs-rest sigmoids of each
  class's log-odds, then renormalisation (Platt, "Probabilistic outputs for
  support vector machines", 1999), as scikit-learn's
  ``CalibratedClassifierCV(method="sigmoid")``. It can change the predicted
  class (with three or more classes).

All derive from :class:`Calibrator` and share one interface, on log
posteriors of shape (n_samples, n_classes) in and out: ``fit(log_proba,
y_idx)`` and ``transform(log_proba)``, plus ``to_arrays``/``from_arrays`` to
store the fitted parameters as named float64 arrays in a model file. Class
indices refer to the model's class order (``classes_``).

NumPy and SciPy only: no file I/O, no printing.
"""

from __future__ import annotations

from typing import Any, ClassVar

import numpy as np

from nbcli.models import log_normalise

# Temperatures are searched from the narrowest gap between a row's top log
# posterior and another, divided by this factor, to the widest gap times it.
# Above, every row is uniform to within 1e-8; below, every gap makes exp()
# underflow to a certainty. Outside, the NLL is flat to rounding (or linear
# in 1/T) and a root search would wander. The narrowest gap, not the widest,
# bounds the low end: one row's gap of 1e10 (a variance of smoothing alone)
# must not hide an optimum at T = 25 set by the others.
_TEMPERATURE_RANGE = 1e8

# Probabilities computed as exp(log posterior) may exceed 1 by a rounding.
_PROBA_SLACK = 1e-9

# Infinite log-odds (a probability of exactly 0 or 1) enter Platt's fit as
# the most extreme finite score of their column, and never less extreme than
# 708.4 nats, the log of the smallest normal float64 (the clipping of nbcli's
# log-loss): Platt's soft targets give an infinite score an infinite loss for
# any slope, so the limit itself cannot be fitted.
_MIN_INFINITE_LOG_ODDS = -float(np.log(np.finfo(np.float64).tiny))


# -- input checks ------------------------------------------------------------------
def _as_matrix(a, name: str, *, min_samples: int, min_classes: int) -> np.ndarray:
    try:
        arr = np.asarray(a, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must hold numbers") from None
    if arr.ndim != 2:
        raise ValueError(
            f"{name} must be 2-D of shape (n_samples, n_classes), got shape {arr.shape}"
        )
    n, k = arr.shape
    if n < min_samples:
        raise ValueError(f"{name} has {n} sample(s); at least {min_samples} are required")
    if k < min_classes:
        raise ValueError(f"{name} has {k} class column(s); at least {min_classes} are required")
    return arr


def _first_bad(mask: np.ndarray) -> str:
    # Rows are counted from 1, as everywhere in nbcli's messages; the class
    # column is named by its index.
    i, j = np.argwhere(mask)[0]
    return f"row {i + 1}, class index {j}"


def check_log_proba(log_proba, *, min_samples: int = 1, min_classes: int = 1) -> np.ndarray:
    """Log posteriors as every calibrator takes them.

    Parameters
    ----------
    log_proba : array-like of shape (n_samples, n_classes)
        Natural-log posteriors; -inf (probability 0) is allowed.
    min_samples, min_classes : int
        The fewest rows and columns accepted.

    Returns
    -------
    ndarray of float64, shape (n_samples, n_classes)

    Raises
    ------
    ValueError
        For NaN or +inf (naming the first such cell), a row that is -inf in
        every class, or fewer rows or columns than asked for.
    """
    z = _as_matrix(log_proba, "log_proba", min_samples=min_samples, min_classes=min_classes)
    bad = np.isnan(z) | (z == np.inf)
    if bad.any():
        raise ValueError(
            f"log_proba contains NaN or +infinity at {_first_bad(bad)}; "
            "log posteriors must be finite or -inf"
        )
    empty = ~np.isfinite(z).any(axis=1)
    if empty.any():
        raise ValueError(
            f"log_proba row {int(np.flatnonzero(empty)[0]) + 1} is -inf for every class; "
            "at least one class needs a positive probability"
        )
    return z


def _check_proba(proba, *, min_samples: int = 1, min_classes: int = 1) -> np.ndarray:
    p = _as_matrix(proba, "proba", min_samples=min_samples, min_classes=min_classes)
    bad = ~np.isfinite(p)
    if bad.any():
        raise ValueError(f"proba contains NaN or infinity at {_first_bad(bad)}")
    bad = (p < 0) | (p > 1 + _PROBA_SLACK)
    if bad.any():
        raise ValueError(
            f"proba has the value {p[bad][0]:g} at {_first_bad(bad)}; "
            "probabilities must lie in [0, 1]"
        )
    return p


def _check_targets(y_idx, n_samples: int, n_classes: int) -> np.ndarray:
    y = np.asarray(y_idx)
    if y.ndim != 1:
        raise ValueError(f"y_idx must be 1-D of shape (n_samples,), got shape {y.shape}")
    if y.shape[0] != n_samples:
        raise ValueError(
            f"y_idx has {y.shape[0]} entries but there are {n_samples} rows of predictions"
        )
    if y.dtype.kind not in "iu":
        raise ValueError(f"y_idx must hold integer class indices, got dtype {y.dtype}")
    out = (y < 0) | (y >= n_classes)
    if out.any():
        i = int(np.flatnonzero(out)[0])
        raise ValueError(f"y_idx[{i}] = {int(y[i])} is not a class index in [0, {n_classes - 1}]")
    return y.astype(np.intp, copy=False)


def _check_stored(arrays, names: tuple[str, ...], kind: str) -> dict[str, np.ndarray]:
    """Required float64 1-D finite arrays from a model file, nothing else."""
    if not hasattr(arrays, "keys"):
        raise ValueError(f"{kind} calibration parameters must be a mapping of named arrays")
    missing = [n for n in names if n not in arrays]
    extra = sorted(set(arrays.keys()) - set(names))
    if missing or extra:
        raise ValueError(
            f"{kind} calibration expects arrays {list(names)}; "
            f"missing {missing}, unexpected {extra}"
        )
    out = {}
    for n in names:
        a = np.asarray(arrays[n])
        if a.dtype != np.float64 or a.ndim != 1:
            raise ValueError(
                f"{kind} calibration array {n!r} must be 1-D float64, got {a.ndim}-D {a.dtype}"
            )
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{kind} calibration array {n!r} contains NaN or infinity")
        out[n] = a
    return out


# -- the interface ----------------------------------------------------------------
class Calibrator:
    """A map from a model's log posteriors to better calibrated ones.

    Subclasses set ``kind`` (the name stored in model files) and implement
    :meth:`fit`, :meth:`transform`, :meth:`to_arrays` and
    :meth:`from_arrays`; every method takes and returns log posteriors of
    shape (n_samples, n_classes), ``-inf`` standing for probability 0.
    """

    kind: ClassVar[str]
    #: The attribute ``fit`` sets (a calibrator without it is not fitted).
    fitted_attribute: ClassVar[str]

    def fit(self, log_proba, y_idx, *, init=None) -> Calibrator:
        """Fit on held-out log posteriors and true class indices; returns self.

        ``init``, a calibrator of the same kind fitted on similar rows (the
        fit on every row, for a fold's fit), is where an iterative search
        starts; the optimum does not depend on it.
        """
        raise NotImplementedError

    def _check_fitted(self):
        if not hasattr(self, self.fitted_attribute):
            raise ValueError(f"{type(self).__name__} is not fitted yet; call fit first")

    def transform(self, log_proba) -> np.ndarray:
        """Calibrated log posteriors.

        Parameters
        ----------
        log_proba : array-like of shape (n_samples, n_classes)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            A new array, each row's exponentials summing to 1 (the map is
            the subclass's ``_map``).

        Raises
        ------
        ValueError
            Before ``fit``; on a number of classes other than at fit, NaN or
            +inf, or a row that is -inf everywhere.
        """
        self._check_fitted()
        z = check_log_proba(log_proba)
        fitted = getattr(self, "n_classes_", z.shape[1])
        if z.shape[1] != fitted:
            raise ValueError(
                f"log_proba has {z.shape[1]} class columns but the calibration was fitted "
                f"with {fitted}"
            )
        return self._map(z)

    def _map(self, z: np.ndarray) -> np.ndarray:
        """The calibrated log posteriors of the checked log posteriors ``z``."""
        raise NotImplementedError

    @classmethod
    def out_of_fold(cls, z: np.ndarray, y: np.ndarray, fold: np.ndarray, init=None) -> np.ndarray:
        """:func:`cross_fit` for this kind: each fold's rows calibrated by a
        calibrator fitted on the other folds' rows (subclasses may share
        work between the folds)."""
        out = np.empty_like(z)
        for f in np.unique(fold):
            held = fold == f
            calibrator = cls().fit(z[~held], y[~held], init=init)
            out[held] = calibrator.transform(z[held])
        return out

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The fitted parameters as named float64 arrays (for a model file)."""
        raise NotImplementedError

    @classmethod
    def from_arrays(cls, arrays) -> Calibrator:
        """Rebuild from :meth:`to_arrays` output; ValueError for anything else."""
        raise NotImplementedError

    def transform_log(self, log_proba) -> np.ndarray:
        """The same as :meth:`transform` (the name model files were read with before)."""
        return self.transform(log_proba)

    def describe(self) -> dict[str, object]:
        """The fitted parameters a person reads (``nbcli inspect``): plain
        JSON numbers, keyed by their names in the literature."""
        return {}


# -- temperature scaling -----------------------------------------------------------
# Rows per block of the temperature search: a block's exponentials stay in
# cache for the three sums taken from them.
_TEMPERATURE_BLOCK = 8192


def _temperature_sums(z, zf, zy, s: float, buf: np.ndarray) -> tuple[float, float]:
    """Sums over the rows of ``E_p[z] - z_y`` and of ``Var_p[z]``, ``p = softmax(s z)``.

    One pass over the rows: each block's exponentials give their three row
    sums while in cache. ``z`` has its row maxima at 0 (the largest weight
    is at ``z = 0``, so the variance taken as ``E[z^2] - E[z]^2`` loses no
    more than a few roundings), ``zf`` is ``z`` with ``-inf`` as 0.
    """
    n = z.shape[0]
    slope = curvature = 0.0
    for i in range(0, n, _TEMPERATURE_BLOCK):
        zb, zfb = z[i : i + _TEMPERATURE_BLOCK], zf[i : i + _TEMPERATURE_BLOCK]
        e = buf[: zb.shape[0]]
        np.multiply(zb, s, out=e)
        np.exp(e, out=e)
        s0 = np.einsum("ij->i", e)
        np.multiply(e, zfb, out=e)
        mean = np.einsum("ij->i", e)
        np.multiply(e, zfb, out=e)
        second = np.einsum("ij->i", e)
        mean /= s0
        second /= s0
        slope += float(np.sum(mean - zy[i : i + _TEMPERATURE_BLOCK]))
        second -= mean * mean
        curvature += float(np.sum(second))
    return slope, curvature


def _temperature_moments(parts, s: float, buf: np.ndarray) -> tuple[float, float]:
    """First and second derivatives of the mean NLL in ``s = 1 / T``.

    ``d/ds = mean(E_p[z] - z_y)`` and ``d2/ds2 = mean(Var_p[z])`` with
    ``p = softmax(s z)``, over the rows of every ``(z, zf, zy)`` of
    ``parts`` (:func:`_temperature_sums`): a fold's training rows are the
    rows before it and after it, taken where they lie.
    """
    n = sum(part[0].shape[0] for part in parts)
    slope = curvature = 0.0
    for z, zf, zy in parts:
        a, b = _temperature_sums(z, zf, zy, s, buf)
        slope += a
        curvature += b
    return slope / n, max(curvature / n, 0.0)


def _temperature_inputs(z: np.ndarray, y: np.ndarray) -> tuple:
    """What the temperature search needs of checked log posteriors ``z`` and
    class indices ``y``: ``z`` less each row's largest (softmax is
    shift-invariant), the same with ``-inf`` as 0, each row's shifted value
    of its true class, each row's lowest finite shifted value (the spread of
    a set of rows is minus their least), and each row's narrowest positive
    gap below its largest (``inf`` for a row without one).

    Raises
    ------
    ValueError
        A true class with probability 0 (its NLL is infinite at every ``T``).
    """
    z = z - z.max(axis=1, keepdims=True)
    zy = z[np.arange(z.shape[0]), y]
    if not np.all(np.isfinite(zy)):
        i = int(np.flatnonzero(~np.isfinite(zy))[0])
        raise ValueError(
            f"row {i + 1} gives its true class probability 0 (log_proba -inf); "
            "temperature scaling cannot fit such predictions"
        )
    # Every row's largest is 0, so a 0 in place of -inf never lowers its least.
    zf = np.where(np.isfinite(z), z, 0.0)
    near = -np.where(zf < 0.0, zf, -np.inf).max(axis=1)
    return z, zf, zy, zf.min(axis=1), near


def _temperature_search(
    parts,
    spread: float,
    narrowest: float,
    start: float,
    first: tuple[float, float] | None = None,
) -> tuple[float, bool]:
    """The NLL-optimal temperature and whether it is an end of the searched range.

    A safeguarded Newton iteration on ``s = 1 / T``, in which the mean NLL is
    convex (its slope increases in ``s``): a Newton step is taken while it
    stays inside the bracket known so far and at most halves the previous
    one; otherwise the bracket is cut at its geometric mean, or, on a side
    never evaluated, the end of the range is tried (where the slope's sign
    says whether the optimum lies beyond it). Newton converges quadratically
    near the optimum, so a search started close to it (a fold's fit started
    from the fit on every row) takes two or three passes.

    ``parts``: the rows, as ``(z, zf, zy)`` pieces (:func:`_temperature_moments`);
    ``spread`` and ``narrowest``: their widest and narrowest positive gaps
    below a row's top (the range searched, see :data:`_TEMPERATURE_RANGE`);
    ``first``: the derivatives at ``1 / start`` when already known, used when
    the range leaves that start as it is.
    """
    # A gap near the smallest float would put 1/T beyond float range.
    hi = min(_TEMPERATURE_RANGE / narrowest, np.finfo(np.float64).max / 4)
    lo = 1.0 / (spread * _TEMPERATURE_RANGE)
    t_low = 1.0 / hi
    lo_seen = hi_seen = False
    s = min(max(1.0 / start, lo), hi)
    known = first if s == 1.0 / start else None
    rows = max(part[0].shape[0] for part in parts)
    buf = np.empty((min(_TEMPERATURE_BLOCK, rows), parts[0][0].shape[1]))
    previous = np.inf
    for _ in range(200):
        g, h = _temperature_moments(parts, s, buf) if known is None else known
        known = None
        if g == 0.0 and h > 0.0:
            break
        # A slope of 0 without curvature is the NLL flat to underflow (every
        # row certain): it falls, if at all, towards T -> 0.
        if g <= 0.0:
            if s >= hi:  # falling all the way to T -> 0
                return t_low, True
            lo, lo_seen = s, True
        else:
            if s <= lo:  # falling all the way to T -> infinity
                return spread * _TEMPERATURE_RANGE, True
            hi, hi_seen = s, True
        step = -g / h if h > 0.0 else (np.inf if g <= 0.0 else -np.inf)
        if abs(step) <= 1e-13 * s:
            break  # the next step would move T by less than its precision
        target = s + step
        if lo < target < hi and abs(step) <= 0.5 * previous:
            previous = abs(step)
            s = target
            continue
        previous = np.inf
        if step > 0 and not hi_seen:
            s = hi
        elif step < 0 and not lo_seen:
            s = lo
        else:
            s = float(np.sqrt(lo * hi)) if hi > 4.0 * lo else 0.5 * (lo + hi)
            if hi - lo <= 1e-13 * hi:
                break
    return 1.0 / s, False


class TemperatureScaling(Calibrator):
    """Temperature scaling: ``p'(k | x) = softmax_k(log p(k | x) / T)``.

    One scalar ``T > 0`` is fitted by minimising the mean negative
    log-likelihood of the true classes (Guo et al., ICML 2017, section 4.2).
    ``T > 1`` softens over-confident posteriors, ``T < 1`` sharpens them;
    dividing every class's score by the same positive number keeps their
    order, so the predicted class never changes.

    The mean NLL is convex in ``1/T`` (a log-sum-exp of functions linear in
    it), so its minimum is found by a safeguarded Newton iteration on ``1/T``
    with the analytic first and second derivatives, both from one pass over
    the rows per step, to a relative precision of about 1e-13 in ``T``. The search covers
    ``[narrowest / 1e8, spread * 1e8]``, where ``narrowest`` and ``spread``
    are the smallest and the largest positive gap between a row's top log
    posterior and another finite one. When the
    derivative has no root there - every calibration row already predicted
    correctly (the NLL keeps falling as ``T`` goes to 0) or the model no
    better than uniform (it falls as ``T`` grows) - ``temperature_`` is the
    lower or the upper end of that range respectively, and ``at_bound_`` is
    True.

    Attributes
    ----------
    temperature_ : float
    at_bound_ : bool
        True when the optimum lies on the edge of the searched range.
    """

    kind = "temperature"
    fitted_attribute = "temperature_"

    def describe(self) -> dict[str, object]:
        """``temperature`` (T) and ``at_bound`` (the search stopped at an end of its range)."""
        return {"temperature": self.temperature_, "at_bound": bool(self.at_bound_)}

    def fit(self, log_proba, y_idx, *, init=None) -> TemperatureScaling:
        """Fit the temperature on held-out predictions.

        Parameters
        ----------
        log_proba : array-like of shape (n_samples, n_classes)
            Log posteriors of a fitted model (any row-wise constant shift,
            e.g. joint log-likelihoods, gives the same fit). ``-inf`` stands
            for probability 0.
        y_idx : array-like of int, shape (n_samples,)
            Index of each row's true class in the model's class order.
        init : TemperatureScaling, optional
            A fitted temperature to start the search from (the optimum does
            not depend on it); default ``T = 1``.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            Fewer than 2 samples or 2 classes, shapes that do not match, NaN
            or +inf in ``log_proba``, a class index out of range, or a true
            class with probability 0 (its NLL is infinite at every ``T``).
        """
        z = check_log_proba(log_proba, min_samples=2, min_classes=2)
        y = _check_targets(y_idx, z.shape[0], z.shape[1])
        z, zf, zy, low, near = _temperature_inputs(z, y)
        return self._search(z, zf, zy, float(-low.min()), float(near.min()), init)

    def _search(self, z, zf, zy, spread: float, narrowest: float, init) -> TemperatureScaling:
        """:meth:`fit` on the inputs :func:`_temperature_inputs` prepares."""
        if spread == 0.0:
            # Every row uniform over its classes: the NLL is the same for all T.
            self.temperature_, self.at_bound_ = 1.0, False
            return self
        start = 1.0 if init is None else float(init.temperature_)
        t, self.at_bound_ = _temperature_search([(z, zf, zy)], spread, narrowest, start)
        self.temperature_ = t
        return self

    @classmethod
    def out_of_fold(cls, z: np.ndarray, y: np.ndarray, fold: np.ndarray, init=None) -> np.ndarray:
        """:func:`cross_fit` with every row checked and shifted once for all
        folds (each row's inputs to the search depend on that row alone).

        The rows are put in fold order once, so that a fold's training rows
        are the rows before it and after it, searched where they lie rather
        than gathered into copies for each fold; every search's first step,
        at the common start, takes its derivatives from one pass over all
        the rows, summed fold by fold; and every row is mapped by its fold's
        temperature in one pass, in file order. The fitted temperatures
        equal those of a fit on each fold's training rows to the rounding of
        sums taken in another order.
        """
        from nbcli.distinct import grouped_order, unique_inverse

        zc = check_log_proba(z, min_samples=2, min_classes=2)
        yc = _check_targets(y, zc.shape[0], zc.shape[1])
        n = zc.shape[0]
        fold = np.asarray(fold)
        shifted, _, zy, low, near = _temperature_inputs(zc, yc)
        names, codes = unique_inverse(fold)
        order, bounds = grouped_order(codes, len(names))
        # One gather (np.take: fancy indexing of a row-major matrix is
        # several times slower); the -inf-free copy is made from it in order.
        shifted = np.take(shifted, order, axis=0)
        zf = np.where(np.isfinite(shifted), shifted, 0.0)
        zy, low, near = zy[order], low[order], near[order]
        start = 1.0 if init is None else float(init.temperature_)
        buf = np.empty((min(_TEMPERATURE_BLOCK, n), zc.shape[1]))
        pieces = [slice(int(bounds[g]), int(bounds[g + 1])) for g in range(len(names))]
        sums = np.array(
            [_temperature_sums(shifted[p], zf[p], zy[p], 1.0 / start, buf) for p in pieces]
        ).reshape(-1, 2)
        temperatures = np.ones(len(names))
        for g, held in enumerate(pieces):
            n_train = n - (held.stop - held.start)
            if n_train < 2:
                raise ValueError("log_proba has fewer than 2 samples; at least 2 are required")
            train = [t for t in (slice(0, held.start), slice(held.stop, n)) if t.stop > t.start]
            spread = float(-min(low[t].min() for t in train))
            if spread == 0.0:
                continue  # every training row uniform: T = 1, as _search gives
            narrowest = float(min(near[t].min() for t in train))
            slope, curvature = sums.sum(axis=0) - sums[g]
            first = (float(slope) / n_train, max(float(curvature) / n_train, 0.0))
            parts = [(shifted[t], zf[t], zy[t]) for t in train]
            temperatures[g], _ = _temperature_search(parts, spread, narrowest, start, first)
        # Row by row as _map divides and normalises, each by its fold's T.
        return log_normalise(zc / temperatures[codes][:, None])

    def _map(self, z: np.ndarray) -> np.ndarray:
        """``z / T`` normalised by log-sum-exp."""
        return log_normalise(z / self.temperature_)

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The fitted parameter for a model file: ``{"temperature": shape (1,)}``."""
        self._check_fitted()
        return {"temperature": np.array([self.temperature_], dtype=np.float64)}

    @classmethod
    def from_arrays(cls, arrays) -> TemperatureScaling:
        """Rebuild from :meth:`to_arrays` output.

        Raises
        ------
        ValueError
            Unless ``arrays`` holds exactly ``temperature``, float64 of shape
            (1,), finite and positive.
        """
        a = _check_stored(arrays, ("temperature",), cls.kind)["temperature"]
        if a.shape != (1,) or not a[0] > 0:
            raise ValueError(
                f"temperature calibration needs one positive temperature, got {a.tolist()}"
            )
        out = cls()
        out.temperature_ = float(a[0])
        out.at_bound_ = False
        return out


# -- isotonic regression -----------------------------------------------------------
#: Probabilities closer than this to the first of a pool are tied with it
#: (``np.finfo(np.float64).resolution``, scikit-learn's ``_make_unique``):
#: posteriors of 1e-300 and 1e-250 are one score, not two steps of a map.
TIE_RESOLUTION = float(np.finfo(np.float64).resolution)


def _tie_starts(p: np.ndarray) -> np.ndarray:
    """The first row of each pool of sorted ``p``: a row starts one when it is
    at least :data:`TIE_RESOLUTION` above the pool's first value.

    A gap of that size from the row before always starts a pool; only runs
    of smaller gaps (ties, values near 0 or 1) are walked pool by pool.
    """
    n = p.size
    if n == 0:
        return np.zeros(0, dtype=np.intp)
    wide = np.flatnonzero(np.diff(p) >= TIE_RESOLUTION) + 1
    if wide.size == n - 1:  # every row a pool of its own
        return np.concatenate([[0], wide]).astype(np.intp)
    bounds = np.concatenate([[0], wide, [n]])
    starts = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        while lo < hi:
            starts.append(lo)
            first = p[lo]
            # p is sorted, and so is p - first: bisect, then settle on the
            # exact test against rounding of first + resolution.
            k = int(np.searchsorted(p, first + TIE_RESOLUTION, side="left"))
            k = min(max(k, lo + 1), hi)
            while k > lo + 1 and p[k - 1] - first >= TIE_RESOLUTION:
                k -= 1
            while k < hi and p[k] - first < TIE_RESOLUTION:
                k += 1
            lo = k
    return np.asarray(starts, dtype=np.intp)


def _isotonic_map(p: np.ndarray, hit: np.ndarray, floor: float) -> tuple[np.ndarray, np.ndarray]:
    """Breakpoints of the non-decreasing least-squares fit of ``hit`` on ``p``.

    Rows with equal ``p`` are pooled first (mean of ``hit``, weighted by
    their number), so that each ``p`` gets one value; as in scikit-learn's
    ``IsotonicRegression``, values less than :data:`TIE_RESOLUTION` above the
    first of a pool are equal to it (:func:`_tie_starts`). Values are then raised
    to at least ``floor`` (which keeps them non-decreasing). Only the two
    ends of each constant stretch are kept: linear interpolation between the
    kept points reproduces the fit at every pooled point.
    """
    order = np.argsort(p)
    return _sorted_isotonic_map(p[order], hit[order], floor)


def _sorted_isotonic_map(
    p: np.ndarray, hit: np.ndarray, floor: float
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_isotonic_map` of rows already sorted by ``p``.

    ``hit`` holds 0 and 1, so each pooled sum is a whole number, exact in
    any order: rows sorted with their ties in any order give the same map.
    """
    from scipy import optimize

    starts = _tie_starts(p)
    x = p[starts]
    counts = np.diff(np.append(starts, p.size))
    mean_hit = np.add.reduceat(hit, starts) / counts
    y = optimize.isotonic_regression(mean_hit, weights=counts.astype(np.float64)).x
    # Pooling adjacent violators averages, so rounding can leave a value a
    # hair outside [0, 1].
    y = np.clip(y, floor, 1.0)
    keep = np.ones(x.size, dtype=bool)
    if x.size > 2:
        flat_left = y[1:-1] == y[:-2]
        flat_right = y[1:-1] == y[2:]
        keep[1:-1] = ~(flat_left & flat_right)
    return x[keep], y[keep]


def isotonic_floor(n_samples: int) -> float:
    """The least value of a fitted isotonic map: ``1 / (n_samples + 2)``.

    Laplace's rule of succession: an outcome seen in none of ``n`` rows has
    the posterior mean probability ``1 / (n + 2)`` under a uniform prior, so
    ``n`` calibration rows cannot support a smaller one. Without it, a block
    of the map with no row of class ``k`` says ``p(k) = 0``, and one new row
    of that class costs a log-loss of 708 nats (the clipping); with it, at
    most about ``log(n + 2)`` plus the log of the row's mapped total.
    """
    return 1.0 / (int(n_samples) + 2)


class IsotonicCalibration(Calibrator):
    """One-vs-rest isotonic calibration with renormalisation.

    For each class ``k`` a non-decreasing map ``g_k`` from the predicted
    ``p(k | x)`` to the observed frequency of class ``k`` is fitted by
    isotonic regression (pool adjacent violators,
    ``scipy.optimize.isotonic_regression``) of the indicator ``[y = k]`` on
    the rows sorted by ``p(k | x)``; calibrated posteriors are
    ``g_k(p_k) / sum_j g_j(p_j)`` (Zadrozny and Elkan, KDD 2002, section 4).
    Each map is stored as breakpoints ``(x_k, y_k)`` and applied with linear
    interpolation between them, constant beyond the first and last.

    Every value of a fitted map is at least ``floor_ = 1 / (n + 2)`` for
    ``n`` calibration rows (:func:`isotonic_floor`), so after
    renormalisation no class has probability exactly 0, and none exactly 1
    (the others share at least ``(K - 1) floor_``). Maps read from model
    files written before the floor existed are applied as they were stored:
    a row whose mapped values are all 0 gets its uncalibrated probabilities
    back, normalised to sum to 1, rather than a division by zero.

    Unlike temperature scaling, this can change the predicted class.

    Attributes
    ----------
    n_classes_ : int
    breakpoints_ : list of (x, y) pairs of 1-D float64 arrays, one per class
        ``x`` increasing predicted probabilities, ``y`` non-decreasing
        calibrated values in [floor_, 1].
    floor_ : float or None
        The floor of the fit; None for maps read from a model file.
    """

    kind = "isotonic"
    fitted_attribute = "breakpoints_"
    floor_: float | None

    def describe(self) -> dict[str, object]:
        """``breakpoints``: per class, how many steps its isotonic map has."""
        out: dict[str, object] = {"breakpoints": [int(len(x)) for x, _ in self.breakpoints_]}
        if getattr(self, "floor_", None) is not None:
            out["floor"] = self.floor_
        return out

    def fit(self, log_proba, y_idx, *, init=None) -> IsotonicCalibration:
        """Fit one isotonic map per class on held-out predictions.

        Parameters
        ----------
        log_proba : array-like of shape (n_samples, n_classes)
            Log posteriors of a fitted model; their exponentials must lie in
            [0, 1]. ``-inf`` stands for probability 0.
        y_idx : array-like of int, shape (n_samples,)
            Index of each row's true class in the model's class order. A
            class with no row gets the floor everywhere.
        init : IsotonicCalibration, optional
            Not used: the maps are found directly, without a search.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            Fewer than 2 samples or 2 classes, shapes that do not match, NaN
            or +inf, probabilities above 1, a class index out of range.
        """
        z = check_log_proba(log_proba, min_samples=2, min_classes=2)
        p = _check_proba(np.exp(z), min_samples=2, min_classes=2)
        y = _check_targets(y_idx, p.shape[0], p.shape[1])
        self.n_classes_ = p.shape[1]
        floor = self.floor_ = isotonic_floor(p.shape[0])
        self.breakpoints_ = [
            _isotonic_map(p[:, k], (y == k).astype(np.float64), floor) for k in range(p.shape[1])
        ]
        return self

    @classmethod
    def out_of_fold(cls, z: np.ndarray, y: np.ndarray, fold: np.ndarray, init=None) -> np.ndarray:
        """:func:`cross_fit` with each class's column sorted once for every fold."""
        zc = check_log_proba(z, min_samples=2, min_classes=2)
        p = _check_proba(np.exp(zc), min_samples=2, min_classes=2)
        yc = _check_targets(y, p.shape[0], p.shape[1])
        folds = np.unique(fold)
        fitted = {}
        for f in folds:
            n_train = int(np.count_nonzero(fold != f))
            if n_train < 2:
                raise ValueError(f"log_proba has {n_train} sample(s); at least 2 are required")
            cal = fitted[f] = cls()
            cal.n_classes_, cal.floor_, cal.breakpoints_ = p.shape[1], isotonic_floor(n_train), []
        for k in range(p.shape[1]):
            order = np.argsort(p[:, k])
            pk, hit, where = p[order, k], (yc[order] == k).astype(np.float64), fold[order]
            for f in folds:
                train = where != f  # keeps the sorted order
                floor = isotonic_floor(int(np.count_nonzero(train)))
                fitted[f].breakpoints_.append(_sorted_isotonic_map(pk[train], hit[train], floor))
        out = np.empty_like(zc)
        for f in folds:
            held = fold == f
            out[held] = fitted[f].transform(zc[held])
        return out

    def _map(self, z: np.ndarray) -> np.ndarray:
        """Each class's map of its posterior, renormalised: exponentials in (0, 1)
        (maps read from files written before the floor may give 0, as ``-inf``);
        probabilities above 1 are refused."""
        p = _check_proba(np.exp(z))
        total = p.sum(axis=1)
        q = np.empty_like(p)
        for k, (x, y) in enumerate(self.breakpoints_):
            q[:, k] = np.interp(p[:, k], x, y)
        mapped = q.sum(axis=1)
        dead = mapped <= 0
        if dead.any():
            q[dead] = p[dead]
            mapped[dead] = total[dead]
        q /= mapped[:, None]
        with np.errstate(divide="ignore"):
            return np.log(q)

    def to_arrays(self) -> dict[str, np.ndarray]:
        """Fitted maps for a model file, all float64.

        ``x`` and ``y`` are the breakpoints of every class concatenated in
        class order; class ``k`` owns ``x[offsets[k]:offsets[k+1]]``, with
        ``offsets`` of shape (n_classes + 1,).
        """
        self._check_fitted()
        sizes = [x.size for x, _ in self.breakpoints_]
        return {
            "x": np.concatenate([x for x, _ in self.breakpoints_]),
            "y": np.concatenate([y for _, y in self.breakpoints_]),
            "offsets": np.concatenate([[0], np.cumsum(sizes)]).astype(np.float64),
        }

    @classmethod
    def from_arrays(cls, arrays) -> IsotonicCalibration:
        """Rebuild from :meth:`to_arrays` output.

        Raises
        ------
        ValueError
            Unless ``arrays`` holds exactly ``x``, ``y`` and ``offsets``, 1-D
            float64 and finite, with ``offsets`` whole numbers starting at 0,
            strictly increasing (at least one breakpoint per class, at least
            two classes) and ending at ``len(x) == len(y)``, ``x``
            non-decreasing within each class and ``y`` in [0, 1] and
            non-decreasing within each class.
        """
        a = _check_stored(arrays, ("x", "y", "offsets"), cls.kind)
        x, y, off = a["x"], a["y"], a["offsets"]
        if x.shape != y.shape:
            raise ValueError(f"isotonic calibration has {x.size} x values but {y.size} y values")
        if off.size < 3 or off[0] != 0 or np.any(off != np.round(off)):
            raise ValueError(
                "isotonic calibration offsets must be whole numbers starting at 0, "
                "one more than the number of classes (at least 2)"
            )
        if np.any(np.diff(off) <= 0) or off[-1] != x.size:
            raise ValueError(
                "isotonic calibration offsets must increase strictly and end at the "
                f"number of breakpoints ({x.size}), got {off.tolist()}"
            )
        if np.any((y < 0) | (y > 1)):
            raise ValueError("isotonic calibration values must lie in [0, 1]")
        bounds = off.astype(np.intp)
        breakpoints = []
        for k in range(bounds.size - 1):
            xk = x[bounds[k] : bounds[k + 1]]
            yk = y[bounds[k] : bounds[k + 1]]
            if np.any(np.diff(xk) < 0) or np.any(np.diff(yk) < 0):
                raise ValueError(f"isotonic calibration map of class {k} is not non-decreasing")
            breakpoints.append((xk.copy(), yk.copy()))
        out = cls()
        out.n_classes_ = len(breakpoints)
        out.breakpoints_ = breakpoints
        out.floor_ = None
        return out


# -- sigmoid (Platt) scaling -------------------------------------------------------
def log_odds(log_proba: np.ndarray) -> np.ndarray:
    """One-vs-rest log-odds ``log p_k - log(1 - p_k)`` of each class, shape (n, K).

    Any row-wise shift of ``log_proba`` gives the same log-odds. With ``d``
    a row's log posteriors less their largest, ``log(1 - p_k)`` is, up to
    that shift, the log of the sum of the other classes' ``exp(d)``: for a
    class other than the row's top one that sum holds the top's 1, so it is
    the row's total less ``exp(d_k)`` without cancellation; for the top
    class it is the log-sum-exp of the others, taken from their own largest,
    which keeps its precision where ``p_k`` is near 1 and whatever
    underflows. Values are not clipped: log posteriors far below -708 give
    log-odds far beyond +-708, and a probability of exactly 1 or 0 gives
    ``+inf`` or ``-inf``.
    """
    z = np.asarray(log_proba, dtype=np.float64)
    n = z.shape[0]
    rows = np.arange(n)
    top = np.argmax(z, axis=1)
    d = z - z[rows, top][:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.exp(d)
        total = np.einsum("ij->i", e)
        np.subtract(total[:, None], e, out=e)  # the other classes' sum (not for the top)
        f = np.log(e, out=e)
        np.subtract(d, f, out=f)
        d[rows, top] = -np.inf
        second = d.max(axis=1)
        shift = np.where(np.isfinite(second), second, 0.0)
        np.subtract(d, shift[:, None], out=d)
        np.exp(d, out=d)
        # A row whose other classes are all -inf (probability 1) gets +inf.
        f[rows, top] = -(second + np.log(np.einsum("ij->i", d)))
    return f


def _finite_scores(f: np.ndarray) -> np.ndarray:
    """``f`` with ``+-inf`` replaced by ``+-max(max |finite f|, 708.4)``: the
    scores Platt's fit sees (see ``_MIN_INFINITE_LOG_ODDS``). A new array."""
    out = np.array(f, dtype=np.float64)
    infinite = np.isinf(out)
    if infinite.any():
        finite = out[~infinite]
        bound = max(float(np.max(np.abs(finite))) if finite.size else 0.0, _MIN_INFINITE_LOG_ODDS)
        out[infinite] = np.copysign(bound, out[infinite])
    return out


def _affine(a, f: np.ndarray, b) -> np.ndarray:
    """``a f + b`` with ``0 * inf`` taken as 0: a flat sigmoid ignores the score."""
    with np.errstate(invalid="ignore"):
        u = a * f
    return np.where(np.isnan(u) & np.isinf(f), 0.0, u) + b


def platt_targets(hit: np.ndarray) -> np.ndarray:
    """Platt's regularised targets: ``(N+ + 1) / (N+ + 2)`` for a hit, ``1 / (N- + 2)`` else.

    Platt (1999), section 2.2: the maximum a posteriori targets under a
    uniform prior on each class's probability, which keep the fitted slope
    finite when the scores separate the classes (as scikit-learn does).
    """
    n_pos = float(np.count_nonzero(hit))
    n_neg = hit.size - n_pos
    return np.where(hit, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))


def _platt_constants(g: np.ndarray, target: np.ndarray) -> tuple:
    """What :func:`_platt_parts` needs of ``g`` and ``target`` at every
    ``(A, B)``: ``g^2``, the sums of ``target`` and ``target g``, and those
    of ``1 - target`` and ``(1 - target) g``."""
    miss = 1.0 - target
    return (
        g * g,
        float(target.sum()),
        float(np.einsum("i,i->", target, g)),
        float(miss.sum()),
        float(np.einsum("i,i->", miss, g)),
    )


def _sigmoid_terms(g, ab, u, e, q) -> None:
    """Platt's sigmoid at scores ``g`` with ``ab = (A, B)``, into the buffers:
    ``u = A g + B``, then ``q`` the probability of a hit ``1 / (1 + e^u)``
    (0 where ``e^u`` overflows), ``e = log1p(e^-|u|)`` and ``u = max(u, 0)``,
    so that ``u + e = log(1 + e^u)`` without overflow."""
    np.multiply(g, ab[0], out=u)
    u += ab[1]
    with np.errstate(over="ignore"):
        np.exp(u, out=q)
        q += 1.0
        np.divide(1.0, q, out=q)
    np.abs(u, out=e)
    np.negative(e, out=e)
    np.exp(e, out=e)
    np.log1p(e, out=e)
    np.maximum(u, 0.0, out=u)


def _platt_parts(ab, g: np.ndarray, target: np.ndarray, constants: tuple | None = None, buf=None):
    """Mean loss, gradient and Hessian of Platt's cross-entropy at ``ab = (A, B)``.

    ``constants`` are :func:`_platt_constants` of ``g`` and ``target``;
    ``buf``, three arrays shaped like ``g`` that are overwritten (a search
    evaluates these at many points: new arrays of this size cost a page
    fault per 4 kB each time).
    """
    g2, t_sum, tg_sum, miss_sum, miss_g_sum = constants or _platt_constants(g, target)
    u, e, q = buf if buf is not None else (np.empty_like(g), np.empty_like(g), np.empty_like(g))
    _sigmoid_terms(g, ab, u, e, q)
    n = g.size
    # Cross-entropy -[t log q + (1 - t) log(1 - q)] with log q = -log(1 + e^u);
    # the terms linear in u are sums known beforehand.
    softplus = float(e.sum()) + float(u.sum())
    loss = (softplus - ab[0] * miss_g_sum - ab[1] * miss_sum) / n
    # Sums by einsum, not BLAS, whose rounding depends on its threads: the
    # fitted parameters are the same on every machine that rounds alike.
    qg, q_sum = float(np.einsum("i,i->", q, g)), float(q.sum())
    # d loss / d u = target - q per row; its derivative w = q (1 - q).
    np.subtract(1.0, q, out=e)
    w = np.multiply(q, e, out=q)
    wg = np.einsum("i,i->", w, g)
    grad = np.array([tg_sum - qg, t_sum - q_sum]) / n
    hess = np.array([[np.einsum("i,i->", w, g2), wg], [wg, w.sum()]]) / n
    return loss, grad, hess


def fit_sigmoid(
    f: np.ndarray, target: np.ndarray, start: tuple[float, float] | None = None
) -> tuple[float, float]:
    """Platt's ``(A, B)`` minimising the cross-entropy of ``1 / (1 + exp(A f + B))`` to ``target``.

    The loss is convex in ``(A, B)`` (logistic regression with soft targets)
    and strictly so once ``f`` has any spread, so its minimum is found by
    Newton's method with the analytic gradient and Hessian and a
    backtracking line search (Armijo's rule), on ``f`` divided by its
    largest magnitude (as scikit-learn rescales; the minimiser is the same
    up to that factor), until a full step no longer shrinks the gradient:
    the gradient of the mean loss ends at rounding level (about 1e-15 here,
    against scikit-learn's L-BFGS-B ``gtol`` of 1e-6 on the summed loss).
    Scores without spread determine no slope: ``A = 0`` and ``B`` the
    log-odds of the mean target.

    Parameters
    ----------
    f : ndarray of shape (n_samples,), finite
    target : ndarray of shape (n_samples,), in (0, 1)
    start : (A, B), optional
        Where the search starts (a fit on similar rows); default ``A = 0``
        and ``B`` the log-odds of the mean target. The minimiser does not
        depend on it.

    Returns
    -------
    (A, B) : tuple of float
    """
    scale = float(np.max(np.abs(f)))
    mean_t = float(np.mean(target))
    if scale == 0.0 or float(np.ptp(f)) == 0.0:
        return 0.0, float(np.log1p(-mean_t) - np.log(mean_t))
    g = f / scale
    if start is None or not np.all(np.isfinite(start)):
        x = np.array([0.0, float(np.log1p(-mean_t) - np.log(mean_t))])
    else:
        x = np.array([start[0] * scale, start[1]])
    constants = _platt_constants(g, target)
    buf = (np.empty_like(g), np.empty_like(g), np.empty_like(g))
    a, b = _sigmoid_newton(x, lambda ab: _platt_parts(ab, g, target, constants, buf))
    return float(a) / scale, float(b)


def _sigmoid_newton(x: np.ndarray, parts) -> np.ndarray:
    """Newton's method with Armijo backtracking from ``x`` on the convex loss
    whose ``(loss, gradient, Hessian)`` at a point ``parts`` returns (see
    :func:`fit_sigmoid`)."""
    loss, grad, hess = parts(x)
    for _ in range(100):
        try:
            step = np.linalg.solve(hess, grad)
        except np.linalg.LinAlgError:
            break
        decrement = float(grad @ step)
        if not decrement > 0.0:  # not a descent direction: at rounding level
            break
        norm = np.linalg.norm(grad)
        alpha, taken = 1.0, None
        while alpha > 1e-10:
            trial = x - alpha * step
            evaluated = parts(trial)
            # Armijo's sufficient decrease; near the optimum, where the loss
            # no longer moves beyond its rounding, a full step is kept while
            # it shrinks the gradient (quadratic convergence).
            if evaluated[0] <= loss - 1e-4 * alpha * decrement or (
                alpha == 1.0
                and np.linalg.norm(evaluated[1]) < norm
                and evaluated[0] <= loss + 1e-13 * abs(loss)
            ):
                taken = trial, evaluated
                break
            if decrement <= 1e-10 * abs(loss):
                break  # the loss is within rounding of its minimum: no line search
            alpha *= 0.5
        if taken is None or np.array_equal(taken[0], x):
            break
        x, (loss, grad, hess) = taken
        # Newton's convergence is quadratic: after a step this small, the
        # gradient is at rounding level.
        if decrement <= 1e-20 * abs(loss) or not np.linalg.norm(grad) > 0.0:
            break
    return x


class SigmoidCalibration(Calibrator):
    """Platt (sigmoid) scaling, one-vs-rest, with renormalisation.

    For each class ``k`` a sigmoid ``q_k = 1 / (1 + exp(A_k f_k + B_k))`` of
    the class's log-odds ``f_k = log p_k - log(1 - p_k)`` (:func:`log_odds`)
    is fitted to the indicator ``[y = k]`` by Platt's method: cross-entropy
    to the regularised targets of :func:`platt_targets`, minimised exactly
    (:func:`fit_sigmoid`). Calibrated posteriors are ``q_k / sum_j q_j``
    (Zadrozny and Elkan, KDD 2002, section 4). With two classes one sigmoid,
    of the second class's log-odds, gives ``q`` and ``1 - q``. This is
    scikit-learn's ``CalibratedClassifierCV(method="sigmoid")`` on an
    estimator whose ``decision_function`` returns these log-odds (one column
    for two classes).

    The scores are the log-odds, not the probabilities scikit-learn uses for
    estimators without a ``decision_function``: Platt's sigmoid was made for
    unbounded scores, ``A = -1, B = 0`` is then the identity (the
    calibrator can leave a calibrated model as it is), and naive Bayes
    posteriors, often within 1e-10 of 0 or 1, keep their order instead of
    all mapping to one value. Computed in log space (``log q_k =
    -logaddexp(0, A_k f_k + B_k)``), so no class gets probability 0 unless
    its sigmoid underflows the log-space range. Scores are not clipped, so
    the fit is Platt's optimum for any finite log-odds. A probability of
    exactly 0 or 1 (log-odds ``-inf`` or ``+inf``) is fitted as the most
    extreme finite score of its column, at least +-708.4, and transformed as
    the limit: its sigmoid is exactly 0 or 1.

    Attributes
    ----------
    n_classes_ : int
    a_, b_ : ndarray of shape (1,) for two classes, else (n_classes,)
        Platt's slope and intercept per sigmoid (a calibrated direction has
        ``A < 0``).
    """

    kind = "sigmoid"
    fitted_attribute = "a_"

    def describe(self) -> dict[str, object]:
        """Platt's ``a`` and ``b`` of each sigmoid (one for two classes)."""
        return {"a": [float(v) for v in self.a_], "b": [float(v) for v in self.b_]}

    def fit(self, log_proba, y_idx, *, init=None) -> SigmoidCalibration:
        """Fit the sigmoids on held-out predictions.

        Parameters
        ----------
        log_proba : array-like of shape (n_samples, n_classes)
            Log posteriors of a fitted model. ``-inf`` stands for probability 0.
        y_idx : array-like of int, shape (n_samples,)
            Index of each row's true class in the model's class order.
        init : SigmoidCalibration, optional
            Fitted sigmoids, of as many classes, to start each search from
            (the optimum does not depend on it).

        Returns
        -------
        self

        Raises
        ------
        ValueError
            Fewer than 2 samples or 2 classes, shapes that do not match, NaN
            or +inf, a class index out of range.
        """
        z = check_log_proba(log_proba, min_samples=2, min_classes=2)
        y = _check_targets(y_idx, z.shape[0], z.shape[1])
        # Log-odds are shift-invariant: no need to normalise first.
        return self._fit_scores(log_odds(z), y, init)

    def _fit_scores(self, f: np.ndarray, y: np.ndarray, init) -> SigmoidCalibration:
        """:meth:`fit` on the checked rows' log-odds ``f``."""
        self.n_classes_ = f.shape[1]
        columns = [1] if f.shape[1] == 2 else range(f.shape[1])
        starts = (
            list(zip(init.a_, init.b_))
            if init is not None and getattr(init, "n_classes_", None) == self.n_classes_
            else [None] * len(columns)
        )
        fitted = [
            fit_sigmoid(_finite_scores(f[:, k]), platt_targets(y == k), start)
            for k, start in zip(columns, starts)
        ]
        self.a_ = np.array([a for a, _ in fitted], dtype=np.float64)
        self.b_ = np.array([b for _, b in fitted], dtype=np.float64)
        return self

    @classmethod
    def out_of_fold(cls, z: np.ndarray, y: np.ndarray, fold: np.ndarray, init=None) -> np.ndarray:
        """:func:`cross_fit` with the log-odds of every row taken once (a
        row's log-odds depend on that row alone)."""
        zc = check_log_proba(z, min_samples=2, min_classes=2)
        yc = _check_targets(y, zc.shape[0], zc.shape[1])
        f = log_odds(zc)
        out = np.empty_like(zc)
        for k in np.unique(fold):
            held = fold == k
            if np.count_nonzero(~held) < 2:
                raise ValueError("log_proba has fewer than 2 samples; at least 2 are required")
            calibrator = cls()._fit_scores(f[~held], yc[~held], init)
            out[held] = calibrator._map_scores(f[held], zc[held])
        return out

    def _map(self, z: np.ndarray) -> np.ndarray:
        """One sigmoid of each class's log-odds, renormalised."""
        return self._map_scores(log_odds(z), z)

    def _map_scores(self, f: np.ndarray, z: np.ndarray) -> np.ndarray:
        """:meth:`_map` of the rows ``z`` whose log-odds are ``f``."""
        if self.n_classes_ == 2:
            u = _affine(self.a_[0], f[:, 1], self.b_[0])
            return np.column_stack([-np.logaddexp(0.0, -u), -np.logaddexp(0.0, u)])
        log_q = -np.logaddexp(0.0, _affine(self.a_, f, self.b_))
        # A row whose every sigmoid is at its limit 0 (infinite scores and a
        # slope of the wrong sign) has no calibrated ratio: it keeps the
        # model's own posteriors.
        lost = np.all(np.isneginf(log_q), axis=1)
        if lost.any():
            log_q[lost] = log_normalise(z[lost])
        return log_normalise(log_q)

    def to_arrays(self) -> dict[str, np.ndarray]:
        """Fitted sigmoids for a model file: ``a`` and ``b``, float64 of shape
        (1,) for two classes, else (n_classes,)."""
        self._check_fitted()
        return {"a": self.a_.copy(), "b": self.b_.copy()}

    @classmethod
    def from_arrays(cls, arrays) -> SigmoidCalibration:
        """Rebuild from :meth:`to_arrays` output.

        Raises
        ------
        ValueError
            Unless ``arrays`` holds exactly ``a`` and ``b``, 1-D float64,
            finite, of one equal length other than 0 and 2.
        """
        a = _check_stored(arrays, ("a", "b"), cls.kind)
        if a["a"].shape != a["b"].shape or a["a"].size in (0, 2):
            raise ValueError(
                "sigmoid calibration needs one (a, b) pair for two classes or one per class "
                f"for three or more, got {a['a'].size} a and {a['b'].size} b values"
            )
        out = cls()
        out.a_, out.b_ = a["a"].copy(), a["b"].copy()
        out.n_classes_ = 2 if out.a_.size == 1 else out.a_.size
        return out


# -- fold fits on binned scores ---------------------------------------------------
#: Bins of each class's log-odds in :func:`binned_cross_fit`: equal widths
#: over the class's range of (finite) log-odds.
SCORE_BINS = 1 << 16

#: The methods :func:`binned_cross_fit` can fit on bins.
BINNED = ("sigmoid", "isotonic")


def _platt_parts_binned(ab, g, count, g2, sums, n: float, buf):
    """:func:`_platt_parts` of rows pooled into bins: ``g`` the bins' mean
    (scaled) scores, ``count`` their numbers of rows, ``sums`` the exact row
    sums ``(sum t, sum t g, sum (1 - t), sum (1 - t) g)``; each bin's rows
    enter the softplus at their mean score (the linear terms stay exact)."""
    t_sum, tg_sum, miss_sum, miss_g_sum = sums
    u, e, q = buf
    _sigmoid_terms(g, ab, u, e, q)
    e += u
    softplus = float(np.einsum("i,i->", count, e))
    loss = (softplus - ab[0] * miss_g_sum - ab[1] * miss_sum) / n
    np.multiply(q, count, out=u)  # count q
    qg, q_sum = float(np.einsum("i,i->", u, g)), float(u.sum())
    np.subtract(1.0, q, out=e)
    w = np.multiply(u, e, out=u)  # count q (1 - q)
    wg = np.einsum("i,i->", w, g)
    grad = np.array([tg_sum - qg, t_sum - q_sum]) / n
    hess = np.array([[np.einsum("i,i->", w, g2), wg], [wg, w.sum()]]) / n
    return loss, grad, hess


def fit_sigmoid_bins(count, hit, score, hit_score, start=None) -> tuple[float, float]:
    """:func:`fit_sigmoid` on rows pooled into bins of their score.

    Parameters
    ----------
    count, hit, score, hit_score : ndarray of shape (n_bins,)
        Per bin: the number of rows, of positives, the sum of the rows'
        scores and the sum of the positives' scores.
    start : (A, B), optional
        Where the search starts.

    Returns
    -------
    (A, B) : tuple of float

    Notes
    -----
    Platt's targets and the loss's terms linear in the scores are the exact
    sums over the rows; only the softplus of each row is taken at its bin's
    mean score. The softplus is convex with a second derivative at most
    1/4, so the binned loss is below the exact one by at most ``A^2 / 8``
    times the mean within-bin variance of the scores (at most
    ``A^2 w^2 / 32`` for bins of width ``w``), at every ``(A, B)``; the
    binned optimum's exact loss is within that of the exact optimum.
    """
    keep = count > 0
    n_j = count[keep]
    n = float(n_j.sum())
    n_pos = float(hit.sum())
    n_neg = n - n_pos
    t_pos, t_neg = (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0)
    s_all, s_pos = float(score.sum()), float(hit_score.sum())
    t_sum = t_pos * n_pos + t_neg * n_neg
    mean_t = t_sum / n
    m = score[keep] / n_j
    scale = float(np.max(np.abs(m)))
    if scale == 0.0 or float(np.ptp(m)) == 0.0:
        return 0.0, float(np.log1p(-mean_t) - np.log(mean_t))
    g = m / scale
    tg_sum = (t_pos * s_pos + t_neg * (s_all - s_pos)) / scale
    sums = (t_sum, tg_sum, n - t_sum, s_all / scale - tg_sum)
    if start is None or not np.all(np.isfinite(start)):
        x = np.array([0.0, float(np.log1p(-mean_t) - np.log(mean_t))])
    else:
        x = np.array([start[0] * scale, start[1]])
    g2 = g * g
    buf = (np.empty_like(g), np.empty_like(g), np.empty_like(g))
    a, b = _sigmoid_newton(x, lambda ab: _platt_parts_binned(ab, g, n_j, g2, sums, n, buf))
    return float(a) / scale, float(b)


def isotonic_map_bins(count, hit, proba, floor: float) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_sorted_isotonic_map` of rows pooled into bins ordered by score:
    each bin one point, at its rows' mean probability, weighted by its rows
    (``count``, ``hit`` and ``proba`` per bin: rows, positives, the sum of
    the rows' probabilities)."""
    from scipy import optimize

    keep = count > 0
    n_j, h = count[keep], hit[keep]
    # The bins follow the log-odds, which rise with the probability; a mean
    # rounded below its neighbour's is taken as equal to it.
    x = np.maximum.accumulate(proba[keep] / n_j)
    starts = np.flatnonzero(np.concatenate([[True], x[1:] != x[:-1]]))
    x = x[starts]
    counts = np.add.reduceat(n_j, starts)
    y = optimize.isotonic_regression(np.add.reduceat(h, starts) / counts, weights=counts).x
    y = np.clip(y, floor, 1.0)
    keep = np.ones(x.size, dtype=bool)
    if x.size > 2:
        keep[1:-1] = ~((y[1:-1] == y[:-2]) & (y[1:-1] == y[2:]))
    return x[keep], y[keep]


def _bin_index(f: np.ndarray, bins: int) -> np.ndarray:
    """Each value's bin among ``bins`` equal widths over ``[min f, max f]``."""
    lo, hi = float(f.min()), float(f.max())
    if not hi > lo:
        return np.zeros(f.shape[0], dtype=np.intp)
    idx = ((f - lo) * (bins / (hi - lo))).astype(np.intp)
    np.minimum(idx, bins - 1, out=idx)
    return idx


def binned_cross_fit(
    kind: str,
    log_proba,
    y_idx,
    folds,
    *,
    bins: int = SCORE_BINS,
    init=None,
    scores: np.ndarray | None = None,
    full: bool = False,
):
    """:func:`cross_fit` of ``kind`` (one of :data:`BINNED`) with each fold's
    calibrator fitted on binned scores rather than on the rows.

    Each class's log-odds (:func:`log_odds`; the scores Platt's fit sees) are
    cut into ``bins`` equal widths over their range; one pass over the rows
    adds each row to its own fold's bin (rows, positives, score sums, and
    for isotonic the probability sums), a fold's complement is the total
    less its own fold, and each fold's sigmoid (:func:`fit_sigmoid_bins`)
    or isotonic map (:func:`isotonic_map_bins`) is fitted on the bins. The
    held-out rows are then calibrated, row by row, by their fold's
    calibrator, as in :func:`cross_fit`. The fold fits only estimate each
    method's out-of-fold losses: the calibrator fitted on every row is
    :class:`SigmoidCalibration` or :class:`IsotonicCalibration`'s ``fit``.

    Parameters
    ----------
    kind : {"sigmoid", "isotonic"}
    log_proba, y_idx, folds
        As :func:`cross_fit`.
    bins : int
        Bins per class.
    init : SigmoidCalibration, optional
        Where each fold's sigmoid search starts; default the sigmoid fitted
        on every row's bins.
    scores : ndarray of shape (n_samples, n_classes), optional
        :func:`log_odds` of ``log_proba``, when already taken.
    full : bool
        Also return the calibrators: each fold's (in the order of the sorted
        fold labels), then the one fitted on every row's bins (a start for
        the fit on every row: the sigmoid search from there takes a step or
        two).

    Returns
    -------
    ndarray of shape (n_samples, n_classes)
        With ``full``, a pair of it and the list of calibrators.

    Raises
    ------
    ValueError
        As :func:`cross_fit`.
    """
    if kind not in BINNED:
        raise ValueError(f"binned cross-fitting supports {BINNED}, not {kind!r}")
    zc = check_log_proba(np.asarray(log_proba, dtype=np.float64), min_samples=2, min_classes=2)
    p = _check_proba(np.exp(zc), min_samples=2, min_classes=2) if kind == "isotonic" else None
    yc = _check_targets(np.asarray(y_idx), zc.shape[0], zc.shape[1])
    labels, code = np.unique(np.asarray(folds), return_inverse=True)
    n_folds, n_classes = labels.size, zc.shape[1]
    sizes = np.bincount(code, minlength=n_folds)
    if np.any(zc.shape[0] - sizes < 2):
        n_train = int(zc.shape[0] - sizes.max())
        raise ValueError(f"log_proba has {n_train} sample(s); at least 2 are required")
    f = log_odds(zc) if scores is None else scores
    columns = [1] if kind == "sigmoid" and n_classes == 2 else range(n_classes)
    order, position, bounds = _fold_positions(code, n_folds)

    # One calibrator per fold, and last the one on every row's bins.
    fitted: list = []
    for n_train in [*(zc.shape[0] - sizes), zc.shape[0]]:
        cal: Any
        if kind == "sigmoid":
            cal = SigmoidCalibration()
        else:
            cal = IsotonicCalibration()
            cal.floor_ = isotonic_floor(int(n_train))
            cal.breakpoints_ = []
        cal.n_classes_ = n_classes
        fitted.append(cal)
    pairs: list[list[tuple[float, float]]] = [[] for _ in range(n_folds + 1)]
    starts = (
        list(zip(init.a_, init.b_))
        if kind == "sigmoid" and init is not None and getattr(init, "n_classes_", 0) == n_classes
        else None
    )
    for j, k in enumerate(columns):
        fk = _finite_scores(f[:, k])
        hit = (yc == k).astype(np.float64)
        binned = _FoldBins(_bin_index(fk, bins)[order], bounds, bins)
        sums = [binned.sums(), binned.sums(hit[order])]
        if kind == "sigmoid":
            sums.append(binned.sums(fk[order]))
            fk *= hit
            sums.append(binned.sums(fk[order]))
            # Each fold's search starts at the fit on every row's bins.
            n_all, pos_all, score_all, hit_score_all = (total for total, _ in sums)
            whole = fit_sigmoid_bins(n_all, pos_all, score_all, hit_score_all)
            start = starts[j] if starts is not None else whole
            pairs[n_folds].append(whole)
            for i in range(n_folds):
                count, pos, score, hit_score = binned.complements(i, sums)
                pairs[i].append(fit_sigmoid_bins(count, pos, score, hit_score, start))
        else:
            assert p is not None
            sums.append(binned.sums(p[order, k]))
            n_all, pos_all, proba_all = (total for total, _ in sums)
            floor = isotonic_floor(zc.shape[0])
            fitted[n_folds].breakpoints_.append(isotonic_map_bins(n_all, pos_all, proba_all, floor))
            for i in range(n_folds):
                cal = fitted[i]
                count, pos, proba = binned.complements(i, sums)
                cal.breakpoints_.append(isotonic_map_bins(count, pos, proba, cal.floor_))
    if kind == "sigmoid":
        for cal, fits in zip(fitted, pairs):
            cal.a_ = np.array([a for a, _ in fits], dtype=np.float64)
            cal.b_ = np.array([b for _, b in fits], dtype=np.float64)
    # Each fold's rows are taken with np.compress and mapped into one block
    # after another, then put in row order by one np.take: a boolean index
    # of a row-major matrix, to gather or to scatter, is several times slower.
    mapped = np.empty_like(zc)
    for i in range(n_folds):
        held, block = code == i, slice(int(bounds[i]), int(bounds[i + 1]))
        cal = fitted[i]
        if kind == "sigmoid":
            scored = np.compress(held, f, axis=0)
            mapped[block] = cal._map_scores(scored, np.compress(held, zc, axis=0))
        else:
            mapped[block] = cal._map(np.compress(held, zc, axis=0))
    out = np.take(mapped, position, axis=0)
    return (out, fitted) if full else out


class _FoldBins:
    """One class's score bins of the rows grouped by fold (:func:`_fold_positions`):
    each fold's own sums are kept only at the bins its rows fall in, so that
    memory grows with the rows and the bins, not with folds times bins (a
    dense array per fold was 0.5 GB for each sum at 1,000 folds).

    A bin's sum over every row is its folds' own sums added in fold order,
    and a fold's complement is that less its own: the same additions, in
    the same order, as dense per-fold arrays summed over the folds.
    """

    def __init__(self, key: np.ndarray, bounds: np.ndarray, bins: int) -> None:
        self.key, self.bins = key, bins
        self.blocks = []
        self.counts = []
        for i in range(bounds.size - 1):
            block = slice(int(bounds[i]), int(bounds[i + 1]))
            # Counted into all the bins and then kept where non-zero: a sort
            # (np.unique) of each fold's keys cost more than the fits at 1M rows.
            count = np.bincount(key[block], minlength=bins)
            used = np.flatnonzero(count)
            self.blocks.append((block, used))
            self.counts.append(count[used].astype(np.float64))

    def sums(self, weights: np.ndarray | None = None) -> tuple[np.ndarray, list[np.ndarray]]:
        """Per bin, the rows' count (no ``weights``) or sum of ``weights``
        (grouped as the keys), shape (bins,), and each fold's own at its bins."""
        total = np.zeros(self.bins)
        own = []
        for i, (block, used) in enumerate(self.blocks):
            part = (
                self.counts[i]
                if weights is None
                else np.bincount(self.key[block], weights=weights[block], minlength=self.bins)[used]
            )
            total[used] += part
            own.append(part)
        return total, own

    def complements(self, i: int, sums) -> list[np.ndarray]:
        """Each of ``sums`` (pairs from :meth:`sums`) over every fold but ``i``."""
        used = self.blocks[i][1]
        out = []
        for total, own in sums:
            rest = total.copy()
            rest[used] -= own[i]
            out.append(rest)
        return out


def _fold_positions(code: np.ndarray, n_folds: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows grouped by fold code (each fold's in row order), where each
    row lies in that order, and the folds' bounds there: shapes (n_samples,),
    (n_samples,), (n_folds + 1,)."""
    from nbcli.distinct import grouped_order

    order, bounds = grouped_order(code, n_folds)
    position = np.empty(code.size, dtype=np.intp)
    position[order] = np.arange(code.size)
    return order, position, bounds


CALIBRATORS: dict[str, type[Calibrator]] = {
    TemperatureScaling.kind: TemperatureScaling,
    IsotonicCalibration.kind: IsotonicCalibration,
    SigmoidCalibration.kind: SigmoidCalibration,
}


def cross_fit(kind: str, log_proba, y_idx, folds, *, init=None) -> np.ndarray:
    """Out-of-fold calibrated log posteriors: each fold's rows calibrated by a
    calibrator of ``kind`` fitted on the other folds' rows.

    Parameters
    ----------
    kind : str
        A key of :data:`CALIBRATORS`.
    log_proba : array-like of shape (n_samples, n_classes)
    y_idx : array-like of int, shape (n_samples,)
    folds : array-like of int, shape (n_samples,)
        The fold of each row (e.g. :func:`nbcli.resampling.stratified_folds`).
    init : Calibrator, optional
        A calibrator of ``kind`` fitted on every row: each fold's search
        starts from it (the fits do not depend on it).

    Returns
    -------
    ndarray of shape (n_samples, n_classes)

    Raises
    ------
    ValueError
        As the calibrator's ``fit`` on a fold's training rows; ``folds`` not
        of shape (n_samples,).
    """
    z = np.asarray(log_proba, dtype=np.float64)
    folds = np.asarray(folds)
    if z.ndim and folds.shape != z.shape[:1]:
        raise ValueError(f"folds must have shape ({z.shape[0]},), got {folds.shape}")
    return CALIBRATORS[kind].out_of_fold(z, np.asarray(y_idx), folds, init=init)


__all__ = [
    "CALIBRATORS",
    "Calibrator",
    "IsotonicCalibration",
    "SigmoidCalibration",
    "TemperatureScaling",
    "binned_cross_fit",
    "cross_fit",
]
