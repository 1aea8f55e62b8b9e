"""``cv`` and ``tune`` on a data set in parts, locally and on Dask, against one file.

The folds are planned from the labels of all rows in order, as for one file,
so a folder of parts (and ``--engine dask``) gives the one-file folds: with a
fold column and with the seeded stratified plan alike. Per-fold statistics
merge over the parts; their sums differ from one file's only in the order of
floating-point additions, so every per-fold and pooled figure agrees to a
few ulps (1e-12 here), and ``tune``'s best model scores as the one-file one.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nbcli.engines.local import LocalEngine
from nbcli.io.request import DataRequest
from nbcli.models import registry
from nbcli.text.settings import TextSettings
from nbcli.workflows.cv import cross_validate
from nbcli.workflows.settings import FoldSettings, ScoreSettings, Search
from nbcli.workflows.tune import tune
from tests.conftest import assert_one_error_line, nbcli_in_process

# Sums merged in another order: figures of order 1 agree to a few ulps.
TOL = 1e-12
# Uneven parts, one of a single row.
CUTS = (1, 30, 31, 70)

TABLES = {
    # name: (file, model, options of the request)
    "iris": ("sample_data/iris_train.csv", "gaussian", {}),
    "penguins": ("sample_data/penguins.csv", "mixed", {"target": "species"}),
    "austen": (
        "sample_data/austen_train.csv",
        "multinomial",
        {"text": TextSettings(columns=["text"], min_df=2)},
    ),
}


def _split(src: str, folder, cuts=CUTS, fold_column: bool = True):
    """``src`` (a fold column added) as one file and as a folder of parts."""
    frame = pd.read_csv(src)
    if fold_column:
        frame["fold"] = np.arange(len(frame)) % 4
    folder.mkdir()
    whole = folder.parent / f"{folder.name}.csv"
    frame.to_csv(whole, index=False)
    edges = [0, *cuts, len(frame)]
    for i, (a, b) in enumerate(zip(edges[:-1], edges[1:])):
        frame.iloc[a:b].to_csv(folder / f"p{i}.csv", index=False)
    return str(whole), str(folder)


def _estimator(model: str):
    cls = registry.model_classes()[model]
    missing = {s.name for s in cls.hyperparameters} & {"missing"}
    return cls(**{m: "ignore" for m in missing})


def _figures(report: dict) -> list:
    """Every per-fold and pooled point figure of a cross-validation report."""
    out = []
    for fold in report["folds"]:
        out += [(fold["fold"], fold["n_samples"], k, v) for k, v in fold["metrics"].items()]
    for k, v in report["metrics"].items():
        out.append(("pooled", k, v["value"] if isinstance(v, dict) else v))
    return out


def _same(a: list, b: list) -> None:
    assert len(a) == len(b) > 10
    for x, y in zip(a, b):
        assert x[:-1] == y[:-1]
        if x[-1] is None:
            assert y[-1] is None
        else:
            assert y[-1] == pytest.approx(x[-1], abs=TOL, rel=0)


@pytest.mark.numerical
@pytest.mark.parametrize("table", sorted(TABLES))
@pytest.mark.parametrize("fold_column", ["fold", None])
def test_cv_on_parts_gives_the_one_file_folds_and_figures(tmp_path, table, fold_column):
    src, model, options = TABLES[table]
    whole, folder = _split(src, tmp_path / table)
    folds = FoldSettings(n_folds=5, fold_column=fold_column, seed=3)
    scores = ScoreSettings(bootstrap=0)
    one = cross_validate(_estimator(model), DataRequest.of(whole, **options), folds, scores)
    parts = cross_validate(
        _estimator(model),
        DataRequest.of(folder, sha256=False, **options),
        folds,
        scores,
        engine=LocalEngine(),
    )
    a, b = one.to_dict(), parts.to_dict()
    assert a["plan"]["method"] == b["plan"]["method"] == ("column" if fold_column else "stratified")
    _same(_figures(a), _figures(b))
    assert b["inputs"]["data"]["parts"][0].endswith("p0.csv")


@pytest.mark.numerical
def test_how_the_rows_are_cut_does_not_change_the_folds(tmp_path):
    """The stratified plan is made from the labels of all rows in order: two
    cuttings of the same rows give the same folds and figures."""
    src, model, options = TABLES["penguins"]
    _, first = _split(src, tmp_path / "a", cuts=(1, 30, 31, 70), fold_column=False)
    _, second = _split(src, tmp_path / "b", cuts=(200,), fold_column=False)
    folds, scores = FoldSettings(n_folds=4, seed=11), ScoreSettings(bootstrap=0)
    reports = [
        cross_validate(
            _estimator(model),
            DataRequest.of(p, sha256=False, **options),
            folds,
            scores,
            engine=LocalEngine(),
        ).to_dict()
        for p in (first, second)
    ]
    _same(_figures(reports[0]), _figures(reports[1]))


@pytest.mark.numerical
@pytest.mark.parametrize("table", ["iris", "austen"])
def test_tune_on_parts_equals_tune_on_one_file(tmp_path, table):
    from nbcli.workflows.scoring import iter_scores

    src, model, options = TABLES[table]
    whole, folder = _split(src, tmp_path / table)
    spec = next(s for s in registry.model_classes()[model].hyperparameters if s.kind == "float")
    values = [spec.default * 10, spec.default] if spec.default else [0.1, 1.0]
    search = Search({spec.name: values}, "log_loss")
    folds, scores = FoldSettings(n_folds=4, fold_column="fold"), ScoreSettings(bootstrap=0)
    one, one_model = tune(
        _estimator(model), DataRequest.of(whole, **options), search, folds, scores
    )
    parts, parts_model = tune(
        _estimator(model),
        DataRequest.of(folder, sha256=False, **options),
        search,
        folds,
        scores,
        engine=LocalEngine(),
    )
    a, b = one.to_dict(), parts.to_dict()
    assert [r["params"] for r in a["results"]] == [r["params"] for r in b["results"]]
    for x, y in zip(a["results"], b["results"]):
        for key, value in x["metrics"].items():
            got = y["metrics"][key]
            value, got = (v["value"] if isinstance(v, dict) else v for v in (value, got))
            assert got == pytest.approx(value, abs=TOL, rel=0), key
    assert parts_model.training["fingerprint"] == one_model.training["fingerprint"]
    read = DataRequest.of(whole)
    pa = np.vstack([c.log_proba for c in iter_scores(one_model, whole, read=read)])
    pb = np.vstack([c.log_proba for c in iter_scores(parts_model, whole, read=read)])
    np.testing.assert_allclose(pb, pa, rtol=0, atol=TOL)


def test_cv_on_parts_from_the_command_line(tmp_path):
    whole, folder = _split("sample_data/iris_train.csv", tmp_path / "iris")
    common = ["-m", "gaussian", "--fold-column", "fold", "--bootstrap", "0", "--json", "-"]
    one = nbcli_in_process("cv", "-d", whole, *common)
    parts = nbcli_in_process("cv", "-d", folder, *common)
    assert one.returncode == parts.returncode == 0, parts.stderr
    _same(_figures(json.loads(one.stdout)), _figures(json.loads(parts.stdout)))
    # A glob and the files one by one are the same data set.
    files = sorted(str(p) for p in (tmp_path / "iris").iterdir())
    listed = nbcli_in_process("cv", *(a for f in files for a in ("-d", f)), *common)
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout)["folds"] == json.loads(parts.stdout)["folds"]


def test_dask_options_without_the_dask_engine_are_refused_by_cv_and_tune(tmp_path):
    for command in ("cv", "tune"):
        run = nbcli_in_process(
            command, "-m", "gaussian", "-d", "sample_data/iris_train.csv", "--workers", "2"
        )
        assert_one_error_line(run, "--workers", "--engine dask")


@pytest.fixture(scope="module")
def scheduler():
    pytest.importorskip("distributed")
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=False,
        dashboard_address=":0",
        silence_logs=50,
    ) as cluster:
        yield cluster.scheduler_address


@pytest.mark.dask
@pytest.mark.numerical
@pytest.mark.parametrize("table", ["penguins", "austen"])
def test_cv_on_dask_gives_the_one_file_per_fold_figures(scheduler, tmp_path, table):
    src, model, options = TABLES[table]
    whole, folder = _split(src, tmp_path / table)
    extra = ["--target", "species"] if table == "penguins" else ["--text", "text", "--min-df", "2"]
    common = ["-m", model, "--fold-column", "fold", "--bootstrap", "0", "--json", "-", *extra]
    one = nbcli_in_process("cv", "-d", whole, *common)
    dask = nbcli_in_process(
        "cv", "-d", folder, *common, "--engine", "dask", "--scheduler", scheduler
    )
    assert one.returncode == dask.returncode == 0, dask.stderr
    report = json.loads(dask.stdout)
    assert report["settings"]["engine"] == "dask"
    _same(_figures(json.loads(one.stdout)), _figures(report))


@pytest.mark.dask
@pytest.mark.numerical
def test_tune_on_dask_writes_the_one_file_model(scheduler, tmp_path):
    from nbcli.io.modelfile import load_model

    whole, folder = _split("sample_data/penguins.csv", tmp_path / "penguins")
    common = ["-m", "mixed", "--target", "species", "--alpha", "0.1,1", "--bootstrap", "0"]
    one = nbcli_in_process("tune", "-d", whole, *common, "-o", tmp_path / "one.npz", "--quiet")
    dask = nbcli_in_process(
        "tune",
        "-d",
        folder,
        *common,
        "-o",
        tmp_path / "dask.npz",
        "--quiet",
        "--engine",
        "dask",
        "--scheduler",
        scheduler,
    )
    assert one.returncode == dask.returncode == 0, dask.stderr
    a, b = load_model(tmp_path / "one.npz"), load_model(tmp_path / "dask.npz")
    assert a.search["best"].keys() == b.search["best"].keys()
    for key, value in a.search["best"].items():
        got = b.search["best"][key]
        if isinstance(value, dict) and "value" in value:
            assert got["value"] == pytest.approx(value["value"], abs=TOL, rel=0)
        elif isinstance(value, float):
            assert got == pytest.approx(value, abs=TOL, rel=0)
        else:
            assert got == value, key
    assert a.training["fingerprint"] == b.training["fingerprint"]
    one_stats, dask_stats = _moments(a.model.stats_), _moments(b.model.stats_)
    assert one_stats.keys() == dask_stats.keys()
    for name, value in one_stats.items():
        np.testing.assert_allclose(dask_stats[name], value, rtol=1e-12, atol=0, err_msg=name)


def _moments(stats) -> dict:
    """A statistics object's arrays, with each mean kept as ``shift + offset``
    given as the mean itself: the shift is any value near the data (the first
    row of a chunk or of a class), so it depends on how the rows were split,
    and only the sum is the statistic."""
    arrays = {k: v for k, v in vars(stats).items() if isinstance(v, np.ndarray)}
    for name in [k for k in arrays if k.endswith("shift")]:
        offset = name[: -len("shift")] + "offset"
        arrays[name[: -len("shift")] + "mean"] = arrays.pop(name) + arrays.pop(offset)
    return arrays


def _calibration(tmp_path, data, *extra) -> dict:
    out = tmp_path / "calibration.json"
    run = nbcli_in_process(
        "calibrate", "-m", tmp_path / "model.npz", "-d", data, "--json", out, "-q", *extra
    )
    assert run.returncode == 0, run.stderr
    report = json.loads(out.read_text())
    # The inputs name the file or the parts; everything else must agree.
    for doc in (report, report.get("before", {}), report.get("after", {})):
        doc.pop("inputs", None)
    report.get("calibrator", {}).pop("fitted_on", None)
    return report


def _close(a, b, where="report") -> None:
    """``a`` and ``b`` equal, floats to 1e-12: the posteriors of a row scored in
    another block may differ in their last bits, and iterative fits follow them."""
    if isinstance(a, dict):
        assert isinstance(b, dict) and a.keys() == b.keys(), where
        for key in a:
            _close(a[key], b[key], f"{where}.{key}")
    elif isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b), where
        for i, (x, y) in enumerate(zip(a, b)):
            _close(x, y, f"{where}[{i}]")
    elif isinstance(a, float):
        assert b == pytest.approx(a, abs=TOL, rel=TOL), where
    else:
        assert a == b, where


def _fitted(tmp_path):
    run = nbcli_in_process(
        "fit", "-m", "gaussian", "-d", "sample_data/iris_train.csv", "-o", tmp_path / "model.npz"
    )
    assert run.returncode == 0, run.stderr
    return _split("sample_data/iris_calib.csv", tmp_path / "calib", cuts=(1, 20), fold_column=False)


@pytest.mark.numerical
@pytest.mark.parametrize("method", ["temperature", "sigmoid", "isotonic", "auto"])
def test_calibrate_on_parts_equals_calibrate_on_one_file(tmp_path, method):
    """The parts are scored part by part; the posteriors come back in row order,
    so every method's fit, cross-fitting, verdict and intervals are the one-file ones."""
    whole, folder = _fitted(tmp_path)
    one = _calibration(tmp_path, whole, "--method", method, "--seed", "4")
    parts = _calibration(tmp_path, folder, "--method", method, "--seed", "4")
    _close(one, parts)
    assert one["after"]["metrics"]["log_loss"] != one["before"]["metrics"]["log_loss"]


