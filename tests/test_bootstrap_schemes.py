"""One resampling scheme for evaluate and compare; grouped means, from rows or from sums over parts."""

from __future__ import annotations

import functools
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbcli.reports import bootstrap as bs
from nbcli.reports import means as bm
from nbcli.reports import metrics as m
from nbcli.reports.comparison import build_comparison
from nbcli.reports.evaluation import build_evaluation


def _posteriors(rng, n, k, y, signal):
    logits = rng.normal(size=(n, k))
    logits[np.arange(n), y] += signal
    p = np.exp(logits)
    return p / p.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("n, k, seed", [(63, 3, 0), (500, 10, 7), (300, 40, 3)])
def test_evaluate_and_compare_give_one_interval_for_a_models_accuracy(n, k, seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    pa, pb_ = _posteriors(rng, n, k, y, 2.0), _posteriors(rng, n, k, y, 1.0)
    classes = np.arange(k)
    ev = build_evaluation(classes, y, pa, n_resamples=1000, seed=seed).metrics["accuracy"]
    cmp = build_comparison(classes, pa, classes, pb_, y, n_resamples=1000, seed=seed)
    acc = cmp.metrics["accuracy_a"]
    assert acc.value == ev.value
    assert acc.method == ev.method == "BCa"
    assert acc.lower == pytest.approx(ev.lower, abs=1e-12)
    assert acc.upper == pytest.approx(ev.upper, abs=1e-12)
    assert ev.lower < ev.value < ev.upper
    # Another seed moves the interval: the agreement is not a coincidence of bounds.
    other = build_evaluation(classes, y, pa, n_resamples=1000, seed=seed + 1).metrics["accuracy"]
    assert (other.lower, other.upper) != (ev.lower, ev.upper)


def test_two_step_table_draws_are_the_multinomial_over_cells():
    counts = np.array([50, 30, 15, 5])
    correct = np.array([True, False, True, False])
    drawn = np.concatenate(
        list(bs.draw_tables(counts, correct, 20000, np.random.default_rng(0), 999))
    )
    assert drawn.shape == (20000, 4) and (drawn.sum(axis=1) == 100).all()
    p = counts / 100
    np.testing.assert_allclose(drawn.mean(axis=0), 100 * p, rtol=0.02)
    cov = np.cov(drawn.T)
    np.testing.assert_allclose(cov, 100 * (np.diag(p) - np.outer(p, p)), atol=1.2)


def test_table_draws_do_not_depend_on_the_block_size():
    counts, correct = np.array([7, 3, 9, 1, 4]), np.array([1, 0, 0, 1, 0], bool)
    a = np.concatenate(list(bs.draw_tables(counts, correct, 300, np.random.default_rng(5), 7)))
    b = np.concatenate(list(bs.draw_tables(counts, correct, 300, np.random.default_rng(5), 300)))
    assert np.array_equal(a, b)


def test_grouped_means_match_row_resampling_of_a_skewed_sample():
    rng = np.random.default_rng(1)
    x = rng.lognormal(0.0, 1.2, 40_000)
    exact = bm.resampled_means(x[:, None], 4000, np.random.default_rng(2))[:, 0]
    grouped = bm.grouped_resampled_means(x[:, None], 4000, np.random.default_rng(3))[:, 0]
    assert grouped.mean() == pytest.approx(x.mean(), rel=2e-3)
    assert grouped.std() == pytest.approx(exact.std(), rel=0.05)
    assert grouped.std() == pytest.approx(x.std() / np.sqrt(x.size), rel=0.05)
    lo, hi = np.quantile(exact, [0.025, 0.975])
    glo, ghi = np.quantile(grouped, [0.025, 0.975])
    assert abs(glo - lo) < 0.1 * (hi - lo) and abs(ghi - hi) < 0.1 * (hi - lo)


def test_grouped_mean_interval_covers_the_true_mean_about_95_percent_of_the_time():
    rng = np.random.default_rng(8)
    trials, n = 200, 4000
    covered = 0
    for _ in range(trials):
        x = rng.exponential(2.0, n)
        # Fewer groups than the default, so that the check stays quick.
        reps = bm.grouped_resampled_means(x[:, None], 300, rng, groups=128)[:, 0]
        iv = bs.bca_interval(x.mean(), reps, bm.jackknife_means(x[:, None])[:, 0])
        assert iv.method == "BCa"
        covered += iv.lower <= 2.0 <= iv.upper
    assert 0.91 <= covered / trials <= 0.98


def test_large_samples_take_the_grouped_path(monkeypatch):
    x = np.random.default_rng(0).exponential(1.0, 3000)
    calls = []
    grouped = bm.grouped_resampled_means
    monkeypatch.setattr(
        bm, "grouped_resampled_means", lambda *a, **k: calls.append(1) or grouped(*a, **k)
    )
    bm.bootstrap_means({"x": x}, n_resamples=100, confidence=0.95, rng=np.random.default_rng(0))
    assert not calls
    monkeypatch.setattr(bm, "EXACT_VALUES", 3000 * 100 - 1)
    iv = bm.bootstrap_means(
        {"x": x}, n_resamples=100, confidence=0.95, rng=np.random.default_rng(0)
    )
    assert calls and iv["x"].lower < x.mean() < iv["x"].upper


def test_accuracy_of_a_confusion_matrix_is_drawn_from_its_diagonal_first():
    c = m.confusion_matrix(np.array([0, 0, 1, 1, 2, 2, 2]), np.array([0, 1, 1, 2, 2, 2, 0]), 3)
    reps = bs.resampled_statistics(c, {"acc": m.accuracy}, 500, np.random.default_rng(0))
    direct = np.random.default_rng(0).binomial(7, 4 / 7, size=500) / 7
    assert np.array_equal(reps["acc"], direct)


def test_grouped_means_on_threads_draw_what_one_thread_draws(monkeypatch):
    from nbcli.reports import ranking_columns as rc

    x = np.random.default_rng(4).lognormal(size=(30_000, 3))
    monkeypatch.setenv("NBCLI_THREADS", "1")
    one = bm.grouped_resampled_means(x, 200, np.random.default_rng(5))
    monkeypatch.setenv("NBCLI_THREADS", "3")
    monkeypatch.setattr(rc, "_PARALLEL_ROWS", 0)
    three = bm.grouped_resampled_means(list(x.T), 200, np.random.default_rng(5))
    np.testing.assert_array_equal(one, three)
    # Each column has a generator of its own: the columns' draws differ.
    assert not np.allclose(one[:, 0] - one[:, 0].mean(), one[:, 1] - one[:, 1].mean())


@pytest.mark.parametrize("n", [20_000, 100_000])
def test_the_groups_lose_little_of_the_skew_an_interval_end_feels(n):
    # Edgeworth's first term: an end moves by lost * skew * (z**2 - 1) / (6 sqrt(n))
    # standard errors when a share `lost` of the third cumulant lies within groups.
    x = np.random.default_rng(11).lognormal(0.0, 1.2, n)
    member = bm.value_groups(x, bm.GROUPS)
    sizes = np.bincount(member)
    used = sizes > 0
    means = np.bincount(member, weights=x)[used] / sizes[used]
    centre = x.mean()
    third = np.mean((x - centre) ** 3)
    between = np.sum(sizes[used] / n * (means - centre) ** 3)
    lost = 1.0 - between / third
    skew = third / x.std() ** 3
    shift = lost * skew * (1.96**2 - 1) / (6 * np.sqrt(n))
    assert 0.0 < lost < 1.0
    assert shift < 0.02  # standard errors; an end's Monte Carlo error at 1,000 resamples is ~0.085


@pytest.mark.parametrize("calibrated", [True, False])
def test_grouped_bin_sums_give_the_ece_replicates_of_row_resampling(calibrated):
    from nbcli.reports import reliability as rl

    rng = np.random.default_rng(12)
    n, draws = 20_000, 4000
    p = 0.5 + 0.5 * rng.beta(6.0, 2.0, n)  # bins below 0.5 stay empty
    # Calibrated: every bin's sum of (outcome - p) is near zero, where |.| folds it.
    y = (rng.random(n) < (p if calibrated else p**1.5)).astype(float)
    b = rl.assign_bins(p, np.linspace(0.0, 1.0, 11))
    d = y - p
    rows = np.random.default_rng(2).integers(0, n, size=(draws, n))
    exact = np.array([np.abs(np.bincount(b[i], weights=d[i], minlength=10)).sum() for i in rows])
    exact /= n
    sums = bm.grouped_resampled_bin_sums(b, d, 10, draws, np.random.default_rng(3))
    grouped = np.abs(sums).sum(axis=1) / n
    spread = exact.std()
    # Monte Carlo error of a quantile's difference at 4,000 draws: about 0.06 spread.
    assert abs(grouped.mean() - exact.mean()) < 0.1 * spread
    assert grouped.std() == pytest.approx(spread, rel=0.06)
    for q in (0.025, 0.5, 0.975):
        assert abs(np.quantile(grouped, q) - np.quantile(exact, q)) < 0.15 * spread
    assert sums.shape == (draws, 10) and not sums[:, :5].any()


@pytest.mark.numerical
@settings(max_examples=20, deadline=None)
@given(
    st.lists(st.integers(1, 2_999), max_size=6),
    st.integers(0, 2**32 - 1),
    st.sampled_from(["lognormal", "ties", "signed"]),
)
def test_value_bins_of_any_split_give_the_grouped_intervals_of_the_rows(cuts, seed, shape):
    rng = np.random.default_rng(seed)
    if shape == "lognormal":  # skewed, like log-losses
        x = rng.lognormal(-2.0, 1.5, 3_000)
    elif shape == "ties":  # few distinct values, bins with one value each
        x = rng.integers(0, 5, 3_000) / 4.0
    else:  # both signs and zero, as rounding gives Brier scores
        x = np.concatenate([rng.normal(0, 1e-16, 1_000), np.zeros(10), rng.uniform(0, 2, 1_990)])
    y = rng.uniform(0.0, 2.0, x.size)
    bounds = sorted({0, x.size, *cuts})
    pieces = [slice(a, b) for a, b in zip(bounds, bounds[1:])]
    bins = {
        name: functools.reduce(bm.ValueBins.merge, [bm.ValueBins.of(v[p]) for p in pieces])
        for name, v in (("a", x), ("b", y))
    }
    # Grouped either way, as beyond EXACT_VALUES rows x resamples.
    settings_ = {"n_resamples": 1_000, "confidence": 0.9}
    with mock.patch.object(bm, "EXACT_VALUES", 0):
        want = bm.bootstrap_means({"a": x, "b": y}, rng=np.random.default_rng(seed), **settings_)
        got = bm.bootstrap_binned_means(bins, rng=np.random.default_rng(seed), **settings_)
    for name in ("a", "b"):
        assert got[name].method == want[name].method
        scale = max(1.0, abs(want[name].value))
        for side in ("value", "lower", "upper"):
            assert getattr(got[name], side) == pytest.approx(
                getattr(want[name], side), rel=1e-12, abs=1e-12 * scale
            ), (name, side)
    assert bins["a"].acceleration() == pytest.approx(bm.mean_acceleration(x), rel=1e-9, abs=1e-12)


def test_binned_means_refuse_sizes_that_are_resampled_row_by_row():
    bins = bm.ValueBins.of(np.arange(100.0))
    with pytest.raises(ValueError, match="row by row"):
        bm.bootstrap_binned_means({"x": bins}, n_resamples=1000, confidence=0.95, rng=None)
    empty = bm.bootstrap_binned_means(
        {"x": bm.ValueBins.of(np.zeros(0))}, n_resamples=1000, confidence=0.95, rng=None
    )
    assert np.isnan(empty["x"].value) and empty["x"].method == "none"
