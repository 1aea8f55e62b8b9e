"""Platt (sigmoid) scaling against scikit-learn, cross-fitting, and calibrate's verdict.

The verdict test at the end is the end-to-end check: on the sample tables
and two public data sets, a calibrator is written only when its cross-fitted
log-loss beats the model's beyond the paired interval, and no written one is
worse on the untouched test split beyond the same kind of interval.
"""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from nbcli.calibration import (
    CALIBRATORS,
    SigmoidCalibration,
    cross_fit,
    fit_sigmoid,
    log_odds,
    platt_targets,
)
from nbcli.models import log_normalise
from nbcli.reports.metrics import brier_per_row, log_loss_per_row
from nbcli.reports.reliability import accepts, normal_interval, paired_differences
from nbcli.resampling import stratified_folds
from tests.conftest import SAMPLE, nbcli_in_process
from tests.fixtures import overconfident_scores as _scores


def _platt_loss_parts(f, t, a, b):
    """Mean cross-entropy gradient and Hessian of Platt's loss in (A, B) at ``f``."""
    u = a * f + b
    q = 1.0 / (1.0 + np.exp(u))
    r = t - q
    w = q * (1 - q)
    grad = np.array([np.mean(r * f), np.mean(r)])
    hess = np.array([[np.mean(w * f * f), np.mean(w * f)], [np.mean(w * f), np.mean(w)]])
    return grad, hess


# -- Platt scaling ------------------------------------------------------------------
@pytest.mark.parametrize("n, k, seed", [(200, 2, 0), (150, 3, 1), (400, 5, 2), (60, 2, 3)])
def test_sigmoids_match_scikit_learn_to_its_optimiser_tolerance(n, k, seed):
    from sklearn.calibration import _sigmoid_calibration

    z, y = _scores(n, k, seed)
    cal = SigmoidCalibration().fit(z, y)
    f = log_odds(z)
    columns = [1] if k == 2 else range(k)
    assert cal.a_.shape == (len(columns),)
    for j, c in enumerate(columns):
        hit = (y == c).astype(float)
        a_sk, b_sk = _sigmoid_calibration(f[:, c], hit)
        # Compare on the scale both optimise on (f / max |f|). scikit-learn's
        # L-BFGS-B stops with a gradient g of the summed loss that is not 0;
        # for a strictly convex loss with Hessian H near the optimum, its
        # distance from the exact minimiser is about |H^-1 g| <= |g| /
        # lambda_min(H). Twice that, plus rounding, bounds the difference.
        scale = np.max(np.abs(f[:, c]))
        g = f[:, c] / scale
        t = platt_targets(hit.astype(bool))
        grad, _ = _platt_loss_parts(g, t, a_sk * scale, b_sk)
        _, hess = _platt_loss_parts(g, t, cal.a_[j] * scale, cal.b_[j])
        bound = 2 * np.linalg.norm(grad) / np.linalg.eigvalsh(hess)[0] + 1e-9
        ours = np.array([cal.a_[j] * scale, cal.b_[j]])
        assert np.linalg.norm(ours - [a_sk * scale, b_sk]) <= bound
        # Ours is the exact minimiser: its own gradient is at rounding level.
        own, _ = _platt_loss_parts(g, t, *ours)
        assert np.linalg.norm(own) < 1e-10


def test_sigmoid_calibration_is_calibrated_classifier_cv_on_the_log_odds():
    sklearn_frozen = pytest.importorskip("sklearn.frozen")
    from sklearn.base import BaseEstimator, ClassifierMixin
    from sklearn.calibration import CalibratedClassifierCV

    class Scores(ClassifierMixin, BaseEstimator):
        """Rows are indices into fixed log posteriors; the decision function is their log-odds."""

        def __init__(self, z=None):
            self.z = z

        def fit(self, X, y):
            self.classes_ = np.arange(self.z.shape[1])
            return self

        def predict(self, X):
            return np.argmax(self.z[X[:, 0].astype(int)], axis=1)

        def decision_function(self, X):
            f = log_odds(self.z[X[:, 0].astype(int)])
            return f[:, 1] if f.shape[1] == 2 else f

    for k, seed in ((2, 4), (4, 5)):
        z, y = _scores(300, k, seed)
        X = np.arange(len(y))[:, None].astype(float)
        est = Scores(z).fit(X, y)
        sk = CalibratedClassifierCV(sklearn_frozen.FrozenEstimator(est), method="sigmoid")
        p_sk = sk.fit(X, y).predict_proba(X)
        ours = np.exp(SigmoidCalibration().fit(z, y).transform(z))
        # Each sigmoid's parameters differ by at most the optimiser bound of
        # the test above (about 1e-6 relative here); a sigmoid's slope is at
        # most 1/4, so its value moves by at most (|dA| max|f| + |dB|) / 4,
        # and renormalising over k classes at most multiplies that by 2k.
        assert np.max(np.abs(ours - p_sk)) < 2 * k * 1e-5


