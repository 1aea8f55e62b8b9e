"""The scores of a cv fold and a tune combination are evaluate's, computed lean.

``selection_scores`` skips the parts of an evaluation report a fold or a
combination does not show; its point estimates must still be exactly
``build_evaluation``'s, and its intervals the cheap ones it states.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbcli.reports.evaluation import METRIC_KEYS, build_evaluation
from nbcli.reports.metrics import encode_labels
from nbcli.reports.ranking import ranking_estimates, roc_auc, roc_auc_weighted
from nbcli.reports.selection_scores import CHEAP_KEYS, normal_mean_interval, selection_scores


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


def _posteriors(rng, n, k, decimals):
    y = rng.integers(0, k, n)
    logits = rng.normal(size=(n, k)) + 1.5 * np.eye(k)[y]
    logits = np.round(logits, decimals)  # coarse values: ties in every column
    p = np.exp(logits)
    return y, p / p.sum(axis=1, keepdims=True)


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(1, 400),
    k=st.integers(2, 5),
    decimals=st.integers(0, 3),
    unseen=st.booleans(),
    missing_class=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_point_estimates_are_those_of_the_evaluation(n, k, decimals, unseen, missing_class, seed):
    rng = np.random.default_rng(seed)
    y, p = _posteriors(rng, n, k, decimals)
    labels = y.astype(object)
    if missing_class:
        labels[labels == k - 1] = 0  # a class of the model with no test row
    if unseen:
        labels[rng.random(n) < 0.2] = "never seen"
    classes = np.arange(k)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = build_evaluation(classes, labels, p, n_resamples=0)
    scores = selection_scores(encode_labels(classes, labels), p)
    assert list(scores) == list(METRIC_KEYS)
    for key in METRIC_KEYS:
        assert _same(scores[key].value, ev.metrics[key].value), key
        assert scores[key].method == "none"


def test_ranking_estimates_equal_the_separate_functions_with_many_classes():
    rng = np.random.default_rng(3)
    y, p = _posteriors(rng, 3000, 60, 1)
    y[y == 7] = 8  # class 7 has no rows: left out of the averages
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = ranking_estimates(y, p)
        ev = build_evaluation(np.arange(60), y, p, n_resamples=0)
        assert est["roc_auc"] == roc_auc(y, p)
        assert est["roc_auc_weighted"] == roc_auc_weighted(y, p)
    assert est["average_precision"] == ev.metrics["average_precision"].value
    assert math.isfinite(est["roc_auc"])


def test_intervals_are_evaluates_for_counts_and_normal_for_losses():
    rng = np.random.default_rng(7)
    y, p = _posteriors(rng, 5000, 3, 6)
    classes = np.arange(3)
    ev = build_evaluation(classes, y, p, n_resamples=200, seed=11)
    scores = selection_scores(encode_labels(classes, y), p, n_resamples=200, seed=11)
    assert list(scores) == list(METRIC_KEYS)
    for key in ("accuracy", "balanced_accuracy", "macro_f1", "cohen_kappa"):
        assert scores[key] == ev.metrics[key]  # the same draws, the same BCa interval
    for key in ("log_loss", "brier"):
        iv = scores[key]
        assert iv.method == "normal" and iv.value == ev.metrics[key].value
        # Near the bootstrap's interval at this size, though not equal to it.
        ref = ev.metrics[key]
        assert iv.lower < iv.value < iv.upper
        assert abs(iv.lower - ref.lower) < 0.25 * (ref.upper - ref.lower)
        assert abs(iv.upper - ref.upper) < 0.25 * (ref.upper - ref.lower)
    for key in ("roc_auc", "roc_auc_weighted", "average_precision"):
        assert scores[key].method == "none" and scores[key].value == ev.metrics[key].value
    lean = selection_scores(encode_labels(classes, y), p, ranking=False, n_resamples=200)
    assert list(lean) == list(CHEAP_KEYS)


def test_normal_interval_of_a_mean():
    values = np.array([0.0, 0.0, 0.0, 4.0])
    iv = normal_mean_interval(values, 0.95)
    half = 1.959963984540054 * 2.0 / 2.0  # z * s / sqrt(n), s = 2
    assert iv.value == 1.0
    assert iv.upper == pytest.approx(1.0 + half, rel=1e-12)
    assert iv.lower == 0.0  # 1 - 1.96 < 0: a loss is not negative
    assert normal_mean_interval(np.array([0.3]), 0.95).method == "none"
