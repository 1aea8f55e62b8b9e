"""ROC AUC, weighted ROC AUC and average precision over parts equal the one-file figures.

The part-wise figures come from bucket counts and, in a second pass, the
distinct scores of the buckets that hold a positive
(:mod:`nbcli.engines.ranking_sums`); their DeLong intervals from the runs and,
with three or more classes, a third pass for the covariance of the class AUCs.
The command-line tests take that path on small files by lowering the size up
to which an evaluation over parts gathers the rows (``EXACT_VALUES``): as for
a large data set, the parts then send sums.
"""

from __future__ import annotations

import json
from io import StringIO

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbcli.engines._reduce import column_ranges
from nbcli.engines.ranking_sums import (
    BucketCounts,
    LevelCounts,
    class_figures,
    column_figures,
    contributions,
    runs,
)
from nbcli.reports.delong import ovr_covariance, roc_auc_delong
from nbcli.reports.ranking import average_precision, roc_auc, roc_auc_weighted
from nbcli.reports.ranking_columns import rank_column
from tests.conftest import nbcli_in_process

# Sums of the same terms in another order: well below 1e-12 for figures in [0, 1].
TOL = 1e-12


def _in_parts(codes, proba, cuts):
    """The part-wise figures of ``proba`` cut at ``cuts``, merged in order."""
    edges = [0, *cuts, len(codes)]
    pieces = [(codes[a:b], proba[a:b]) for a, b in zip(edges[:-1], edges[1:])]
    buckets = BucketCounts.of(*pieces[0])
    for piece in pieces[1:]:
        buckets = buckets.merge(BucketCounts.of(*piece))
    shared = buckets.positive > 0
    levels = LevelCounts.of(*pieces[0], shared)
    for piece in pieces[1:]:
        levels = levels.merge(LevelCounts.of(*piece, shared))
    return buckets, levels, pieces


@settings(max_examples=60, deadline=None)
@given(
    st.integers(2, 4),
    st.integers(2, 300),
    st.integers(1, 40),
    st.lists(st.floats(0.0, 1.0), min_size=0, max_size=4),
    st.integers(0, 2**31 - 1),
)
def test_runs_from_parts_give_the_one_sort_figures(k, n, levels_count, cut_at, seed):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, k, n)
    # Few distinct values: ties within and across parts, and ties across buckets' edges.
    grid = np.sort(rng.random(levels_count)) ** rng.integers(1, 30)
    raw = grid[rng.integers(0, levels_count, (n, k))]
    proba = raw / raw.sum(axis=1, keepdims=True).clip(1e-300)
    cuts = sorted({int(c * n) for c in cut_at})
    buckets, levels, _ = _in_parts(codes, proba, cuts)
    for c in range(k):
        got = column_figures(*runs(buckets, levels, c))
        want = rank_column(codes == c, proba[:, c])
        for name in ("auc", "average_precision", "variance"):
            g, w = getattr(got, name), getattr(want, name)
            assert (np.isnan(g) and np.isnan(w)) or abs(g - w) <= TOL, (name, g, w)


def test_the_covariance_of_the_class_aucs_is_delongs():
    rng = np.random.default_rng(5)
    n, k = 500, 4
    codes = rng.integers(0, k, n)
    logits = rng.normal(size=(n, k)) + 1.5 * np.eye(k)[codes]
    proba = np.exp(np.round(logits, 1))  # rounded: tied scores
    proba /= proba.sum(axis=1, keepdims=True)
    buckets, levels, pieces = _in_parts(codes, proba, [1, 120, 121, 400])
    share = contributions(buckets, levels)
    cross = sum(share.of(*piece) for piece in pieces)
    auc, covariance = ovr_covariance(codes, proba)
    off = ~np.eye(k, dtype=bool)
    np.testing.assert_allclose(cross[off], covariance[off], rtol=1e-9, atol=TOL)