def test_sigmoid_transform_is_a_distribution_in_log_space():
    z, y = _scores(120, 3, 6, sharpness=40.0)  # posteriors within 1e-30 of 0 and 1
    cal = SigmoidCalibration().fit(z, y)
    out = cal.transform(z)
    assert np.all(np.isfinite(out))
    assert np.allclose(np.logaddexp.reduce(out, axis=1), 0.0, atol=1e-12)
    # Binary: q and 1 - q from one sigmoid, both exact in log space.
    z2, y2 = _scores(80, 2, 7, sharpness=40.0)
    out2 = SigmoidCalibration().fit(z2, y2).transform(z2)
    assert np.allclose(np.logaddexp(out2[:, 0], out2[:, 1]), 0.0, atol=1e-12)


def test_sigmoid_fit_does_not_depend_on_its_start():
    z, y = _scores(400, 4, 9)
    cal = SigmoidCalibration().fit(z, y)
    far = SigmoidCalibration.from_arrays({"a": np.full(4, 3.0), "b": np.full(4, -5.0)})
    for init in (cal, far):
        again = SigmoidCalibration().fit(z, y, init=init)
        # Both searches end where the gradient is at rounding level; the
        # Hessian's smallest eigenvalue here is above 1e-3, so the two
        # minimisers agree to about 1e-12.
        assert np.allclose(again.a_, cal.a_, rtol=1e-9, atol=1e-12)
        assert np.allclose(again.b_, cal.b_, rtol=1e-9, atol=1e-12)


def test_sigmoid_round_trip_and_refusals():
    z, y = _scores(100, 3, 8)
    cal = SigmoidCalibration().fit(z, y)
    again = SigmoidCalibration.from_arrays(cal.to_arrays())
    assert np.array_equal(again.transform(z), cal.transform(z)) and again.n_classes_ == 3
    assert CALIBRATORS["sigmoid"] is SigmoidCalibration
    with pytest.raises(ValueError, match="one \\(a, b\\) pair"):
        SigmoidCalibration.from_arrays({"a": np.ones(2), "b": np.ones(2)})
    with pytest.raises(ValueError, match="expects arrays"):
        SigmoidCalibration.from_arrays({"a": np.ones(1)})
    with pytest.raises(ValueError, match="3 class columns"):
        SigmoidCalibration.from_arrays({"a": -np.ones(1), "b": np.zeros(1)}).transform(z)


def test_constant_scores_give_the_mean_target():
    f = np.full(10, 2.0)
    hit = np.array([True] * 3 + [False] * 7)
    a, b = fit_sigmoid(f, platt_targets(hit))
    t = platt_targets(hit).mean()
    assert a == 0.0 and 1 / (1 + np.exp(b)) == pytest.approx(t, rel=1e-12)


def test_log_odds_keep_their_precision_near_one():
    p = np.array([[1 - 1e-12, 1e-12 / 3, 2e-12 / 3], [0.5, 0.25, 0.25], [1.0, 0.0, 0.0]])
    with np.errstate(divide="ignore"):
        f = log_odds(np.log(p))
    assert f[0, 0] == pytest.approx(np.log((1 - 1e-12) / 1e-12), rel=1e-9)
    assert f[1] == pytest.approx([0.0, np.log(1 / 3), np.log(1 / 3)], abs=1e-15)
    # Probabilities 1 and 0: the limits, not clipped.
    assert f[2, 0] == np.inf and f[2, 1] == -np.inf


