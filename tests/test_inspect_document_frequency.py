"""``nbcli inspect``: indicative words among those with a least document
frequency (``--min-df``, formerly ``--min-count``), shown with their document
frequencies, which text models' files store."""

import io
import json
import zipfile

import numpy as np
import pandas as pd
import pytest

from nbcli.io.modelfile import ModelFile, load_model, save_model
from nbcli.models import MODELS as MODELS_BY_NAME
from nbcli.models import MultinomialNB
from nbcli.reports.model import MODEL_SCHEMA
from nbcli.workflows.inspect import inspect_model
from tests.conftest import nbcli_in_process
from tests.declared import is_numeric_only

sklearn = pytest.importorskip("sklearn")
from sklearn.feature_extraction.text import CountVectorizer  # noqa: E402

AUSTEN = "sample_data/austen_train.csv"


def _ok(run):
    assert run.returncode == 0, run.stderr
    return run


def _validate(doc):
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(doc, MODEL_SCHEMA)


@pytest.fixture(scope="module")
def austen(tmp_path_factory):
    """A multinomial text model of the Austen sample, and the document
    frequencies of its words as scikit-learn's CountVectorizer counts them."""
    root = tmp_path_factory.mktemp("df")
    model = root / "austen.npz"
    _ok(nbcli_in_process("fit", "-m", "multinomial", "-d", AUSTEN, "--text", "text",
                         "-t", "label", "-o", model, "-q"))  # fmt: skip
    frame = pd.read_csv(AUSTEN)
    vec = CountVectorizer()
    X = vec.fit_transform(frame["text"].fillna(""))
    df = dict(zip(vec.get_feature_names_out(), np.asarray((X > 0).sum(axis=0)).ravel()))
    tf = dict(zip(vec.get_feature_names_out(), np.asarray(X.sum(axis=0)).ravel()))
    return root, model, df, tf, len(frame)


def test_a_text_model_file_stores_each_words_document_frequency(austen):
    _, model, df, _, _ = austen
    mf = load_model(model)
    words = mf.vocabularies["text"]
    assert mf.text.document_frequencies == (tuple(int(df[w]) for w in words),)
    assert mf.metadata["text"]["document_frequencies"][0][:3] == [df[w] for w in words[:3]]


def test_the_floor_is_on_document_frequency_and_the_rows_show_it(austen):
    _, model, df, tf, n_rows = austen
    run = _ok(nbcli_in_process("inspect", model, "--top", "5", "--json", "-", "-q"))
    doc = json.loads(run.stdout)
    _validate(doc)
    assert doc["schema_version"] == 3
    found = doc["indicative_features"]
    floor = int(np.ceil(0.01 * n_rows))  # the default, 1% of the training rows
    assert found["min_df"] == found["min_count"] == floor == 9
    assert found["counted_in"] == "documents"
    words = load_model(model).vocabularies["text"]
    below = sum(df[w] < floor for w in words)
    assert found["n_below_min_df"] == found["n_below_min_count"] == below
    # Words that a floor on occurrences would let through are left out.
    frequent_but_rare = {w for w in words if tf[w] >= floor > df[w]}
    assert frequent_but_rare
    listed = [r for rows in found["classes"].values() for r in rows]
    assert len(listed) == 5 * 6
    for row in listed:
        word = row["feature"].removeprefix("text:")
        assert row["document_frequency"] == df[word] >= floor
        assert row["total"] == tf[word]  # occurrences, as before
        assert word not in frequent_but_rare
    assert doc["settings"]["min_df"] == doc["settings"]["min_count"] == 0.01


def test_min_count_is_the_same_option_as_min_df(austen):
    _, model, df, _, _ = austen
    docs = []
    for flag in ("--min-df", "--min-count"):
        run = _ok(nbcli_in_process("inspect", model, "--top", "3", flag, "20", "--json", "-"))
        docs.append(json.loads(run.stdout))
    assert docs[0]["indicative_features"] == docs[1]["indicative_features"]
    assert docs[0]["indicative_features"]["min_df"] == 20
    rows = [r for rs in docs[0]["indicative_features"]["classes"].values() for r in rs]
    assert min(r["document_frequency"] for r in rows) >= 20
    # The table names the floor in documents and shows them.
    run = _ok(nbcli_in_process("inspect", model, "--top", "2", "--min-df", "20"))
    assert "in at least 20 training documents" in run.stdout
    assert "documents" in run.stdout
    run = nbcli_in_process("inspect", model, "--min-df", "1.5")
    assert run.returncode == 2 and run.stderr.startswith("error: --min-df must be"), run.stderr


@pytest.mark.parametrize("spelled, floor_of", [("1.0", lambda n: n), ("1", lambda n: 1)])
def test_min_df_1_point_0_is_every_row_as_fit_reads_it(austen, spelled, floor_of):
    # fit --min-df 1.0 keeps the words of every document (CountVectorizer's
    # float), 1 the words of one: inspect reads the two spellings alike.
    _, model, df, _, n_rows = austen
    run = _ok(nbcli_in_process("inspect", model, "--min-df", spelled, "--json", "-", "-q"))
    found = json.loads(run.stdout)["indicative_features"]
    floor = floor_of(n_rows)
    assert found["min_df"] == floor
    words = load_model(model).vocabularies["text"]
    assert found["n_below_min_df"] == sum(df[w] < floor for w in words)
    vec = CountVectorizer(min_df=float(spelled) if "." in spelled else int(spelled))
    try:
        kept = set(vec.fit(pd.read_csv(AUSTEN)["text"].fillna("")).get_feature_names_out())
    except ValueError:  # "no terms remain": no word is in every document
        kept = set()
    assert len(words) - found["n_below_min_df"] == len(kept)


