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


# -- every setting that changes scoring: exported exactly, or refused in one line --


def export_or_refusal(model, graph):
    """``None`` where the model was exported, else the one ``error:`` line."""
    run = nbcli_in_process("export", model, "-o", graph, "--quiet")
    if run.returncode == 0:
        return None
    return assert_one_error_line(run, str(model))


def same_posteriors(graph, model, data, tmp_path, *extra):
    label, proba = run_graph(graph, data)
    expected_labels, expected = nbcli_proba(model, data, tmp_path, *extra)
    assert proba.shape == expected.shape
    np.testing.assert_allclose(proba, expected, rtol=0, atol=1e-9)
    kept = ~np.isnan(expected).any(axis=1)
    assert kept.sum() >= 0.5 * len(kept)
    assert [str(v) for v, k in zip(label.tolist(), kept) if k] == [
        v for v, k in zip(expected_labels, kept) if k
    ]
    return proba


PROJECTING = sorted(n for n in EXPORTED if {"pca", "standardize"} <= spec_names(MODELS[n]))


@pytest.mark.numerical
@pytest.mark.parametrize("name", PROJECTING)
@pytest.mark.parametrize(
    "flags", [("--standardize",), ("--pca", "3"), ("--standardize", "--pca", "0.8")]
)
def test_projections_are_part_of_the_graph(name, flags, tmp_path):
    """Raw wine (columns of very different scales, so standardising matters)."""
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True)
    names = [f"f{j}" for j in range(X.shape[1])]
    order = np.random.default_rng(1).permutation(len(y))
    frame = pl.DataFrame({**{n: X[:, j] for j, n in enumerate(names)}, "label": y})
    frame[order[:120]].write_csv(tmp_path / "train.csv")
    holes = X[order[120:]].copy()
    pl.DataFrame({n: holes[:, j] for j, n in enumerate(names)}).write_csv(tmp_path / "rows.csv")
    model, graph = tmp_path / "m.npz", tmp_path / "m.onnx"
    ok("fit", "-m", name, "-d", tmp_path / "train.csv", "--target", "label", "-o", model,
       *flags)  # fmt: skip
    assert export_or_refusal(model, graph) is None
    proba = same_posteriors(graph, model, tmp_path / "rows.csv", tmp_path)
    plain = tmp_path / "plain.npz"
    ok("fit", "-m", name, "-d", tmp_path / "train.csv", "--target", "label", "-o", plain)
    ok("export", plain, "-o", tmp_path / "plain.onnx")
    _, unprojected = run_graph(tmp_path / "plain.onnx", tmp_path / "rows.csv")
    if "--pca" in flags:  # standardising alone leaves these models' posteriors as they were
        assert np.abs(proba - unprojected).max() > 1e-6


KINDS = sorted(
    (n, kind)
    for n in EXPORTED
    if any(spec.kind == "column_types" for spec in MODELS[n].hyperparameters)
    for kind in MODELS[n].feature_kinds
)