def test_log_odds_are_each_class_against_the_log_sum_of_the_others():
    from scipy.special import logsumexp

    rng = np.random.default_rng(11)
    z = rng.normal(scale=30.0, size=(500, 5))
    z[:50] *= 100.0  # gaps of thousands of nats: exp underflows
    z[50:60, 2] = -np.inf
    z[60:70, 1] = z[60:70, 3]  # tied top classes
    f = log_odds(z + rng.normal(size=(500, 1)))  # a row shift changes nothing
    for k in range(5):
        others = np.delete(z, k, axis=1)
        expected = z[:, k] - logsumexp(others, axis=1)
        finite = np.isfinite(expected)
        # Both are a few roundings of values up to thousands of nats.
        assert np.allclose(f[finite, k], expected[finite], rtol=1e-12, atol=1e-10)
        assert np.array_equal(f[~finite, k], expected[~finite])


def _platt_nll(f, t, a, b):
    """Platt's summed cross-entropy at (a, b), stable for any finite f."""
    u = a * f + b
    return float(np.sum(t * np.logaddexp(0.0, u) + (1 - t) * np.logaddexp(0.0, -u)))


def test_sigmoid_fit_is_platts_optimum_for_log_odds_in_the_thousands():
    from sklearn.calibration import _sigmoid_calibration

    rng = np.random.default_rng(7)
    n = 120
    hit = rng.random(n) < 0.6
    # Moderate scores that overlap between the classes, and a few rows with
    # log-odds in the thousands of both signs (log posteriors far below -708).
    f = np.where(hit, 1.0, -1.0) * 2.0 + rng.normal(scale=3.0, size=n)
    f[:4] = [-2289.0, -1500.0, 1200.0, 3000.0]
    z = np.column_stack([np.zeros(n), f])  # log posteriors up to a row constant
    cal = SigmoidCalibration().fit(z, hit.astype(int))
    assert np.allclose(log_odds(log_normalise(z))[:, 1], f, rtol=1e-12, atol=1e-12)
    a_sk, b_sk = _sigmoid_calibration(f, hit.astype(float))
    # The bound of test_sigmoids_match_scikit_learn_to_its_optimiser_tolerance.
    scale = np.max(np.abs(f))
    g = f / scale
    t = platt_targets(hit)
    grad, _ = _platt_loss_parts(g, t, a_sk * scale, b_sk)
    _, hess = _platt_loss_parts(g, t, cal.a_[0] * scale, cal.b_[0])
    bound = 2 * np.linalg.norm(grad) / np.linalg.eigvalsh(hess)[0] + 1e-9
    ours = np.array([cal.a_[0] * scale, cal.b_[0]])
    assert np.linalg.norm(ours - [a_sk * scale, b_sk]) <= bound
    # A fit on scores clipped at +-708 is farther away than that bound.
    fc = np.clip(f, -708.4, 708.4)
    clipped = fit_sigmoid(fc, t)
    assert np.linalg.norm(np.array([clipped[0] * scale, clipped[1]]) - ours) > bound
    nll_ours = _platt_nll(f, t, cal.a_[0], cal.b_[0])
    nll_sk = _platt_nll(f, t, a_sk, b_sk)
    assert nll_ours <= nll_sk + 1e-12 * abs(nll_sk)
    # Applying it to the extreme rows: finite log posteriors, summing to 1.
    out = cal.transform(z)
    assert np.all(np.isfinite(out)) and np.allclose(np.logaddexp(*out.T), 0.0, atol=1e-12)


def test_infinite_log_odds_are_fitted_at_the_extreme_and_applied_as_the_limit():
    rng = np.random.default_rng(8)
    n = 80
    hit = rng.random(n) < 0.5
    f = np.where(hit, 1.0, -1.0) + rng.normal(scale=2.0, size=n)
    f[0] = -1000.0
    with np.errstate(divide="ignore"):
        z = np.column_stack([np.zeros(n), f])
        z[1] = [0.0, -np.inf]  # probability 0 of the second class
        z[2] = [-np.inf, 0.0]  # probability 1
    cal = SigmoidCalibration().fit(z, hit.astype(int))
    expected = f.copy()
    expected[1], expected[2] = -1000.0, 1000.0  # the column's most extreme finite score
    a, b = fit_sigmoid(expected, platt_targets(hit))
    assert cal.a_[0] == pytest.approx(a, rel=1e-9) and cal.b_[0] == pytest.approx(b, rel=1e-9)
    assert cal.a_[0] < 0
    with np.errstate(divide="ignore"):
        out = cal.transform(z)
    assert out[1, 1] == -np.inf and out[1, 0] == 0.0
    assert out[2, 0] == -np.inf and out[2, 1] == 0.0


