"""``nbcli inspect``: what a model learnt per column, and indicative words above a count floor."""

import json

import numpy as np
import pandas as pd
import pytest

from nbcli.io.modelfile import ModelFile, save_model
from nbcli.models import CategoricalNB, MultinomialNB
from nbcli.reports.model import MODEL_SCHEMA, count_floor
from nbcli.workflows.inspect import inspect_model
from tests.conftest import nbcli_in_process
from tests.test_reports import validate

pytestmark = pytest.mark.numerical

PENGUINS = "sample_data/penguins_train.csv"
GAUSSIAN = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g", "year"]


@pytest.fixture(scope="module")
def mixed_report(tmp_path_factory):
    root = tmp_path_factory.mktemp("inspect")
    model = root / "m.npz"
    run = nbcli_in_process("fit", "-m", "mixed", "-d", PENGUINS, "-t", "species", "-o", model, "-q")
    assert run.returncode == 0, run.stderr
    run = nbcli_in_process("inspect", model, "--top", "20", "--json", "-", "-q")
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_the_mixed_report_is_the_formula_per_column(mixed_report):
    doc = mixed_report
    assert validate(doc, MODEL_SCHEMA) == [] and doc["schema_version"] == 3
    frame = pd.read_csv(PENGUINS)
    columns = {c["feature"]: c for c in doc["parameters"]["columns"]}
    assert doc["parameters"]["n_columns"] == 7 and doc["parameters"]["n_left_out"] == 0
    for name in GAUSSIAN:
        observed = frame[["species", name]].dropna()
        eps = 1e-9 * observed[name].var(ddof=0)  # mixed's default: the column's own variance
        for label, v in columns[name]["classes"].items():
            values = observed.loc[observed["species"] == label, name]
            assert v["mean"] == pytest.approx(values.mean(), rel=1e-12)
            assert v["variance"] == pytest.approx(values.var(ddof=0) + eps, rel=1e-10)
    for name in ("island", "sex"):
        entry = columns[name]
        assert entry["type"] == "categorical"
        observed = frame[["species", name]].dropna()
        counts = pd.crosstab(observed["species"], observed[name])
        n_cat = frame[name].nunique()
        assert entry["n_categories"] == n_cat and entry["n_left_out"] == 0
        for label, probabilities in entry["classes"].items():
            row = counts.loc[label]
            expected = [(row.get(v, 0) + 1.0) / (row.sum() + n_cat) for v in entry["categories"]]
            np.testing.assert_allclose(probabilities, expected, rtol=1e-12)
    # Chinstrap penguins live on Dream only: the table says so.
    chinstrap = dict(
        zip(columns["island"]["categories"], columns["island"]["classes"]["Chinstrap"])
    )
    assert max(chinstrap, key=chinstrap.get) == "Dream"


def test_wide_tables_are_bounded_and_say_what_was_left_out(tmp_path):
    model = tmp_path / "m.npz"
    run = nbcli_in_process("fit", "-m", "mixed", "-d", PENGUINS, "-t", "species", "-o", model, "-q")
    assert run.returncode == 0, run.stderr
    run = nbcli_in_process("inspect", model, "--top", "2", "--json", tmp_path / "r.json")
    assert run.returncode == 0, run.stderr
    doc = json.loads((tmp_path / "r.json").read_text())
    parameters = doc["parameters"]
    assert [c["feature"] for c in parameters["columns"]] == ["island", "bill_length_mm"]
    assert parameters["n_left_out"] == 5
    island = parameters["columns"][0]
    assert len(island["categories"]) == 2 and island["n_left_out"] == 1
    assert all(len(p) == 2 for p in island["classes"].values())
    text = " ".join(run.stdout.split())
    assert "P(island | class)" in text and "1 more category left out" in text
    assert "5 more columns left out (--top shows more)" in text
    assert "Gaussian columns: mean and standard deviation per class" in text


def test_a_categorical_model_shows_its_category_probabilities(tmp_path):
    rng = np.random.default_rng(0)
    X = rng.integers(0, 4, size=(80, 2)).astype(float)
    y = (X[:, 0] > 1).astype(int)
    m = CategoricalNB(alpha=0.5).fit(X, y)
    path = tmp_path / "c.npz"
    columns = [
        {"name": "colour", "type": "categorical", "categories": ["red", "green", "blue", "grey"]},
        {"name": "size", "type": "categorical", "categories": ["s", "m", "l", "xl"]},
    ]
    save_model(ModelFile(m, ["colour", "size"], training={"n_samples": 80}, columns=columns), path)
    report = inspect_model(path, top=10)
    colour = report.parameters["columns"][0]
    assert colour["categories"] == ["red", "green", "blue", "grey"]
    for k, probabilities in enumerate(colour["classes"].values()):
        counts = np.bincount(X[y == k, 0].astype(int), minlength=4)
        np.testing.assert_allclose(probabilities, (counts + 0.5) / (counts.sum() + 2.0), rtol=1e-12)


