"""PCA and standardisation inside the model (``pca=``, ``standardize=``): digits
against scikit-learn's pipelines, chunked and part-wise fits, model files, the
command line (fit, tune, inspect) and its refusals."""

from __future__ import annotations

import importlib
import json
import os

import numpy as np
import pytest

from nbcli.io.modelfile import ModelFile, load_model, save_model
from nbcli.models import registry
from tests.conftest import nbcli_in_process, posterior_tolerance

pytestmark = pytest.mark.numerical

# The models that declare the projection settings (and a scikit-learn equivalent).
PROJECTED = sorted(
    name
    for name, cls in registry.model_classes().items()
    if {"pca", "standardize"} <= {s.name for s in cls.hyperparameters} and cls.sklearn_equivalent
)


def _sklearn(name, **params):
    module, _, attr = registry.get(name).sklearn_equivalent.rpartition(".")
    return getattr(importlib.import_module(module), attr)(**params)


@pytest.fixture(scope="module")
def digits():
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    return X.astype(np.float64), y


def _projected_type(name):
    return registry.get(name)


def test_the_projected_models_are_declared():
    assert PROJECTED == sorted(["gaussian", "lda", "qda"])


@pytest.mark.parametrize("name", PROJECTED)
@pytest.mark.parametrize("pca", [12, 0.8])
def test_digits_agree_with_a_pca_pipeline(digits, name, pca):
    """Pipeline(PCA, model): the same predictions; scikit-learn's model on the
    rows nbcli's stored projection gives: nbcli's posteriors to 1e-8."""
    from sklearn.decomposition import PCA
    from sklearn.pipeline import make_pipeline

    X, y = digits
    ours = registry.get(name)(pca=pca).fit(X, y)
    theirs = make_pipeline(PCA(pca, svd_solver="full"), _sklearn(name)).fit(X, y)
    pca_step = theirs[0]
    projection = ours.projection_
    assert projection.n_components == pca_step.n_components_
    np.testing.assert_allclose(
        projection.explained_variance, pca_step.explained_variance_, rtol=1e-9
    )
    np.testing.assert_allclose(
        projection.explained_variance_ratio, pca_step.explained_variance_ratio_, rtol=1e-9
    )
    # Axes are those of PCA up to each one's sign.
    cosines = np.abs(np.sum(projection.components * pca_step.components_.T, axis=0))
    np.testing.assert_allclose(cosines, 1.0, atol=1e-8)
    agree = np.mean(ours.predict(X) == theirs.predict(X))
    assert agree >= 0.999
    Z = projection.transform(X)
    np.testing.assert_allclose(Z, (X - X.mean(axis=0)) @ projection.components, atol=1e-9)
    on_ours = _sklearn(name).fit(Z, y)
    np.testing.assert_allclose(ours.predict_proba(X), on_ours.predict_proba(Z), rtol=0, atol=1e-8)


def test_large_inputs_scored_in_parallel_blocks_are_projected_once(digits):
    """Blocks of many rows are scored by a thread pool: each projected, none twice."""
    X, y = digits
    for name in PROJECTED:
        model = registry.get(name)(pca=10).fit(X, y)
        many = np.tile(X, (40, 1))
        np.testing.assert_array_equal(model.predict(many), np.tile(model.predict(X), 40))


def test_each_axis_has_its_largest_entry_positive(digits):
    X, y = digits
    P = registry.get("qda")(pca=30).fit(X, y).projection_.components
    biggest = P[np.argmax(np.abs(P), axis=0), np.arange(P.shape[1])]
    assert np.all(biggest > 0)
    # Unit, orthogonal columns.
    np.testing.assert_allclose(P.T @ P, np.eye(30), atol=1e-12)


