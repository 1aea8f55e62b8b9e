"""--tfidf: TF-IDF weighted word counts equal scikit-learn's TfidfVectorizer
followed by its naive Bayes models, through model files."""

import numpy as np
import pandas as pd
import pytest
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.naive_bayes import ComplementNB, MultinomialNB

from tests.conftest import assert_one_error_line, nbcli_in_process
from tests.declared import (
    AUSTEN_TEST,
    AUSTEN_TRAIN,
    assert_out_of_fold,
    posteriors_of,
    predicted,
    text_pipeline,
    texts,
    with_folds,
)

pytestmark = pytest.mark.numerical

TRAIN, TEST = AUSTEN_TRAIN, AUSTEN_TEST


def _fit_and_predict(tmp_path, model, *flags):
    path = tmp_path / "m.npz"
    run = nbcli_in_process(
        "fit", "-m", model, "-d", TRAIN, "--text", "text", *flags, "-o", path, "--quiet"
    )
    assert run.returncode == 0, run.stderr
    return predicted(path, TEST, tmp_path / "p.csv"), path


CASES = [
    ("multinomial", MultinomialNB, (), {}),
    ("multinomial", MultinomialNB, ("--sublinear-tf",), {"sublinear_tf": True}),
    ("multinomial", MultinomialNB, ("--no-smooth-idf",), {"smooth_idf": False}),
    ("multinomial", MultinomialNB, ("--tfidf-norm", "l1"), {"norm": "l1"}),
    ("multinomial", MultinomialNB, ("--tfidf-norm", "none"), {"norm": None}),
    (
        "multinomial",
        MultinomialNB,
        ("--ngram", "1,2", "--min-df", "2", "--max-df", "0.5", "--sublinear-tf"),
        {"ngram_range": (1, 2), "min_df": 2, "max_df": 0.5, "sublinear_tf": True},
    ),
    ("complement", ComplementNB, (), {}),
    ("mixed", MultinomialNB, ("--sublinear-tf",), {"sublinear_tf": True}),
]


@pytest.mark.parametrize(("model", "sk_model", "flags", "options"), CASES)
def test_posteriors_equal_tfidf_vectorizer_and_naive_bayes(
    tmp_path, model, sk_model, flags, options
):
    got, _ = _fit_and_predict(tmp_path, model, "--tfidf", *flags)
    text, labels = texts(TRAIN)
    test_text = texts(TEST)[0]
    pipe = text_pipeline(TfidfVectorizer(**options), sk_model(), text, labels)
    want = pipe.predict_proba(test_text)
    # Weighted rows are summed in another order than scikit-learn's: a few
    # roundings of terms of order 1 in each score, far below 1e-12.
    np.testing.assert_allclose(posteriors_of(got, pipe.classes_), want, rtol=0, atol=1e-12)
    assert (got["prediction"].to_numpy() == pipe.predict(test_text)).mean() > 0.99
    # The weighting changes the answer: raw counts give other posteriors.
    plain = {**options, "use_idf": False, "norm": None, "sublinear_tf": False}
    raw = text_pipeline(TfidfVectorizer(**plain), sk_model(), text, labels)
    raw_proba = raw.predict_proba(test_text)
    assert np.abs(raw_proba - want).max() > 1e-3


def test_model_file_keeps_the_document_frequencies(tmp_path):
    from sklearn.feature_extraction.text import CountVectorizer

    from nbcli.io.modelfile import load_model

    _, path = _fit_and_predict(tmp_path, "multinomial", "--tfidf", "--min-df", "3")
    mf = load_model(path)
    w = mf.text.weighting
    text, _ = texts(TRAIN)
    counts = CountVectorizer(min_df=3).fit(text)
    df = (counts.transform(text) > 0).sum(axis=0).A1
    order = np.argsort(counts.get_feature_names_out())
    assert mf.vocabularies["text"] == sorted(counts.get_feature_names_out())
    assert list(w.document_frequencies[0]) == df[order].tolist()
    assert w.n_documents == len(text) and w.norm == "l2" and w.smooth_idf


def test_what_tfidf_cannot_do_is_refused_in_one_line(tmp_path):
    out = tmp_path / "m.npz"
    cases = [
        (("-m", "bernoulli", "--binarize", "0", "-d", TRAIN), "bernoulli model"),
        (("-m", "multinomial", "-d", "-"), "give a file rather than stdin"),
    ]
    for args, fragment in cases:
        run = nbcli_in_process("fit", *args, "--text", "text", "--tfidf", "-o", out)
        assert_one_error_line(run, fragment)
    run = nbcli_in_process(
        "cv", "-m", "bernoulli", "--binarize", "0", "-d", TRAIN, "--text", "text", "--tfidf"
    )
    assert_one_error_line(run, "bernoulli model")
    run = nbcli_in_process(
        "fit", "-m", "multinomial", "-d", TRAIN, "--text", "text", "--sublinear-tf", "-o", out
    )
    assert_one_error_line(run, "--sublinear-tf applies with --tfidf")
    assert not out.exists()


def _folds(tmp_path):
    return with_folds(pd.read_csv(TRAIN, keep_default_na=False), tmp_path / "austen_folds.csv")


