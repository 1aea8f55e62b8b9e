"""``--text`` under the mixed model: each text column one multinomial term of its own.

``log p(x, c) = log pi_c + (the table's terms) + sum_t sum_w n_tw log theta_ctw``
with ``theta_ctw = (N_ctw + alpha) / (N_ct + alpha |V_t|)`` over column ``t``'s
vocabulary. References: ``--model multinomial --text`` (one text column, no
table columns: the same model), scikit-learn's ``CountVectorizer`` +
``MultinomialNB`` per text column, and the table's terms computed here from
their formulas.
"""

from __future__ import annotations

import io
import json
import shutil
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp

from nbcli.io.modelfile import load_model
from nbcli.models import MixedNB
from nbcli.models._validation import DataValueError

sklearn_text = pytest.importorskip("sklearn.feature_extraction.text")
sklearn_nb = pytest.importorskip("sklearn.naive_bayes")
CountVectorizer = sklearn_text.CountVectorizer

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"


def nbcli(*args):
    from tests.conftest import nbcli_in_process

    return nbcli_in_process(*args)


def ok(run):
    assert run.returncode == 0, run.stderr
    return run


def refused(run, message):
    assert run.returncode != 0
    assert run.stderr.startswith("error:") and run.stderr.count("\n") == 1, run.stderr
    assert message in run.stderr, run.stderr
    assert "Traceback" not in run.stderr


def _with_table(frame: pd.DataFrame, seed: int) -> pd.DataFrame:
    """Austen paragraphs with a numeric, a categorical and a second text column."""
    rng = np.random.default_rng(seed)
    return frame.assign(
        commas=frame.text.str.count(",").astype(float) + rng.normal(0, 0.5, len(frame)),
        kind=rng.choice(["x", "y", "z"], len(frame)),
        opening=frame.text.str.split().str[:4].str.join(" "),
    )


@pytest.fixture(scope="module")
def austen(tmp_path_factory):
    d = tmp_path_factory.mktemp("austen")
    train = _with_table(pd.read_csv(SAMPLE / "austen_train.csv"), 1)
    test = _with_table(pd.read_csv(SAMPLE / "austen_test.csv"), 2)
    paths = d / "train.csv", d / "test.csv"
    train.to_csv(paths[0], index=False)
    test.to_csv(paths[1], index=False)
    return train, test, *paths


def _fit(tmp_path, data, name, *args):
    model = tmp_path / name
    ok(nbcli("fit", "--data", data, "--target", "label", "-o", model, "--quiet", *args))
    return model


def _proba(model, data) -> pd.DataFrame:
    run = ok(nbcli("predict", "--model", model, "--data", data, "--proba"))
    return pd.read_csv(io.StringIO(run.stdout))


# -- the command line ---------------------------------------------------------------
@pytest.mark.parametrize("alpha", ["1", "0.05"])
def test_one_text_column_is_the_multinomial_text_model(tmp_path, austen, alpha):
    _, _, train, test = austen
    only = ("--drop", "commas,kind,opening", "--text", "text", "--alpha", alpha)
    mixed = _fit(tmp_path, train, "mixed.npz", "--model", "mixed", *only)
    multi = _fit(tmp_path, train, "multi.npz", "--model", "multinomial", *only)
    a, b = _proba(mixed, test), _proba(multi, test)
    assert list(a.columns) == list(b.columns)
    assert (a.prediction == b.prediction).all()
    np.testing.assert_allclose(a.iloc[:, 1:], b.iloc[:, 1:], rtol=0, atol=1e-12)
    ma, mb = load_model(mixed), load_model(multi)
    np.testing.assert_allclose(ma.model.text_log_prob_, mb.model.feature_log_prob_, atol=1e-12)
    np.testing.assert_array_equal(ma.model.class_log_prior_, mb.model.class_log_prior_)
    assert ma.vocabularies == mb.vocabularies
    assert ma.model.vocabulary_sizes == [len(ma.vocabularies["text"])]


