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
