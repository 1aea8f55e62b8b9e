"""The CSV reader (polars' streaming scan) keeps the guarantees users have:
correctly rounded numbers, quoting, blank lines, booleans, missing cells,
exact chunk boundaries, errors at the right row in mid-file, and reading the
next chunk ahead without changing what comes out or in which order."""

from __future__ import annotations

import gzip

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nbcli.errors import NbcliError
from nbcli.io.data import iter_dataset, read_dataset
from nbcli.io.profile import SAMPLE_ROWS
from nbcli.io.readers import read_ahead


def write(tmp_path, name, content) -> str:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode("utf-8"))
    return str(path)


HARD_NUMBERS = [
    "2.2250738585072011e-308",
    "2.2250738585072012e-308",
    "4.9406564584124654e-324",
    "1.7976931348623157e308",
    "9007199254740993",
    "0.1",
    "1e23",
    "8.41e21",
    "5e-324",
    "179769313486231580793728971405301e276",
    "1.00000000000000011102230246251565404236316680908203125",
    "+1.5",
    ".5",
    "5.",
    "1E5",
    "7.0710678118654752440084436210484903928483593768847403658833986900e-1",
]


def test_hard_numbers_are_read_correctly_rounded(tmp_path):
    rng = np.random.default_rng(11)
    texts = (
        HARD_NUMBERS
        + [repr(float(v)) for v in rng.lognormal(0, 60, 200)]
        + [
            f"{d}e{rng.integers(-300, 280)}"
            for d in (
                "".join(map(str, rng.integers(0, 10, rng.integers(17, 30)))) for _ in range(200)
            )
        ]
    )
    path = write(tmp_path, "n.csv", "x,label\n" + "".join(f"{t},a\n" for t in texts))
    X = read_dataset(path).X[:, 0]
    assert X.tobytes() == np.array([float(t) for t in texts]).tobytes()
    chunked = np.concatenate([c.X[:, 0] for c in iter_dataset(path, chunk_size=7)])
    assert chunked.tobytes() == X.tobytes()


def test_signs_of_zero_are_kept(tmp_path):
    X = read_dataset(write(tmp_path, "z.csv", "a,b,y\n-0.0,1.5,x\n-0,3,y\n0,1,x\n")).X
    assert np.signbit(X[:2, 0]).tolist() == [True, True] and not np.signbit(X[2, 0])


def test_cells_and_layouts(tmp_path):
    def read(content, **options):
        return read_dataset(write(tmp_path, "e.csv", content), **options)

    assert read('a,y\n1,"x,z"\n2,y\n').y.tolist() == ["x,z", "y"]
    assert read('"a","y"\n1,x\n2,y\n').feature_names == ["a"]
    # True/False are words, not numbers: a boolean column is categorical (mixed).
    with pytest.raises(NbcliError, match=r"column 'a' has the non-numeric value 'True' at row 1"):
        read("a,b,y\nTrue,1,x\nfalse,0.5,y\n")
    assert read("a,b,y\n 1.5,2 ,x\n").X.tolist() == [[1.5, 2.0]]
    assert read("\n\n1,y\n2,x\n3,z\n").X[:, 0].tolist() == [2, 3]
    assert read("a,y\n1,x\n   \n\n2,y\n").X[:, 0].tolist() == [1, 2]
    assert read("a,y\r1,x\r2,y\r").y.tolist() == ["x", "y"]
    assert read("a,y\r\n1,x\r\n2,y").y.tolist() == ["x", "y"]
    assert read("\ufeffa,y\n1,x\n").feature_names == ["a"]
    assert read("a:b:y\n1:2:x\n3:4:y\n", delimiter=":").X.tolist() == [[1, 2], [3, 4]]
    assert read("id,a,y\n1,2,x\n3,4,y\n", keep=["id"]).kept["id"].tolist() == ["1", "3"]
    assert read("a,y\n1,NA\n2,None\n").y.tolist() == ["NA", "None"]
    both = read("id,a,y\n1,2,x\n3,4,y\n", features=["id", "a"], keep=["id"])
    assert both.X.tolist() == [[1, 2], [3, 4]] and both.kept["id"].tolist() == ["1", "3"]
    with pytest.raises(NbcliError, match=r"column 'b' has a missing value at row 1"):
        read("a,b,y\n1,NA,x\n2,3,y\n")
    with pytest.raises(NbcliError, match=r"column 'b' has a missing value at row 2"):
        read("a,b,y\n1,2,x\n3\n")
    with pytest.raises(NbcliError, match=r"target column 'y' has a missing value at row 2"):
        read("a,b,y\n1,2,x\n3,4\n")
    with pytest.raises(NbcliError, match=r"column 'b' has an infinite value at row 1"):
        read("a,b,y\n1,1e999,x\n2,3,y\n")
    with pytest.raises(NbcliError, match=r"target column 'y' has a missing value at row 2"):
        read('a,y\n1,x\n2,""\n')
    with pytest.raises(NbcliError, match=r"line 3 has 4 fields but the header has 3"):
        read("a,b,y\n1,2,x\n3,4,y,5\n")
    with pytest.raises(NbcliError, match=r"numbers need a '\.' as the decimal point"):
        read("a;b;y\n1,5;2;x\n")
    with pytest.raises(
        NbcliError, match=r"^[^\n]*e\.csv: line 3 opens a quoted field that is never"
    ):
        read('a,y\n1,x\n2,"y')


