"""Text columns of words: tokenising, vocabularies, term statistics and sparse counts.

The reference is scikit-learn's ``CountVectorizer`` (same vocabulary, same
matrix) and its naive Bayes estimators on those counts (posteriors to 1e-8
on held-out documents), on the Austen paragraphs in ``sample_data/``.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from nbcli.models import BernoulliNB, ClassCounts, MultinomialNB
from nbcli.text import (
    TermStats,
    TextVectorizer,
    TokenOptions,
    Vocabulary,
    count_terms,
    decode_text_array,
    encode_text_array,
)

sklearn_text = pytest.importorskip("sklearn.feature_extraction.text")
sklearn_nb = pytest.importorskip("sklearn.naive_bayes")
CountVectorizer = sklearn_text.CountVectorizer

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"
try:
    import polars  # noqa: F401

    ENGINES = ["python", "polars"]
except ImportError:  # the polars engine is optional
    ENGINES = ["python"]


@pytest.fixture(scope="module")
def austen():
    train = pd.read_csv(SAMPLE / "austen_train.csv")
    test = pd.read_csv(SAMPLE / "austen_test.csv")
    return train["text"].tolist(), train["label"].to_numpy(), test["text"].tolist()


OPTIONS = [
    {},
    {"ngram_range": (1, 2)},
    {"ngram_range": (2, 3), "stop_words": ["the", "and", "of", "to"]},
    {"min_df": 2, "max_df": 0.5},
    {"min_df": 0.01, "max_df": 300},
    {"max_features": 500},
    {"max_features": 2000, "ngram_range": (1, 2), "min_df": 2},
    {"lowercase": False},
]


def assert_same_csr(ours, theirs):
    assert sp.issparse(ours) and ours.format == "csr"
    assert ours.dtype == np.int64
    assert ours.shape == theirs.shape
    assert ours.has_sorted_indices
    theirs = sp.csr_array(theirs)
    theirs.sort_indices()
    np.testing.assert_array_equal(ours.indptr, theirs.indptr)
    np.testing.assert_array_equal(ours.indices, theirs.indices)
    np.testing.assert_array_equal(ours.data, theirs.data)


# --- equal to CountVectorizer ----------------------------------------------------


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    "options", OPTIONS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items())
)
def test_vocabulary_and_counts_equal_count_vectorizer(austen, engine, options):
    train, _, test = austen
    sk = CountVectorizer(**options)
    expected_train = sk.fit_transform(train)
    ours = TextVectorizer(engine=engine, **options)
    got_train = ours.fit_transform(train)
    assert ours.get_feature_names_out().tolist() == sk.get_feature_names_out().tolist()
    assert_same_csr(got_train, expected_train)
    assert_same_csr(ours.transform(test), sk.transform(test))
    # fit then transform is fit_transform
    assert_same_csr(
        TextVectorizer(engine=engine, **options).fit(train).transform(train), expected_train
    )


def test_default_vocabulary_of_the_sample(austen):
    train, _, _ = austen
    vec = TextVectorizer().fit(train)
    assert len(vec.vocabulary_) == 5769
    assert vec.get_feature_names_out()[:3].tolist() == ["000", "10", "16"]


def test_max_features_breaks_ties_as_scikit_learn():
    # Every term occurs once: the kept ones are decided by tie-breaking alone.
    words = [f"w{i:04d}" for i in range(3000)]
    docs = [" ".join(words[i : i + 3]) for i in range(0, 3000, 3)]
    for limit in (1, 7, 500, 2999):
        sk = CountVectorizer(max_features=limit).fit(docs)
        ours = TextVectorizer(max_features=limit).fit(docs)
        assert ours.get_feature_names_out().tolist() == sk.get_feature_names_out().tolist()


@pytest.mark.parametrize("engine", ENGINES)
def test_unseen_terms_are_ignored_and_counted(engine):
    vec = TextVectorizer(engine=engine).fit(["free money now", "meeting at noon"])
    out = vec.transform_counts(["free free lottery money", "jackpot jackpot lottery", None])
    assert out.X.toarray().tolist() == [[0, 2, 0, 1, 0, 0], [0, 0, 0, 0, 0, 0], [0] * 6]
    assert (out.unseen_tokens, out.unseen_terms) == (4, 2)
    assert out.X.has_sorted_indices and out.X.dtype == np.int64


def test_missing_documents_are_empty():
    vec = TextVectorizer().fit(["free money", None, float("nan")])
    assert vec.transform([None, "money"]).toarray().tolist() == [[0, 0], [0, 1]]


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"ngram_range": (2, 1)}, "ngram_range must be two integers"),
        ({"ngram_range": (0, 1)}, "ngram_range must be two integers"),
        ({"min_df": 1.5}, "min_df must be an integer >= 0 or a float in [0, 1]"),
        ({"max_df": -1}, "max_df must be an integer >= 0 or a float in [0, 1]"),
        ({"max_df": True}, "max_df must be an integer >= 0 or a float in [0, 1]"),
        ({"min_df": 3, "max_df": 2}, "max_df corresponds to < documents than min_df"),
        ({"min_df": 0.9, "max_df": 0.95}, "After pruning, no terms remain"),
        ({"max_features": 0}, "max_features must be a positive integer"),
        ({"stop_words": ["free", "money", "now"]}, "empty vocabulary"),
        ({"stop_words": "english"}, "stop_words must be a list of words"),
        ({"token_pattern": r"(a)(b)"}, "more than one capturing group"),
        ({"token_pattern": r"(\w"}, "not a valid regular expression"),
    ],
)
def test_bad_options_are_refused_with_scikit_learns_words(options, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        TextVectorizer(**options).fit(["free money now", "free now"])


def test_a_single_string_is_not_a_corpus():
    with pytest.raises(ValueError, match="single string"):
        TextVectorizer().fit("free money")
    with pytest.raises(TypeError, match="document 1 is a int"):
        TextVectorizer().fit(["free money", 3])


# --- Unicode: Python's re and polars' regex ------------------------------------


def _rust_word(chars):
    import polars as pl

    return pl.Series(list(chars)).str.contains(r"^\w$").to_list()


@pytest.mark.skipif("polars" not in ENGINES, reason="polars is not installed")
def test_where_rust_and_python_word_characters_differ():
    """The differences the polars engine has to route around (see nbcli.text.tokens).

    Python's ``\\w`` is ``str.isalnum()`` plus ``_``; Rust's is Alphabetic,
    marks, decimal digits, connector punctuation and the joiners.
    """
    python_only = ["\u00b2", "\u00bd", "\u2460"]  # superscript two, one half, circled one (No)
    rust_only = [
        "\u0301",  # combining acute accent (Mn)
        "\u0903",  # Devanagari visarga (Mc)
        "\u20dd",  # combining enclosing circle (Me)
        "\u203f",  # undertie (Pc)
        "\u200c",  # zero-width non-joiner (Cf)
        "\u24b6",  # circled capital A (So, Other_Alphabetic)
    ]
    for ch in python_only + rust_only:
        in_python = re.fullmatch(r"\w", ch) is not None
        assert in_python == (ch in python_only), unicodedata.name(ch)
        assert _rust_word(ch) == [ch in rust_only], unicodedata.name(ch)


TRICKY = [
    "cafe\u0301 naïve cafe",  # decomposed and composed accents
    "x² y½ ①② area51",  # other numbers: words to Python, not to Rust
    "under\u203ftie snake_case",  # connector punctuation
    "zero\u200cwidth joiner\u200dword",  # joiners
    "ⒶⒷⒸ ⓐⓑ circled",  # letter-like symbols
    "İstanbul ΣΟΦΟΣ ὈΔΥΣΣΕΎΣ straße STRASSE",  # case mappings
    "中文 文本 日本語の テキスト 한국어",  # scripts without spaces
    "हिन्दी देवनागरी",  # Mc and Mn inside words
    "\U0001e4d0\U0001e4d1 \U00010d50\U00010d70",  # letters of recent Unicode versions
    "emoji 👍🏽 test 🇬🇧 flags",
    "",
]


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("lowercase", [True, False])
def test_every_engine_equals_count_vectorizer_on_tricky_unicode(engine, lowercase):
    docs = TRICKY + [" ".join(TRICKY)] + ["plain ascii words only"] * 3
    sk = CountVectorizer(lowercase=lowercase, ngram_range=(1, 2))
    expected = sk.fit_transform(docs)
    ours = TextVectorizer(engine=engine, lowercase=lowercase, ngram_range=(1, 2))
    assert_same_csr(ours.fit_transform(docs), expected)
    assert ours.get_feature_names_out().tolist() == sk.get_feature_names_out().tolist()


@pytest.mark.skipif("polars" not in ENGINES, reason="polars is not installed")
def test_polars_engine_equals_python_on_every_code_point():
    # Every seventh code point (but surrogates) inside words, 16 to a
    # document: more documents than one slice of the character scan.
    chars = [chr(c) for c in range(0x80, sys.maxunicode + 1, 7) if not 0xD800 <= c <= 0xDFFF]
    docs = ["ab" + "ab ab".join(chars[i : i + 16]) + "ab" for i in range(0, len(chars), 16)]
    assert len(docs) > 4096
    options = TokenOptions()
    a = count_terms(docs, options, "python")
    b = count_terms(docs, options, "polars")
    assert a.terms.tolist() == b.terms.tolist()
    for name in ("doc", "term", "count"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))


@pytest.mark.skipif("polars" not in ENGINES, reason="polars is not installed")
def test_without_the_python_fallback_polars_would_differ(monkeypatch):
    import nbcli.text.tokens as tokens

    docs = ["cafe\u0301 x² under\u203ftie ⒶⒷ zero\u200cwidth"]
    options = TokenOptions()
    python = count_terms(docs, options, "python").terms.tolist()
    assert python == ["cafe", "tie", "under", "width", "x²", "zero"]
    assert count_terms(docs, options, "polars").terms.tolist() == python
    monkeypatch.setattr(tokens, "_disputed", lambda chars, lowercase: [])
    raw = count_terms(docs, options, "polars").terms.tolist()
    # Marks, connector punctuation, joiners and circled letters join words;
    # the superscript two (No) does not, so "x²" is lost.
    assert raw == ["cafe\u0301", "under\u203ftie", "zero\u200cwidth", "ⓐⓑ"]


def test_terms_sort_by_code_point():
    docs = ["zz éé ßß 中文 aa ZZ Ωω"]
    for engine in ENGINES:
        terms = TextVectorizer(engine=engine, lowercase=False).fit(docs).get_feature_names_out()
        assert terms.tolist() == sorted(terms.tolist())
        assert (
            terms.tolist()
            == CountVectorizer(lowercase=False).fit(docs).get_feature_names_out().tolist()
        )


# --- naive Bayes on the counts ---------------------------------------------------


def _fit_from_stats(stats: TermStats, kept, classes, kind, **params):
    cls = MultinomialNB if kind == "multinomial" else BernoulliNB
    return cls.from_stats(stats.class_counts(kept, kind), classes, params, len(kept))


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("alpha", [1.0, 0.1])
def test_multinomial_posteriors_equal_the_scikit_learn_pipeline(austen, engine, alpha):
    train, y, test = austen
    sk_vec = CountVectorizer()
    sk = sklearn_nb.MultinomialNB(alpha=alpha).fit(sk_vec.fit_transform(train), y)
    expected = sk.predict_proba(sk_vec.transform(test))

    vec = TextVectorizer(engine=engine)
    classes, y_idx = np.unique(y, return_inverse=True)
    kept = vec.finalize(vec.accumulate(train, y_idx, len(classes)))
    model = _fit_from_stats(vec.stats_, kept, classes, "multinomial", alpha=alpha)
    X_test = vec.transform(test)
    np.testing.assert_allclose(model.predict_proba(X_test), expected, rtol=0, atol=1e-8)
    np.testing.assert_allclose(model.predict_proba(X_test.toarray()), expected, rtol=0, atol=1e-8)
    np.testing.assert_array_equal(model.feature_count_, sk.feature_count_)
    np.testing.assert_array_equal(model.class_count_, sk.class_count_)
    assert (model.predict(X_test.toarray()) == sk.predict(sk_vec.transform(test))).all()


@pytest.mark.parametrize("engine", ENGINES)
def test_bernoulli_posteriors_equal_the_scikit_learn_pipeline(austen, engine):
    train, y, test = austen
    sk_vec = CountVectorizer()
    sk = sklearn_nb.BernoulliNB(binarize=0.0).fit(sk_vec.fit_transform(train), y)
    expected = sk.predict_proba(sk_vec.transform(test))

    vec = TextVectorizer(engine=engine)
    classes, y_idx = np.unique(y, return_inverse=True)
    kept = vec.finalize(vec.accumulate(train, y_idx, len(classes)))
    model = _fit_from_stats(vec.stats_, kept, classes, "bernoulli", binarize=0.0)
    X_test = vec.transform(test)
    np.testing.assert_allclose(model.predict_proba(X_test), expected, rtol=0, atol=1e-8)
    np.testing.assert_allclose(model.predict_proba(X_test.toarray()), expected, rtol=0, atol=1e-8)
    np.testing.assert_array_equal(model.feature_count_, sk.feature_count_)


def test_complement_statistics_equal_scikit_learns(austen):
    # ComplementNB is built from the same per-class term counts as the
    # multinomial model; its estimator is not in nbcli.models yet, so the
    # statistics it will be given are checked here.
    train, y, _ = austen
    sk_vec = CountVectorizer()
    sk = sklearn_nb.ComplementNB().fit(sk_vec.fit_transform(train), y)
    vec = TextVectorizer()
    classes, y_idx = np.unique(y, return_inverse=True)
    kept = vec.finalize(vec.accumulate(train, y_idx, len(classes)))
    counts = vec.stats_.class_counts(kept, "complement")
    np.testing.assert_array_equal(counts.feature_count, sk.feature_count_)
    np.testing.assert_array_equal(counts.class_count, sk.class_count_)


def test_statistics_from_csr_equal_the_term_statistics(austen):
    # The estimators fitted on the sparse counts, the same fitted on them
    # made dense, and the term statistics of the vectoriser all agree.
    train, y, _ = austen
    vec = TextVectorizer()
    classes, y_idx = np.unique(y, return_inverse=True)
    kept = vec.finalize(vec.accumulate(train, y_idx, len(classes)))
    X = vec.transform(train)
    dense = X.toarray()
    for kind, make in (
        ("multinomial", MultinomialNB),
        ("bernoulli", lambda: BernoulliNB(binarize=0.0)),
    ):
        sparse_fit, dense_fit = make().fit(X, y), make().fit(dense, y)
        stats = vec.stats_.class_counts(kept, kind)
        np.testing.assert_array_equal(sparse_fit.feature_count_, stats.feature_count)
        np.testing.assert_array_equal(sparse_fit.feature_count_, dense_fit.feature_count_)
        np.testing.assert_array_equal(sparse_fit.class_count_, dense_fit.class_count_)


def test_sparse_scoring_refuses_what_the_estimators_refuse():
    model = MultinomialNB().fit(np.array([[1.0, 0.0], [0.0, 2.0]]), [0, 1])
    with pytest.raises(ValueError, match="expecting 2 features"):
        model.joint_log_likelihood(sp.csr_array(np.ones((1, 3))))
    with pytest.raises(ValueError, match="negative value -1 at row 0, column 0"):
        model.joint_log_likelihood(sp.csr_array(np.array([[-1.0, 0.0]])))
    bern = BernoulliNB(binarize=None).fit(np.array([[1.0, 0.0], [0.0, 1.0]]), [0, 1])
    with pytest.raises(ValueError, match="value 2 at row 0, column 1 is not 0 or 1"):
        bern.joint_log_likelihood(sp.csr_array(np.array([[1.0, 2.0]])))


# --- chunks merge exactly ---------------------------------------------------------


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize(
    "options", [{}, {"ngram_range": (1, 2), "min_df": 2, "max_features": 3000}]
)
def test_chunked_statistics_equal_one_pass(austen, engine, options):
    train, y, test = austen
    classes, y_idx = np.unique(y, return_inverse=True)
    k = len(classes)
    whole = TextVectorizer(engine=engine, **options)
    kept = whole.finalize(whole.accumulate(train, y_idx, k))
    chunked = TextVectorizer(engine=engine, **options)
    bounds = [0, 1, 97, 300, 301, 650, len(train)]
    parts = [(train[a:b], y_idx[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]
    chunked.fit_chunks(parts[::-1], n_classes=k)  # any order
    kept_c = np.searchsorted(chunked.stats_.terms, chunked.vocabulary_.terms)
    assert chunked.vocabulary_.terms.tolist() == whole.vocabulary_.terms.tolist()
    a, b = whole.stats_, chunked.stats_
    assert a.terms.tolist() == b.terms.tolist() and a.n_docs == b.n_docs
    for name in ("class_count", "term_count", "doc_count", "tf", "df"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
    X = whole.transform(test).toarray()
    for kind in ("multinomial", "bernoulli"):
        params = {"binarize": 0.0} if kind == "bernoulli" else {}
        one = _fit_from_stats(a, kept, classes, kind, **params)
        many = _fit_from_stats(b, kept_c, classes, kind, **params)
        np.testing.assert_allclose(many.predict_proba(X), one.predict_proba(X), rtol=0, atol=1e-12)


words = st.sampled_from(["free", "money", "meeting", "now", "at", "noon", "zz", "éé"])
documents = st.lists(st.lists(words, max_size=6).map(" ".join), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None)
@given(documents, documents, documents, st.randoms(use_true_random=False))
def test_merge_is_exact_and_order_free(d1, d2, d3, rnd):
    """Any grouping and order of chunks gives the same statistics as one chunk."""
    docs = d1 + d2 + d3
    y = [rnd.randrange(3) for _ in docs]
    options = TokenOptions(ngram_range=(1, 2))

    def stats(ds, ys, weights=None):
        return TermStats.from_counts(count_terms(ds, options, "python"), ys, 3, weights)

    n1, n2 = len(d1), len(d1) + len(d2)
    whole = stats(docs, y)
    left = stats(d1, y[:n1]).merge(stats(d2, y[n1:n2])).merge(stats(d3, y[n2:]))
    right = stats(d3, y[n2:]).merge(stats(d2, y[n1:n2]).merge(stats(d1, y[:n1])))
    for merged in (left, right):
        assert merged.terms.tolist() == whole.terms.tolist()
        for name in ("class_count", "term_count", "doc_count", "tf", "df"):
            np.testing.assert_array_equal(getattr(merged, name), getattr(whole, name))
    # Integer weights are repeated documents.
    w = np.array([rnd.randrange(1, 3) for _ in docs])
    repeated = [d for d, n in zip(docs, w) for _ in range(n)]
    rep = stats(repeated, [c for c, n in zip(y, w) for _ in range(n)])
    weighted = stats(docs, y, w)
    np.testing.assert_array_equal(weighted.term_count, rep.term_count)
    np.testing.assert_array_equal(weighted.doc_count, rep.doc_count)
    np.testing.assert_array_equal(weighted.class_count, rep.class_count)


tally_words = st.sampled_from(
    ["free", "money", "meeting", "now", "at", "noon", "zz", "éé", "cafe\u0301", "x²", "ΣΑΣ"]
)
tally_documents = st.lists(st.lists(tally_words, max_size=6).map(" ".join), max_size=12)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(tally_documents, min_size=1, max_size=4),
    st.randoms(use_true_random=False),
    st.booleans(),
)
def test_tally_equals_merged_chunk_statistics(chunks, rnd, weighted):
    """A TermTally, numbering terms through polars or a dict, equals merging
    each chunk's TermStats, classes arriving in any chunk."""
    from nbcli.text import TermTally

    labels = ["ham", "spam", "eggs"]
    options = TokenOptions(ngram_range=(1, 2))
    all_classes = np.array(sorted(labels))
    tallies = []
    for engine in ENGINES:
        tally = TermTally(options, engine)
        assert (tally._cats is not None) == (engine == "polars")
        tallies.append(tally)
        if engine == "polars":  # and the dictionary's numbering, with polars tokens
            tally = TermTally(options, engine)
            tally._cats = None
            tallies.append(tally)
    total, added = None, set()
    for docs in chunks:
        y = np.array([rnd.choice(labels) for _ in docs], dtype=object)
        added.update(y.tolist())
        w = np.array([rnd.choice([0.5, 1.0, 3.25]) for _ in docs]) if weighted else None
        classes, y_idx = np.unique(y.astype(str), return_inverse=True)
        part = TermStats.from_counts(count_terms(docs, options, "python"), y_idx, len(classes), w)
        part = part.reindex(np.searchsorted(all_classes, classes), len(all_classes))
        total = part if total is None else total.merge(part)
        for tally in tallies:
            tally.add(docs, classes, y_idx, w)
    for tally in tallies:
        got = tally.stats(all_classes)
        assert got.terms.tolist() == total.terms.tolist() and got.n_docs == total.n_docs
        for name in ("class_count", "term_count", "doc_count", "tf", "df"):
            np.testing.assert_array_equal(getattr(got, name), getattr(total, name))
    if added:
        with pytest.raises(ValueError, match="not among the classes"):
            tallies[0].stats([c for c in all_classes if c != min(added)])


