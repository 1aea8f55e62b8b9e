"""Tables as they come: one reading for every command, and the rules for
cells that do not fit (empty fold cells, stray quotes, missing-label
spellings, Unicode spellings, stray text in numeric columns)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbcli.errors import NbcliError
from nbcli.io.request import DataRequest
from nbcli.models import MODELS
from nbcli.workflows.settings import FoldSettings, ScoreSettings
from tests.conftest import nbcli_in_process


def _rows(n=40, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=n).tolist(), np.where(np.arange(n) % 2 == 0, "a", "b")


def test_an_empty_fold_cell_is_refused_naming_its_row(tmp_path):
    from nbcli.workflows.cv import cross_validate

    x, y = _rows()
    fold = [str(i % 3) for i in range(40)]
    fold[6] = ""  # data row 7
    lines = ["x,fold,label"] + [f"{a!r},{f},{b}" for a, f, b in zip(x, fold, y)]
    path = tmp_path / "d.csv"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(NbcliError, match="fold column 'fold' has an empty cell at row 7"):
        cross_validate(
            MODELS["gaussian"](),
            DataRequest.of(str(path)),
            FoldSettings(fold_column="fold"),
            ScoreSettings(bootstrap=0),
        )
    run = nbcli_in_process("cv", "-m", "gaussian", "-d", path, "--fold-column", "fold", "-q")
    assert run.returncode == 2
    assert run.stderr.strip().splitlines() == [
        f"error: {path}: the fold column 'fold' has an empty cell at row 7; "
        "give every row a fold, or leave the row out of the file"
    ]
    # With text columns too (another reading path), the same refusal.
    words = tmp_path / "w.csv"
    words.write_text(
        "\n".join(
            ["note,fold,label"] + [f"w{i % 4} z,{f},{b}" for i, (f, b) in enumerate(zip(fold, y))]
        )
        + "\n"
    )
    run = nbcli_in_process(
        "cv", "-m", "multinomial", "-d", words, "--text", "note", "--fold-column", "fold", "-q"
    )
    assert run.returncode == 2 and "has an empty cell at row 7" in run.stderr


STRAY = {
    # A quote inside an unquoted field, at its end, and text after a closing quote.
    'x,note,label\n1,ab"c,a\n2,d,b\n3,e,a\n4,f,b\n': (
        "line 2 has a '\"' inside a field that is not quoted (ab\"c)"
    ),
    'x,note,label\n1,a,a\n2,b,b\n3,5 ft 11",a\n4,f,b\n': (
        "line 4 has a '\"' inside a field that is not quoted (5 ft 11\")"
    ),
    'x,note,label\n1,a,a\n2,"b"c,b\n3,e,a\n4,f,b\n': (
        'line 3 has text after the closing \'"\' of a quoted field ("b"c)'
    ),
    'x,note,label\n1,a,a\n2,b,b\n3,"e,a\n4,f,b\n': "line 4 opens a quoted field that is never closed",
}


@pytest.mark.parametrize("text", list(STRAY))
def test_a_stray_quote_is_one_error_line_naming_its_line_in_every_command(tmp_path, text):
    from tests.conftest import fitted_model_file

    model = tmp_path / "m.npz"
    fitted_model_file(model)  # features a, b
    path = tmp_path / "d.csv"
    path.write_text(text.replace("x,note", "a,b"))
    runs = {
        "fit": ("fit", "-m", "gaussian", "-d", path, "-o", tmp_path / "f.nbm"),
        "predict": ("predict", "-m", model, "-d", path, "-o", tmp_path / "p.csv"),
        "evaluate": ("evaluate", "-m", model, "-d", path),
        "split": ("split", "-d", path, "--test", "1", "--output-dir", tmp_path / "s"),
        "cv": ("cv", "-m", "gaussian", "-d", path, "--folds", "2"),
    }
    for name, args in runs.items():
        run = nbcli_in_process(*args, "-q")
        assert run.returncode == 2, (name, run.stderr)
        lines = run.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"error: {path}: "), (name, lines)
        assert STRAY[text] in lines[0], (name, lines)
    assert not (tmp_path / "s").exists() or not any((tmp_path / "s").iterdir())


def test_quotes_as_csv_allows_them_are_read_alike_by_split_and_fit(tmp_path):
    from nbcli.io.data import read_dataset
    from nbcli.workflows.split import split

    text = 'x,note,label\n1,"a ""b"", c",a\n2, "d",b\n"3","e\nf",a\n4,,"b"\n'
    path = tmp_path / "d.csv"
    path.write_text(text)
    ds = read_dataset(path, features=["x"])
    assert ds.y.tolist() == ["a", "b", "a", "b"]
    report = split(DataRequest.of(str(path)), test=2, output_dir=tmp_path / "s")
    assert sum(report.n_samples.values()) == 4
    back = [read_dataset(tmp_path / "s" / f"d.{p}.csv", features=["x"]) for p in ("train", "test")]
    assert sorted(np.concatenate([b.X[:, 0] for b in back]).tolist()) == [1.0, 2.0, 3.0, 4.0]


def test_split_reads_ragged_rows_and_missing_labels_as_fit_does(tmp_path):
    from nbcli.workflows.split import split

    # A short row has missing cells (here its label: shared like a class),
    # a row of nothing but delimiters is a blank line, a long row is refused.
    path = tmp_path / "d.csv"
    rows = [f"{i},{'ab'[i % 2]}" for i in range(10)]
    path.write_text("x,label\n" + "\n".join(rows[:5] + ["5", ",", *rows[6:]]) + "\n")
    report = split(DataRequest.of(str(path)), test=3, output_dir=tmp_path / "s")
    assert sum(report.n_samples.values()) == 10  # the line of delimiters is no row
    assert sum(sum(c.values()) for c in report.class_counts.values()) == 9
    assert any("1 row has no label (first at row 6)" in w for w in report.warnings)
    written = b"".join((tmp_path / "s" / f"d.{p}.csv").read_bytes() for p in ("train", "test"))
    assert written.count(b"\n5\n") == 1 and b"\n,\n" not in written
    path.write_text("x,label\n" + "\n".join(rows[:5] + ["5,a,extra", *rows[6:]]) + "\n")
    with pytest.raises(NbcliError, match="line 7 has 3 fields but the header has 2"):
        split(DataRequest.of(str(path)), test=3, output_dir=tmp_path / "t")


def test_split_reads_parquet_labels_as_fit_does(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from nbcli.workflows.split import split

    path = tmp_path / "d.parquet"
    labels = ["a", "b", None, "a", "b", "a", "b", "a"]
    pq.write_table(pa.table({"x": list(range(8)), "label": labels}), path)
    report = split(DataRequest.of(str(path)), test=2, output_dir=tmp_path / "s")
    assert "None" not in report.class_counts["train"]
    assert sum(report.n_samples.values()) == 8
    assert any("1 row has no label (first at row 3)" in w for w in report.warnings)


def _cars(tmp_path):
    rng = np.random.default_rng(1)
    cyl = rng.choice([4, 6, 8], size=60)
    weight = cyl / 4 + rng.normal(scale=0.3, size=60)
    label = np.where(cyl + rng.normal(size=60) > 6, "big", "small")
    train = tmp_path / "cars.csv"
    train.write_text(
        "Cylinders,weight,label\n"
        + "".join(f"{c},{w!r},{b}\n" for c, w, b in zip(cyl.tolist(), weight.tolist(), label))
    )
    new = tmp_path / "new.csv"
    new.write_text("Cylinders,weight\n4,1.0\nrotary,2.0\n6,1.4\n rotary ,1.7\n")
    blank = tmp_path / "blank.csv"
    blank.write_text("Cylinders,weight\n4,1.0\n,2.0\n6,1.4\n,1.7\n")
    return train, new, blank


def _posteriors(path):
    import pandas as pd

    return pd.read_csv(path).iloc[:, 1:].to_numpy(dtype=float)


def test_unseen_text_in_a_numeric_column_is_a_missing_cell_under_unseen_ignore(tmp_path):
    import json

    train, new, blank = _cars(tmp_path)
    model = tmp_path / "m.nbm"
    assert nbcli_in_process("fit", "-m", "gaussian", "-d", train, "-o", model, "-q").returncode == 0
    refused = nbcli_in_process("predict", "-m", model, "-d", new)
    assert refused.returncode == 2
    assert "column 'Cylinders' has the non-numeric value 'rotary' at row 2" in refused.stderr
    assert refused.stderr.rstrip().endswith(
        ", or pass --unseen ignore to score such a cell as missing"
    )
    out, ref = tmp_path / "p.csv", tmp_path / "ref.csv"
    run = nbcli_in_process(
        "predict", "-m", model, "-d", new, "--unseen", "ignore", "--proba", "-o", out,
        "--json", tmp_path / "r.json",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "4 rows: 4 scored, 0 left empty, 2 unseen categories (Cylinders: 2)" in run.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["unseen"]["cells"] == {"Cylinders": 2}
    # Left out of the product exactly as a missing cell is.
    assert (
        nbcli_in_process("predict", "-m", model, "-d", blank, "--proba", "-o", ref).returncode == 0
    )
    np.testing.assert_allclose(_posteriors(out), _posteriors(ref), rtol=1e-12, atol=0)


def test_unseen_text_in_a_numeric_column_leaves_the_row_empty_for_qda(tmp_path):
    train, new, _ = _cars(tmp_path)
    model = tmp_path / "q.nbm"
    fit = nbcli_in_process("fit", "-m", "qda", "--reg-param", "0.1", "-d", train, "-o", model, "-q")
    assert fit.returncode == 0, fit.stderr
    out = tmp_path / "p.csv"
    run = nbcli_in_process("predict", "-m", model, "-d", new, "--unseen", "ignore", "-o", out)
    assert run.returncode == 0, run.stderr
    assert "4 rows: 2 scored, 2 left empty, 2 unseen categories (Cylinders: 2)" in run.stderr
    predictions = out.read_text().splitlines()[1:]
    assert [p == "" for p in predictions] == [False, True, False, True]


NFC, NFD = "caf\u00e9", "cafe\u0301"


def test_nfc_and_nfd_spellings_are_one_class_and_one_category_with_a_warning(tmp_path):
    import json

    rows = [(1, NFC, NFC), (2, NFD, NFD), (3, "tea", "tea"), (4, "tea", "tea"), (5, NFC, NFD)]
    rows += [(6, "tea", "tea"), (7, NFD, NFC), (8, "tea", "tea")]
    train = tmp_path / "t.csv"
    train.write_text("x,c,label\n" + "".join(f"{a},{b},{c}\n" for a, b, c in rows), "utf-8")
    model = tmp_path / "m.nbm"
    fit = nbcli_in_process("fit", "-m", "mixed", "-d", train, "-o", model, "--json", "-", "-q")
    assert fit.returncode == 0, fit.stderr
    report = json.loads(fit.stdout)
    assert sorted(c["label"] for c in report["classes"]) == sorted([NFC, "tea"])
    merged = [w for w in fit.stderr.splitlines() if "several Unicode forms" in w]
    assert len(merged) == 2 and "'label'" in merged[0] and "'c'" in merged[1]
    assert ascii(NFD) in merged[0] and ascii(NFC) in merged[0]
    from nbcli.io.modelfile import load_model

    columns = {c["name"]: c for c in load_model(model).columns}
    assert columns["c"]["categories"] == [NFC, "tea"]
    # At predict and evaluate, either spelling is the model's one.
    new = tmp_path / "n.csv"
    new.write_text(f"x,c,label\n1,{NFD},{NFD}\n3,tea,tea\n2,{NFC},{NFC}\n", "utf-8")
    run = nbcli_in_process("evaluate", "-m", model, "-d", new, "--json", "-", "-q")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["n_unseen"] == 0


def _with_strays(tmp_path, n=200, strays=((7, "unknown"), (150, " n.a. "))):
    rng = np.random.default_rng(0)
    x = [repr(v) for v in rng.normal(size=n).round(3).tolist()]
    blank = list(x)
    for row, text in strays:
        x[row], blank[row] = text, ""
    c = rng.choice(["r", "g"], size=n)
    y = np.where(rng.normal(size=n) > 0, "a", "b")
    paths = []
    for name, column in (("stray.csv", x), ("blank.csv", blank)):
        path = tmp_path / name
        path.write_text("x,c,label\n" + "".join(f"{a},{b},{t}\n" for a, b, t in zip(column, c, y)))
        paths.append(path)
    return paths


def test_a_few_stray_text_cells_leave_a_mixed_column_numeric_read_as_missing(tmp_path):
    from nbcli.io.modelfile import load_model

    stray, blank = _with_strays(tmp_path)
    fits = []
    for path in (stray, blank):
        out = tmp_path / f"{path.stem}.nbm"
        run = nbcli_in_process("fit", "-m", "mixed", "-d", path, "-o", out)
        assert run.returncode == 0, run.stderr
        fits.append((load_model(out), run.stderr))
    (model, said), (reference, _) = fits
    warned = [w for w in said.splitlines() if "text cells" in w]
    assert warned == [
        f"warning: {stray}: column 'x' holds numbers but for 2 text cells in the first 200 rows "
        "('unknown' at row 8, 'n.a.' at row 151); with at most one text cell in 50 it stays "
        "numeric and those texts are read as missing in it; pass --na-values unknown "
        "--na-values n.a. to say so, or --column x=categorical to read the column as categories"
    ]
    assert model.model.get_params()["column_types"] == ["gaussian", "categorical"]
    # The same statistics as with those cells left empty.
    for key, array in reference.model.stats_.arrays().items():
        np.testing.assert_array_equal(model.model.stats_.arrays()[key], array, err_msg=key)


def test_more_than_a_few_text_cells_are_not_taken_for_slips(tmp_path):
    # Five text cells in 200 (more than one in 50): the column is not read as
    # numeric with slips; it is refused, and since 'unknown' is a word tables
    # write for a missing value, the refusal names it and the remedy.
    strays = tuple((i * 40, "unknown") for i in range(5))
    stray, _ = _with_strays(tmp_path, strays=strays)
    run = nbcli_in_process("fit", "-m", "mixed", "-d", stray, "-o", tmp_path / "m.nbm")
    assert run.returncode == 2 and "text cells" not in run.stderr
    assert "column 'x' holds numbers and the mark 'unknown'" in run.stderr
    assert "pass --na-values unknown;" in run.stderr
    # Another word is no missing-value mark: 189 distinct values (rounded
    # numbers repeat) are no categories either, so it is refused as such.
    strays = tuple((i * 40, "quartz") for i in range(5))
    stray, _ = _with_strays(tmp_path, strays=strays)
    run = nbcli_in_process("fit", "-m", "mixed", "-d", stray, "-o", tmp_path / "m.nbm")
    assert run.returncode == 2 and "text cells" not in run.stderr
    assert "column 'x' has 189 distinct values in 200 rows" in run.stderr


def _r_labels(tmp_path):
    labels = ["a", "NA", "b", "a", " NA ", "b", "a", "b", "a", "b", "a", "b"]
    path = tmp_path / "r.csv"
    path.write_text(
        "x,label\n" + "".join(f"{(i * 7) % 5 + i / 10},{t}\n" for i, t in enumerate(labels))
    )
    return path


def test_a_label_spelled_as_missing_is_named_where_it_makes_a_fit_fail(tmp_path):
    # Rows labelled NA have no value in x: the mixed model refuses the column
    # for that class, and the line says the likelier cause, the label.
    rows = [f"{i % 7 + i / 10},{'uv'[i % 2]},{'ab'[i % 2]}" for i in range(12)]
    path = tmp_path / "na.csv"
    path.write_text("x,c,label\n" + "\n".join([*rows, ",u,NA", ",v,NA"]) + "\n")
    run = nbcli_in_process("fit", "-m", "mixed", "-d", path, "-o", tmp_path / "m.nbm")
    assert run.returncode == 2 and run.stderr.count("\n") == 1, run.stderr
    assert "column 'x' has no observed value in class 'NA'" in run.stderr
    assert run.stderr.rstrip().endswith("or pass --na-labels NA (fit, cv, tune, split)")
    # A label that is a mark (here also the command's --na-values) is said to be a class.
    marked = tmp_path / "marked.csv"
    marked.write_text("x,c,label\n" + "\n".join([*rows, "1,u,?", "2,v,?"]) + "\n")
    for flags in ((), ("--na-values", "?")):
        run = nbcli_in_process("fit", "-m", "mixed", "-d", marked, "-o", tmp_path / "m.nbm", *flags)
        assert run.returncode == 0, run.stderr
        assert "the label '?' is read as a class" in run.stderr and "--na-labels '?'" in run.stderr


def test_na_labels_say_which_label_texts_mean_a_missing_label(tmp_path):
    import json

    from nbcli.io.modelfile import load_model

    path = _r_labels(tmp_path)
    # Default: labels as written, NA a class (with a note saying how to mark it).
    plain = nbcli_in_process("fit", "-m", "gaussian", "-d", path, "-o", tmp_path / "p.nbm", "-q")
    assert plain.returncode == 0 and "--na-labels NA" in plain.stderr
    assert load_model(tmp_path / "p.nbm").model.classes_.tolist() == ["NA", "a", "b"]
    model = tmp_path / "m.nbm"
    fit = nbcli_in_process(
        "fit", "-m", "gaussian", "-d", path, "-o", model, "--na-labels", "NA", "--json", "-"
    )
    assert fit.returncode == 0, fit.stderr
    assert "skipped 2 rows without a label (the first at row 2)" in fit.stderr
    assert json.loads(fit.stdout)["n_samples"] == 10
    mf = load_model(model)
    assert mf.model.classes_.tolist() == ["a", "b"]
    assert mf.training["na_labels"] == ["NA"]
    # Evaluate reads them as the model was fitted: missing labels, refused.
    run = nbcli_in_process("evaluate", "-m", model, "-d", path)
    assert run.returncode == 2
    assert "target column 'label' has a missing value at row 2" in run.stderr
    cv = nbcli_in_process(
        "cv", "-m", "gaussian", "-d", path, "--folds", "2", "--na-labels", "NA", "--json", "-"
    )
    assert cv.returncode == 0, cv.stderr
    assert sum(f["n_samples"] for f in json.loads(cv.stdout)["folds"]) == 10
    out = tmp_path / "s"
    split = nbcli_in_process(
        "split", "-d", path, "--test", "4", "--output-dir", out, "--na-labels", "NA"
    )
    assert split.returncode == 0, split.stderr
    assert f"warning: {path}: 2 rows have no label (first at row 2)" in split.stderr


def test_na_labels_apply_to_parquet_text_labels(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from nbcli.io.data import read_dataset

    path = tmp_path / "r.parquet"
    pq.write_table(pa.table({"x": [1.0, 2.0, 3.0], "label": ["a", "NA", "b"]}), path)
    ds = read_dataset(path, na_labels=("NA",), skip_missing_labels=True)
    assert ds.y_missing.tolist() == [False, True, False]
    assert read_dataset(path).y.tolist() == ["a", "NA", "b"]


_CELL = st.text(alphabet='ab,"\n x', max_size=6)


@settings(max_examples=80, deadline=None)
@given(
    rows=st.lists(st.lists(_CELL, min_size=2, max_size=2), min_size=1, max_size=8),
    at=st.integers(0, 7),
)
def test_csv_as_written_passes_the_quote_rule_and_a_stray_quote_is_named(rows, at):
    import csv
    import io

    from nbcli.io.csv_quotes import check_quotes

    buffer = io.StringIO(newline="")
    csv.writer(buffer, lineterminator="\n").writerows([["h1", "h2"], *rows])
    data = buffer.getvalue().encode()
    check_quotes(lambda: io.BytesIO(data), "d.csv", ",")  # what csv writes is allowed
    # The same rows, one more unquoted cell holding a quote: refused at its line.
    at = at % (len(rows) + 1)
    lines = data.decode().count("\n", 0, _offset_of_row(data, at)) + 1
    bad = _insert_row(data, at, b'1,x"y\n')
    with pytest.raises(NbcliError, match=rf"line {lines} has a '\"' inside a field"):
        check_quotes(lambda: io.BytesIO(bad), "d.csv", ",")


def _offset_of_row(data: bytes, k: int) -> int:
    """The byte offset just after the k-th record (0: the header) of ``data``."""
    import io

    from nbcli.workflows.split import csv_records

    records = list(csv_records(io.BytesIO(data)))
    return sum(len(r) for r in records[: k + 1])


def _insert_row(data: bytes, k: int, row: bytes) -> bytes:
    cut = _offset_of_row(data, k)
    return data[:cut] + row + data[cut:]


def test_spellings_met_after_the_planning_sample_are_warned_about_after_the_read(tmp_path):
    from nbcli.io.profile import SAMPLE_ROWS

    n = SAMPLE_ROWS + 20
    labels = ["tea" if i % 2 else NFC for i in range(n)]
    labels[-3] = NFD  # only after the planning sample
    cats = ["x" if i % 3 else NFD for i in range(n)]
    cats[-2] = NFC
    path = tmp_path / "late.csv"
    path.write_text(
        "v,c,label\n" + "".join(f"{i % 7},{c},{t}\n" for i, (c, t) in enumerate(zip(cats, labels))),
        "utf-8",
    )
    model = tmp_path / "m.nbm"
    fit = nbcli_in_process("fit", "-m", "mixed", "-d", path, "-o", model)
    assert fit.returncode == 0, fit.stderr
    merged = [w for w in fit.stderr.splitlines() if "several Unicode forms" in w]
    assert len(merged) == 2
    assert "'label'" in merged[0] and "one class" in merged[0]
    assert "'c'" in merged[1] and "one category" in merged[1]
    from nbcli.io.modelfile import load_model

    assert sorted(load_model(model).model.classes_.tolist()) == sorted([NFC, "tea"])


def test_texts_fit_read_as_missing_are_read_so_when_the_model_scores(tmp_path):
    import dataclasses

    import pandas as pd

    from nbcli.io.modelfile import load_model, save_model

    stray, blank = _with_strays(tmp_path)
    models = {}
    for path in (stray, blank):
        models[path] = tmp_path / f"{path.stem}.nbm"
        run = nbcli_in_process("fit", "-m", "mixed", "-d", path, "-o", models[path], "-q")
        assert run.returncode == 0, run.stderr
    mf = load_model(models[stray])
    assert mf.training["read_as_missing"] == {"x": ["unknown", "n.a."]}
    assert "read_as_missing" not in load_model(models[blank]).training
    # The training file scores as the same rows with those cells empty.
    got, want = tmp_path / "got.csv", tmp_path / "want.csv"
    for model, data, out in ((models[stray], stray, got), (models[blank], blank, want)):
        run = nbcli_in_process("predict", "-m", model, "-d", data, "--proba", "-o", out, "-q")
        assert run.returncode == 0, run.stderr
    a, b = pd.read_csv(got), pd.read_csv(want)
    assert (a["prediction"] == b["prediction"]).all()
    np.testing.assert_allclose(a.filter(like="proba_"), b.filter(like="proba_"), atol=1e-12)
    for command in (
        ("evaluate", "--bootstrap", "0"),
        ("calibrate", "--method", "none", "--allow-training-data"),
    ):
        run = nbcli_in_process(command[0], "-m", models[stray], "-d", stray, *command[1:], "-q")
        assert run.returncode == 0, (command, run.stderr)
    twin = tmp_path / "twin.nbm"
    twin.write_bytes(models[stray].read_bytes())
    run = nbcli_in_process("compare", "-m", models[stray], "-m", twin, "-d", stray, "-q")
    assert run.returncode == 0, run.stderr
    # Only in that column: the same text elsewhere is not a missing cell.
    other = tmp_path / "other.csv"
    other.write_text("x,c,label\n0.5,unknown,a\n")
    run = nbcli_in_process("predict", "-m", models[stray], "-d", other)
    assert run.returncode == 2 and "'unknown'" in run.stderr and "column 'c'" in run.stderr
    # A model file without the record (written before it) reads as before.
    training = {k: v for k, v in mf.training.items() if k != "read_as_missing"}
    save_model(dataclasses.replace(mf, training=training), tmp_path / "old.nbm")
    run = nbcli_in_process("predict", "-m", tmp_path / "old.nbm", "-d", blank, "-q")
    assert run.returncode == 0, run.stderr
    run = nbcli_in_process("predict", "-m", tmp_path / "old.nbm", "-d", stray, "-q")
    assert run.returncode == 2 and "non-numeric value 'unknown' at row 8" in run.stderr


def test_a_damaged_read_as_missing_record_is_refused_on_load(tmp_path):
    import dataclasses

    from nbcli.io.modelfile import load_model, save_model

    stray, _ = _with_strays(tmp_path)
    model = tmp_path / "m.nbm"
    assert nbcli_in_process("fit", "-m", "mixed", "-d", stray, "-o", model, "-q").returncode == 0
    mf = load_model(model)
    bad = dataclasses.replace(mf, training={**mf.training, "read_as_missing": {"x": "unknown"}})
    save_model(bad, tmp_path / "bad.nbm")
    with pytest.raises(NbcliError, match="read_as_missing must map column names"):
        load_model(tmp_path / "bad.nbm")


def _short_rows_csv(tmp_path, quoted=False, n=60):
    rng = np.random.default_rng(1)
    lines = ["label,x1,x2,x3"]
    for i in range(n):
        lab = "a" if i % 2 else "b"
        x = rng.normal(size=3) + (2 if lab == "a" else 0)
        cells = [f"{v:.4f}" for v in x]
        if i % 9 == 4:
            cells[2] = ""  # an empty last cell: all four fields there
        lab = f'"{lab}"' if quoted and i % 5 == 0 else lab
        lines.append(",".join([lab, *cells]))
    lines[11] = lines[11].rsplit(",", 2)[0]  # line 12: two of four fields
    lines[30] = lines[30].rsplit(",", 1)[0]  # line 31: three of four fields
    path = tmp_path / ("q.csv" if quoted else "s.csv")
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("quoted", [False, True])
def test_rows_with_fewer_fields_than_the_header_are_warned_about_once(tmp_path, quoted):
    path = _short_rows_csv(tmp_path, quoted)
    want = (
        f"warning: {path}: 2 rows have fewer fields than the header, the first at line 12 "
        "(2 of 4); their missing fields are read as missing cells (check for lines cut short "
        "or run together)"
    )
    model = tmp_path / "m.nbm"
    runs = {"fit": nbcli_in_process("fit", "-m", "gaussian", "-d", path, "-o", model)}
    runs["predict"] = nbcli_in_process("predict", "-m", model, "-d", path, "-o", tmp_path / "p.csv")
    runs["evaluate"] = nbcli_in_process("evaluate", "-m", model, "-d", path, "--bootstrap", "0")
    runs["calibrate"] = nbcli_in_process(
        "calibrate", "-m", model, "-d", path, "--method", "none", "--allow-training-data"
    )
    runs["cv"] = nbcli_in_process("cv", "-m", "gaussian", "-d", path, "--folds", "3")
    # compare reads the file once per model: said once all the same.
    runs["compare"] = nbcli_in_process(
        "compare", "-m", model, "-m", model, "-d", path, "--bootstrap", "0"
    )
    runs["tune"] = nbcli_in_process(
        "tune", "-m", "gaussian", "-d", path, "--folds", "3", "--var-smoothing", "1e-9,1e-8"
    )
    for command, run in runs.items():
        assert run.returncode == 0, (command, run.stderr)
        assert run.stderr.count("fewer fields than the header") == 1, (command, run.stderr)
        assert want in run.stderr_lines, (command, run.stderr)
    # Chunks of a few rows count across chunks alike.
    run = nbcli_in_process("predict", "-m", model, "-d", path, "--chunk-size", "7")
    assert run.returncode == 0 and want in run.stderr_lines, run.stderr


def test_empty_last_cells_and_a_cut_short_last_line_are_not_short_rows(tmp_path):
    path = _short_rows_csv(tmp_path)
    model = tmp_path / "m.nbm"
    assert nbcli_in_process("fit", "-m", "gaussian", "-d", path, "-o", model).returncode == 0
    lines = path.read_text().splitlines()
    whole = [line for i, line in enumerate(lines) if i not in (11, 30)]
    full = tmp_path / "full.csv"
    full.write_text("\n".join(whole) + "\n")  # empty last cells only
    run = nbcli_in_process("predict", "-m", model, "-d", full)
    assert run.returncode == 0 and "fields" not in run.stderr, run.stderr
    cut = tmp_path / "cut.csv"
    cut.write_text("\n".join(whole) + "\n" + whole[1].rsplit(",", 2)[0])
    run = nbcli_in_process("predict", "-m", model, "-d", cut)
    assert run.returncode == 0, run.stderr
    assert "as if the file was cut short" in run.stderr
    assert "fewer fields than the header" not in run.stderr


def test_short_rows_are_found_in_a_gzip_file_and_on_stdin(tmp_path):
    import gzip

    path = _short_rows_csv(tmp_path)
    model = tmp_path / "m.nbm"
    assert nbcli_in_process("fit", "-m", "gaussian", "-d", path, "-o", model, "-q").returncode == 0
    packed = tmp_path / "s.csv.gz"
    packed.write_bytes(gzip.compress(path.read_bytes()))
    run = nbcli_in_process("predict", "-m", model, "-d", packed, "--chunk-size", "5")
    assert run.returncode == 0, run.stderr
    assert "2 rows have fewer fields than the header, the first at line 12 (2 of 4)" in run.stderr
    from tests.conftest import nbcli

    run = nbcli("predict", "-m", model, "-d", "-", stdin=path.read_bytes())
    assert run.returncode == 0, run.stderr
    assert "2 rows have fewer fields than the header, the first at line 12 (2 of 4)" in run.stderr


@pytest.mark.parametrize("chunk", ["100000", "333"])
def test_short_rows_among_many_rows_are_counted_line_by_line(tmp_path, chunk):
    # Few candidates among many rows: each line is found by counting line ends.
    path = _short_rows_csv(tmp_path, n=3000)
    lines = path.read_text().splitlines()
    lines[2500] = lines[2500].split(",", 1)[0]  # line 2501: one field of four
    path.write_text("\n".join(lines) + "\n")
    model = tmp_path / "m.nbm"
    assert nbcli_in_process("fit", "-m", "gaussian", "-d", path, "-o", model, "-q").returncode == 0
    run = nbcli_in_process("predict", "-m", model, "-d", path, "--chunk-size", chunk)
    assert run.returncode == 0, run.stderr
    assert "3 rows have fewer fields than the header, the first at line 12 (2 of 4)" in run.stderr


def test_a_category_column_holding_none_is_told_it_is_read_as_missing(tmp_path):
    # A survey's answer "None" is in pandas' list of missing-value words: the
    # column loses those cells unless --na-values says which marks the file uses.
    from nbcli.io.modelfile import load_model

    answers = ["Freq", "Some", "None", "Some", "NA", "Freq"] * 5
    rows = [f"{a},{i % 7 + i / 10},{'ab'[i % 2]}" for i, a in enumerate(answers)]
    path = tmp_path / "survey.csv"
    path.write_text("exer,x,label\n" + "\n".join(rows) + "\n")
    run = nbcli_in_process("fit", "-m", "mixed", "-d", path, "-o", tmp_path / "m.nbm")
    assert run.returncode == 0, run.stderr
    (line,) = [w for w in run.stderr.splitlines() if "'None'" in w]
    assert (
        f"column 'exer' has 5 cells 'None' in the first {len(rows)} rows, read as missing" in line
    )
    assert "(such as --na-values NA; empty cells are always missing)" in line
    assert load_model(tmp_path / "m.nbm").model.stats_.n_categories.tolist()[0] == 2
    # Said so, "None" is a category and the warning is gone.
    run = nbcli_in_process(
        "fit", "-m", "mixed", "-d", path, "-o", tmp_path / "m.nbm", "--na-values", "NA"
    )
    assert run.returncode == 0 and "'None'" not in run.stderr, run.stderr
    assert load_model(tmp_path / "m.nbm").model.stats_.n_categories.tolist()[0] == 3
