"""The one data request: its normalisation, its one builder, and the workflows' shape."""

from __future__ import annotations

import ast
import dataclasses
import pathlib

import numpy as np
import pytest

from nbcli.errors import NbcliError
from nbcli.io.request import DataRequest, TableBlock, TextBlock
from nbcli.text.settings import TextSettings

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_a_request_is_frozen_and_its_names_are_tuples_of_text():
    request = DataRequest.of("d.csv", features=["a", 1], drop=None, na_values=[0, "?"])
    assert request.data == ("d.csv",) and request.path == "d.csv"
    assert request.features == ("a", "1") and request.drop is None
    assert request.na_values == ("0", "?")
    assert request.blocks == (TableBlock(),) and request.text is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        request.target = "y"  # type: ignore[misc]


def test_text_settings_become_one_text_block_beside_the_table():
    text = TextSettings(columns=("body", "title"))
    request = DataRequest.of(["a.csv", "b.csv"], text=text)
    assert request.path == "a.csv, b.csv"
    assert request.blocks == (TableBlock(), TextBlock(text))
    assert request.text == text and request.text_columns == ("body", "title")
    # Replacing the text replaces the block; None leaves the table alone.
    other = TextSettings(columns=("notes",))
    assert request.reading(text=other).text_columns == ("notes",)
    assert request.reading(text=None).blocks == (TableBlock(),)


def test_the_builder_takes_flags_over_the_config_and_missing_policies_from_the_model():
    from nbcli.cli.requests import data_request

    cfg = {
        "data": {
            "target": "kind",
            "features": ["a", "b"],
            "na_values": "?",
            "columns": {"a": "categorical"},
        },
        "text": {"columns": ["body"], "min_df": 2},
    }
    options = {
        "data_files": ["x.csv"],
        "features": ["a,c"],
        "column": ["c=gaussian"],
        "chunk_size": 7,
        "json_out": None,
    }
    request = data_request(options, cfg, "c.toml", {"missing": "ignore", "unseen": "ignore"})
    assert request.data == ("x.csv",) and request.target == "kind"
    assert request.features == ("a", "c")  # the flag, not the config
    assert request.na_values == ("?",)
    assert dict(request.column_types) == {"a": "categorical", "c": "gaussian"}
    assert (request.missing, request.unseen, request.chunk_size) == ("ignore", "ignore", 7)
    assert request.text is not None and request.text.min_df == 2
    assert request.sha256 is False  # no JSON report: the inputs are named, not hashed
    with pytest.raises(NbcliError, match="--unseen must be one of"):
        data_request(options, cfg, "c.toml", {"unseen": "guess"})


def test_a_scoring_command_takes_its_policies_from_its_flags():
    from nbcli.cli.requests import data_request

    request = data_request(
        {"data": "t.csv", "missing": "drop", "unseen": None, "na_values": ["NA,-"], "json_out": "-"}
    )
    assert (request.missing, request.unseen) == ("drop", None)
    assert request.na_values == ("NA", "-") and request.sha256 is True


def test_reading_through_a_request_equals_reading_with_its_fields(tmp_path):
    from nbcli.io.data import iter_dataset, read_dataset

    path = tmp_path / "d.csv"
    path.write_text("a;b;kind\n1;2;x\n3;4;y\n5;6;x\n")
    request = DataRequest.of(str(path), target="kind", delimiter=";", chunk_size=2)
    whole = read_dataset(str(path), request)
    assert whole.target == "kind" and whole.feature_names == ["a", "b"]
    assert np.array_equal(whole.X, [[1, 2], [3, 4], [5, 6]])
    chunks = list(iter_dataset(str(path), request))
    assert [c.X.shape[0] for c in chunks] == [2, 1]
    assert np.array_equal(np.vstack([c.X for c in chunks]), whole.X)


def _parameters(node) -> int:
    a = node.args
    n = len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs)
    n += (a.vararg is not None) + (a.kwarg is not None)
    return n - (1 if a.args and a.args[0].arg in ("self", "cls") else 0)


def test_no_workflow_takes_more_than_eight_parameters():
    wide = []
    for path in sorted((ROOT / "nbcli" / "workflows").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _parameters(node) > 8:
                wide.append(f"{path.name}:{node.name}")
    assert wide == []


def test_text_folds_live_in_the_fold_modules():
    workflows = ROOT / "nbcli" / "workflows"
    assert not (workflows / "fold_text.py").exists()
    assert not (workflows / "fold_text_statistics.py").exists()
    from nbcli.workflows.fold_statistics import TextFoldStatistics
    from nbcli.workflows.folds import collect_fold_statistics

    assert TextFoldStatistics and collect_fold_statistics
