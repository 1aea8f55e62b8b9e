"""``nbcli cv`` and ``nbcli tune`` on real tables: options fit has, exact grids, safe outputs."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn import naive_bayes as nb

from nbcli.io.request import DataRequest
from nbcli.models import MODELS
from nbcli.workflows.settings import FoldSettings
from nbcli.workflows.tune import parse_values
from tests.conftest import assert_one_error_line, nbcli_in_process
from tests.declared import grid_number

DIGITS = "sample_data/digits_train.csv"
IRIS = "sample_data/iris_train.csv"


def test_log_range_decades_are_exact():
    values = parse_values("log:1e-9..1:10", "--var-smoothing")
    assert values == [float(f"1e{k}") for k in range(-9, 1)]
    assert parse_values("log:1e-5..1e-3:5", "x")[0] == 1e-05
    assert parse_values("log:1e-5..1e-3:5", "x")[2] == 1e-04
    assert parse_values("log:2..8:3", "x") == pytest.approx([2.0, 4.0, 8.0], rel=1e-15)


def test_tune_shows_shortest_values():
    run = nbcli_in_process(
        "tune",
        "-m",
        "gaussian",
        "-d",
        IRIS,
        "--var-smoothing",
        "log:1e-9..1e-3:7",
        "--folds",
        "3",
        "--bootstrap",
        "0",
    )
    assert run.returncode == 0, run.stderr
    assert "9.99999" not in run.stdout + run.stderr
    assert "Best: var_smoothing=" in run.stdout


def test_tune_takes_binarize():
    run = nbcli_in_process(
        "tune",
        "-m",
        "bernoulli",
        "-d",
        DIGITS,
        "--alpha",
        "0.5,1",
        "--binarize",
        "8",
        "--folds",
        "3",
        "--bootstrap",
        "0",
        "--json",
        "-",
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["best"]["params"] == {"alpha": report["best"]["params"]["alpha"]}
    assert json.dumps(report).count('"binarize": 8.0') >= 1


def test_cv_oof_output_does_not_replace_a_model(tmp_path):
    model = tmp_path / "m.nbm"
    assert nbcli_in_process("fit", "-m", "gaussian", "-d", IRIS, "-o", model).returncode == 0
    before = model.read_bytes()
    args = ("cv", "-m", "gaussian", "-d", IRIS, "--folds", "3", "--bootstrap", "0", "-q")
    run = nbcli_in_process(*args, "--oof-output", model)
    assert run.returncode == 2 and "--force" in run.stderr
    assert model.read_bytes() == before
    run = nbcli_in_process(*args, "--oof-output", model, "--force")
    assert run.returncode == 0, run.stderr
    assert model.read_bytes() != before


def test_cv_refuses_json_and_oof_both_on_stdout():
    run = nbcli_in_process(
        "cv",
        "-m",
        "gaussian",
        "-d",
        IRIS,
        "--folds",
        "3",
        "--bootstrap",
        "0",
        "--json",
        "-",
        "--oof-output",
        "-",
    )
    assert run.returncode == 2
    assert "both go to stdout" in run.stderr
    assert run.stdout == ""


def test_fold_models_know_every_category_of_the_data(tmp_path):
    from nbcli.models import MODELS
    from nbcli.workflows.folds import collect_fold_statistics
    from tests.test_cv_tune import _write_csv

    rng = np.random.default_rng(3)
    n = 60
    y = np.arange(n) % 2
    X = rng.integers(0, 3, size=(n, 3)).astype(float)
    X[7, 0] = 5.0  # a category of one row only: out of fold, its fold model never saw it
    X[20, 2] = 4.0
    path = _write_csv(tmp_path / "cats.csv", X, y)
    fs = collect_fold_statistics(
        MODELS["categorical"](alpha=0.5),
        DataRequest.of(str(path), target="label"),
        FoldSettings(n_folds=3),
    )
    (log_proba,) = fs.out_of_fold([{}])
    widths = X.max(axis=0).astype(int) + 1
    np.testing.assert_array_equal(fs.category_widths(), widths)
    for f in range(3):
        test = fs.folds[0] == f
        ref = nb.CategoricalNB(alpha=0.5, min_categories=widths).fit(X[~test], y[~test])
        np.testing.assert_allclose(
            log_proba[test], ref.predict_log_proba(X[test]), rtol=0, atol=1e-10
        )


def test_cv_categorical_on_digits_has_no_unseen_category():
    run = nbcli_in_process(
        "cv", "-m", "categorical", "-d", DIGITS, "--folds", "3", "--bootstrap", "0", "--json", "-"
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["metrics"]["accuracy"]["value"] > 0.5


PENGUINS = "sample_data/penguins_train.csv"


@pytest.mark.parametrize(
    "args",
    [
        ("-m", "gaussian", "--drop", "year,island,sex", "--missing", "ignore"),
        ("-m", "lda", "--drop", "year,island,sex"),
        (
            "-m",
            "mixed",
        ),
        ("-m", "mixed", "--column", "year=categorical", "--na-values", "NA"),
    ],
)
def test_cv_and_tune_read_tables_as_fit_does(args):
    common = ("-d", PENGUINS, "-t", "species", "--folds", "3", "--bootstrap", "0", "--json", "-")
    run = nbcli_in_process("cv", *args, *common)
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    # Rows with a missing label are in no fold; with drop, neither are rows with a hole.
    assert 220 < report["n_samples"] <= 240
    assert report["metrics"]["accuracy"]["value"] > 0.8
    spec = grid_number(MODELS[args[1]])
    grid = (spec.flag, f"{spec.default or 0.0!r},0.1")
    run = nbcli_in_process("tune", *args, *grid, *common)
    assert run.returncode == 0, run.stderr


def test_cv_mixed_on_a_numeric_table():
    run = nbcli_in_process(
        "cv",
        "-m",
        "mixed",
        "-d",
        "sample_data/wine_train.csv",
        "--folds",
        "3",
        "--bootstrap",
        "0",
        "--json",
        "-",
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["metrics"]["accuracy"]["value"] > 0.8


def test_fold_statistics_of_a_table_match_fit_on_the_other_folds(tmp_path):
    """Text columns become the codes fit gives them; fold models match fits on the other folds."""
    from nbcli.models import MODELS
    from nbcli.workflows.folds import collect_fold_statistics
    from nbcli.workflows.train import train

    rng = np.random.default_rng(5)
    n = 90
    y = np.arange(n) % 3
    colour = np.array(["red", "green", "blue", "grey"])[(rng.integers(0, 3, n) + y) % 4]
    size = rng.normal(y, 1.0)
    lines = ["colour,size,label"] + [
        f"{c},{'' if i % 11 == 0 else repr(float(s))},k{t}"
        for i, (c, s, t) in enumerate(zip(colour, size, y))
    ]
    path = tmp_path / "t.csv"
    path.write_text("\n".join(lines) + "\n")
    fs = collect_fold_statistics(
        MODELS["mixed"](),
        DataRequest.of(str(path), target="label", missing="ignore"),
        FoldSettings(n_folds=3),
    )
    assert fs.codes.size == n
    whole = train(MODELS["mixed"](), DataRequest.of(str(path), target="label", missing="ignore"))
    fitted = whole.model_file.model
    X = np.vstack([X for _, X in fs.rows()])
    assert np.isnan(X[:, 1]).sum() == len(range(0, n, 11))
    # The model of all rows is the one fit makes: the same coding and statistics.
    np.testing.assert_allclose(
        fs.model({}).predict_log_proba(X), fitted.predict_log_proba(X), rtol=0, atol=1e-12
    )


def test_cv_skips_and_reports_rows_without_a_label(tmp_path):
    lines = ["a,b,label"] + [
        f"{i % 5},{(i * 7) % 3},{'' if i == 4 else f'k{i % 2}'}" for i in range(40)
    ]
    path = tmp_path / "holes.csv"
    path.write_text("\n".join(lines) + "\n")
    args = ("-d", path, "-t", "label", "--folds", "3", "--bootstrap", "0", "--json", "-")
    for command, extra in (("cv", ()), ("tune", ("--alpha", "1,2"))):
        run = nbcli_in_process(command, "-m", "categorical", *extra, *args)
        assert run.returncode == 0, run.stderr
        report = json.loads(run.stdout)
        assert report["n_samples"] == 39
        assert any("skipped 1 row without a label" in w for w in report["warnings"])


def test_a_category_only_one_fold_holds_is_named_in_a_warning(tmp_path):
    rows = ["colour,x,label"]
    for i in range(30):
        rows.append(f"{['red', 'blue'][i % 2]},{i % 5},{'ab'[i % 2]}")
    rows.append("green,1,a")  # the only green row: only its fold has it
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
    run = nbcli_in_process(
        "cv",
        "-m",
        "categorical",
        "-d",
        tmp_path / "t.csv",
        "--folds",
        "3",
        "--bootstrap",
        "0",
        "--json",
        "-",
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    found = [w for w in report["warnings"] if "holds categories no other fold has" in w]
    assert len(found) == 1 and "(colour 'green')" in found[0], report["warnings"]
    assert "fit on the other folds then predict would refuse them" in found[0]


def test_a_code_no_row_holds_is_no_category_of_one_fold(tmp_path):
    # Codes as given: 1, 2, 3 and one 9 make 0 and 4..8 categories too, with
    # no row in any fold; only 9, held by one fold's row alone, is named.
    rows = ["c,label", *(f"{i % 3 + 1},{i % 2}" for i in range(30)), "9,1"]
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
    args = ("-d", tmp_path / "t.csv", "--folds", "3", "--bootstrap", "0", "--json", "-")
    run = nbcli_in_process("cv", "-m", "categorical", *args)
    assert run.returncode == 0, run.stderr
    found = [w for w in json.loads(run.stdout)["warnings"] if "no other fold has" in w]
    assert len(found) == 1 and "(c 9)" in found[0], found
    # Without the 9 no fold holds a category alone: no warning at all.
    (tmp_path / "t.csv").write_text("\n".join(rows[:-1]) + "\n")
    run = nbcli_in_process("cv", "-m", "categorical", *args)
    assert run.returncode == 0, run.stderr
    assert not [w for w in json.loads(run.stdout)["warnings"] if "no other fold has" in w]


def test_tune_warns_when_the_best_value_is_at_the_edge_of_the_grid():
    from nbcli.workflows.tune import edge_warnings

    grid = {"var_smoothing": [1e-9, 1e-5, 1e-1], "fit_prior": [True, False]}
    (warning,) = edge_warnings(grid, {"var_smoothing": 1e-1, "fit_prior": True})
    assert "the best var_smoothing, 0.1, is the largest value searched" in warning
    assert "smallest" in edge_warnings(grid, {"var_smoothing": 1e-9})[0]
    assert edge_warnings(grid, {"var_smoothing": 1e-5}) == []
    assert edge_warnings({"alpha": [0.5, 1.0]}, {"alpha": 1.0}) == []  # two values: no edge


def test_tune_does_not_ask_to_search_beyond_a_declared_bound(tmp_path, sample_dir):
    from nbcli.models.registry import model_classes
    from nbcli.workflows.tune import edge_warnings

    # A hyperparameter declared with a lower bound, searched from that bound.
    cls, spec = next(
        (c, s)
        for c in model_classes().values()
        for s in c.hyperparameters
        if s.kind == "float" and s.low is not None and not s.low_open and s.flag
    )
    grid = {spec.name: [spec.low, spec.low + 0.25, spec.low + 0.5]}
    assert edge_warnings(grid, {spec.name: spec.low}, cls.hyperparameters) == []
    (warning,) = edge_warnings(grid, {spec.name: spec.low + 0.5}, cls.hyperparameters)
    assert "largest value searched" in warning
    # Through the command: QDA's reg_param is at least 0, so a best 0 is no edge.
    run = nbcli_in_process(
        "tune",
        "-m",
        "qda",
        "-d",
        sample_dir / "iris_train.csv",
        "--reg-param",
        "lin:0..0.5:3",
        "--bootstrap",
        "0",
        "--json",
        "-",
        "-q",
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["best"]["params"] == {"reg_param": 0.0}
    assert not [w for w in report["warnings"] if "value searched" in w], report


def test_fold_and_group_columns_that_are_not_there_are_named_by_their_option():
    run = nbcli_in_process(
        "cv", "-m", "gaussian", "-d", IRIS, "--group-column", "nosuch", "--bootstrap", "0"
    )
    assert run.returncode == 2
    assert "has no column 'nosuch' for --group-column" in run.stderr
    run = nbcli_in_process(
        "cv", "-m", "gaussian", "-d", IRIS, "--fold-column", "nosuch", "--bootstrap", "0"
    )
    assert "has no column 'nosuch' for --fold-column" in run.stderr


def test_a_class_with_fewer_rows_than_folds_is_warned_of(tmp_path):
    rows = ["x,label", *(f"{i % 9 + i / 10},{'a' if i < 24 else 'b'}" for i in range(30))]
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
    for folds, warned in ((10, True), (6, False)):
        args = ("-d", tmp_path / "t.csv", "--folds", str(folds), "--bootstrap", "0", "--json", "-")
        run = nbcli_in_process("cv", "-m", "gaussian", *args)
        assert run.returncode == 0, run.stderr
        found = [w for w in json.loads(run.stdout)["warnings"] if "fewer rows than" in w]
        if warned:
            assert (
                len(found) == 1
                and "class 'b' (6 rows) has fewer rows than the 10 folds" in found[0]
            )
        else:
            assert found == []


@pytest.mark.parametrize("option", ["--fold-column", "--group-column"])
def test_a_fold_column_named_like_the_target_is_not_replaced_by_a_guessed_target(tmp_path, option):
    # Without --target the column named 'target' would be the target; given
    # as the fold column, another (a measurement) would silently be guessed.
    rows = ["x,z,target", *(f"{i / 7:.3f},{i % 5 + i / 10},{i % 2}" for i in range(40))]
    (tmp_path / "t.csv").write_text("\n".join(rows) + "\n")
    run = nbcli_in_process("cv", "-m", "gaussian", "-d", tmp_path / "t.csv", option, "target")
    assert_one_error_line(
        run, f"column 'target', named like a target, is given for {option}", "give --target"
    )