def _table_jll(train: pd.DataFrame, test: pd.DataFrame, alpha=1.0, var_smoothing=1e-9):
    """log pi_c + Gaussian(commas) + categorical(kind), from their formulas, (n_test, K)."""
    classes = np.unique(train.label)
    n_c = np.array([(train.label == c).sum() for c in classes], dtype=float)
    out = np.log(n_c / n_c.sum())[None, :].repeat(len(test), axis=0)
    eps = var_smoothing * train.commas.var(ddof=0)
    kinds = sorted(train.kind.unique())
    for k, c in enumerate(classes):
        x = train.commas[train.label == c]
        var = x.var(ddof=0) + eps
        out[:, k] += -0.5 * np.log(2 * np.pi * var) - (test.commas - x.mean()) ** 2 / (2 * var)
        counts = train.kind[train.label == c].value_counts()
        prob = {v: (counts.get(v, 0) + alpha) / (n_c[k] + alpha * len(kinds)) for v in kinds}
        out[:, k] += np.log(test.kind.map(prob).to_numpy(dtype=float))
    return out


def _text_term(train, test, column, alpha=1.0):
    """sum_w n_tw log theta_ctw of one text column: MultinomialNB's jll minus its prior."""
    vec = CountVectorizer().fit(train[column])
    nb = sklearn_nb.MultinomialNB(alpha=alpha).fit(vec.transform(train[column]), train.label)
    return nb.predict_joint_log_proba(vec.transform(test[column])) - nb.class_log_prior_


def test_table_and_text_columns_add_their_terms_and_one_prior(tmp_path, austen):
    train_df, test_df, train, test = austen
    model = _fit(
        tmp_path, train, "m.npz", "--model", "mixed", "--text", "text", "--text", "opening"
    )
    jll = (
        _table_jll(train_df, test_df)
        + _text_term(train_df, test_df, "text")
        + _text_term(train_df, test_df, "opening")
    )
    expected = np.exp(jll - logsumexp(jll, axis=1, keepdims=True))
    got = _proba(model, test)
    np.testing.assert_allclose(got.iloc[:, 1:], expected, rtol=0, atol=1e-9)
    # Two columns are two multinomials: pooled into one vocabulary they differ.
    pooled = _text_term(
        train_df.assign(both=train_df.text + " " + train_df.opening),
        test_df.assign(both=test_df.text + " " + test_df.opening),
        "both",
    )
    assert not np.allclose(jll, _table_jll(train_df, test_df) + pooled, atol=1e-3)

    mf = load_model(model)
    assert mf.metadata["format_version"] == 2
    sizes = [len(mf.vocabularies[c]) for c in ("text", "opening")]
    assert mf.model.vocabulary_sizes == sizes
    assert (
        mf.vocabularies["text"]
        == CountVectorizer().fit(train_df.text).get_feature_names_out().tolist()
    )
    assert mf.model.stats_.multinomial_count.shape == (6, sum(sizes))
    assert mf.model.column_types_ == ["gaussian", "categorical"]
    with zipfile.ZipFile(model) as z:
        names = z.namelist()
    assert any(n.startswith("text.vocabularies.") for n in names)


def test_a_chunked_fit_equals_one_fit(tmp_path, austen):
    _, _, train, test = austen
    args = ("--model", "mixed", "--text", "text", "--text", "opening")
    one = _fit(tmp_path, train, "one.npz", *args)
    chunked = _fit(tmp_path, train, "chunked.npz", *args, "--chunk-size", "97")
    a, b = load_model(one), load_model(chunked)
    for name in ("multinomial_count", "class_count", "gaussian_m2", "category_count"):
        np.testing.assert_allclose(
            getattr(b.model.stats_, name), getattr(a.model.stats_, name), rtol=1e-12, atol=0
        )
    np.testing.assert_allclose(
        _proba(chunked, test).iloc[:, 1:], _proba(one, test).iloc[:, 1:], rtol=0, atol=1e-12
    )


