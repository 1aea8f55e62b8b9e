"""ARFF, svmlight and Arrow IPC (Feather) files: the same table as in CSV gives
the same model, nominal attributes keep their declared category order, and
malformed files get one-line errors."""

from __future__ import annotations

import gzip

import numpy as np
import polars as pl
import pytest

from tests.conftest import assert_one_error_line, nbcli_in_process

arff = pytest.importorskip("arff")

# Weka's weather.nominal.arff (its 14 rows, as Weka ships them).
WEATHER = """% Weka's weather data, nominal attributes
@relation weather.symbolic

@attribute outlook {sunny, overcast, rainy}
@attribute temperature {hot, mild, cool}
@attribute humidity {high, normal}
@attribute windy {TRUE, FALSE}
@attribute play {yes, no}

@data
sunny,hot,high,FALSE,no
sunny,hot,high,TRUE,no
overcast,hot,high,FALSE,yes
rainy,mild,high,FALSE,yes
rainy,cool,normal,FALSE,yes
rainy,cool,normal,TRUE,no
overcast,cool,normal,TRUE,yes
sunny,mild,high,FALSE,no
sunny,cool,normal,FALSE,yes
rainy,mild,normal,FALSE,yes
sunny,mild,normal,TRUE,yes
overcast,mild,high,TRUE,yes
overcast,hot,normal,FALSE,yes
rainy,mild,high,TRUE,no
"""


def ok(*args):
    run = nbcli_in_process(*args, "--quiet")
    assert run.returncode == 0, run.stderr
    return run


def proba(model, data, tmp_path, name):
    out = tmp_path / f"{name}.csv"
    ok("predict", "-m", model, "-d", data, "--proba", "-o", out)
    frame = pl.read_csv(out)
    return frame.get_column("prediction").to_list(), frame.drop("prediction").to_numpy()


def fit(tmp_path, data, name, *args):
    model = tmp_path / f"{name}.npz"
    ok("fit", "-d", data, "-o", model, *args)
    return model


def categories_of(model) -> dict:
    from nbcli.io.modelfile import load_model

    return {c["name"]: c.get("categories") for c in load_model(model).columns or []}


def penguins_arff(tmp_path):
    """Penguins as CSV and as ARFF with nominal island, sex and species
    (declared in an order unlike the rows'), ``?`` for missing cells."""
    from palmerpenguins import load_penguins

    df = load_penguins()
    csv = tmp_path / "penguins.csv"
    df.to_csv(csv, index=False)
    numeric = ["bill_length_mm", "bill_depth_mm", "flipper_length_mm", "body_mass_g"]
    attributes = [
        ("island", ["Torgersen", "Dream", "Biscoe"][::-1]),
        *[(c, "NUMERIC") for c in numeric],
        ("sex", ["male", "female"]),
        ("year", "INTEGER"),
        ("species", ["Gentoo", "Chinstrap", "Adelie"]),
    ]
    names = [a[0] for a in attributes]
    rows = [
        [None if isinstance(v, float) and np.isnan(v) else v for v in row]
        for row in df[names].astype(object).itertuples(index=False)
    ]
    path = tmp_path / "penguins.arff"
    path.write_text(arff.dumps({"relation": "penguins", "attributes": attributes, "data": rows}))
    assert "?" in path.read_text()
    return csv, path


@pytest.mark.numerical
def test_arff_penguins_fit_the_csv_model_and_keep_declared_categories(tmp_path):
    csv, path = penguins_arff(tmp_path)
    from_csv = fit(tmp_path, csv, "c", "-m", "mixed", "--target", "species")
    from_arff = fit(tmp_path, path, "a", "-m", "mixed", "--target", "species")
    gz = tmp_path / "penguins.arff.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    chunked = fit(tmp_path, gz, "g", "-m", "mixed", "--target", "species", "--chunk-size", "50")
    assert categories_of(from_arff)["island"] == ["Biscoe", "Dream", "Torgersen"]
    assert categories_of(from_arff)["sex"] == ["male", "female"]
    assert categories_of(from_csv)["island"] == ["Torgersen", "Biscoe", "Dream"]  # first seen
    labels_c, p_c = proba(from_csv, csv, tmp_path, "pc")
    for model in (from_arff, chunked):
        for data in (csv, path):
            labels, p = proba(model, data, tmp_path, "pa")
            assert labels == labels_c
            np.testing.assert_allclose(p, p_c, rtol=0, atol=1e-12)
    assert 0.9 < np.mean(np.array(labels_c) == pl.read_csv(csv)["species"].to_numpy())


