"""Rows held by fold, merged statistics and lean tune rows give what they replace.

``cv`` keeps the rows of a file that fits in memory grouped by fold (a
column-major chunk reordered in place); a fold's statistics and scores must
be those of the same rows read again from the file, in every repeat and
chunk. ``tune`` keeps in each combination's row only what a search
compares, with the intervals it states.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from nbcli.io.request import DataRequest
from nbcli.models import MODELS
from nbcli.reports.ranking import threshold_counts
from nbcli.reports.tuning import RESULT_KEYS, TUNING_SCHEMA, result_keys
from nbcli.workflows.folds import collect_fold_statistics
from nbcli.workflows.settings import FoldSettings, ScoreSettings, Search
from nbcli.workflows.tune import tune
from tests.conftest import nbcli_in_process
from tests.declared import grid_number
from tests.test_reports import validate

# Run again under other BLAS kernels by .ci/run.
pytestmark = pytest.mark.numerical


def _table(tmp_path, n=240, d=5, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    X = rng.normal(size=(n, d)) + 0.7 * y[:, None]
    names = [f"x{j}" for j in range(d)]
    lines = [",".join(names + ["label"])]
    lines += [",".join([repr(float(v)) for v in X[i]] + [f"k{y[i]}"]) for i in range(n)]
    path = tmp_path / "t.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("model", ["gaussian", "qda", "lda"])
def test_rows_held_by_fold_score_as_rows_read_again(tmp_path, model):
    path = str(_table(tmp_path))
    # The model's first searchable number: its default (0 where it has none), and 0.3.
    spec = grid_number(MODELS[model])
    sets = [{spec.name: spec.default or 0.0}, {spec.name: 0.3}]
    read = DataRequest(chunk_size=70)  # four chunks, folds cut across them
    kept = collect_fold_statistics(
        MODELS[model](), read.reading(data=(path,)), FoldSettings(n_folds=4, n_repeats=3)
    )
    again = collect_fold_statistics(
        MODELS[model](),
        read.reading(data=(path,)),
        FoldSettings(n_folds=4, n_repeats=3, memory_budget=0),
    )
    assert kept.plan["passes"] == 1 and again.plan["passes"] == 2  # labels, then statistics
    # Held rows are summed chunk run by chunk run, rows read again in blocks
    # of several runs: the same terms in another grouping, so the sums agree
    # to rounding (a few units in the last place of values of order 1-100).
    for a, b in zip(kept.out_of_fold(sets), again.out_of_fold(sets)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    assert again.plan["passes"] == 3
    for r in range(3):
        for f in range(4):
            ka, kb = kept.merged(r, f), again.merged(r, f)
            for name, value in ka.arrays().items():
                np.testing.assert_allclose(value, kb.arrays()[name], rtol=1e-12, atol=1e-9)
    # The merge is kept, and each caller gets read-only views of it (no copy
    # of the sums): writing into them fails instead of changing the kept ones.
    first = kept.merged(1, 2)
    with pytest.raises(ValueError, match="read-only"):
        first.count[:] = -1.0
    assert (kept.merged(1, 2).count > 0).all()
    assert np.shares_memory(first.count, kept.merged(1, 2).count)


def test_unstable_sort_gives_the_stable_counts():
    rng = np.random.default_rng(4)
    score = np.round(rng.random(5000), 2)  # a hundred values: long runs of ties
    positive = rng.random(5000) < score
    fps, tps, thresholds = threshold_counts(positive, score)
    order = np.argsort(score, kind="stable")[::-1]
    y = positive[order].astype(float)
    last = np.r_[np.flatnonzero(np.diff(score[order])), score.size - 1]
    np.testing.assert_array_equal(tps, np.cumsum(y)[last])
    np.testing.assert_array_equal(fps, 1 + last - np.cumsum(y)[last])
    np.testing.assert_array_equal(thresholds, score[order][last])


def test_tune_rows_hold_what_the_search_compares(tmp_path):
    path = str(_table(tmp_path))
    grid = {"var_smoothing": [1e-9, 0.1]}
    report, _ = tune(
        MODELS["gaussian"](),
        DataRequest.of(path),
        Search(grid, "accuracy"),
        FoldSettings(n_folds=4),
        ScoreSettings(bootstrap=50),
    )
    assert validate(report.to_dict(), TUNING_SCHEMA) == []
    for r in report.results:
        assert tuple(r.metrics) == RESULT_KEYS
        assert r.metrics["log_loss"].method == "normal"
        assert r.metrics["accuracy"].method in ("BCa", "percentile")
        assert r.metrics["log_loss"].lower < r.metrics["log_loss"].value
    ranked, _ = tune(
        MODELS["gaussian"](),
        DataRequest.of(path),
        Search(grid, "roc_auc"),
        FoldSettings(n_folds=4),
        ScoreSettings(bootstrap=0),
    )
    assert tuple(ranked.results[0].metrics) == result_keys("roc_auc")
    assert "average_precision" in ranked.results[0].metrics
    # The same values, whichever metric the search is on.
    for a, b in zip(report.results, ranked.results):
        for key in RESULT_KEYS:
            assert a.metrics[key].value == b.metrics[key].value


def test_tune_table_names_its_interval(tmp_path):
    path = _table(tmp_path)
    run = nbcli_in_process(
        "tune",
        "-m",
        "gaussian",
        "-d",
        path,
        "--folds",
        "4",
        "--var-smoothing",
        "1e-9,0.1",
        "--bootstrap",
        "100",
        "--json",
        "-",
    )
    assert run.returncode == 0, run.stderr
    assert "normal approximation" in run.stderr
    doc = json.loads(run.stdout)
    assert doc["results"][0]["metrics"]["brier"]["method"] == "normal"
    assert "roc_auc" not in doc["results"][0]["metrics"]