@pytest.mark.parametrize(
    "name, params",
    [
        ("gaussian", {}),
        ("gaussian", {"var_smoothing": 1e-3}),
        ("lda", {}),
        ("lda", {"shrinkage": 0.3, "solver": "lsqr"}),
        ("lda", {"shrinkage": "auto", "solver": "lsqr"}),
        ("qda", {"reg_param": 0.2}),
        ("qda", {"shrinkage": 0.2, "solver": "eigen"}),
    ],
)
def test_standardize_equals_a_standard_scaler_pipeline(digits, name, params):
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = digits
    ours = registry.get(name)(standardize=True, **params).fit(X, y)
    theirs = make_pipeline(StandardScaler(), _sklearn(name, **params)).fit(X, y)
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), rtol=0, atol=1e-10)
    # Constant columns (digits has some) keep a scale of 1, as StandardScaler's.
    np.testing.assert_allclose(ours.projection_.scale, theirs[0].scale_, rtol=1e-12)
    np.testing.assert_array_equal(ours.projection_.scale == 1, theirs[0].scale_ == 1)


def test_standardize_then_pca_equals_the_three_step_pipeline(digits):
    from sklearn.decomposition import PCA
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    X, y = digits
    ours = registry.get("qda")(standardize=True, pca=15, reg_param=0.01).fit(X, y)
    theirs = make_pipeline(
        StandardScaler(), PCA(15, svd_solver="full"), _sklearn("qda", reg_param=0.01)
    ).fit(X, y)
    assert np.mean(ours.predict(X) == theirs.predict(X)) >= 0.999
    Z = ours.projection_.transform(X)
    on_ours = _sklearn("qda", reg_param=0.01).fit(Z, y)
    np.testing.assert_allclose(ours.predict_proba(X), on_ours.predict_proba(Z), atol=1e-8)


@pytest.mark.parametrize("name", PROJECTED)
def test_chunks_parts_and_online_learning_equal_one_fit(digits, name):
    X, y = digits
    cls = registry.get(name)
    params = {"pca": 20, "standardize": True}
    one = cls(**params).fit(X, y)
    want = one.predict_proba(X)
    cuts = [0, 97, 500, 501, 1200, len(y)]
    chunks = [(X[a:b], y[a:b]) for a, b in zip(cuts[:-1], cuts[1:])]
    chunked = cls(**params).fit_chunks(chunks)
    online = cls(**params)
    for Xc, yc in chunks:
        online.partial_fit(Xc, yc, classes=np.unique(y))
    left = cls(**params).fit(X[::2], y[::2])
    right = cls(**params).fit(X[1::2], y[1::2])
    merged = left.merge(right)
    for model in (chunked, online, merged):
        np.testing.assert_allclose(model.predict_proba(X), want, rtol=0, atol=1e-12)


@pytest.mark.parametrize("name", PROJECTED)
def test_every_count_follows_from_the_same_statistics(digits, name):
    """A model with another pca from the statistics alone equals a fit with it."""
    X, y = digits
    cls = registry.get(name)
    wide = cls(pca=40).fit(X, y)
    narrow = wide.with_params(pca=8)
    np.testing.assert_allclose(
        narrow.predict_proba(X), cls(pca=8).fit(X, y).predict_proba(X), rtol=0, atol=1e-12
    )


def test_a_model_file_stores_the_projection_and_scores_the_same(tmp_path, digits):
    X, y = digits
    model = registry.get("qda")(pca=0.9, standardize=True).fit(X, y)
    names = [f"x{j}" for j in range(X.shape[1])]
    path = tmp_path / "m.npz"
    save_model(ModelFile(model=model, feature_names=names, target="y"), path)
    with np.load(path) as members:
        np.testing.assert_array_equal(
            members["projection.components"], model.projection_.components
        )
        np.testing.assert_array_equal(members["projection.scale"], model.projection_.scale)
        assert members["projection.centre"].shape == (64,)
    back = load_model(path)
    assert back.metadata["projection"]["n_components"] == model.projection_.n_components
    np.testing.assert_array_equal(back.model.predict_proba(X), model.predict_proba(X))