def test_cv_folds_weight_with_their_own_document_frequencies(tmp_path):
    """Each fold model's idf is of its training rows, as a pipeline fitted on them."""
    path, frame = _folds(tmp_path)
    cfg = tmp_path / "text.toml"
    cfg.write_text('model = "complement"\n[text]\ncolumns = ["text"]\ntfidf = true\nnorm = "l1"\n')
    oof = tmp_path / "oof.csv"
    run = nbcli_in_process(
        "cv",
        "-d",
        path,
        "--config",
        cfg,
        "--fold-column",
        "fold",
        "--bootstrap",
        "0",
        "--oof-output",
        oof,
        "--quiet",
    )
    assert run.returncode == 0, run.stderr

    def fold_model(train, held):
        pipe = text_pipeline(TfidfVectorizer(norm="l1"), ComplementNB())
        pipe.fit(frame.text[train], frame.label[train])
        return pipe.classes_, pipe.predict_proba(frame.text[held])

    assert_out_of_fold(pd.read_csv(oof), frame["fold"], fold_model)


def test_tune_writes_the_weighted_model_of_all_rows(tmp_path):
    path, frame = _folds(tmp_path)
    model = tmp_path / "best.npz"
    run = nbcli_in_process(
        "tune",
        "-m",
        "multinomial",
        "-d",
        path,
        "--text",
        "text",
        "--fold-column",
        "fold",
        "--tfidf",
        "--sublinear-tf",
        "--min-df",
        "1,2",
        "--alpha",
        "0.1,1",
        "--bootstrap",
        "0",
        "-o",
        model,
        "--quiet",
    )
    assert run.returncode == 0, run.stderr
    from nbcli.io.modelfile import load_model

    mf = load_model(model)
    assert mf.text.weighting.n_documents == len(frame) and mf.text.weighting.sublinear_tf
    pipe = text_pipeline(
        TfidfVectorizer(sublinear_tf=True, min_df=mf.text.min_df),
        MultinomialNB(alpha=mf.model.alpha),
        frame["text"],
        frame["label"],
    )
    got = posteriors_of(predicted(model, TEST, tmp_path / "p.csv"), pipe.classes_)
    np.testing.assert_allclose(got, pipe.predict_proba(texts(TEST)[0]), rtol=0, atol=1e-12)


@pytest.mark.parametrize("engine", ["local", "dask"])
def test_parts_equal_one_file(tmp_path, engine):
    if engine == "dask":
        pytest.importorskip("distributed")
    frame = pd.read_csv(TRAIN, keep_default_na=False)
    parts = tmp_path / "parts"
    parts.mkdir()
    for i, rows in enumerate((frame.iloc[:301], frame.iloc[301:302], frame.iloc[302:])):
        rows.to_csv(parts / f"part{i}.csv", index=False)
    flags = ("--tfidf", "--sublinear-tf", "--min-df", "2")
    one, _ = _fit_and_predict(tmp_path, "multinomial", *flags)
    path = tmp_path / "parts.npz"
    extra = ("--engine", "dask", "--workers", "1") if engine == "dask" else ()
    run = nbcli_in_process(
        "fit",
        "-m",
        "multinomial",
        "-d",
        parts,
        "--text",
        "text",
        *flags,
        *extra,
        "-o",
        path,
        "--quiet",
    )
    assert run.returncode == 0, run.stderr
    got = predicted(path, TEST, tmp_path / "parts.csv").filter(like="proba_").to_numpy()
    np.testing.assert_allclose(got, one.filter(like="proba_").to_numpy(), rtol=0, atol=1e-12)


def test_part_wise_cv_and_text_grids_are_refused_in_one_line(tmp_path):
    frame = pd.read_csv(TRAIN, keep_default_na=False)
    parts = tmp_path / "parts"
    parts.mkdir()
    for i, rows in enumerate((frame.iloc[:400], frame.iloc[400:])):
        rows.to_csv(parts / f"part{i}.csv", index=False)
    run = nbcli_in_process(
        "cv", "-m", "multinomial", "-d", parts, "--text", "text", "--tfidf", "--bootstrap", "0"
    )
    assert_one_error_line(run, "--tfidf is not cross-validated part by part")
    run = nbcli_in_process(
        "tune", "-m", "multinomial", "-d", parts, "--text", "text", "--min-df", "1,2"
    )
    assert_one_error_line(run, "searched on the counts of one file")


def test_a_bad_weighting_value_names_its_flag_or_config_key(tmp_path):
    out = tmp_path / "m.npz"
    fit = ("fit", "-m", "multinomial", "-d", TRAIN, "-o", out)
    run = nbcli_in_process(*fit, "--text", "text", "--tfidf", "--tfidf-norm", "l3")
    assert_one_error_line(run, "--tfidf-norm must be l2, l1 or none", "'l3'")
    assert "--text" not in run.stderr
    cfg = tmp_path / "text.toml"
    for line, fragments in (
        ('norm = "l3"', ("[text] norm must be l2, l1 or none", "'l3'")),
        ('sublinear_tf = "yes"', ("[text] sublinear_tf must be true or false",)),
    ):
        cfg.write_text(f'[text]\ncolumns = ["text"]\ntfidf = true\n{line}\n')
        run = nbcli_in_process(*fit, "--config", cfg)
        assert_one_error_line(run, "text.toml", *fragments)
        assert "--text" not in run.stderr
    # Flags win over the file's keys.
    run = nbcli_in_process(*fit, "--config", cfg, "--tfidf-norm", "L1", "--sublinear-tf")
    assert run.returncode == 0, run.stderr