def _json(*args):
    run = nbcli_in_process(*args)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


@pytest.fixture
def sums_from_parts(monkeypatch):
    """Evaluations over parts reduce the parts to sums, however few their rows."""
    import nbcli.reports.means

    monkeypatch.setattr(nbcli.reports.means, "EXACT_VALUES", 0)


def _split(frame, folder, cuts):
    folder.mkdir()
    edges = [0, *cuts, len(frame)]
    for i, (a, b) in enumerate(zip(edges[:-1], edges[1:])):
        frame.iloc[a:b].to_csv(folder / f"p{i}.csv", index=False)
    return folder


def _case(tmp_path, frame, model, target):
    one = tmp_path / "test.csv"
    frame.to_csv(one, index=False)
    folder = _split(frame, tmp_path / "parts", [1, len(frame) // 3, len(frame) // 3 + 1])
    mfile = tmp_path / "m.npz"
    run = nbcli_in_process("fit", "-m", model, "-d", one, "--target", target, "-o", mfile, "-q")
    assert run.returncode == 0, run.stderr
    pred = nbcli_in_process("predict", "-m", mfile, "-d", one, "--proba", "-q")
    out = pd.read_csv(StringIO(pred.stdout))
    names = [c for c in out if c.startswith("proba_")]
    proba = out[names].to_numpy()
    labels = [c.removeprefix("proba_") for c in names]
    codes = np.array([labels.index(str(v)) for v in frame[target]])
    return one, folder, mfile, codes, proba


def _check(whole, by_part, codes, proba):
    k = proba.shape[1]
    for name, figure in (
        ("roc_auc", roc_auc),
        ("roc_auc_weighted", roc_auc_weighted),
        ("average_precision", average_precision),
    ):
        value = by_part["metrics"][name]["value"]
        assert value == pytest.approx(whole["metrics"][name]["value"], rel=0, abs=TOL), name
        assert value == pytest.approx(figure(codes, proba), rel=0, abs=TOL), name
    for weighted, name in ((False, "roc_auc"), (True, "roc_auc_weighted")):
        want = roc_auc_delong(codes, proba, weighted=weighted)
        got = by_part["metrics"][name]
        assert got["method"] == "DeLong"
        assert got["lower"] == pytest.approx(want.lower, rel=0, abs=1e-10)
        assert got["upper"] == pytest.approx(want.upper, rel=0, abs=1e-10)
    assert by_part["metrics"]["average_precision"]["method"] == "none"
    for a, b in zip(by_part["per_class"][:k], whole["per_class"][:k]):
        assert a["roc_auc"] == pytest.approx(b["roc_auc"], rel=0, abs=TOL)


@pytest.mark.parametrize("which", ["iris", "breast_cancer"])
def test_evaluate_over_parts_gives_the_one_file_ranking_figures(tmp_path, which, sums_from_parts):
    frame = pd.read_csv(f"sample_data/{which}_test.csv")
    target = frame.columns[-1]
    one, folder, model, codes, proba = _case(tmp_path, frame, "gaussian", target)
    args = ("evaluate", "-m", model, "--json", "-", "-q", "--bootstrap", "100")
    _check(_json(*args, "-d", one), _json(*args, "-d", folder), codes, proba)


def test_tied_posteriors_of_a_categorical_model_over_parts(tmp_path, sums_from_parts):
    from palmerpenguins import load_penguins

    frame = load_penguins()[["island", "sex", "year", "species"]]
    frame = frame.sample(frac=1.0, random_state=2).reset_index(drop=True)
    one, folder, model, codes, proba = _case(tmp_path, frame, "categorical", "species")
    assert len(np.unique(proba[:, 0])) < len(frame) / 5  # many ties
    args = ("evaluate", "-m", model, "--json", "-", "-q", "--bootstrap", "100")
    _check(_json(*args, "-d", one), _json(*args, "-d", folder), codes, proba)


@pytest.mark.dask
def test_evaluate_on_dask_gives_the_one_file_ranking_figures(tmp_path, sums_from_parts):
    pytest.importorskip("distributed")
    from distributed import LocalCluster

    frame = pd.read_csv("sample_data/wine_test.csv")
    one, folder, model, codes, proba = _case(tmp_path, frame, "gaussian", frame.columns[-1])
    args = ("evaluate", "-m", model, "--json", "-", "-q", "--bootstrap", "100")
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0", silence_logs=50
    ) as cluster:
        dask = _json(
            *args, "-d", folder, "--engine", "dask", "--scheduler", cluster.scheduler_address
        )
    _check(_json(*args, "-d", one), dask, codes, proba)


def test_class_ranges_give_the_figures_of_all_classes_at_once():
    # Four classes in ranges of one, two and three classes; the third class has
    # no positive in the first part and ties run across the parts' borders.
    rng = np.random.default_rng(5)
    n, k = 400, 4
    proba = rng.dirichlet(np.ones(k), n).round(2)
    proba /= proba.sum(axis=1, keepdims=True)
    codes = rng.integers(0, k, n)
    codes[:150][codes[:150] == 2] = 0
    buckets, levels, pieces = _in_parts(codes, proba, [150, 151, 300])
    shared = buckets.positive > 0
    per_part = [LevelCounts.of(c, p, shared) for c, p in pieces]
    assert buckets.positive[2].sum() > 0
    assert BucketCounts.of(*pieces[0]).positive[2].sum() == 0
    want = [column_figures(*runs(buckets, levels, c)) for c in range(k)]
    for n_ranges in (1, 2, 3, 4):
        got = []
        for lo, hi in column_ranges(k, n_ranges):
            got += class_figures(lo, hi, [x.columns(lo, hi) for x in per_part], buckets)
        for a, b in zip(got, want):
            for field in ("auc", "average_precision", "variance"):
                assert getattr(a, field) == pytest.approx(getattr(b, field), rel=0, abs=TOL)
            assert (a.n_positive, a.n_negative) == (b.n_positive, b.n_negative)


@pytest.mark.dask
@pytest.mark.parametrize(
    ("which", "bootstrap"), [("breast_cancer", "100"), ("wine", "0")], ids=["2-classes", "3-no-cis"]
)
def test_evaluate_on_dask_merges_the_levels_by_range_of_classes(
    tmp_path, sums_from_parts, which, bootstrap
):
    # Two classes with DeLong's interval, or three without intervals: the levels
    # are merged on the workers, one range of classes each, and only figures travel.
    pytest.importorskip("distributed")
    from distributed import LocalCluster

    frame = pd.read_csv(f"sample_data/{which}_test.csv")
    one, folder, model, codes, proba = _case(tmp_path, frame, "gaussian", frame.columns[-1])
    args = ("evaluate", "-m", model, "--json", "-", "-q", "--bootstrap", bootstrap)
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=":0", silence_logs=50
    ) as cluster:
        dask = _json(
            *args, "-d", folder, "--engine", "dask", "--scheduler", cluster.scheduler_address
        )
    whole = _json(*args, "-d", one)
    # With resamples, a one-file evaluation of so few rows bootstraps its intervals:
    # the part-wise DeLong intervals are checked against DeLong's on the rows.
    if bootstrap != "0":
        _check(whole, dask, codes, proba)
    for name in ("roc_auc", "roc_auc_weighted", "average_precision"):
        got, want = dask["metrics"][name], whole["metrics"][name]
        assert got["value"] == pytest.approx(want["value"], rel=0, abs=TOL), name
        if bootstrap == "0":
            assert got["lower"] is None and want["lower"] is None, name
    for a, b in zip(dask["per_class"], whole["per_class"]):
        assert a["roc_auc"] == pytest.approx(b["roc_auc"], rel=0, abs=TOL)
