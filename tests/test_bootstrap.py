"""Bootstrap intervals: BCa arithmetic against SciPy, reproducibility, fallback, coverage, speed."""

from __future__ import annotations

import math
import tracemalloc
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats

from nbcli.reports import bootstrap as bs
from nbcli.reports import means as bm
from nbcli.reports import metrics as m
from nbcli.reports.evaluation import build_evaluation


def _scipy_bca_from(replicates, data, statistic, **kwargs):
    """SciPy's BCa interval computed on a given bootstrap distribution (no new resamples)."""
    res = stats.bootstrap(
        data,
        statistic,
        n_resamples=0,
        bootstrap_result=SimpleNamespace(bootstrap_distribution=np.asarray(replicates)),
        method="BCa",
        **kwargs,
    )
    return res.confidence_interval


def _one_hot_confusion(t, p, k):
    """Confusion matrices of shape (..., k, k) from label arrays of shape (..., n)."""
    ti = (t[..., :, None] == np.arange(k)).astype(float)
    pi = (p[..., :, None] == np.arange(k)).astype(float)
    return np.einsum("...ni,...nj->...ij", ti, pi)


def _classification_sample(n, k, accuracy, rng):
    y = rng.integers(0, k, n)
    wrong = rng.uniform(size=n) > accuracy
    pred = np.where(wrong, (y + rng.integers(1, k, n)) % k, y)
    return y, pred


def test_interval_serialises_undefined_ends_as_null():
    iv = bs.no_interval(0.5)
    assert iv.method == "none"
    assert iv.to_dict() == {"value": 0.5, "lower": None, "upper": None, "method": "none"}
    d = bs.Interval(np.float64(0.8), np.float64(0.7), np.float64(0.9), "BCa").to_dict()
    assert d == {"value": 0.8, "lower": 0.7, "upper": 0.9, "method": "BCa"}
    assert all(type(d[k]) is float for k in ("value", "lower", "upper"))


def test_bca_of_a_mean_equals_scipy_on_the_same_resamples():
    x = np.random.default_rng(0).gamma(2.0, 0.3, 60)
    replicates = bm.resampled_means(x[:, None], 4000, np.random.default_rng(1))[:, 0]
    ours = bs.bca_interval(
        x.mean(), replicates, bm.jackknife_means(x[:, None])[:, 0], confidence=0.9
    )
    ref = _scipy_bca_from(replicates, (x,), np.mean, confidence_level=0.9)
    assert ours.method == "BCa"
    assert ours.lower == pytest.approx(ref.low, abs=1e-12)
    assert ours.upper == pytest.approx(ref.high, abs=1e-12)


def test_bca_of_kappa_with_cell_jackknife_equals_scipy_row_jackknife():
    rng = np.random.default_rng(5)
    y, pred = _classification_sample(60, 3, 0.7, rng)
    c = m.confusion_matrix(y, pred, 3)
    stat = {"cohen_kappa": m.cohen_kappa}
    replicates = bs.resampled_statistics(c, stat, 3000, rng)["cohen_kappa"]
    jk, weights = bs.jackknife_statistics(c, stat)
    ours = bs.bca_interval(
        float(m.cohen_kappa(c)), replicates, jk["cohen_kappa"], jackknife_weights=weights
    )

    def kappa(t, p, axis=-1):
        return m.cohen_kappa(_one_hot_confusion(t, p, 3))

    ref = _scipy_bca_from(replicates, (y, pred), kappa, paired=True, vectorized=True)
    assert ours.lower == pytest.approx(ref.low, abs=1e-12)
    assert ours.upper == pytest.approx(ref.high, abs=1e-12)


def test_jackknife_of_cells_equals_leave_one_row_out():
    rng = np.random.default_rng(8)
    y, pred = _classification_sample(25, 3, 0.6, rng)
    c = m.confusion_matrix(y, pred, 3)
    values, weights = bs.jackknife_statistics(c, m.CONFUSION_METRICS)
    assert weights.sum() == 25
    for name, f in m.CONFUSION_METRICS.items():
        rows = [
            float(f(m.confusion_matrix(np.delete(y, i), np.delete(pred, i), 3))) for i in range(25)
        ]
        expanded = np.repeat(values[name], weights.astype(int))
        np.testing.assert_allclose(np.sort(expanded), np.sort(rows), atol=1e-14, err_msg=name)


def test_jackknife_means_are_leave_one_out_means():
    x = np.random.default_rng(1).normal(size=(7, 2))
    expected = np.array([np.delete(x, i, axis=0).mean(axis=0) for i in range(7)])
    np.testing.assert_allclose(bm.jackknife_means(x), expected, atol=1e-15)


