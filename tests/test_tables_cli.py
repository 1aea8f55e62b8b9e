"""Tables as they come, from the command line: column types, missing cells,
unseen categories, index columns and target checks (penguins as shipped)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbcli.errors import NbcliError
from nbcli.io.data import iter_dataset, read_dataset
from nbcli.io.request import DataRequest
from nbcli.models import registry
from tests.conftest import SAMPLE, assert_one_error_line, nbcli_in_process
from tests.declared import model_types_where, takes_column_types

FEATURES = ["island", "bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g", "sex"]
GAUSSIAN = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]
CATEGORICAL = ["island", "sex"]


def penguins() -> pd.DataFrame:
    """Palmer penguins as shipped (text columns, missing cells), minus ``year``."""
    shipped = SAMPLE / "penguins.csv"
    if shipped.exists():
        frame = pd.read_csv(shipped)
    else:
        palmerpenguins = pytest.importorskip("palmerpenguins")
        frame = palmerpenguins.load_penguins()
    return frame.drop(columns="year")


@pytest.fixture(scope="module")
def split(tmp_path_factory):
    """Train and test CSVs: every third row is a test row (rows 3 and 9, with
    missing cells, among them)."""
    d = tmp_path_factory.mktemp("penguins")
    frame = penguins()
    test = frame.index % 3 == 0
    frame[~test].to_csv(d / "train.csv", index=False)
    frame[test].to_csv(d / "test.csv", index=False)
    return d, frame[~test].reset_index(drop=True), frame[test].reset_index(drop=True)


@pytest.fixture(scope="module")
def mixed_model(split):
    d, _, _ = split
    run = nbcli_in_process(
        "fit", "-m", "mixed", "-d", d / "train.csv", "--target", "species", "-o", d / "m.npz"
    )
    assert run.returncode == 0, run.stderr
    return d / "m.npz", run


def mixed_log_posterior(train: pd.DataFrame, X: pd.DataFrame, alpha=1.0, var_smoothing=1e-9):
    """log P(c | x) of the mixed model written out: the log prior plus, over
    the observed cells, log N(x; mean, var + eps_j) of the Gaussian columns,
    eps_j = var_smoothing * the column's own variance (the default scale), and
    log (N_cjv + alpha) / (N_cj + alpha K_j) of the categorical ones."""
    classes = sorted(train["species"].unique())
    out = np.zeros((len(X), len(classes)))
    for k, c in enumerate(classes):
        rows = train[train["species"] == c]
        score = np.full(len(X), np.log(len(rows) / len(train)))
        for col in GAUSSIAN:
            eps = var_smoothing * train[col].var(ddof=0)
            mean, var = rows[col].mean(), rows[col].var(ddof=0) + eps
            term = -0.5 * (np.log(2 * np.pi * var) + (X[col] - mean) ** 2 / var)
            score += np.where(X[col].isna(), 0.0, term)
        for col in CATEGORICAL:
            values = train[col].dropna().unique()
            observed = rows[col].notna().sum()
            probs = {
                v: (np.sum(rows[col] == v) + alpha) / (observed + alpha * len(values))
                for v in values
            }
            logs = {v: np.log(p) for v, p in probs.items()}
            term = X[col].map(lambda v, logs=logs: logs.get(v, 0.0))
            score += np.where(X[col].isna(), 0.0, term.fillna(0.0))
        out[:, k] = score
    out -= np.logaddexp.reduce(out, axis=1, keepdims=True)
    return classes, out


def test_mixed_fit_prints_the_column_types_and_the_missing_cells(mixed_model, split):
    _, run = mixed_model
    _, train, _ = split
    assert (
        "column types: island=categorical (3 categories), bill_length_mm=gaussian, "
        "bill_depth_mm=gaussian, flipper_length_mm=gaussian, body_mass_g=gaussian, "
        "sex=categorical (2 categories)"
    ) in run.stderr
    with_missing = int(train[FEATURES].isna().any(axis=1).sum())
    assert with_missing > 0
    assert (
        f"missing cells: ignore (left out of their feature's likelihood); {with_missing} rows "
        f"with one; {len(train)} rows used"
    ) in run.stderr


def test_mixed_predict_scores_every_row_with_the_formula(mixed_model, split, tmp_path):
    path, _ = mixed_model
    d, train, test = split
    assert test[FEATURES].isna().any(axis=1).sum() >= 2
    summary = tmp_path / "summary.json"
    run = nbcli_in_process(
        "predict",
        "-m",
        path,
        "-d",
        d / "test.csv",
        "--proba",
        "-o",
        tmp_path / "p.csv",
        "--json",
        summary,
    )
    assert run.returncode == 0, run.stderr
    assert f"{len(test)} rows: {len(test)} scored, 0 left empty" in run.stderr
    got = pd.read_csv(tmp_path / "p.csv")
    classes, logp = mixed_log_posterior(train, test)
    assert len(got) == len(test)
    np.testing.assert_allclose(
        got[[f"proba_{c}" for c in classes]].to_numpy(), np.exp(logp), rtol=0, atol=1e-8
    )
    assert got["prediction"].tolist() == [classes[k] for k in logp.argmax(axis=1)]
    report = json.loads(summary.read_text())
    assert report["schema"] == "nbcli.prediction"
    assert (report["rows"], report["scored"], report["empty"]) == (len(test), len(test), 0)
    assert report["missing"] == "ignore"
    # The header every report has: version, inputs with their SHA-256, settings.
    import hashlib

    from nbcli import __version__

    assert report["nbcli_version"] == __version__
    data_sha = hashlib.sha256(Path(report["inputs"]["data"]["path"]).read_bytes()).hexdigest()
    assert report["inputs"]["data"]["sha256"] == data_sha
    assert report["inputs"]["model"]["path"] == str(path)
    assert report["settings"]["proba"] is True


def test_an_unseen_category_is_an_error_or_left_out(mixed_model, split, tmp_path):
    path, _ = mixed_model
    d, train, test = split
    odd = test.head(4).copy()
    odd.loc[1, "island"] = "Atlantis"
    odd.to_csv(tmp_path / "odd.csv", index=False)
    run = nbcli_in_process("predict", "-m", path, "-d", tmp_path / "odd.csv")
    assert_one_error_line(run, "column 'island'", "'Atlantis'", "row 2", "--unseen ignore")
    run = nbcli_in_process(
        "predict",
        "-m",
        path,
        "-d",
        tmp_path / "odd.csv",
        "--proba",
        "--unseen",
        "ignore",
        "-o",
        tmp_path / "p.csv",
    )
    assert run.returncode == 0, run.stderr
    assert "4 rows: 4 scored, 0 left empty, 1 unseen category (island: 1)" in run.stderr
    classes, logp = mixed_log_posterior(train, odd)
    got = pd.read_csv(tmp_path / "p.csv")[[f"proba_{c}" for c in classes]].to_numpy()
    np.testing.assert_allclose(got, np.exp(logp), rtol=0, atol=1e-8)


def test_text_columns_under_a_numeric_model_are_listed_at_once(split):
    d, _, _ = split
    run = nbcli_in_process("fit", "-m", "gaussian", "-d", d / "train.csv", "-t", "species")
    line = assert_one_error_line(
        run, "columns 'island', 'sex'", "--drop island,sex", "--model mixed", "--text"
    )
    assert "gaussian model takes numbers only" in line


def test_true_false_are_text_under_numeric_models(tmp_path):
    data = tmp_path / "b.csv"
    data.write_text("a,flag,label\n1,True,x\n2,False,x\n3,True,y\n4,False,y\n", encoding="utf-8")
    run = nbcli_in_process("fit", "-m", "gaussian", "-d", data, "-o", tmp_path / "m.npz")
    assert_one_error_line(run, "column 'flag'", "True/False", "--model mixed")
    ds = read_dataset(data, infer=True, categorical=True)
    assert ds.X[:, 1].tolist() == [0, 1, 0, 1]


def test_index_columns_are_left_out_with_a_warning(tmp_path):
    frame = penguins().dropna()
    frame.insert(0, "rownames", np.arange(1, len(frame) + 1))
    frame.insert(1, "row", np.arange(len(frame)))
    frame.to_csv(tmp_path / "p.csv", index=True)  # pandas' own unnamed index column too
    run = nbcli_in_process(
        "fit",
        "-m",
        "gaussian",
        "-d",
        tmp_path / "p.csv",
        "-t",
        "species",
        "--drop",
        "island,sex",
        "-o",
        tmp_path / "m.npz",
    )
    assert run.returncode == 0, run.stderr
    assert "column 'rownames' looks like a row index (its name) and is left out; " in run.stderr
    assert "column 'row' looks like a row index (it counts the rows" in run.stderr
    assert "name it in --features to use it" in run.stderr
    assert "a column without a name in the header left out" in run.stderr
    assert "features           4: bill_length_mm" in run.stdout
    # Named in --features, an index column is a feature like any other.
    run = nbcli_in_process(
        "fit",
        "-m",
        "gaussian",
        "-d",
        tmp_path / "p.csv",
        "-t",
        "species",
        "--features",
        "row,bill_length_mm",
        "-o",
        tmp_path / "m2.npz",
    )
    assert run.returncode == 0 and "row index" not in run.stderr, run.stderr


def test_a_continuous_target_is_refused_unless_chosen(tmp_path):
    frame = penguins().dropna()[["bill_length_mm", "flipper_length_mm", "body_mass_g"]]
    frame.to_csv(tmp_path / "c.csv", index=False)
    run = nbcli_in_process("fit", "-m", "gaussian", "-d", tmp_path / "c.csv")
    assert_one_error_line(
        run, "column 'body_mass_g' (the last column) looks continuous", "pass --target NAME"
    )
    run = nbcli_in_process(
        "fit",
        "-m",
        "multinomial",
        "-d",
        tmp_path / "c.csv",
        "-t",
        "bill_length_mm",
        "-o",
        tmp_path / "m.npz",
        "-q",
    )
    assert run.returncode == 0
    assert "warning:" in run.stderr and "the target 'bill_length_mm' looks continuous" in run.stderr


@pytest.mark.parametrize(
    "policy, fit_says, predict_says",
    [
        ("ignore", "2 rows with one; 7 rows used", "7 rows: 7 scored, 0 left empty"),
        ("drop", "2 rows dropped; 5 rows used", "7 rows: 5 scored, 2 left empty"),
    ],
)
def test_missing_each_way_with_counts(tmp_path, policy, fit_says, predict_says):
    data = tmp_path / "m.csv"
    data.write_text(
        "a,b,label\n1,2,x\n2,,x\n3,1,x\n1.5,2.5,x\n5,6,y\nNA,7,y\n6,5,y\n", encoding="utf-8"
    )
    model = tmp_path / "m.npz"
    run = nbcli_in_process("fit", "-m", "gaussian", "-d", data, "--missing", policy, "-o", model)
    assert run.returncode == 0, run.stderr
    assert f"missing cells: {policy}" in run.stderr and fit_says in run.stderr
    out = tmp_path / "p.csv"
    run = nbcli_in_process("predict", "-m", model, "-d", data, "--proba", "-o", out)
    assert run.returncode == 0, run.stderr
    assert predict_says in run.stderr
    got = pd.read_csv(out)
    assert len(got) == 7
    assert got["prediction"].isna().tolist() == (
        [False] * 7 if policy == "ignore" else [False, True, False, False, False, True, False]
    )
    if policy == "drop":
        assert "warning:" in run.stderr
    # --missing error refuses the same file, at fit and (overriding) at predict.
    run = nbcli_in_process("fit", "-m", "gaussian", "-d", data, "--missing", "error")
    assert_one_error_line(run, "column 'b' has a missing value at row 2", "--missing ignore")
    run = nbcli_in_process("predict", "-m", model, "-d", data, "--missing", "error")
    assert_one_error_line(run, "column 'b' has a missing value at row 2")


def test_lda_drops_rows_with_missing_cells_by_default(tmp_path):
    data = tmp_path / "m.csv"
    data.write_text(
        "a,b,label\n1,2,x\n2,,x\n3,1,x\n1.5,2.5,x\n5,6,y\n6,7,y\n7,5,y\n", encoding="utf-8"
    )
    run = nbcli_in_process("fit", "-m", "lda", "-d", data, "-o", tmp_path / "m.npz")
    assert run.returncode == 0, run.stderr
    assert "missing cells: drop (their rows skipped); 1 row dropped; 6 rows used" in run.stderr
    run = nbcli_in_process("fit", "-m", "lda", "-d", data, "--missing", "ignore")
    assert_one_error_line(run, "--missing must be one of 'error', 'drop'; got 'ignore'")
    run = nbcli_in_process("predict", "-m", tmp_path / "m.npz", "-d", data, "--missing", "ignore")
    assert_one_error_line(run, "--missing ignore", "lda model cannot leave a missing cell out")


def test_a_row_without_a_label_is_skipped_in_fit_and_refused_in_evaluate(tmp_path):
    data = tmp_path / "l.csv"
    data.write_text("a,b,label\n1,2,x\n2,3,x\n3,1,\n5,6,y\n6,7,y\n", encoding="utf-8")
    model = tmp_path / "m.npz"
    run = nbcli_in_process("fit", "-m", "gaussian", "-d", data, "-o", model)
    assert run.returncode == 0, run.stderr
    assert "skipped 1 row without a label (the first at row 3)" in run.stderr
    assert "samples            4" in run.stdout
    run = nbcli_in_process("evaluate", "-m", model, "-d", data)
    assert_one_error_line(run, "'label'", "missing value at row 3")


def test_var_smoothing_scale_feature_is_invariant_to_rescaling_a_column(tmp_path):
    frame = penguins().dropna()[["species", *GAUSSIAN]]
    frame.to_csv(tmp_path / "a.csv", index=False)
    scaled = frame.assign(body_mass_g=frame["body_mass_g"] * 1e6)
    scaled.to_csv(tmp_path / "b.csv", index=False)
    probs = {}
    for scale in ("global", "feature"):
        for name in ("a", "b"):
            model = tmp_path / f"{name}-{scale}.npz"
            run = nbcli_in_process(
                "fit",
                "-m",
                "gaussian",
                "-d",
                tmp_path / f"{name}.csv",
                "-t",
                "species",
                "--var-smoothing",
                "0.1",
                "--var-smoothing-scale",
                scale,
                "-o",
                model,
                "-q",
            )
            assert run.returncode == 0, run.stderr
            run = nbcli_in_process(
                "predict", "-m", model, "-d", tmp_path / f"{name}.csv", "--proba"
            )
            probs[name, scale] = pd.read_csv(__import__("io").StringIO(run.stdout)).iloc[:, 1:]
    np.testing.assert_allclose(probs["a", "feature"], probs["b", "feature"], rtol=0, atol=1e-10)
    # Under the global scale the largest variance sets every epsilon: rescaling moves them.
    assert np.abs(probs["a", "global"].to_numpy() - probs["b", "global"].to_numpy()).max() > 1e-3


def test_a_text_column_like_names_or_dates_is_not_made_a_category(tmp_path):
    n = 40
    frame = pd.DataFrame(
        {
            "name": [f"passenger {i}" for i in range(n)],
            "when": [f"2024-01-{1 + i % 28:02d}" for i in range(n)],
            "port": ["S", "C", "Q", "S"] * (n // 4),
            "age": np.linspace(1, 80, n),
            "label": ["a", "b"] * (n // 2),
        }
    )
    frame.to_csv(tmp_path / "t.csv", index=False)
    run = nbcli_in_process("fit", "-m", "mixed", "-d", tmp_path / "t.csv", "-o", tmp_path / "m.npz")
    line = assert_one_error_line(
        run, "'name' has 40 distinct values in 40 rows", "'when' holds dates"
    )
    assert "--drop name" in line and "--text name" in line and "--column name=categorical" in line
    run = nbcli_in_process(
        "fit",
        "-m",
        "mixed",
        "-d",
        tmp_path / "t.csv",
        "--drop",
        "name",
        "--column",
        "when=categorical",
        "-o",
        tmp_path / "m.npz",
    )
    assert run.returncode == 0, run.stderr
    assert (
        "when=categorical (28 categories), port=categorical (3 categories), age=gaussian"
        in run.stderr
    )


def test_categories_are_in_first_seen_order_whatever_the_chunks(tmp_path):
    data = tmp_path / "c.csv"
    data.write_text("c,label\nb,x\n a,x\n,y\nc,x\nb,y\n", encoding="utf-8")
    for chunk_size in (1, 2, None):
        stream = iter_dataset(
            data, chunk_size=chunk_size, infer=True, categorical=True, missing="ignore"
        )
        X = np.concatenate([ds.X for ds in stream])
        np.testing.assert_array_equal(X[:, 0], [0, 1, np.nan, 2, 0])
        assert stream.categories == {"c": ["b", "a", "c"]}


def test_a_later_chunk_that_contradicts_the_plan_names_its_row(tmp_path):
    from nbcli.io.profile import SAMPLE_ROWS

    data = tmp_path / "late.csv"
    rows = [f"{i % 7},{'x' if i % 2 else 'y'}" for i in range(SAMPLE_ROWS + 5)]
    rows[SAMPLE_ROWS + 2] = "oops,x"
    data.write_text("a,label\n" + "\n".join(rows) + "\n", encoding="utf-8")
    with pytest.raises(NbcliError, match=rf"'oops' at row {SAMPLE_ROWS + 3} .*planned as numeric"):
        for _ in iter_dataset(data, chunk_size=4096, infer=True):
            pass


def test_na_values_are_configurable(tmp_path):
    data = tmp_path / "na.csv"
    data.write_text("a,b,label\n1,-999,x\n2,3,x\n3,1,y\n4,?,y\n", encoding="utf-8")
    ds = read_dataset(data, na_values=("-999", "?"), missing="ignore", infer=True)
    assert np.isnan(ds.X[[0, 3], 1]).all() and ds.X[1, 1] == 3
    with pytest.raises(NbcliError, match=r"column 'b' has the non-numeric value '\?' at row 4"):
        read_dataset(data, missing="ignore")


def test_a_chunked_mixed_fit_equals_one_fit(split):
    from nbcli.models import MixedNB
    from nbcli.workflows.train import train

    d, _, test = split
    whole = train(MixedNB(missing="ignore"), DataRequest.of(str(d / "train.csv"), target="species"))
    chunked = train(
        MixedNB(missing="ignore"),
        DataRequest.of(str(d / "train.csv"), target="species", chunk_size=50),
    )
    assert whole.model_file.columns == chunked.model_file.columns
    X = read_dataset(
        d / "test.csv",
        model_features=FEATURES,
        need_target=False,
        missing="ignore",
        kinds={c: "categorical" for c in CATEGORICAL},
        categories={
            c["name"]: c["categories"] for c in whole.model_file.columns if "categories" in c
        },
    ).X
    np.testing.assert_allclose(
        chunked.model_file.model.predict_proba(X),
        whole.model_file.model.predict_proba(X),
        rtol=0,
        atol=1e-12,
    )


def test_parquet_booleans_and_categoricals_are_categories(tmp_path):
    frame = penguins().dropna().iloc[::5].reset_index(drop=True)
    frame["island"] = frame["island"].astype("category")
    frame["heavy"] = frame["body_mass_g"] > 4000
    frame.to_parquet(tmp_path / "p.parquet")
    run = nbcli_in_process(
        "fit",
        "-m",
        "mixed",
        "-d",
        tmp_path / "p.parquet",
        "-t",
        "species",
        "-o",
        tmp_path / "m.npz",
    )
    assert run.returncode == 0, run.stderr
    assert "island=categorical" in run.stderr and "heavy=categorical (2 categories)" in run.stderr
    assert "sex=categorical (2 categories)" in run.stderr


def test_infinity_is_not_missing(tmp_path):
    data = tmp_path / "inf.csv"
    data.write_text("a,b,label\n1,2,x\n2,inf,x\n3,1,y\n4,,y\n", encoding="utf-8")
    for policy in ("ignore", "drop"):
        run = nbcli_in_process("fit", "-m", "gaussian", "-d", data, "--missing", policy)
        assert_one_error_line(run, "column 'b' has an infinite value at row 2")


def test_categorical_model_reads_text_columns_as_categories(split):
    d, _, _ = split
    run = nbcli_in_process(
        "fit",
        "-m",
        "categorical",
        "-d",
        d / "train.csv",
        "-t",
        "species",
        "--features",
        "island,sex",
        "-o",
        d / "cat.npz",
    )
    assert run.returncode == 0, run.stderr
    assert (
        "column types: island=categorical (3 categories), sex=categorical (2 categories)"
        in run.stderr
    )


def test_npz_missing_cells_follow_the_policy(tmp_path):
    X = np.arange(12, dtype=float).reshape(6, 2)
    X[2, 1] = np.nan
    np.savez(tmp_path / "d.npz", X=X, y=np.array([0, 0, 0, 1, 1, 1]))
    assert np.isnan(read_dataset(tmp_path / "d.npz", missing="ignore").X[2, 1])
    with pytest.raises(NbcliError, match="column 'x1' has a missing value at row 3"):
        read_dataset(tmp_path / "d.npz")
    run = nbcli_in_process(
        "fit", "-m", "gaussian", "-d", tmp_path / "d.npz", "-o", tmp_path / "m.npz"
    )
    assert run.returncode == 0 and "1 row with one; 6 rows used" in run.stderr, run.stderr


@settings(max_examples=25, deadline=None)
@given(
    cells=st.lists(
        st.sampled_from(["a", "b", " c", "NA", "", "dé", "a "]), min_size=1, max_size=30
    ),
    chunk_size=st.integers(1, 8),
)
def test_category_codes_do_not_depend_on_the_chunks(tmp_path_factory, cells, chunk_size):
    path = tmp_path_factory.mktemp("codes") / "c.csv"
    labels = ["x" if i % 2 else "y" for i in range(len(cells))]
    text = "c,label\n" + "".join(f"{c},{y}\n" for c, y in zip(cells, labels))
    path.write_text(text, encoding="utf-8")
    stream = iter_dataset(
        path, chunk_size=chunk_size, infer=True, categorical=True, missing="ignore"
    )
    try:
        codes = np.concatenate([ds.X[:, 0] for ds in stream])
    except NbcliError:
        # Nothing but missing cells is a numeric column of NaN; that is fine too.
        return
    seen = list(dict.fromkeys(c.strip() for c in cells if c.strip() not in ("", "NA")))
    expected = [seen.index(c.strip()) if c.strip() in seen else np.nan for c in cells]
    if stream.categories:
        assert stream.categories == {"c": seen}
        np.testing.assert_array_equal(codes, expected)


def test_years_are_category_labels_and_small_whole_numbers_are_codes(tmp_path):
    from sklearn.naive_bayes import CategoricalNB as SkCategoricalNB

    from nbcli.io.modelfile import load_model
    from nbcli.io.profile import ColumnProfile, looks_like_codes

    rng = np.random.default_rng(7)
    n = 300
    y = rng.choice(["a", "b"], size=n)
    year = np.where(y == "a", rng.choice([2007, 2008, 2009], n, p=[0.6, 0.3, 0.1]), 2009)
    year[rng.random(n) < 0.3] = 2008
    level = rng.integers(0, 5, n) + (y == "b")
    df = pd.DataFrame({"year": year, "level": level, "y": y})
    df.iloc[:240].to_csv(tmp_path / "train.csv", index=False)
    df.iloc[240:].to_csv(tmp_path / "test.csv", index=False)
    run = nbcli_in_process(
        "fit", "-m", "categorical", "-d", tmp_path / "train.csv", "-o", tmp_path / "m.npz", "-q"
    )
    assert run.returncode == 0, run.stderr
    mf = load_model(tmp_path / "m.npz")
    # year: three labels, not codes 0..2009; level: codes 0..5 as scikit-learn reads them.
    assert mf.model.n_categories_.tolist() == [3, 6]
    assert sorted(mf.columns[0]["categories"]) == ["2007", "2008", "2009"]
    assert "categories" not in mf.columns[1]
    out = tmp_path / "p.csv"
    run = nbcli_in_process(
        "predict", "-m", tmp_path / "m.npz", "-d", tmp_path / "test.csv", "--proba", "-o", out, "-q"
    )
    assert run.returncode == 0, run.stderr
    codes = {int(v): i for i, v in enumerate(mf.columns[0]["categories"])}
    train, test = df.iloc[:240], df.iloc[240:]
    encode = np.column_stack([train["year"].map(codes), train["level"]])
    sk = SkCategoricalNB(min_categories=[3, 6]).fit(encode, train["y"])
    expected = sk.predict_proba(np.column_stack([test["year"].map(codes), test["level"]]))
    got = pd.read_csv(out)[["proba_a", "proba_b"]].to_numpy()
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-12)
    profile = ColumnProfile("x", "integer", 10, 10, 3, low=0.0, high=60.0)
    assert looks_like_codes(profile)
    assert not looks_like_codes(ColumnProfile("x", "integer", 10, 10, 3, low=0.0, high=64.0))
    assert looks_like_codes(ColumnProfile("x", "integer", 99, 99, 90, low=0.0, high=120.0))
    assert not looks_like_codes(ColumnProfile("x", "integer", 10, 10, 3, low=-1.0, high=2.0))


def test_mixed_with_only_code_columns_equals_the_categorical_model(tmp_path):
    rng = np.random.default_rng(3)
    n = 300
    y = rng.choice(["s", "d"], n)
    sibsp = np.where(y == "s", rng.choice([0, 1, 2, 3, 4, 5, 8], n), rng.choice([0, 1, 2], n))
    pd.DataFrame({"sibsp": sibsp, "parch": rng.integers(0, 4, n), "y": y}).to_csv(
        tmp_path / "t.csv", index=False
    )
    for model, extra in (
        ("categorical", []),
        ("mixed", ["--column", "sibsp=categorical,parch=categorical"]),
    ):
        run = nbcli_in_process(
            "fit",
            "-m",
            model,
            "-d",
            tmp_path / "t.csv",
            *extra,
            "-o",
            tmp_path / f"{model}.npz",
            "-q",
        )
        assert run.returncode == 0, run.stderr
        run = nbcli_in_process(
            "predict",
            "-m",
            tmp_path / f"{model}.npz",
            "-d",
            tmp_path / "t.csv",
            "--proba",
            "-o",
            tmp_path / f"{model}.csv",
            "-q",
        )
        assert run.returncode == 0, run.stderr
    a = pd.read_csv(tmp_path / "categorical.csv")
    b = pd.read_csv(tmp_path / "mixed.csv")
    np.testing.assert_allclose(b[["proba_d", "proba_s"]], a[["proba_d", "proba_s"]], atol=1e-12)
    run = nbcli_in_process(
        "fit",
        "-m",
        "gaussian",
        "-d",
        tmp_path / "t.csv",
        "--column",
        "sibsp=gaussian",
        "-o",
        tmp_path / "g.npz",
    )
    assert run.returncode == 2 and "use --model mixed" in run.stderr


@pytest.mark.parametrize("model", model_types_where(lambda cls: "categorical" in cls.feature_kinds))
def test_unseen_codes_are_counted_and_named_as_flags(tmp_path, model):
    rng = np.random.default_rng(5)
    y = rng.choice(["s", "d"], 200)
    frame = pd.DataFrame(
        {"sibsp": rng.integers(0, 4, 200), "parch": rng.integers(0, 3, 200), "y": y}
    )
    frame.to_csv(tmp_path / "t.csv", index=False)
    frame.loc[[0, 7], "sibsp"] = 6  # codes 0..3 were seen
    frame.loc[3, "parch"] = 5
    frame.to_csv(tmp_path / "new.csv", index=False)
    told = takes_column_types(registry.model_classes()[model])
    extra = ["--column", "sibsp=categorical,parch=categorical"] if told else []
    run = nbcli_in_process(
        "fit", "-m", model, "-d", tmp_path / "t.csv", *extra, "-o", tmp_path / "m.npz", "-q"
    )
    assert run.returncode == 0, run.stderr
    run = nbcli_in_process(
        "predict",
        "-m",
        tmp_path / "m.npz",
        "-d",
        tmp_path / "new.csv",
        "--unseen",
        "ignore",
        "--json",
        "-",
        "-o",
        tmp_path / "p.csv",
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["unseen"]["cells"] == {"sibsp": 2, "parch": 1}
    run = nbcli_in_process("predict", "-m", tmp_path / "m.npz", "-d", tmp_path / "new.csv")
    assert_one_error_line(run)
    assert "pass --unseen ignore" in run.stderr and "unseen='ignore'" not in run.stderr


def test_min_categories_of_the_wrong_length_is_one_line_naming_the_columns(tmp_path):
    run = nbcli_in_process(
        "fit",
        "-m",
        "mixed",
        "-d",
        SAMPLE / "penguins_train.csv",
        "-t",
        "species",
        "--min-categories",
        "2,3",
        "-o",
        tmp_path / "m.npz",
    )
    assert_one_error_line(run)
    assert "--min-categories gives 2 values for 7 feature columns (island," in run.stderr


def test_a_target_named_column_given_as_a_feature_is_not_replaced_silently(tmp_path):
    run = nbcli_in_process(
        "fit",
        "-m",
        "gaussian",
        "-d",
        SAMPLE / "wine_train.csv",
        "--features",
        "label",
        "-o",
        tmp_path / "m.npz",
    )
    assert_one_error_line(run)
    assert "--features label uses the column named like a target" in run.stderr
    assert not (tmp_path / "m.npz").exists()


def test_decimal_commas_get_their_own_hint_at_fit(tmp_path):
    (tmp_path / "dc.csv").write_text("a;b;label\n1,5;2,25;x\n2,5;3,0;y\n3,1;1,2;x\n")
    run = nbcli_in_process(
        "fit", "-m", "gaussian", "-d", tmp_path / "dc.csv", "-o", tmp_path / "m.npz"
    )
    assert_one_error_line(run)
    assert "decimal comma (such as a='1,5' in row 1" in run.stderr
    assert "numbers need a '.' as the decimal point" in run.stderr


def test_predict_names_every_missing_column_categorical_ones_too(mixed_model, split, tmp_path):
    path, _ = mixed_model
    d, train, test = split
    test.drop(columns=["island", "sex"]).to_csv(tmp_path / "less.csv", index=False)
    run = nbcli_in_process("predict", "-m", path, "-d", tmp_path / "less.csv")
    assert run.returncode == 2
    assert "missing columns 'island', 'sex' that the model was trained on" in run.stderr


def test_mixed_model_refuses_numbers_with_a_missing_value_mark_as_categories(tmp_path):
    # A '?' among numbers would turn each number into a category of its own.
    rng = np.random.default_rng(5)
    rows = ["length,colour,species"]
    for i in range(60):
        length = "?" if i % 7 == 3 else f"{rng.normal(40 + 5 * (i % 2), 2):.1f}"
        rows.append(f"{length},{'red' if i % 3 else 'blue'},{'a' if i % 2 else 'b'}")
    data = tmp_path / "q.csv"
    data.write_text("\n".join(rows) + "\n")
    out = tmp_path / "m.npz"
    refused = nbcli_in_process("fit", "-m", "mixed", "-d", data, "-o", out)
    assert_one_error_line(refused, "'length' holds numbers and the mark '?'", "--na-values '?'")
    assert not out.exists()
    from nbcli.io.modelfile import load_model

    ok = nbcli_in_process("fit", "-m", "mixed", "-d", data, "-o", out, "--na-values", "?")
    assert ok.returncode == 0, ok.stderr
    assert load_model(out).model.column_types_ == ["gaussian", "categorical"]
    kept = nbcli_in_process(
        "fit", "-m", "mixed", "-d", data, "-o", out, "--force", "--column", "length=categorical"
    )
    assert kept.returncode == 0, kept.stderr
    assert load_model(out).model.column_types_ == ["categorical", "categorical"]


def test_scoring_commands_take_the_files_own_missing_value_marks(tmp_path):
    rng = np.random.default_rng(6)
    rows = ["a,b,label"]
    for i in range(80):
        k = i % 2
        rows.append(f"{rng.normal(3 * k, 1):.3f},{rng.normal(-k, 1):.3f},{'xy'[k]}")
    train = tmp_path / "train.csv"
    train.write_text("\n".join(rows) + "\n")
    model = tmp_path / "m.npz"
    fitted = nbcli_in_process(
        "fit", "-m", "gaussian", "-d", train, "-o", model, "--missing", "ignore"
    )
    assert fitted.returncode == 0, fitted.stderr
    empty = tmp_path / "empty.csv"
    empty.write_text("a,b,label\n1.5,,x\n,-0.5,y\n0.2,0.1,x\n")
    dashed = tmp_path / "dashed.csv"
    dashed.write_text(empty.read_text().replace(",,", ",-,").replace("\n,", "\n-,"))
    refused = nbcli_in_process("predict", "-m", model, "-d", dashed, "--proba")
    assert_one_error_line(refused, "non-numeric value '-'", "--na-values -")
    want = nbcli_in_process("predict", "-m", model, "-d", empty, "--proba")
    got = nbcli_in_process("predict", "-m", model, "-d", dashed, "--proba", "--na-values", "-")
    assert got.returncode == 0, got.stderr
    assert got.stdout == want.stdout
    for command in (["evaluate"], ["calibrate", "-o", tmp_path / "c.npz", "--allow-worse"]):
        run = nbcli_in_process(*command, "-m", model, "-d", dashed, "--na-values", "-", "-q")
        assert run.returncode == 0, (command, run.stderr)


def test_an_unseen_category_that_looks_like_a_missing_mark_points_to_na_values(tmp_path):
    train = tmp_path / "t.csv"
    train.write_text(
        "colour,label\n"
        + "\n".join(f"{'red' if i % 2 else 'blue'},{'ab'[i % 2]}" for i in range(20))
        + "\n"
    )
    model = tmp_path / "m.npz"
    assert nbcli_in_process("fit", "-m", "mixed", "-d", train, "-o", model, "-q").returncode == 0
    new = tmp_path / "n.csv"
    new.write_text("colour\nred\n-\n")
    assert_one_error_line(
        nbcli_in_process("predict", "-m", model, "-d", new), "category '-'", "--na-values -"
    )
    word = tmp_path / "w.csv"
    word.write_text("colour\nred\ngreen\n")
    line = assert_one_error_line(
        nbcli_in_process("predict", "-m", model, "-d", word), "category 'green'"
    )
    assert "--na-values" not in line


def test_a_word_for_a_missing_value_in_a_numeric_column_points_to_na_values(tmp_path):
    # "unknown" or "Missing" among numbers is most often a missing-value marker.
    train = tmp_path / "t.csv"
    train.write_text("a,b,label\n" + "".join(f"{i},{i % 3},{'xy'[i % 2]}\n" for i in range(10)))
    model = tmp_path / "m.npz"
    assert nbcli_in_process("fit", "-m", "gaussian", "-d", train, "-o", model, "-q").returncode == 0
    for word in ("unknown", "Missing"):
        new = tmp_path / "n.csv"
        new.write_text(f"a,b\n1,2\n2,{word}\n")
        line = assert_one_error_line(
            nbcli_in_process("predict", "-m", model, "-d", new), f"non-numeric value {word!r}"
        )
        assert f"--na-values {shlex.quote(word)} if it marks a missing value" in line, line
    # A word that is no such marker gets no such hint.
    new.write_text("a,b\n1,2\n2,green\n")
    line = assert_one_error_line(nbcli_in_process("predict", "-m", model, "-d", new), "'green'")
    assert "--na-values" not in line


def test_the_fit_summary_counts_the_categories_of_integer_codes(tmp_path):
    # Codes as given: 1, 2, 3 make 0 a category too, and the summary says so.
    rows = [f"{i % 3 + 1},{i % 2},{'ab'[i % 2]}" for i in range(12)]
    (tmp_path / "c.csv").write_text("race,smoke,label\n" + "\n".join(rows) + "\n")
    run = nbcli_in_process(
        "fit", "-m", "categorical", "-d", tmp_path / "c.csv", "-o", tmp_path / "m"
    )
    assert run.returncode == 0, run.stderr
    assert (
        "column types: race=categorical (4 categories: codes 0 to 3), "
        "smoke=categorical (2 categories: codes 0 to 1)"
    ) in run.stderr
