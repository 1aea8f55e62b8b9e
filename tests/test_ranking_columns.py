"""One sort per class: ranking figures from runs of equal scores, threads, lazy curves,
histogram groups of the grouped means, label coding by counting."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics import average_precision_score, roc_auc_score

from nbcli.distinct import unique_inverse as _unique
from nbcli.reports import means as bm
from nbcli.reports import ranking
from nbcli.reports import ranking_columns as rc
from nbcli.reports.evaluation import build_evaluation
from nbcli.reports.metrics import encode_labels

ROOT = Path(__file__).resolve().parents[1]
TOL = 1e-12


def _direct(pos, score):
    """DeLong's components and variance straight from the definition, O(m n)."""
    x, y = score[pos], score[~pos]
    psi = (x[:, None] > y[None, :]) + 0.5 * (x[:, None] == y[None, :])
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)
    var = np.var(v10, ddof=1) / x.size + np.var(v01, ddof=1) / y.size
    return psi.mean(), v10, v01, var


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.booleans(), st.integers(0, 40)), min_size=4, max_size=80),
    st.booleans(),
)
def test_one_sort_gives_sklearn_areas_and_delong_components(rows, ties):
    pos = np.array([r[0] for r in rows])
    raw = np.array([r[1] for r in rows], dtype=float)
    # Without ties: distinct scores in the same order (the other code path).
    score = raw / 7 if ties else raw + np.arange(raw.size) * 1e-3
    if pos.sum() < 2 or (~pos).sum() < 2:
        return
    r = rc.rank_column(pos, score, counts=True, per_row=rc.PLACEMENT)
    auc, v10, v01, var = _direct(pos, score)
    assert abs(r.auc - roc_auc_score(pos, score)) <= TOL and abs(r.auc - auc) <= TOL
    assert abs(r.average_precision - average_precision_score(pos, score)) <= TOL
    np.testing.assert_allclose(r.per_row[pos], v10, rtol=0, atol=TOL)
    np.testing.assert_allclose(r.per_row[~pos], v01, rtol=0, atol=TOL)
    assert abs(r.variance - var) <= TOL
    # The counts equal those of the stable, weighted path of threshold_counts.
    fps, tps, thresholds = ranking.threshold_counts(pos, score, np.ones(pos.size))
    np.testing.assert_array_equal(r.fps, fps)
    np.testing.assert_array_equal(r.tps, tps)
    np.testing.assert_array_equal(r.thresholds, thresholds)
    c = rc.rank_column(pos, score, per_row=rc.CONTRIBUTION)
    m, n = int(pos.sum()), int((~pos).sum())
    np.testing.assert_allclose(c.per_row[pos], (v10 - auc) / m, rtol=0, atol=TOL)
    np.testing.assert_allclose(c.per_row[~pos], (v01 - auc) / n, rtol=0, atol=TOL)
    # Leaving the rows outside the classes' overlap out of the sort changes nothing.
    saved = rc._BUCKET_ROWS
    try:
        rc._BUCKET_ROWS = 0
        part = rc.rank_column(pos, score, per_row=rc.PLACEMENT)
    finally:
        rc._BUCKET_ROWS = saved
    assert part.auc == r.auc
    assert abs(part.average_precision - r.average_precision) <= TOL
    assert abs(part.variance - r.variance) <= TOL
    np.testing.assert_allclose(part.per_row, r.per_row, rtol=0, atol=TOL)
    # polars' sort (large columns) gives the figures of NumPy's, negative scores included.
    saved = rc._POLARS_SORT_ROWS
    try:
        rc._POLARS_SORT_ROWS = 0
        by_polars = rc.rank_column(pos, score - 20.0, counts=True, per_row=rc.PLACEMENT)
    finally:
        rc._POLARS_SORT_ROWS = saved
    assert by_polars.auc == r.auc
    assert abs(by_polars.average_precision - r.average_precision) <= TOL
    np.testing.assert_allclose(by_polars.per_row, r.per_row, rtol=0, atol=TOL)
    np.testing.assert_array_equal(by_polars.tps, r.tps)
    np.testing.assert_array_equal(by_polars.fps, r.fps)
    np.testing.assert_array_equal(by_polars.thresholds, r.thresholds - 20.0)


