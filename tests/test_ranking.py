"""ROC AUC, average precision and their curves against scikit-learn; DeLong's intervals."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.datasets import load_breast_cancer, load_digits, load_iris
from sklearn.metrics import (
    average_precision_score,
    precision_recall_curve,
    roc_auc_score,
    roc_curve,
)
from sklearn.naive_bayes import GaussianNB
from sklearn.preprocessing import label_binarize

from nbcli.reports import delong, ranking
from nbcli.reports.ranking import ExcludedClassWarning

TOL = 1e-12


def _fitted(loader):
    X, y = loader(return_X_y=True)
    return y, GaussianNB().fit(X, y).predict_proba(X)


REAL = {
    "iris": lambda: _fitted(load_iris),
    "digits": lambda: _fitted(load_digits),
    "breast_cancer": lambda: _fitted(load_breast_cancer),
}


def _sklearn_scores(y, p, w=None):
    k = p.shape[1]
    if k == 2:
        auc = roc_auc_score(y, p[:, 1], sample_weight=w)
        return auc, auc, average_precision_score(y == 1, p[:, 1], sample_weight=w)
    return (
        roc_auc_score(y, p, multi_class="ovr", average="macro", sample_weight=w),
        roc_auc_score(y, p, multi_class="ovr", average="weighted", sample_weight=w),
        average_precision_score(
            label_binarize(y, classes=range(k)), p, average="macro", sample_weight=w
        ),
    )


@pytest.mark.parametrize("name", sorted(REAL))
def test_real_data_equals_sklearn(name):
    y, p = REAL[name]()
    macro, weighted, ap = _sklearn_scores(y, p)
    assert abs(ranking.roc_auc(y, p) - macro) <= TOL
    assert abs(ranking.roc_auc_weighted(y, p) - weighted) <= TOL
    assert abs(ranking.average_precision(y, p) - ap) <= TOL
    # Not a trivial score: a wrong tie rule or column would move these.
    assert 0.9 < macro < 1.0


def test_real_data_per_class_and_curves_equal_sklearn():
    y, p = REAL["iris"]()
    per_class = ranking.per_class_roc_auc(y, p)
    expected = roc_auc_score(label_binarize(y, classes=[0, 1, 2]), p, average=None)
    np.testing.assert_allclose(per_class, expected, rtol=0, atol=TOL)
    for c, curve in enumerate(ranking.roc_curves(y, p)):
        fpr, tpr, thr = roc_curve(y == c, p[:, c])
        np.testing.assert_array_equal(curve.x, fpr)
        np.testing.assert_array_equal(curve.y, tpr)
        np.testing.assert_array_equal(curve.thresholds, thr)
    for c, curve in enumerate(ranking.precision_recall_curves(y, p)):
        precision, recall, thr = precision_recall_curve(y == c, p[:, c])
        np.testing.assert_array_equal(curve.x, recall)
        np.testing.assert_array_equal(curve.y, precision)
        np.testing.assert_array_equal(curve.thresholds, thr)


def test_binary_uses_the_second_column():
    y = np.array([0, 0, 1, 1])
    p1 = np.array([0.1, 0.4, 0.35, 0.8])
    p = np.column_stack([1 - p1, p1])
    assert ranking.roc_auc(y, p) == pytest.approx(0.75, abs=TOL)
    assert ranking.average_precision(y, p) == pytest.approx((1 + 2 / 3) / 2, abs=TOL)
    # Column 0 would give 0.25; a program scoring it fails here.
    assert ranking.roc_auc_weighted(y, p) == pytest.approx(0.75, abs=TOL)


@st.composite
def tied_scores(draw):
    """Labels and probabilities drawn from a few levels, so ties are common."""
    k = draw(st.integers(2, 5))
    n = draw(st.integers(k + 1, 60))
    y = np.array(draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n)))
    # Every class present, so scikit-learn's averages are defined.
    y[:k] = np.arange(k)
    levels = draw(st.integers(1, 6))
    raw = np.array(
        draw(st.lists(st.integers(1, levels), min_size=n * k, max_size=n * k)), dtype=float
    ).reshape(n, k)
    weighted = draw(st.booleans())
    w = None
    if weighted:
        w = np.array(draw(st.lists(st.sampled_from([0.5, 1.0, 2.0, 3.0]), min_size=n, max_size=n)))
    return y, raw / raw.sum(axis=1, keepdims=True), w


@settings(max_examples=150, deadline=None)
@given(tied_scores())
def test_ties_and_weights_equal_sklearn(case):
    y, p, w = case
    macro, weighted, ap = _sklearn_scores(y, p, w)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ExcludedClassWarning)
        assert abs(ranking.roc_auc(y, p, w) - macro) <= TOL
        assert abs(ranking.roc_auc_weighted(y, p, w) - weighted) <= TOL
        assert abs(ranking.average_precision(y, p, w) - ap) <= TOL


def test_absent_class_is_left_out_with_a_warning():
    y, p = REAL["iris"]()
    keep = y != 2
    y, p = y[keep], p[keep]
    per_class = ranking.per_class_roc_auc(y, p)
    assert math.isnan(per_class[2]) and np.isfinite(per_class[:2]).all()
    with pytest.warns(ExcludedClassWarning, match=r"\[2\]"):
        value = ranking.roc_auc(y, p)
    assert value == pytest.approx(per_class[:2].mean(), abs=TOL)
    with pytest.warns(ExcludedClassWarning):
        ap = ranking.average_precision(y, p)
    expected = average_precision_score(label_binarize(y, classes=[0, 1, 2])[:, :2], p[:, :2])
    assert ap == pytest.approx(expected, abs=TOL)
    with pytest.warns(ExcludedClassWarning):
        assert ranking.roc_auc_weighted(y, p) == pytest.approx(
            np.average(per_class[:2], weights=[50, 50]), abs=TOL
        )


def test_zero_weights_drop_rows():
    y = np.array([0, 1, 1, 0, 1])
    p1 = np.array([0.2, 0.9, 0.1, 0.6, 0.7])
    p = np.column_stack([1 - p1, p1])
    w = np.array([1.0, 1.0, 0.0, 1.0, 1.0])
    assert ranking.roc_auc(y, p, w) == pytest.approx(1.0, abs=TOL)
    assert ranking.roc_auc(y, p) == pytest.approx(4 / 6, abs=TOL)
    with pytest.warns(ExcludedClassWarning):
        assert math.isnan(ranking.roc_auc(y, p, np.zeros(5)))
    with pytest.warns(ExcludedClassWarning):
        assert math.isnan(ranking.average_precision(y, p, np.zeros(5)))


def test_nothing_defined_gives_nan():
    p = np.full((3, 3), 1 / 3)
    with pytest.warns(ExcludedClassWarning):
        assert math.isnan(ranking.roc_auc(np.zeros(3, dtype=int), p))
    with pytest.warns(ExcludedClassWarning):
        assert math.isnan(ranking.roc_auc(np.array([], dtype=int), np.empty((0, 2))))


@pytest.mark.parametrize(
    "codes, proba, match",
    [
        ([0, 1], [[0.5, 0.5]], "shape"),
        ([0, 3], [[0.5, 0.5], [0.2, 0.8]], "lie in"),
        ([0.0, 1.0], [[0.5, 0.5], [0.2, 0.8]], "integer"),
        ([0, 1], [[0.5, np.nan], [0.2, 0.8]], "NaN"),
        ([0, 1], [0.5, 0.5], "shape"),
    ],
)
def test_bad_input_is_refused(codes, proba, match):
    with pytest.raises(ValueError, match=match):
        ranking.roc_auc(codes, proba)


def test_curve_to_dict_is_json_ready():
    y, p = REAL["iris"]()
    d = ranking.roc_curves(y, p)[0].to_dict()
    assert d["thresholds"][0] is None and d["fpr"][0] == 0.0 and d["tpr"][-1] == 1.0
    assert set(ranking.precision_recall_curves(y, p)[0].to_dict()) == {
        "recall",
        "precision",
        "thresholds",
        "area",
    }


# --------------------------------------------------------------------------
# DeLong


def _direct_placements(pos, score):
    """DeLong's components straight from the definition, O(m n)."""
    x, y = score[pos], score[~pos]
    psi = (x[:, None] > y[None, :]) + 0.5 * (x[:, None] == y[None, :])
    v10, v01 = psi.mean(axis=1), psi.mean(axis=0)
    auc = psi.mean()
    var = np.var(v10, ddof=1) / x.size + np.var(v01, ddof=1) / y.size
    return auc, v10, v01, var