def sparse_weather() -> str:
    """weather.nominal as sparse ARFF: a value left out is the attribute's first."""
    head, data = WEATHER.split("@data\n")
    declared = [
        [v.strip() for v in line.split("{")[1].rstrip("}").split(",")]
        for line in head.splitlines()
        if line.startswith("@attribute")
    ]
    rows = []
    for line in data.strip().splitlines():
        cells = line.split(",")
        kept = [f"{j} {v}" for j, v in enumerate(cells) if v != declared[j][0]]
        rows.append("{" + ", ".join(kept) + "}")
    return head + "@data\n" + "\n".join(rows) + "\n"


@pytest.mark.numerical
def test_weather_nominal_dense_sparse_and_csv_give_one_model(tmp_path):
    dense = tmp_path / "weather.arff"
    dense.write_text(WEATHER)
    sparse = tmp_path / "weather.sparse.arff"
    sparse.write_text(sparse_weather())
    rows = sparse.read_text().split("@data\n")[1]
    assert "{4 no}" in rows and "{3 FALSE, 4 no}" in rows  # first values left out
    csv = tmp_path / "weather.csv"
    csv.write_text(
        "outlook,temperature,humidity,windy,play\n" + WEATHER.split("@data\n")[1].strip() + "\n"
    )
    models = [fit(tmp_path, p, p.stem, "-m", "categorical") for p in (csv, dense, sparse)]
    assert categories_of(models[1]) == categories_of(models[2])
    assert categories_of(models[1])["outlook"] == ["sunny", "overcast", "rainy"]
    results = [proba(m, csv, tmp_path, f"p{i}") for i, m in enumerate(models)]
    for labels, p in results:
        assert labels == results[0][0]
        np.testing.assert_allclose(p, results[0][1], rtol=0, atol=1e-12)
    # The formula for row 2 (sunny, hot, high, TRUE): class frequencies times
    # Laplace-smoothed (alpha = 1) category frequencies within the class.
    row = 1
    yes = 9 / 14 * (3 / 12) * (3 / 12) * (4 / 11) * (4 / 11)
    no = 5 / 14 * (4 / 8) * (3 / 8) * (5 / 7) * (4 / 7)
    np.testing.assert_allclose(results[1][1][row], [no / (no + yes), yes / (no + yes)], rtol=1e-12)


WEKA_EXAMPLES = "/usr/share/doc/weka/examples"


@pytest.mark.numerical
@pytest.mark.parametrize(
    "name", ["weather.nominal", "iris", "soybean", "vote", "labor", "contact-lenses"]
)
def test_weka_sample_data_give_the_model_of_the_same_table_in_csv(name, tmp_path):
    """Weka's own example files (Debian's weka package), read here and, as an
    independent reference, by liac-arff into a CSV file: the same model."""
    import os
    import shutil

    source = f"{WEKA_EXAMPLES}/{name}.arff"
    if not os.path.exists(source):
        pytest.skip("Weka's example files are not installed (Debian package weka)")
    path = tmp_path / f"{name}.arff"
    shutil.copy(source, path)
    text = path.read_text(encoding="utf-8", errors="replace").replace("\r", "")
    # liac-arff itself takes no comment after a declaration (Weka does).
    import re

    table = arff.loads(re.sub(r"(@attribute[^%\n]*}) *%[^\n]*", r"\1", text, flags=re.I))
    names = [a[0] for a in table["attributes"]]
    frame = pl.DataFrame(
        [[None if v is None else str(v) for v in row] for row in table["data"]],
        schema={n: pl.String for n in names},
        orient="row",
    )
    csv = tmp_path / f"{name}.csv"
    frame.write_csv(csv)
    target = names[-1]
    from_arff = fit(tmp_path, path, "a", "-m", "mixed", "--target", target)
    from_csv = fit(tmp_path, csv, "c", "-m", "mixed", "--target", target)
    declared = {a[0]: list(a[1]) for a in table["attributes"] if isinstance(a[1], list)}
    for column, values in categories_of(from_arff).items():
        if values is not None and column in declared:
            assert values == declared[column]  # declared order, not first-seen
    # A declared value no row has is a category all the same (it takes its
    # share of the smoothing, as in Weka); a CSV file cannot declare it.
    unused = {
        c: set(v) - set(frame[c].drop_nulls().to_list()) for c, v in declared.items() if c != target
    }
    labels_c, p_c = proba(from_csv, csv, tmp_path, "pc")
    labels_a, p_a = proba(from_arff, path, tmp_path, "pa")
    if any(unused.values()):
        assert np.abs(p_a - p_c).max() > 1e-6
        return
    assert labels_a == labels_c
    np.testing.assert_allclose(p_a, p_c, rtol=0, atol=1e-12)


def test_arff_comments_after_declarations(tmp_path):
    path = tmp_path / "c.arff"
    path.write_text(
        WEATHER.replace(
            "@attribute play {yes, no}", "@attribute play {yes, no} % the class"
        ).replace(
            "@attribute outlook {sunny, overcast, rainy}",
            "@attribute 'out%look' {sunny, overcast, rainy}",
        )
    )
    model = fit(tmp_path, path, "m", "-m", "categorical")
    assert list(categories_of(model)) == ["out%look", "temperature", "humidity", "windy"]


