"""Post-hoc calibrators (nbcli.calibration) and the reliability diagram."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from nbcli.calibration import CALIBRATORS, IsotonicCalibration, TemperatureScaling
from nbcli.errors import NbcliError
from nbcli.models import BernoulliNB, GaussianNB

# Run again under other BLAS kernels by .ci/run.
pytestmark = pytest.mark.numerical

SEED = 20240601


# -- helpers computed independently of the package --------------------------------
def expected_calibration_error(proba, y_idx, n_bins=10):
    """ECE with equal-width confidence bins [i/10, (i+1)/10), the last one closed."""
    conf = proba.max(axis=1)
    hit = proba.argmax(axis=1) == y_idx
    idx = np.minimum((conf * n_bins).astype(int), n_bins - 1)
    ece = 0.0
    for b in range(n_bins):
        m = idx == b
        if m.any():
            ece += m.mean() * abs(conf[m].mean() - hit[m].mean())
    return ece


def _log(proba):
    """Log probabilities, with log 0 = -inf and no warning."""
    with np.errstate(divide="ignore"):
        return np.log(np.asarray(proba, dtype=np.float64))


def log_loss(log_proba, y_idx):
    return -log_proba[np.arange(len(y_idx)), y_idx].mean()


def temperature_nll(log_proba, y_idx, T):
    """Mean NLL of softmax(log_proba / T), by scipy's logsumexp."""
    from scipy.special import logsumexp

    z = log_proba / T
    return float(np.mean(logsumexp(z, axis=1) - z[np.arange(len(y_idx)), y_idx]))


# -- digits: fit on 60 %, calibrate on 20 %, evaluate on 20 % ----------------------
@pytest.fixture(scope="module")
def digits():
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    perm = np.random.default_rng(SEED).permutation(len(y))
    a, b = int(0.6 * len(y)), int(0.8 * len(y))
    return X, y, perm[:a], perm[a:b], perm[b:]


MODELS = {
    # With the default var_smoothing=1e-9, pixels constant within a class get
    # variances near 1e-8 and log posteriors of -1e7; see the test below.
    "gaussian": lambda: GaussianNB(var_smoothing=0.1),
    "bernoulli": lambda: BernoulliNB(binarize=7.0),
    "gaussian-default": lambda: GaussianNB(),
}


@pytest.fixture(scope="module")
def predictions(digits):
    """Per model: calibration and test log posteriors and class indices."""
    X, y, tr, ca, te = digits
    out = {}
    for name, make in MODELS.items():
        model = make().fit(X[tr], y[tr])
        out[name] = (
            model.predict_log_proba(X[ca]),
            np.searchsorted(model.classes_, y[ca]),
            model.predict_log_proba(X[te]),
            np.searchsorted(model.classes_, y[te]),
        )
    return out


# Observed values (fixed seed); they pin down the whole pipeline.
EXPECTED = {
    # T, confidence, accuracy, log-loss before/after, ECE before/after
    "gaussian": (
        3.7471035453284602,
        0.98379479,
        0.925,
        0.62728049,
        0.26096502,
        0.06654113,
        0.01837349,
    ),
    "bernoulli": (
        1.9017899027792877,
        0.95450392,
        0.89722222,
        0.54190529,
        0.38269671,
        0.06145012,
        0.05022689,
    ),
}


