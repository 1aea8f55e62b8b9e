"""Tests for nbcli.io.data: formats, target and feature choice, and error messages."""

from __future__ import annotations

import gzip
import hashlib
import io
import sys
import types

import numpy as np
import pandas as pd
import pytest

from nbcli.errors import NbcliError
from nbcli.io.data import Dataset, file_sha256, iter_dataset, read_dataset, resolve_labels

IRIS_LIKE = (
    "sepal_length,sepal_width,species\n"
    "5.1,3.5,setosa\n"
    "4.9,3.0,setosa\n"
    "6.3,3.3,virginica\n"
    "5.8,2.7,versicolor\n"
)


def write(tmp_path, name, content) -> str:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return str(path)


def error_of(path, **kwargs) -> str:
    with pytest.raises(NbcliError) as info:
        read_dataset(path, **kwargs)
    message = str(info.value)
    assert "\n" not in message
    return message


def feed_stdin(monkeypatch, data: bytes):
    monkeypatch.setattr(sys, "stdin", types.SimpleNamespace(buffer=io.BytesIO(data)))


# --- target column ------------------------------------------------------------


def test_target_named_like_a_target_wins_over_last_column(tmp_path):
    path = write(tmp_path, "d.csv", "a,Label,b\n1,x,2\n3,y,4\n")
    ds = read_dataset(path)
    assert ds.target == "Label"
    assert ds.feature_names == ["a", "b"]
    np.testing.assert_array_equal(ds.X, [[1, 2], [3, 4]])
    assert ds.y.tolist() == ["x", "y"]
    assert ds.note == "using column 'Label' as the target (named like a target)"
    assert ds.path == path


def test_target_defaults_to_last_column(tmp_path):
    path = write(tmp_path, "d.csv", IRIS_LIKE)
    ds = read_dataset(path)
    assert ds.target == "species"
    assert ds.note == "using column 'species' as the target (the last column)"
    assert ds.y.tolist() == ["setosa", "setosa", "virginica", "versicolor"]
    assert ds.X.dtype == np.float64 and ds.X.shape == (4, 2)
    assert ds.X[2, 0] == 6.3


def test_two_target_like_names_are_refused_not_resolved_silently(tmp_path):
    # Either could be the target: guessing the last column (z) would train on
    # one of them as a feature without a word.
    path = write(tmp_path, "d.csv", "class,y,z\n1,2,a\n")
    with pytest.raises(NbcliError, match=r"several columns named like a target \('class', 'y'\)"):
        read_dataset(path)
    ds = read_dataset(path, target="z")
    assert ds.target == "z"
    assert ds.feature_names == ["class", "y"]


def test_target_hint_and_explicit_target(tmp_path):
    path = write(tmp_path, "d.csv", "a,b,c,label\n1,2,0,5\n3,4,1,6\n")
    hinted = read_dataset(path, target_hint="c")
    assert hinted.target == "c" and hinted.y.tolist() == [0, 1]
    assert hinted.feature_names == ["a", "b", "label"]
    assert hinted.note == "using column 'c' as the target (the name it had at training time)"
    explicit = read_dataset(path, target="b", drop=["label"])
    assert explicit.target == "b" and explicit.note is None
    assert explicit.feature_names == ["a", "c"]
    assert explicit.y.tolist() == [2, 4]
    # A hint naming a column that is not there is ignored.
    assert read_dataset(path, target_hint="species").target == "label"


def test_explicit_target_missing_lists_columns(tmp_path):
    path = write(tmp_path, "d.csv", IRIS_LIKE)
    message = error_of(path, target="label")
    assert message.startswith(f"{path}: ")
    assert "'label'" in message
    assert "'sepal_length', 'sepal_width', 'species'" in message


def test_prediction_never_guesses_the_target(tmp_path):
    path = write(tmp_path, "d.csv", "a,b,c\n1,2,3\n")
    ds = read_dataset(path, need_target=False)
    assert ds.y is None and ds.target is None and ds.note is None
    assert ds.feature_names == ["a", "b", "c"]
    hinted = read_dataset(path, need_target=False, target_hint="c")
    assert hinted.target == "c" and hinted.feature_names == ["a", "b"]
    assert hinted.y.tolist() == [3]