def test_a_line_over_the_limit_is_an_error(tmp_path, monkeypatch):
    from nbcli.io import csv_format

    monkeypatch.setattr(csv_format, "LINE_LIMIT", 1000)
    path = write(tmp_path, "l.csv", "a,y\n1,x\n2," + "z" * 2000 + "\n3,y\n")
    with pytest.raises(NbcliError, match=r"l\.csv: row 2 is longer than"):
        read_dataset(path)
    assert read_dataset(write(tmp_path, "k.csv", "a,y\n1,x\n2,y\n")).n_samples == 2


def numeric_rows(n: int, seed: int = 0) -> tuple[np.ndarray, list[str]]:
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    return X, [f"{a!r},{b!r},{c!r},{'xyz'[i % 3]}" for i, (a, b, c) in enumerate(X.tolist())]


@pytest.mark.parametrize("chunk_size", [1, 7, 100, 599, 5000])
def test_chunks_are_exactly_chunk_size_rows(tmp_path, chunk_size):
    X, rows = numeric_rows(600)
    path = write(tmp_path, "s.csv", "a,b,c,label\r\n" + "\r\n".join(rows))
    chunks = list(iter_dataset(path, chunk_size=chunk_size))
    full, rest = divmod(600, chunk_size)
    assert [c.n_samples for c in chunks] == [chunk_size] * full + ([rest] if rest else [])
    np.testing.assert_array_equal(np.vstack([c.X for c in chunks]), X)
    assert np.concatenate([c.y for c in chunks]).tolist() == [r[-1] for r in rows]


