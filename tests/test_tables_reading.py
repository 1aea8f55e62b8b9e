"""Tables as they come: one reading for every command, and the rules for
cells that do not fit (empty fold cells, stray quotes, missing-label
spellings, Unicode spellings, stray text in numeric columns)."""

from __future__ import annotations

import numpy as np
import pytest

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
