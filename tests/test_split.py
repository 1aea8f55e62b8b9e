"""``nbcli split``: exact, stratified, seeded partitions in the input's format."""

import csv
import gzip
import io
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nbcli.errors import NbcliError
from nbcli.io.request import DataRequest
from nbcli.workflows.split import csv_records, split
from tests.conftest import nbcli_in_process


def _csv(tmp_path, name="d.csv", newline="\n", n=103):
    rng = np.random.default_rng(0)
    labels = rng.choice(["a", "b", "c"], size=n, p=[0.6, 0.3, 0.1])
    lines = ["x;note;label"]
    for i, lab in enumerate(labels):
        note = f'"line one{newline}line ""two"""' if i % 7 == 0 else f"n{i}"
        lines.append(f"{rng.normal():.17g};{note};{lab}")
    path = tmp_path / name
    path.write_bytes((newline.join(lines) + newline).encode())
    return path, labels


def _records(path):
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rb") as f:
        return list(csv_records(f))


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_csv_parts_partition_the_rows_byte_for_byte(tmp_path, newline):
    path, labels = _csv(tmp_path, newline=newline)
    out = tmp_path / "out"
    out.mkdir()
    report = split(DataRequest.of(str(path)), test=0.2, calib=10, seed=3, output_dir=out)
    header, *rows = _records(path)
    parts = {p: _records(out / f"d.{p}.csv") for p in ("train", "test", "calib")}
    assert all(recs[0] == header for recs in parts.values())
    written = [r for recs in parts.values() for r in recs[1:]]
    assert Counter(written) == Counter(rows)  # every row once, bytes unchanged
    assert {p: len(r) - 1 for p, r in parts.items()} == {"train": 72, "test": 21, "calib": 10}
    assert report.n_samples == {"train": 72, "test": 21, "calib": 10}
    # Stratified: each class's test share is its share of 21 rows, within one row.
    test_labels = pd.read_csv(out / "d.test.csv", sep=";")["label"]
    for lab, n in Counter(labels).items():
        assert abs((test_labels == lab).sum() - 21 * n / len(labels)) < 1
    assert report.class_counts["test"] == {k: int((test_labels == k).sum()) for k in "abc"}


def test_seed_reproduces_and_changes_the_split(tmp_path):
    path, _ = _csv(tmp_path)
    got = []
    for i, seed in enumerate([1, 1, 2]):
        out = tmp_path / f"o{i}"
        out.mkdir()
        split(DataRequest.of(str(path)), test=30, seed=seed, output_dir=out)
        got.append((out / "d.test.csv").read_bytes())
    assert got[0] == got[1] and got[0] != got[2]


def test_gzip_is_kept_and_no_stratify_draws_from_all_rows(tmp_path):
    path, _ = _csv(tmp_path)
    gz = tmp_path / "d.csv.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    out = tmp_path / "out"
    out.mkdir()
    report = split(DataRequest.of(str(gz)), test=0.5, stratify=False, output_dir=out)
    assert set(report.outputs) == {"train", "test"}
    train, test = (_records(out / f"d.{p}.csv.gz") for p in ("train", "test"))
    assert len(train) - 1 == 51 and len(test) - 1 == 52
    assert Counter(train[1:] + test[1:]) == Counter(_records(path)[1:])


def test_parquet_and_npz_keep_their_format(tmp_path):
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"a": rng.normal(size=40), "b": rng.integers(0, 9, 40), "y": [0, 1] * 20})
    df.to_parquet(tmp_path / "t.parquet")
    np.savez(
        tmp_path / "t.npz",
        X=df[["a", "b"]].to_numpy(float),
        y=df["y"].to_numpy(),
        feature_names=np.array(["a", "b"]),
    )
    for ext in ("parquet", "npz"):
        out = tmp_path / ext
        out.mkdir()
        split(DataRequest.of(str(tmp_path / f"t.{ext}"), target="y"), test=0.25, output_dir=out)
        if ext == "parquet":
            parts = [pd.read_parquet(out / f"t.{p}.parquet") for p in ("train", "test")]
            assert parts[1]["y"].value_counts().to_dict() == {0: 5, 1: 5}
            both = pd.concat(parts).sort_values("a").reset_index(drop=True)
            pd.testing.assert_frame_equal(both, df.sort_values("a").reset_index(drop=True))
        else:
            parts = [np.load(out / f"t.{p}.npz") for p in ("train", "test")]
            assert parts[1]["X"].shape == (10, 2)
            assert parts[0]["feature_names"].tolist() == ["a", "b"]
            X = np.vstack([p["X"] for p in parts])
            np.testing.assert_array_equal(np.sort(X[:, 0]), np.sort(df["a"].to_numpy()))


