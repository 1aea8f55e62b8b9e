"""``--text COL`` end to end: fit, the model file, predict, against scikit-learn's pipeline.

The reference is ``CountVectorizer`` + ``MultinomialNB``/``BernoulliNB``/``ComplementNB`` on
the Austen paragraphs in ``sample_data/`` (held-out posteriors to 1e-8,
words unseen in training ignored as ``CountVectorizer.transform`` ignores them).
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from nbcli.io.modelfile import load_model

sklearn_text = pytest.importorskip("sklearn.feature_extraction.text")
sklearn_nb = pytest.importorskip("sklearn.naive_bayes")
CountVectorizer = sklearn_text.CountVectorizer

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"
TRAIN, TEST = SAMPLE / "austen_train.csv", SAMPLE / "austen_test.csv"


def nbcli(*args):
    from tests.conftest import nbcli_in_process

    return nbcli_in_process(*args)


def ok(run):
    assert run.returncode == 0, run.stderr
    return run


@pytest.fixture(scope="module")
def austen():
    return pd.read_csv(TRAIN), pd.read_csv(TEST)


def _proba(path_or_text) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(path_or_text))


def _fit_predict(tmp_path, *fit_args, train=TRAIN, test=TEST):
    model = tmp_path / "m.npz"
    ok(nbcli("fit", "--data", train, "--target", "label", "-o", model, "--quiet", *fit_args))
    run = ok(nbcli("predict", "--model", model, "--data", test, "--proba"))
    return model, _proba(run.stdout), run


@pytest.mark.parametrize(
    "fit_args, reference",
    [
        (("--model", "multinomial"), lambda: sklearn_nb.MultinomialNB()),
        (("--model", "multinomial", "--alpha", "0.1"), lambda: sklearn_nb.MultinomialNB(alpha=0.1)),
        (("--model", "bernoulli", "--binarize", "0"), lambda: sklearn_nb.BernoulliNB(binarize=0.0)),
        (("--model", "complement"), lambda: sklearn_nb.ComplementNB()),
        (("--model", "complement", "--norm"), lambda: sklearn_nb.ComplementNB(norm=True)),
    ],
)
def test_fit_then_predict_equals_countvectorizer_and_naive_bayes(
    tmp_path, austen, fit_args, reference
):
    train, test = austen
    model, got, run = _fit_predict(tmp_path, "--text", "text", *fit_args)
    vec = CountVectorizer()
    sk = reference().fit(vec.fit_transform(train.text), train.label)
    expected = sk.predict_proba(vec.transform(test.text))
    cols = [f"proba_{c}" for c in sk.classes_]
    np.testing.assert_allclose(got[cols].to_numpy(), expected, rtol=0, atol=1e-8)
    assert (got.prediction == sk.predict(vec.transform(test.text))).all()
    # Held-out documents hold words training never kept: counted, not an error.
    analyze = vec.build_analyzer()
    unseen = sum(1 for d in test.text for w in analyze(d) if w not in vec.vocabulary_)
    assert unseen > 0
    # Said once, in the summary line.
    assert run.stderr.count(f"{unseen} words not in the") == 1, run.stderr
    assert f"{unseen} words not in the vocabulary ignored" in run.stderr
    mf = load_model(model)
    assert mf.vocabularies == {"text": vec.get_feature_names_out().tolist()}
    assert mf.feature_names[:2] == [f"text:{w}" for w in vec.get_feature_names_out()[:2]]
    assert mf.metadata["text"]["columns"] == ["text"]


def test_tokenisation_options_equal_countvectorizers(tmp_path, austen):
    train, test = austen
    stop = tmp_path / "stop.txt"
    stop.write_text("# common words\nthe\nand\nof\n\nto\n", encoding="utf-8")
    options = ("--ngram", "1,2", "--min-df", "2", "--max-df", "0.5", "--max-features", "800")
    model, got, _ = _fit_predict(
        tmp_path, "--model", "multinomial", "--text", "text", *options, "--stop-words", stop
    )
    vec = CountVectorizer(
        ngram_range=(1, 2),
        min_df=2,
        max_df=0.5,
        max_features=800,
        stop_words=["the", "and", "of", "to"],
    )
    sk = sklearn_nb.MultinomialNB().fit(vec.fit_transform(train.text), train.label)
    expected = sk.predict_proba(vec.transform(test.text))
    np.testing.assert_allclose(got.iloc[:, 1:].to_numpy(), expected, rtol=0, atol=1e-8)
    assert load_model(model).vocabularies["text"] == vec.get_feature_names_out().tolist()

    upper = tmp_path / "upper.csv"
    pd.DataFrame(
        {"text": ["Free MONEY", "free money", "Meeting", "meeting"], "label": list("sshh")}
    ).to_csv(upper, index=False)
    ok(
        nbcli(
            "fit",
            "--data",
            upper,
            "--model",
            "multinomial",
            "--text",
            "text",
            "--no-lowercase",
            "-o",
            model,
            "-q",
        )
    )
    assert load_model(model).vocabularies["text"] == [
        "Free",
        "MONEY",
        "Meeting",
        "free",
        "meeting",
        "money",
    ]


def test_chunked_fit_equals_one_fit(tmp_path, austen):
    train, _ = austen
    # Sorted by label, later chunks bring classes the first has not seen.
    ordered = tmp_path / "sorted.csv"
    train.sort_values("label", kind="stable").to_csv(ordered, index=False)
    one, chunked = tmp_path / "one.npz", tmp_path / "chunked.npz"
    base = ("fit", "--data", ordered, "--model", "multinomial", "--text", "text", "-q")
    ok(nbcli(*base, "-o", one))
    ok(nbcli(*base, "--chunk-size", "97", "-o", chunked))
    a, b = load_model(one), load_model(chunked)
    assert a.vocabularies == b.vocabularies
    assert a.model.classes_.tolist() == b.model.classes_.tolist()
    np.testing.assert_allclose(b.model.feature_count_, a.model.feature_count_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(
        b.model.feature_log_prob_, a.model.feature_log_prob_, rtol=0, atol=1e-12
    )
    assert a.training["fingerprint"] == b.training["fingerprint"]


def test_numeric_columns_beside_text_and_missing_documents(tmp_path):
    rng = np.random.default_rng(0)
    words = np.array(["free", "money", "now", "meeting", "noon", "agenda", "offer"])
    docs = [" ".join(rng.choice(words, rng.integers(0, 6))) for _ in range(200)]
    docs[3] = ""  # an empty cell: a document without words
    frame = pd.DataFrame(
        {"links": rng.poisson(2, 200), "body": docs, "label": rng.choice(["ham", "spam"], 200)}
    )
    data = tmp_path / "mail.csv"
    frame.to_csv(data, index=False)
    model, got, _ = _fit_predict(
        tmp_path, "--model", "multinomial", "--text", "body", train=data, test=data
    )
    vec = CountVectorizer()
    X = sp.hstack(
        [sp.csr_array(frame[["links"]].to_numpy()), vec.fit_transform(frame.body.fillna(""))]
    )
    sk = sklearn_nb.MultinomialNB().fit(X, frame.label)
    np.testing.assert_allclose(got.iloc[:, 1:].to_numpy(), sk.predict_proba(X), rtol=0, atol=1e-8)
    assert load_model(model).feature_names[0] == "links"
    # Parquet input gives the same posteriors (a null cell is an empty document).
    parquet = tmp_path / "mail.parquet"
    frame.assign(body=frame.body.replace("", None)).to_parquet(parquet)
    run = ok(nbcli("predict", "--model", model, "--data", parquet, "--proba"))
    np.testing.assert_allclose(
        _proba(run.stdout).iloc[:, 1:].to_numpy(), sk.predict_proba(X), atol=1e-12
    )


def test_config_text_table(tmp_path, austen):
    config = tmp_path / "fit.toml"
    config.write_text('model = "multinomial"\n[text]\ncolumns = ["text"]\nmin_df = 3\n')
    model = tmp_path / "m.npz"
    ok(nbcli("fit", "--data", TRAIN, "--config", config, "-o", model, "-q"))
    train, _ = austen
    expected = CountVectorizer(min_df=3).fit(train.text).get_feature_names_out().tolist()
    assert load_model(model).vocabularies["text"] == expected
    assert load_model(model).text.min_df == 3


@pytest.mark.parametrize(
    "args, message",
    [
        (("--model", "gaussian", "--text", "text"), "--text needs a model of word counts"),
        (("--model", "bernoulli", "--text", "text"), "needs --binarize 0"),
        (("--model", "multinomial", "--ngram", "1,2"), "--ngram applies to text columns"),
        (("--model", "multinomial", "--text", "text", "--ngram", "2,1"), "--ngram must be MIN,MAX"),
        (("--model", "multinomial", "--text", "text", "--min-df", "x"), "--min-df must be"),
        (
            ("--model", "multinomial", "--text", "text", "--min-df", "100000"),
            "max_df corresponds to < documents than min_df",
        ),
        (("--model", "multinomial", "--text", "text", "--min-df", "0.99"), "no terms remain"),
        (("--model", "multinomial", "--text", "label"), "--text label: the column is the target"),
        (("--model", "multinomial", "--text", "nope"), "no column 'nope'"),
        (
            ("--model", "multinomial", "--text", "text", "--stop-words", "/nonexistent"),
            "no such file",
        ),
    ],
)
def test_bad_text_options_are_one_line_errors(tmp_path, args, message):
    run = nbcli("fit", "--data", TRAIN, "--target", "label", "-o", tmp_path / "m.npz", *args)
    assert run.returncode != 0
    assert message in run.stderr
    assert "Traceback" not in run.stderr and run.stderr.startswith("error:")


def _rewrite(src: Path, dst: Path, change) -> None:
    with zipfile.ZipFile(src) as z:
        members = {n: np.load(io.BytesIO(z.read(n))) for n in z.namelist()}
    change(members)
    with open(dst, "wb") as f:
        np.savez(f, **{n[:-4]: a for n, a in members.items()})


def test_a_corrupted_vocabulary_is_refused(tmp_path):
    data = tmp_path / "spam.csv"
    pd.DataFrame(
        {"text": ["free money", "money now", "meeting at noon", "noon"], "label": list("sshh")}
    ).to_csv(data, index=False)
    model = tmp_path / "m.npz"
    ok(nbcli("fit", "--data", data, "--model", "multinomial", "--text", "text", "-o", model, "-q"))

    def bad_utf8(m):
        d = m["text.vocabularies.0.data.npy"].copy()
        d[0] = 0xFF
        m["text.vocabularies.0.data.npy"] = d

    def unsorted(m):
        d = m["text.vocabularies.0.data.npy"].copy()
        d[:2] = d[:2][::-1]  # "at" -> "ta": out of code-point order
        m["text.vocabularies.0.data.npy"] = d

    def other_settings(m):
        meta = json.loads(m["metadata.npy"].tobytes())
        meta["text"]["ngram_range"] = [3, 1]
        m["metadata.npy"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)

    def renamed_feature(m):
        meta = json.loads(m["metadata.npy"].tobytes())
        meta["feature_names"][0] = "text:zz"
        m["metadata.npy"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)

    for change, message in [
        (bad_utf8, "not valid UTF-8"),
        (unsorted, "damaged vocabulary"),
        (other_settings, "invalid text settings"),
        (renamed_feature, "do not match its vocabularies"),
    ]:
        broken = tmp_path / f"{change.__name__}.npz"
        _rewrite(model, broken, change)
        run = nbcli("predict", "--model", broken, "--data", data)
        assert run.returncode != 0, change.__name__
        assert message in run.stderr and run.stderr.count("\n") == 1, run.stderr
        assert run.stderr.startswith("error:")


def test_seed_001_free_money_from_the_command_line(tmp_path):
    # Seed 001's counts: free 8/1, money 6/2, meeting 1/10 of 50 spam and
    # 100 ham words (the rest one filler word), alpha at its floor, priors 0.4/0.6.
    spam = " ".join(["free"] * 8 + ["money"] * 6 + ["meeting"] + ["filler"] * 35)
    ham = " ".join(["free"] + ["money"] * 2 + ["meeting"] * 10 + ["filler"] * 87)
    data, new = tmp_path / "seed.csv", tmp_path / "new.csv"
    pd.DataFrame({"text": [spam, ham], "label": ["spam", "ham"]}).to_csv(data, index=False)
    pd.DataFrame({"text": ["free money"]}).to_csv(new, index=False)
    model = tmp_path / "m.npz"
    ok(
        nbcli(
            "fit",
            "--data",
            data,
            "--model",
            "multinomial",
            "--text",
            "text",
            "--alpha",
            "0",
            "--priors",
            "spam=0.4,ham=0.6",
            "-o",
            model,
            "-q",
        )
    )
    got = _proba(ok(nbcli("predict", "--model", model, "--data", new, "--proba")).stdout)
    assert got.prediction[0] == "spam"
    assert got.proba_spam[0] == pytest.approx(64 / 65, rel=1e-8)
    assert got.proba_spam[0] / got.proba_ham[0] == pytest.approx(64.0, rel=1e-8)


@settings(max_examples=15, deadline=None)
@given(
    docs=st.lists(
        st.tuples(st.text("ab cé", max_size=12), st.sampled_from(["x", "y", "z"])),
        min_size=2,
        max_size=30,
    ),
    cuts=st.lists(st.integers(1, 29), max_size=4),
)
def test_any_chunking_gives_the_model_of_one_fit(docs, cuts):
    from nbcli.models import MultinomialNB
    from nbcli.text.settings import TextSettings
    from nbcli.text.vocabulary import Vocabulary
    from nbcli.workflows.text_features import (
        accumulate_text,
        finalize_text,
        fit_text_chunks,
        text_matrix,
    )

    texts = np.array([d for d, _ in docs], dtype=object)
    y = np.array([label for _, label in docs])
    X = np.arange(len(docs), dtype=np.float64)[:, None] % 3
    settings = TextSettings(columns=("doc",), ngram_range=(1, 2))
    if not any(len(t.replace(" ", "")) >= 2 for t in texts):
        return  # no token at all: both fits refuse it alike
    bounds = [0, *sorted({c for c in cuts if c < len(docs)}), len(docs)]
    est = MultinomialNB()

    def part(lo, hi):
        return accumulate_text(est, settings, X[lo:hi], {"doc": texts[lo:hi]}, y[lo:hi])

    whole = part(0, len(docs))
    merged = None
    for lo, hi in reversed(list(zip(bounds[:-1], bounds[1:]))):  # any order
        if hi > lo:
            merged = part(lo, hi) if merged is None else merged.merge(part(lo, hi))
    a, b = MultinomialNB(), MultinomialNB()
    try:
        va = finalize_text(a, settings, whole, ["n"])
    except Exception as exc:
        with pytest.raises(type(exc)):
            finalize_text(b, settings, merged, ["n"])
        return
    vb = finalize_text(b, settings, merged, ["n"])
    # The streaming fit (terms tallied as the chunks come, in file order).
    c = MultinomialNB()
    chunks = [
        (X[lo:hi], y[lo:hi], {"doc": texts[lo:hi]})
        for lo, hi in zip(bounds[:-1], bounds[1:])
        if hi > lo
    ]
    vc = fit_text_chunks(c, settings, iter(chunks), ["n"])
    assert va == vb == vc
    a.finalize()
    b.finalize()
    c.finalize()
    np.testing.assert_array_equal(a.classes_, b.classes_)
    np.testing.assert_array_equal(a.classes_, c.classes_)
    np.testing.assert_allclose(a.feature_log_prob_, b.feature_log_prob_, atol=1e-12)
    np.testing.assert_allclose(a.feature_log_prob_, c.feature_log_prob_, atol=1e-12)
    counts = text_matrix(X, {"doc": texts}, settings, {"doc": Vocabulary(va["doc"])})
    np.testing.assert_allclose(a.predict_proba(counts.X), b.predict_proba(counts.X), atol=1e-12)
    np.testing.assert_allclose(a.predict_proba(counts.X), c.predict_proba(counts.X), atol=1e-12)


def test_indicative_words_map_feature_indices_to_words(tmp_path):
    from nbcli.workflows.text_features import indicative_words

    data = tmp_path / "spam.csv"
    pd.DataFrame(
        {
            "links": [3, 2, 0, 0],
            "text": ["free money free", "money now", "meeting at noon", "noon agenda"],
            "label": list("sshh"),
        }
    ).to_csv(data, index=False)
    model = tmp_path / "m.npz"
    ok(nbcli("fit", "--data", data, "--model", "multinomial", "--text", "text", "-o", model, "-q"))
    words = indicative_words(load_model(model), n=2)
    assert [w for _, w, _ in words["s"]] == ["free", "money"]
    assert [w for _, w, _ in words["h"]] == ["noon", "agenda"]
    mf = load_model(model)
    j = mf.feature_names.index("text:free")
    expected = mf.model.feature_log_prob_[1, j] - mf.model.feature_log_prob_[0, j]
    assert words["s"][0] == ("text", "free", pytest.approx(expected))


def test_inspect_names_the_words_of_a_text_model_with_a_numeric_column(tmp_path, austen):
    # The numeric column comes after the text column in the file, but first
    # among the model's features: the words must not shift by one.
    train = austen[0].assign(commas=austen[0].text.str.count(","))
    data, model = tmp_path / "train.csv", tmp_path / "m.npz"
    train.to_csv(data, index=False)
    fit = ("fit", "--data", data, "--target", "label", "-o", model, "--quiet")
    ok(nbcli(*fit, "--model", "multinomial", "--text", "text"))
    run = ok(nbcli("inspect", model, "--top", "5", "--json", tmp_path / "r.json"))
    doc = json.loads((tmp_path / "r.json").read_text())
    vocabulary = CountVectorizer().fit(train.text).get_feature_names_out().tolist()
    assert doc["features"] == [
        {"name": "commas", "type": "numeric"},
        {"name": "text", "type": "text", "n_words": len(vocabulary)},
    ]
    assert f"commas (numeric), text (text, {len(vocabulary):,} words)" in run.stdout
    mf = load_model(model)
    names = ["commas", *(f"text:{w}" for w in vocabulary)]
    logp = np.asarray(mf.model.feature_log_prob_)
    prior = np.exp(mf.model.class_log_prior_)
    for k, label in enumerate(mf.model.classes_):
        others = np.delete(np.arange(len(prior)), k)
        rest = prior[others] @ np.exp(logp[others]) / prior[others].sum()
        ratio = logp[k] - np.log(rest)
        best = np.argsort(-ratio, kind="stable")[:5]
        got = doc["indicative_features"]["classes"][str(label)]
        assert [r["feature"] for r in got] == [names[j] for j in best]
        np.testing.assert_allclose([r["score"] for r in got], ratio[best], rtol=1e-12)
    # Each author's top word is one of their characters' names, not a neighbour of it.
    assert doc["indicative_features"]["classes"]["emma"][0]["feature"] == "text:emma"


def test_fit_names_a_text_column_as_text(tmp_path):
    from tests.conftest import nbcli_in_process

    run = nbcli_in_process("fit", "-m", "multinomial", "-d", SAMPLE / "austen_train.csv",
                           "--text", "text", "-o", tmp_path / "m.npz")  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "column types: text=text" in run.stderr


def test_a_text_column_that_keeps_no_term_is_named_with_its_file(tmp_path):
    data = tmp_path / "few.csv"
    data.write_text("text,label\ncat,a\ndog,b\nbird,a\n", encoding="utf-8")
    run = nbcli(
        "fit", "-m", "multinomial", "--text", "text", "--min-df", "2",
        "-d", data, "-o", tmp_path / "m.npz",
    )  # fmt: skip
    assert run.returncode == 2
    line = run.stderr.strip().splitlines()[-1]
    assert line.startswith(f"error: {data}: text column 'text': "), line
    assert "Traceback" not in run.stderr


def test_a_stop_word_file_with_a_byte_order_mark_keeps_its_first_word(tmp_path):
    from nbcli.cli.text_options import read_stop_words

    path = tmp_path / "stop.txt"
    path.write_bytes(b"\xef\xbb\xbfthe\r\nof\r\n")
    assert read_stop_words(str(path)) == ("of", "the")
    run = nbcli("fit", "-m", "multinomial", "-d", TRAIN, "--text", "text",
                "--stop-words", "english", "-o", tmp_path / "m.npz")  # fmt: skip
    assert run.returncode == 2 and "nbcli has no built-in lists" in run.stderr


def test_an_empty_text_column_says_so(tmp_path):
    data = tmp_path / "e.csv"
    data.write_text("text,label\n,a\n,b\n,a\n")
    run = nbcli("fit", "-m", "multinomial", "-d", data, "--text", "text", "-o", tmp_path / "m.npz")
    assert run.returncode == 2
    assert "text column 'text' has no word in any row" in run.stderr
    assert "leave it out of --text" in run.stderr


def test_text_columns_from_an_npz_archive_are_refused_as_such(tmp_path):
    np.savez(tmp_path / "d.npz", X=np.arange(30.0).reshape(10, 3), y=np.arange(10) % 2)
    from tests.conftest import assert_one_error_line

    run = nbcli(
        "fit", "-m", "multinomial", "-d", tmp_path / "d.npz", "--text", "doc", "-o", tmp_path / "m"
    )
    assert_one_error_line(run, "--text doc: an NPZ archive holds numeric arrays")


def test_an_empty_text_option_is_refused(tmp_path):
    # An unset shell variable (--text "$COL"): the column would be read as a
    # table column and refused later as holding text.
    from tests.conftest import assert_one_error_line

    run = nbcli("fit", "-m", "multinomial", "-d", TRAIN, "--text", "", "-o", tmp_path / "m")
    assert_one_error_line(run, "--text is empty")


@pytest.mark.parametrize("form", ["file", "list"])
def test_a_config_names_stop_words_beside_it_or_lists_them(tmp_path, austen, form):
    # A config is read wherever the command runs: its file is found next to
    # it, not in the working folder (the suite runs from the repository root).
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "stop.txt").write_text("the\nand\n# a comment\nof\n")
    value = '"stop.txt"' if form == "file" else '["the", "and", "of"]'
    config = folder / "fit.toml"
    config.write_text(f'model = "multinomial"\n[text]\ncolumns = ["text"]\nstop_words = {value}\n')
    model = tmp_path / "m.npz"
    ok(nbcli("fit", "--data", TRAIN, "--config", config, "-o", model, "-q"))
    train, _ = austen
    vectorizer = CountVectorizer(stop_words=["the", "and", "of"]).fit(train.text)
    assert load_model(model).vocabularies["text"] == vectorizer.get_feature_names_out().tolist()
    assert {"the", "and", "of"} <= set(CountVectorizer().fit(train.text).vocabulary_)


def test_a_config_stop_words_of_another_kind_is_one_line(tmp_path):
    from tests.conftest import assert_one_error_line

    config = tmp_path / "fit.toml"
    config.write_text('model = "multinomial"\n[text]\ncolumns = ["text"]\nstop_words = 3\n')
    run = nbcli("fit", "--data", TRAIN, "--config", config, "-o", tmp_path / "m.npz")
    assert_one_error_line(run, "stop_words takes a file of words, one per line, or a list")


@pytest.mark.parametrize(
    "key, value, said",
    [
        ("ngram", "[2, 1]", "[text] ngram must be MIN,MAX"),
        ("min_df", '"x"', "[text] min_df must be"),
    ],
)
def test_a_bad_text_value_of_a_config_is_named_by_its_key(tmp_path, key, value, said):
    # It was named as the flag (--ngram), which the command line never had.
    from tests.conftest import assert_one_error_line

    config = tmp_path / "fit.toml"
    config.write_text(f'model = "multinomial"\n[text]\ncolumns = ["text"]\n{key} = {value}\n')
    run = nbcli("fit", "--data", TRAIN, "--config", config, "-o", tmp_path / "m.npz")
    line = assert_one_error_line(run, f"{config}: {said}")
    assert f"--{key.replace('_', '-')}" not in line, line
