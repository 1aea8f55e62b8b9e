"""Fold pieces gathered into blocks give every fold the statistics of its rows."""

import numpy as np
import pytest

from nbcli.io.request import DataRequest
from nbcli.models import QuadraticDiscriminantAnalysis
from nbcli.workflows import fold_statistics
from nbcli.workflows.folds import collect_fold_statistics
from nbcli.workflows.settings import FoldSettings


@pytest.mark.numerical
@pytest.mark.parametrize("held_values", [1, 40, 1 << 23])
def test_fold_statistics_equal_those_of_the_folds_rows_however_pieces_are_held(
    tmp_path, monkeypatch, held_values
):
    # 1: every chunk's piece of a fold taken alone; 40: a few pieces a block,
    # several blocks a fold; 1 << 23: one block a fold.
    monkeypatch.setattr(fold_statistics, "_FOLD_BUFFER_VALUES", held_values)
    rng = np.random.default_rng(8)
    y = np.arange(120) % 3
    X = rng.normal(size=(120, 3)) * (1 + y[:, None]) + 5 * y[:, None]
    lines = ["a,b,c,label"] + [
        ",".join(repr(float(v)) for v in row) + f",k{c}" for row, c in zip(X, y)
    ]
    path = tmp_path / "d.csv"
    path.write_text("\n".join(lines) + "\n")
    est = QuadraticDiscriminantAnalysis()
    fs = collect_fold_statistics(
        est,
        DataRequest.of(str(path), chunk_size=7),
        FoldSettings(n_folds=4, n_repeats=2, seed=1, memory_budget=0),
        fingerprint=False,
    )
    for r in range(2):
        for f in range(4):
            rows = np.flatnonzero(fs.folds[r] == f)
            direct = est.accumulate(X[rows], y[rows], None, 3)
            got = fs.stats[r][f]
            assert got.count.tolist() == direct.count.tolist()
            for name in ("mean", "scatter"):
                a, b = getattr(got, name), getattr(direct, name)
                np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * np.abs(b).max())
