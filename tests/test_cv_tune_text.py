"""``nbcli cv`` and ``nbcli tune`` with ``--text COL``: per-fold vocabularies from one pass.

The model of fold ``f`` chooses its vocabulary from the other folds' rows,
as ``nbcli fit`` on those rows would, and scores fold ``f`` with the words
outside it ignored: so per-fold posteriors equal ``nbcli fit`` on the other
folds then ``nbcli predict`` on the fold (to 1e-12), and scikit-learn's
``CountVectorizer`` + naive Bayes fitted per fold (to 1e-8).
"""

from __future__ import annotations

import io
import json
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.naive_bayes import BernoulliNB, ComplementNB, MultinomialNB

from nbcli.io.modelfile import load_model
from nbcli.io.request import DataRequest
from nbcli.models import MODELS
from nbcli.text.settings import TextSettings
from nbcli.text.tally import TermTally
from nbcli.workflows.folds import collect_fold_statistics
from nbcli.workflows.settings import FoldSettings
from tests.conftest import assert_one_error_line, nbcli_in_process
from tests.declared import declared_params, fold_search, text_pipeline

SAMPLE = Path(__file__).resolve().parents[1] / "sample_data"


def ok(run):
    assert run.returncode == 0, run.stderr
    return run


@pytest.fixture(scope="module")
def austen(tmp_path_factory):
    """240 Austen paragraphs with a fold column (4 folds) and a numeric column."""
    frame = pd.read_csv(SAMPLE / "austen_train.csv").iloc[:240].reset_index(drop=True)
    rng = np.random.default_rng(7)
    frame["fold"] = rng.permutation(np.arange(len(frame)) % 4)
    frame["commas"] = frame.text.str.count(",")
    path = tmp_path_factory.mktemp("cvtext") / "austen.csv"
    frame[["text", "fold", "label"]].to_csv(path, index=False)
    return path, frame


def _proba(text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text))


def _fit_predict_fold(tmp_path, frame, test, columns, fit_args):
    """``nbcli fit`` on the rows outside ``test``, ``nbcli predict --proba`` on ``test``."""
    train_csv, test_csv = tmp_path / "train.csv", tmp_path / "test.csv"
    frame.loc[~test, columns + ["label"]].to_csv(train_csv, index=False)
    frame.loc[test, columns].to_csv(test_csv, index=False)
    model = tmp_path / "fold.npz"
    ok(nbcli_in_process("fit", "-d", train_csv, "-t", "label", "-o", model, "-q", *fit_args))
    run = ok(nbcli_in_process("predict", "-m", model, "-d", test_csv, "--proba"))
    return _proba(run.stdout), load_model(model)


@pytest.mark.parametrize(
    "model_args",
    [
        ("-m", "multinomial", "--min-df", "2"),
        ("-m", "complement", "--norm"),
        ("-m", "bernoulli", "--binarize", "0", "--alpha", "0.5"),
    ],
)
def test_cv_folds_equal_fit_then_predict_on_each_fold(tmp_path, austen, model_args):
    path, frame = austen
    oof = tmp_path / "oof.csv"
    args = ("--text", "text", *model_args)
    ok(
        nbcli_in_process(
            "cv",
            "-d",
            path,
            "-t",
            "label",
            "--fold-column",
            "fold",
            "--bootstrap",
            "0",
            "--oof-output",
            oof,
            "-q",
            *args,
        )
    )
    got = pd.read_csv(oof)
    assert got.fold.tolist() == frame.fold.tolist()
    sizes = set()
    for f in range(4):
        test = (frame.fold == f).to_numpy()
        expected, mf = _fit_predict_fold(tmp_path, frame, test, ["text"], args)
        sizes.add(len(mf.vocabularies["text"]))
        cols = [c for c in expected.columns if c.startswith("proba_")]
        np.testing.assert_allclose(
            got.loc[test, cols].to_numpy(), expected[cols].to_numpy(), rtol=0, atol=1e-12
        )
        assert got.loc[test, "prediction"].tolist() == expected.prediction.tolist()
    assert len(sizes) == 4  # every fold model has a vocabulary of its own


