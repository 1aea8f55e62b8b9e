"""``nbcli export``: ONNX graphs whose posteriors, run by onnxruntime, equal
``nbcli predict --proba`` on real data (float64, to 1e-9) with the same
labels, for every model type that declares a scoring form; missing cells
are left out as nbcli leaves them out; the others are refused in one line."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from nbcli.models import MODELS
from nbcli.models._base import BayesClassifier
from tests.conftest import assert_one_error_line, nbcli_in_process
from tests.declared import fittable, spec_names

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

EXPORTED = sorted(
    n for n, c in MODELS.items() if c.scoring_form is not BayesClassifier.scoring_form
)


def ok(*args):
    run = nbcli_in_process(*args, "--quiet")
    assert run.returncode == 0, run.stderr
    return run


def wine_table(cls, tmp_path, labels: str):
    """Wine, standardised then made into the rows ``cls`` declares, as CSV:
    training rows, and test rows with some missing cells."""
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    Xm, params = fittable(cls, X)
    names = [f"f{j}" for j in range(Xm.shape[1])]
    target = np.array(["barolo", "grignolino", "barbera"])[y] if labels == "text" else y
    order = np.random.default_rng(0).permutation(len(y))
    train, test = order[:120], order[120:]
    frame = pl.DataFrame({**{n: Xm[:, j] for j, n in enumerate(names)}, "label": target})
    frame[train].write_csv(tmp_path / "train.csv")
    test_X = Xm[test].copy()
    frame[test].write_csv(tmp_path / "test.csv")
    holes = test_X.copy()
    holes[np.arange(0, len(test), 3), np.arange(0, len(test), 3) % Xm.shape[1]] = np.nan
    pl.DataFrame({n: holes[:, j] for j, n in enumerate(names)}).write_csv(tmp_path / "holes.csv")
    return params, test_X, holes


def run_graph(path, data):
    """Run the graph on the rows of CSV ``data``: its one input ``X``, or one
    input a column (text for a categorical column, numbers for the others)."""
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    frame = pl.read_csv(data, infer_schema_length=0)
    names = [n for n in frame.columns if n != "label"]
    inputs = session.get_inputs()

    def numbers(columns):
        return frame.select(columns).cast(pl.Float64).fill_null(np.nan).to_numpy()

    if [i.name for i in inputs] == ["X"]:
        feeds = {"X": numbers(names)}
    else:
        assert [i.name for i in inputs] == names
        feeds = {
            i.name: (
                np.asarray(frame[i.name].fill_null("").to_list(), dtype=object)[:, None]
                if i.type == "tensor(string)"
                else numbers([i.name])
            )
            for i in inputs
        }
    label, proba = session.run(["label", "probabilities"], feeds)
    return label, proba


def nbcli_proba(model, data, tmp_path, *extra):
    out = tmp_path / "p.csv"
    ok("predict", "-m", model, "-d", data, "--proba", "-o", out, *extra)
    frame = pl.read_csv(out, infer_schema_length=0)
    return frame["prediction"].to_list(), frame.drop("prediction").cast(pl.Float64).to_numpy()


@pytest.mark.numerical
@pytest.mark.parametrize("name", EXPORTED)
def test_onnxruntime_posteriors_equal_nbcli(name, tmp_path):
    cls = MODELS[name]
    labels = "text" if EXPORTED.index(name) % 2 == 0 else "int"
    params, test_X, holes = wine_table(cls, tmp_path, labels)
    flags = []
    for key, value in params.items():
        if key != "column_types":  # the command line sets it from its column plan
            flags += [f"--{key.replace('_', '-')}", str(value)]
    model = tmp_path / "m.npz"
    ok("fit", "-m", name, "-d", tmp_path / "train.csv", "--target", "label", "-o", model, *flags)
    graph = tmp_path / "m.onnx"
    ok("export", model, "-o", graph)
    checked = onnx.load(str(graph))
    onnx.checker.check_model(checked, full_check=True)
    meta = {p.key: p.value for p in checked.metadata_props}
    assert meta["model"] == name and meta["feature_names"].startswith('["f0"')
    cases = [tmp_path / "test.csv"]
    from nbcli.io.modelfile import load_model

    if load_model(model).model.missing_policy == "ignore":
        cases.append(tmp_path / "holes.csv")
    for data in cases:
        label, proba = run_graph(graph, data)
        # The graph leaves an unseen category out, as --unseen ignore does.
        unseen = ("--unseen", "ignore") if "unseen" in spec_names(cls) else ()
        expected_labels, expected = nbcli_proba(model, data, tmp_path, *unseen)
        assert proba.dtype == np.float64 and proba.shape == expected.shape
        np.testing.assert_allclose(proba, expected, rtol=0, atol=1e-9)
        assert [str(v) for v in label.tolist()] == expected_labels
        # Graphs that ignored the rows would give near-uniform posteriors.
        assert proba.max(axis=1).mean() > 1 / proba.shape[1] + 0.1


@pytest.mark.numerical
def test_mixed_penguins_with_text_categories_and_missing_cells(tmp_path):
    from palmerpenguins import load_penguins

    data = tmp_path / "penguins.csv"
    load_penguins().to_csv(data, index=False)
    model, graph = tmp_path / "m.npz", tmp_path / "m.onnx"
    ok("fit", "-m", "mixed", "-d", data, "--target", "species", "-o", model)
    ok("export", model, "-o", graph)
    session = ort.InferenceSession(str(graph), providers=["CPUExecutionProvider"])
    kinds = {i.name: i.type for i in session.get_inputs()}
    assert kinds["island"] == kinds["sex"] == "tensor(string)"
    assert kinds["bill_length_mm"] == "tensor(double)"
    frame = pl.read_csv(data, infer_schema_length=0).drop("species")
    frame.write_csv(tmp_path / "rows.csv", null_value="")
    label, proba = run_graph(graph, tmp_path / "rows.csv")
    expected_labels, expected = nbcli_proba(model, data, tmp_path)
    np.testing.assert_allclose(proba, expected, rtol=0, atol=1e-9)
    assert label.tolist() == expected_labels
    assert frame["sex"].null_count() + (frame["sex"] == "NA").sum() > 0  # missing cells were met
    # Calibrators are part of the graph.
    two = tmp_path / "two.csv"
    pl.read_csv(data, infer_schema_length=0).filter(pl.col("species") != "Chinstrap").write_csv(two)
    ok("fit", "-m", "mixed", "-d", two, "--target", "species", "-o", tmp_path / "two.npz")
    from nbcli.io.modelfile import load_model

    for base, rows, method in (
        (model, data, "temperature"),
        (model, data, "sigmoid"),
        (tmp_path / "two.npz", two, "sigmoid"),
        (model, data, "isotonic"),
        (tmp_path / "two.npz", two, "isotonic"),
    ):
        calibrated = tmp_path / f"{method}.npz"
        ok("calibrate", "-m", base, "-d", rows, "--method", method, "-o", calibrated,
           "--allow-worse", "--allow-training-data", "--force")  # fmt: skip
        assert load_model(calibrated).calibrator.kind == method
        ok("export", calibrated, "-o", tmp_path / "c.onnx")
        features = tmp_path / "features.csv"
        pl.read_csv(rows, infer_schema_length=0).drop("species").write_csv(features)
        label, proba = run_graph(tmp_path / "c.onnx", features)
        expected_labels, expected = nbcli_proba(calibrated, rows, tmp_path)
        _, uncalibrated = nbcli_proba(base, rows, tmp_path)
        assert np.abs(expected - uncalibrated).max() > 1e-3  # the calibrator changes them
        np.testing.assert_allclose(proba, expected, rtol=0, atol=1e-9)
        assert label.tolist() == expected_labels


@pytest.mark.numerical
@pytest.mark.parametrize("name", ["multinomial", "mixed"])
def test_text_models_take_token_counts(name, tmp_path):
    """Austen's sentences: the graph's text input is the count of each term of
    the vocabulary stored in the graph, which scikit-learn's CountVectorizer
    with the stored settings computes from a document."""
    import json

    from sklearn.feature_extraction.text import CountVectorizer

    from tests.conftest import SAMPLE

    model, graph = tmp_path / "m.npz", tmp_path / "m.onnx"
    ok("fit", "-m", name, "-d", SAMPLE / "austen_train.csv", "--text", "text",
       "--ngram", "1,2", "-o", model)  # fmt: skip
    ok("export", model, "-o", graph)
    session = ort.InferenceSession(str(graph), providers=["CPUExecutionProvider"])
    meta = session.get_modelmeta().custom_metadata_map
    settings, terms = json.loads(meta["text"]), json.loads(meta["vocabularies"])["text"]
    vectorizer = CountVectorizer(
        vocabulary=terms,
        lowercase=settings["lowercase"],
        ngram_range=tuple(settings["ngram_range"]),
        token_pattern=settings["token_pattern"],
    )
    docs = pl.read_csv(SAMPLE / "austen_test.csv")["text"].to_list()
    counts = vectorizer.transform(docs).toarray().astype(np.float64)
    assert [i.name for i in session.get_inputs()] == ["text"] and counts.sum() > len(docs)
    label, proba = session.run(["label", "probabilities"], {"text": counts})
    expected_labels, expected = nbcli_proba(model, SAMPLE / "austen_test.csv", tmp_path)
    np.testing.assert_allclose(proba, expected, rtol=0, atol=1e-9)
    assert label.tolist() == expected_labels


def test_export_keeps_other_files(tmp_path):
    (tmp_path / "data.csv").write_text("a,b\n1,2\n")
    params, _, _ = wine_table(MODELS["gaussian"], tmp_path, "text")
    ok(
        "fit",
        "-m",
        "gaussian",
        "-d",
        tmp_path / "train.csv",
        "--target",
        "label",
        "-o",
        tmp_path / "m.npz",
    )
    run = nbcli_in_process("export", tmp_path / "m.npz", "-o", tmp_path / "data.csv")
    assert_one_error_line(run, "data.csv", "exists and is not an ONNX graph")
    ok("export", tmp_path / "m.npz", "-o", tmp_path / "m.onnx")
    ok("export", tmp_path / "m.npz", "-o", tmp_path / "m.onnx")  # replaces its own kind
    run = nbcli_in_process("export", tmp_path / "m.npz", "--format", "pmml", "-o", tmp_path / "x")
    assert_one_error_line(run, "--format", "onnx")