def test_bad_sizes_and_outputs_are_refused_before_any_work(tmp_path):
    path, _ = _csv(tmp_path)
    with pytest.raises(NbcliError, match="no row of 103 for training"):
        split(DataRequest.of(str(path)), test=60, calib=43, output_dir=tmp_path)
    (tmp_path / "a_file").write_text("x")
    with pytest.raises(NbcliError, match="is a file, not a folder"):
        split(DataRequest.of(str(path)), test=0.2, output_dir=tmp_path / "a_file")
    # Every size that is not one is refused in one wording: 0, 1.0, 1.5, text.
    for bad in ("0", "1.0", "1.5", "half"):
        res = nbcli_in_process("split", "-d", path, "--test", bad, "--output-dir", tmp_path)
        assert res.stderr == (
            "error: --test must be a fraction in (0, 1) of the rows (rounded up) or a row "
            f"count; got '{bad}'\n"
        )
        assert res.returncode == 2
    assert not list(tmp_path.glob("d.t*"))
    res = nbcli_in_process("split", "-d", path, "--test", "0.1", "--output-dir", tmp_path)
    assert res.returncode == 0, res.stderr
    assert "wrote " in res.stderr
    assert len(_records(tmp_path / "d.test.csv")) == 12
    res = nbcli_in_process(
        "split", "-d", tmp_path / "d.test.csv", "--test", "2", "--output-dir", tmp_path
    )
    assert res.returncode == 0, res.stderr
    assert len(_records(tmp_path / "d.test.test.csv")) == 3
    res = nbcli_in_process(
        "split", "-d", tmp_path / "d.test.csv", "--test", "1", "--output-dir", tmp_path
    )
    assert res.returncode == 0, res.stderr
    assert f"wrote {tmp_path / 'd.test.test.csv'} (1 row)\n" in res.stderr
    assert f"wrote {tmp_path / 'd.test.train.csv'} (10 rows)\n" in res.stderr


# Quotes, delimiters and line breaks inside fields (a lone carriage return
# and whitespace-only lines are the reader's business, not the splitter's).
_FIELD = st.text(alphabet='ab,"\n;x', max_size=6)


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.lists(_FIELD, min_size=1, max_size=4), min_size=1, max_size=8))
def test_records_are_the_rows_csv_reads(rows):
    buffer = io.StringIO(newline="")
    csv.writer(buffer, lineterminator="\n").writerows(rows)
    data = buffer.getvalue().encode()
    records = list(csv_records(io.BytesIO(data)))
    assert b"".join(records) == data  # every byte in one record, in order
    parsed = [next(csv.reader([r.decode()])) for r in records]
    assert parsed == list(csv.reader(io.StringIO(data.decode(), newline="")))


def test_a_missing_output_folder_is_made_as_predict_makes_one(tmp_path):
    path, _ = _csv(tmp_path)
    out = tmp_path / "new" / "parts"
    report = split(DataRequest.of(str(path)), test=0.2, seed=1, output_dir=out)
    names = sorted(p.name for p in out.iterdir())
    assert names == [f"{path.stem}.test.csv", f"{path.stem}.train.csv"], names
    rows = {p.name: len(pd.read_csv(p, sep=";")) for p in out.iterdir()}
    assert sum(rows.values()) == 103 and rows[f"{path.stem}.test.csv"] in (20, 21), rows
    assert report.outputs and all(str(out) in str(o) for o in report.outputs.values())


def test_an_npz_with_object_arrays_is_refused_as_fit_refuses_it(tmp_path):
    np.savez(
        tmp_path / "o.npz",
        X=np.ones((10, 2)),
        y=np.array(["a", "b"] * 5),
        names=np.array(["p", "q"], dtype=object),
    )
    with pytest.raises(NbcliError, match=r"holds object arrays \(pickled data\).*'names'"):
        split(DataRequest.of(str(tmp_path / "o.npz")), test=0.3, output_dir=tmp_path / "out")


def test_a_class_left_without_training_rows_is_warned_about(tmp_path):
    data = tmp_path / "seven.csv"
    data.write_text("x,label\n1,a\n2,a\n3,a\n4,b\n5,b\n6,b\n7,c\n")
    report = split(DataRequest.of(str(data)), test=0.3, output_dir=str(tmp_path / "out"))
    assert report.class_counts["train"]["c"] == 0
    assert any("class 'c' has no row in the training part" in w for w in report.warnings)
    even = split(DataRequest.of(str(data)), test=1, output_dir=str(tmp_path / "out2"))
    assert not any("no row in the training part" in w for w in even.warnings)