@pytest.mark.parametrize("seed", [11, 12])
def test_intervals_agree_with_scipy_resampling_within_monte_carlo_error(seed):
    rng = np.random.default_rng(seed)
    x = rng.gamma(2.0, 0.3, 60)
    ours = bm.bootstrap_means({"m": x}, n_resamples=20000, confidence=0.95, rng=rng)["m"]
    ref = stats.bootstrap(
        (x,), np.mean, n_resamples=20000, method="BCa", rng=rng
    ).confidence_interval
    assert abs(ours.lower - ref.low) < 0.01 and abs(ours.upper - ref.high) < 0.01

    # Kappa takes few distinct values on 60 rows, so that its tail quantiles jump
    # between atoms; 200 rows make it smooth enough for a 0.01 tolerance.
    y, pred = _classification_sample(200, 4, 0.7, rng)
    c = m.confusion_matrix(y, pred, 4)
    ours = bs.bootstrap_count_statistics(
        c, {"k": m.cohen_kappa}, n_resamples=10000, confidence=0.95, rng=rng
    )["k"]

    def kappa(t, p, axis=-1):
        return m.cohen_kappa(_one_hot_confusion(t, p, 4))

    ref = stats.bootstrap(
        (y, pred),
        kappa,
        paired=True,
        vectorized=True,
        n_resamples=10000,
        batch=2000,
        method="BCa",
        rng=rng,
    ).confidence_interval
    assert abs(ours.lower - ref.low) < 0.01 and abs(ours.upper - ref.high) < 0.01


def _intervals(seed):
    rng = np.random.default_rng(3)
    y, pred = _classification_sample(200, 4, 0.75, rng)
    x = rng.gamma(2.0, 0.3, 200)
    gen = np.random.default_rng(seed)
    out = bs.bootstrap_count_statistics(
        m.confusion_matrix(y, pred, 4),
        m.CONFUSION_METRICS,
        n_resamples=500,
        confidence=0.95,
        rng=gen,
    )
    out.update(bm.bootstrap_means({"loss": x}, n_resamples=500, confidence=0.95, rng=gen))
    return out


def test_same_seed_gives_identical_intervals_and_another_seed_differs():
    a, b, c = _intervals(1), _intervals(1), _intervals(2)
    assert a == b
    assert all(a[k].value == c[k].value for k in a)
    assert any((a[k].lower, a[k].upper) != (c[k].lower, c[k].upper) for k in a)
    assert a["loss"].lower != c["loss"].lower


def test_perfect_accuracy_falls_back_to_the_percentile_interval():
    c = np.diag([30, 20, 10])
    out = bs.bootstrap_count_statistics(
        c, m.CONFUSION_METRICS, n_resamples=200, confidence=0.95, rng=np.random.default_rng(0)
    )
    for name in ("accuracy", "balanced_accuracy", "macro_f1", "cohen_kappa"):
        assert out[name].method == "percentile"
        assert (out[name].value, out[name].lower, out[name].upper) == pytest.approx((1.0, 1.0, 1.0))
    assert bs.method_summary(out) == "percentile"


def test_constant_losses_fall_back_to_percentile_and_zero_resamples_give_none():
    rng = np.random.default_rng(0)
    out = bm.bootstrap_means({"brier": np.full(50, 0.1)}, n_resamples=100, confidence=0.95, rng=rng)
    assert out["brier"].method == "percentile"
    assert out["brier"].lower == pytest.approx(0.1) and out["brier"].upper == pytest.approx(0.1)
    none = bm.bootstrap_means(
        {"brier": np.arange(5.0)}, n_resamples=0, confidence=0.95, rng=np.random.default_rng(0)
    )
    assert none["brier"].method == "none" and math.isnan(none["brier"].lower)
    assert none["brier"].value == 2.0


def test_method_summary_names_the_metrics_that_fell_back():
    ivs = {
        "accuracy": bs.Interval(1, 1, 1, "percentile"),
        "log_loss": bs.Interval(0.2, 0.1, 0.3, "BCa"),
    }
    assert bs.method_summary(ivs) == "BCa (percentile for: accuracy)"
    assert bs.method_summary({"a": bs.no_interval(1.0)}) == "none"


def test_confidence_outside_the_unit_interval_is_rejected():
    with pytest.raises(ValueError, match="confidence"):
        bs.bca_interval(0.5, [0.4, 0.6], [0.5, 0.5], confidence=95)


def test_bca_accuracy_interval_covers_the_true_accuracy_about_95_percent_of_the_time():
    rng = np.random.default_rng(2024)
    covered = 0
    trials = 300
    for _ in range(trials):
        y, pred = _classification_sample(200, 3, 0.8, rng)
        iv = bs.bootstrap_count_statistics(
            m.confusion_matrix(y, pred, 3),
            {"accuracy": m.accuracy},
            n_resamples=1000,
            confidence=0.95,
            rng=rng,
        )["accuracy"]
        covered += iv.lower <= 0.8 <= iv.upper
    assert 0.91 <= covered / trials <= 0.98