@pytest.mark.parametrize("name", ["gaussian", "bernoulli"])
def test_temperature_scaling_fixes_over_confidence(predictions, name):
    lp_cal, y_cal, lp_test, y_test = predictions[name]
    T, conf, acc, ll0, ll1, ece0, ece1 = EXPECTED[name]
    p_test = np.exp(lp_test)

    # The uncalibrated model claims more than it delivers.
    assert p_test.max(axis=1).mean() == pytest.approx(conf, rel=1e-6)
    assert (p_test.argmax(axis=1) == y_test).mean() == pytest.approx(acc, rel=1e-6)
    assert conf > acc

    ts = TemperatureScaling().fit(lp_cal, y_cal)
    assert ts.temperature_ == pytest.approx(T, rel=1e-6)
    assert ts.temperature_ > 1 and not ts.at_bound_

    calibrated = ts.transform(lp_test)
    assert np.allclose(np.exp(calibrated).sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert np.array_equal(calibrated.argmax(axis=1), lp_test.argmax(axis=1))

    assert log_loss(lp_test, y_test) == pytest.approx(ll0, rel=1e-6)
    assert log_loss(calibrated, y_test) == pytest.approx(ll1, rel=1e-6)
    assert ll1 < ll0
    assert expected_calibration_error(p_test, y_test) == pytest.approx(ece0, rel=1e-5)
    assert expected_calibration_error(np.exp(calibrated), y_test) == pytest.approx(ece1, rel=1e-5)
    assert ece1 < ece0


def test_temperature_on_degenerate_gaussian_lowers_log_loss_not_ece(predictions):
    # A handful of test errors at -1e7 nats dominate the NLL, so the optimal
    # single temperature is huge and flattens the many correct predictions:
    # log-loss falls by five orders of magnitude while ECE gets worse.
    lp_cal, y_cal, lp_test, y_test = predictions["gaussian-default"]
    ts = TemperatureScaling().fit(lp_cal, y_cal)
    assert ts.temperature_ == pytest.approx(9608274.339317447, rel=1e-6)
    calibrated = ts.transform(lp_test)
    assert log_loss(lp_test, y_test) == pytest.approx(527967.549091406, rel=1e-6)
    assert log_loss(calibrated, y_test) == pytest.approx(2.071251896138788, rel=1e-6)
    assert expected_calibration_error(np.exp(lp_test), y_test) == pytest.approx(
        0.14505068, rel=1e-5
    )
    assert expected_calibration_error(np.exp(calibrated), y_test) == pytest.approx(
        0.70398479, rel=1e-5
    )


@pytest.mark.parametrize("name", ["gaussian", "bernoulli"])
def test_temperature_matches_brute_force_grid(predictions, name):
    lp_cal, y_cal, _, _ = predictions[name]
    ts = TemperatureScaling().fit(lp_cal, y_cal)
    grid = np.exp(np.linspace(np.log(0.1), np.log(100.0), 4001))
    nll = np.array([temperature_nll(lp_cal, y_cal, T) for T in grid])
    best = grid[np.argmin(nll)]
    step = grid[1] / grid[0]
    assert best / step <= ts.temperature_ <= best * step
    at_fit = temperature_nll(lp_cal, y_cal, ts.temperature_)
    assert at_fit <= nll.min()
    # A local minimum to well below the grid's resolution.
    for rel in (1e-5, -1e-5):
        assert at_fit <= temperature_nll(lp_cal, y_cal, ts.temperature_ * (1 + rel))


def test_temperature_scales_with_the_log_posteriors(predictions):
    lp_cal, y_cal, _, _ = predictions["bernoulli"]
    T = TemperatureScaling().fit(lp_cal, y_cal).temperature_
    assert TemperatureScaling().fit(1000.0 * lp_cal, y_cal).temperature_ == pytest.approx(
        1000.0 * T, rel=1e-10
    )
    # A row-wise shift (joint log-likelihood instead of posterior) changes nothing.
    shifted = lp_cal + np.arange(len(y_cal))[:, None]
    assert TemperatureScaling().fit(shifted, y_cal).temperature_ == pytest.approx(T, rel=1e-10)


def test_temperature_sharpens_under_confident_predictions():
    # True class always ranked first but with posteriors near uniform: T < 1.
    rng = np.random.default_rng(1)
    n, k = 400, 4
    y = rng.integers(0, k, n)
    lp = np.log(np.full((n, k), 0.2))
    lp[np.arange(n), y] = np.log(0.4)
    lp[: n // 10, :] = np.log(0.25)  # some rows carry no information
    ts = TemperatureScaling().fit(lp, y)
    assert ts.temperature_ < 1
    assert temperature_nll(lp, y, ts.temperature_) < temperature_nll(lp, y, 1.0)


@pytest.mark.parametrize("name", ["gaussian", "bernoulli"])
def test_temperature_is_scipys_minimum_from_any_start(predictions, name):
    from scipy import optimize

    lp_cal, y_cal, _, _ = predictions[name]
    # The NLL's minimum in log T by a derivative-free bounded search: its
    # precision is about sqrt(eps) relative in T (the NLL is flat to second
    # order there), so the two agree to well within 1e-6.
    found = optimize.minimize_scalar(
        lambda u: temperature_nll(lp_cal, y_cal, np.exp(u)),
        bounds=(np.log(0.1), np.log(100.0)),
        method="bounded",
        options={"xatol": 1e-10},
    )
    ts = TemperatureScaling().fit(lp_cal, y_cal)
    assert ts.temperature_ == pytest.approx(np.exp(found.x), rel=1e-6)
    # The root of the analytic slope, as Brent's method finds it on log T:
    # the Newton search stops within 1e-13 of it, far below rounding's
    # effect on the slope's root (about 1e-12 relative here).
    z = lp_cal - lp_cal.max(axis=1, keepdims=True)
    zy = z[np.arange(len(y_cal)), y_cal]

    def slope(u):
        e = np.exp(z * np.exp(-u))
        return float(np.mean((e * z).sum(axis=1) / e.sum(axis=1) - zy))

    root = optimize.brentq(slope, np.log(0.1), np.log(100.0), xtol=1e-14)
    assert ts.temperature_ == pytest.approx(np.exp(root), rel=1e-10)
    # The optimum does not depend on where the search starts.
    for start in (1e-6, 0.5, 3.0, 1e6):
        init = TemperatureScaling.from_arrays({"temperature": np.array([start])})
        again = TemperatureScaling().fit(lp_cal, y_cal, init=init)
        assert again.temperature_ == pytest.approx(ts.temperature_, rel=1e-10)
        assert not again.at_bound_


def test_temperature_goes_to_the_bound_when_all_rows_are_right():
    lp = np.log(np.array([[0.6, 0.4], [0.3, 0.7], [0.9, 0.1]]))
    ts = TemperatureScaling().fit(lp, np.array([0, 1, 0]))
    assert ts.at_bound_
    # The low end of the range: the narrowest gap below a row's top, / 1e8.
    narrowest = np.log(0.6 / 0.4)
    assert ts.temperature_ == pytest.approx(narrowest / 1e8, rel=1e-12)


def test_one_row_of_a_huge_gap_does_not_hide_the_optimum():
    # A variance of smoothing alone gives one row a gap of 1e10; the others,
    # a few of them wrong, put the optimum near T = 1. A range below the
    # widest gap / 1e8 (T >= 100) would stop at its bound, as if every row
    # were right.
    from scipy import optimize

    rng = np.random.default_rng(3)
    n = 400
    y = rng.integers(0, 3, n)
    lp = rng.normal(size=(n, 3)) * 2.0
    lp[np.arange(n), y] += 2.0
    lp[0] = [0.0, -1e10, -5e9]
    y[0] = 0
    ts = TemperatureScaling().fit(lp, y)
    assert not ts.at_bound_
    found = optimize.minimize_scalar(
        lambda u: temperature_nll(lp, y, np.exp(u)),
        bounds=(np.log(0.01), np.log(100.0)),
        method="bounded",
        options={"xatol": 1e-10},
    )
    assert 0.1 < np.exp(found.x) < 10
    assert ts.temperature_ == pytest.approx(np.exp(found.x), rel=1e-6)


def test_temperature_handles_zero_probabilities():
    with np.errstate(divide="ignore"):
        lp = np.log(np.array([[0.7, 0.3, 0.0], [0.4, 0.6, 0.0], [0.2, 0.8, 0.0], [0.5, 0.5, 0.0]]))
    y = np.array([0, 0, 1, 1])
    ts = TemperatureScaling().fit(lp, y)
    out = ts.transform(lp)
    assert np.all(out[:, 2] == -np.inf)
    assert np.allclose(np.exp(out).sum(axis=1), 1.0)
    with pytest.raises(ValueError, match="true class probability 0"):
        TemperatureScaling().fit(lp, np.array([0, 0, 1, 2]))


# -- isotonic ----------------------------------------------------------------------
def test_isotonic_pool_adjacent_violators_by_hand():
    # Class 1 indicator against p_1 = 0.1..0.4 is 0, 1, 0, 1: PAVA pools the
    # middle pair to 0.5; the map keeps both ends of that flat stretch. The
    # first value, 0, is raised to the floor 1 / (4 + 2).
    p1 = np.array([0.1, 0.2, 0.3, 0.4])
    proba = np.column_stack([1 - p1, p1])
    iso = IsotonicCalibration().fit(_log(proba), np.array([0, 1, 0, 1]))
    assert iso.floor_ == 1 / 6
    # The breakpoints are the probabilities the calibrator saw, exp(log p).
    x1, y1 = iso.breakpoints_[1]
    assert np.array_equal(x1, np.exp(np.log([0.1, 0.2, 0.3, 0.4])))
    assert np.array_equal(y1, [1 / 6, 0.5, 0.5, 1.0])
    x0, y0 = iso.breakpoints_[0]
    assert np.array_equal(x0, np.exp(np.log(1 - p1))[::-1])
    assert np.array_equal(y0, [1 / 6, 0.5, 0.5, 1.0])
    # p_1 = 0.25: g_1 = 0.5 and g_0(0.75) = 0.5, so the row stays at 1/2.
    assert np.allclose(np.exp(iso.transform(_log([[0.75, 0.25]]))), [[0.5, 0.5]])
    # p_1 = 0.35 interpolates to g_1 = 0.75; g_0(0.65) = (1/6 + 1/2) / 2 = 1/3.
    assert np.allclose(np.exp(iso.transform(_log([[0.65, 0.35]]))), [[4 / 13, 9 / 13]])
    # Beyond the ends the maps are constant: g_0(1) = 1, g_1(0) = 1/6, never 0 or 1.
    assert np.allclose(np.exp(iso.transform(_log([[1.0, 0.0]]))), [[6 / 7, 1 / 7]])


def test_isotonic_pools_tied_probabilities():
    proba = np.array([[0.5, 0.5], [0.5, 0.5], [0.5, 0.5], [0.9, 0.1]])
    iso = IsotonicCalibration().fit(_log(proba), np.array([0, 1, 1, 0]))
    x1, y1 = iso.breakpoints_[1]
    assert np.array_equal(x1, np.exp(np.log([0.1, 0.5])))
    assert np.allclose(y1, [1 / 6, 2 / 3])


def test_isotonic_floor_keeps_every_class_possible():
    # Class 2 never occurs in the calibration rows, and classes 0 and 1 only
    # where the model was sure of them: without the floor 1 / (6 + 2) a row
    # sure of class 2 would map to 0 everywhere, and a row sure of class 0
    # would give the others probability 0.
    proba = np.array([[0.9, 0.05, 0.05], [0.05, 0.9, 0.05]] * 3)
    iso = IsotonicCalibration().fit(_log(proba), np.array([0, 1] * 3))
    f = 1 / 8
    assert iso.describe()["floor"] == f
    assert np.array_equal(iso.breakpoints_[2][1], [f])
    out = np.exp(iso.transform(_log([[0.05, 0.05, 0.9], [0.9, 0.05, 0.05], [0.5, 0.05, 0.45]])))
    g0 = f + (0.5 - 0.05) / (0.9 - 0.05) * (1 - f)  # interpolated between (0.05, f) and (0.9, 1)
    expected = np.array([[f, f, f], [1.0, f, f], [g0, f, f]])
    assert np.allclose(out, expected / expected.sum(axis=1, keepdims=True), rtol=1e-12)
    assert out.min() > 0 and out.max() < 1


def test_isotonic_map_of_an_older_file_mapped_to_zero_keeps_its_probabilities():
    # Maps stored before the floor existed can be 0: such a row gets its
    # uncalibrated probabilities back, as it always did.
    iso = IsotonicCalibration.from_arrays(
        {
            # As a fit stores them: the probabilities it saw, exp(log p).
            "x": np.exp(np.log([0.05, 0.9, 0.05, 0.9, 0.05])),
            "y": np.array([0.0, 1.0, 0.0, 1.0, 0.0]),
            "offsets": np.array([0.0, 2.0, 4.0, 5.0]),
        }
    )
    assert iso.floor_ is None and "floor" not in iso.describe()
    out = np.exp(iso.transform(_log([[0.05, 0.05, 0.9], [0.9, 0.05, 0.05], [0.5, 0.05, 0.45]])))
    # Second row: g_0(0.9) = 1, the others 0. Third: g_0(0.5) = 0.45/0.85.
    assert np.allclose(out, [[0.05, 0.05, 0.9], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]])


@pytest.mark.parametrize("name", ["gaussian", "bernoulli"])
def test_isotonic_on_digits(predictions, name):
    lp_cal, y_cal, lp_test, y_test = predictions[name]
    iso = IsotonicCalibration().fit(lp_cal, y_cal)
    assert iso.n_classes_ == 10
    for x, y in iso.breakpoints_:
        assert np.all(np.diff(x) > 0) and np.all(np.diff(y) >= 0)
        assert np.all((y >= 0) & (y <= 1))
    q = np.exp(iso.transform(lp_test))
    assert np.all((q > 0) & (q < 1))
    assert np.allclose(q.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    ece_before = expected_calibration_error(np.exp(lp_test), y_test)
    ece_after = expected_calibration_error(q, y_test)
    assert ece_after < ece_before
    # scikit-learn's isotonic regression with the same floor, one class at a
    # time, then renormalised. Both pool ties by their mean and interpolate
    # linearly; values are means of 0/1 over at most 360 rows, so they agree
    # to a few roundings.
    from sklearn.isotonic import IsotonicRegression

    floor = 1 / (len(y_cal) + 2)
    assert iso.floor_ == floor
    p_cal, p_test = np.exp(lp_cal), np.exp(lp_test)
    g = np.column_stack(
        [
            IsotonicRegression(y_min=floor, y_max=1.0, out_of_bounds="clip")
            .fit(p_cal[:, k], (y_cal == k).astype(float))
            .predict(p_test[:, k])
            for k in range(10)
        ]
    )
    assert np.allclose(q, g / g.sum(axis=1, keepdims=True), rtol=0, atol=1e-12)
    # The name model files were read with gives the same array.
    assert np.array_equal(iso.transform_log(lp_test), iso.transform(lp_test))


def test_isotonic_ties_probabilities_below_the_resolution_as_scikit_learn(predictions):
    # Gaussian NB on digits gives many posteriors below 1e-16. Rows of
    # class k scored that low (surprises, made here by relabelling rows)
    # pool with the rest of that low end in scikit-learn's isotonic
    # regression, which takes values closer than the float resolution as one;
    # distinct floats there would make steps of their own.
    from sklearn.isotonic import IsotonicRegression

    lp_cal, y_cal, lp_test, _ = predictions["gaussian"]
    p_cal, p_test = np.exp(lp_cal), np.exp(lp_test)
    y = y_cal.copy()
    for k in range(3):
        low = np.flatnonzero((p_cal[:, k] > 0) & (p_cal[:, k] < 1e-16))
        assert low.size > 20
        y[low[len(low) // 2]] = k  # neither the least nor the largest of them
    iso = IsotonicCalibration().fit(lp_cal, y)
    floor = 1 / (len(y) + 2)
    g = np.column_stack([
        IsotonicRegression(y_min=floor, y_max=1.0, out_of_bounds="clip")
        .fit(p_cal[:, k], (y == k).astype(float))
        .predict(p_test[:, k])
        for k in range(10)
    ])  # fmt: skip
    q = np.exp(iso.transform(lp_test))
    np.testing.assert_allclose(q, g / g.sum(axis=1, keepdims=True), rtol=0, atol=1e-12)
    for k in range(3):  # the low end is one pool, from its least value on
        x, _ = iso.breakpoints_[k]
        assert x[0] == p_cal[:, k].min() and np.sum(x < 1e-15) == 1, x


@pytest.mark.parametrize("name", ["gaussian", "bernoulli"])
def test_round_trip_through_arrays_is_bit_identical(predictions, name):
    lp_cal, y_cal, lp_test, _ = predictions[name]
    for kind, cls in CALIBRATORS.items():
        fitted = cls().fit(lp_cal, y_cal)
        arrays = fitted.to_arrays()
        assert all(a.dtype == np.float64 for a in arrays.values())
        restored = cls.from_arrays({k: v.copy() for k, v in arrays.items()})
        assert restored.kind == kind
        with np.errstate(divide="ignore"):
            assert np.array_equal(restored.transform(lp_test), fitted.transform(lp_test))
    iso_arrays = IsotonicCalibration().fit(lp_cal, y_cal).to_arrays()
    assert iso_arrays["offsets"].shape == (11,)
    assert iso_arrays["offsets"][-1] == iso_arrays["x"].size == iso_arrays["y"].size


# -- bad input ---------------------------------------------------------------------
LP = np.log(np.array([[0.7, 0.3], [0.4, 0.6], [0.2, 0.8]]))


@pytest.mark.parametrize("cls", [TemperatureScaling, IsotonicCalibration])
@pytest.mark.parametrize(
    "log_proba, y_idx, message",
    [
        (LP[:1], np.array([0]), "at least 2 are required"),
        (LP[:, :1], np.array([0, 0, 0]), "at least 2 are required"),
        (LP[0], np.array([0, 1]), "must be 2-D"),
        (LP, np.array([0, 1]), "3 rows"),
        (LP, np.array([0, 2, 1]), r"y_idx\[1\] = 2 is not a class index"),
        (LP, np.array([0, -1, 1]), "is not a class index"),
        (LP, np.array([0.0, 1.0, 1.0]), "integer class indices"),
        (
            np.where([[False, False], [False, True], [False, False]], np.nan, LP),
            np.array([0, 1, 1]),
            "row 2, class index 1",
        ),
        (
            np.where([[False, False], [False, False], [True, False]], np.inf, LP),
            np.array([0, 1, 1]),
            "row 3, class index 0",
        ),
        (np.full((3, 2), -np.inf), np.array([0, 1, 1]), "-inf for every class"),
    ],
)
def test_fit_refuses_bad_input(cls, log_proba, y_idx, message):
    with pytest.raises(ValueError, match=message):
        cls().fit(log_proba, y_idx)


def test_isotonic_refuses_probabilities_outside_unit_interval():
    with pytest.raises(ValueError, match=r"value 1.5 at row 1, class index 0"):
        IsotonicCalibration().fit(_log([[1.5, 0.0], [0.5, 0.5]]), np.array([0, 1]))
    iso = IsotonicCalibration().fit(LP, np.array([0, 1, 1]))
    with pytest.raises(ValueError, match="3 class columns"):
        iso.transform(np.log(np.full((2, 3), 1 / 3)))
    with pytest.raises(ValueError, match="-inf for every class"):
        iso.transform(_log(np.zeros((1, 2))))


def test_unfitted_calibrators_refuse_to_transform():
    for cls in CALIBRATORS.values():
        with pytest.raises(ValueError, match="not fitted"):
            cls().transform(LP)


@pytest.mark.parametrize(
    "arrays, message",
    [
        ({}, "missing"),
        ({"temperature": np.array([1.0]), "x": np.array([0.0])}, "unexpected"),
        ({"temperature": np.array([0.0])}, "positive"),
        ({"temperature": np.array([-2.0])}, "positive"),
        ({"temperature": np.array([1.0, 2.0])}, "one positive"),
        ({"temperature": np.array([np.nan])}, "NaN"),
        ({"temperature": np.array([1], dtype=np.int64)}, "float64"),
        ({"temperature": np.array([[1.0]])}, "1-D"),
    ],
)
def test_temperature_from_arrays_refuses_inconsistent_arrays(arrays, message):
    with pytest.raises(ValueError, match=message):
        TemperatureScaling.from_arrays(arrays)


GOOD_ISO = {
    "x": np.array([0.1, 0.5, 0.2, 0.9]),
    "y": np.array([0.0, 0.4, 0.1, 1.0]),
    "offsets": np.array([0.0, 2.0, 4.0]),
}


def _iso(**changes):
    out = {k: v.copy() for k, v in GOOD_ISO.items()}
    out.update(changes)
    return out


@pytest.mark.parametrize(
    "arrays, message",
    [
        (_iso(y=np.array([0.0, 0.4, 0.1])), "4 x values but 3 y values"),
        (_iso(offsets=np.array([0.0, 4.0])), "at least 2"),
        (_iso(offsets=np.array([1.0, 2.0, 4.0])), "starting at 0"),
        (_iso(offsets=np.array([0.0, 1.5, 4.0])), "whole numbers"),
        (_iso(offsets=np.array([0.0, 2.0, 2.0, 4.0])), "increase strictly"),
        (_iso(offsets=np.array([0.0, 2.0, 5.0])), "end at the number of breakpoints"),
        (_iso(offsets=np.array([0.0, 3.0, 1.0, 4.0])), "increase strictly"),
        (_iso(x=np.array([0.5, 0.1, 0.2, 0.9])), "class 0 is not non-decreasing"),
        (_iso(y=np.array([0.0, 0.4, 0.3, 0.1])), "class 1 is not non-decreasing"),
        (_iso(y=np.array([0.0, 1.4, 0.1, 1.0])), r"in \[0, 1\]"),
        (_iso(x=np.array([0.1, np.inf, 0.2, 0.9])), "NaN or infinity"),
        (_iso(offsets=np.array([0, 2, 4])), "float64"),
        ({"x": GOOD_ISO["x"], "y": GOOD_ISO["y"]}, "missing"),
        ([1.0, 2.0], "mapping"),
    ],
)
def test_isotonic_from_arrays_refuses_inconsistent_arrays(arrays, message):
    assert IsotonicCalibration.from_arrays(GOOD_ISO).n_classes_ == 2
    with pytest.raises(ValueError, match=message):
        IsotonicCalibration.from_arrays(arrays)


# -- properties --------------------------------------------------------------------
# Log posteriors on a grid of 1/16 nats: distinct values stay distinct after
# division by any tested temperature, so a changed argmax would be a real bug.
log_proba_grid = st.integers(2, 30).flatmap(
    lambda n: st.integers(2, 6).flatmap(
        lambda k: st.tuples(
            hnp.arrays(np.int64, (n, k), elements=st.integers(-1024, 0)),
            hnp.arrays(np.int64, (n,), elements=st.integers(0, k - 1)),
        )
    )
)


@settings(max_examples=60, deadline=None)
@given(data=log_proba_grid, temperature=st.floats(0.05, 50.0))
def test_temperature_transform_is_normalised_and_keeps_argmax(data, temperature):
    ticks, y = data
    lp = ticks / 16.0
    for ts in (
        TemperatureScaling.from_arrays({"temperature": np.array([temperature])}),
        TemperatureScaling().fit(lp, y),
    ):
        out = ts.transform(lp)
        assert np.allclose(np.exp(out).sum(axis=1), 1.0, rtol=0, atol=1e-12)
        assert np.array_equal(out.argmax(axis=1), lp.argmax(axis=1))
        assert ts.temperature_ > 0


@settings(max_examples=60, deadline=None)
@given(data=log_proba_grid)
def test_isotonic_transform_is_a_distribution(data):
    ticks, y = data
    lp = ticks / 16.0
    iso = IsotonicCalibration().fit(lp, y)
    q = np.exp(iso.transform(lp))
    # The floor 1 / (n + 2) keeps every class possible, on the rows of the
    # fit and anywhere else: after renormalising over k classes each is at
    # least floor / (1 + (k - 1)) and at most 1 - (k - 1) floor / k.
    k = lp.shape[1]
    floor = 1 / (len(y) + 2)
    assert np.all((q >= floor / k * (1 - 1e-12)) & (q <= 1 - (k - 1) * floor / k * (1 - 1e-12)))
    assert np.allclose(q.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    elsewhere = np.exp(iso.transform(lp[::-1, ::-1]))
    assert elsewhere.min() > 0 and elsewhere.max() < 1


# -- reliability diagram -----------------------------------------------------------
def _bins(conf_acc):
    out = []
    for i, (conf, acc, count) in enumerate(conf_acc):
        out.append(
            {
                "lower": i / len(conf_acc),
                "upper": (i + 1) / len(conf_acc),
                "count": count,
                "mean_confidence": conf,
                "accuracy": acc,
            }
        )
    return out


BEFORE = _bins(
    [(None, None, 0)] * 5
    + [(0.55, 0.4, 10), (0.65, 0.5, 20), (0.75, 0.6, 30), (0.85, 0.7, 50), (0.97, 0.9, 400)]
)
AFTER = _bins(
    [(None, None, 0)] * 4
    + [
        (0.45, 0.4, 5),
        (0.55, 0.5, 15),
        (0.65, 0.6, 25),
        (0.75, 0.7, 40),
        (0.85, 0.85, 100),
        (0.95, 0.94, 325),
    ]
)


def test_reliability_diagram_png_and_svg(tmp_path):
    pytest.importorskip("matplotlib")  # an optional extra; the test extra installs it
    from nbcli.render.plot import plot_reliability

    png = tmp_path / "reliability.png"
    plot_reliability(BEFORE, AFTER, png)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    svg = tmp_path / "reliability.svg"
    plot_reliability(BEFORE, None, str(svg))
    assert "<svg" in svg.read_text()
    # Nothing left behind from the atomic write.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["reliability.png", "reliability.svg"]


def test_reliability_diagram_refuses_unknown_extension(tmp_path):
    from nbcli.render.plot import plot_reliability

    with pytest.raises(NbcliError, match=r"\.gif"):
        plot_reliability(BEFORE, None, tmp_path / "r.gif")
    assert list(tmp_path.iterdir()) == []


def test_reliability_diagram_without_matplotlib(tmp_path, monkeypatch):
    from nbcli.render.plot import plot_reliability

    # None in sys.modules makes every import of matplotlib, or of a submodule
    # already loaded by another test, raise ImportError.
    for name in [m for m in sys.modules if m == "matplotlib" or m.startswith("matplotlib.")]:
        monkeypatch.setitem(sys.modules, name, None)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(NbcliError, match=r"pip install 'nbcli\[plot\]'"):
        plot_reliability(BEFORE, None, tmp_path / "r.png")
