"""tune over text settings (--ngram, --min-df, --max-df grids) picks and scores
what scikit-learn's GridSearchCV over CountVectorizer + MultinomialNB does
on the same folds."""

import json

import numpy as np
import pandas as pd
import pytest
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.naive_bayes import MultinomialNB

from tests.conftest import assert_one_error_line, nbcli_in_process
from tests.declared import (
    AUSTEN_TEST,
    AUSTEN_TRAIN,
    fold_search,
    posteriors_of,
    predicted,
    text_pipeline,
    texts,
    with_folds,
)

pytestmark = pytest.mark.numerical

N_FOLDS = 4


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    """The Austen sample with a fold column: equal folds, so the mean of the
    per-fold scores (GridSearchCV's criterion) is the pooled score (tune's)."""
    frame = pd.read_csv(AUSTEN_TRAIN, keep_default_na=False)
    assert len(frame) % N_FOLDS == 0
    return with_folds(frame, tmp_path_factory.mktemp("tune") / "austen_folds.csv", N_FOLDS)


def _tune(table, tmp_path, metric, *grid):
    path, _ = table
    report = tmp_path / "tune.json"
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
        "--metric",
        metric,
        *grid,
        "--bootstrap",
        "0",
        "--json",
        report,
        "--quiet",
    )
    assert run.returncode == 0, run.stderr
    return json.loads(report.read_text())


def _neg_log_loss(estimator, X, y):
    """Log-loss from the log posteriors: scikit-learn's "neg_log_loss" clips
    probabilities at machine epsilon, which bigram models here go below."""
    log_proba = estimator.predict_log_proba(X)
    where = np.searchsorted(estimator.classes_, np.asarray(y))
    return float(np.mean(log_proba[np.arange(len(where)), where]))


def _grid_search(frame, metric, param_grid):
    pipe = text_pipeline(CountVectorizer(), MultinomialNB())
    scoring = {"log_loss": _neg_log_loss, "accuracy": "accuracy"}[metric]
    return fold_search(pipe, param_grid, frame, scoring, refit=False)


GRIDS = [
    (
        "log_loss",
        ("--ngram", "1,1:1,2", "--min-df", "1,3", "--alpha", "0.1,1"),
        {"ngram_range": [(1, 1), (1, 2)], "min_df": [1, 3], "alpha": [0.1, 1.0]},
    ),
    (
        "accuracy",
        ("--min-df", "1,2,3", "--max-df", "0.5,1.0"),
        {"min_df": [1, 2, 3], "max_df": [0.5, 1.0]},
    ),
]
_STEP = {"alpha": "multinomialnb"}


@pytest.mark.parametrize(("metric", "flags", "grid"), GRIDS)
def test_tune_over_text_settings_equals_grid_search_cv(table, tmp_path, metric, flags, grid):
    report = _tune(table, tmp_path, metric, *flags)
    names = list(grid)
    gs = _grid_search(
        table[1], metric, {f"{_STEP.get(n, 'countvectorizer')}__{n}": v for n, v in grid.items()}
    )

    def key(params, prefix=False):
        values = []
        for n in names:
            v = params[f"{_STEP.get(n, 'countvectorizer')}__{n}" if prefix else n]
            values.append(tuple(v) if isinstance(v, (list, tuple)) else v)
        return tuple(values)

    sign = -1.0 if metric == "log_loss" else 1.0
    ours = {key(r["params"]): r["metrics"][metric]["value"] for r in report["results"]}
    theirs = {
        key(p, prefix=True): sign * score
        for p, score in zip(gs.cv_results_["params"], gs.cv_results_["mean_test_score"])
    }
    assert set(ours) == set(theirs) and len(ours) == np.prod([len(v) for v in grid.values()])
    for k, value in theirs.items():
        assert ours[k] == pytest.approx(value, rel=1e-10, abs=1e-12), k
    assert key(report["best"]["params"]) == key(gs.best_params_, prefix=True)
    assert len({round(v, 6) for v in ours.values()}) > len(ours) // 2  # the settings matter


def test_the_written_model_is_the_best_settings_fit(table, tmp_path):
    path, frame = table
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
        "--ngram",
        "1,1:1,2",
        "--min-df",
        "2,3",
        "--bootstrap",
        "0",
        "-o",
        model,
        "--quiet",
    )
    assert run.returncode == 0, run.stderr
    from nbcli.io.modelfile import load_model

    mf = load_model(model)
    rng, min_df = mf.text.ngram_range, mf.text.min_df
    vectorizer = CountVectorizer(ngram_range=tuple(rng), min_df=min_df)
    direct = text_pipeline(vectorizer, MultinomialNB(), frame["text"], frame["label"])
    assert mf.vocabularies["text"] == sorted(direct[0].get_feature_names_out())
    got = posteriors_of(predicted(model, AUSTEN_TEST, tmp_path / "p.csv"), direct.classes_)
    want = direct.predict_proba(texts(AUSTEN_TEST)[0])
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


def test_a_text_grid_needs_text_columns():
    run = nbcli_in_process(
        "tune", "-m", "multinomial", "-d", "sample_data/iris_train.csv", "--min-df", "1,2"
    )
    assert_one_error_line(run, "--min-df")


def test_text_options_that_would_mislead_are_refused_or_read_as_said(tmp_path):
    from nbcli.cli.text_options import parse_ngram, text_grid
    from nbcli.errors import NbcliError

    # 1 (one document) and 1.0 (every document) are two settings, not one twice.
    assert text_grid(None, None, "1,1.0") == {"max_df": [1, 1.0]}
    with pytest.raises(NbcliError, match="--min-df: a value is listed twice"):
        text_grid(None, "2,2", None)
    # N alone is N,N (n-grams of that one length), and an unbounded range is refused.
    assert parse_ngram("2") == (2, 2) and parse_ngram("1,10") == (1, 10)
    with pytest.raises(NbcliError, match=r"MAX <= 10 .* got '1,1000'"):
        parse_ngram("1,1000")
    # A config's tfidf must be a boolean: "false" turned TF-IDF on.
    data = tmp_path / "d.csv"
    data.write_text(
        "text,label\n" + "".join(f"w{i % 3} x{i % 2},{'ab'[i % 2]}\n" for i in range(20))
    )
    config = tmp_path / "c.toml"
    config.write_text('model = "multinomial"\n[text]\ncolumns = ["text"]\ntfidf = "false"\n')
    run = nbcli_in_process("fit", "-c", config, "-d", data, "-o", tmp_path / "m.npz")
    assert_one_error_line(run, "[text] tfidf must be true or false, got 'false'")