# --- features, drop, keep, model features ---------------------------------------


def test_features_drop_keep(tmp_path):
    path = write(tmp_path, "d.csv", "id,a,b,c,label\nr1,1,2,3,x\nr2,4,5,6,y\n")
    ds = read_dataset(path, features=["c", "a"], keep=["id"])
    assert ds.feature_names == ["c", "a"]
    np.testing.assert_array_equal(ds.X, [[3, 1], [6, 4]])
    assert ds.kept["id"].tolist() == ["r1", "r2"]
    dropped = read_dataset(path, drop=["b"], keep=["id"])
    assert dropped.feature_names == ["a", "c"]
    assert dropped.target == "label"


def test_unknown_feature_drop_and_keep_names_are_errors(tmp_path):
    path = write(tmp_path, "d.csv", "a,b,label\n1,2,x\n")
    assert "no column 'zz' to use as a feature" in error_of(path, features=["a", "zz"])
    assert "no column 'zz' to drop" in error_of(path, drop=["zz"])
    message = error_of(path, keep=["zz"])
    assert "no column 'zz' to keep" in message and "'a', 'b', 'label'" in message


def test_kept_values_are_read_as_text(tmp_path):
    path = write(tmp_path, "d.csv", "id,a,label\n007,1,x\n,2,y\n")
    ds = read_dataset(path, keep=["id"])
    assert ds.kept["id"].tolist() == ["007", ""]


def test_model_features_reorder_and_ignore_extra_columns(tmp_path):
    path = write(
        tmp_path, "d.csv", "extra,petal_width_cm,notes,sepal_length\n9,0.2,hi,5.1\n9,1.3,yo,6.0\n"
    )
    ds = read_dataset(path, model_features=["sepal_length", "petal_width_cm"], need_target=False)
    assert ds.feature_names == ["sepal_length", "petal_width_cm"]
    np.testing.assert_array_equal(ds.X, [[5.1, 0.2], [6.0, 1.3]])
    assert ds.y is None


def test_model_features_missing_column_is_named(tmp_path):
    path = write(tmp_path, "d.csv", "sepal_length,sepal_width\n5.1,3.5\n")
    message = error_of(path, model_features=["sepal_length", "petal_width_cm"], need_target=False)
    assert message.startswith(
        f"{path}: missing column 'petal_width_cm' that the model was trained on"
    )


# --- value errors ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (
            "a,age,y\n1,2,x\n1,3,x\n1,4,x\n1,5,x\n1,6,x\n1,7,x\n1,abc,y\n",
            "column 'age' has the non-numeric value 'abc' at row 7",
        ),
        ("x1,x3,y\n1,2,x\n1,,y\n", "column 'x3' has a missing value at row 2"),
        ("x1,x3,y\n1,2,x\n1,NaN,y\n", "column 'x3' has a missing value at row 2"),
        ("x1,x3,y\n1,2,x\ninf,1,y\n", "column 'x1' has an infinite value at row 2"),
        (
            "x1,x3,y\n1,2,x\n1,2,x\n1,-inf,y\nfoo,2,x\n",
            "column 'x3' has an infinite value at row 3",
        ),
        ("a,b,label\n1,2,x\n3,4,\n", "target column 'label' has a missing value at row 2"),
        ("a,b\n", "has a header but no data rows"),
        ("", "is empty"),
        ("\n\n", "is empty"),
        ("a,b,a,y,y\n1,2,3,4,5\n", "repeated column names in its header: 'a', 'y'"),
        ("a,b\n1,2\n3,4,5\n", "line 3 has 3 fields but the header has 2"),
        ("a,b\n1,2,3\n", "the first data row has more fields than the header"),
        ("a;b;y\n1,5;2;x\n", "non-numeric value '1,5' at row 1 (numbers need a '.'"),
    ],
)
def test_error_messages_name_file_column_and_row(tmp_path, content, expected):
    path = write(tmp_path, "bad.csv", content)
    message = error_of(path)
    assert message.startswith(f"{path}: ")
    assert expected in message