def test_arff_errors_are_one_line(tmp_path):
    bad = tmp_path / "bad.arff"
    bad.write_text(WEATHER.replace("rainy,cool,normal,TRUE,no", "rainy,cold,normal,TRUE,no"))
    assert_one_error_line(
        nbcli_in_process("fit", "-m", "categorical", "-d", bad, "-o", tmp_path / "m.npz"),
        "bad.arff",
        "cold",
        "line 16",
    )
    no_data = tmp_path / "nodata.arff"
    no_data.write_text(WEATHER.split("@data")[0])
    assert_one_error_line(
        nbcli_in_process("fit", "-m", "categorical", "-d", no_data, "-o", tmp_path / "m.npz"),
        "nodata.arff",
        "not a valid ARFF file",
    )
    dated = tmp_path / "dated.arff"
    dated.write_text(
        "@relation r\n@attribute day date 'yyyy-MM-dd'\n@attribute x numeric\n"
        "@attribute c {a, b}\n@data\n"
        + "".join(f"2020-01-0{i + 1},{i % 3},{'ab'[i % 2]}\n" for i in range(6))
    )
    assert_one_error_line(
        nbcli_in_process("fit", "-m", "gaussian", "-d", dated, "-o", tmp_path / "m.npz"),
        "column 'day'",
        "--drop day",
    )
    ok("fit", "-m", "gaussian", "-d", dated, "--drop", "day", "-o", tmp_path / "m.npz")


def test_arff_string_attributes_are_text_columns(tmp_path):
    rows = [
        ("buy cheap pills now", "spam"),
        ("meeting at noon", "ham"),
        ("cheap pills, cheap!", "spam"),
        ("lunch at noon tomorrow", "ham"),
        ("now buy now", "spam"),
        ("see you at the meeting", "ham"),
    ]
    arff_text = "@relation docs\n@attribute text string\n@attribute cls {ham, spam}\n@data\n"
    arff_text += "".join(f"'{t}', {c}\n" for t, c in rows)
    (tmp_path / "docs.arff").write_text(arff_text)
    (tmp_path / "docs.csv").write_text("text,cls\n" + "".join(f'"{t}",{c}\n' for t, c in rows))
    models = [
        fit(tmp_path, tmp_path / f"docs.{ext}", ext, "-m", "multinomial", "--text", "text")
        for ext in ("csv", "arff")
    ]
    (labels_c, p_c), (labels_a, p_a) = (
        proba(m, tmp_path / "docs.csv", tmp_path, "p") for m in models
    )
    assert labels_a == labels_c == [c for _, c in rows]
    np.testing.assert_allclose(p_a, p_c, rtol=0, atol=1e-12)


def counts_table(zero_based: bool, tmp_path):
    """A subset of digits (whole counts 0-16) as CSV and as svmlight."""
    from sklearn.datasets import dump_svmlight_file, load_digits

    X, y = load_digits(return_X_y=True)
    X, y = X[::4], y[::4]
    # The first and last index occur in the file: a file tells its width and
    # base by them alone (a column of zeros is not written).
    X[:, [0, -1]] = np.maximum(X[:, [0, -1]], 1)
    first = 0 if zero_based else 1
    csv = tmp_path / "digits.csv"
    pl.DataFrame({**{f"x{j + first}": X[:, j] for j in range(X.shape[1])}, "label": y}).write_csv(
        csv
    )
    svm = tmp_path / f"digits{first}.svm"
    dump_svmlight_file(X, y, str(svm), zero_based=zero_based, comment="digits, every 4th row")
    return csv, svm


@pytest.mark.numerical
@pytest.mark.parametrize("zero_based", [True, False])
def test_svmlight_fits_the_csv_model(tmp_path, zero_based):
    csv, svm = counts_table(zero_based, tmp_path)
    from_csv = fit(tmp_path, csv, "c", "-m", "multinomial", "--target", "label")
    from_svm = fit(tmp_path, svm, "s", "-m", "multinomial", "--chunk-size", "37")
    labels_c, p_c = proba(from_csv, csv, tmp_path, "pc")
    for model, data in ((from_svm, svm), (from_svm, csv), (from_csv, svm)):
        labels, p = proba(model, data, tmp_path, "ps")
        assert labels == labels_c
        np.testing.assert_allclose(p, p_c, rtol=0, atol=1e-12)
    assert np.mean(np.array(labels_c) == pl.read_csv(csv)["label"].to_numpy()) > 0.8