@settings(max_examples=100, deadline=None)
@given(
    st.lists(st.tuples(st.booleans(), st.integers(0, 5)), min_size=4, max_size=50),
)
def test_fast_delong_equals_the_direct_sum(rows):
    pos = np.array([r[0] for r in rows])
    score = np.array([r[1] for r in rows], dtype=float) / 7
    if pos.sum() < 2 or (~pos).sum() < 2:
        return
    auc, v10, v01, var = _direct_placements(pos, score)
    p = delong.placements(pos, score)
    assert abs(p.auc - auc) <= TOL
    np.testing.assert_allclose(p.v10, v10, rtol=0, atol=TOL)
    np.testing.assert_allclose(p.v01, v01, rtol=0, atol=TOL)
    assert abs(p.variance - var) <= TOL
    fpr, tpr, _ = roc_curve(pos, score)
    assert abs(p.auc - np.trapezoid(tpr, fpr)) <= TOL
    # Sun and Xu's midrank form: V10 = (Tz - Tx) / n, V01 = 1 - (Tz - Ty) / m.
    from scipy.stats import rankdata

    tz = rankdata(score)
    m, n = int(pos.sum()), int((~pos).sum())
    np.testing.assert_allclose(p.v10, (tz[pos] - rankdata(score[pos])) / n, rtol=0, atol=TOL)
    np.testing.assert_allclose(p.v01, 1 - (tz[~pos] - rankdata(score[~pos])) / m, rtol=0, atol=TOL)