def test_first_offending_row_wins_across_columns(tmp_path):
    path = write(tmp_path, "d.csv", "a,b,y\n1,2,x\n1,,x\nzz,2,y\n")
    assert "column 'b' has a missing value at row 2" in error_of(path)


def test_blank_lines_do_not_count_as_rows(tmp_path):
    path = write(tmp_path, "d.csv", "a,y\n\n1,x\n\n   \n2,y\nq,z\n")
    assert "'q' at row 3" in error_of(path)


def test_booleans_are_not_numbers(tmp_path):
    # True/False are refused like any text in a numeric column (a boolean
    # column is categorical under the mixed model).
    path = write(tmp_path, "d.csv", "a,b,y\nTrue,1,x\nfalse,True,y\nFALSE,0.5,x\n")
    assert "column 'a' has the non-numeric value 'True' at row 1" in error_of(path)


def test_file_system_errors(tmp_path):
    missing = str(tmp_path / "nope.csv")
    assert error_of(missing) == f"{missing}: no such file; check the path"
    assert "is a directory" in error_of(str(tmp_path))


def test_non_utf8_bytes(tmp_path):
    path = write(tmp_path, "latin.csv", "a,b,y\n1,2,caf\xe9\n".encode("latin-1"))
    assert error_of(path).startswith(f"{path}: is not UTF-8 text")


# --- formats and delimiters -----------------------------------------------------


def test_bom_semicolon_and_tab(tmp_path):
    bom = write(tmp_path, "bom.csv", b"\xef\xbb\xbfa;b;c\n1;2;3\n4;5;6\n")
    ds = read_dataset(bom)
    assert ds.feature_names == ["a", "b"] and ds.target == "c"
    assert ds.y.tolist() == [3, 6] and ds.y.dtype == np.int64
    tsv = write(tmp_path, "d.tsv", "a\tb\tname,with,commas\n1\t2\tx\n")
    ds = read_dataset(tsv)
    assert ds.feature_names == ["a", "b"] and ds.target == "name,with,commas"


def test_explicit_delimiter(tmp_path):
    path = write(tmp_path, "d.txt", "x;y,z\n1;2,3\n")
    detected = read_dataset(path, need_target=False, features=["z"])
    np.testing.assert_array_equal(detected.X, [[3]])
    explicit = read_dataset(path, delimiter=";", target="y,z")
    assert explicit.feature_names == ["x"]
    assert explicit.y.tolist() == ["2,3"]


def test_gzip_csv(tmp_path):
    path = write(tmp_path, "d.csv.gz", gzip.compress(IRIS_LIKE.encode()))
    ds = read_dataset(path)
    assert ds.y.tolist()[2] == "virginica"
    assert ds.X[3].tolist() == [5.8, 2.7]
    truncated = write(tmp_path, "t.csv.gz", gzip.compress(IRIS_LIKE.encode())[:-12])
    assert "is not a valid gzip file or is truncated" in error_of(truncated)


def test_stdin_csv_hash_and_gzip(monkeypatch):
    data = IRIS_LIKE.encode()
    feed_stdin(monkeypatch, data)
    assert file_sha256("-") == hashlib.sha256(data).hexdigest()
    ds = read_dataset("-")
    assert ds.path == "-" and ds.X.shape == (4, 2) and ds.y[0] == "setosa"
    packed = gzip.compress(data)
    feed_stdin(monkeypatch, packed)
    assert read_dataset("-").y.tolist()[3] == "versicolor"
    assert file_sha256("-") == hashlib.sha256(packed).hexdigest()
    feed_stdin(monkeypatch, b"a,b\n1,x\n")
    assert error_of("-", features=["a", "q"]).startswith("<stdin>: has no column 'q'")


def test_stdin_npz(monkeypatch):
    buffer = io.BytesIO()
    np.savez(buffer, X=np.array([[1.0, 2.0]]), y=np.array([4]))
    feed_stdin(monkeypatch, buffer.getvalue())
    ds = read_dataset("-")
    assert ds.X.tolist() == [[1.0, 2.0]] and ds.y.tolist() == [4]