def test_a_stored_projection_that_does_not_fit_its_settings_is_refused(tmp_path, digits):
    from nbcli.errors import NbcliError
    from tests.conftest import zip_bytes, zip_members

    X, y = digits
    model = registry.get("gaussian")(pca=5).fit(X, y)
    path = tmp_path / "m.npz"
    save_model(ModelFile(model=model, feature_names=[f"x{j}" for j in range(64)]), path)
    members = zip_members(path)
    meta = json.loads(np.load(path)["metadata"].tobytes())
    meta["projection"]["n_components"] = 70
    import io

    buf = io.BytesIO()
    np.save(buf, np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8))
    members["metadata.npy"] = buf.getvalue()
    path.write_bytes(zip_bytes(members))
    with pytest.raises(NbcliError, match="invalid projection metadata"):
        load_model(path)


def test_settings_without_a_projection_are_refused_in_one_line():
    X = np.random.default_rng(0).normal(size=(20, 3))
    y = np.repeat([0, 1], 10)
    cls = registry.get("lda")
    with pytest.raises(ValueError, match="Ledoit-Wolf"):
        cls(pca=2, shrinkage="auto", solver="lsqr").fit(X, y)
    with pytest.raises(ValueError, match="whole number >= 1"):
        cls(pca=2.5).fit(X, y)
    with pytest.raises(ValueError, match="at most 3"):
        cls(pca=4).fit(X, y)


@pytest.mark.parametrize("name", PROJECTED)
def test_the_ledoit_wolf_refusal_offers_only_what_the_model_takes(name):
    # LDA has no reg_param: naming it sent the user to a refused option.
    cls = registry.get(name)
    declared = {s.name for s in cls.hyperparameters}
    if "shrinkage" not in declared:
        pytest.skip(f"{name} declares no shrinkage")
    X = np.random.default_rng(0).normal(size=(20, 3))
    with pytest.raises(ValueError, match="Ledoit-Wolf") as refused:
        cls(pca=2, shrinkage="auto").fit(X, np.repeat([0, 1], 10))
    said = str(refused.value)
    assert said.endswith("or reg_param") == ("reg_param" in declared), said
    assert "fixed shrinkage such as 0.1" in said


def test_a_missing_cell_drops_its_row_under_a_projection():
    X = np.random.default_rng(1).normal(size=(40, 3))
    y = np.repeat(["a", "b"], 20)
    X[3, 1] = np.nan
    model = registry.get("gaussian")(pca=2, missing="ignore").fit(X, y)
    assert model.n_dropped_ == 1
    full = registry.get("gaussian")(pca=2).fit(np.delete(X, 3, axis=0), np.delete(y, 3))
    np.testing.assert_allclose(model.predict_proba(X[4:]), full.predict_proba(X[4:]), atol=1e-12)
    assert np.isnan(model.predict_proba(X[3:4])).all()


# -- the command line ---------------------------------------------------------------


@pytest.fixture(scope="module")
def digits_npz(tmp_path_factory, digits):
    X, y = digits
    path = tmp_path_factory.mktemp("digits") / "digits.npz"
    np.savez(path, X=X, y=y)
    return path


@pytest.mark.parametrize("name", PROJECTED)
def test_fit_on_parts_equals_one_file(tmp_path, digits, name):
    X, y = digits
    header = ",".join([f"x{j}" for j in range(64)] + ["label"])
    parts = tmp_path / "parts"
    parts.mkdir()
    for i, rows in enumerate((slice(0, 700), slice(700, None))):
        np.savetxt(
            parts / f"p{i}.csv", np.column_stack([X[rows], y[rows]]), delimiter=",",
            header=header, comments="", fmt="%g",
        )  # fmt: skip
    model = tmp_path / "m.npz"
    run = nbcli_in_process("fit", "-m", name, "-d", parts, "--pca", "10", "-o", model, "-q")
    assert run.returncode == 0, run.stderr
    want = registry.get(name)(pca=10).fit(X, y).predict_proba(X)
    np.testing.assert_allclose(load_model(model).model.predict_proba(X), want, atol=1e-12)