@pytest.mark.dask
@pytest.mark.numerical
def test_calibrate_on_dask_equals_calibrate_on_one_file(scheduler, tmp_path):
    whole, folder = _fitted(tmp_path)
    one = _calibration(tmp_path, whole, "--method", "isotonic")
    dask = _calibration(
        tmp_path, folder, "--method", "isotonic", "--engine", "dask", "--scheduler", scheduler
    )
    _close(one, dask)


@pytest.mark.numerical
@settings(
    max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    cuts=st.lists(st.integers(1, 89), min_size=1, max_size=5, unique=True), seed=st.integers(0, 99)
)
def test_any_cutting_gives_the_one_file_folds_and_figures(tmp_path_factory, cuts, seed):
    """Property: wherever the rows are cut into parts, cv over the parts (seeded
    stratified folds) gives the one-file report."""
    folder = tmp_path_factory.mktemp("cut")
    whole, parts = _split(TABLES["iris"][0], folder / "iris", cuts=sorted(cuts), fold_column=False)
    folds, scores = FoldSettings(n_folds=3, seed=seed), ScoreSettings(bootstrap=0)
    one = cross_validate(_estimator("gaussian"), DataRequest.of(whole), folds, scores)
    split = cross_validate(
        _estimator("gaussian"),
        DataRequest.of(parts, sha256=False),
        folds,
        scores,
        engine=LocalEngine(),
    )
    _same(_figures(one.to_dict()), _figures(split.to_dict()))