# -- cross-fitting ------------------------------------------------------------------
@pytest.mark.parametrize("started", [False, True])
@pytest.mark.parametrize("kind", sorted(CALIBRATORS))
def test_each_fold_is_calibrated_by_a_calibrator_that_never_saw_it(kind, started):
    z, y = _scores(90, 3, 9)
    folds = stratified_folds(y, 5, seed=0)
    # A search started from the fit on every row ends where one from the
    # default start does.
    init = CALIBRATORS[kind]().fit(z, y) if started else None
    out = cross_fit(kind, z, y, folds, init=init)
    for f in range(5):
        held = folds == f
        alone = CALIBRATORS[kind]().fit(z[~held], y[~held]).transform(z[held])
        if started or kind == "temperature":
            # A search from another start stops at another point within its
            # precision (1e-13 relative in each parameter), and temperature's
            # out-of-fold search sums the training rows before and after the
            # fold, in another order than a fit on them gathered: the same
            # log posteriors to about 1e-13 times their size.
            np.testing.assert_allclose(out[held], alone, rtol=1e-12, atol=1e-12)
        else:
            assert np.array_equal(out[held], alone)
    # ... and differs from the in-sample fit (which saw every row).
    assert not np.allclose(out, CALIBRATORS[kind]().fit(z, y).transform(z))


@pytest.mark.parametrize("kind", sorted(CALIBRATORS))
def test_fold_labels_are_names_not_positions(kind):
    z, y = _scores(90, 3, 11)
    folds = stratified_folds(y, 5, seed=2)
    # The same folds under other labels, in another order of the labels.
    renamed = np.array([40, 7, 13, 2, 29])[folds]
    assert np.array_equal(cross_fit(kind, z, y, renamed), cross_fit(kind, z, y, folds))
    with pytest.raises(ValueError):
        cross_fit(kind, z, y, folds[:-1])


def test_isotonic_cross_fitted_probabilities_are_never_0_or_1():
    # Few rows per class: held-out rows often fall where a map saw no hit.
    z, y = _scores(40, 4, 10, sharpness=8.0)
    p = np.exp(cross_fit("isotonic", z, y, stratified_folds(y, 5, seed=1)))
    assert p.min() > 0 and p.max() < 1
    # The floor bounds a row's log-loss by about log(n + 2) plus the log of its mapped total.
    assert log_loss_per_row(p, y).max() < np.log(32 + 2) + np.log(4)


# -- the rule -----------------------------------------------------------------------
def test_normal_interval_is_the_central_limit_one():
    v = np.array([-0.3, 0.1, -0.2, -0.4, 0.0, -0.1])
    iv = normal_interval(v, 0.95)
    half = 1.959963984540054 * v.std(ddof=1) / np.sqrt(v.size)
    assert iv.value == pytest.approx(v.mean()) and iv.method == "normal"
    assert iv.lower == pytest.approx(v.mean() - half, rel=1e-12)
    assert iv.upper == pytest.approx(v.mean() + half, rel=1e-12)


def test_noise_is_not_a_verdict():
    rng = np.random.default_rng(11)
    before = {"log_loss": rng.exponential(0.3, 300), "brier": rng.random(300) * 0.2}
    # The same losses plus a change of no mean: never accepted, whatever the resamples.
    noisy = {k: v + rng.normal(0, 0.05, v.size) - 0.0 for k, v in before.items()}
    for n in (0, 1000):
        d = paired_differences(before, noisy, n_resamples=n, confidence=0.95, seed=0)
        assert d["log_loss"].lower < 0 < d["log_loss"].upper and not accepts(d)
    # A calibrator that changes nothing: differences of exactly 0, no spread.
    d = paired_differences(before, before, n_resamples=1000, confidence=0.95, seed=0)
    assert d["log_loss"].upper == 0 and not accepts(d)
    # A real improvement of the log-loss is accepted; with a Brier score
    # worse beyond its interval it is not.
    better = {"log_loss": before["log_loss"] - 0.1, "brier": before["brier"]}
    assert accepts(paired_differences(before, better, n_resamples=1000, confidence=0.95, seed=0))
    worse = {"log_loss": before["log_loss"] - 0.1, "brier": before["brier"] + 0.05}
    assert not accepts(paired_differences(before, worse, n_resamples=0, confidence=0.95, seed=0))


