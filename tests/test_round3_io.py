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