def test_tally_numbers_terms_of_a_large_vocabulary_sparsely():
    """When the vocabulary outgrows a chunk, a chunk adds only its own terms."""
    from nbcli.text import TermTally

    options = TokenOptions()
    words = [f"w{i:05d}" for i in range(6000)]
    tally = TermTally(options)
    tally.add([" ".join(words)], ["a"], [0])
    tally.add(["w00007 w00007 new"], ["b"], [0])
    stats = tally.stats(["a", "b"])
    kept = {t: i for i, t in enumerate(stats.terms.tolist())}
    assert stats.term_count[:, kept["w00007"]].tolist() == [1.0, 2.0]
    assert stats.doc_count[:, kept["new"]].tolist() == [0.0, 1.0]
    assert stats.df[kept["w00007"]] == 2 and stats.tf[kept["w00007"]] == 3
    assert stats.term_count.sum() == 6000 + 3


def test_reindex_moves_classes_for_merging():
    opts = TokenOptions()
    a = TermStats.from_counts(count_terms(["free money", "meeting"], opts), [0, 1], 2)
    b = a.reindex([2, 0], 3)
    np.testing.assert_array_equal(b.class_count, [1.0, 0.0, 1.0])
    np.testing.assert_array_equal(b.term_count[2], a.term_count[0])
    with pytest.raises(ValueError, match="reindex first"):
        a.merge(b)