@pytest.mark.parametrize(
    "model, nbcli_args, reference",
    [
        ("multinomial", (), MultinomialNB),
        ("multinomial", ("--min-df", "2"), MultinomialNB),
        ("complement", ("--min-df", "2"), ComplementNB),
        ("bernoulli", ("--binarize", "0", "--max-df", "0.5"), lambda: BernoulliNB(binarize=0.0)),
    ],
)
def test_cv_folds_equal_count_vectorizer_and_naive_bayes_per_fold(
    austen, model, nbcli_args, reference
):
    path, frame = austen
    options = {"--min-df": "min_df", "--max-df": "max_df"}
    vec_args = {
        options[a]: (float(v) if "." in v else int(v))
        for a, v in zip(nbcli_args[::2], nbcli_args[1::2])
        if a in options
    }
    text = TextSettings(columns=("text",), **vec_args)
    params = declared_params(MODELS[model], 0, binarize=0.0)
    fs = collect_fold_statistics(
        MODELS[model](**params),
        DataRequest.of(str(path), target="label", text=text),
        FoldSettings(fold_column="fold"),
    )
    (log_proba,) = fs.out_of_fold([{}])
    folds = frame.fold.to_numpy()
    vocabulary_sizes = set()
    for f in range(4):
        train, test = frame[folds != f], frame[folds == f]
        vec = CountVectorizer(**vec_args)
        sk = reference().fit(vec.fit_transform(train.text), train.label)
        assert fs.fold_text(0, f).vocabularies["text"] == vec.get_feature_names_out().tolist()
        vocabulary_sizes.add(len(vec.vocabulary_))
        expected = sk.predict_proba(vec.transform(test.text))
        np.testing.assert_allclose(np.exp(log_proba[folds == f]), expected, rtol=0, atol=1e-8)
    assert len(vocabulary_sizes) == 4


def test_tune_picks_what_grid_search_picks_and_writes_the_fit_of_all_rows(tmp_path, austen):
    path, frame = austen
    alphas = [0.01, 0.1, 0.3, 1.0, 3.0]
    report_path, best = tmp_path / "tune.json", tmp_path / "best.npz"
    ok(
        nbcli_in_process(
            "tune",
            "-m",
            "multinomial",
            "-d",
            path,
            "-t",
            "label",
            "--text",
            "text",
            "--min-df",
            "2",
            "--fold-column",
            "fold",
            "--alpha",
            ",".join(map(str, alphas)),
            "--metric",
            "accuracy",
            "--bootstrap",
            "0",
            "-o",
            best,
            "--json",
            report_path,
            "-q",
        )
    )
    report = json.loads(report_path.read_text())
    assert report["settings"]["text"]["min_df"] == 2
    search = fold_search(
        text_pipeline(CountVectorizer(min_df=2), MultinomialNB()),
        {"multinomialnb__alpha": alphas},
        frame,
        "accuracy",
    )
    # Pooled accuracy over equal folds is the mean of the folds' accuracies.
    means = search.cv_results_["mean_test_score"]
    got = [r["metrics"]["accuracy"]["value"] for r in report["results"]]
    np.testing.assert_allclose(got, means, rtol=0, atol=1e-12)
    assert len(set(np.round(means, 12))) > 1  # alpha makes a difference here
    chosen = report["best"]["params"]["alpha"]
    assert chosen == search.best_params_["multinomialnb__alpha"]

    # The written model is the model nbcli fit writes with that alpha, member for member.
    plain = tmp_path / "plain.csv"
    frame[["text", "label"]].to_csv(plain, index=False)
    fitted = tmp_path / "fit.npz"
    ok(
        nbcli_in_process(
            "fit",
            "-m",
            "multinomial",
            "-d",
            path,
            "-t",
            "label",
            "--text",
            "text",
            "--drop",
            "fold",
            "--min-df",
            "2",
            "--alpha",
            str(chosen),
            "-o",
            fitted,
            "-q",
        )
    )
    a, b = np.load(best), np.load(fitted)
    assert sorted(a.files) == sorted(b.files)
    for name in a.files:
        if name != "metadata":
            assert np.array_equal(a[name], b[name]), name
    meta_a = json.loads(bytes(a["metadata"]).decode())
    meta_b = json.loads(bytes(b["metadata"]).decode())
    assert meta_a.pop("search")["best"]["params"] == {"alpha": chosen}
    assert meta_a == meta_b
    mf = load_model(best)
    assert mf.vocabularies["text"] == search.best_estimator_[0].get_feature_names_out().tolist()


