"""``numeric_estimator``: every numeric column of the gaussian and mixed models
a kernel density or a discretized column; chunks, parts and model files equal
one fit, and ``tune`` over the bandwidth multiplier picks what ``cv`` of each
multiplier says is best."""

import importlib.util
import json

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_wine

from nbcli.io.modelfile import load_model
from nbcli.models import GaussianNB, MixedNB
from tests.conftest import nbcli_in_process

pytestmark = pytest.mark.numerical

ESTIMATORS = ("kernel", "discretized")


def _wine(rate=0.05, seed=3):
    """Wine's first eight columns, a share of the cells missing."""
    X, y = load_wine(return_X_y=True)
    X = X[:, :8].copy()
    X[np.random.default_rng(seed).random(X.shape) < rate] = np.nan
    return X, y


def _settings(estimator, bandwidth="nrd0"):
    return {"numeric_estimator": estimator, "missing": "ignore", "bandwidth": bandwidth}


@pytest.mark.parametrize("bandwidth", ["nrd0", "weka"])
@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_gaussian_with_an_estimator_is_the_mixed_model_of_that_column_type(estimator, bandwidth):
    X, y = _wine()
    prior = np.array([0.5, 0.3, 0.2])
    got = GaussianNB(priors=prior, **_settings(estimator, bandwidth)).fit(X, y)
    want = MixedNB(
        column_types=[estimator] * X.shape[1],
        class_prior=prior,
        alpha=1.0,
        missing="ignore",
        bandwidth=bandwidth,
    ).fit(X, y)
    np.testing.assert_array_equal(got.predict_log_proba(X), want.predict_log_proba(X))
    assert got.columns_.column_types_ == [estimator] * X.shape[1]
    np.testing.assert_array_equal(got.class_prior_, prior)
    assert not hasattr(got, "theta_")
    # Not the Gaussian model: another estimator gives other posteriors.
    plain = GaussianNB(priors=prior, missing="ignore").fit(X, y)
    assert np.abs(plain.predict_proba(X) - got.predict_proba(X)).max() > 0.01