@pytest.mark.parametrize("sorter", ["numpy", "polars"])
@pytest.mark.parametrize("case", ["separated", "overlap", "ties", "one class"])
def test_large_columns_sorted_in_part_agree_with_sklearn(case, sorter, monkeypatch):
    if sorter == "polars":
        monkeypatch.setattr(rc, "_POLARS_SORT_ROWS", 1000)
    rng = np.random.default_rng(9)
    n = 40_000
    pos = rng.random(n) < 0.2
    score = np.where(pos, rng.normal(2.0, 1.0, n), rng.normal(0.0, 1.0, n))
    if case == "separated":
        score = np.where(pos, score + 3.0, score)
    if case == "ties":
        score = (score + np.where(pos, 2.0, 0.0)).round(1)
    if case == "one class":
        pos[:] = True
    r = rc.rank_column(pos, score, per_row=rc.PLACEMENT)
    # Which path ranked the column: buckets unless most rows share buckets with the other class.
    assert (rc._by_buckets(pos, score, None, None) is None) == (case in ("overlap", "one class"))
    if case == "one class":
        assert np.isnan(r.auc) and r.average_precision == 1.0
        return
    assert abs(r.auc - roc_auc_score(pos, score)) <= TOL
    assert abs(r.average_precision - average_precision_score(pos, score)) <= TOL
    full = rc.rank_column(pos, score, counts=True, per_row=rc.PLACEMENT)  # sorts every row
    np.testing.assert_allclose(r.per_row, full.per_row, rtol=0, atol=TOL)
    assert abs(r.variance - full.variance) <= TOL


@settings(max_examples=60, deadline=None)
@given(
    st.integers(200, 3000),
    st.floats(0.02, 0.9),
    st.floats(0.0, 12.0),
    st.sampled_from([None, 0, 1, 2]),
    st.booleans(),
    st.integers(0, 2**32 - 1),
)
def test_bucket_ranking_equals_the_full_sort(n, share, shift, decimals, negative, seed):
    rng = np.random.default_rng(seed)
    pos = rng.random(n) < share
    score = np.where(pos, rng.normal(shift, 1.0, n), rng.normal(0.0, 1.0, n))
    if decimals is not None:
        score = score.round(decimals)
    if negative:
        score = -score  # negative scores, and the positives below
    if pos.all() or not pos.any():
        return
    full = rc.rank_column(pos, score, counts=True, per_row=rc.CONTRIBUTION)
    bucketed = rc._by_buckets(pos, score, rc.CONTRIBUTION, None)
    if bucketed is None:  # most rows mixed: the full sort ranks the column
        return
    assert bucketed.auc == full.auc
    assert abs(bucketed.average_precision - full.average_precision) <= TOL
    if np.isnan(full.variance):  # one row on a side
        assert np.isnan(bucketed.variance)
    else:
        assert abs(bucketed.variance - full.variance) <= TOL * full.variance
    np.testing.assert_allclose(bucketed.per_row, full.per_row, rtol=0, atol=TOL / n)


def test_one_sided_columns_are_undefined_but_average_precision_is_not():
    r = rc.rank_column(np.ones(5, bool), np.arange(5.0), per_row=rc.PLACEMENT)
    assert np.isnan(r.auc) and np.isnan(r.variance) and r.average_precision == 1.0
    assert np.isnan(r.per_row).all()
    r = rc.rank_column(np.zeros(5, bool), np.array([1.0, 1, 2, 2, 3]))
    assert np.isnan(r.auc) and np.isnan(r.average_precision)
    with pytest.raises(ValueError, match="per_row"):
        rc.rank_column(np.array([True, False]), np.array([1.0, 0.0]), per_row="ranks")


def _posteriors(n, k, seed=0, decimals=None):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, k, n)
    logits = rng.normal(size=(n, k))
    logits[np.arange(n), y] += 1.5
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    return y, (p if decimals is None else p.round(decimals))


@pytest.mark.parametrize("decimals", [None, 3])
def test_threads_give_the_figures_of_one_thread(monkeypatch, decimals):
    y, p = _posteriors(3000, 4, decimals=decimals)
    one = rc.one_vs_rest(y, p, threads=1)
    monkeypatch.setattr(rc, "_PARALLEL_ROWS", 0)
    two = rc.one_vs_rest(y, p, threads=2)
    np.testing.assert_array_equal(one.covariance, two.covariance)
    assert [r.average_precision for r in one.ranks] == [r.average_precision for r in two.ranks]
    np.testing.assert_allclose(one.auc, ranking.per_class_roc_auc(y, p), rtol=0, atol=TOL)