def test_the_config_text_table_is_read_and_flags_override_it(tmp_path, austen):
    path, _ = austen
    config = tmp_path / "text.toml"
    config.write_text('model = "multinomial"\n[text]\ncolumns = ["text"]\nmin_df = 3\n')
    runs = {}
    for name, extra in {
        "config": ("-c", config),
        "flags": ("-m", "multinomial", "--text", "text", "--min-df", "3"),
        "default": ("-m", "multinomial", "--text", "text"),
        "override": ("-c", config, "--min-df", "1"),
    }.items():
        out = tmp_path / f"{name}.json"
        ok(
            nbcli_in_process(
                "cv",
                "-d",
                path,
                "-t",
                "label",
                "--folds",
                "3",
                "--bootstrap",
                "0",
                "--json",
                out,
                "-q",
                *extra,
            )
        )
        runs[name] = json.loads(out.read_text())
    loss = {k: r["metrics"]["log_loss"]["value"] for k, r in runs.items()}
    assert loss["config"] == loss["flags"] and loss["override"] == loss["default"]
    assert loss["config"] != loss["default"]
    assert runs["config"]["settings"]["text"]["min_df"] == 3


def test_numeric_columns_beside_text_stratified_repeats_and_rows_without_a_label(tmp_path):
    frame = pd.read_csv(SAMPLE / "austen_train.csv").iloc[:150].reset_index(drop=True)
    frame["commas"] = frame.text.str.count(",")
    frame["title"] = frame.text.str.split().str[:3].str.join(" ")
    with_gap = frame.astype({"label": object})
    with_gap.loc[[5, 77], "label"] = None  # skipped, with their documents
    data = tmp_path / "d.csv"
    with_gap[["commas", "text", "title", "label"]].to_csv(data, index=False)
    stop = tmp_path / "stop.txt"
    stop.write_text("the\nand\n")
    args = (
        "-m",
        "multinomial",
        "--text",
        "text",
        "--text",
        "title",
        "--ngram",
        "1,2",
        "--max-features",
        "300",
        "--stop-words",
        stop,
        "--no-lowercase",
    )
    oof = tmp_path / "oof.csv"
    ok(
        nbcli_in_process(
            "cv",
            "-d",
            data,
            "-t",
            "label",
            "--folds",
            "3",
            "--repeats",
            "2",
            "--seed",
            "4",
            "--bootstrap",
            "0",
            "--oof-output",
            oof,
            "--chunk-size",
            "40",
            "-q",
            *args,
        )
    )
    got = pd.read_csv(oof)
    kept = frame.drop(index=[5, 77]).reset_index(drop=True)
    assert len(got) == 2 * len(kept)
    columns = ["commas", "text", "title"]
    for r in (0, 1):
        rows = got[got.repeat == r].reset_index(drop=True)
        assert not rows.fold.eq(0).all()
        for f in range(3):
            test = (rows.fold == f).to_numpy()
            expected, mf = _fit_predict_fold(tmp_path, kept, test, columns, args)
            assert mf.feature_names[0] == "commas"
            cols = [c for c in expected.columns if c.startswith("proba_")]
            np.testing.assert_allclose(
                rows.loc[test, cols].to_numpy(), expected[cols].to_numpy(), rtol=0, atol=1e-12
            )


