"""cv and tune under ``--pca``: fold statistics of rows held in memory, fold
complements from prefix and suffix merges, and fold models that score rows
projected once with the widest axes, against fits on the folds' own rows and
scikit-learn's grid search on the same folds."""

from __future__ import annotations

import numpy as np
import pytest

from nbcli.io.request import DataRequest
from nbcli.models import QuadraticDiscriminantAnalysis, registry
from nbcli.models import _projection as projection_module
from nbcli.models._projection import shared_log_proba
from nbcli.workflows import fold_statistics
from nbcli.workflows.folds import collect_fold_statistics
from nbcli.workflows.settings import FoldSettings, ScoreSettings, Search
from nbcli.workflows.tune import tune
from tests.conftest import posterior_tolerance

pytestmark = pytest.mark.numerical


@pytest.fixture(scope="module")
def digits():
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    return X[:900].astype(np.float64), y[:900]


@pytest.fixture(scope="module")
def files(tmp_path_factory, digits):
    """The digits as NPZ (row-major chunks) and CSV (column-major chunks)."""
    X, y = digits
    folder = tmp_path_factory.mktemp("digits")
    npz, csv = folder / "d.npz", folder / "d.csv"
    np.savez(npz, X=X, y=y)
    header = ",".join([f"x{j}" for j in range(X.shape[1])] + ["label"])
    np.savetxt(csv, np.column_stack([X, y]), delimiter=",", header=header, comments="", fmt="%g")
    return {"npz": npz, "csv": csv}


def _scatter(stats):
    """Class scatter matrices and means of any ClassScatter, to compare."""
    return stats.count, stats.mean, stats.scatter


@pytest.mark.parametrize("kind", ["npz", "csv"])
@pytest.mark.parametrize("limit", [64 * 40, None])
def test_held_fold_blocks_and_complements_equal_the_statistics_of_their_rows(
    files, digits, monkeypatch, kind, limit
):
    # 64 * 40: blocks of about 40 rows, several a fold and cut across the
    # chunks; None: one block a fold. Two repeats: the second repeat's folds
    # cut across the first's order of the held rows.
    if limit is not None:
        monkeypatch.setattr(fold_statistics, "_FOLD_BLOCK_VALUES", limit)
    X, y = digits
    est = QuadraticDiscriminantAnalysis(pca=10)
    fs = collect_fold_statistics(
        est,
        DataRequest.of(str(files[kind]), chunk_size=128),
        FoldSettings(n_folds=5, n_repeats=2, seed=3),
        fingerprint=False,
    )
    assert fs._chunks is not None and len(fs._chunks) > 1
    k = fs.classes.size
    codes = np.searchsorted(fs.classes, y)

    def check(got, rows):
        want = est.accumulate(X[rows], codes[rows], None, k)
        for a, b in zip(_scatter(got), _scatter(want)):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * np.abs(b).max())

    for r in range(2):
        check(fs.merged(r), np.arange(y.size))
        for f in range(5):
            check(fs.stats[r][f], np.flatnonzero(fs.folds[r] == f))
            check(fs.merged(r, f), np.flatnonzero(fs.folds[r] != f))


def test_complements_of_two_folds_from_a_fold_column_are_the_other_fold(tmp_path, digits):
    X, y = digits
    fold = np.where(np.arange(y.size) % 3 == 0, "a", "b")
    header = ",".join([f"x{j}" for j in range(X.shape[1])] + ["fold", "label"])
    path = tmp_path / "f.csv"
    lines = [header] + [
        ",".join([*(f"{v:g}" for v in X[i]), fold[i], str(y[i])]) for i in range(y.size)
    ]
    path.write_text("\n".join(lines) + "\n")
    est = QuadraticDiscriminantAnalysis(pca=10)
    fs = collect_fold_statistics(
        est,
        DataRequest.of(str(path), target="label"),
        FoldSettings(fold_column="fold"),
        fingerprint=False,
    )
    codes = np.searchsorted(fs.classes, y)
    for f, name in enumerate(fs.fold_values.tolist()):
        rows = np.flatnonzero(fold != name)
        want = est.accumulate(X[rows], codes[rows], None, fs.classes.size)
        for a, b in zip(_scatter(fs.merged(0, f)), _scatter(want)):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * np.abs(b).max())
    np.testing.assert_array_equal(fs.merged(0).count, np.bincount(codes).astype(float))


