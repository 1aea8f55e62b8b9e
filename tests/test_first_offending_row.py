"""Errors about data name the first offending row of the file, whatever its column."""

from __future__ import annotations

import pytest

from tests.conftest import assert_one_error_line, nbcli_in_process

TRAIN = "y,colour,size\n" + "".join(
    f"{y},{c},{s}\n"
    for y, c, s in [
        ("a", "red", "small"),
        ("b", "blue", "large"),
        ("a", "red", "large"),
        ("b", "blue", "small"),
    ]
)
# The first unseen cell (row 2, 'size') is in a later column than the first
# unseen cell of 'colour' (row 4): a column-by-column check names row 4.
TEST = "y,colour,size\na,red,small\na,red,huge\nb,blue,small\nb,green,large\na,red,small\n"


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    d = tmp_path_factory.mktemp("rows")
    (d / "train.csv").write_text(TRAIN, encoding="utf-8")
    out = d / "m.npz"
    run = nbcli_in_process(
        "fit", "-m", "categorical", "-d", d / "train.csv", "--target", "y", "-o", out, "-q"
    )
    assert run.returncode == 0, run.stderr
    return out


@pytest.mark.parametrize("chunk", [None, 1, 2, 3])
def test_unseen_category_names_earliest_row_over_columns(model, tmp_path, chunk):
    data = tmp_path / "test.csv"
    data.write_text(TEST, encoding="utf-8")
    extra = [] if chunk is None else ["--chunk-size", chunk]
    run = nbcli_in_process("predict", "-m", model, "-d", data, "-o", tmp_path / "p.csv", *extra)
    line = assert_one_error_line(run, "column 'size'", "'huge'", "at row 2,")
    assert "green" not in line


def test_unseen_category_in_a_later_chunk_keeps_its_file_row(model, tmp_path):
    # Chunks of 2: rows 3-4 form the second chunk; there 'size' at row 3
    # comes before 'colour' at row 4.
    data = tmp_path / "test.csv"
    data.write_text(
        "y,colour,size\na,red,small\nb,blue,large\nb,blue,huge\na,green,small\n",
        encoding="utf-8",
    )
    run = nbcli_in_process(
        "predict", "-m", model, "-d", data, "-o", tmp_path / "p.csv", "--chunk-size", 2
    )
    assert_one_error_line(run, "column 'size'", "'huge'", "at row 3,")