# --- the vocabulary as arrays in a model file ---------------------------------------


@given(st.lists(st.text(min_size=1, max_size=8), unique=True, max_size=30))
def test_vocabulary_arrays_round_trip(terms):
    vocab = Vocabulary(sorted(terms))
    data, offsets = vocab.to_arrays()
    assert data.dtype == np.uint8 and offsets.dtype == np.int64
    assert offsets[0] == 0 and offsets[-1] == data.size and offsets.size == len(terms) + 1
    assert Vocabulary.from_arrays(data, offsets).terms.tolist() == sorted(terms)


def test_corrupted_vocabulary_arrays_are_refused():
    data, offsets = encode_text_array(["at", "free", "money"])
    assert decode_text_array(data, offsets) == ["at", "free", "money"]
    bad = [
        (data.astype(np.int64), offsets, "uint8"),
        (data, offsets.astype(np.int32), "int64"),
        (data, offsets[1:], "rise from 0"),
        (data, np.array([0, 5, 2, data.size]), "rise from 0"),
        (data[:-1], offsets, "rise from 0"),
        (np.array([0xFF, 0xFE], dtype=np.uint8), np.array([0, 2]), "not valid UTF-8"),
    ]
    for d, o, message in bad:
        with pytest.raises(ValueError, match=message):
            decode_text_array(d, o)
    d2, o2 = encode_text_array(["money", "free"])
    with pytest.raises(ValueError, match="sorted"):
        Vocabulary.from_arrays(d2, o2)
    d3, o3 = encode_text_array(["free", "free"])
    with pytest.raises(ValueError, match="distinct"):
        Vocabulary.from_arrays(d3, o3)


