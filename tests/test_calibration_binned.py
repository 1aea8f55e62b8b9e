"""The verdict's fold fits on binned scores (large calibration sets) against
the fits on the rows, and what stays exact: small sets and the written calibrator."""

from __future__ import annotations

import numpy as np
import pytest

import nbcli.workflows.calibrate as calibrate_workflow
from nbcli.calibration import (
    BINNED,
    IsotonicCalibration,
    SigmoidCalibration,
    _bin_index,
    _finite_scores,
    _fold_positions,
    _FoldBins,
    binned_cross_fit,
    isotonic_floor,
    log_odds,
    platt_targets,
)
from nbcli.io.request import DataRequest
from nbcli.reports.metrics import log_loss_per_row
from nbcli.resampling import stratified_folds
from nbcli.workflows.calibrate import calibrate, known_rows
from nbcli.workflows.settings import ScoreSettings
from tests.conftest import SAMPLE, nbcli_in_process
from tests.fixtures import overconfident_scores as _scores


def _platt_hessian(f, t, a, b):
    """Hessian in (A, B) of the mean Platt cross-entropy at ``(a, b)``."""
    q = 1.0 / (1.0 + np.exp(a * f + b))
    w = q * (1 - q)
    return np.array([[np.mean(w * f * f), np.mean(w * f)], [np.mean(w * f), np.mean(w)]])


def _mean_within_bin_variance(f, key):
    """Mean over rows of the squared distance of each score from its bin's mean."""
    count = np.bincount(key)
    mean = np.bincount(key, weights=f)[key] / count[key]
    return float(np.mean((f - mean) ** 2))


@pytest.mark.parametrize("bins", [64, 4096])
def test_binned_fold_sigmoids_are_within_the_bin_width_bound_of_the_exact_fold_fits(bins):
    n, k = 20_000, 4
    z, y = _scores(n, k, 5)
    plan = stratified_folds(y, 5, seed=0)
    out, binned = binned_cross_fit("sigmoid", z, y, plan, bins=bins, full=True)
    f_all = log_odds(z)
    exact_out = np.empty_like(z)
    bound_total = 0.0
    for i, label in enumerate(np.unique(plan)):
        held, train = plan == label, plan != label
        exact = SigmoidCalibration().fit(z[train], y[train])
        exact_out[held] = exact.transform(z[held])
        fold_bound = 0.0
        for c in range(k):
            # The bins are cut over every row's range, as the binned fit cuts them.
            key = _bin_index(_finite_scores(f_all[:, c]), bins)[train]
            f = f_all[train, c]
            a_hat = binned[i].a_[c]
            # The binned loss is below the exact one by at most A^2 / 8 times
            # the mean within-bin variance (softplus'' <= 1/4), so the binned
            # optimum's exact loss exceeds the exact optimum's by at most eps;
            # with the exact loss's curvature lambda near its optimum (halved
            # for the segment between), the parameters are within
            # sqrt(4 eps / lambda).
            eps = a_hat**2 * _mean_within_bin_variance(f, key) / 8
            t = platt_targets(y[train] == c)
            lam = np.linalg.eigvalsh(_platt_hessian(f, t, exact.a_[c], exact.b_[c]))[0]
            distance = np.hypot(binned[i].a_[c] - exact.a_[c], binned[i].b_[c] - exact.b_[c])
            radius = np.sqrt(4 * eps / lam) + 1e-9
            assert distance <= radius
            # A row's log-loss moves by at most 2 |delta u| per sigmoid
            # (|d log q / d u| <= 1, and as much through the normalisation),
            # with |delta u| <= sqrt(f^2 + 1) |delta (A, B)|.
            fold_bound += 2 * np.sqrt(np.mean(f_all[held, c] ** 2) + 1) * radius
        bound_total += fold_bound * held.mean()
    got = log_loss_per_row(np.exp(out), y).mean()
    want = log_loss_per_row(np.exp(exact_out), y).mean()
    assert abs(got - want) <= bound_total
    # With fine bins the bound is not vacuous: small against the losses it bounds.
    if bins >= 4096:
        assert bound_total < 0.1 * want, (bound_total, abs(got - want))


def test_binned_fold_isotonic_maps_give_the_exact_fold_losses_to_the_bins_share():
    n, k, bins = 20_000, 3, 1024
    z, y = _scores(n, k, 6)
    plan = stratified_folds(y, 5, seed=1)
    out = binned_cross_fit("isotonic", z, y, plan, bins=bins)
    exact_out = np.empty_like(z)
    bound = 0.0
    for label in np.unique(plan):
        held, train = plan == label, plan != label
        exact = IsotonicCalibration().fit(z[train], y[train])
        exact_out[held] = exact.transform(z[held])
        # Binning moves each step of an exact map by at most one bin: the
        # rows whose mapped value may change are those in a bin where some
        # class's exact map is not constant; each such row's log-loss lies
        # within log(n + 2) of any other (every value is in [floor, 1]).
        floor = isotonic_floor(int(train.sum()))
        p = np.exp(z)
        moved = np.zeros(n, dtype=bool)
        for c in range(k):
            key = _bin_index(_finite_scores(log_odds(z)[:, c]), bins)
            x, v = exact.breakpoints_[c]
            value = np.interp(p[:, c], x, v)
            lo = np.full(bins, np.inf)
            hi = np.full(bins, -np.inf)
            np.minimum.at(lo, key[train], value[train])
            np.maximum.at(hi, key[train], value[train])
            moved |= (hi > lo)[key]
        bound += 2 * np.log(1 / floor) * moved[held].mean() * held.mean()
    got = log_loss_per_row(np.exp(out), y).mean()
    want = log_loss_per_row(np.exp(exact_out), y).mean()
    assert abs(got - want) <= bound
    # Far below that worst case in practice: a hundredth of a percent.
    assert abs(got - want) <= 1e-3 * want