def test_default_evaluation_of_10000_rows_and_10_classes_gives_bca_intervals():
    # Its time budget (1 s) is checked by benchmarks/bench_reports.py.
    rng = np.random.default_rng(0)
    n, k = 10_000, 10
    y = rng.integers(0, k, n)
    logits = rng.normal(size=(n, k))
    logits[np.arange(n), y] += 2.0
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    report = build_evaluation(np.arange(k), y, p)
    ranking = {"roc_auc", "roc_auc_weighted", "average_precision"}
    assert all(iv.method == "BCa" for name, iv in report.metrics.items() if name not in ranking)
    # 1000 resamples of 10,000 rows and 10 columns are beyond the ranking
    # bootstrap's budget: DeLong for ROC AUC, no interval for average precision.
    assert report.metrics["roc_auc"].method == "DeLong"
    assert report.metrics["roc_auc_weighted"].method == "DeLong"
    assert report.metrics["average_precision"].method == "none"
    assert report.settings["bootstrap_method"] == "BCa (DeLong for: roc_auc, roc_auc_weighted)"


# --------------------------------------------------------------------------
# Many labels: confusion-matrix metrics through per-label margins


def _many_label_sample(n, k, rng):
    """Labels over k classes with singletons: labels only true, only predicted, or seen once."""
    y, pred = _classification_sample(n, k, 0.4, rng)
    # Label 0 only ever predicted, label 1 only ever true; label 2 occurs once, right.
    y[y == 0] = 3
    pred[pred == 1] = 4
    y[y == 2], pred[pred == 2] = 5, 6
    y[0], pred[0] = 2, 2
    return y, pred


def test_margin_path_draws_the_same_resamples_as_whole_tables():
    k = 40
    y, pred = _many_label_sample(300, k, np.random.default_rng(4))
    c = m.confusion_matrix(y, pred, k)
    tables = bs.resampled_statistics(c, m.MARGIN_METRICS, 700, np.random.default_rng(9))
    margins = bs.resampled_margin_statistics(c, m.MARGIN_METRICS, 700, np.random.default_rng(9))
    for name in m.MARGIN_METRICS:
        assert np.ptp(tables[name]) > 0.05
        np.testing.assert_allclose(margins[name], tables[name], rtol=0, atol=1e-15, err_msg=name)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_margin_jackknife_equals_leaving_each_row_out(seed):
    k, n = 40, 150
    y, pred = _many_label_sample(n, k, np.random.default_rng(seed))
    c = m.confusion_matrix(y, pred, k)
    values, weights = bs.jackknife_margin_statistics(c, m.MARGIN_METRICS)
    table_values, table_weights = bs.jackknife_statistics(c, m.CONFUSION_METRICS)
    np.testing.assert_array_equal(weights, table_weights)
    assert weights.sum() == n
    for name, f in m.CONFUSION_METRICS.items():
        rows = np.array(
            [float(f(m.confusion_matrix(np.delete(y, i), np.delete(pred, i), k))) for i in range(n)]
        )
        # Cells come in row-major order, so sorting the rows by cell lines them up.
        order = np.argsort(y * k + pred, kind="stable")
        expanded = np.repeat(values[name], weights.astype(int))
        np.testing.assert_allclose(expanded, rows[order], rtol=0, atol=1e-14, err_msg=name)
        np.testing.assert_allclose(
            values[name], table_values[name], rtol=0, atol=1e-14, err_msg=name
        )


def test_bca_of_many_labels_equals_scipy_on_the_same_resamples():
    k, n = 40, 90
    y, pred = _many_label_sample(n, k, np.random.default_rng(6))
    c = m.confusion_matrix(y, pred, k)
    ours = bs.bootstrap_confusion_metrics(
        c, m.MARGIN_METRICS, n_resamples=2000, confidence=0.9, rng=np.random.default_rng(3)
    )
    # Whole tables, drawn from the same seed, give SciPy the bootstrap distribution;
    # SciPy's own row-by-row jackknife gives the acceleration.
    replicates = bs.resampled_statistics(c, m.CONFUSION_METRICS, 2000, np.random.default_rng(3))
    for name, f in m.CONFUSION_METRICS.items():

        def statistic(t, p, axis=-1, f=f):
            return f(_one_hot_confusion(t, p, k))

        ref = _scipy_bca_from(
            replicates[name],
            (y, pred),
            statistic,
            paired=True,
            vectorized=True,
            confidence_level=0.9,
        )
        assert ours[name].method == "BCa"
        assert ours[name].value == pytest.approx(float(f(c)), abs=1e-15)
        assert ours[name].lower == pytest.approx(ref.low, abs=1e-12), name
        assert ours[name].upper == pytest.approx(ref.high, abs=1e-12), name