def test_report_with_ranking_on_threads_equals_the_report_without(monkeypatch):
    import nbcli.reports.evaluation as ev

    y, p = _posteriors(30_000, 5, seed=1, decimals=4)
    monkeypatch.setattr(rc, "_PARALLEL_ROWS", 0)
    threaded = build_evaluation(np.arange(5), y, p, n_resamples=200)
    assert threaded.metrics["roc_auc"].method == "DeLong"
    monkeypatch.setattr(ev, "start_ranking", lambda *a, **k: None)
    plain = build_evaluation(np.arange(5), y, p, n_resamples=200)
    assert threaded.to_dict() == plain.to_dict()
    macro = np.mean([roc_auc_score(y == c, p[:, c]) for c in range(5)])
    assert threaded.metrics["roc_auc"].value == pytest.approx(macro, abs=TOL)


def test_curves_are_drawn_on_first_use_and_equal_the_eager_ones():
    y, p = _posteriors(500, 3, seed=2, decimals=2)
    report = build_evaluation(np.arange(3), y, p, n_resamples=0)
    lazy = report.roc_curves
    assert isinstance(lazy, rc.LazyCurves) and lazy._curves is None and len(lazy) == 3
    eager = ranking.roc_curves(y, p)
    for a, b in zip(lazy, eager):
        np.testing.assert_array_equal(a.x, b.x)
        np.testing.assert_array_equal(a.y, b.y)
        assert a.area == pytest.approx(b.area, abs=TOL)
    pr = ranking.precision_recall_curves(y, p)
    assert [c.area for c in report.pr_curves] == pytest.approx([c.area for c in pr], abs=TOL)


def test_value_groups_are_ordered_bounded_and_of_similar_size():
    rng = np.random.default_rng(4)
    x = np.concatenate([rng.lognormal(0, 2, 20_000), -rng.exponential(1, 5000), [0.0, -0.0]])
    g = bm.value_groups(x, 64)
    order = np.argsort(x, kind="stable")
    assert np.all(np.diff(g[order]) >= 0)  # neighbouring values, in order
    sizes = np.bincount(g)
    assert g.min() >= 0 and g.max() < 64 and sizes.max() <= 2 * x.size / 64
    assert g[-1] == g[-2]  # -0.0 and 0.0 in one group
    # Constant values: one group.
    assert np.unique(bm.value_groups(np.full(100, 3.5), 16)).size == 1


def test_labels_coded_by_counting_equal_np_unique():
    rng = np.random.default_rng(5)
    for y in (rng.integers(-3, 7, 1000), rng.integers(0, 2**40, 50), np.array([5], dtype=np.int8)):
        u, inv = _unique(y)
        ref_u, ref_inv = np.unique(y, return_inverse=True)
        np.testing.assert_array_equal(u, ref_u)
        np.testing.assert_array_equal(inv, ref_inv)
        assert u.dtype == y.dtype
    y = rng.integers(0, 4, 200)
    as_objects = encode_labels([0, 1, 2], y.astype(object))
    as_ints = encode_labels([0, 1, 2], y)
    assert as_objects.labels == as_ints.labels == [0, 1, 2, 3]
    np.testing.assert_array_equal(as_objects.codes, as_ints.codes)
    mixed = encode_labels(["1", "2"], np.array([1, True, "2"], dtype=object))
    assert mixed.labels == ["1", "2", True]


def test_an_evaluation_with_delong_intervals_does_not_import_scipy():
    code = (
        "import sys, numpy as np; from nbcli.reports.evaluation import build_evaluation; "
        "rng = np.random.default_rng(0); y = rng.integers(0, 3, 30000); "
        "p = rng.dirichlet([1, 1, 1], 30000); "
        "r = build_evaluation([0, 1, 2], y, p, n_resamples=1000); "
        "assert r.metrics['roc_auc'].method == 'DeLong'; "
        "sys.exit(any(m.split('.')[0] == 'scipy' for m in sys.modules))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    assert subprocess.run([sys.executable, "-c", code], env=env).returncode == 0


def test_a_refused_evaluation_leaves_no_ranking_threads_and_blas_its_threads(monkeypatch):
    from threadpoolctl import threadpool_info

    monkeypatch.setattr(rc, "_PARALLEL_ROWS", 0)
    before = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
    y, p = _posteriors(30_000, 3, seed=6)
    with pytest.raises(ValueError):
        build_evaluation(np.arange(3), y, p, n_resamples=1000, bins=0)
    after = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
    assert after == before
    import threading

    assert not [t for t in threading.enumerate() if t.name.startswith("nbcli-rank")]