def test_fit_predict_and_inspect_apply_the_projection(tmp_path, digits_npz, digits):
    X, y = digits
    model = tmp_path / "m.npz"
    run = nbcli_in_process("fit", "-m", "qda", "-d", digits_npz, "--pca", "20", "-o", model, "-q")
    assert run.returncode == 0, run.stderr
    mf = load_model(model)
    want = registry.get("qda")(pca=20).fit(X, y)
    np.testing.assert_allclose(mf.predict_proba(X), want.predict_proba(X), rtol=0, atol=1e-12)
    report = tmp_path / "inspect.json"
    run = nbcli_in_process("inspect", model, "--json", report)
    assert run.returncode == 0, run.stderr
    projection = json.loads(report.read_text())["projection"]
    components = projection["components"]
    assert projection["n_components"] == len(components) == 20
    ratio = want.projection_.explained_variance_ratio
    np.testing.assert_allclose([c["explained_variance_ratio"] for c in components], ratio)
    np.testing.assert_allclose([c["cumulative_ratio"] for c in components], np.cumsum(ratio))


@pytest.mark.parametrize(
    "value, fragment",
    [
        ("2.5", "whole number >= 1"),
        ("abc", "got 'abc'"),
        ("0", "whole number >= 1"),
        ("-3", "whole number >= 1"),
        ("1.5", "whole number >= 1"),
        ("65", "at most 64"),
        ("inf", "got 'inf'"),
        ("1e400", "got '1e400'"),
        ("nan", "got 'nan'"),
    ],
)
def test_bad_pca_values_are_one_line_errors(tmp_path, digits_npz, value, fragment):
    run = nbcli_in_process(
        "fit", "-m", "qda", "-d", digits_npz, "--pca", value, "-o", tmp_path / "m.npz"
    )
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and fragment in lines[0], run.stderr


def test_pca_with_ledoit_wolf_is_a_one_line_error(tmp_path, digits_npz):
    run = nbcli_in_process(
        "fit", "-m", "lda", "-d", digits_npz, "--pca", "5", "--shrinkage", "auto",
        "-o", tmp_path / "m.npz",
    )  # fmt: skip
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1 and "Ledoit-Wolf" in run.stderr


def test_statistics_over_the_budget_are_refused_naming_the_figure(
    tmp_path, digits_npz, monkeypatch
):
    import nbcli.io.limits as limits

    monkeypatch.setattr(limits, "STATISTICS_BYTES", 1 << 16)
    run = nbcli_in_process(
        "fit", "-m", "qda", "-d", digits_npz, "--pca", "5", "-o", tmp_path / "m.npz"
    )
    assert run.returncode == 2
    line = run.stderr.strip()
    assert "\n" not in line and "--pca" in line and "x 64^2 floats" in line and "--features" in line