def test_inspect_shows_the_text_columns_and_their_word_counts(tmp_path, austen):
    train_df, _, train, _ = austen
    model = _fit(
        tmp_path, train, "m.npz", "--model", "mixed", "--text", "text", "--drop", "opening"
    )
    report = tmp_path / "r.json"
    run = ok(nbcli("inspect", model, "--json", report))
    n_words = len(CountVectorizer().fit(train_df.text).vocabulary_)
    assert json.loads(report.read_text())["features"] == [
        {"name": "commas", "type": "gaussian"},
        {"name": "kind", "type": "categorical"},
        {"name": "text", "type": "text", "n_words": n_words},
    ]
    assert f"text (text, {n_words:,} words)" in run.stdout


def test_missing_table_cells_beside_text(tmp_path, austen):
    train_df, test_df, _, _ = austen
    holes = test_df.copy()
    holes.loc[[0, 5], "commas"] = np.nan
    data = tmp_path / "holes.csv"
    holes.to_csv(data, index=False)
    train = tmp_path / "train.csv"
    train_df.to_csv(train, index=False)
    fit = ("--model", "mixed", "--text", "text", "--drop", "kind,opening")
    dropped = _proba(_fit(tmp_path, train, "d.npz", *fit, "--missing", "drop"), data)
    assert dropped.iloc[[0, 5], 1:].isna().all().all()
    assert dropped.iloc[[1, 2], 1:].notna().all().all()
    ignored = _proba(_fit(tmp_path, train, "i.npz", *fit, "--missing", "ignore"), data)
    # A missing cell leaves its column's term out: the prior and the words remain.
    classes = np.unique(train_df.label)
    prior = np.log([(train_df.label == c).mean() for c in classes])
    jll = prior + _text_term(train_df, test_df.iloc[[0, 5]], "text")
    expected = np.exp(jll - logsumexp(jll, axis=1, keepdims=True))
    np.testing.assert_allclose(ignored.iloc[[0, 5], 1:], expected, rtol=0, atol=1e-9)


def test_what_the_mixed_text_model_refuses(tmp_path, austen):
    _, _, train, _ = austen
    fit = ("fit", "--data", train, "--target", "label", "--model", "mixed", "-o", tmp_path / "m")
    refused(
        nbcli(*fit, "--text", "text", "--drop", "opening", "--column", "text=categorical"),
        "--column text=categorical: the column is a text column (--text)",
    )
    second = tmp_path / "second.csv"
    shutil.copyfile(train, second)
    refused(
        nbcli(*fit, "--data", second, "--text", "text", "--drop", "opening"),
        "--text under the mixed model is not supported on parts",
    )
    refused(
        nbcli(*fit, "--engine", "dask", "--text", "text", "--drop", "opening"),
        "--text under the mixed model is not supported on parts",
    )
    config = tmp_path / "c.toml"
    config.write_text("[hyperparameters]\nvocabulary_sizes = [3]\n")
    refused(
        nbcli(*fit, "--drop", "text,opening", "--config", config),
        "vocabulary_sizes is set by --text",
    )


def _rewrite(src: Path, dst: Path, change) -> None:
    with zipfile.ZipFile(src) as z:
        members = {n: np.load(io.BytesIO(z.read(n))) for n in z.namelist()}
    change(members)
    with open(dst, "wb") as f:
        np.savez(f, **{n[:-4]: a for n, a in members.items()})


def _metadata(change):
    def apply(m):
        meta = json.loads(m["metadata.npy"].tobytes())
        change(meta)
        m["metadata.npy"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)

    return apply


def test_model_files_check_the_vocabulary_sizes_and_old_files_load(tmp_path, austen):
    _, _, train, test = austen
    model = _fit(
        tmp_path, train, "m.npz", "--model", "mixed", "--text", "text", "--text", "opening"
    )

    def swapped(meta):
        a, b = meta["hyperparameters"]["vocabulary_sizes"]
        meta["hyperparameters"]["vocabulary_sizes"] = [a - 1, b + 1]

    def dropped(meta):
        meta["hyperparameters"]["vocabulary_sizes"] = None

    for change, message in [
        (swapped, "vocabulary_sizes that do not match its text columns' vocabularies"),
        (dropped, "column_types has 2 entries but X has"),
    ]:
        broken = tmp_path / f"{change.__name__}.npz"
        _rewrite(model, broken, _metadata(change))
        refused(nbcli("predict", "--model", broken, "--data", test), message)
    # A mixed model written before text columns had no vocabulary_sizes.
    plain = _fit(tmp_path, train, "plain.npz", "--model", "mixed", "--drop", "text,opening")
    old = tmp_path / "old.npz"
    _rewrite(plain, old, _metadata(lambda meta: meta["hyperparameters"].pop("vocabulary_sizes")))
    pd.testing.assert_frame_equal(_proba(old, test), _proba(plain, test))
    assert load_model(old).model.vocabulary_sizes is None