def test_lone_carriage_return_files_split_and_keep_their_line_ending(tmp_path):
    data = tmp_path / "mac.csv"
    rows = [f"{i},{'ab'[i % 2]}" for i in range(20)]
    data.write_bytes(("x,label\r" + "\r".join(rows) + "\r").encode())
    report = split(DataRequest.of(str(data)), test=0.25, output_dir=str(tmp_path / "out"))
    assert report.n_samples == {"train": 15, "test": 5}
    for part in ("train", "test"):
        raw = (tmp_path / "out" / f"mac.{part}.csv").read_bytes()
        assert b"\n" not in raw and raw.startswith(b"x,label\r") and raw.endswith(b"\r")
    lines = []
    for part in ("train", "test"):
        lines += (tmp_path / "out" / f"mac.{part}.csv").read_bytes().split(b"\r")[1:-1]
    assert sorted(lines) == sorted(r.encode() for r in rows)


def test_a_file_cut_inside_a_quoted_field_is_refused_by_split(tmp_path):
    data = tmp_path / "cut.csv"
    data.write_text('a,stage,label\n1,"x",a\n2,"y",b\n3,"z",a\n4,"Adult, ')
    with pytest.raises(NbcliError, match="line 5 opens a quoted field that is never closed"):
        split(DataRequest.of(str(data)), test=1, output_dir=str(tmp_path / "out"))
    assert not (tmp_path / "out" / "cut.train.csv").exists()


def test_a_failed_split_leaves_no_output_folder(tmp_path):
    path, _ = _csv(tmp_path)
    out = tmp_path / "sp_err" / "inner"
    run = nbcli_in_process(
        "split", "-d", path, "-t", "nosuch", "--test", "0.2", "--output-dir", out
    )
    assert run.returncode == 2 and "'nosuch'" in run.stderr, run.stderr
    assert not (tmp_path / "sp_err").exists()
    (tmp_path / "a_file").write_text("x")
    run = nbcli_in_process("split", "-d", path, "--test", "0.2", "--output-dir",
                           tmp_path / "a_file" / "sub")  # fmt: skip
    assert run.returncode == 2 and "cannot create the folder" in run.stderr, run.stderr


def test_an_interrupted_split_removes_the_folder_it_made_only(tmp_path, monkeypatch):
    from nbcli.workflows import split as split_module

    def interrupted(self, parts, handles):
        handles[0].write(b"x;note;label\n")
        raise KeyboardInterrupt

    monkeypatch.setattr(split_module._Csv, "write", interrupted)
    path, _ = _csv(tmp_path)
    kept = tmp_path / "kept"
    kept.mkdir()
    for out, left in ((tmp_path / "new" / "inner", tmp_path), (kept / "new", kept)):
        run = nbcli_in_process("split", "-d", path, "--test", "0.2", "--output-dir", out)
        assert run.returncode == 130, run.stderr
        # Only what existed before the run is left: the folder made for it is gone.
        assert sorted(p.name for p in left.iterdir()) == sorted(
            ["d.csv", "kept"] if left == tmp_path else []
        )
    monkeypatch.undo()
    run = nbcli_in_process("split", "-d", path, "--test", "0.2", "--output-dir", kept / "new")
    assert run.returncode == 0, run.stderr
    assert sorted(p.name for p in (kept / "new").iterdir()) == ["d.test.csv", "d.train.csv"]


def test_a_calibration_part_of_an_earlier_split_is_removed_with_it(tmp_path):
    path, _ = _csv(tmp_path)
    out = tmp_path / "out"
    first = nbcli_in_process(
        "split", "-d", path, "--test", "20", "--calib", "10", "--output-dir", out
    )
    assert first.returncode == 0, first.stderr
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    # Refused unasked, nothing written: the file may be the user's own.
    refused = nbcli_in_process(
        "split", "-d", path, "--test", "15", "--output-dir", out, "--seed", "5"
    )
    assert refused.returncode == 2
    assert f"{out / 'd.calib.csv'}: a part of an earlier split" in refused.stderr
    assert "--force" in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    run = nbcli_in_process(
        "split", "-d", path, "--test", "15", "--output-dir", out, "--seed", "5", "--force"
    )
    assert run.returncode == 0, run.stderr
    assert sorted(p.name for p in out.iterdir()) == ["d.test.csv", "d.train.csv"]
    assert f"removed {out / 'd.calib.csv'} (a part of an earlier split)" in run.stderr
    # The folder holds one split: its parts partition the input's rows.
    header, *rows = _records(path)
    written = _records(out / "d.train.csv")[1:] + _records(out / "d.test.csv")[1:]
    assert Counter(written) == Counter(rows)


def test_a_file_named_like_a_part_but_of_other_data_is_left_alone(tmp_path):
    path, _ = _csv(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    mine = out / "d.calib.csv"
    mine.write_text("p,q\n1,2\n")
    report = split(DataRequest.of(str(path)), test=15, output_dir=out)
    assert report.removed == []
    assert mine.read_text() == "p,q\n1,2\n"
    # A failed split removes nothing: the earlier parts stay together.
    split(DataRequest.of(str(path)), test=15, calib=5, output_dir=out, force=True)
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    with pytest.raises(NbcliError):
        split(DataRequest.of(str(path)), test=200, output_dir=out)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