@pytest.mark.parametrize(
    "args, fragments",
    [
        (("-m", "gaussian", "--text", "text"), ("needs a model of word counts",)),
        (("-m", "mixed", "--text", "text"), ("do not take text columns under the mixed model",)),
        (("-m", "bernoulli", "--text", "text"), ("--binarize 0",)),
        (("-m", "multinomial", "--min-df", "2"), ("--min-df applies to text columns",)),
        (("-m", "multinomial", "--text", "label"), ("--text label", "is the target")),
        (("-m", "multinomial", "--text", "fold"), ("--text fold", "folds or groups")),
        (("-m", "multinomial", "--text", "text", "--min-df", "500"), ("fold 0", "min_df")),
    ],
)
def test_bad_text_options_are_one_line_errors(austen, args, fragments):
    path, _ = austen
    for command in ("cv", "tune"):
        grid = ("--alpha", "0.5,1") if "gaussian" not in args else ("--var-smoothing", "1e-9")
        grid = grid if command == "tune" else ()
        run = nbcli_in_process(
            command, "-d", path, "-t", "label", "--fold-column", "fold", *grid, *args
        )
        assert_one_error_line(run, *fragments)


def test_without_text_a_text_column_is_refused_with_options_cv_and_tune_have(austen, tmp_path):
    path, _ = austen
    for command, extra in (("cv", ()), ("tune", ("--alpha", "1"))):
        run = nbcli_in_process(command, "-m", "multinomial", "-d", path, "-t", "label", *extra)
        line = assert_one_error_line(run, "--text NAME")
        help_text = nbcli_in_process(command, "--help").stdout
        for flag in ("--drop", "--text", "--model"):
            assert flag in line and flag in help_text
    # tune's refusal of a file it did not write names --force, which tune takes.
    other = tmp_path / "other.json"
    other.write_text("{}")
    base = ("tune", "-m", "multinomial", "-d", path, "-t", "label", "--text", "text")
    base += ("--fold-column", "fold", "--alpha", "1", "--bootstrap", "0", "-q", "--json", other)
    assert_one_error_line(nbcli_in_process(*base), "--force")
    ok(nbcli_in_process(*base, "--force"))
    assert json.loads(other.read_text())["schema"] == "nbcli.tuning"


WORDS = ["free", "money", "now", "meeting", "at", "noon", "cash", "lunch", "x"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.lists(
        st.tuples(
            st.lists(st.sampled_from(WORDS), max_size=6),
            st.sampled_from(["spam", "ham"]),
            st.integers(0, 2),
        ),
        min_size=9,
        max_size=30,
    ),
    min_df=st.sampled_from([1, 2, 0.2]),
    chunk=st.integers(1, 12),
)
def test_fold_statistics_equal_the_statistics_of_the_other_folds_rows(rows, min_df, chunk):
    docs = [" ".join(w) for w, _, _ in rows]
    labels = np.array([label for _, label, _ in rows])
    folds = np.array([f for _, _, f in rows])
    if len(set(labels)) < 2 or any(len(set(labels[folds != f])) < 2 for f in range(3)):
        return  # a fold model needs both classes
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "d.csv"
        pd.DataFrame({"doc": docs, "fold": folds, "label": labels}).to_csv(data, index=False)
        text = TextSettings(columns=("doc",), min_df=min_df)
        try:
            fs = collect_fold_statistics(
                MODELS["multinomial"](),
                DataRequest.of(str(data), target="label", chunk_size=chunk, text=text),
                FoldSettings(fold_column="fold"),
            )
        except Exception as exc:  # a fold present in no row, or no term left
            assert "fold" in str(exc) or "no terms remain" in str(exc) or "empty" in str(exc)
            return
        classes = fs.classes
        for f in [None, *range(fs.n_folds)]:
            inside = np.ones(len(rows), bool) if f is None else fs.folds[0] != f
            tally = TermTally(text.options())
            y_idx = np.searchsorted(classes, labels[inside])
            tally.add([d for d, i in zip(docs, inside) if i], classes, y_idx)
            reference = tally.stats(classes)
            try:
                kept = reference.select(min_df)
            except ValueError:
                with pytest.raises(Exception, match="no terms remain"):
                    fs.fold_text(0, f)
                continue
            part = fs.fold_text(0, f)
            assert part.vocabularies["doc"] == reference.terms[kept].tolist()
            np.testing.assert_array_equal(part.stats.feature_count, reference.term_count[:, kept])
            np.testing.assert_array_equal(part.stats.class_count, reference.class_count)
