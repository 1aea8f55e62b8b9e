"""``--data`` folders and globs of parts on the local engine; ``--engine dask`` without Dask.

No Dask here: the part-wise runs of the local engine must give the model
and figures of a one-file run, and must not import Dask.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import nbcli.engines as engines
from nbcli.io.modelfile import load_model
from nbcli.workflows.parts import expand_parts
from tests.conftest import assert_one_error_line, nbcli_in_process

ROOT = Path(__file__).resolve().parents[1]


def _write(folder: Path, n_parts: int = 4, rows: int = 30, seed: int = 0):
    rng = np.random.default_rng(seed)
    header = "a,b,label"
    lines = []
    for i in range(n_parts * rows):
        k = i % 3
        lines.append(f"{rng.normal(k, 1):.17g},{rng.normal(-k, 2):.17g},k{k}")
    (folder / "all.csv").write_text("\n".join([header, *lines]) + "\n")
    parts = folder / "parts"
    parts.mkdir()
    for p in range(n_parts):
        body = lines[p * rows : (p + 1) * rows]
        (parts / f"p{p}.csv").write_text("\n".join([header, *body]) + "\n")
    (parts / ".hidden.csv").write_text("not,a,part\n")
    (parts / "README.txt").write_text("not a part either\n")
    return parts


def test_a_folder_is_its_part_files_in_name_order(tmp_path):
    parts = _write(tmp_path)
    assert expand_parts([str(parts)]) == [str(parts / f"p{i}.csv") for i in range(4)]
    assert expand_parts([f"{parts}/p[13].csv", str(parts / "p0.csv")]) == [
        str(parts / "p1.csv"),
        str(parts / "p3.csv"),
        str(parts / "p0.csv"),
    ]
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(engines.NbcliError, match="no part files"):
        expand_parts([str(empty)])


def test_local_fit_and_evaluate_of_a_folder_equal_one_file(tmp_path):
    parts = _write(tmp_path)
    for data, out in ((tmp_path / "all.csv", "one.npz"), (parts, "parts.npz")):
        run = nbcli_in_process("fit", "-m", "gaussian", "-d", data, "-o", tmp_path / out, "-q")
        assert run.returncode == 0, run.stderr
    one, split = load_model(tmp_path / "one.npz"), load_model(tmp_path / "parts.npz")
    assert split.training["fingerprint"] == one.training["fingerprint"]
    np.testing.assert_array_equal(split.classes, one.classes)
    np.testing.assert_allclose(split.model.var_, one.model.var_, rtol=1e-13)
    figures = []
    for data in (tmp_path / "all.csv", parts):
        run = nbcli_in_process(
            "evaluate", "-m", tmp_path / "one.npz", "-d", data, "--json", "-", "-q",
            "--bootstrap", "100",
        )  # fmt: skip
        assert run.returncode == 0, run.stderr
        figures.append(json.loads(run.stdout))
    whole, by_part = figures
    for name, iv in whole["metrics"].items():
        # Few rows: gathered and resampled as the one file's.
        assert by_part["metrics"][name]["method"] == iv["method"], name
        for side in ("value", "lower", "upper"):
            if iv[side] is not None:
                assert by_part["metrics"][name][side] == pytest.approx(iv[side], abs=1e-12)
    # The training data, recognised.
    assert whole["warnings"] != []
    assert by_part["warnings"] == whole["warnings"]
    passed = nbcli_in_process(
        "evaluate", "-m", tmp_path / "one.npz", "-d", parts, "--fail-under", "roc_auc=0.5", "-q"
    )
    assert passed.returncode == 0, passed.stderr


def test_predict_of_a_folder_writes_one_file_per_part(tmp_path):
    parts = _write(tmp_path)
    run = nbcli_in_process("fit", "-m", "gaussian", "-d", parts, "-o", tmp_path / "m.npz", "-q")
    assert run.returncode == 0, run.stderr
    run = nbcli_in_process(
        "predict",
        "-m",
        tmp_path / "m.npz",
        "-d",
        parts,
        "--output-dir",
        tmp_path / "out",
        "-q",
        "-j",
        "1",
    )
    assert run.returncode == 0, run.stderr
    assert sorted(os.listdir(tmp_path / "out")) == [f"p{i}.pred.csv" for i in range(4)]


@pytest.mark.parametrize("odd", [0, 2])
def test_a_part_without_the_target_column_is_named_for_it(tmp_path, odd):
    # Without --target each part's last column is its target: a part that
    # lacks the target must not be said to lack its own last feature.
    parts = _write(tmp_path)
    # Whole numbers in its last column, which could be labels.
    header, *rows = (parts / f"p{odd}.csv").read_text().splitlines()
    body = [f"{round(float(r.split(',')[0]))},{round(float(r.split(',')[1]))}" for r in rows]
    (parts / f"p{odd}.csv").write_text("\n".join(["a,b", *body]) + "\n")
    run = nbcli_in_process("fit", "-m", "gaussian", "-d", parts, "-o", tmp_path / "m.npz")
    line = assert_one_error_line(run, f"p{odd}.csv: lacks 'label', the target column of")
    assert "same columns" in line and "'b'" not in line, line
    assert not (tmp_path / "m.npz").exists()


def test_parts_with_different_columns_are_refused(tmp_path):
    parts = _write(tmp_path)
    text = (parts / "p2.csv").read_text().replace("a,b,label", "a,c,label", 1)
    (parts / "p2.csv").write_text(text)
    run = nbcli_in_process("fit", "-m", "gaussian", "-d", parts, "-o", tmp_path / "m.npz")
    line = assert_one_error_line(run, "same columns")
    # The columns one part has and the other lacks are named (parts merge pairwise).
    assert "has 'c', which" in line or "has 'b', which" in line, line
    assert "lacks 'b', which" in line or "lacks 'c', which" in line, line
    assert not (tmp_path / "m.npz").exists()
    (parts / "p2.csv").write_text(text.replace("a,c,label", "b,a,label", 1))
    run = nbcli_in_process("fit", "-m", "gaussian", "-d", parts, "-o", tmp_path / "m.npz")
    assert_one_error_line(run, "in another order")


def test_engine_dask_without_dask_says_how_to_install(tmp_path, monkeypatch):
    real = engines.importlib.util.find_spec
    monkeypatch.setattr(
        engines.importlib.util,
        "find_spec",
        lambda name, *a: None if name in ("dask", "distributed") else real(name, *a),
    )
    parts = _write(tmp_path)
    run = nbcli_in_process(
        "fit", "-m", "gaussian", "-d", parts, "-o", tmp_path / "m.npz", "--engine", "dask"
    )
    assert_one_error_line(run, "pip install 'nbcli[dask]'")


def test_part_wise_local_runs_import_nothing_of_dask(tmp_path):
    parts = _write(tmp_path)
    probe = (
        "import sys\n"
        "from nbcli.cli.app import main\n"
        "for argv in sys.argv[1:]:\n"
        "    try:\n"
        "        main(argv.split('|'))\n"
        "    except SystemExit as exc:\n"
        "        assert not exc.code, exc.code\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('dask', 'distributed')))\n"
    )
    model = tmp_path / "m.npz"
    calls = [
        f"fit|-m|gaussian|-d|{parts}|-o|{model}|-q",
        f"evaluate|-m|{model}|-d|{parts}|-q|--bootstrap|100",
        f"predict|-m|{model}|-d|{parts}|--output-dir|{tmp_path / 'out'}|-q|-j|1",
    ]
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", probe, *calls], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("model", ["gaussian", "lda"])
def test_a_folder_fit_records_what_a_one_file_fit_records(tmp_path, model):
    # --na-values reads '?' as missing in every part, and the model file keeps the
    # policies and columns a one-file fit keeps, so predict reads the same way.
    parts = _write(tmp_path)
    for name, at in (("all.csv", 30 + 3), ("parts/p1.csv", 3)):  # the same row
        path = tmp_path / name
        lines = path.read_text().splitlines()
        lines[at] = "?," + lines[at].split(",", 1)[1]
        path.write_text("\n".join(lines) + "\n")
    for data, out in ((tmp_path / "all.csv", "one.npz"), (parts, "parts.npz")):
        run = nbcli_in_process(
            "fit", "-m", model, "-d", data, "-o", tmp_path / out, "-q", "--na-values", "?"
        )
        assert run.returncode == 0, run.stderr
    one, split = load_model(tmp_path / "one.npz"), load_model(tmp_path / "parts.npz")
    assert split.training["na_values"] == ["?"]
    assert (
        split.columns
        == one.columns
        == [
            {"name": "a", "type": "numeric"},
            {"name": "b", "type": "numeric"},
        ]
    )
    drop = {"data"}
    assert {k: v for k, v in split.training.items() if k not in drop} == {
        k: v for k, v in one.training.items() if k not in drop
    }


# calibrate, cv and tune read parts (tests/test_fold_parts.py); compare reads one file.
@pytest.mark.parametrize("command", ["compare"])
def test_commands_that_read_one_file_say_so_for_a_folder_of_parts(tmp_path, command):
    parts = _write(tmp_path)
    model = tmp_path / "m.npz"
    assert (
        nbcli_in_process(
            "fit", "-m", "gaussian", "-d", tmp_path / "all.csv", "-o", model, "-q"
        ).returncode
        == 0
    )
    args = {
        "compare": ["compare", "-m", model, "-m", model, "-d", parts],
        "calibrate": ["calibrate", "-m", model, "-d", parts, "-o", tmp_path / "c.npz"],
        "cv": ["cv", "-m", "gaussian", "-d", parts],
    }[command]
    assert_one_error_line(
        nbcli_in_process(*args), f"{parts}: is a directory", "this command reads one file"
    )
    assert not (tmp_path / "c.npz").exists()


@pytest.mark.parametrize("labels", ["int", "bool"])
def test_parquet_and_csv_parts_with_typed_labels_make_one_set_of_classes(tmp_path, labels):
    # A Parquet part keeps its labels' type (1, True), a CSV part reads "1",
    # "True": joined, they are one class each, as in one CSV of both parts.
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    rng = np.random.default_rng(4)
    n = 60
    y = np.arange(n) % (3 if labels == "int" else 2)
    frame = pd.DataFrame({"a": rng.normal(size=n) + y, "b": rng.normal(size=n) - y})
    frame["label"] = y if labels == "int" else y.astype(bool)
    frame.iloc[:25].to_parquet(tmp_path / "p1.parquet")
    frame.iloc[25:].to_csv(tmp_path / "p2.csv", index=False)
    frame.to_csv(tmp_path / "all.csv", index=False)
    parts = ["-d", tmp_path / "p1.parquet", "-d", tmp_path / "p2.csv"]
    fit = nbcli_in_process("fit", "-m", "gaussian", *parts, "-o", tmp_path / "parts.npz", "-q")
    assert fit.returncode == 0, fit.stderr
    one = nbcli_in_process(
        "fit", "-m", "gaussian", "-d", tmp_path / "all.csv", "-o", tmp_path / "one.npz", "-q"
    )
    assert one.returncode == 0, one.stderr
    a, b = load_model(tmp_path / "parts.npz"), load_model(tmp_path / "one.npz")
    assert a.classes.tolist() == b.classes.tolist()
    X = frame[["a", "b"]].to_numpy()
    np.testing.assert_allclose(
        a.model.predict_log_proba(X), b.model.predict_log_proba(X), rtol=0, atol=1e-12
    )
    for command, extra in (("cv", []), ("tune", ["--var-smoothing", "1e-9,1e-3"])):
        run = nbcli_in_process(command, "-m", "gaussian", *parts, "--folds", "3",
                               "--bootstrap", "0", *extra, "--json", "-", "-q")  # fmt: skip
        assert run.returncode == 0, run.stderr
        assert json.loads(run.stdout)["plan"]["n_folds"] == 3
