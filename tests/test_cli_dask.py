"""``--engine dask`` on fit, predict and evaluate: the same models, files and figures as local.

The commands run in this process against one LocalCluster of two one-thread
workers (threads, so that a cluster starts in well under a second), given
to them with ``--scheduler``; one test lets ``fit`` start its own cluster.
Selected with ``-m dask``; skipped when Dask is not installed.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

pytest.importorskip("distributed")

from nbcli.io.modelfile import load_model  # noqa: E402
from nbcli.models import registry  # noqa: E402
from tests.conftest import assert_one_error_line, nbcli_in_process  # noqa: E402
from tests.engine_parts import make_data  # noqa: E402

pytestmark = pytest.mark.dask

# Uneven parts, one of a single row: 320 rows in all.
SIZES = (37, 1, 120, 64, 15, 83)
#: Settings other than the defaults, given to every model that declares them.
SETTINGS = {"alpha": "0.5", "reg_param": "0.01"}


def _settings(cls) -> list[str]:
    """The flags of :data:`SETTINGS` that model class ``cls`` declares."""
    return [
        text
        for spec in cls.hyperparameters
        if spec.name in SETTINGS and spec.flag
        for text in (spec.flag, SETTINGS[spec.name])
    ]


@pytest.fixture(scope="module")
def scheduler():
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=False,
        dashboard_address=":0",
        silence_logs=50,
    ) as cluster:
        yield cluster.scheduler_address


RANKING = ("roc_auc", "roc_auc_weighted", "average_precision")


def _same_rows(got, expected):
    """Per-class rows equal, the ROC AUC to rounding."""
    assert [{k: v for k, v in r.items() if k != "roc_auc"} for r in got] == [
        {k: v for k, v in r.items() if k != "roc_auc"} for r in expected
    ]
    for a, b in zip(got, expected):
        assert (a.get("roc_auc") is None) == (b.get("roc_auc") is None)
        if b.get("roc_auc") is not None:
            assert a["roc_auc"] == pytest.approx(b["roc_auc"], rel=0, abs=1e-12)


def _rows(X, y) -> list[str]:
    # %.17g reads back to the same float64.
    return [",".join([f"{v:.17g}" for v in row] + [f"c{int(c)}"]) for row, c in zip(X, y)]


def write_data(folder: Path, model: str, seed: int = 1, fmt: str = "csv", edit=None):
    """Rows for model type ``model`` (of the kind its class declares) as one
    file ``all.csv`` and as parts ``parts/part-NN``.

    ``edit(i, line)`` may change the text of row ``i`` in both.
    """
    X, y = make_data(registry.model_classes()[model], sum(SIZES), seed=seed)
    header = ",".join(f"x{j}" for j in range(X.shape[1])) + ",label"
    rows = _rows(X, y)
    if edit is not None:
        rows = [edit(i, line) for i, line in enumerate(rows)]
    (folder / "all.csv").write_text("\n".join([header, *rows]) + "\n")
    parts = folder / "parts"
    parts.mkdir()
    start = 0
    for i, n in enumerate(SIZES):
        chunk = rows[start : start + n]
        start += n
        if fmt == "parquet":
            pl.read_csv(
                ("\n".join([header, *chunk]) + "\n").encode(), schema_overrides={"label": pl.Utf8}
            ).write_parquet(parts / f"part-{i:02d}.parquet")
        else:
            (parts / f"part-{i:02d}.csv").write_text("\n".join([header, *chunk]) + "\n")
    return X, y


def write_training(folder: Path) -> Path:
    """Training rows in ``folder/train/all.csv`` (another sample of the same classes)."""
    train = folder / "train"
    train.mkdir()
    write_data(train, "gaussian", seed=11)
    return train / "all.csv"


def _ok(*args):
    run = nbcli_in_process(*args)
    assert run.returncode == 0, run.stderr
    return run


MODEL_TYPES = sorted(registry.model_classes())


@pytest.mark.parametrize("model", MODEL_TYPES)
def test_fit_on_a_folder_of_parts_equals_a_local_fit_of_the_whole_file(scheduler, tmp_path, model):
    cls = registry.model_classes()[model]
    X, _ = write_data(tmp_path, model)
    extra = _settings(cls)
    _ok("fit", "-m", model, "-d", tmp_path / "all.csv", "-o", tmp_path / "one.npz", "-q", *extra)
    _ok(
        "fit", "-m", model, "-d", tmp_path / "parts", "-o", tmp_path / "dask.npz", "-q",
        "--engine", "dask", "--scheduler", scheduler, *extra,
    )  # fmt: skip
    one, dask = load_model(tmp_path / "one.npz"), load_model(tmp_path / "dask.npz")
    assert dask.training["n_samples"] == sum(SIZES)
    # The same rows in the same order: the same chunk-independent fingerprint.
    assert dask.training["fingerprint"] == one.training["fingerprint"]
    assert dask.feature_names == one.feature_names and dask.target == one.target
    np.testing.assert_array_equal(dask.classes, one.classes)
    Xt, _ = make_data(cls, 200, seed=99)
    np.testing.assert_allclose(
        dask.model.predict_proba(Xt), one.model.predict_proba(Xt), rtol=0, atol=1e-12
    )


def test_mean_1e6_and_parquet_parts_keep_full_precision(scheduler, tmp_path):
    X, y = write_data(tmp_path, "gaussian", seed=2, fmt="parquet")
    assert abs(X.mean() - 1e6) < 2
    _ok("fit", "-m", "gaussian", "-d", tmp_path / "all.csv", "-o", tmp_path / "one.npz", "-q")
    _ok(
        "fit", "-m", "gaussian", "-d", f"{tmp_path}/parts/*.parquet", "-o", tmp_path / "d.npz",
        "-q", "--engine", "dask", "--scheduler", scheduler,
    )  # fmt: skip
    one, dask = load_model(tmp_path / "one.npz").model, load_model(tmp_path / "d.npz").model
    np.testing.assert_allclose(dask.var_, one.var_, rtol=1e-12)
    two_pass = np.array([X[y == k].var(axis=0) for k in range(3)])
    np.testing.assert_allclose(dask.var_ - dask.epsilon_, two_pass, rtol=1e-9)


def test_fit_starts_and_closes_its_own_local_cluster(tmp_path):
    write_data(tmp_path, "gaussian")
    _ok("fit", "-m", "gaussian", "-d", tmp_path / "all.csv", "-o", tmp_path / "one.npz", "-q")
    _ok(
        "fit", "-m", "gaussian", "-d", tmp_path / "parts", "-o", tmp_path / "d.npz", "-q",
        "--engine", "dask", "--workers", "1", "--worker-memory", "1GB",
    )  # fmt: skip
    a, b = load_model(tmp_path / "one.npz"), load_model(tmp_path / "d.npz")
    assert a.training["fingerprint"] == b.training["fingerprint"]
    np.testing.assert_allclose(
        b.model.theta_, a.model.theta_, rtol=1e-13, atol=1e-13 * np.abs(a.model.theta_).max()
    )


def test_predict_writes_one_output_per_part_equal_to_local(scheduler, tmp_path):
    write_data(tmp_path, "gaussian")
    model = tmp_path / "m.npz"
    _ok("fit", "-m", "gaussian", "-d", tmp_path / "all.csv", "-o", model, "-q")
    _ok(
        "predict", "-m", model, "-d", tmp_path / "parts", "--output-dir", tmp_path / "out",
        "--proba", "--keep", "x0", "--engine", "dask", "--scheduler", scheduler, "-q",
    )  # fmt: skip
    outputs = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert outputs == [f"part-{i:02d}.pred.csv" for i in range(6)]
    for i in range(6):
        local = _ok("predict", "-m", model, "-d", tmp_path / "parts" / f"part-{i:02d}.csv",
                    "--proba", "--keep", "x0").stdout  # fmt: skip
        assert (tmp_path / "out" / f"part-{i:02d}.pred.csv").read_text() == local
    _ok(
        "predict", "-m", model, "-d", tmp_path / "parts", "--output-dir", tmp_path / "pq",
        "--output-format", "parquet", "--engine", "dask", "--scheduler", scheduler, "-q",
    )  # fmt: skip
    frame = pl.read_parquet(tmp_path / "pq" / "part-02.pred.parquet")
    assert frame["prediction"].to_list() == [
        line.split(",")[1]
        for line in (tmp_path / "out" / "part-02.pred.csv").read_text().splitlines()[1:]
    ]


def _metrics(run) -> dict:
    return json.loads(run.stdout)


def _same_report(got: dict, expected: dict) -> None:
    """Two evaluation reports with the same figures and intervals (to 1e-12): metrics,
    confusion matrix, per-class rows, calibration bins and the interval methods."""
    assert got["metrics"].keys() == expected["metrics"].keys()
    for name, iv in expected["metrics"].items():
        assert got["metrics"][name]["method"] == iv["method"], name
        for side in ("value", "lower", "upper"):
            if iv[side] is None:
                assert got["metrics"][name][side] is None, (name, side)
            else:
                assert got["metrics"][name][side] == pytest.approx(iv[side], rel=0, abs=1e-12)
    assert got["confusion_matrix"] == expected["confusion_matrix"]
    assert got["n_unseen"] == expected["n_unseen"]
    _same_rows(got["per_class"], expected["per_class"])
    calibration, bins = dict(got["calibration"]), got["calibration"]["bins"]
    for key, value in expected["calibration"].items():
        if key == "bins":
            assert [b["count"] for b in bins] == [b["count"] for b in value]
            for a, b in zip(bins, value):
                for side in ("lower", "upper", "mean_confidence", "accuracy", "gap"):
                    assert (a[side] is None) == (b[side] is None)
                    if b[side] is not None:
                        assert a[side] == pytest.approx(b[side], rel=0, abs=1e-12), side
        elif isinstance(value, float):
            assert calibration[key] == pytest.approx(value, rel=0, abs=1e-12), key
        else:
            assert calibration[key] == value, key
    for key in ("bootstrap_resamples", "seed", "bins", "bootstrap_method"):
        assert got["settings"][key] == expected["settings"][key], key


@pytest.mark.numerical
def test_evaluate_gives_the_local_figures_and_intervals(scheduler, tmp_path):
    # 320 rows x 200 resamples are resampled row by row: the rows are gathered.
    resamples = "200"
    write_data(tmp_path, "gaussian", seed=3)
    model = tmp_path / "m.npz"
    _ok("fit", "-m", "gaussian", "-d", tmp_path / "parts" / "part-02.csv", "-o", model, "-q")
    common = ("--json", "-", "-q", "--bootstrap", resamples, "--seed", "7")
    local = _metrics(_ok("evaluate", "-m", model, "-d", tmp_path / "all.csv", *common))
    args = ("evaluate", "-m", model, "-d", tmp_path / "parts", *common)
    dask = _metrics(_ok(*args, "--engine", "dask", "--scheduler", scheduler))
    _same_report(dask, local)
    assert local["metrics"]["roc_auc"]["method"] == "BCa"
    assert dask["metrics"]["accuracy"]["lower"] < dask["metrics"]["accuracy"]["value"]
    # The local engine over the same parts: the same report.
    _same_report(_metrics(_ok(*args)), local)
    other = _metrics(_ok(*args[:-1], "8", "--engine", "dask", "--scheduler", scheduler))
    # (Accuracy's ends lie on a grid of 1/320: another seed may well give the same.)
    assert other["metrics"]["log_loss"]["lower"] != dask["metrics"]["log_loss"]["lower"]


def _real_data(tmp_path, name: str, n_parts: int):
    """A scikit-learn data set as one CSV and as ``n_parts`` uneven CSV parts, rows in order."""
    from sklearn import datasets

    X, y = getattr(datasets, f"load_{name}")(return_X_y=True)
    frame = pl.DataFrame({f"x{j}": X[:, j] for j in range(X.shape[1])}).with_columns(
        pl.Series("label", [f"c{v}" for v in y])
    )
    frame.write_csv(tmp_path / "all.csv")
    (tmp_path / "parts").mkdir()
    cuts = np.linspace(0, len(y), n_parts + 1).astype(int)
    cuts[1:-1] += np.arange(1, n_parts) * 7  # uneven
    for i, (lo, hi) in enumerate(zip(cuts, cuts[1:])):
        frame[int(lo) : int(hi)].write_csv(tmp_path / "parts" / f"part-{i:02d}.csv")
    return X, y


@pytest.mark.numerical
@pytest.mark.parametrize("name, resamples", [("breast_cancer", "1000"), ("digits", "20000")])
def test_evaluate_of_real_data_in_parts_is_the_one_file_report(
    scheduler, tmp_path, name, resamples
):
    # Digits (1,797 rows, 10 classes) x 20,000 resamples: beyond the rows
    # resampled one by one, so the parts send sums, and the ten class AUCs'
    # covariance comes from a third pass over the kept posteriors.
    _real_data(tmp_path, name, 5)
    model = tmp_path / "m.npz"
    _ok("fit", "-m", "gaussian", "-d", tmp_path / "parts" / "part-01.csv", "-o", model, "-q")
    common = ("--json", "-", "-q", "--bootstrap", resamples, "--seed", "3", "--bins", "15")
    local = _metrics(_ok("evaluate", "-m", model, "-d", tmp_path / "all.csv", *common))
    dask = _metrics(
        _ok("evaluate", "-m", model, "-d", tmp_path / "parts", *common,
            "--engine", "dask", "--scheduler", scheduler)
    )  # fmt: skip
    _same_report(dask, local)
    methods = {iv["method"] for iv in local["metrics"].values()}
    assert "BCa" in methods and methods <= {"BCa", "percentile", "DeLong", "none"}
    if resamples == "20000":
        assert local["metrics"]["roc_auc"]["method"] == "DeLong"
        # The local engine over the parts, which reads them again for the ranking.
        _same_report(
            _metrics(_ok("evaluate", "-m", model, "-d", tmp_path / "parts", *common)), local
        )


def test_evaluate_counts_labels_the_model_never_saw_like_local(scheduler, tmp_path):
    model = tmp_path / "m.npz"
    write_data(tmp_path, "gaussian", seed=4)
    _ok("fit", "-m", "gaussian", "-d", tmp_path / "all.csv", "-o", model, "-q")

    def new_labels(i, line):
        # Two labels the model never saw, in different parts.
        if i % 9 == 0:
            return line.rsplit(",", 1)[0] + ",zz"
        if i % 13 == 0:
            return line.rsplit(",", 1)[0] + ",7"
        return line

    test = tmp_path / "test"
    test.mkdir()
    write_data(test, "gaussian", seed=5, edit=new_labels)
    tmp_path = test
    local = _metrics(_ok("evaluate", "-m", model, "-d", tmp_path / "all.csv", "--json", "-",
                         "-q", "--bootstrap", "0"))  # fmt: skip
    dask = _metrics(_ok("evaluate", "-m", model, "-d", tmp_path / "parts", "--json", "-", "-q",
                        "--bootstrap", "0", "--engine", "dask", "--scheduler", scheduler))  # fmt: skip
    assert local["n_unseen"] > 0
    for key in ("n_unseen", "unseen_labels", "confusion_matrix"):
        assert dask[key] == local[key], key
    _same_rows(dask["per_class"], local["per_class"])
    for name, iv in local["metrics"].items():
        assert dask["metrics"][name]["value"] == pytest.approx(iv["value"], abs=1e-12)


def _break_row(tmp_path, part: int, row: int):
    path = tmp_path / "parts" / f"part-{part:02d}.csv"
    lines = path.read_text().splitlines()
    cells = lines[row].split(",")
    cells[1] = "oops"
    lines[row] = ",".join(cells)
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_bad_row_fails_fit_and_evaluate_naming_part_and_row(scheduler, tmp_path):
    write_data(tmp_path, "gaussian")
    model = tmp_path / "m.npz"
    _ok("fit", "-m", "gaussian", "-d", tmp_path / "all.csv", "-o", model, "-q")
    bad = _break_row(tmp_path, 3, 5)
    local = nbcli_in_process("fit", "-m", "gaussian", "-d", bad, "-o", tmp_path / "x.npz")
    expected = assert_one_error_line(local, str(bad), "row 5")
    for engine in (["--engine", "dask", "--scheduler", scheduler], []):
        run = nbcli_in_process(
            "fit", "-m", "gaussian", "-d", tmp_path / "parts", "-o", tmp_path / "d.npz", *engine
        )
        assert assert_one_error_line(run, str(bad), "row 5") == expected
        assert not (tmp_path / "d.npz").exists()
        run = nbcli_in_process(
            "evaluate", "-m", model, "-d", tmp_path / "parts", "--json", tmp_path / "e.json",
            *engine,
        )  # fmt: skip
        assert_one_error_line(run, str(bad), "row 5")
        assert not (tmp_path / "e.json").exists()


def test_a_bad_part_is_skipped_by_predict_with_exit_4(scheduler, tmp_path):
    write_data(tmp_path, "gaussian")
    model = tmp_path / "m.npz"
    _ok("fit", "-m", "gaussian", "-d", tmp_path / "all.csv", "-o", model, "-q")
    bad = _break_row(tmp_path, 2, 7)
    run = nbcli_in_process(
        "predict", "-m", model, "-d", tmp_path / "parts", "--output-dir", tmp_path / "out",
        "--engine", "dask", "--scheduler", scheduler, "-q",
    )  # fmt: skip
    assert run.returncode == 4, run.stderr
    errors = [line for line in run.stderr_lines if line.startswith("error:")]
    assert any(str(bad) in line and "row 7" in line and "skipped" in line for line in errors)
    written = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert written == [f"part-{i:02d}.pred.csv" for i in range(6) if i != 2]


def test_dask_options_without_dask_engine_are_refused(tmp_path):
    write_data(tmp_path, "gaussian")
    run = nbcli_in_process(
        "fit", "-m", "gaussian", "-d", tmp_path / "all.csv", "-o", tmp_path / "m.npz",
        "--workers", "2",
    )  # fmt: skip
    assert_one_error_line(run, "--workers", "--engine dask")
    run = nbcli_in_process(
        "predict", "-m", tmp_path / "m.npz", "-d", tmp_path / "all.csv", "--engine", "dask"
    )
    assert_one_error_line(run, "--output-dir")


def test_stdin_is_no_part_for_the_workers(scheduler, tmp_path):
    run = nbcli_in_process(
        "fit", "-m", "gaussian", "-d", "-", "-o", tmp_path / "m.npz",
        "--engine", "dask", "--scheduler", scheduler,
    )  # fmt: skip
    assert_one_error_line(run, "stdin (-)", "give files")
    assert not (tmp_path / "m.npz").exists()


def test_intervals_do_not_depend_on_the_chunk_size(scheduler, tmp_path):
    model = tmp_path / "m.npz"
    _ok("fit", "-m", "gaussian", "-d", write_training(tmp_path), "-o", model, "-q")
    # A label the model never saw on every 11th row.
    write_data(
        tmp_path, "gaussian", seed=6, edit=lambda i, line: line[:-2] + "zz" if i % 11 == 0 else line
    )
    runs = [
        _metrics(_ok("evaluate", "-m", model, "-d", tmp_path / "parts", "--json", "-", "-q",
                     "--bootstrap", "100", "--engine", "dask", "--scheduler", scheduler, *chunks))
        for chunks in ([], ["--chunk-size", "7"])
    ]  # fmt: skip
    whole, chunked = runs
    assert whole["n_unseen"] > 0 and whole["unseen_labels"] == chunked["unseen_labels"] == ["zz"]
    for name, iv in whole["metrics"].items():
        if name in RANKING:
            continue
        for side in ("value", "lower", "upper"):
            assert chunked["metrics"][name][side] == pytest.approx(iv[side], rel=1e-12), name