def test_npz_with_and_without_names(tmp_path):
    path = str(tmp_path / "named.npz")
    np.savez(
        path,
        X=np.arange(6.0).reshape(3, 2),
        y=np.array(["a", "b", "a"]),
        feature_names=np.array(["f1", "f2"]),
    )
    ds = read_dataset(path)
    assert ds.feature_names == ["f1", "f2"] and ds.target == "y"
    assert ds.y.tolist() == ["a", "b", "a"]
    swapped = read_dataset(path, model_features=["f2", "f1"], need_target=False)
    np.testing.assert_array_equal(swapped.X[:, 0], [1, 3, 5])
    assert "missing column 'f9'" in error_of(path, model_features=["f9"], need_target=False)

    plain = str(tmp_path / "plain.npz")
    np.savez(plain, X=np.arange(8).reshape(2, 4), y=np.array([1.0, 0.0]))
    ds = read_dataset(plain)
    assert ds.feature_names == ["x0", "x1", "x2", "x3"]
    assert ds.X.dtype == np.float64 and ds.y.dtype == np.int64 and ds.y.tolist() == [1, 0]
    by_position = read_dataset(plain, model_features=list("abcd"), need_target=False)
    assert by_position.feature_names == list("abcd")
    assert (
        error_of(plain, model_features=list("abcde"), need_target=False)
        == f"{plain}: has 4 features, the model expects 5"
    )


def test_npz_feature_count_mismatch_message(tmp_path):
    path = str(tmp_path / "five.npz")
    np.savez(path, X=np.zeros((2, 5)))
    message = error_of(path, model_features=list("abcd"), need_target=False)
    assert message == f"{path}: has 5 features, the model expects 4"


def test_npz_errors(tmp_path):
    wrong_shape = str(tmp_path / "w.npz")
    np.savez(wrong_shape, X=np.arange(6.0), y=np.arange(6))
    assert "array 'X' has shape (6,) and dtype float64" in error_of(wrong_shape)

    no_y = str(tmp_path / "n.npz")
    np.savez(no_y, X=np.zeros((2, 2)), labels=np.arange(2))
    message = error_of(no_y)
    assert "has no array 'y'" in message and "'X', 'labels'" in message
    assert read_dataset(no_y, need_target=False).y is None
    assert read_dataset(no_y, y_key="labels").y.tolist() == [0, 1]

    continuous = str(tmp_path / "c.npz")
    np.savez(continuous, X=np.zeros((2, 2)), y=np.array([0.0, 0.25]))
    assert "labels in y are continuous numbers" in error_of(continuous)

    mismatch = str(tmp_path / "m.npz")
    np.savez(mismatch, X=np.zeros((3, 2)), y=np.arange(2))
    assert "array 'X' has 3 rows but 'y' has shape (2,)" in error_of(mismatch)

    nan = str(tmp_path / "nan.npz")
    np.savez(nan, X=np.array([[1.0, 2.0], [3.0, np.nan]]), y=np.arange(2))
    assert "column 'x1' has a missing value at row 2" in error_of(nan)