def test_tune_picks_what_grid_search_picks_on_the_same_folds(tmp_path, digits):
    """tune --pca 4,8,16,24 --reg-param 0,0.05 against GridSearchCV(Pipeline(PCA, QDA)),
    with the same (equal-sized) folds, so pooled and averaged log-loss rank alike."""
    X, y = digits
    X, y = X[:1795], y[:1795]
    folds = np.arange(len(y)) % 5
    data = tmp_path / "digits.csv"
    header = ",".join([f"x{j}" for j in range(64)] + ["fold", "label"])
    rows = np.column_stack([X, folds, y])
    np.savetxt(data, rows, delimiter=",", header=header, comments="", fmt="%g")
    report = tmp_path / "tune.json"
    run = nbcli_in_process(
        "tune", "-m", "qda", "-d", data, "--target", "label", "--fold-column", "fold",
        "--pca", "4,8,16,24", "--reg-param", "0,0.05", "--bootstrap", "0", "--json", report,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    best = json.loads(report.read_text())["best"]["params"]
    from threadpoolctl import threadpool_limits

    # 40 small fits: BLAS threads only contend for the cores here.
    with threadpool_limits(1):
        search = _grid_search(X, y, folds)
    chosen = search.best_params_
    assert best == {"pca": chosen["pca__n_components"], "reg_param": chosen["qda__reg_param"]}


def _grid_search(X, y, folds):
    from sklearn.decomposition import PCA
    from sklearn.model_selection import GridSearchCV, PredefinedSplit
    from sklearn.pipeline import Pipeline

    return GridSearchCV(
        Pipeline([("pca", PCA(svd_solver="full")), ("qda", _sklearn("qda"))]),
        {"pca__n_components": [4, 8, 16, 24], "qda__reg_param": [0.0, 0.05]},
        scoring="neg_log_loss",
        cv=PredefinedSplit(folds),
    ).fit(X, y)


@pytest.mark.skipif(
    not os.environ.get("NBCLI_MNIST"), reason="set NBCLI_MNIST=1 (reads ../shared/data/mnist.npz)"
)
@pytest.mark.parametrize("name, accuracy", [("qda", 0.9636), ("gaussian", 0.8775), ("lda", 0.8734)])
def test_mnist_on_50_components(name, accuracy):
    """The figures of Pipeline(PCA(50), model) on MNIST (pixels / 255)."""
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "shared" / "data" / "mnist.npz"
    if not path.exists():
        path = Path("/work/shared/data/mnist.npz")
    with np.load(path) as f:
        X, y = f["X_train"] / 255.0, f["y_train"]
        Xt, yt = f["X_test"] / 255.0, f["y_test"]
    model = registry.get(name)(pca=50).fit(X.reshape(len(X), -1), y)
    Xt = Xt.reshape(len(Xt), -1)
    assert abs(np.mean(model.predict(Xt) == yt) - accuracy) <= 0.0005
    Z = model.projection_.transform(Xt)
    on_ours = _sklearn(name).fit(model.projection_.transform(X.reshape(len(X), -1)), y)
    np.testing.assert_allclose(model.predict_proba(Xt), on_ours.predict_proba(Z), atol=1e-8)


@pytest.fixture(scope="module")
def iris_with_holes(tmp_path_factory):
    """sample_data/iris_train.csv with two cells blank (in rows 3 and 10)."""
    import csv

    rows = list(csv.reader(open("sample_data/iris_train.csv", newline="")))
    rows[3][0] = rows[10][2] = ""
    path = tmp_path_factory.mktemp("iris") / "iris_na.csv"
    with open(path, "w", newline="") as f:
        csv.writer(f).writerows(rows)
    return path, len(rows) - 1


@pytest.mark.parametrize(
    "command, flags",
    [
        ("cv", ["--standardize", "--bootstrap", "0"]),
        ("cv", ["--pca", "2", "--bootstrap", "0"]),
        ("tune", ["--pca", "2", "--standardize"]),
    ],
)
def test_cv_and_tune_drop_rows_with_a_missing_cell_under_a_projection(
    tmp_path, iris_with_holes, command, flags
):
    """As fit does: the two rows are left out of every fold, not gathered as NaN."""
    path, n_rows = iris_with_holes
    report = tmp_path / "r.json"
    run = nbcli_in_process(command, "-m", "gaussian", "-d", path, "-k", "3", *flags,
                           "--json", report, "-q")  # fmt: skip
    assert run.returncode == 0, run.stderr
    if command == "cv":
        assert json.loads(report.read_text())["n_samples"] == n_rows - 2


def test_a_tune_grid_with_an_infinite_pca_is_a_one_line_error(digits_npz):
    run = nbcli_in_process("tune", "-m", "lda", "-d", digits_npz, "--pca", "2,inf")
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "got 'inf'" in lines[0], run.stderr


@pytest.mark.parametrize("name", PROJECTED)
def test_more_components_than_the_rows_support_are_refused_naming_the_limit(digits, name):
    """20 rows (2 a class): scikit-learn's PCA allows min(rows, features) = 20."""
    from sklearn.decomposition import PCA

    X, y = digits
    rows = np.concatenate([np.flatnonzero(y == c)[:2] for c in range(10)])
    X, y = X[rows], y[rows]
    with pytest.raises(ValueError):
        PCA(21, svd_solver="full").fit(X)
    for pca in (21, 25, 40):
        with pytest.raises(ValueError, match=f"pca={pca} components, .* at most 20 "):
            registry.get(name)(pca=pca).fit(X, y)


@pytest.fixture(scope="module")
def digits_20_npz(tmp_path_factory, digits):
    """20 rows of digits, 2 a class: more features than rows (collinear, flat components)."""
    X, y = digits
    rows = np.concatenate([np.flatnonzero(y == c)[:2] for c in range(10)])
    path = tmp_path_factory.mktemp("digits20") / "digits20.npz"
    np.savez(path, X=X[rows], y=y[rows])
    return path


@pytest.mark.parametrize(
    "name, warning", [("gaussian", "var_smoothing's epsilon"), ("lda", "collinear")]
)
@pytest.mark.parametrize("standardize", [[], ["--standardize"]])
def test_fit_warnings_under_pca_name_components_not_columns(
    tmp_path, digits_20_npz, name, warning, standardize
):
    run = nbcli_in_process("fit", "-m", name, "-d", digits_20_npz, "--pca", "20", *standardize,
                           "-o", tmp_path / "m.npz", "-q")  # fmt: skip
    assert run.returncode == 0, run.stderr
    lines = [line for line in run.stderr.splitlines() if warning in line]
    assert lines, run.stderr
    for line in lines:
        assert "'pc1'" in line or "'pc20'" in line, line
        assert "'x0'" not in line and "'x19'" not in line, line
        assert "categorical" not in line, line  # no column of a component is a category
    if warning.startswith("var_smoothing"):
        # --standardize is the remedy only where the columns were not standardised.
        assert ("--standardize puts" in lines[0]) == (not standardize), lines[0]


def test_standardize_on_new_rows_agrees_to_the_rounding_of_the_scores():
    """Gaussian NB with --standardize against Pipeline(StandardScaler(),
    GaussianNB()) on rows it was not fitted on (sample_data digits).

    A column constant in every training row has variance epsilon (1e-9 of
    the largest) in every class; a new row off that value adds
    (z - theta)^2 / (2 epsilon) ~ 5e8 to every class's score alike. That
    cancels in the posteriors, but each score is only held to its last bits
    (about 6e-8 at 5e8), so both programs' posteriors move by that much:
    the tolerance follows from the scores' magnitude, not a fixed 1e-10.
    """
    import pandas as pd
    from sklearn.naive_bayes import GaussianNB
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    train = pd.read_csv("sample_data/digits_train.csv")
    test = pd.read_csv("sample_data/digits_test.csv")
    names = list(train.columns[:-1])
    X, y, Xt = (
        train[names].to_numpy(float),
        train.iloc[:, -1].to_numpy(),
        test[names].to_numpy(float),
    )
    ours = registry.get("gaussian")(standardize=True).fit(X, y)
    theirs = make_pipeline(StandardScaler(), GaussianNB()).fit(X, y)
    P, Q = ours.predict_proba(Xt), theirs.predict_proba(Xt)
    np.testing.assert_array_less(np.abs(P - Q), posterior_tolerance(ours, Xt, P, Q))
    # Where the two differ beyond 1e-10, every class's score is that large:
    # a constant training column is off its value in the row.
    far = np.abs(P - Q).max(axis=1) > 1e-10
    assert far.any()
    scores = np.abs(ours.joint_log_likelihood_block(Xt[far]))
    assert scores.min() > 1e8
    constant = X.std(axis=0) == 0
    assert np.all((Xt[far][:, constant] != X[0, constant]).any(axis=1))
    # On the training rows no such term arises, and the two agree to 1e-10.
    np.testing.assert_allclose(ours.predict_proba(X), theirs.predict_proba(X), rtol=0, atol=1e-10)


def test_cv_on_parts_drops_rows_with_a_missing_cell_under_a_projection(tmp_path, iris_with_holes):
    path, n_rows = iris_with_holes
    lines = path.read_text().splitlines(keepends=True)
    parts = tmp_path / "parts"
    parts.mkdir()
    (parts / "a.csv").write_text("".join(lines[:46]))
    (parts / "b.csv").write_text(lines[0] + "".join(lines[46:]))
    report = tmp_path / "r.json"
    run = nbcli_in_process("cv", "-m", "gaussian", "-d", parts, "-k", "3", "--standardize",
                           "--bootstrap", "0", "--json", report, "-q")  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert json.loads(report.read_text())["n_samples"] == n_rows - 2