@pytest.mark.parametrize(
    "row, line, message",
    [
        (951, "1.0,abc,2.0,x", "column 'b' has the non-numeric value 'abc' at row 951;"),
        (951, "1.0,,2.0,x", "column 'b' has a missing value at row 951;"),
        (951, "1.0,2.0,3.0,", "target column 'label' has a missing value at row 951;"),
        (951, "1.0,2.0,3.0,x,9", "line 952 has 5 fields but the header has 4;"),
        (951, '1.0,2.0,3.0,"x"', None),
        (502, "-0,1,2,y", None),
    ],
)
def test_mid_file_cells(tmp_path, row, line, message):
    X, rows = numeric_rows(1000, seed=1)
    rows[row - 1] = line
    path = write(tmp_path, "m.csv", "a,b,c,label\n" + "\n".join(rows) + "\n")
    seen = []
    if message is not None:
        with pytest.raises(NbcliError) as caught:
            for chunk in iter_dataset(path, chunk_size=100):
                seen.append(chunk.n_samples)
        assert message in str(caught.value)
        # Every chunk before a bad cell came out first, in order (a malformed
        # line can stop the parser before the rows above it are handed out).
        if "line" not in message:
            assert seen == [100] * ((row - 1) // 100)
        return
    chunks = list(iter_dataset(path, chunk_size=100))
    assert [c.n_samples for c in chunks] == [100] * 10
    cells = line.split(",")
    assert chunks[(row - 1) // 100].y[(row - 1) % 100] == cells[3].strip('"')
    X[row - 1] = [float(v) for v in cells[:3]]
    np.testing.assert_array_equal(np.vstack([c.X for c in chunks]), X)


def test_read_ahead_keeps_order_errors_and_closes():
    def items():
        try:
            yield 1
            yield 2
            raise ValueError("third")
        finally:
            closed.append(True)

    closed = []
    got = []
    with pytest.raises(ValueError, match="third"):
        for item in read_ahead(items()):
            got.append(item)
    assert got == [1, 2] and closed == [True]
    closed.clear()
    ahead = read_ahead(items())
    assert next(ahead) == 1
    ahead.close()
    assert closed == [True]


def test_the_next_chunk_is_parsed_ahead(tmp_path, monkeypatch):
    """While the caller holds chunk i, chunk i + 1 is already being read."""
    import threading

    from nbcli.io import csv_format

    _, rows = numeric_rows(50)
    path = write(tmp_path, "a.csv", "a,b,c,label\n" + "\n".join(rows) + "\n")
    threads = []
    real = csv_format.CsvReader._convert

    def convert(self, *args, **kwargs):
        threads.append(threading.current_thread().name)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(csv_format.CsvReader, "_convert", convert)
    stream = iter(iter_dataset(path, chunk_size=10))
    next(stream)
    deadline = 200
    while len(threads) < 2 and deadline:
        threading.Event().wait(0.01)
        deadline -= 1
    assert len(threads) == 2  # the second chunk was read before it was asked for
    assert all(name.startswith("nbcli-read") for name in threads)
    assert len(list(stream)) == 4


# ---------------------------------------------------------------------------
# Generated files: chunked reads equal whole reads; gzip equals plain

CELLS = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.floats(-1e6, 1e6).map(lambda v: f"{v:.3e}"),
    st.integers(-(10**25), 10**25).map(str),
    st.sampled_from(
        ["-0", "0", " 1.5", "2 ", ".5", "NA", "", "nan", "inf", "True", "abc", "1,5", '"7"']
    ),
)
LABELS = st.sampled_from(["a", "b", "NA", "None", " x", "01", "1", "", "é", '"q"', "c d"])


@st.composite
def csv_files(draw):
    n_features = draw(st.integers(1, 3))
    n_rows = draw(st.integers(1, 12))
    delimiter = draw(st.sampled_from([",", ";", "\t", "|"]))
    names = [f"f{j}" for j in range(n_features)] + ["id", "label"]
    lines = [delimiter.join(names)]
    for i in range(n_rows):
        cells = [draw(CELLS) for _ in range(n_features)] + [f"r{i}", draw(LABELS)]
        lines.append(delimiter.join(cells))
        if draw(st.integers(0, 12)) == 0:
            lines.append(draw(st.sampled_from(["", "  "])))
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    raw = (newline.join(lines) + draw(st.sampled_from([newline, ""]))).encode("utf-8")
    if draw(st.integers(0, 5)) == 0:
        raw = b"\xef\xbb\xbf" + raw
    return raw


def outcome(path, chunk_size=None, **options):
    try:
        if chunk_size is None:
            chunks = [read_dataset(path, **options)]
        else:
            chunks = list(iter_dataset(path, chunk_size=chunk_size, raw_labels=True, **options))
    except NbcliError as exc:
        return ("error", str(exc).split(": ", 1)[1])
    X = np.vstack([c.X for c in chunks])
    y = None if chunks[0].y is None else np.concatenate([c.y for c in chunks]).astype(str)
    return ("ok", X.tobytes(), None if y is None else y.tolist(), chunks[0].feature_names)


@settings(
    max_examples=80,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    raw=csv_files(),
    chunk_size=st.sampled_from([1, 2, 5]),
    options=st.sampled_from([{}, {"keep": ["id"]}, {"need_target": False, "drop": ["id"]}]),
)
def test_generated_files_read_alike_whole_chunked_and_gzipped(tmp_path, raw, chunk_size, options):
    plain = write(tmp_path, "g.csv", raw)
    packed = write(tmp_path, "g.csv.gz", gzip.compress(raw))
    whole = outcome(plain, None, **options)
    assert outcome(plain, chunk_size, **options) == whole
    assert outcome(packed, chunk_size, **options) == whole


def test_rows_stay_in_order_up_to_a_bad_cell_in_chunks_of_one(tmp_path):
    """A bad cell far into the file: every row before it comes out, in order,
    in chunks of one row, then the error names it (a typed scan that stopped
    at the cell could hand out rows from beyond it first)."""
    lines = [f"{i}.5,r{i},a" for i in range(3000)] + ["x,bad,a"]
    lines += [f"{i}.5,s{i},a" for i in range(3000)]
    path = write(tmp_path, "o.csv", "f0,id,label\n" + "\n".join(lines) + "\n")
    seen = []
    with pytest.raises(NbcliError, match=r"column 'f0' has the non-numeric value 'x' at row 3001"):
        for chunk in iter_dataset(path, chunk_size=1, keep=["id"]):
            seen.extend(chunk.kept["id"].tolist())
    assert seen == [f"r{i}" for i in range(3000)]


def test_the_plan_gives_every_feature_a_kind_and_reads_words_and_categories(tmp_path):
    from nbcli.io.formats import open_reader
    from nbcli.io.plan import CATEGORICAL, LABEL, NUMERIC, RAW, WORDS
    from nbcli.io.request import DataRequest
    from nbcli.io.sources import Source

    path = write(tmp_path, "k.csv", "id,a,b,label\n1,2,3,x\n")
    reader = open_reader(Source(path), DataRequest.of(keep=["id"]))
    plan = reader.plan
    assert plan.kinds == {"a": NUMERIC, "b": NUMERIC} and plan.numeric == ["a", "b"]
    assert (plan.kind("label"), plan.kind("id"), plan.kind("a")) == (LABEL, RAW, NUMERIC)
    words = open_reader(Source(path), DataRequest.of(keep=["id"], kinds={"b": WORDS}))
    assert words.plan.kinds["b"] == WORDS and words.plan.matrix == ["a"]
    categorical = open_reader(Source(path), DataRequest.of(keep=["id"], kinds={"b": CATEGORICAL}))
    assert categorical.plan.kinds["b"] == CATEGORICAL and list(categorical.encoders) == ["b"]


def _sample_both_ways(path):
    """The planning sample as the reader takes it (from the file's first lines)
    and as the parser hands it out from the whole file."""
    from nbcli.io.csv_format import CsvReader
    from nbcli.io.request import DataRequest
    from nbcli.io.sources import Source

    reader = CsvReader(Source(path), DataRequest())
    whole = reader._text_rows(0, SAMPLE_ROWS)

    def whole_file(start, n):
        raise AssertionError("the sample was read from the whole file")

    reader._text_rows = whole_file
    return reader._planning_sample(), whole


@pytest.mark.parametrize("gzipped", [False, True])
def test_planning_sample_from_first_lines_equals_whole_file(tmp_path, gzipped):
    # Quoted line breaks in every other row, blank lines, and a cut that
    # falls inside a quoted cell: the sample is the parser's first rows.
    rows = [
        f'{i},"word {i % 5}\nsecond line",{i % 3}' if i % 2 else f"{i},,{i % 3}\n"
        for i in range(SAMPLE_ROWS + 40)
    ]
    text = "a,b,label\n" + "\n".join(rows) + "\n"
    data = gzip.compress(text.encode()) if gzipped else text.encode()
    path = write(tmp_path, "s.csv.gz" if gzipped else "s.csv", data)
    first, whole = _sample_both_ways(path)
    assert first.height == SAMPLE_ROWS
    assert first.equals(whole)
    assert first["b"][2] == "word 1\nsecond line"


def test_planning_sample_of_a_short_file_is_all_of_it(tmp_path):
    path = write(tmp_path, "short.csv", "\n\nx,label\n1,a\n\n2,b\n3,a")
    first, whole = _sample_both_ways(path)
    # The blank line between data rows is a row of the parser (of nulls).
    assert first.equals(whole)
    assert first["x"].to_list() == ["1", None, "2", "3"]


@pytest.mark.parametrize(
    "cells",
    [
        ["1.5", "2", "-3e5", "4"],
        [str(i) for i in range(12)],
        [str(i + 1) for i in range(12)],
        ["007", "1", "1.0", "2"],
        ["nan", "NaN", "nan", "nan"],
        ["1", "nan", "2", "3"],
        ["inf", "1", "-inf", "2"],
        ["1", "", "2", "3"],
        ["True", "False", "True", "True"],
        ["2024-01-02", "2024-02-03", "2024-03-04", "2024-04-05"],
        ["a", "1", "b", "2"],
        [" 1", "2 ", "3", "4"],
        ["1", "NA", "2", "3"],
    ],
)
def test_planning_sample_profiles_every_column_as_its_text_does(tmp_path, cells):
    from nbcli.io.cells import NA_STRINGS
    from nbcli.io.profile import profile_columns

    rows = [f"{c},{i % 2},{i}" for i, c in enumerate(cells * 3)]
    path = write(tmp_path, "p.csv", "x,label,n\n" + "\n".join(rows) + "\n")
    first, whole = _sample_both_ways(path)
    names = ["x", "label", "n"]
    assert first["n"].dtype.is_float()  # clean numbers come typed
    assert profile_columns(first, names, NA_STRINGS) == profile_columns(whole, names, NA_STRINGS)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["b", "a", "é", "10", "9", "ab", "a b", "Z", "ü"]), min_size=1))