def _fit(tmp_path, name, train, *extra):
    model = tmp_path / f"{name}.npz"
    run = nbcli_in_process("fit", "-d", train, "-o", model, "-q", *extra)
    assert run.returncode == 0, run.stderr
    return model


def _calibrate(model, data, *extra):
    run = nbcli_in_process("calibrate", "-m", model, "-d", data, "--json", "-", "-q", *extra)
    return run, (json.loads(run.stdout) if run.stdout.strip() else None)


def test_the_verdict_does_not_depend_on_the_bins(tmp_path):
    model = _fit(tmp_path, "bc", SAMPLE / "breast_cancer_train.csv", "-m", "gaussian")
    verdicts = []
    for bins in (["--bins", "5"], ["--bins", "20", "--strategy", "quantile"]):
        run, doc = _calibrate(
            model, SAMPLE / "breast_cancer_calib.csv", "--bootstrap", "200", *bins
        )
        assert run.returncode == 0, run.stderr
        v = doc["verdict"]
        verdicts.append(
            (v["chosen"], [(c["method"], c["differences"], c["accepted"]) for c in v["candidates"]])
        )
    assert verdicts[0] == verdicts[1]


def test_folds_fewer_rows_than_folds_and_the_schema(tmp_path):
    model = _fit(tmp_path, "bc", SAMPLE / "breast_cancer_train.csv", "-m", "gaussian")
    run, doc = _calibrate(
        model, SAMPLE / "breast_cancer_calib.csv", "--bootstrap", "0", "--folds", "3"
    )
    assert run.returncode == 0, run.stderr
    assert doc["schema"] == "nbcli.recalibration" and doc["schema_version"] == 2
    v = doc["verdict"]
    assert v["folds"] == 3 and v["interval_method"] == "normal"
    assert [c["method"] for c in v["candidates"]] == ["temperature", "sigmoid", "isotonic"]
    # The calibrator reported (and written with --allow-worse) is the chosen
    # one, or the lowest cross-fitted log-loss when none passes the rule.
    best = min(v["candidates"], key=lambda c: c["log_loss"])["method"]
    assert doc["calibrator"]["method"] == (v["chosen"] or best)
    assert doc["calibrator"]["folds"] == 3
    # "after" is the cross-fitted posteriors of that method.
    chosen = next(c for c in v["candidates"] if c["method"] == doc["calibrator"]["method"])
    assert doc["after"]["metrics"]["log_loss"]["value"] == pytest.approx(
        chosen["log_loss"], rel=1e-12
    )
    assert doc["before"]["metrics"]["log_loss"]["value"] == pytest.approx(
        v["before"]["log_loss"], rel=1e-12
    )
    rows = "a,b,label\n1.5,2,x\n2,2.5,y\n6,6,y\n3,5,x\n"
    (tmp_path / "small.csv").write_text("a,b,label\n" + "".join(
        f"{i % 5},{(i * 7) % 9},{'xy'[i % 2]}\n" for i in range(30)))  # fmt: skip
    (tmp_path / "four.csv").write_text(rows)
    small = _fit(tmp_path, "s", tmp_path / "small.csv", "-m", "gaussian")
    run, doc = _calibrate(
        small, tmp_path / "four.csv", "--bootstrap", "0", "--method", "temperature"
    )
    assert "--folds 5: only 4 rows with labels the model knows" in run.stderr
    assert "cross-fitting with 4 folds" in run.stderr and doc["verdict"]["folds"] == 4
    run = nbcli_in_process("calibrate", "-m", small, "-d", tmp_path / "four.csv", "--folds", "1")
    assert run.returncode == 2 and "--folds" in run.stderr