@pytest.mark.numerical
@pytest.mark.parametrize(("name", "kind"), KINDS)
def test_every_column_kind_is_exported_or_refused_by_name(name, kind, tmp_path):
    """Wine: two Gaussian columns and the others of ``kind``."""
    from sklearn.datasets import load_wine

    from tests.declared import of_kind

    X, y = load_wine(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    X = np.column_stack([X[:, :2], of_kind(X[:, 2:8], kind)])
    names = [f"f{j}" for j in range(X.shape[1])]
    order = np.random.default_rng(2).permutation(len(y))
    frame = pl.DataFrame({**{n: X[:, j] for j, n in enumerate(names)}, "label": y})
    frame[order[:120]].write_csv(tmp_path / "train.csv")
    frame[order[120:]].drop("label").write_csv(tmp_path / "rows.csv")
    model, graph = tmp_path / "m.npz", tmp_path / "m.onnx"
    columns = ",".join(f"{n}={kind}" for n in names[2:])
    ok("fit", "-m", name, "-d", tmp_path / "train.csv", "--target", "label", "-o", model,
       "--column", columns)  # fmt: skip
    assert export_or_refusal(model, graph) is None
    unseen = ("--unseen", "ignore") if "unseen" in spec_names(MODELS[name]) else ()
    same_posteriors(graph, model, tmp_path / "rows.csv", tmp_path, *unseen)
    # Every choice of the kind's own settings: exported exactly, or refused naming it.
    for spec in MODELS[name].hyperparameters:
        if spec.kind != "choice" or not spec.flag or kind not in spec.help:
            continue
        for option in spec.options:
            if option == spec.default:
                continue
            ok("fit", "-m", name, "-d", tmp_path / "train.csv", "--target", "label",
               "-o", model, "--column", columns, spec.flag, option, "--force")  # fmt: skip
            (tmp_path / "o.onnx").unlink(missing_ok=True)  # an earlier option's graph
            refusal = export_or_refusal(model, tmp_path / "o.onnx")
            if refusal is None:
                same_posteriors(tmp_path / "o.onnx", model, tmp_path / "rows.csv", tmp_path)
            else:
                assert spec.flag in refusal and option in refusal
                assert not (tmp_path / "o.onnx").exists()


WEIGHTED = sorted(n for n in EXPORTED if MODELS[n].text_statistic not in (None, "bernoulli"))


@pytest.mark.numerical
@pytest.mark.parametrize("name", WEIGHTED)
@pytest.mark.parametrize(
    "flags",
    [
        ("--tfidf",),
        ("--tfidf", "--sublinear-tf", "--tfidf-norm", "l1"),
        ("--tfidf", "--no-smooth-idf", "--tfidf-norm", "none"),
    ],
)
def test_tfidf_weighting_is_part_of_the_graph(name, flags, tmp_path):
    """The text input stays the raw counts; the graph weights them."""
    import json

    from sklearn.feature_extraction.text import CountVectorizer

    from tests.conftest import SAMPLE

    model, graph = tmp_path / "m.npz", tmp_path / "m.onnx"
    ok("fit", "-m", name, "-d", SAMPLE / "austen_train.csv", "--text", "text", "-o", model,
       *flags)  # fmt: skip
    assert export_or_refusal(model, graph) is None
    session = ort.InferenceSession(str(graph), providers=["CPUExecutionProvider"])
    meta = session.get_modelmeta().custom_metadata_map
    settings, terms = json.loads(meta["text"]), json.loads(meta["vocabularies"])["text"]
    assert settings["weighting"]["scheme"] == "tfidf"
    vectorizer = CountVectorizer(
        vocabulary=terms,
        lowercase=settings["lowercase"],
        ngram_range=tuple(settings["ngram_range"]),
        token_pattern=settings["token_pattern"],
    )
    docs = pl.read_csv(SAMPLE / "austen_test.csv")["text"].to_list()
    counts = vectorizer.transform(docs).toarray().astype(np.float64)
    label, proba = session.run(["label", "probabilities"], {"text": counts})
    expected_labels, expected = nbcli_proba(model, SAMPLE / "austen_test.csv", tmp_path)
    np.testing.assert_allclose(proba, expected, rtol=0, atol=1e-9)
    assert label.tolist() == expected_labels
    unweighted = tmp_path / "u.npz"
    ok("fit", "-m", name, "-d", SAMPLE / "austen_train.csv", "--text", "text", "-o", unweighted)
    ok("export", unweighted, "-o", tmp_path / "u.onnx")
    plain = ort.InferenceSession(str(tmp_path / "u.onnx"), providers=["CPUExecutionProvider"])
    assert np.abs(plain.run(["probabilities"], {"text": counts})[0] - proba).max() > 1e-3


@pytest.mark.numerical
@pytest.mark.parametrize("name", EXPORTED)
def test_non_default_settings_are_exported_or_refused(name, tmp_path):
    """Every declared hyperparameter away from its default at once."""
    from sklearn.datasets import load_wine

    from nbcli.io.modelfile import ModelFile, save_model
    from tests.declared import non_default_params

    cls = MODELS[name]
    X, y = load_wine(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    order = np.random.default_rng(3).permutation(len(y))
    X, y = X[order], y[order]
    Xm, _ = fittable(cls, X)
    params = non_default_params(cls, Xm.shape[1], n_classes=3)
    if "unseen" in params:
        params["unseen"] = "ignore"
    model = cls(**params).fit(Xm[:120], y[:120])
    names = [f"f{j}" for j in range(Xm.shape[1])]
    save_model(ModelFile(model=model, feature_names=names), tmp_path / "m.npz")
    graph = tmp_path / "m.onnx"
    refusal = export_or_refusal(tmp_path / "m.npz", graph)
    if refusal is not None:
        assert not graph.exists()
        return
    session = ort.InferenceSession(str(graph), providers=["CPUExecutionProvider"])
    assert [i.name for i in session.get_inputs()] == ["X"]
    proba = session.run(["probabilities"], {"X": Xm[120:]})[0]
    np.testing.assert_allclose(proba, model.predict_proba(Xm[120:]), rtol=0, atol=1e-9)


@pytest.mark.parametrize("name", EXPORTED)
def test_a_graph_that_differs_from_the_model_is_refused(name, tmp_path, monkeypatch):
    """The check at export: a form whose arrays are 1% off is not written out."""
    from dataclasses import fields, is_dataclass, replace

    cls = MODELS[name]
    params, _, _ = wine_table(cls, tmp_path, "int")
    flags = []
    for key, value in params.items():
        if key != "column_types":
            flags += [f"--{key.replace('_', '-')}", str(value)]
    model = tmp_path / "m.npz"
    ok("fit", "-m", name, "-d", tmp_path / "train.csv", "--target", "label", "-o", model, *flags)
    real = cls.scoring_form

    def off(form):
        changes = {}
        for f in fields(form):
            value = getattr(form, f.name)
            if isinstance(value, np.ndarray) and value.dtype.kind == "f":
                changes[f.name] = np.where(np.isfinite(value), value * 1.01 + 0.01, value)
            elif f.name == "parts":
                changes[f.name] = tuple((c, off(p)) for c, p in value)
        return replace(form, **changes) if is_dataclass(form) else form

    monkeypatch.setattr(cls, "scoring_form", lambda self: off(real(self)))
    run = nbcli_in_process("export", model, "-o", tmp_path / "m.onnx")
    assert_one_error_line(run, "does not reproduce its posteriors")
    assert not (tmp_path / "m.onnx").exists()


def test_a_graph_is_not_written_under_a_model_file_name(tmp_path):
    # The mirror of fit's refusal of -o model.onnx.
    from tests.conftest import fitted_model_file

    fitted_model_file(tmp_path / "m.npz")
    run = nbcli_in_process("export", tmp_path / "m.npz", "-o", tmp_path / "graph.npz")
    assert_one_error_line(run, "an ONNX graph is not a model file (.npz)")
    assert not (tmp_path / "graph.npz").exists()
    forced = nbcli_in_process("export", tmp_path / "m.npz", "-o", tmp_path / "graph.npz", "--force")
    assert forced.returncode == 0 and (tmp_path / "graph.npz").exists(), forced.stderr


def test_a_graph_is_not_written_to_a_file_named_dash(tmp_path, monkeypatch):
    # "-" is stdout for every other output: a graph there would be a stray
    # file named "-" while the command said "wrote -".
    from tests.conftest import fitted_model_file

    fitted_model_file(tmp_path / "m.npz")
    monkeypatch.chdir(tmp_path)
    run = nbcli_in_process("export", tmp_path / "m.npz", "-o", "-")
    assert_one_error_line(run, "--output -: an ONNX graph is binary and is not written to stdout")
    assert not (tmp_path / "-").exists()


CODED = [n for n in EXPORTED if MODELS[n].feature_kinds[0] == "categorical"]


@pytest.mark.parametrize("name", CODED)
def test_a_code_with_a_fraction_is_left_out_as_an_unknown_code(name, tmp_path):
    # nbcli refuses 2.5 as no category code; the graph cannot refuse, and
    # must not score it as code 2 (the cast to an index truncates).
    cls = MODELS[name]
    wine_table(cls, tmp_path, "int")
    model, graph = tmp_path / "m.npz", tmp_path / "m.onnx"
    ok("fit", "-m", name, "-d", tmp_path / "train.csv", "--target", "label", "-o", model)
    ok("export", model, "-o", graph)
    session = ort.InferenceSession(str(graph), providers=["CPUExecutionProvider"])
    [feed] = session.get_inputs()
    X = pl.read_csv(tmp_path / "test.csv").drop("label").to_numpy().astype(np.float64)[:5]
    column = int(np.flatnonzero(X[0] >= 1)[0])

    def proba(value):
        rows = X.copy()
        rows[0, column] = value
        return session.run(["probabilities"], {feed.name: rows})[0][0]

    np.testing.assert_array_equal(proba(X[0, column] + 0.5), proba(-1.0))
    assert np.abs(proba(X[0, column] + 0.5) - proba(X[0, column])).max() > 1e-6


def test_the_reference_evaluator_keeps_numpy_warnings_to_itself(tmp_path, monkeypatch):
    # Without onnxruntime the graph is checked by onnx's reference evaluator,
    # whose NumPy warnings on extreme rows were printed as raw lines.
    import sys
    import warnings

    raw, model = tmp_path / "raw.npz", tmp_path / "m.npz"
    ok("fit", "-m", "gaussian", "-d", "sample_data/breast_cancer_train.csv", "-o", raw)
    ok("calibrate", "-m", raw, "-d", "sample_data/breast_cancer_calib.csv", "--method",
       "sigmoid", "--allow-worse", "-o", model)  # fmt: skip
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # as if not installed
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = nbcli_in_process("export", model, "-o", tmp_path / "m.onnx")
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)], caught
    assert "RuntimeWarning" not in run.stderr
    assert all(ln.startswith(("error:", "warning:", "wrote")) for ln in run.stderr_lines)