def test_ovr_covariance_equals_the_direct_sum():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 3, 40)
    p = rng.dirichlet([1, 1, 1], 40).round(1)  # ties
    auc, cov = delong.ovr_covariance(y, p)
    d = []
    for c in range(3):
        pos = y == c
        a, v10, v01, var = _direct_placements(pos, p[:, c])
        assert abs(auc[c] - a) <= TOL and abs(cov[c, c] - var) <= TOL
        dc = np.empty(40)
        dc[pos], dc[~pos] = (v10 - a) / pos.sum(), (v01 - a) / (~pos).sum()
        d.append(dc)
    for c in range(3):
        for e in range(3):
            if c != e:
                assert abs(cov[c, e] - d[c] @ d[e]) <= TOL
    iv = delong.roc_auc_delong(y, p)
    assert abs(iv.value - ranking.roc_auc(y, p)) <= TOL
    half = 1.959963984540054 * math.sqrt(cov.sum() / 9)
    assert iv.lower == pytest.approx(iv.value - half, abs=TOL)
    assert iv.method == "DeLong"


def test_interval_shape_and_clipping():
    pos = np.array([True] * 5 + [False] * 5)
    perfect = delong.delong_interval(pos, np.arange(10, 0, -1.0))
    assert (perfect.value, perfect.lower, perfect.upper) == (1.0, 1.0, 1.0)
    near = delong.delong_interval(pos, np.array([9, 8, 7, 6, 3, 4, 5, 2, 1, 0.0]))
    assert near.upper == 1.0 and near.lower < near.value < 1.0
    logit = delong.delong_interval(
        pos, np.array([9, 8, 7, 6, 3, 4, 5, 2, 1, 0.0]), transform="logit"
    )
    assert logit.lower < logit.value < logit.upper < 1.0
    single = delong.delong_interval(np.array([True, False, False]), np.array([1.0, 0.0, 0.5]))
    assert single.method == "none" and math.isnan(single.lower)
    assert delong.delong_interval(pos, np.arange(10.0)).to_dict()["method"] == "DeLong"
    with pytest.raises(ValueError, match="transform"):
        delong.delong_interval(pos, np.arange(10.0), transform="probit")


def test_binary_and_per_class_agree_with_the_ranking_module():
    y, p = REAL["breast_cancer"]()
    iv = delong.roc_auc_delong(y, p)
    assert abs(iv.value - roc_auc_score(y, p[:, 1])) <= TOL
    assert iv.lower < iv.value < iv.upper
    y, p = REAL["digits"]()
    intervals = delong.per_class_delong(y, p)
    np.testing.assert_allclose(
        [i.value for i in intervals], ranking.per_class_roc_auc(y, p), rtol=0, atol=TOL
    )
    weighted = delong.roc_auc_delong(y, p, weighted=True)
    assert abs(weighted.value - ranking.roc_auc_weighted(y, p)) <= TOL


@pytest.mark.parametrize("transform", ["plain", "logit"])
def test_binary_coverage_on_simulated_data(transform):
    # Binormal scores: the AUC is Phi(shift / sqrt(2)).
    rng = np.random.default_rng(20140101)
    shift, m, n, reps = 1.0, 60, 40, 600
    truth = 0.5 * math.erfc(-shift / 2.0)
    hits = 0
    for _ in range(reps):
        score = np.r_[rng.normal(shift, 1.0, m), rng.normal(0.0, 1.0, n)]
        iv = delong.delong_interval(np.arange(m + n) < m, score, transform=transform)
        hits += iv.lower <= truth <= iv.upper
    # 95% nominal; binomial sd with 600 repetitions is 0.009.
    assert 0.925 <= hits / reps <= 0.975


def test_macro_coverage_on_simulated_data():
    rng = np.random.default_rng(7)
    centres = np.array([[0.0, 0.0], [1.2, 0.0], [0.0, 1.2]])

    def draw(size):
        y = rng.integers(0, 3, size)
        x = centres[y] + rng.normal(size=(size, 2))
        logits = -0.5 * ((x[:, None, :] - centres[None]) ** 2).sum(axis=2)
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        return y, p / p.sum(axis=1, keepdims=True)

    truth = ranking.roc_auc(*draw(200_000))
    reps, hits = 300, 0
    for _ in range(reps):
        iv = delong.roc_auc_delong(*draw(150))
        hits += iv.lower <= truth <= iv.upper
    assert 0.92 <= hits / reps <= 0.98


def test_delong_absent_class_left_out():
    y, p = REAL["iris"]()
    keep = y != 0
    with pytest.warns(ExcludedClassWarning):
        iv = delong.roc_auc_delong(y[keep], p[keep])
    with pytest.warns(ExcludedClassWarning):
        assert iv.value == pytest.approx(ranking.roc_auc(y[keep], p[keep]), abs=TOL)