def test_fold_bins_kept_sparse_add_as_dense_per_fold_arrays_do():
    # Each fold's sums kept at its own bins only must give, to the bit, what a
    # dense (folds, bins) array gives: its column sums over the folds in fold
    # order, and each fold's complement as that total less the fold's row.
    rng = np.random.default_rng(5)
    n, bins, n_folds = 3_000, 257, 40
    key, code = rng.integers(0, bins, n), rng.integers(0, n_folds, n)
    w = rng.normal(size=n) * 10.0 ** rng.integers(-8, 8, n)
    order, _, bounds = _fold_positions(code, n_folds)
    kept = _FoldBins(key[order], bounds, bins)
    for weights in (None, w):
        dense = np.zeros((n_folds, bins))
        for i in range(n_folds):
            rows = np.flatnonzero(code == i)
            dense[i] = np.bincount(key[rows], None if weights is None else weights[rows], bins)
        sums = kept.sums(None if weights is None else weights[order])
        total = dense.sum(axis=0)
        np.testing.assert_array_equal(sums[0], total)
        for i in range(n_folds):
            np.testing.assert_array_equal(kept.complements(i, [sums])[0], total - dense[i])


def test_binned_fold_memory_grows_with_the_rows_not_with_folds_times_bins():
    import tracemalloc

    import scipy.optimize  # noqa: F401  (imported before the trace, not counted in it)

    z, y = _scores(6_000, 3, 7)
    n_folds, bins = 300, 1 << 15
    plan = stratified_folds(y, n_folds, seed=0)
    for kind in BINNED:
        tracemalloc.start()
        binned_cross_fit(kind, z, y, plan, bins=bins)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        # One dense float64 array of every fold's bins is 79 MB; the rows'
        # arrays (6,000 x 3 float64: 0.14 MB each) and the folds' fitted maps
        # are a few MB.
        assert peak < n_folds * bins * 8 / 4, (kind, peak)


def test_binned_folds_refuse_what_the_exact_ones_refuse():
    z, y = _scores(50, 3, 0)
    with pytest.raises(ValueError, match="temperature"):
        binned_cross_fit("temperature", z, y, np.arange(50) % 5)
    bad = z.copy()
    bad[3, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        binned_cross_fit("sigmoid", bad, y, np.arange(50) % 5)
    with pytest.raises(ValueError, match="at least 2"):
        binned_cross_fit("isotonic", z[:3], y[:3], np.array([0, 1, 1]))


def _model(tmp_path):
    model = tmp_path / "bc.npz"
    run = nbcli_in_process(
        "fit", "-d", SAMPLE / "breast_cancer_train.csv", "-m", "gaussian", "-o", model, "-q"
    )
    assert run.returncode == 0, run.stderr
    return str(model)


def _verdict(model, method, **kw):
    data = str(SAMPLE / "breast_cancer_calib.csv")
    result = calibrate(
        model, DataRequest.of(data), ScoreSettings(bootstrap=200, seed=3), method=method, **kw
    )
    return result


def test_below_the_threshold_the_verdict_is_that_of_the_exact_route(tmp_path, monkeypatch):
    model = _model(tmp_path)
    default = _verdict(model, "auto")
    monkeypatch.setattr(calibrate_workflow, "BINNED_FROM", 10**12)
    exact = _verdict(model, "auto")
    assert default.report.verdict.to_dict() == exact.report.verdict.to_dict()
    assert default.report.calibrator == exact.report.calibrator
    assert "fold_score_bins" not in default.report.settings
    # Forced onto the binned route, the same small set gives another verdict
    # document (it says so), with losses near the exact ones.
    monkeypatch.setattr(calibrate_workflow, "BINNED_FROM", 0)
    binned = _verdict(model, "auto")
    assert binned.report.settings["fold_score_bins"] > 0
    for b, e in zip(binned.report.verdict.candidates, exact.report.verdict.candidates):
        assert b.method == e.method
        assert b.log_loss == pytest.approx(e.log_loss, rel=0.05)


@pytest.mark.parametrize("method", ["sigmoid", "isotonic"])
def test_the_written_calibrator_is_the_fit_on_every_row(tmp_path, monkeypatch, method):
    from nbcli.io.modelfile import load_model
    from nbcli.workflows.scoring import score

    model = _model(tmp_path)
    monkeypatch.setattr(calibrate_workflow, "BINNED_FROM", 0)
    result = _verdict(model, method)
    assert result.report.settings["fold_score_bins"] > 0
    data = str(SAMPLE / "breast_cancer_calib.csv")
    mf = load_model(model)
    scored = score(mf, data, read=DataRequest.of(data), missing_option=True)
    rows, y = known_rows(mf.classes, scored.y_true)
    exact = type(result.model.calibrator)().fit(scored.log_proba[rows], y)
    for name, value in exact.to_arrays().items():
        # Newton's searches from two starts end within rounding of one optimum.
        np.testing.assert_allclose(
            result.model.calibrator.to_arrays()[name], value, rtol=1e-9, atol=1e-12
        )