def test_npz_pickled_corrupt_and_truncated(tmp_path):
    pickled = str(tmp_path / "p.npz")
    np.savez(pickled, X=np.array([[1, "a"]], dtype=object), y=np.array([1]))
    assert "holds object arrays (pickled data), which nbcli refuses to load" in error_of(pickled)

    corrupt = write(tmp_path, "c.npz", b"this is not a zip archive at all")
    assert error_of(corrupt).startswith(f"{corrupt}: is not a valid .npz archive")

    good = io.BytesIO()
    np.savez_compressed(good, X=np.random.default_rng(0).random((200, 3)), y=np.arange(200))
    raw = good.getvalue()
    truncated = write(tmp_path, "t.npz", raw[: len(raw) // 2])
    assert "is not a valid .npz archive" in error_of(truncated)
    damaged = bytearray(raw)
    damaged[100:160] = b"\x00" * 60
    damaged_path = write(tmp_path, "d.npz", bytes(damaged))
    assert "is not a valid .npz archive" in error_of(damaged_path)


def test_parquet_round_trip(tmp_path):
    pytest.importorskip("pyarrow")
    path = str(tmp_path / "d.parquet")
    frame = pd.DataFrame(
        {"id": ["r1", "r2", "r3"], "a": [1.5, 2.0, 3.0], "b": [1, 2, 3], "label": [0, 1, 0]}
    )
    frame.to_parquet(path)
    ds = read_dataset(path, keep=["id"])
    assert ds.feature_names == ["a", "b"] and ds.target == "label"
    np.testing.assert_array_equal(ds.X, frame[["a", "b"]].to_numpy(dtype=float))
    assert ds.y.dtype == np.int64 and ds.y.tolist() == [0, 1, 0]
    assert ds.kept["id"].tolist() == ["r1", "r2", "r3"]
    chunks = list(iter_dataset(path, chunk_size=2, model_features=["b", "a"], need_target=False))
    np.testing.assert_array_equal(np.vstack([c.X for c in chunks]), [[1, 1.5], [2, 2], [3, 3]])


# --- labels and streaming ---------------------------------------------------------


@pytest.mark.parametrize(
    ("labels", "expected", "kind"),
    [
        (["3", "10", "-2"], [3, 10, -2], "i"),
        (["01", "1"], ["01", "1"], "O"),
        (["1.0", "2"], ["1.0", "2"], "O"),
        (["3", "cat"], ["3", "cat"], "O"),
        (["+3"], ["+3"], "O"),
        (["99999999999999999999"], ["99999999999999999999"], "O"),
    ],
)
def test_resolve_labels(labels, expected, kind):
    # Text stays text as an object array: one reference a row, not the
    # longest label's width.
    resolved = resolve_labels(np.array(labels))
    assert resolved.dtype.kind == kind
    assert resolved.tolist() == expected


def test_csv_labels_that_look_like_integers_become_int64(tmp_path):
    path = write(tmp_path, "d.csv", "a,y\n1,2\n2,10\n")
    assert read_dataset(path).y.dtype == np.int64
    path = write(tmp_path, "e.csv", "a,y\n1,02\n2,10\n")
    assert read_dataset(path).y.tolist() == ["02", "10"]


def test_iter_dataset_matches_read_dataset(tmp_path):
    rows = ["f1,f2,f3,label"]
    rng = np.random.default_rng(3)
    values = rng.normal(size=(10, 3))
    labels = ["1", "2", "1", "2", "1", "2", "cat", "1", "2", "dog"]
    for row, label in zip(values, labels):
        rows.append(",".join(repr(float(v)) for v in row) + "," + label)
    path = write(tmp_path, "d.csv", "\n".join(rows) + "\n")
    whole = read_dataset(path)
    stream = iter_dataset(path, chunk_size=3, raw_labels=True)
    assert stream.feature_names == ["f1", "f2", "f3"] and stream.target == "label"
    chunks = list(stream)
    assert [c.X.shape[0] for c in chunks] == [3, 3, 3, 1]
    assert all(isinstance(c, Dataset) for c in chunks)
    np.testing.assert_array_equal(np.vstack([c.X for c in chunks]), whole.X)
    np.testing.assert_array_equal(whole.X, values)
    streamed = np.concatenate([c.y for c in chunks])
    assert streamed.dtype.kind == "O"  # text, one reference a row
    assert streamed.tolist() == whole.y.tolist() == labels
    # Resolved per chunk, the first chunk alone looks like integers.
    resolved = list(iter_dataset(path, chunk_size=3))
    assert resolved[0].y.dtype == np.int64 and resolved[2].y.dtype.kind == "O"
    # A stream can be iterated again from the top.
    assert len(list(stream)) == 4


def test_iter_dataset_reports_file_rows_not_chunk_rows(tmp_path):
    path = write(tmp_path, "d.csv", "a,y\n1,x\n2,x\n3,x\n4,x\nbad,x\n")
    stream = iter_dataset(path, chunk_size=2)
    with pytest.raises(NbcliError, match=r"non-numeric value 'bad' at row 5"):
        list(stream)


def test_iter_dataset_npz_and_stdin(tmp_path, monkeypatch):
    path = str(tmp_path / "d.npz")
    X = np.arange(14.0).reshape(7, 2)
    np.savez(path, X=X, y=np.arange(7) % 2)
    chunks = list(iter_dataset(path, chunk_size=3))
    assert [len(c.y) for c in chunks] == [3, 3, 1]
    np.testing.assert_array_equal(np.vstack([c.X for c in chunks]), X)
    feed_stdin(monkeypatch, IRIS_LIKE.encode())
    chunks = list(iter_dataset("-", chunk_size=3))
    assert [c.y.tolist() for c in chunks] == [["setosa", "setosa", "virginica"], ["versicolor"]]
    with pytest.raises(NbcliError, match="chunk size must be a positive"):
        iter_dataset(path, chunk_size=0)


def test_parquet_needs_no_pyarrow(tmp_path, monkeypatch):
    """Parquet is read by polars alone; a damaged file is still named as such."""
    import polars as pl

    path = str(tmp_path / "d.parquet")
    pl.DataFrame({"a": [1.5, 2.0], "label": ["p", "q"]}).write_parquet(path)
    bad = write(tmp_path, "bad.parquet", b"PAR1 not really")
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "pyarrow.parquet", None)
    ds = read_dataset(path)
    assert ds.X[:, 0].tolist() == [1.5, 2.0] and ds.y.tolist() == ["p", "q"]
    assert error_of(bad).startswith(f"{bad}: is not a valid Parquet file")


def test_non_utf8_late_in_file_while_streaming(tmp_path):
    body = "a,y\n" + "1,x\n" * 50 + "2,caf\xe9\n"
    path = write(tmp_path, "late.csv", body.encode("latin-1"))
    with pytest.raises(NbcliError, match=r"late\.csv: is not UTF-8 text"):
        list(iter_dataset(path, chunk_size=7))


def test_model_features_exclude_features_and_drop(tmp_path):
    path = write(tmp_path, "d.csv", "a,b\n1,2\n")
    message = error_of(path, model_features=["a"], drop=["b"], need_target=False)
    assert "cannot be combined with the model's feature list" in message


def test_npz_kept_array_and_boolean_labels(tmp_path):
    path = str(tmp_path / "k.npz")
    np.savez(path, X=np.ones((2, 2)), y=np.array([True, False]), ids=np.array(["a", "b"]))
    ds = read_dataset(path, keep=["ids"])
    assert ds.y.dtype == np.bool_ and ds.y.tolist() == [True, False]
    assert ds.kept["ids"].tolist() == ["a", "b"]
    assert "has no array 'row_id' to keep" in error_of(path, keep=["row_id"])


def test_parquet_errors(tmp_path):
    pytest.importorskip("pyarrow")
    corrupt = write(tmp_path, "bad.parquet", b"not parquet at all")
    assert error_of(corrupt).startswith(f"{corrupt}: is not a valid Parquet file")
    path = str(tmp_path / "s.parquet")
    pd.DataFrame({"a": ["1", "x"], "label": ["p", "q"]}).to_parquet(path)
    assert "column 'a' has the non-numeric value 'x' at row 2" in error_of(path)


def test_one_lone_carriage_return_among_line_feeds_is_named_by_its_line(tmp_path):
    path = write(tmp_path, "mixed.csv", "x,label\n1,a\n2,a\n5,b\r6,b\n7,b\n")
    message = error_of(path)
    assert message.startswith(f"{path}: line 4 ends in a carriage return alone"), message
    # A file whose lines all end so is read, as before.
    only_cr = write(tmp_path, "mac.csv", "x,label\r1,a\r2,a\r5,b\r6,b\r7,b\r")
    assert read_dataset(only_cr).X[:, 0].tolist() == [1.0, 2.0, 5.0, 6.0, 7.0]