# -- the Python API --------------------------------------------------------------------
def _documents(seed=0, n=120, sizes=(30, 12)):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    table = np.column_stack([rng.normal(y, 1.0), rng.integers(0, 4, n)]).astype(float)
    words = [
        sp.random(n, v, density=0.15, random_state=seed + i, format="csr")
        for i, v in enumerate(sizes)
    ]
    for w in words:
        w.data = np.ceil(w.data * 3)
    X = sp.hstack([sp.csr_array(table), *words], format="csr")
    return X, y, table, words


def _model(sizes=(30, 12), **kw):
    return MixedNB(column_types=["gaussian", "categorical"], vocabulary_sizes=list(sizes), **kw)


def test_python_api_sparse_dense_and_the_two_models_terms():
    X, y, table, words = _documents()
    model = _model().fit(X, y)
    table_only = MixedNB(column_types=["gaussian", "categorical"]).fit(table, y)
    expected = table_only.joint_log_likelihood(table)
    for w in words:
        nb = sklearn_nb.MultinomialNB().fit(w, y)
        expected += nb.predict_joint_log_proba(w) - nb.class_log_prior_
    np.testing.assert_allclose(model.joint_log_likelihood(X), expected, rtol=1e-12, atol=1e-10)
    dense = _model().fit(X.toarray(), y)
    np.testing.assert_array_equal(dense.predict_proba(X), model.predict_proba(X.toarray()))
    np.testing.assert_allclose(dense.predict_proba(X.toarray()), model.predict_proba(X), atol=1e-14)


@settings(max_examples=25, deadline=None)
@given(cuts=st.lists(st.integers(1, 119), max_size=4, unique=True), seed=st.integers(0, 5))
def test_any_chunking_of_sparse_rows_gives_the_model_of_one_fit(cuts, seed):
    X, y, _, _ = _documents(seed)
    one = _model().fit(X, y)
    bounds = [0, *sorted(cuts), X.shape[0]]
    chunks = [(X[a:b], y[a:b]) for a, b in zip(bounds[:-1], bounds[1:])]
    chunked = _model().fit_chunks(chunks)
    np.testing.assert_allclose(
        chunked.stats_.multinomial_count, one.stats_.multinomial_count, rtol=1e-12, atol=0
    )
    np.testing.assert_allclose(chunked.predict_log_proba(X), one.predict_log_proba(X), atol=1e-12)


def test_python_api_missing_cells_and_bad_word_counts():
    X, y, table, words = _documents()
    X = X.toarray()
    X[3, 0] = np.nan
    ignore = _model(missing="ignore").fit(X, y)
    drop = _model(missing="drop").fit(X, y)
    assert drop.n_dropped_ == 1 and drop.class_count_.sum() == len(y) - 1
    assert np.isnan(drop.predict_proba(sp.csr_array(X))[3]).all()
    jll = ignore.joint_log_likelihood(sp.csr_array(X))
    # Row 3 without its Gaussian cell: prior, its category and its words.
    no_gauss = MixedNB(column_types=["categorical"], vocabulary_sizes=[30, 12]).fit(
        np.delete(X, 0, axis=1), y
    )
    np.testing.assert_allclose(
        jll[3], no_gauss.joint_log_likelihood(np.delete(X, 0, axis=1))[3], rtol=1e-12
    )
    bad = X.copy()
    bad[3, 0] = 0.0
    bad[7, 5] = -1.0
    with pytest.raises(DataValueError, match="row 7, column 5") as err:
        _model().fit(sp.csr_array(bad), y)
    assert (err.value.row, err.value.column) == (7, 5)
    with pytest.raises(ValueError, match="sparse input only for the word counts"):
        MixedNB().fit(sp.csr_array(bad), y)
    with pytest.raises(ValueError, match="X has 44 features, fewer than the 52 word counts"):
        _model(sizes=(40, 12)).fit(np.abs(bad), y)
    with pytest.raises(ValueError, match="vocabulary_sizes must be None or a list"):
        _model(sizes=(0,)).fit(np.abs(bad), y)


