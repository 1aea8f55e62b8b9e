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
  multiclass probability estimates", KDD 2002). It can change the predicted
  class.

Both derive from :class:`Calibrator` and share one interface, on log
posteriors of shape (n_samples, n_classes) in and out: ``fit(log_proba,
y_idx)`` and ``transform(log_proba)``, plus ``to_arrays``/``from_arrays`` to
store the fitted parameters as named float64 arrays in a model file. Class
indices refer to the model's class order (``classes_``).

NumPy and SciPy only: no file I/O, no printing.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np

from nbcli.models import log_normalise

# Temperatures are searched within this factor either side of the spread of
# the log posteriors. Above it every row is uniform to within 1e-8; below it
# every gap wider than 1e-5 of the spread makes exp() underflow to a
# certainty. Outside, the NLL is flat to rounding and a root search would
# wander.
_TEMPERATURE_RANGE = 1e8

# Probabilities computed as exp(log posterior) may exceed 1 by a rounding.
_PROBA_SLACK = 1e-9


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


def _check_log_proba(log_proba, *, min_samples: int = 1, min_classes: int = 1) -> np.ndarray:
    """Log posteriors: NaN and +inf are refused; -inf (probability 0) is allowed."""
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

    def fit(self, log_proba, y_idx) -> Calibrator:
        """Fit on held-out log posteriors and true class indices; returns self."""
        raise NotImplementedError

    def transform(self, log_proba) -> np.ndarray:
        """Calibrated log posteriors: a new array, each row's exponentials summing to 1."""
        raise NotImplementedError

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
class TemperatureScaling(Calibrator):
    """Temperature scaling: ``p'(k | x) = softmax_k(log p(k | x) / T)``.

    One scalar ``T > 0`` is fitted by minimising the mean negative
    log-likelihood of the true classes (Guo et al., ICML 2017, section 4.2).
    ``T > 1`` softens over-confident posteriors, ``T < 1`` sharpens them;
    dividing every class's score by the same positive number keeps their
    order, so the predicted class never changes.

    The mean NLL is convex in ``1/T`` (a log-sum-exp of functions linear in
    it), so its minimum is found as the root of the analytic derivative with
    Brent's method on ``log T`` (``scipy.optimize.brentq``) to a relative
    precision of about 1e-12 in ``T``. The search covers
    ``[spread / 1e8, spread * 1e8]``, where ``spread`` is the largest gap
    between a row's top log posterior and another finite one. When the
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

    def describe(self) -> dict[str, object]:
        """``temperature`` (T) and ``at_bound`` (the search stopped at an end of its range)."""
        return {"temperature": self.temperature_, "at_bound": bool(self.at_bound_)}

    def fit(self, log_proba, y_idx) -> TemperatureScaling:
        """Fit the temperature on held-out predictions.

        Parameters
        ----------
        log_proba : array-like of shape (n_samples, n_classes)
            Log posteriors of a fitted model (any row-wise constant shift,
            e.g. joint log-likelihoods, gives the same fit). ``-inf`` stands
            for probability 0.
        y_idx : array-like of int, shape (n_samples,)
            Index of each row's true class in the model's class order.

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
        z = _check_log_proba(log_proba, min_samples=2, min_classes=2)
        y = _check_targets(y_idx, z.shape[0], z.shape[1])
        z = z - z.max(axis=1, keepdims=True)  # softmax is shift-invariant; now max 0
        rows = np.arange(z.shape[0])
        zy = z[rows, y]
        if not np.all(np.isfinite(zy)):
            i = int(np.flatnonzero(~np.isfinite(zy))[0])
            raise ValueError(
                f"row {i + 1} gives its true class probability 0 (log_proba -inf); "
                "temperature scaling cannot fit such predictions"
            )
        finite = np.isfinite(z)
        spread = float(-z[finite].min())
        if spread == 0.0:
            # Every row uniform over its classes: the NLL is the same for all T.
            self.temperature_, self.at_bound_ = 1.0, False
            return self
        zf = np.where(finite, z, 0.0)
        e = np.empty_like(z)  # one buffer for every evaluation of the slope

        def nll_slope(u: float) -> float:
            # d(mean NLL)/d(1/T) at T = exp(u): E_p[z] - z_y averaged over rows,
            # E_p[z] = sum_j e_j z_j / sum_j e_j with e_j = exp(z_j / T).
            # It decreases in u (convexity in 1/T); its root is the optimum.
            np.multiply(z, np.exp(-u), out=e)
            np.exp(e, out=e)
            expected = np.einsum("ij,ij->i", e, zf)
            expected /= np.einsum("ij->i", e)
            expected -= zy
            return float(np.mean(expected))

        lo = np.log(spread / _TEMPERATURE_RANGE)
        hi = np.log(spread * _TEMPERATURE_RANGE)
        if nll_slope(lo) <= 0.0:
            u, self.at_bound_ = lo, True
        elif nll_slope(hi) >= 0.0:
            u, self.at_bound_ = hi, True
        else:
            from scipy import optimize

            u = optimize.brentq(nll_slope, lo, hi, xtol=1e-13, rtol=4 * np.finfo(float).eps)
            self.at_bound_ = False
        self.temperature_ = float(np.exp(u))
        return self

    def _check_fitted(self):
        if not hasattr(self, "temperature_"):
            raise ValueError("TemperatureScaling is not fitted yet; call fit first")

    def transform(self, log_proba) -> np.ndarray:
        """Calibrated log posteriors.

        Parameters
        ----------
        log_proba : array-like of shape (n_samples, n_classes)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            ``log_proba / T`` normalised by log-sum-exp, so that the
            exponentials of each row sum to 1. A new array.

        Raises
        ------
        ValueError
            Before ``fit``; on NaN or +inf, or a row that is -inf everywhere.
        """
        self._check_fitted()
        z = _check_log_proba(log_proba)
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
def _isotonic_map(p: np.ndarray, hit: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Breakpoints of the non-decreasing least-squares fit of ``hit`` on ``p``.

    Rows with equal ``p`` are pooled first (mean of ``hit``, weighted by
    their number), so that each ``p`` gets one value. Only the two ends of
    each constant stretch are kept: linear interpolation between the kept
    points reproduces the fit at every pooled point.
    """
    from scipy import optimize

    x, inverse, counts = np.unique(p, return_inverse=True, return_counts=True)
    mean_hit = np.bincount(inverse, weights=hit, minlength=x.size) / counts
    y = optimize.isotonic_regression(mean_hit, weights=counts.astype(np.float64)).x
    keep = np.ones(x.size, dtype=bool)
    if x.size > 2:
        flat_left = y[1:-1] == y[:-2]
        flat_right = y[1:-1] == y[2:]
        keep[1:-1] = ~(flat_left & flat_right)
    # Pooling adjacent violators averages, so rounding can leave a value a
    # hair outside [0, 1].
    return x[keep], np.clip(y[keep], 0.0, 1.0)


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

    A row whose mapped values are all 0 (every class's probability falls
    where its map is 0) gets its uncalibrated probabilities back, normalised
    to sum to 1, rather than a division by zero.

    Unlike temperature scaling, this can change the predicted class and can
    give probability exactly 0 or 1.

    Attributes
    ----------
    n_classes_ : int
    breakpoints_ : list of (x, y) pairs of 1-D float64 arrays, one per class
        ``x`` increasing predicted probabilities, ``y`` non-decreasing
        calibrated values in [0, 1].
    """

    kind = "isotonic"

    def describe(self) -> dict[str, object]:
        """``breakpoints``: per class, how many steps its isotonic map has."""
        return {"breakpoints": [int(len(x)) for x, _ in self.breakpoints_]}

    def fit(self, log_proba, y_idx) -> IsotonicCalibration:
        """Fit one isotonic map per class on held-out predictions.

        Parameters
        ----------
        log_proba : array-like of shape (n_samples, n_classes)
            Log posteriors of a fitted model; their exponentials must lie in
            [0, 1]. ``-inf`` stands for probability 0.
        y_idx : array-like of int, shape (n_samples,)
            Index of each row's true class in the model's class order. A
            class with no row gets the map 0 everywhere.

        Returns
        -------
        self

        Raises
        ------
        ValueError
            Fewer than 2 samples or 2 classes, shapes that do not match, NaN
            or +inf, probabilities above 1, a class index out of range.
        """
        z = _check_log_proba(log_proba, min_samples=2, min_classes=2)
        p = _check_proba(np.exp(z), min_samples=2, min_classes=2)
        y = _check_targets(y_idx, p.shape[0], p.shape[1])
        self.n_classes_ = p.shape[1]
        self.breakpoints_ = [
            _isotonic_map(p[:, k], (y == k).astype(np.float64)) for k in range(p.shape[1])
        ]
        return self

    def _check_fitted(self):
        if not hasattr(self, "breakpoints_"):
            raise ValueError("IsotonicCalibration is not fitted yet; call fit first")

    def transform(self, log_proba) -> np.ndarray:
        """Calibrated log posteriors.

        Parameters
        ----------
        log_proba : array-like of shape (n_samples, n_classes)

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Log posteriors whose exponentials lie in [0, 1] and sum to 1 in
            each row; a calibrated probability of 0 is ``-inf``. A new array.

        Raises
        ------
        ValueError
            Before ``fit``; on a number of classes other than at fit, NaN or
            +inf, probabilities above 1 or a row that is -inf everywhere.
        """
        self._check_fitted()
        z = _check_log_proba(log_proba)
        p = _check_proba(np.exp(z))
        if p.shape[1] != self.n_classes_:
            raise ValueError(
                f"proba has {p.shape[1]} class columns but the calibration was fitted "
                f"with {self.n_classes_}"
            )
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
        return out


CALIBRATORS: dict[str, type[Calibrator]] = {
    TemperatureScaling.kind: TemperatureScaling,
    IsotonicCalibration.kind: IsotonicCalibration,
}

__all__ = ["CALIBRATORS", "Calibrator", "IsotonicCalibration", "TemperatureScaling"]
