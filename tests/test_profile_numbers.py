"""The planning sample's profiles of number columns, taken all at once."""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from nbcli.io.profile import INTEGER, NUMBER, profile_columns


def test_number_columns_are_profiled_as_column_by_column():
    n = 12
    frame = pl.DataFrame(
        {
            "row": np.arange(1, n + 1),  # counts 1..n: a row number
            "codes": np.arange(n) % 3,
            "x": [0.5, 1.5, math.nan, math.inf, 2.0, None, 2.0, -7.25, 3.0, 3.0, 0.5, 1.0],
            "gaps": pl.Series([None, 1, 2, None, 3, 3, 3, 4, 5, 6, 7, 8], dtype=pl.Int32),
            "nothing": pl.Series([None] * n, dtype=pl.Float64),
        }
    )
    got = profile_columns(frame, frame.columns, ("NA",))
    assert got["row"].value_type == INTEGER and got["row"].counting
    assert (got["row"].low, got["row"].high, got["row"].n_distinct) == (1.0, 12.0, 12)
    codes = got["codes"]
    assert codes.value_type == INTEGER and not codes.counting
    assert (codes.n_present, codes.n_distinct, codes.low, codes.high) == (12, 3, 0.0, 2.0)
    x = got["x"]
    # NaN and the null are not present; infinity is, but is neither low nor high.
    assert x.value_type == NUMBER
    assert (x.n_rows, x.n_present, x.n_distinct) == (12, 10, 7)
    assert (x.low, x.high) == (-7.25, 3.0)
    gaps = got["gaps"]
    assert gaps.value_type == INTEGER and not gaps.counting
    assert (gaps.n_present, gaps.n_distinct, gaps.low, gaps.high) == (10, 8, 1.0, 8.0)
    nothing = got["nothing"]
    assert (nothing.n_present, nothing.low, nothing.high) == (0, None, None)


def test_text_columns_keep_their_own_profile():
    frame = pl.DataFrame({"a": ["1", "2", "x"], "b": [1.0, 2.0, 3.5]})
    got = profile_columns(frame, ["a", "b"], ("NA",))
    assert got["a"].value_type == "text" and got["a"].example == "x"
    assert got["b"].value_type == NUMBER


def test_wide_samples_count_distinct_values_as_narrow_ones(monkeypatch):
    from nbcli.io import profile

    rng = np.random.default_rng(4)
    columns = {}
    for j in range(40):
        v = rng.integers(-3, 4, 50).astype(float)
        v[rng.random(50) < 0.2] = np.nan
        v[rng.random(50) < 0.05] = np.inf
        v[v == 0] = -0.0 if j % 2 else 0.0
        columns[f"c{j}"] = v
    columns["ints"] = rng.integers(0, 5, 50)
    columns["gaps"] = pl.Series([None if i % 7 == 0 else i % 4 for i in range(50)])
    frame = pl.DataFrame(columns)
    narrow = profile_columns(frame, frame.columns, ("NA",))
    monkeypatch.setattr(profile, "_HASHED_COLUMNS", 0)
    wide = profile_columns(frame, frame.columns, ("NA",))
    assert wide == narrow
    assert any(p.n_present < 50 for p in narrow.values())