def _probabilities(tmp_path, model, test, target):
    out = tmp_path / "p.csv"
    run = nbcli_in_process(
        "predict", "-m", model, "-d", test, "--proba", "-o", out, "-q", "--force"
    )
    assert run.returncode == 0, run.stderr
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    columns = [c for c in rows[0] if c.startswith("proba_")]
    labels = [c[len("proba_") :] for c in columns]
    with open(test, newline="") as f:
        truth = [r[target] for r in csv.DictReader(f)]
    p = np.array([[float(r[c]) for c in columns] for r in rows])
    return p, np.array([labels.index(t) for t in truth])


def _public_sets(tmp_path):
    """(name, train, calib, test, target, models) of two public data sets split by nbcli split."""
    from sklearn.datasets import load_breast_cancer

    frame = load_breast_cancer(as_frame=True).frame
    frame.to_csv(tmp_path / "cancer.csv", index=False)
    out = []
    for name, source, target, models in (
        ("cancer", tmp_path / "cancer.csv", "target", ["gaussian"]),
        ("penguins", SAMPLE / "penguins.csv", "species", ["mixed"]),
    ):
        run = nbcli_in_process("split", "-d", source, "--test", "0.3", "--calib", "0.3",
                               "-t", target, "--seed", "1", "--output-dir", tmp_path, "-q")  # fmt: skip
        assert run.returncode == 0, run.stderr
        stem = source.stem
        parts = [tmp_path / f"{stem}.{p}.csv" for p in ("train", "calib", "test")]
        out.append((name, *parts, target, models))
    return out


def test_calibrators_are_written_only_when_they_beat_the_model_on_unseen_rows(tmp_path):
    sets = [
        (
            n,
            SAMPLE / f"{n}_train.csv",
            SAMPLE / f"{n}_calib.csv",
            SAMPLE / f"{n}_test.csv",
            "label",
            ["gaussian", "lda"] if n == "digits" else ["gaussian"],
        )  # fmt: skip
        for n in ("iris", "wine", "breast_cancer", "digits")
    ] + _public_sets(tmp_path)
    written = refused = 0
    for name, train, calib, test, target, models in sets:
        for model_type in models:
            model = _fit(tmp_path, f"{name}-{model_type}", train, "-m", model_type, "-t", target)
            p0, y = _probabilities(tmp_path, model, test, target)
            for method in ("auto", "temperature", "sigmoid", "isotonic"):
                out = tmp_path / f"{name}-{method}.npz"
                run, doc = _calibrate(model, calib, "-t", target, "--method", method, "-o", out,
                                      "--seed", "0")  # fmt: skip
                what = (name, model_type, method)
                if not out.exists() and run.returncode == 2:
                    # A temperature fitted on rows without an error runs to 0.
                    assert method == "temperature" and "has no errors" in run.stderr, what
                    refused += 1
                    continue
                verdict = doc["verdict"]
                chosen = next(
                    (c for c in verdict["candidates"] if c["method"] == verdict["chosen"]), None
                )
                if not out.exists():
                    # Refused: exit 3, and no candidate passes the rule.
                    assert run.returncode == 3 and verdict["chosen"] is None, (what, run.stderr)
                    assert not any(c["accepted"] for c in verdict["candidates"]), what
                    refused += 1
                    continue
                assert run.returncode == 0, (what, run.stderr)
                # Written only when the cross-fitted log-loss is lower beyond its margin.
                assert chosen is not None and chosen["differences"]["log_loss"]["upper"] < 0, what
                if method != "auto":
                    assert verdict["chosen"] == method
                # ... and not worse on the untouched split beyond the same margin.
                p1, _ = _probabilities(tmp_path, out, test, target)
                d = paired_differences(
                    {"log_loss": log_loss_per_row(p0, y), "brier": brier_per_row(p0, y)},
                    {"log_loss": log_loss_per_row(p1, y), "brier": brier_per_row(p1, y)},
                    n_resamples=1000,
                    confidence=0.95,
                    seed=0,
                )
                assert not d["log_loss"].lower > 0, (what, d)
                assert not d["brier"].lower > 0, (what, d)
                written += 1
                out.unlink()
    # Both outcomes occur, so the test can fail either way.
    assert written >= 4 and refused >= 4


