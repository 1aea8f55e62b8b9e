"""The engine interface on the local engine: merge tree, fits from parts, maps, sums.

The Dask engine's own tests (tests/test_engine_dask.py) check that it gives
the same results as these.
"""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import nbcli.engines as engines
from nbcli.engines import open_engine, require_dask, tree_pairs, tree_reduce
from nbcli.engines.sums import evaluation_sums
from nbcli.errors import NbcliError
from nbcli.reports.metrics import brier_score, confusion_matrix, log_loss
from nbcli.reports.reliability import reliability_diagram, top_class_confidence
from tests.engine_parts import (
    ESTIMATORS,
    BadRowError,
    make_data,
    predict_part,
    read_part,
    write_parts,
)

# Run again under other BLAS kernels by .ci/run.
pytestmark = pytest.mark.numerical


def test_tree_is_fixed_by_the_number_of_parts():
    assert tree_pairs(1) == []
    assert tree_pairs(6) == [[(0, 1), (2, 3), (4, 5)], [(0, 1), (2, -1)], [(0, 1)]]
    # String concatenation shows the shape: ((p0 p1)(p2 p3))(p4 p5).
    assert tree_reduce(list("abcdef"), lambda a, b: f"({a}{b})") == "(((ab)(cd))(ef))"
    assert tree_reduce(list("abcde"), lambda a, b: f"({a}{b})") == "(((ab)(cd))e)"
    with pytest.raises(ValueError, match="no parts"):
        tree_reduce([], lambda a, b: a)


@given(st.integers(1, 40))
def test_tree_uses_every_value_once_in_order(n):
    assert tree_reduce([[i] for i in range(n)], lambda a, b: a + b) == list(range(n))


@pytest.mark.parametrize("model", sorted(ESTIMATORS))
def test_local_fit_from_parts_equals_one_fit(tmp_path, model):
    X, y = make_data(ESTIMATORS[model](), sum((37, 1, 120, 64, 15, 83)), seed=3)
    parts = write_parts(tmp_path, X, y, fmt="mixed")
    est = ESTIMATORS[model]()
    with open_engine("local") as engine:
        stats = engine.fit_statistics(parts, read_part, est)
    fitted = stats.to_estimator(est)
    one = ESTIMATORS[model]().fit(X, y)
    assert stats.n_rows == len(y)
    np.testing.assert_array_equal(fitted.classes_, one.classes_)
    Xt, _ = make_data(ESTIMATORS[model](), 50, seed=9)
    np.testing.assert_allclose(fitted.predict_proba(Xt), one.predict_proba(Xt), rtol=0, atol=1e-12)
    # The estimator given is a template only: it stays unfitted.
    assert not hasattr(est, "stats_")


def test_joblib_gives_the_same_bits_as_sequential(tmp_path):
    X, y = make_data(ESTIMATORS["qda"](), 320, seed=4)
    parts = write_parts(tmp_path, X, y)
    seq = open_engine("local").fit_statistics(parts, read_part, ESTIMATORS["qda"]())
    par = open_engine("local", n_jobs=2).fit_statistics(parts, read_part, ESTIMATORS["qda"]())
    for name, a in seq.stats.arrays().items():
        np.testing.assert_array_equal(a, par.stats.arrays()[name])


def test_parts_missing_classes_and_empty_parts_merge(tmp_path):
    X, y = make_data(ESTIMATORS["gaussian"](), 60, seed=5)
    order = np.argsort(y, kind="stable")  # each part sees one or two classes
    X, y = X[order], y[order]
    parts = write_parts(tmp_path, X, y, sizes=(20, 0, 20, 20))
    stats = open_engine("local").fit_statistics(parts, read_part, ESTIMATORS["gaussian"]())
    one = ESTIMATORS["gaussian"]().fit(X, y)
    np.testing.assert_allclose(
        stats.to_estimator(ESTIMATORS["gaussian"]()).predict_proba(X),
        one.predict_proba(X),
        atol=1e-12,
        rtol=0,
    )


def test_bad_part_raises_its_own_error(tmp_path):
    X, y = make_data(ESTIMATORS["gaussian"](), 320, seed=6)
    parts = write_parts(tmp_path, X, y)
    lines = open(parts[3]).read().splitlines()
    lines[5] = lines[5].replace(",", ",oops", 1)
    open(parts[3], "w").write("\n".join(lines))
    with pytest.raises(BadRowError, match=r"part-03\.csv: row 5: a cell is not a number"):
        open_engine("local").fit_statistics(parts, read_part, ESTIMATORS["gaussian"]())


def test_map_write_reports_a_failing_part_and_writes_the_others(tmp_path):
    X, y = make_data(ESTIMATORS["lda"](), 320, seed=7)
    parts = write_parts(tmp_path, X, y)
    open(parts[2], "a").write("\n1,2,x,4\n")
    model = ESTIMATORS["lda"]().fit(X, y)
    outcomes = open_engine("local").map_write(parts, predict_part, model)
    assert [o.ok for o in outcomes] == [True, True, False, True, True, True]
    assert "part-02.csv: row 121" in outcomes[2].error
    assert [o.value for o in outcomes if o.ok] == [37, 1, 64, 15, 83]
    assert not (tmp_path / "part-02.pred.csv").exists()
    got = np.loadtxt(tmp_path / "part-05.pred.csv", delimiter=",")
    np.testing.assert_array_equal(got, model.predict_proba(X[-83:]))


