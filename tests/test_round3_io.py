"""Parquet index columns, quiet model loading, evaluate --missing/--unseen."""

import numpy as np

from tests.conftest import nbcli


def _collinear_csv(path, n=40, seed=0):
    """Three features, the third the sum of the first two (LDA drops a direction)."""
    rng = np.random.default_rng(seed)
    y = np.repeat(["a", "b"], n // 2)
    X = rng.normal(size=(n, 2)) + (y == "b")[:, None] * 2.0
    rows = [f"{a:.6f},{b:.6f},{a + b:.6f},{label}" for (a, b), label in zip(X, y, strict=True)]
    path.write_text("p,q,s,label\n" + "\n".join(rows) + "\n", encoding="utf-8")
    return path


def test_predict_quiet_on_collinear_lda_model_prints_nothing(tmp_path):
    data = _collinear_csv(tmp_path / "col.csv")
    model = tmp_path / "lda.npz"
    fit = nbcli("fit", "--model", "lda", "--data", data, "--target", "label", "--output", model)
    assert fit.returncode == 0, fit.stderr
    assert "collinear" in fit.stderr  # the fit reports it, with the feature names
    run = nbcli("predict", "-q", "--model", model, "--data", data, "--output", tmp_path / "p.csv")
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""
    shown = nbcli("inspect", model)
    assert shown.returncode == 0, shown.stderr
    assert "CollinearWarning" not in shown.stderr and "_rebuild.py" not in shown.stderr


def test_pandas_index_column_of_a_parquet_file_is_left_out_with_a_warning(tmp_path):
    import pandas as pd

    from nbcli.io.modelfile import load_model

    rng = np.random.default_rng(1)
    frame = pd.DataFrame(
        {
            "u": rng.normal(size=60),
            "v": rng.normal(size=60),
            "label": np.repeat(["a", "b", "c"], 20),
        }
    )
    sampled = frame.sample(frac=0.5, random_state=0).sort_values("label")
    path = tmp_path / "sampled.parquet"
    sampled.to_parquet(path)  # the default index: a __index_level_0__ column
    import pyarrow.parquet as pq

    assert "__index_level_0__" in pq.read_schema(path).names
    model = tmp_path / "m.npz"
    run = nbcli("fit", "--model", "gaussian", "--data", path, "--output", model)
    assert run.returncode == 0, run.stderr
    assert "column '__index_level_0__' looks like a row index" in run.stderr
    assert load_model(model).feature_names == ["u", "v"]
    # A named index is left out too; naming it in --features uses it.
    named = tmp_path / "named.parquet"
    sampled.rename_axis("row").to_parquet(named)
    run = nbcli("fit", "--model", "gaussian", "--data", named, "--output", model)
    assert run.returncode == 0, run.stderr
    assert "column 'row' looks like a row index" in run.stderr
    assert load_model(model).feature_names == ["u", "v"]
    run = nbcli(
        "fit", "--model", "gaussian", "--data", named, "--features", "row,u", "--output", model
    )
    assert run.returncode == 0, run.stderr
    assert load_model(model).feature_names == ["row", "u"]


def _holed_files(tmp_path):
    rng = np.random.default_rng(0)
    y = np.repeat(["a", "b"], 30)
    X = rng.normal(size=(60, 2)) + (y == "b")[:, None] * 2.0
    lines = ["u,v,label"] + [f"{a:.4f},{b:.4f},{c}" for (a, b), c in zip(X, y, strict=True)]
    train = tmp_path / "train.csv"
    train.write_text("\n".join(lines) + "\n", encoding="utf-8")
    full = list(lines)
    lines[3] = ",1.0,a"
    lines[40] = "0.5,,b"
    test = tmp_path / "test.csv"
    test.write_text("\n".join(lines) + "\n", encoding="utf-8")
    kept = tmp_path / "kept.csv"
    kept.write_text("\n".join(r for i, r in enumerate(full) if i not in (3, 40)) + "\n")
    return train, test, kept


def _report(run):
    import json

    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_evaluate_and_compare_take_missing_drop_and_count_the_rows_left_out(tmp_path):
    from tests.conftest import assert_one_error_line, nbcli_many

    train, test, kept = _holed_files(tmp_path)
    lda, nb = tmp_path / "lda.npz", tmp_path / "nb.npz"
    fits = nbcli_many(
        [
            ("fit", "-q", "-m", "lda", "-d", train, "-o", lda),
            ("fit", "-q", "-m", "gaussian", "-d", train, "-o", nb),
        ]
    )
    assert all(f.returncode == 0 for f in fits), [f.stderr for f in fits]
    ev = ("evaluate", "--bootstrap", "0", "--json", "-", "-q", "-d")
    default, dropped, on_kept, ignored, nb_drop, compared, nb_hint = nbcli_many(
        [
            (*ev, test, "-m", lda),
            (*ev, test, "-m", lda, "--missing", "drop"),
            (*ev, kept, "-m", lda),
            (*ev, test, "-m", nb, "--missing", "ignore"),
            (*ev, test, "-m", nb, "--missing", "drop"),
            ("compare", "-m", nb, "-m", lda, "-d", test, "--bootstrap", "0", "--json", "-")
            + ("-q", "--missing", "drop"),
            ("calibrate", "-m", lda, "-d", test, "-o", tmp_path / "c.npz"),
        ]
    )
    # By default a row LDA would drop is refused, naming the options evaluate has.
    line = assert_one_error_line(default, "row 3 has a missing value", "--missing drop")
    assert "--missing ignore" not in line  # LDA cannot leave a cell out
    # The model's policy and the command's option are told apart.
    assert "(its missing-value policy, drop, leaves such a row without a score)" in line
    assert "unless told to leave such rows out" in line
    # Under drop the rows are left out, counted, and the figures are the kept rows'.
    report = _report(dropped)
    assert report["n_samples"] == 58
    assert any("2 rows with a missing value left out" in w for w in report["warnings"])
    assert report["metrics"] == _report(on_kept)["metrics"]
    assert not any("left out" in w for w in _report(on_kept)["warnings"])
    # Naive Bayes under ignore scores every row.
    report = _report(ignored)
    assert report["n_samples"] == 60 and report["warnings"] == []
    assert _report(nb_drop)["n_samples"] == 58
    comparison = _report(compared)
    assert any("2 rows with a missing value left out" in w for w in comparison["warnings"])
    # calibrate takes --missing as evaluate does, and its hint names it.
    line = assert_one_error_line(nb_hint, "row 3 has a missing value")
    assert "pass --missing drop to leave such rows out" in line


def test_evaluate_hint_names_missing_ignore_for_a_naive_bayes_model_that_drops(tmp_path):
    from tests.conftest import assert_one_error_line

    train, test, _ = _holed_files(tmp_path)
    model = tmp_path / "nb.npz"
    fit = nbcli("fit", "-q", "-m", "gaussian", "--missing", "drop", "-d", train, "-o", model)
    assert fit.returncode == 0, fit.stderr
    run = nbcli("evaluate", "-m", model, "-d", test, "--bootstrap", "0")
    assert_one_error_line(
        run, "pass --missing drop to leave such rows out", "--missing ignore to score them"
    )


def test_evaluate_refuses_missing_drop_on_parts_in_one_line(tmp_path):
    from tests.conftest import assert_one_error_line

    train, test, _ = _holed_files(tmp_path)
    model = tmp_path / "lda.npz"
    assert nbcli("fit", "-q", "-m", "lda", "-d", train, "-o", model).returncode == 0
    parts = tmp_path / "parts"
    parts.mkdir()
    lines = test.read_text().splitlines()
    (parts / "a.csv").write_text("\n".join(lines[:30]) + "\n")
    (parts / "b.csv").write_text("\n".join([lines[0], *lines[30:]]) + "\n")
    run = nbcli("evaluate", "-m", model, "-d", parts, "--missing", "drop", "--bootstrap", "0")
    assert_one_error_line(run, "--missing drop needs the rows in one file")