def test_a_sigmoid_calibrated_model_file_is_read_back_and_shown(tmp_path):
    from nbcli.io.modelfile import load_model

    model = _fit(tmp_path, "bc", SAMPLE / "breast_cancer_train.csv", "-m", "gaussian")
    out = tmp_path / "sig.npz"
    run = nbcli_in_process("calibrate", "-m", model, "-d", SAMPLE / "breast_cancer_calib.csv",
                           "--method", "sigmoid", "-o", out, "--bootstrap", "200")  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "Cross-fitted on 5 folds" in run.stdout and "Chosen: sigmoid." in run.stdout
    cal = load_model(out).calibrator
    assert cal.kind == "sigmoid" and cal.a_.shape == (1,) and cal.a_[0] < 0
    shown = nbcli_in_process("inspect", out)
    assert shown.returncode == 0, shown.stderr
    assert f"sigmoid (A = {cal.a_[0]:.4g}, B = {cal.b_[0]:.4g})" in shown.stdout
    # predict applies it: its probabilities are the calibrator's transform.
    p, _ = _probabilities(tmp_path, out, SAMPLE / "breast_cancer_test.csv", "label")
    assert np.allclose(p.sum(axis=1), 1.0, atol=1e-12) and p.min() > 0


@pytest.fixture(scope="module")
def wine_gaussian(tmp_path_factory):
    """Gaussian NB on half of wine (nearly always right on the other half, so
    that no calibrator improves it), and the other half, with a copy whose
    first rows carry a label the model never saw."""
    from sklearn.datasets import load_wine

    root = tmp_path_factory.mktemp("wine")
    X, y = load_wine(return_X_y=True)
    order = np.random.default_rng(3).permutation(len(y))
    header = ",".join(f"f{j}" for j in range(X.shape[1])) + ",label\n"

    def write(path, idx, labels):
        rows = (",".join(f"{v:.17g}" for v in X[i]) + f",{c}\n" for i, c in zip(idx, labels))
        path.write_text(header + "".join(rows))

    train, calib = order[:89], order[89:]
    write(root / "train.csv", train, y[train])
    write(root / "calib.csv", calib, y[calib])
    write(root / "unseen.csv", calib, [9] * 4 + list(y[calib][4:]))
    model = root / "m.npz"
    run = nbcli_in_process("fit", "-m", "gaussian", "-d", root / "train.csv", "-o", model, "-q")
    assert run.returncode == 0, run.stderr
    return root, model


def test_a_gate_judges_the_model_as_it_stands_when_no_calibrator_is_taken(wine_gaussian):
    # The refused candidate's figures are no model anyone will use: a gate on
    # them failed a good model because of a calibrator nbcli refused.
    root, model = wine_gaussian
    data = root / "calib.csv"
    plain = nbcli_in_process("calibrate", "-m", model, "-d", data, "--json", "-", "-q")
    doc = json.loads(plain.stdout)
    assert doc["verdict"]["chosen"] is None
    before, after = doc["before"]["metrics"]["log_loss"], doc["after"]["metrics"]["log_loss"]
    assert before["value"] < after["value"]
    gate = f"log_loss={(before['value'] + after['value']) / 2!r}"
    run = nbcli_in_process("calibrate", "-m", model, "-d", data, "--fail-over", gate,
                           "--json", "-", "-q")  # fmt: skip
    [checked] = json.loads(run.stdout)["thresholds"]
    assert checked["value"] == before["value"] and checked["passed"] is True
    assert run.returncode == 0, run.stderr
    # Written anyway (--allow-worse), the calibrator is what the gate judges.
    forced = nbcli_in_process("calibrate", "-m", model, "-d", data, "--allow-worse",
                              "--fail-over", gate, "--json", "-", "-q")  # fmt: skip
    assert json.loads(forced.stdout)["thresholds"][0]["value"] == after["value"]
    assert forced.returncode == 3


def test_a_calibration_gate_fails_while_rows_of_unseen_labels_are_left_out(wine_gaussian):
    root, model = wine_gaussian
    run = nbcli_in_process("calibrate", "-m", model, "-d", root / "unseen.csv",
                           "--method", "none", "--fail-under", "accuracy=0.1",
                           "--fail-over", "log_loss=100")  # fmt: skip
    assert run.returncode == 3, run.stderr
    errors = [ln for ln in run.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 2 and all("leaves out the 4 rows" in e for e in errors), errors