def test_open_engine_refuses_bad_options():
    with pytest.raises(NbcliError, match="unknown engine 'spark'"):
        open_engine("spark")
    with pytest.raises(NbcliError, match="--scheduler, --workers only apply with --engine dask"):
        open_engine("local", scheduler="tcp://h:8786", workers=2)
    with pytest.raises(NbcliError, match="size a local cluster"):
        open_engine("dask", scheduler="tcp://h:8786", workers=2)


def test_missing_dask_says_how_to_install(monkeypatch):
    real = engines.importlib.util.find_spec
    monkeypatch.setattr(
        engines.importlib.util,
        "find_spec",
        lambda name, *a: None if name == "distributed" else real(name, *a),
    )
    with pytest.raises(NbcliError) as info:
        require_dask()
    message = str(info.value)
    assert message == (
        "--engine dask needs distributed, which is not installed: pip install 'nbcli[dask]'"
    )
    assert "\n" not in message and info.value.exit_code == 2
    with pytest.raises(NbcliError, match="nbcli\\[dask\\]"):
        open_engine("dask")


def test_nothing_of_dask_is_imported_on_the_local_path(tmp_path):
    code = (
        "import sys, nbcli, nbcli.engines, nbcli.engines.sums\n"
        "from nbcli.engines import open_engine\n"
        "e = open_engine('local')\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.strip() == "[]"


# -- evaluation sums -----------------------------------------------------------


def _scored(n, k=4, seed=0):
    rng = np.random.default_rng(seed)
    return rng.dirichlet(np.ones(k) * 0.7, size=n), rng.integers(0, k + 1, n)


def test_evaluation_sums_give_the_local_metrics():
    proba, t = _scored(3000)
    edges = np.linspace(0.0, 1.0, 11)
    sizes = [700, 0, 1300, 1000]
    bounds = np.cumsum([0] + sizes)
    chunks = [
        evaluation_sums(proba[a:b], t[a:b], 5, edges=edges) for a, b in zip(bounds[:-1], bounds[1:])
    ]
    total = tree_reduce(chunks, lambda a, b: a + b)
    known = t < 4
    assert total.n_rows == 3000 and total.n_scored == known.sum() < 3000
    np.testing.assert_array_equal(total.confusion, confusion_matrix(t, proba.argmax(1), 5))
    assert total.log_loss == pytest.approx(log_loss(proba[known], t[known]), rel=1e-13)
    assert total.brier_score == pytest.approx(brier_score(proba[known], t[known]), rel=1e-13)
    conf, hit = top_class_confidence(proba[known], t[known])
    assert total.ece() == pytest.approx(reliability_diagram(conf, hit, edges).ece, rel=1e-12)
    # The losses by bin: the scored rows, and their mean.
    assert total.log_loss_bins.n == total.brier_bins.n == known.sum()
    assert total.log_loss_bins.mean() == pytest.approx(total.log_loss, rel=1e-13)
    assert total.brier_bins.mean() == pytest.approx(total.brier_score, rel=1e-13)


def test_local_sum_over_parts_gives_the_one_file_losses(tmp_path):
    X, y = make_data(ESTIMATORS["gaussian"](), 320, seed=8)
    parts = write_parts(tmp_path, X, y)
    model = ESTIMATORS["gaussian"]().fit(X, y)
    edges = np.linspace(0, 1, 11)
    a = open_engine("local").sum_over_parts(parts, _part_sums, (model, edges))
    assert a.log_loss == pytest.approx(log_loss(model.predict_proba(X), y), rel=1e-13)
    assert a.n_rows == a.n_scored == 320


def _part_sums(index, path, shared):
    model, edges = shared
    out = None
    for X, y in read_part(path):
        s = evaluation_sums(
            model.predict_proba(X),
            np.searchsorted(model.classes_, y),
            len(model.classes_),
            edges=edges,
        )
        out = s if out is None else out + s
    return out


@settings(max_examples=25, deadline=None)
@given(
    st.lists(st.integers(0, 299), min_size=1, max_size=8),
    st.randoms(use_true_random=False),
    st.sampled_from(["gaussian", "qda", "multinomial"]),
)
def test_any_split_in_any_order_is_one_fit(cuts, rnd, name):
    X, y = make_data(ESTIMATORS[name](), 300, seed=12)
    bounds = sorted({0, 300, *cuts})
    pieces = [(X[a:b], y[a:b]) for a, b in zip(bounds, bounds[1:])]
    rnd.shuffle(pieces)
    stats = open_engine("local").fit_statistics(
        list(range(len(pieces))), lambda i: [pieces[i]], ESTIMATORS[name]()
    )
    model = stats.to_estimator(ESTIMATORS[name]())
    one = ESTIMATORS[name]().fit(X, y)
    np.testing.assert_allclose(model.predict_proba(X), one.predict_proba(X), rtol=0, atol=1e-12)


def test_an_empty_chunk_adds_nothing():
    edges = np.linspace(0, 1, 6)
    empty = evaluation_sums(np.zeros((0, 3)), np.zeros(0, int), 3, edges=edges)
    proba, t = _scored(40, k=3)
    full = evaluation_sums(proba, t.clip(max=2), 3, edges=edges)
    both = empty + full
    assert both.n_rows == 40 and empty.n_rows == 0
    np.testing.assert_array_equal(both.confusion, full.confusion)
    np.testing.assert_array_equal(both.log_loss_bins.sums, full.log_loss_bins.sums)
    assert math.isnan(empty.log_loss)