def test_chunked_tuned_and_mixed_fits_store_the_same_document_frequencies(austen):
    root, model, _, _, _ = austen
    want = load_model(model).text.document_frequencies
    chunked, tuned, mixed = root / "chunked.npz", root / "tuned.npz", root / "mixed.npz"
    _ok(nbcli_in_process("fit", "-m", "multinomial", "-d", AUSTEN, "--text", "text",
                         "-t", "label", "--chunk-size", "97", "-o", chunked, "-q"))  # fmt: skip
    _ok(nbcli_in_process("tune", "-m", "multinomial", "-d", AUSTEN, "--text", "text",
                         "-t", "label", "--alpha", "0.5,1", "--folds", "3", "--bootstrap", "0",
                         "-o", tuned, "-q"))  # fmt: skip
    _ok(nbcli_in_process("fit", "-m", "mixed", "-d", AUSTEN, "--text", "text",
                         "-t", "label", "-o", mixed, "-q"))  # fmt: skip
    for path in (chunked, tuned, mixed):
        assert load_model(path).text.document_frequencies == want, path
    # The mixed model's words are floored and shown as the multinomial model's.
    a = inspect_model(mixed, top=4).to_dict()["indicative_features"]
    b = inspect_model(model, top=4).to_dict()["indicative_features"]
    assert a["counted_in"] == "documents"
    assert a["n_below_min_df"] == b["n_below_min_df"]
    for label, rows in a["classes"].items():
        assert [r["document_frequency"] for r in rows] == [
            r["document_frequency"] for r in b["classes"][label]
        ]


def test_a_bernoulli_text_model_counts_documents(tmp_path):
    model = tmp_path / "b.npz"
    _ok(nbcli_in_process("fit", "-m", "bernoulli", "-d", AUSTEN, "--text", "text", "--binarize", "0",
                         "-t", "label", "-o", model, "-q"))  # fmt: skip
    found = inspect_model(model, top=3).to_dict()["indicative_features"]
    assert found["counted_in"] == "documents"
    for rows in found["classes"].values():
        for row in rows:
            assert row["document_frequency"] == row["total"] >= found["min_df"]


def test_a_file_without_document_frequencies_floors_occurrences(tmp_path):
    # A count matrix (no text columns), as files written before they were stored.
    rng = np.random.default_rng(3)
    X = rng.poisson(2.0, size=(100, 4)).astype(float)
    X[:, 3] = 0.0
    X[0, 3] = 5.0  # five occurrences, one document
    y = np.repeat([0, 1], 50)
    path = tmp_path / "m.npz"
    save_model(
        ModelFile(MultinomialNB().fit(X, y), list("abcd"), training={"n_samples": 100}), path
    )
    report = inspect_model(path, top=4, min_df=5)
    found = report.to_dict()["indicative_features"]
    assert found["counted_in"] == "occurrences" and found["n_below_min_df"] == 0
    assert all("document_frequency" not in r for rs in found["classes"].values() for r in rs)
    assert inspect_model(path, top=4, min_df=6).below_min_count == 1
    assert inspect_model(path, top=4, min_count=6).below_min_count == 1  # the former name


def test_document_frequencies_that_do_not_fit_the_vocabulary_are_refused(austen, tmp_path):
    _, model, _, _, _ = austen
    broken = tmp_path / "broken.npz"
    with zipfile.ZipFile(model) as z:
        members = {n: z.read(n) for n in z.namelist()}
    meta = json.loads(np.load(io.BytesIO(members["metadata.npy"])).tobytes())
    meta["text"]["document_frequencies"][0].pop()
    buf = io.BytesIO()
    np.save(buf, np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8))
    members["metadata.npy"] = buf.getvalue()
    with zipfile.ZipFile(broken, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    run = nbcli_in_process("inspect", broken)
    assert run.returncode == 2, run.stderr
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "document frequencies of column 'text'" in lines[0], run.stderr


def test_a_tune_over_parts_stores_the_document_frequencies_of_a_fit_over_them(tmp_path):
    parts = ["-d", AUSTEN, "-d", "sample_data/austen_test.csv"]
    fitted, tuned = tmp_path / "fit.npz", tmp_path / "tune.npz"
    _ok(nbcli_in_process("fit", "-m", "multinomial", *parts, "--text", "text", "-t", "label",
                         "--min-df", "2", "-o", fitted, "-q"))  # fmt: skip
    _ok(nbcli_in_process("tune", "-m", "multinomial", *parts, "--text", "text", "-t", "label",
                         "--min-df", "2", "--alpha", "0.1,1", "--bootstrap", "0",
                         "-o", tuned, "-q"))  # fmt: skip
    want = load_model(fitted).text.document_frequencies
    assert want is not None and min(want[0]) >= 2
    assert load_model(tuned).text.document_frequencies == want


@pytest.mark.parametrize(
    "name", sorted(n for n, cls in MODELS_BY_NAME.items() if is_numeric_only(cls))
)
def test_min_df_on_a_model_without_counts_says_it_changes_nothing(tmp_path, name):
    # A model of real-valued columns only has no counts for the floor.
    from tests.conftest import fitted_model_file

    model = tmp_path / "g.npz"
    fitted_model_file(model, name)
    run = _ok(nbcli_in_process("inspect", model, "--min-df", "0.5"))
    assert "--min-df applies to models with counts" in run.stderr
    assert "changes nothing" in run.stderr
    quiet = _ok(nbcli_in_process("inspect", model))
    assert "--min-df" not in quiet.stderr  # the default is not a choice the user made


def test_min_df_on_a_text_model_says_nothing_of_the_kind(austen):
    _, model, _, _, _ = austen
    run = _ok(nbcli_in_process("inspect", model, "--min-df", "5"))
    assert "changes nothing" not in run.stderr
