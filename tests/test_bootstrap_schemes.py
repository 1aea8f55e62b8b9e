"""One resampling scheme for evaluate and compare; grouped means; the Poisson bootstrap."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbcli.reports import bootstrap as bs
from nbcli.reports import means as bm
from nbcli.reports import metrics as m
from nbcli.reports import poisson as pb
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


def test_poisson_weights_are_poisson_one():
    w = pb.poisson_weights(3, 0, 20_000, 50)
    assert w.shape == (20_000, 50)
    assert w.mean() == pytest.approx(1.0, abs=0.01) and w.var() == pytest.approx(1.0, abs=0.02)
    assert (w == np.round(w)).all() and w.min() == 0


@settings(max_examples=30, deadline=None)
@given(
    cuts=st.lists(st.integers(0, 9000), max_size=5),
    seed=st.integers(0, 2**32),
)
def test_poisson_sums_do_not_depend_on_the_partitioning(cuts, seed):
    n = 9000
    x = np.random.default_rng(0).normal(size=(n, 2))
    whole = pb.poisson_sums(x, seed=seed, row_start=0, n_resamples=40)
    edges = [0, *sorted(cuts), n]
    parts = [
        pb.poisson_sums(x[a:b], seed=seed, row_start=a, n_resamples=40)
        for a, b in zip(edges, edges[1:])
    ]
    merged = parts[-1]
    for part in reversed(parts[:-1]):
        merged = part + merged
    assert np.array_equal(merged.weight, whole.weight)
    np.testing.assert_allclose(merged.total, whole.total, rtol=1e-12, atol=1e-9)
    assert merged.n_rows == n
    a = pb.poisson_intervals(merged)
    b = pb.poisson_intervals(whole)
    for ia, ib in zip(a, b):
        assert ia.method == "poisson-bootstrap"
        assert ia.lower == pytest.approx(ib.lower, abs=1e-12)
        assert ia.upper == pytest.approx(ib.upper, abs=1e-12)


def test_poisson_interval_covers_and_another_seed_differs():
    rng = np.random.default_rng(4)
    covered = 0
    trials = 200
    for t in range(trials):
        x = rng.exponential(1.0, 400)
        iv = pb.poisson_intervals(pb.poisson_sums(x, seed=t, row_start=0, n_resamples=300))[0]
        covered += iv.lower <= 1.0 <= iv.upper
    assert 0.90 <= covered / trials <= 0.98
    x = rng.normal(size=300)
    one = pb.poisson_intervals(pb.poisson_sums(x, seed=1, row_start=0, n_resamples=200))[0]
    two = pb.poisson_intervals(pb.poisson_sums(x, seed=2, row_start=0, n_resamples=200))[0]
    assert one.value == two.value and one.lower != two.lower


def test_poisson_bootstrap_refuses_bad_arguments_and_handles_no_rows():
    with pytest.raises(ValueError, match="non-negative"):
        pb.poisson_weights(-1, 0, 10, 10)
    with pytest.raises(ValueError, match="confidence"):
        pb.poisson_intervals(
            pb.poisson_sums(np.ones(3), seed=0, row_start=0, n_resamples=5), confidence=2
        )
    empty = pb.poisson_intervals(pb.poisson_sums(np.zeros(0), seed=0, row_start=0, n_resamples=5))
    assert np.isnan(empty[0].value) and empty[0].method == "none"


def test_accuracy_of_a_confusion_matrix_is_drawn_from_its_diagonal_first():
    c = m.confusion_matrix(np.array([0, 0, 1, 1, 2, 2, 2]), np.array([0, 1, 1, 2, 2, 2, 0]), 3)
    reps = bs.resampled_statistics(c, {"acc": m.accuracy}, 500, np.random.default_rng(0))
    direct = np.random.default_rng(0).binomial(7, 4 / 7, size=500) / 7
    assert np.array_equal(reps["acc"], direct)


def test_poisson_confusion_tables_merge_across_partitions_and_cover():
    rng = np.random.default_rng(9)
    n, k = 3000, 3
    y = rng.integers(0, k, n)
    pred = np.where(rng.uniform(size=n) < 0.7, y, (y + 1) % k)
    whole = pb.poisson_tables(y, pred, k, seed=5, row_start=0, n_resamples=400)
    parts = [
        pb.poisson_tables(y[a:b], pred[a:b], k, seed=5, row_start=a, n_resamples=400)
        for a, b in [(0, 1000), (1000, 1001), (1001, 2500), (2500, n)]
    ]
    assert np.array_equal(sum(parts), whole)
    w = pb.poisson_weights(5, 0, n, 400)
    assert np.array_equal(whole[:, 0, 0], w[(y == 0) & (pred == 0)].sum(axis=0))
    c = m.confusion_matrix(y, pred, k)
    ivs = pb.poisson_table_intervals(c, whole, m.CONFUSION_METRICS)
    acc = ivs["accuracy"]
    assert acc.method == "poisson-bootstrap" and acc.value == m.accuracy(c[None])[0]
    # Close to the multinomial bootstrap's interval on the same table.
    ref = bs.bootstrap_count_statistics(
        c, {"accuracy": m.accuracy}, n_resamples=2000, confidence=0.95, rng=rng
    )["accuracy"]
    width = ref.upper - ref.lower
    assert abs(acc.lower - ref.lower) < 0.15 * width and abs(acc.upper - ref.upper) < 0.15 * width