def test_chunk_statistics_merge_into_the_streamed_fit(austen):
    # What cross-validation uses: per-part statistics, merged, then the vocabularies.
    from nbcli.text.settings import TextSettings
    from nbcli.workflows.text_features import accumulate_text, finalize_text, fit_text_chunks

    train, _, _, _ = austen
    settings_ = TextSettings(columns=("text", "opening"), min_df=2)
    X, words = train[["commas"]].to_numpy(), {c: train[c].tolist() for c in settings_.columns}
    y = train.label.to_numpy()

    def model():
        return MixedNB(column_types=["gaussian"], alpha=0.5)

    parts = [
        accumulate_text(model(), settings_, X[a:b], {c: w[a:b] for c, w in words.items()}, y[a:b])
        for a, b in [(0, 300), (300, 301), (301, len(y))]
    ]
    merged = model()
    vocab = finalize_text(merged, settings_, parts[2].merge(parts[0]).merge(parts[1]), ["commas"])
    merged.finalize()
    streamed = model()
    chunks = [
        (X[a:b], y[a:b], {c: w[a:b] for c, w in words.items()})
        for a, b in [(0, 500), (500, len(y))]
    ]
    assert fit_text_chunks(streamed, settings_, chunks, ["commas"]) == vocab
    streamed.finalize()
    assert merged.vocabulary_sizes == [len(vocab["text"]), len(vocab["opening"])]
    np.testing.assert_allclose(merged.text_log_prob_, streamed.text_log_prob_, rtol=1e-12)
    np.testing.assert_allclose(
        merged.theta_, streamed.theta_, rtol=1e-12, atol=1e-12 * np.abs(streamed.theta_).max()
    )
    expected = np.hstack([_text_term_counts(train, c, vocab[c]) for c in settings_.columns])
    np.testing.assert_array_equal(merged.stats_.multinomial_count, expected)


def _text_term_counts(train, column, vocabulary):
    vec = CountVectorizer(vocabulary=vocabulary)
    W = vec.transform(train[column])
    classes = np.unique(train.label)
    return np.vstack(
        [np.asarray(W[(train.label == c).to_numpy()].sum(axis=0)).ravel() for c in classes]
    )


def test_predict_with_text_and_unseen_ignore_scores_and_counts_unseen_codes(tmp_path):
    rng = np.random.default_rng(0)
    frames = {}
    for part in ("train", "test"):
        d = pd.read_csv(SAMPLE / f"austen_{part}.csv").head(120)
        d["speaker"] = rng.choice(["narrator", "dialogue"], len(d))
        d["code"] = rng.integers(0, 3, len(d))
        frames[part] = d
    test = frames["test"].copy()
    test.loc[test.index[:5], "speaker"] = "letter"  # a category never seen
    test.loc[test.index[5:7], "code"] = 9  # a code never seen
    frames["train"].to_csv(tmp_path / "train.csv", index=False)
    test.to_csv(tmp_path / "test.csv", index=False)
    ok(nbcli("fit", "-m", "mixed", "-d", tmp_path / "train.csv", "--text", "text",
             "--column", "code=categorical", "-t", "label", "-o", tmp_path / "m.npz", "-q"))  # fmt: skip
    run = ok(nbcli("predict", "-m", tmp_path / "m.npz", "-d", tmp_path / "test.csv",
                   "--unseen", "ignore", "-o", tmp_path / "p.csv", "--json", tmp_path / "s.json"))  # fmt: skip
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["unseen"]["cells"] == {"speaker": 5, "code": 2}, summary["unseen"]
    assert len(pd.read_csv(tmp_path / "p.csv")) == len(test)
    assert "Traceback" not in run.stderr
