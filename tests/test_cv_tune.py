"""Cross-validation and tuning from per-fold statistics: ``nbcli cv`` and ``nbcli tune``.

Fold models are merges of the other folds' statistics, so they must score as
models fitted on the other folds' rows: by nbcli itself (to 1e-12) and by
scikit-learn (accuracy exactly, log-loss to 1e-8).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn import naive_bayes as nb
from sklearn.metrics import average_precision_score, roc_auc_score
from sklearn.model_selection import GridSearchCV, PredefinedSplit
from sklearn.preprocessing import label_binarize

from nbcli.errors import NbcliError
from nbcli.io.modelfile import load_model, save_model
from nbcli.io.request import DataRequest
from nbcli.models import MODELS
from nbcli.reports.cross_validation import CROSS_VALIDATION_SCHEMA
from nbcli.reports.evaluation import EVALUATION_SCHEMA
from nbcli.reports.tuning import TUNING_SCHEMA, best_index
from nbcli.workflows.cv import cross_validate
from nbcli.workflows.evaluate import evaluate
from nbcli.workflows.settings import FoldSettings, ScoreSettings, Search
from nbcli.workflows.train import train
from nbcli.workflows.tune import combinations, parse_values, tune
from tests.conftest import assert_one_error_line, nbcli_in_process
from tests.declared import sklearn_twin, spec_names
from tests.test_reports import validate

#: The model types that declare a scikit-learn equivalent, with its class.
SKLEARN = {n: sklearn_twin(cls) for n, cls in MODELS.items() if cls.sklearn_equivalent}


def _est(model, **params):
    return MODELS[model](**params)


def _widths(model, X) -> dict:
    """For a model that declares ``min_categories``: every category of the file,
    as its fold models know them (and as a fit on the other folds is told them,
    so that it can score a fold's categories only that fold holds)."""
    if "min_categories" not in spec_names(MODELS[model]):
        return {}
    return {"min_categories": (X.max(axis=0) + 1).astype(int)}


def _counts(n=200, d=4, k=3, seed=0):
    """Poisson counts with class-dependent rates: valid input for every model type."""
    rng = np.random.default_rng(seed)
    y = np.arange(n) % k
    rates = rng.uniform(1.0, 6.0, size=(k, d))
    X = rng.poisson(rates[y]).astype(float)
    return X, y


def _write_csv(path, X, y, fold=None):
    names = [f"f{j}" for j in range(X.shape[1])]
    head = names + (["fold"] if fold is not None else []) + ["label"]
    lines = [",".join(head)]
    for i in range(X.shape[0]):
        cells = [repr(float(v)) for v in X[i]]
        if fold is not None:
            cells.append(str(int(fold[i])))
        cells.append(f"c{int(y[i])}")
        lines.append(",".join(cells))
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def folded(tmp_path_factory):
    X, y = _counts()
    fold = np.random.default_rng(1).permutation(np.arange(X.shape[0]) % 4)
    path = _write_csv(tmp_path_factory.mktemp("cv") / "data.csv", X, y, fold)
    return path, X, y, fold


@pytest.mark.parametrize("model", sorted(SKLEARN))
def test_cv_folds_equal_fits_on_the_other_folds(model, folded, tmp_path):
    path, X, y, fold = folded
    widths = _widths(model, X)
    report = cross_validate(
        _est(model, **widths),
        DataRequest.of(str(path)),
        FoldSettings(fold_column="fold"),
        ScoreSettings(bootstrap=0),
    )
    assert [f.fold for f in report.folds] == [0, 1, 2, 3]
    assert report.plan["method"] == "column" and report.plan["passes"] == 1
    labels = np.array([f"c{v}" for v in y])
    pooled_correct = 0
    for entry in report.folds:
        test = fold == entry.fold
        assert entry.n_samples == test.sum() and entry.n_train == (~test).sum()
        ref = SKLEARN[model](**widths).fit(X[~test], labels[~test])
        accuracy = float(np.mean(ref.predict(X[test]) == labels[test]))
        assert entry.metrics["accuracy"] == accuracy
        pooled_correct += int(np.sum(ref.predict(X[test]) == labels[test]))
        p = ref.predict_proba(X[test])
        true = p[np.arange(test.sum()), np.searchsorted(ref.classes_, labels[test])]
        if true.min() > 1e-12:  # where README's clipping does not bite
            assert entry.metrics["log_loss"] == pytest.approx(-np.mean(np.log(true)), abs=1e-8)
        # nbcli's own fit of the other folds' rows, scored by evaluate.
        train_csv = _write_csv(tmp_path / f"train{entry.fold}.csv", X[~test], y[~test])
        test_csv = _write_csv(tmp_path / f"test{entry.fold}.csv", X[test], y[test])
        result = train(_est(model, **widths), DataRequest.of(str(train_csv)))
        model_path = tmp_path / f"m{entry.fold}.npz"
        save_model(result.model_file, model_path)
        ev = evaluate(str(model_path), DataRequest.of(str(test_csv)), ScoreSettings(bootstrap=0))
        for key in ("log_loss", "brier", "accuracy", "roc_auc"):
            assert entry.metrics[key] == pytest.approx(ev.metrics[key].value, abs=1e-12), key
    assert report.metrics["accuracy"].value == pooled_correct / X.shape[0]


def test_cv_streamed_equals_cv_in_memory_and_writes_out_of_fold_predictions(tmp_path):
    X, y = _counts(n=150)
    path = _write_csv(tmp_path / "d.csv", X, y)
    oof = tmp_path / "oof.csv"
    kept = cross_validate(
        MODELS["gaussian"](),
        DataRequest.of(str(path)),
        FoldSettings(n_folds=5, seed=3),
        ScoreSettings(bootstrap=0, seed=3),
    )
    streamed = cross_validate(
        MODELS["gaussian"](),
        DataRequest.of(str(path)),
        FoldSettings(n_folds=5, seed=3, memory_budget=0),
        ScoreSettings(bootstrap=0, seed=3),
        oof_output=str(oof),
    )
    assert kept.plan["passes"] == 1 and streamed.plan["passes"] == 3
    assert [f.metrics for f in kept.folds] == [f.metrics for f in streamed.folds]
    # Stratified: every fold holds 10 rows of each class.
    assert [f.n_samples for f in kept.folds] == [30] * 5
    import polars as pl

    frame = pl.read_csv(oof)
    assert frame.columns == [
        "row", "label", "fold", "prediction", "proba_c0", "proba_c1", "proba_c2"
    ]  # fmt: skip
    # Every data row in file order, with its true label: it joins back to the input.
    assert frame["row"].to_list() == list(range(1, 151))
    assert frame["label"].to_list() == [f"c{v}" for v in y]
    proba = frame.select(["proba_c0", "proba_c1", "proba_c2"]).to_numpy()
    np.testing.assert_allclose(proba.sum(axis=1), 1.0, atol=1e-12)
    correct = np.mean(frame["prediction"].to_numpy() == np.array([f"c{v}" for v in y]))
    assert correct == kept.metrics["accuracy"].value
    # The same seed gives the same folds; another seed other folds.
    other = cross_validate(
        MODELS["gaussian"](),
        DataRequest.of(str(path)),
        FoldSettings(n_folds=5, seed=4),
        ScoreSettings(bootstrap=0, seed=4),
    )
    assert [f.metrics for f in other.folds] != [f.metrics for f in kept.folds]


def test_cv_repeats_and_groups(tmp_path):
    X, y = _counts(n=120)
    groups = np.arange(120) // 4
    names = [f"f{j}" for j in range(4)]
    lines = [",".join([*names, "g", "label"])]
    lines += [
        ",".join([*(repr(float(v)) for v in X[i]), str(groups[i]), f"c{y[i]}"]) for i in range(120)
    ]
    path = tmp_path / "g.csv"
    path.write_text("\n".join(lines) + "\n")
    rep = cross_validate(
        MODELS["gaussian"](),
        DataRequest.of(str(path)),
        FoldSettings(n_folds=3, n_repeats=2),
        ScoreSettings(bootstrap=20),
    )
    assert len(rep.folds) == 6 and {f.repeat for f in rep.folds} == {0, 1}
    assert rep.pooled.n_samples == 240
    assert any("repeats" in w for w in rep.warnings)
    grouped = cross_validate(
        MODELS["gaussian"](),
        DataRequest.of(str(path)),
        FoldSettings(n_folds=3, group_column="g"),
        ScoreSettings(bootstrap=0),
    )
    assert grouped.plan["method"] == "group"
    assert sum(f.n_samples for f in grouped.folds) == 120


def test_cv_refuses_a_fold_without_a_class(tmp_path):
    X, y = _counts(n=60)
    fold = np.where(y == 2, 0, np.arange(60) % 2)  # class c2 only in fold 0
    path = _write_csv(tmp_path / "d.csv", X, y, fold)
    with pytest.raises(NbcliError, match="fold 0 would have 0 rows of class 'c2'"):
        cross_validate(
            MODELS["gaussian"](),
            DataRequest.of(str(path)),
            FoldSettings(fold_column="fold"),
            ScoreSettings(bootstrap=0),
        )


def test_cv_command_json_thresholds_and_schema(folded, tmp_path):
    path = folded[0]
    run = nbcli_in_process(
        "cv",
        "-m",
        "multinomial",
        "-d",
        path,
        "--fold-column",
        "fold",
        "--alpha",
        "0.5",
        "--bootstrap",
        "100",
        "--json",
        "-",
        "-q",
    )
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    assert validate(doc, CROSS_VALIDATION_SCHEMA) == []
    assert doc["hyperparameters"]["alpha"] == 0.5
    assert [f["fold"] for f in doc["folds"]] == [0, 1, 2, 3]
    low = nbcli_in_process(
        "cv",
        "-m",
        "gaussian",
        "-d",
        path,
        "--folds",
        "3",
        "--bootstrap",
        "0",
        "--fail-under",
        "roc_auc=0.9999",
        "-q",
    )
    assert low.returncode == 3 and "roc_auc" in low.stderr
    bad = nbcli_in_process("cv", "-m", "gaussian", "-d", path, "--alpha", "1", "-q")
    assert bad.returncode == 2 and "--alpha does not apply to the gaussian model" in bad.stderr


# --------------------------------------------------------------------------
# tune


def test_parse_values_lists_and_ranges():
    assert parse_values("0.01,0.1,1", "--alpha") == [0.01, 0.1, 1.0]
    np.testing.assert_allclose(parse_values("log:1e-9..1:10", "x"), np.geomspace(1e-9, 1, 10))
    assert parse_values("lin:0..1:3", "x") == [0.0, 0.5, 1.0]
    with pytest.raises(NbcliError, match="expected log:A..B:N"):
        parse_values("log:1e-9..:3", "--var-smoothing")
    # A lin: range is shown a lin: example, and N = 0 is said to be too few.
    with pytest.raises(NbcliError, match=r"at least 1\), e\.g\. lin:0\.\.0\.5:20$"):
        parse_values("lin:0..1:0", "--var-smoothing")
    with pytest.raises(NbcliError, match="positive bounds"):
        parse_values("log:0..1:3", "--var-smoothing")
    assert combinations({"a": [1, 2], "b": [3, 4]}) == [
        {"a": 1, "b": 3},
        {"a": 1, "b": 4},
        {"a": 2, "b": 3},
        {"a": 2, "b": 4},
    ]
    assert best_index([0.5, 0.7, 0.7], "accuracy") == 1
    assert best_index([0.5, 0.3, 0.3, float("nan")], "log_loss") == 1


def _smoothing_data(tmp_path):
    """Data where var_smoothing matters: near-constant noisy features."""
    rng = np.random.default_rng(5)
    n = 200
    y = np.arange(n) % 2
    X = rng.normal(size=(n, 5)) * np.array([1, 1, 1e-3, 1e-3, 50.0])
    X[:, 0] += 0.6 * y
    X[:, 2] += 1e-3 * y
    fold = np.arange(n) % 5  # equal folds: pooled accuracy is the mean of fold accuracies
    return _write_csv(tmp_path / "s.csv", X, y, fold), X, y, fold


def test_tune_picks_what_grid_search_picks_and_writes_the_refit(tmp_path):
    path, X, y, fold = _smoothing_data(tmp_path)
    grid = [float(v) for v in np.geomspace(1e-9, 1.0, 10)]
    report, mf = tune(
        MODELS["gaussian"](),
        DataRequest.of(str(path)),
        Search({"var_smoothing": grid}, "accuracy"),
        FoldSettings(fold_column="fold"),
        ScoreSettings(bootstrap=0),
    )
    search = GridSearchCV(
        nb.GaussianNB(), {"var_smoothing": grid}, cv=PredefinedSplit(fold), scoring="accuracy"
    ).fit(X, y)
    assert report.best["params"]["var_smoothing"] == search.best_params_["var_smoothing"]
    means = search.cv_results_["mean_test_score"]
    for r, m in zip(report.results, means):
        assert r.metrics["accuracy"].value == pytest.approx(m, abs=1e-12)
    assert len(set(np.round(means, 12))) > 1  # the grid makes a difference here
    assert validate(report.to_dict(), TUNING_SCHEMA) == []
    # The written model equals a fit with the chosen value on all rows.
    out = tmp_path / "best.npz"
    save_model(mf, out)
    loaded = load_model(out)
    best = report.best["params"]["var_smoothing"]
    plain = _write_csv(tmp_path / "all.csv", X, y)
    ref = train(MODELS["gaussian"](var_smoothing=best), DataRequest.of(str(plain))).model_file.model
    assert loaded.model.var_smoothing == best
    np.testing.assert_allclose(loaded.model.theta_, ref.theta_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(loaded.model.var_, ref.var_, rtol=1e-12, atol=0)
    np.testing.assert_allclose(
        loaded.model.predict_proba(X), ref.predict_proba(X), rtol=0, atol=1e-12
    )
    assert loaded.search["best"]["params"] == {"var_smoothing": best}
    assert len(loaded.search["results"]) == len(grid)


def test_tune_command_with_a_config_grid(tmp_path, folded):
    path = folded[0]
    cfg = tmp_path / "grid.toml"
    cfg.write_text('model = "qda"\n[grid]\nreg_param = [0.0, 0.1, 0.5]\n')
    out = tmp_path / "q.npz"
    run = nbcli_in_process(
        "tune",
        "-c",
        cfg,
        "-d",
        path,
        "--fold-column",
        "fold",
        "--bootstrap",
        "0",
        "-o",
        out,
        "--json",
        "-",
        "-q",
    )
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    assert [r["params"]["reg_param"] for r in doc["results"]] == [0.0, 0.1, 0.5]
    losses = [r["metrics"]["log_loss"]["value"] for r in doc["results"]]
    assert doc["best"]["index"] == int(np.argmin(losses)) and doc["output"] == str(out)
    assert load_model(out).model.reg_param == doc["best"]["params"]["reg_param"]
    refused = nbcli_in_process("tune", "-m", "bernoulli", "-d", path, "--alpha", "x,1", "-q")
    assert refused.returncode == 2 and "--alpha" in refused.stderr
    nothing = nbcli_in_process("tune", "-m", "gaussian", "-d", path, "-q")
    assert nothing.returncode == 2 and "nothing to search" in nothing.stderr


# --------------------------------------------------------------------------
# ROC AUC and average precision in evaluate


def test_evaluate_json_ranking_metrics_equal_scikit_learn(folded, tmp_path):
    path, X, y, fold = folded
    train_csv = _write_csv(tmp_path / "tr.csv", X[fold != 0], y[fold != 0])
    test_csv = _write_csv(tmp_path / "te.csv", X[fold == 0], y[fold == 0])
    model = tmp_path / "m.npz"
    assert (
        nbcli_in_process("fit", "-m", "gaussian", "-d", train_csv, "-o", model, "-q").returncode
        == 0
    )
    run = nbcli_in_process("evaluate", "-m", model, "-d", test_csv, "--json", "-", "-q")
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    assert validate(doc, EVALUATION_SCHEMA) == []
    ref = nb.GaussianNB().fit(X[fold != 0], y[fold != 0])
    p, yt = ref.predict_proba(X[fold == 0]), y[fold == 0]
    m = doc["metrics"]
    assert m["roc_auc"]["value"] == pytest.approx(
        roc_auc_score(yt, p, multi_class="ovr", average="macro"), abs=1e-12
    )
    assert m["roc_auc_weighted"]["value"] == pytest.approx(
        roc_auc_score(yt, p, multi_class="ovr", average="weighted"), abs=1e-12
    )
    assert m["average_precision"]["value"] == pytest.approx(
        average_precision_score(label_binarize(yt, classes=[0, 1, 2]), p, average="macro"),
        abs=1e-12,
    )
    assert m["roc_auc"]["method"] == "BCa" and m["average_precision"]["method"] == "percentile"
    per_class = [row["roc_auc"] for row in doc["per_class"]]
    expected = [roc_auc_score(yt == c, p[:, c]) for c in range(3)]
    np.testing.assert_allclose(per_class, expected, rtol=0, atol=1e-12)
    gate = nbcli_in_process(
        "evaluate", "-m", model, "-d", test_csv, "--fail-under", "average_precision=1", "-q"
    )
    assert gate.returncode == 3 and "average_precision" in gate.stderr


def test_tune_skips_a_combination_without_a_model(tmp_path):
    X, y = _counts(n=120)
    X = np.column_stack([X, X[:, 0]])  # a repeated column: QDA needs regularisation
    path = _write_csv(tmp_path / "dup.csv", X, y)
    report, mf = tune(
        MODELS["qda"](),
        DataRequest.of(str(path)),
        Search({"reg_param": [0.0, 0.2]}),
        FoldSettings(n_folds=3),
        ScoreSettings(bootstrap=0),
    )
    assert np.isnan(report.results[0].metrics["log_loss"].value)
    assert report.best["index"] == 1 and mf.model.reg_param == 0.2
    assert report.warnings and report.warnings[0].startswith("reg_param=0.0: no model")


def test_method_summary_names_delong_and_percentile():
    from nbcli.reports.bootstrap import Interval, method_summary, no_interval

    ivs = {
        "accuracy": Interval(0.9, 0.8, 0.95, "BCa"),
        "roc_auc": Interval(0.9, 0.85, 0.95, "DeLong"),
        "average_precision": Interval(0.9, 0.8, 0.95, "percentile"),
        "brier": no_interval(0.1),
    }
    assert method_summary(ivs) == "BCa (DeLong for: roc_auc; percentile for: average_precision)"
    assert method_summary({"roc_auc": ivs["roc_auc"]}) == "DeLong"


def test_large_test_sets_take_delong_intervals_equal_to_delong_module():
    from nbcli.reports.delong import roc_auc_delong
    from nbcli.reports.evaluation import build_evaluation

    rng = np.random.default_rng(2)
    y = rng.integers(0, 2, 3000)
    p1 = np.clip(0.5 + 0.2 * (y - 0.5) + rng.normal(0, 0.2, y.size), 0.01, 0.99)
    proba = np.column_stack([1 - p1, p1])
    report = build_evaluation([0, 1], y, proba, n_resamples=10_000)
    iv = report.metrics["roc_auc"]
    ref = roc_auc_delong(y, proba)
    assert iv.method == "DeLong" and (iv.lower, iv.upper) == (ref.lower, ref.upper)
    assert iv.value == pytest.approx(roc_auc_score(y, p1), abs=1e-12)
    assert report.metrics["average_precision"].method == "none"


def test_cv_with_a_fold_column_streams_the_file_twice(folded):
    path = folded[0]
    kept = cross_validate(
        MODELS["qda"](),
        DataRequest.of(str(path)),
        FoldSettings(fold_column="fold"),
        ScoreSettings(bootstrap=0),
    )
    streamed = cross_validate(
        MODELS["qda"](),
        DataRequest.of(str(path), chunk_size=7),
        FoldSettings(fold_column="fold", memory_budget=0),
        ScoreSettings(bootstrap=0),
    )
    assert kept.plan["passes"] == 1 and streamed.plan["passes"] == 2
    for a, b in zip(kept.folds, streamed.folds):
        assert a.fold == b.fold and a.n_samples == b.n_samples
        for key, value in a.metrics.items():
            assert b.metrics[key] == pytest.approx(value, abs=1e-12), key


def test_cv_streamed_with_classes_and_folds_arriving_late(tmp_path):
    X, y = _counts(n=90)
    order = np.argsort(y, kind="stable")  # classes one after the other
    fold = np.array([3, 1, 2] * 30)
    path = _write_csv(tmp_path / "sorted.csv", X[order], y[order], fold)
    kept = cross_validate(
        MODELS["gaussian"](),
        DataRequest.of(str(path)),
        FoldSettings(fold_column="fold"),
        ScoreSettings(bootstrap=0),
    )
    streamed = cross_validate(
        MODELS["gaussian"](),
        DataRequest.of(str(path), chunk_size=10),
        FoldSettings(fold_column="fold", memory_budget=0),
        ScoreSettings(bootstrap=0),
    )
    assert [f.fold for f in streamed.folds] == [1, 2, 3]
    for a, b in zip(kept.folds, streamed.folds):
        for key, value in a.metrics.items():
            assert b.metrics[key] == pytest.approx(value, abs=1e-12), key


@pytest.mark.parametrize("command", ["cv", "tune"])
def test_fold_model_warnings_are_warning_lines_naming_the_columns(tmp_path, command):
    from tests.conftest import nbcli

    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(2, 40))
    rows = "".join(f"{x},{y},{x + y},{'pq'[i % 2]}\n" for i, (x, y) in enumerate(zip(a, b)))
    (tmp_path / "sum.csv").write_text("alpha,beta,total,label\n" + rows, encoding="utf-8")
    extra = ["--shrinkage", "0,0.1"] if command == "tune" else []
    run = nbcli(command, "-m", "lda", "-d", tmp_path / "sum.csv", "--folds", "3", "-q", *extra)
    assert run.returncode == 0, run.stderr
    # One line for the three fold models, not a Python warning with a source path.
    (line,) = run.stderr_lines
    assert line.startswith("warning: ") and "folds 0, 1, 2: variables are collinear" in line
    assert "'alpha', 'beta', 'total'" in line
    assert ".py:" not in run.stderr and "x0" not in run.stderr


@pytest.mark.parametrize(
    "args, where",
    [
        (("-m", "gaussian", "--pca", "2,2"), "--pca"),
        (("-m", "multinomial", "--alpha", "0.1,1,0.10"), "--alpha"),
        (("-m", "gaussian", "--var-smoothing", "lin:1..1:3"), "--var-smoothing"),
    ],
)
def test_tune_refuses_a_grid_value_listed_twice(tmp_path, args, where):
    run = nbcli_in_process("tune", "-d", "sample_data/iris_train.csv", *args, "-q")
    assert run.returncode == 2, run.stderr
    assert run.stderr.startswith(f"error: {where}: the value ") and "listed twice" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1


def test_tune_refuses_a_config_grid_value_listed_twice(tmp_path):
    cfg = tmp_path / "grid.toml"
    cfg.write_text('model = "qda"\n[grid]\nreg_param = [0.1, 0.5, 0.1]\n')
    run = nbcli_in_process("tune", "-c", cfg, "-d", "sample_data/iris_train.csv", "-q")
    assert run.returncode == 2
    assert "grid.toml: [grid] reg_param: the value 0.1 is listed twice" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1


def test_out_of_fold_rows_join_back_to_the_input_when_rows_are_left_out(tmp_path):
    # Row 3 has no label and row 6 a missing cell (dropped): the predictions
    # skip both, and their row numbers and the kept ID say which lines are whose.
    X, y = _counts(n=60)
    path = _write_csv(tmp_path / "d.csv", X, y)
    lines = path.read_text().splitlines()
    lines[0] = "id," + lines[0]
    lines[1:] = [f"r{i + 1}," + line for i, line in enumerate(lines[1:])]
    lines[3] = lines[3].rsplit(",", 1)[0] + ","
    cells = lines[6].split(",")
    cells[1] = ""
    lines[6] = ",".join(cells)
    path.write_text("\n".join(lines) + "\n")
    oof = tmp_path / "oof.csv"
    run = nbcli_in_process(
        "cv", "-m", "gaussian", "-d", path, "-t", "label", "--drop", "id", "--missing", "drop",
        "--folds", "3", "--bootstrap", "0", "--oof-output", oof, "--keep", "id", "-q",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    import polars as pl

    frame = pl.read_csv(oof)
    assert frame.columns[:4] == ["row", "id", "label", "fold"]
    kept = [i for i in range(1, 61) if i not in (3, 6)]
    assert frame["row"].to_list() == kept
    assert frame["id"].to_list() == [f"r{i}" for i in kept]
    assert frame["label"].to_list() == [f"c{y[i - 1]}" for i in kept]
    # A kept column may not take a name of the file's own.
    clash = nbcli_in_process(
        "cv", "-m", "gaussian", "-d", path, "-t", "label", "--drop", "id", "--missing", "drop",
        "--folds", "3", "--oof-output", tmp_path / "o2.csv", "--keep", "label",
    )  # fmt: skip
    assert_one_error_line(clash, "--keep label", "a column 'label' of their own")
    alone = nbcli_in_process("cv", "-m", "gaussian", "-d", path, "--keep", "id")
    assert_one_error_line(alone, "--keep", "give --oof-output")


def test_nothing_to_search_names_what_a_grid_can_list_and_a_bad_word_is_named():
    # The list named what cannot be searched too (solver, priors,
    # store_covariance, missing); a word among numbers was said to need
    # other statistics, as 'auto' does, when it is no value at all.
    from nbcli.errors import NbcliError
    from nbcli.models import MODELS
    from nbcli.workflows.tune import check_grid

    for name, cls in MODELS.items():
        with pytest.raises(NbcliError, match="nothing to search") as refused:
            check_grid(cls(), {})
        listed = str(refused.value).rsplit("(", 1)[1].rstrip(")").split(", ")
        searched = [s for s in cls.hyperparameters if s.searched]
        assert listed == [s.name for s in searched], name
        assert all(s.kind == "float" or s.searchable for s in searched), name
        numbers = [s for s in searched if s.kind == "float" and s.high is not None]
        for spec in numbers[:1]:
            with pytest.raises(NbcliError, match=f"{spec.name} must be") as bad:
                check_grid(cls(), {spec.name: [spec.high, "x"]})
            assert "different statistics" not in str(bad.value)