# --- seed 001: the spam filter worked by hand ------------------------------------


def test_seed_001_free_money_is_spam_at_64_to_1():
    """Seed 001's table: free 8/1, money 6/2, meeting 1/10 of 50 spam and 100 ham words.

    The other words of each class (35 and 87) are one filler word here, so
    that the totals are the seed's; alpha at its floor (1e-10) is the seed's
    unsmoothed estimate, and the priors are the seed's 0.4 and 0.6.
    """
    spam = ["free"] * 8 + ["money"] * 6 + ["meeting"] * 1 + ["filler"] * 35
    ham = ["free"] * 1 + ["money"] * 2 + ["meeting"] * 10 + ["filler"] * 87
    vec = TextVectorizer()
    classes = np.array(["ham", "spam"], dtype=object)  # sorted, as fit sorts them
    kept = vec.finalize(vec.accumulate([" ".join(ham), " ".join(spam)], [0, 1], 2))
    counts = vec.stats_.class_counts(kept, "multinomial")
    params = {"alpha": 0.0, "class_prior": [0.6, 0.4]}
    model = MultinomialNB.from_stats(counts, classes, params, len(kept))
    X = vec.transform(["free money"])
    jll = model.joint_log_likelihood(X)[0]
    np.testing.assert_allclose(np.exp(jll), [0.00012, 0.00768], rtol=1e-8)
    assert np.exp(jll[1] - jll[0]) == pytest.approx(64.0, rel=1e-8)
    proba = model.predict_proba(X.toarray())[0]
    np.testing.assert_allclose(proba, [1 / 65, 64 / 65], rtol=1e-8)
    assert round(proba[1], 4) == 0.9846
    assert model.predict(X.toarray())[0] == "spam"
    free = vec.vocabulary_.index["free"]
    np.testing.assert_allclose(np.exp(model.feature_log_prob_[:, free]), [0.01, 0.16])


def test_class_counts_feed_the_estimators_unchanged():
    counts = ClassCounts(
        class_count=np.array([1.0, 1.0]), feature_count=np.array([[2.0, 0.0], [0.0, 1.0]])
    )
    model = MultinomialNB.from_stats(counts, np.array([0, 1]), {}, 2)
    assert model.n_features_in_ == 2
