"""Bootstrap of the ranking metrics: weighted replicates, closed-form jackknife, intervals."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbcli.reports import ranking
from nbcli.reports import ranking_bootstrap as rb
from nbcli.reports.means import resampled_means

TOL = 1e-12


@st.composite
def weighted_case(draw):
    k = draw(st.integers(2, 4))
    n = draw(st.integers(2, 40))
    y = np.array(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)))
    levels = draw(st.integers(1, 5))
    raw = np.array(
        draw(st.lists(st.integers(1, levels), min_size=n * k, max_size=n * k)), dtype=float
    ).reshape(n, k)
    w = np.array(
        draw(st.lists(st.integers(0, 3), min_size=3 * n, max_size=3 * n)), dtype=float
    ).reshape(3, n)
    return y, raw / raw.sum(axis=1, keepdims=True), w


def _same(a, b):
    return (np.isnan(a) and np.isnan(b)) or abs(a - b) <= TOL


@settings(max_examples=150, deadline=None)
@given(weighted_case())
def test_replicates_equal_weighted_point_estimates(case):
    y, p, w = case
    got = rb.ranking_replicates(y, p, w)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ranking.ExcludedClassWarning)
        for b in range(w.shape[0]):
            assert _same(got["roc_auc"][b], ranking.roc_auc(y, p, w[b]))
            assert _same(got["roc_auc_weighted"][b], ranking.roc_auc_weighted(y, p, w[b]))
            assert _same(got["average_precision"][b], ranking.average_precision(y, p, w[b]))


@settings(max_examples=60, deadline=None)
@given(weighted_case())
def test_jackknife_equals_leaving_each_row_out(case):
    y, p, _ = case
    jk = rb.jackknife_roc_auc(y, p)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ranking.ExcludedClassWarning)
        for i in range(y.size):
            yi, pi = np.delete(y, i), np.delete(p, i, axis=0)
            full_defined = np.isfinite(ranking.per_class_roc_auc(y, p))
            loo = ranking.per_class_roc_auc(yi, pi)
            # A class defined on all rows but not without row i is left out
            # of that jackknife value; compare only where the sets agree.
            if p.shape[1] > 2 and (np.isfinite(loo) != full_defined).any():
                continue
            assert _same(jk["roc_auc"][i], ranking.roc_auc(yi, pi))
            assert _same(jk["roc_auc_weighted"][i], ranking.roc_auc_weighted(yi, pi))


def test_resamples_are_those_of_the_per_row_bootstrap():
    rng = np.random.default_rng(5)
    n = 50
    y = rng.integers(0, 3, n)
    p = rng.dirichlet([1, 1, 1], n)
    got = rb.resampled_ranking(y, p, 40, np.random.default_rng(9))
    # The mean of a row indicator under the same draws gives the same
    # resample counts: row 0's share of each resample matches.
    indicator = np.zeros((n, 1))
    indicator[0] = 1.0
    share = resampled_means(indicator, 40, np.random.default_rng(9))[:, 0]
    idx = np.random.default_rng(9).integers(0, n, size=(40, n), dtype=np.intp)
    np.testing.assert_allclose(share * n, (idx == 0).sum(axis=1))
    counts = np.stack([np.bincount(r, minlength=n) for r in idx])
    expected = rb.ranking_replicates(y, p, counts)
    for k in rb.RANKING_METRICS:
        np.testing.assert_allclose(got[k], expected[k], rtol=0, atol=TOL)


def test_bootstrap_intervals():
    rng = np.random.default_rng(11)
    n = 300
    y = rng.integers(0, 3, n)
    logits = rng.normal(size=(n, 3)) + 1.5 * np.eye(3)[y]
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    out = rb.bootstrap_ranking(y, p, n_resamples=400, confidence=0.95, rng=np.random.default_rng(0))
    assert out["roc_auc"].method == "BCa" and out["average_precision"].method == "percentile"
    for k, iv in out.items():
        assert iv.lower < iv.value < iv.upper, k
    assert abs(out["roc_auc"].value - ranking.roc_auc(y, p)) <= TOL
    # A 95% interval on 300 rows is a few hundredths wide, not a point or the whole range.
    width = out["roc_auc"].upper - out["roc_auc"].lower
    assert 0.02 < width < 0.2
    again = rb.bootstrap_ranking(
        y, p, n_resamples=400, confidence=0.95, rng=np.random.default_rng(0)
    )
    assert again == out
    none = rb.bootstrap_ranking(y, p, n_resamples=0, confidence=0.95, rng=rng)
    assert none["roc_auc"].method == "none"
    with pytest.raises(ValueError, match="confidence"):
        rb.bootstrap_ranking(y, p, n_resamples=10, confidence=1.5, rng=rng)