@pytest.mark.numerical
@pytest.mark.parametrize("zero_based", [True, False])
def test_svmlight_scoring_file_without_first_or_last_index_reads_them_as_zeros(
    tmp_path, zero_based
):
    # Absent indices are zeros by the format's definition, whether the first
    # column (which also changes the file's apparent base) or the last.
    from sklearn.datasets import dump_svmlight_file

    csv, svm = counts_table(zero_based, tmp_path)
    model = fit(tmp_path, svm, "s", "-m", "multinomial")
    table = pl.read_csv(csv)
    features = [c for c in table.columns if c != "label"]
    zeroed = table.with_columns(pl.lit(0.0).alias(features[0]), pl.lit(0.0).alias(features[-1]))
    sparse = tmp_path / "zeroed.svm"
    X = zeroed.select(features).to_numpy()
    dump_svmlight_file(X, zeroed["label"].to_numpy(), str(sparse), zero_based=zero_based)
    assert f" {0 if zero_based else 1}:" not in sparse.read_text()
    dense = tmp_path / "zeroed.csv"
    zeroed.write_csv(dense)
    labels_c, p_c = proba(model, dense, tmp_path, "pc")
    labels_s, p_s = proba(model, sparse, tmp_path, "ps")
    assert labels_s == labels_c
    np.testing.assert_allclose(p_s, p_c, rtol=0, atol=1e-12)
    # The first column's zeros count: the posteriors differ from the file's.
    assert not np.allclose(p_c, proba(model, csv, tmp_path, "full")[1], rtol=0, atol=1e-6)
    # A CSV file has no such rule: a missing column is refused.
    zeroed.drop(features[0]).write_csv(dense)
    run = nbcli_in_process("predict", "-m", model, "-d", dense, "-o", tmp_path / "p.csv")
    assert_one_error_line(run, "missing column", repr(features[0]))


def test_svmlight_errors_are_one_line(tmp_path):
    cases = {
        "qid.svm": ("1 qid:3 1:2\n0 qid:3 2:1\n", ("line 1", "qid")),
        "token.svm": ("1 1:2\n0 1:2 x\n", ("line 2", "'x'", "index:value")),
        "label.svm": ("1 1:2\n0,1 1:2\n", ("line 2", "multi-label")),
        "empty.svm": ("# nothing\n\n", ("no data rows",)),
    }
    for name, (text, fragments) in cases.items():
        path = tmp_path / name
        path.write_text(text)
        run = nbcli_in_process("fit", "-m", "multinomial", "-d", path, "-o", tmp_path / "m.npz")
        assert_one_error_line(run, name, *fragments)
    # An index the model has no column for.
    train = tmp_path / "train.svm"
    train.write_text("1 1:2 2:1\n0 1:1 2:3\n1 1:3\n0 2:2\n")
    model = fit(tmp_path, train, "m", "-m", "multinomial")
    wide = tmp_path / "wide.svm"
    wide.write_text("1 1:2 5:1\n")
    assert_one_error_line(
        nbcli_in_process("predict", "-m", model, "-d", wide, "-o", tmp_path / "p.csv"),
        "line 1",
        "index 5",
    )


@pytest.mark.numerical
def test_feather_fits_the_csv_model(tmp_path):
    from sklearn.datasets import load_wine

    X, y = load_wine(return_X_y=True)
    frame = pl.DataFrame({**{f"f{j}": X[:, j] for j in range(X.shape[1])}, "label": y})
    csv, feather = tmp_path / "wine.csv", tmp_path / "wine.feather"
    frame.write_csv(csv)
    frame.write_ipc(feather)
    arrow = tmp_path / "wine.arrow"
    frame.write_ipc(arrow)
    models = [fit(tmp_path, p, p.name, "-m", "lda", "--target", "label") for p in (csv, feather)]
    chunked = fit(tmp_path, arrow, "x", "-m", "lda", "--target", "label", "--chunk-size", "40")
    labels_c, p_c = proba(models[0], csv, tmp_path, "pc")
    for model in (models[1], chunked):
        labels, p = proba(model, feather, tmp_path, "pf")
        assert labels == labels_c
        np.testing.assert_allclose(p, p_c, rtol=0, atol=1e-10)
    broken = tmp_path / "broken.feather"
    broken.write_bytes(feather.read_bytes()[:200])
    assert_one_error_line(
        nbcli_in_process("fit", "-m", "lda", "-d", broken, "-o", tmp_path / "m.npz"),
        "broken.feather",
        "not a valid Arrow IPC",
    )


def test_split_refuses_the_new_formats_in_one_line(tmp_path):
    path = tmp_path / "weather.arff"
    path.write_text(WEATHER)
    run = nbcli_in_process("split", "-d", path, "--test", "0.3", "--output-dir", tmp_path / "out")
    assert_one_error_line(run, "weather.arff", "not split yet")
    assert not list((tmp_path / "out").glob("*")) if (tmp_path / "out").exists() else True