def _corpus():
    """Class 0 writes 'alpha' often; one class-0 document holds rare words once each."""
    rng = np.random.default_rng(1)
    n, V = 200, 6
    X = rng.poisson(3.0, size=(n, V)).astype(float)
    y = np.repeat([0, 1], n // 2)
    X[y == 0, 0] += 3.0  # 'alpha': frequent, skewed to class 0
    X[:, 4:] = 0.0
    X[0, 4] = X[1, 5] = 1.0  # 'rare1', 'rare2': seen once, in class 0 only
    return X, y, ["alpha", "b", "c", "d", "rare1", "rare2"]


def test_indicative_words_need_the_count_floor_and_show_their_counts(tmp_path):
    X, y, names = _corpus()
    m = MultinomialNB(alpha=0.01).fit(X, y)
    path = tmp_path / "t.npz"
    save_model(ModelFile(m, names, training={"n_samples": len(y)}), path)
    everything = inspect_model(path, top=1, min_count=0)
    # Without a floor the words seen once lead: the "top words".
    assert everything.indicative["0"][0]["feature"].startswith("rare")
    assert everything.below_min_count == 0
    report = inspect_model(path, top=2)  # default: 1% of 200 rows, 2 counts
    assert report.count_floor == 2 and report.below_min_count == 2
    top = report.indicative["0"][0]
    assert top["feature"] == "alpha"
    assert top["count"] == X[y == 0, 0].sum() and top["total"] == X[:, 0].sum()
    theta = np.exp(m.feature_log_prob_)
    assert top["score"] == pytest.approx(np.log(theta[0, 0] / theta[1, 0]), rel=1e-12)
    doc = report.to_dict()
    assert validate(doc, MODEL_SCHEMA) == []
    assert doc["indicative_features"]["min_count"] == 2
    assert doc["indicative_features"]["n_below_min_count"] == 2
    assert doc["settings"]["min_count"] == 0.01


def test_count_floor_reads_counts_and_fractions():
    assert count_floor(0, 4000) == 0 and count_floor(25, 4000) == 25
    assert count_floor(0.01, 4000) == 40 and count_floor(0.01, 841) == 9
    assert count_floor(1.0, 841) == 841 and count_floor(1, 841) == 1  # as CountVectorizer
    with pytest.raises(ValueError, match="fraction in"):
        count_floor(1.5, 10)


def test_min_count_is_checked_in_one_line(tmp_path):
    X, y, names = _corpus()
    path = tmp_path / "t.npz"
    save_model(ModelFile(MultinomialNB().fit(X, y), names, training={"n_samples": 200}), path)
    run = nbcli_in_process("inspect", path, "--min-count", "-3")
    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == [
        "error: --min-df must be a whole number >= 0 or a fraction in (0, 1]; got '-3'"
    ]


def test_a_mixed_text_model_ranks_its_words_as_the_multinomial_model_does(tmp_path):
    paths = {}
    for model in ("mixed", "multinomial"):
        paths[model] = tmp_path / f"{model}.npz"
        run = nbcli_in_process(
            "fit", "-m", model, "-d", "sample_data/austen_train.csv", "--text", "text",
            "-t", "label", "-o", paths[model], "-q",
        )  # fmt: skip
        assert run.returncode == 0, run.stderr
    mixed = inspect_model(paths["mixed"], top=5)
    multinomial = inspect_model(paths["multinomial"], top=5)
    assert mixed.indicative.keys() == multinomial.indicative.keys()
    for label, rows in mixed.indicative.items():
        theirs = multinomial.indicative[label]
        assert [r["feature"] for r in rows] == [r["feature"] for r in theirs]
        np.testing.assert_allclose(
            [r["score"] for r in rows], [r["score"] for r in theirs], rtol=1e-12
        )
        assert [r["total"] for r in rows] == [r["total"] for r in theirs]
    assert mixed.below_min_count == multinomial.below_min_count > 0
    assert validate(mixed.to_dict(), MODEL_SCHEMA) == []