def test_text_labels_are_the_cells_as_written(labels):
    import polars as pl

    from nbcli.io.cells import text_labels

    column = pl.Series("label", labels, dtype=pl.String)
    got = text_labels(column, "f.csv", "label", 0, resolve=False)
    assert got.tolist() == labels


def test_the_scan_parses_pieces_of_a_quarter_chunk_unless_set(tmp_path):
    import os
    import subprocess
    import sys

    path = tmp_path / "wide.csv"
    rng = np.random.default_rng(0)
    rows = [",".join(f"{v:.6f}" for v in rng.normal(size=20)) + f",{i % 3}" for i in range(300)]
    path.write_text(",".join([f"f{j}" for j in range(20)] + ["label"]) + "\n" + "\n".join(rows))
    line = len(rows[0]) + 1  # the longest of the first lines: all are alike here
    code = (
        "import os, sys; from nbcli.io.data import iter_dataset\n"
        "for _ in iter_dataset(sys.argv[1], chunk_size=int(sys.argv[2])): pass\n"
        "print(os.environ['POLARS_CSV_CHUNK_SIZE'])"
    )
    env = {k: v for k, v in os.environ.items() if k != "POLARS_CSV_CHUNK_SIZE"}

    def piece(chunk: int, **extra) -> int:
        out = subprocess.run(
            [sys.executable, "-c", code, str(path), str(chunk)],
            env={**env, **extra},
            capture_output=True,
            text=True,
            check=True,
        )
        return int(out.stdout)

    assert piece(100) == 1 << 18  # a quarter of 100 rows is below the least piece
    assert abs(piece(20_000) - 20_000 * line // 4) <= 20_000  # within a row's rounding
    assert piece(10**6) == 1 << 23  # and no more than 8 MiB
    assert piece(100, POLARS_CSV_CHUNK_SIZE="12345") == 12345


def test_parquet_and_model_files_are_told_by_their_content_whatever_their_name(tmp_path):
    import polars as pl

    from nbcli.io.sources import Source

    frame = pl.DataFrame({"a": [1.0, 2.0, 3.0], "label": ["x", "y", "x"]})
    for name in ("data", "data.csv"):
        frame.write_parquet(tmp_path / name)
        assert Source(tmp_path / name).format == "parquet"
        got = read_dataset(tmp_path / name)
        np.testing.assert_array_equal(got.X[:, 0], [1.0, 2.0, 3.0])
    # A CSV whose header begins like Parquet's magic is still a CSV.
    (tmp_path / "par.csv").write_text("PAR1,label\n1,x\n2,y\n")
    assert Source(tmp_path / "par.csv").format == "csv"
    with open(tmp_path / "model.bin", "wb") as f:  # a name np.savez would not add .npz to
        np.savez(f, metadata=np.array("{}"), X=np.zeros((0, 1)))
    assert Source(tmp_path / "model.bin").format == "npz"


def test_a_model_file_given_as_data_is_named_so(tmp_path):
    np.savez(tmp_path / "m.npz", metadata=np.array("{}"), **{"stats.count": np.ones(2)})
    with pytest.raises(NbcliError, match="is an nbcli model file, not data; give it as --model"):
        read_dataset(tmp_path / "m.npz")


def test_a_parquet_column_of_lists_is_refused_naming_it(tmp_path):
    import polars as pl

    path = tmp_path / "l.parquet"
    pl.DataFrame({"a": [1.0, 2.0], "lst": [[1, 2], [3]], "label": ["x", "y"]}).write_parquet(path)
    with pytest.raises(NbcliError, match=r"column 'lst' \(List\(Int64\)\) holds lists"):
        read_dataset(path)
    got = read_dataset(path, drop=["lst"])
    assert got.X.shape == (2, 1)


def test_a_question_mark_in_number_columns_points_to_na_values(tmp_path):
    path = tmp_path / "q.csv"
    path.write_text("a,b,label\n1.5,2,x\n?,3,y\n2.5,?,x\n1.0,4,y\n")
    with pytest.raises(NbcliError, match=r"if '\?' marks a missing value, pass --na-values '\?'"):
        read_dataset(path, model="gaussian", infer=True)
    got = read_dataset(path, na_values=["?"], missing="ignore")
    assert np.isnan(got.X[1, 0]) and np.isnan(got.X[2, 1])


def test_a_mark_at_predict_time_names_na_values_not_leaving_the_column_out(tmp_path):
    path = tmp_path / "p.csv"
    path.write_text("a,b\n1.5,2\n-,3\n")
    with pytest.raises(NbcliError) as err:
        read_dataset(path, need_target=False, model_features=["a", "b"])
    message = str(err.value)
    assert "has the non-numeric value '-' at row 2" in message
    assert "pass --na-values - if it marks a missing value" in message
    assert "leave the column out" not in message


def test_a_mostly_empty_target_chosen_by_default_is_refused(tmp_path):
    path = tmp_path / "t.csv"
    rows = [f"{i * 0.1},{'note' if i % 5 == 0 else ''}" for i in range(20)]
    path.write_text("x,comments\n" + "\n".join(rows) + "\n")
    with pytest.raises(NbcliError, match=r"column 'comments' \(.*\) is mostly empty \(16 of the"):
        read_dataset(path, infer=True)


def test_text_that_is_not_utf8_is_placed_by_line_or_named_utf16(tmp_path):
    latin = tmp_path / "latin.csv"
    latin.write_bytes(b"a,label\n1,x\n2,y\n3,caf\xe9\n4,x\n")
    with pytest.raises(NbcliError, match=r"is not UTF-8 text \(line 4\)"):
        read_dataset(latin)
    wide = tmp_path / "u16.csv"
    wide.write_text("a,label\n1,x\n2,y\n", encoding="utf-16")
    with pytest.raises(NbcliError, match=r"is not UTF-8 text \(it is UTF-16\)"):
        read_dataset(wide)


def test_a_truncated_gzip_file_says_to_check_the_copy(tmp_path):
    import gzip

    rows = "".join(f"{i},{i % 3}\n" for i in range(20000))
    whole = gzip.compress(("a,label\n" + rows).encode())
    path = tmp_path / "cut.csv.gz"
    path.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(NbcliError, match="is not a valid gzip file or is truncated"):
        read_dataset(path)


def test_decimal_commas_under_mixed_get_the_decimal_comma_hint(tmp_path):
    path = tmp_path / "dc.csv"
    rows = [f"1,{i};2,{i * 3};x{i % 2}" for i in range(1, 31)]
    path.write_text("a;b;label\n" + "\n".join(rows) + "\n")
    with pytest.raises(NbcliError, match="hold numbers written with a decimal comma"):
        read_dataset(path, infer=True, categorical=True, model="mixed")


def test_a_comma_before_three_digits_may_be_a_thousands_separator(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text('length,label\n"4,095",x\n"1,200",y\n"3,500",x\n')
    with pytest.raises(NbcliError, match="a decimal comma or a thousands separator"):
        read_dataset(path, infer=True, model="gaussian")