def test_small_matrices_take_the_margin_path_with_the_whole_table_intervals():
    y, pred = _classification_sample(400, 10, 0.6, np.random.default_rng(1))
    c = m.confusion_matrix(y, pred, 10)
    settings = dict(n_resamples=300, confidence=0.95)
    new = bs.bootstrap_confusion_metrics(
        c, m.MARGIN_METRICS, **settings, rng=np.random.default_rng(2)
    )
    old = bs.bootstrap_count_statistics(
        c, m.CONFUSION_METRICS, **settings, rng=np.random.default_rng(2)
    )
    assert new.keys() == old.keys() and all(iv.method == "BCa" for iv in new.values())
    for name in new:
        assert new[name].value == pytest.approx(old[name].value, abs=1e-15)
        assert new[name].lower == pytest.approx(old[name].lower, abs=1e-12)
        assert new[name].upper == pytest.approx(old[name].upper, abs=1e-12)
        assert new[name].lower < new[name].value < new[name].upper


def test_a_non_square_confusion_matrix_is_rejected():
    with pytest.raises(ValueError, match="square"):
        bs.bootstrap_confusion_metrics(
            np.ones((40, 41)),
            m.MARGIN_METRICS,
            n_resamples=10,
            confidence=0.95,
            rng=np.random.default_rng(0),
        )


def test_evaluation_of_2000_classes_runs_in_bounded_memory():
    rng = np.random.default_rng(0)
    n, k = 5000, 2000
    y = rng.integers(0, k, n)
    p = rng.random((n, k))
    p[np.arange(n)[: n // 3], y[: n // 3]] += k  # a third of the rows predicted right
    p /= p.sum(axis=1, keepdims=True)
    tracemalloc.start()
    try:
        report = build_evaluation(np.arange(k), y, p)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # Whole tables would need 5000 x 2000**2 floats (160 GB) for the jackknife alone;
    # the confusion matrix itself is 32 MB.
    assert peak < 200 * 2**20, f"peak traced allocation {peak / 2**20:.0f} MiB"
    # Its time budget (20 s) is checked by benchmarks/bench_reports.py.
    c = m.confusion_matrix(y, p.argmax(axis=1), k)
    for name, f in m.CONFUSION_METRICS.items():
        assert report.metrics[name].value == float(f(c)), name
    for name in ("accuracy", "balanced_accuracy", "cohen_kappa"):
        iv = report.metrics[name]
        assert iv.method == "BCa" and iv.lower < iv.value < iv.upper, name
    # With 2.5 rows per label, resampling loses or duplicates the rows of most
    # labels and every resample's macro-F1 falls below the estimate: BCa is
    # undefined there (z0 = -inf) and the percentile interval is used.
    f1 = report.metrics["macro_f1"]
    assert f1.method == "percentile" and f1.lower < f1.upper < f1.value
    acc = report.metrics["accuracy"]
    # Standard error of a proportion near 1/3 on 5000 rows is 0.0067: the
    # 95% interval is about 4 of them wide.
    assert 0.02 < acc.upper - acc.lower < 0.034


@pytest.mark.parametrize("seed", [0, 1])
def test_closed_form_acceleration_of_a_mean_equals_the_jackknife_one(seed):
    rng = np.random.default_rng(seed)
    x = rng.exponential(size=500) ** 2  # skewed: a clearly non-zero acceleration
    jk = bm.jackknife_means(x[:, None])[:, 0]
    replicates = bm.resampled_means(x[:, None], 2000, rng)[:, 0]
    by_jackknife = bs.bca_interval(x.mean(), replicates, jk, confidence=0.9)
    closed = bs.bca_interval(
        x.mean(), replicates, acceleration=bm.mean_acceleration(x), confidence=0.9
    )
    d = jk.mean() - jk
    expected = np.sum(d**3) / (6.0 * np.sum(d**2) ** 1.5)
    assert bm.mean_acceleration(x) == pytest.approx(expected, rel=1e-9)
    assert bm.mean_acceleration(x) > 0.01
    assert closed.lower == pytest.approx(by_jackknife.lower, rel=1e-12)
    assert closed.upper == pytest.approx(by_jackknife.upper, rel=1e-12)
    assert closed.method == "BCa"


def test_acceleration_of_constant_values_is_undefined_and_the_interval_percentile():
    assert math.isnan(bm.mean_acceleration(np.full(10, 3.0)))