@pytest.mark.parametrize("name", ["gaussian", "lda", "qda"])
def test_models_of_one_statistics_score_rows_projected_once(digits, monkeypatch, name):
    X, y = digits
    cls = registry.get(name)
    wide = cls(pca=30).fit(X, y)
    models = [wide.with_params(pca=q) for q in (4, 12)] + [
        wide,
        cls(pca=12, standardize=True).fit(X, y),  # its own axes: scored alone
        # No projection (noise: every class's covariance of full rank).
        cls().fit(X + np.random.default_rng(0).normal(size=X.shape), y),
    ]
    calls = []
    transform = projection_module.Projection.transform

    def counted(self, rows):
        calls.append(self.n_components)
        return transform(self, rows)

    monkeypatch.setattr(projection_module.Projection, "transform", counted)
    got = shared_log_proba(models, X)
    # One projection with the widest axes for the three that share them; the
    # standardised model projects its own rows as it scores them.
    assert calls[0] == 30 and 30 not in calls[1:]
    for model, log_proba in zip(models, got):
        want = np.exp(model.predict_log_proba(X))
        if model.projection_ is None:
            tol = posterior_tolerance(model, X, want)
        else:  # the rounding of scores summed over the model's own inputs
            inner = projection_module._in_projected_space(model)
            tol = posterior_tolerance(inner, model.projection_.transform(X), want)
        assert np.all(np.abs(np.exp(log_proba) - want) <= tol)


def test_rows_projected_a_block_at_a_time_equal_one_product(digits, monkeypatch):
    X, y = digits
    model = QuadraticDiscriminantAnalysis(pca=9, standardize=True).fit(X, y)
    p = model.projection_
    want = ((X - p.centre) / p.scale) @ p.components
    monkeypatch.setattr(projection_module, "_TRANSFORM_BLOCK_VALUES", 64 * 7)
    got = p.transform(X)
    scale = np.abs((X - p.centre) / p.scale) @ np.abs(p.components)
    assert np.all(np.abs(got - want) <= 4 * X.shape[1] * np.finfo(float).eps * scale)


def test_tune_on_held_rows_picks_what_grid_search_picks_on_the_same_folds(files, digits):
    """Stratified folds of rows held in memory (not a fold column), several chunks."""
    from sklearn.decomposition import PCA
    from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis as SkQDA
    from sklearn.model_selection import GridSearchCV, PredefinedSplit
    from sklearn.pipeline import Pipeline
    from threadpoolctl import threadpool_limits

    X, y = digits
    request = DataRequest.of(str(files["npz"]), chunk_size=200)
    folds = FoldSettings(n_folds=4, seed=5)
    grid = {"pca": [4, 8, 16], "reg_param": [0.0, 0.05]}
    report, _ = tune(
        QuadraticDiscriminantAnalysis(),
        request,
        Search(grid=grid),
        folds,
        ScoreSettings(bootstrap=0),
    )
    plan = collect_fold_statistics(QuadraticDiscriminantAnalysis(pca=4), request, folds).folds[0]
    sizes = np.bincount(plan)
    assert sizes.max() - sizes.min() <= 10  # near-equal folds: pooled and mean log-loss agree
    with threadpool_limits(1):
        search = GridSearchCV(
            Pipeline([("pca", PCA(svd_solver="full")), ("qda", SkQDA())]),
            {"pca__n_components": grid["pca"], "qda__reg_param": grid["reg_param"]},
            scoring="neg_log_loss",
            cv=PredefinedSplit(plan),
        ).fit(X, y)
    chosen = search.best_params_
    assert report.best["params"] == {
        "pca": chosen["pca__n_components"],
        "reg_param": chosen["qda__reg_param"],
    }
