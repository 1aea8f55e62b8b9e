"""A missing cell under ``--pca`` and ``--standardize`` with ``--missing ignore``
(the default of ``gaussian``): the projection mixes every column, so the row
is dropped and counted at fit, left empty by ``predict``, and refused in one
line naming it and ``--missing drop`` by ``evaluate`` and ``calibrate``, as
for a model fitted with ``--missing drop``."""

from __future__ import annotations

import csv
import json

import numpy as np
import pytest

from tests.conftest import assert_one_error_line, nbcli_in_process

#: The file row (1-based, after the header) whose cell is blanked.
BLANK_ROW = 5


@pytest.fixture(scope="module")
def wine_with_a_hole(tmp_path_factory):
    """124 rows of scikit-learn's wine data, one numeric cell blank; the
    complete rows and their labels, as the expected figures need them."""
    from sklearn.datasets import load_wine

    data = load_wine()
    rng = np.random.default_rng(0)
    take = np.sort(rng.choice(len(data.target), size=124, replace=False))
    X = data.data[take]
    y = np.array([f"c{t}" for t in data.target[take]])
    path = tmp_path_factory.mktemp("wine") / "wine_na.csv"
    names = [n.replace("/", "_") for n in data.feature_names]
    with open(path, "w", newline="") as f:
        out = csv.writer(f)
        out.writerow([*names, "label"])
        for i, (row, label) in enumerate(zip(X, y)):
            cells = [repr(float(v)) for v in row]
            if i == BLANK_ROW - 1:
                cells[2] = ""
            out.writerow([*cells, label])
    complete = np.ones(len(y), dtype=bool)
    complete[BLANK_ROW - 1] = False
    return path, X[complete], y[complete]


PROJECTIONS = [["--pca", "3"], ["--standardize"], ["--standardize", "--pca", "4"]]


def _fit(tmp_path, path, flags, *extra):
    model, report = tmp_path / "m.npz", tmp_path / "fit.json"
    run = nbcli_in_process("fit", "-m", "gaussian", "-d", path, "--target", "label", *flags,
                           *extra, "-o", model, "--json", report, "-q")  # fmt: skip
    assert run.returncode == 0, run.stderr
    return model, json.loads(report.read_text()), run


def _expected(X, y, flags):
    """The model fitted in Python on the complete rows alone."""
    from nbcli.models import registry

    params = {"standardize": "--standardize" in flags}
    if "--pca" in flags:
        params["pca"] = int(flags[flags.index("--pca") + 1])
    return registry.get("gaussian")(**params).fit(X, y)


@pytest.mark.parametrize("flags", PROJECTIONS)
def test_fit_counts_only_the_rows_it_uses(tmp_path, wine_with_a_hole, flags):
    path, X, y = wine_with_a_hole
    model, report, run = _fit(tmp_path, path, flags)
    labels, counts = np.unique(y, return_counts=True)
    assert report["n_samples"] == len(y) == 123
    assert [c["count"] for c in report["classes"]] == counts.tolist()
    assert sum(c["count"] for c in report["classes"]) == report["n_samples"]
    expected = _expected(X, y, flags)
    # Over the 123 rows fitted, not 124 with the dropped row counted as wrong.
    assert report["training_accuracy"] == pytest.approx(np.mean(expected.predict(X) == y))
    inspected = tmp_path / "inspect.json"
    assert nbcli_in_process("inspect", model, "--json", inspected, "-q").returncode == 0
    assert json.loads(inspected.read_text())["training"]["n_samples"] == 123


def test_the_fit_summary_says_the_row_is_dropped(tmp_path, wine_with_a_hole):
    path, _, _ = wine_with_a_hole
    run = nbcli_in_process("fit", "-m", "gaussian", "-d", path, "--target", "label",
                           "--pca", "3", "-o", tmp_path / "m.npz")  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "missing cells: ignore (acts as drop under the projection" in run.stdout + run.stderr
    assert "1 row dropped; 123 rows used" in run.stdout + run.stderr


@pytest.mark.parametrize("flags", PROJECTIONS)
def test_predict_leaves_the_row_empty_and_scores_the_others(tmp_path, wine_with_a_hole, flags):
    path, X, y = wine_with_a_hole
    model, _, _ = _fit(tmp_path, path, flags)
    out = tmp_path / "p.csv"
    run = nbcli_in_process("predict", "-m", model, "-d", path, "-o", out)
    assert run.returncode == 0, run.stderr
    assert "far from the training data" not in run.stderr
    assert "124 rows: 123 scored, 1 left empty" in run.stderr
    assert "--missing ignore, which acts as drop under --pca and --standardize" in run.stderr
    # One column: an empty prediction is an empty line (which csv readers skip).
    header, *predicted = out.read_text().splitlines()
    assert header == "prediction" and len(predicted) == 124
    assert predicted[BLANK_ROW - 1] == ""
    rest = predicted[: BLANK_ROW - 1] + predicted[BLANK_ROW:]
    assert rest == _expected(X, y, flags).predict(X).tolist()


@pytest.mark.parametrize("command", ["evaluate", "calibrate"])
@pytest.mark.parametrize("given", [[], ["--missing", "ignore"]])
def test_evaluate_and_calibrate_refuse_the_row_naming_the_option(
    tmp_path, wine_with_a_hole, command, given
):
    path, _, _ = wine_with_a_hole
    model, _, _ = _fit(tmp_path, path, ["--pca", "3"])
    extra = ["-o", tmp_path / "c.npz", "--allow-training-data"] if command == "calibrate" else []
    run = nbcli_in_process(command, "-m", model, "-d", path, "--target", "label", *given, *extra)
    line = assert_one_error_line(
        run, f"row {BLANK_ROW} has a missing value", "acts as drop", "--missing drop"
    )
    assert "far from the training data" not in line
    # Ignoring the cell is what the model cannot do: it is not offered.
    assert "or --missing ignore" not in line


def test_evaluate_with_missing_drop_scores_the_other_rows(tmp_path, wine_with_a_hole):
    path, X, y = wine_with_a_hole
    model, _, _ = _fit(tmp_path, path, ["--pca", "3"])
    report = tmp_path / "e.json"
    run = nbcli_in_process("evaluate", "-m", model, "-d", path, "--target", "label",
                           "--missing", "drop", "--json", report, "-q")  # fmt: skip
    assert run.returncode == 0, run.stderr
    figures = json.loads(report.read_text())
    assert figures["n_samples"] == 123
    expected = np.mean(_expected(X, y, ["--pca", "3"]).predict(X) == y)
    assert figures["metrics"]["accuracy"]["value"] == pytest.approx(expected)


def test_fit_on_parts_counts_as_one_file(tmp_path, wine_with_a_hole):
    path, _, y = wine_with_a_hole
    lines = open(path).read().splitlines(keepends=True)
    parts = tmp_path / "parts"
    parts.mkdir()
    (parts / "a.csv").write_text("".join(lines[:60]))
    (parts / "b.csv").write_text(lines[0] + "".join(lines[60:]))
    _, report, _ = _fit(tmp_path, parts, ["--pca", "3"])
    assert report["n_samples"] == len(y)
    _, counts = np.unique(y, return_counts=True)
    assert [c["count"] for c in report["classes"]] == counts.tolist()