@pytest.mark.parametrize("estimator", ESTIMATORS)
def test_chunks_merged_parts_and_partial_fit_equal_one_fit(estimator):
    X, y = _wine()
    w = np.random.default_rng(4).integers(1, 4, len(y)).astype(float)
    settings = _settings(estimator)
    whole = GaussianNB(**settings).fit(X, y, sample_weight=w)
    bounds = [0, 3, 4, 60, 61, len(y)]
    pieces = list(zip(bounds, bounds[1:]))
    chunked = GaussianNB(**settings).fit_chunks((X[a:b], y[a:b], w[a:b]) for a, b in pieces)
    order = np.random.default_rng(7).permutation(len(y))
    first, second = order[: len(y) // 2], order[len(y) // 2 :]
    merged = GaussianNB(**settings).fit(X[second], y[second], sample_weight=w[second])
    merged.merge(GaussianNB(**settings).fit(X[first], y[first], sample_weight=w[first]))
    stepwise = GaussianNB(**settings)
    for a, b in pieces:
        stepwise.partial_fit(X[a:b], y[a:b], classes=[0, 1, 2], sample_weight=w[a:b])
    repeated = GaussianNB(**settings).fit(
        np.repeat(X, w.astype(int), axis=0), np.repeat(y, w.astype(int))
    )
    for other in (chunked, merged, stepwise, repeated):
        np.testing.assert_allclose(
            other.predict_proba(X), whole.predict_proba(X), rtol=0, atol=1e-12
        )
        for a, b in zip(other.columns_.cut_points_, whole.columns_.cut_points_):
            np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(other.columns_.bandwidth_, whole.columns_.bandwidth_, rtol=1e-12)
    if estimator == "discretized":
        assert sum(c.size for c in whole.columns_.cut_points_) >= X.shape[1]


def test_mixed_numeric_estimator_types_the_columns_left_untyped():
    X, y = _wine()
    names = [f"x{j}" for j in range(X.shape[1])]
    frame = pd.DataFrame(X, columns=names)
    model = MixedNB(
        numeric_estimator="kernel", column_types={"x0": "gaussian", "x3": "discretized"}
    )
    model.set_params(missing="ignore").fit(frame, y)
    assert model.column_types_ == ["gaussian", "kernel", "kernel", "discretized"] + ["kernel"] * 4
    everything = MixedNB(numeric_estimator="discretized", missing="ignore").fit(X, y)
    assert everything.column_types_ == ["discretized"] * X.shape[1]


def test_settings_the_estimator_cannot_take_are_refused():
    X, y = _wine(rate=0)
    with pytest.raises(ValueError, match="cannot be combined with pca or standardize"):
        GaussianNB(numeric_estimator="kernel", pca=2).fit(X, y)
    with pytest.raises(ValueError, match="numeric_estimator must be one of"):
        GaussianNB(numeric_estimator="poisson").fit(X, y)
    # Statistics of one estimator do not make a model of another.
    kernel = GaussianNB(numeric_estimator="kernel").fit(X, y)
    with pytest.raises(ValueError, match="needs moments"):
        kernel.with_params(numeric_estimator="gaussian")
    with pytest.raises(ValueError, match="distinct values"):
        GaussianNB().fit(X, y).with_params(numeric_estimator="discretized")
    # What finalisation applies needs no refit.
    wider = kernel.with_params(bandwidth_adjust=2.0)
    np.testing.assert_allclose(wider.columns_.bandwidth_, 2 * kernel.columns_.bandwidth_)


def _write_parts(tmp_path):
    X, y = _wine()
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    frame["label"] = [f"c{v}" for v in y]
    data = tmp_path / "wine.csv"
    frame.to_csv(data, index=False, float_format="%.17g")
    parts = tmp_path / "parts"
    parts.mkdir()
    for i, rows in enumerate((frame.iloc[:50], frame.iloc[50:51], frame.iloc[51:])):
        rows.to_csv(parts / f"part{i}.csv", index=False, float_format="%.17g")
    return data, parts


def _proba(tmp_path, model, data, name):
    out = tmp_path / f"{name}.csv"
    run = nbcli_in_process("predict", "-m", model, "-d", data, "--proba", "-o", out, "--quiet")
    assert run.returncode == 0, run.stderr
    return pd.read_csv(out).filter(like="proba_").to_numpy()


@pytest.mark.parametrize(
    ("model_type", "estimator"), [("gaussian", "kernel"), ("mixed", "discretized")]
)
def test_cli_one_file_chunks_and_parts_give_one_model(tmp_path, model_type, estimator):
    data, parts = _write_parts(tmp_path)
    probas = []
    sources = [
        ("one", ["-d", data]),
        ("chunks", ["-d", data, "--chunk-size", "7"]),
        ("parts", ["-d", parts]),
    ]
    if model_type == "gaussian" and importlib.util.find_spec("distributed") is not None:
        sources.append(("dask", ["-d", parts, "--engine", "dask", "--workers", "1"]))
    for name, source in sources:
        model = tmp_path / f"{name}.npz"
        run = nbcli_in_process(
            "fit", "-m", model_type, *source, "--numeric-estimator", estimator,
            "-o", model, "--quiet",
        )  # fmt: skip
        assert run.returncode == 0, run.stderr
        probas.append(_proba(tmp_path, model, data, name))
    for other in probas[1:]:
        np.testing.assert_allclose(other, probas[0], rtol=0, atol=1e-12)
    stored = load_model(tmp_path / "one.npz")
    assert stored.model.get_params()["numeric_estimator"] == estimator
    assert type(stored.model).__name__ == {"gaussian": "GaussianNB", "mixed": "MixedNB"}[model_type]
    X, y = _wine()
    direct = GaussianNB(**_settings(estimator)) if model_type == "gaussian" else None
    if direct is not None:
        direct.fit(X, [f"c{v}" for v in y])
        np.testing.assert_allclose(probas[0], direct.predict_proba(X), rtol=0, atol=1e-12)


def test_cli_export_and_inspect_of_a_kernel_gaussian_model(tmp_path):
    data, _ = _write_parts(tmp_path)
    model = tmp_path / "kernel.npz"
    run = nbcli_in_process(
        "fit", "-m", "gaussian", "-d", data, "--numeric-estimator", "kernel", "-o", model, "--quiet"
    )
    assert run.returncode == 0, run.stderr
    run = nbcli_in_process("export", model, "-o", tmp_path / "kernel.onnx", "--quiet")
    assert run.returncode == 0, run.stderr
    run = nbcli_in_process("inspect", model, "--json", tmp_path / "inspect.json", "--quiet")
    assert run.returncode == 0, run.stderr
    shown = json.loads((tmp_path / "inspect.json").read_text())
    columns = shown["parameters"]["columns"]
    assert {c["type"] for c in columns} == {"kernel"}
    bandwidth = load_model(model).model.columns_.bandwidth_
    assert columns[0]["classes"]["c0"]["bandwidth"] == pytest.approx(bandwidth[0, 0], rel=1e-12)
    run = nbcli_in_process(
        "evaluate", "-m", model, "-d", data, "--bootstrap", "0", "--json", tmp_path / "ev.json",
        "--quiet",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    proba = _proba(tmp_path, model, data, "kernel")
    truth = pd.read_csv(data)["label"].map({"c0": 0, "c1": 1, "c2": 2}).to_numpy()
    accuracy = json.loads((tmp_path / "ev.json").read_text())["metrics"]["accuracy"]["value"]
    assert accuracy == pytest.approx(np.mean(proba.argmax(axis=1) == truth), abs=1e-15)
    calibrated = tmp_path / "calibrated.npz"
    run = nbcli_in_process(
        "calibrate", "-m", model, "-d", data, "--method", "temperature", "--allow-worse",
        "--allow-training-data",
        "-o", calibrated, "--quiet",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert _proba(tmp_path, calibrated, data, "calibrated").shape == proba.shape
    weka = tmp_path / "weka.npz"
    run = nbcli_in_process(
        "fit", "-m", "gaussian", "-d", data, "--numeric-estimator", "kernel",
        "--bandwidth", "weka", "-o", weka, "--quiet",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    run = nbcli_in_process("export", weka, "-o", tmp_path / "weka.onnx")
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1 and "--bandwidth weka" in run.stderr


def test_cli_refuses_the_estimator_where_it_does_not_apply(tmp_path):
    data, _ = _write_parts(tmp_path)
    run = nbcli_in_process(
        "fit", "-m", "gaussian", "-d", data, "--numeric-estimator", "kernel", "--pca", "2",
        "-o", tmp_path / "m.npz",
    )  # fmt: skip
    assert run.returncode == 2
    assert "cannot be combined with pca" in run.stderr and "Traceback" not in run.stderr
    run = nbcli_in_process(
        "tune", "-m", "gaussian", "-d", data, "--numeric-estimator", "kernel,discretized"
    )
    assert run.returncode == 2 and "--numeric-estimator must be one of" in run.stderr


# -- tune over the bandwidth multiplier ------------------------------------------------

MULTIPLIERS = (0.25, 0.5, 1.0, 2.0, 4.0)


def _with_folds(tmp_path):
    data, _ = _write_parts(tmp_path)
    frame = pd.read_csv(data)
    frame["fold"] = np.arange(len(frame)) % 4
    path = tmp_path / "wine_folds.csv"
    frame.to_csv(path, index=False, float_format="%.17g")
    return path, frame


def _log_loss(y, proba, classes):
    """Pooled log-loss: mean of -log p(true class), from the posteriors."""
    index = np.searchsorted(classes, y)
    return float(np.mean(-np.log(proba[np.arange(len(y)), index])))


@pytest.mark.parametrize(
    ("model_type", "flags"),
    [
        ("gaussian", ["--numeric-estimator", "kernel"]),
        ("mixed", ["--column", "x0=kernel,x1=kernel,x5=kernel"]),
    ],
)
def test_tune_picks_the_multiplier_that_cv_of_each_says_is_best(tmp_path, model_type, flags):
    data, frame = _with_folds(tmp_path)
    folds = ["--fold-column", "fold", "--bootstrap", "0", "--quiet"]
    report = tmp_path / "tune.json"
    best_model = tmp_path / "best.npz"
    grid = ",".join(map(str, MULTIPLIERS))
    run = nbcli_in_process(
        "tune", "-m", model_type, "-d", data, *flags, "--bandwidth-adjust", grid, *folds,
        "--json", report, "-o", best_model,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    tuned = json.loads(report.read_text())
    assert [r["params"]["bandwidth_adjust"] for r in tuned["results"]] == list(MULTIPLIERS)
    searched = [r["metrics"]["log_loss"]["value"] for r in tuned["results"]]
    each = []
    names = [f"x{j}" for j in range(8)]
    for adjust, value in zip(MULTIPLIERS, searched):
        out = tmp_path / f"cv{adjust}.json"
        run = nbcli_in_process(
            "cv", "-m", model_type, "-d", data, *flags, "--bandwidth-adjust", str(adjust),
            *folds, "--json", out,
        )  # fmt: skip
        assert run.returncode == 0, run.stderr
        each.append(json.loads(out.read_text())["metrics"]["log_loss"]["value"])
        if model_type == "gaussian":
            # The documented pooled out-of-fold log-loss, from fits on the other folds.
            proba = np.empty((len(frame), 3))
            for f in range(4):
                train, held = frame[frame["fold"] != f], frame["fold"] == f
                model = GaussianNB(numeric_estimator="kernel", bandwidth_adjust=adjust)
                model.set_params(missing="ignore")
                model.fit(train[names].to_numpy(), train["label"].to_numpy())
                proba[held.to_numpy()] = model.predict_proba(frame.loc[held, names].to_numpy())
            direct = _log_loss(frame["label"].to_numpy(), proba, np.array(["c0", "c1", "c2"]))
            assert value == pytest.approx(direct, rel=1e-12, abs=1e-12)
    np.testing.assert_allclose(searched, each, rtol=1e-12, atol=1e-12)
    # The multipliers score differently, so the choice means something.
    assert np.ptp(each) > 0.01
    best = int(np.argmin(each))
    assert tuned["best"]["params"] == {"bandwidth_adjust": MULTIPLIERS[best]}
    # The model written is the fit of all rows with the best multiplier.
    refit = tmp_path / "refit.npz"
    run = nbcli_in_process(
        "fit", "-m", model_type, "-d", data, *flags, "--drop", "fold",
        "--bandwidth-adjust", str(MULTIPLIERS[best]), "-o", refit, "--quiet",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    np.testing.assert_allclose(
        _proba(tmp_path, best_model, data, "best"),
        _proba(tmp_path, refit, data, "refit"),
        rtol=0,
        atol=1e-12,
    )


@pytest.mark.parametrize(
    ("command", "more"),
    [
        ("fit", []),
        ("fit", ["--chunk-size", "40"]),
        ("fit", ["--parts"]),
        ("cv", ["--bootstrap", "0"]),
    ],
)
def test_too_many_distinct_values_name_the_column(tmp_path, monkeypatch, command, more):
    # One chunk over the limit, or chunks, folds or parts each under it whose
    # merge is over.
    from nbcli.models import _value_table
    from tests.conftest import assert_one_error_line

    monkeypatch.setattr(_value_table, "MAX_DISTINCT", 30)
    data = "sample_data/iris_train.csv"
    frame = pd.read_csv(data)
    frame = frame[["sepal_length_cm", "petal_width_cm", "label"]]
    assert frame["sepal_length_cm"].nunique() > 30 >= frame["petal_width_cm"].nunique()
    if more == ["--parts"]:
        more, data = [], tmp_path / "parts"
        data.mkdir()
        for a in range(0, len(frame), 40):
            frame.iloc[a : a + 40].to_csv(data / f"part{a}.csv", index=False)
    else:
        data = tmp_path / "iris.csv"
        frame.to_csv(data, index=False)
    out = ["-o", tmp_path / "m.npz"] if command == "fit" else ["-q"]
    run = nbcli_in_process(
        command, "-m", "gaussian", "-d", data, "--numeric-estimator", "kernel", *more, *out
    )
    assert_one_error_line(run, "kernel column 'sepal_length_cm' has more than 30 distinct values")


def test_tune_writes_the_model_fit_writes_for_text_categories_and_missing_cells(tmp_path):
    """The model file of ``tune -o`` keeps the column kinds, categories and the
    missing-cell policy, so it predicts rows with text categories and missing
    cells as the model ``fit`` writes with the best setting."""
    common = ["-m", "mixed", "-d", "sample_data/penguins_train.csv", "--target", "species"]
    common += ["--numeric-estimator", "kernel", "--column", "year=categorical"]
    tuned, fitted = tmp_path / "tuned.npz", tmp_path / "fitted.npz"
    run = nbcli_in_process(
        "tune", *common, "--bandwidth-adjust", "0.5,1,2", "--folds", "3", "--bootstrap", "0",
        "-o", tuned, "--json", tmp_path / "tune.json", "--quiet",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    best = json.loads((tmp_path / "tune.json").read_text())["best"]["params"]["bandwidth_adjust"]
    run = nbcli_in_process("fit", *common, "--bandwidth-adjust", str(best), "-o", fitted, "--quiet")
    assert run.returncode == 0, run.stderr
    rows = "sample_data/penguins_test.csv"
    assert pd.read_csv(rows).isna().any(axis=None)
    np.testing.assert_allclose(
        _proba(tmp_path, tuned, rows, "tuned"),
        _proba(tmp_path, fitted, rows, "fitted"),
        rtol=0,
        atol=1e-12,
    )
    stored = load_model(tuned)
    assert [c["type"] for c in stored.columns] == [c["type"] for c in load_model(fitted).columns]
    assert stored.training["missing"] == "ignore"
