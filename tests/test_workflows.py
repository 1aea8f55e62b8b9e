"""The workflows called directly: plain functions that return reports and never print."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from nbcli.errors import NbcliError
from nbcli.io.modelfile import load_model, save_model
from nbcli.io.request import DataRequest
from nbcli.models import GaussianNB
from nbcli.workflows.calibrate import calibrate
from nbcli.workflows.engine import LocalEngine, Reporter
from nbcli.workflows.evaluate import compare, evaluate
from nbcli.workflows.predict import BatchOutput, predict, predict_batch
from nbcli.workflows.scoring import score
from nbcli.workflows.settings import PredictionColumns, ScoreSettings
from tests.conftest import SAMPLE


class Recorder(Reporter):
    """A reporter that remembers the progress it was asked to show."""

    def __init__(self):
        super().__init__()
        self.descriptions = []

    def progress(self, iterable, description, *, total=None):
        self.descriptions.append(description)
        return iterable


@pytest.fixture(scope="module")
def iris(tmp_path_factory):
    """A Gaussian model of iris written the way ``nbcli fit`` does, and the same fit in the core."""
    from nbcli.workflows.train import train

    d = tmp_path_factory.mktemp("wf")
    result = train(GaussianNB(), DataRequest.of(str(SAMPLE / "iris_train.csv")))
    save_model(result.model_file, d / "iris.npz")
    frame = pd.read_csv(SAMPLE / "iris_train.csv")
    core = GaussianNB().fit(frame.drop(columns="label").to_numpy(), frame["label"].to_numpy())
    return d / "iris.npz", core


def test_score_equals_the_core_and_reports_progress(iris, capfd):
    path, core = iris
    test = pd.read_csv(SAMPLE / "iris_test.csv")
    recorder = Recorder()
    scores = score(load_model(path), str(SAMPLE / "iris_test.csv"), reporter=recorder)
    expected = core.predict_log_proba(test.drop(columns="label").to_numpy())
    np.testing.assert_allclose(scores.log_proba, expected, rtol=1e-12, atol=1e-12)
    assert scores.y_true.tolist() == test["label"].tolist()
    assert scores.training_match is False
    assert recorder.descriptions == [f"scoring {SAMPLE / 'iris_test.csv'}"]
    assert capfd.readouterr() == ("", "")


def test_evaluate_returns_the_report_and_prints_nothing(iris, capfd):
    path, core = iris
    test = pd.read_csv(SAMPLE / "iris_test.csv")
    report = evaluate(
        str(path), DataRequest.of(str(SAMPLE / "iris_test.csv")), ScoreSettings(bootstrap=0)
    )
    accuracy = np.mean(core.predict(test.drop(columns="label").to_numpy()) == test["label"])
    assert report.metrics["accuracy"].value == pytest.approx(accuracy, abs=1e-15)
    assert report.n_samples == len(test)
    assert report.inputs["model"]["path"] == str(path)
    assert capfd.readouterr() == ("", "")


def test_evaluate_on_the_training_rows_warns_in_the_report(iris):
    path, _ = iris
    report = evaluate(
        str(path), DataRequest.of(str(SAMPLE / "iris_train.csv")), ScoreSettings(bootstrap=0)
    )
    assert any("trained on" in w for w in report.warnings), report.warnings


def test_read_options_reach_the_reader(iris, tmp_path):
    path, _ = iris
    text = (SAMPLE / "iris_test.csv").read_text().replace(",", ";").replace("label", "kind")
    (tmp_path / "t.csv").write_text(text)
    report = evaluate(
        str(path),
        DataRequest.of(str(tmp_path / "t.csv"), target="kind", delimiter=";"),
        ScoreSettings(bootstrap=0),
    )
    assert report.n_samples == text.count("\n") - 1


def test_compare_a_model_with_itself_has_no_difference(iris):
    path, _ = iris
    report = compare(
        [str(path), str(path)],
        DataRequest.of(str(SAMPLE / "iris_test.csv")),
        ScoreSettings(bootstrap=0),
    )
    assert report.metrics["difference"].value == 0.0
    with pytest.raises(NbcliError, match="exactly two"):
        compare([str(path)], DataRequest.of(str(SAMPLE / "iris_test.csv")))


def test_calibrate_fits_and_attaches_a_calibrator_without_writing(iris, tmp_path):
    path, _ = iris
    before = sorted(p.name for p in path.parent.iterdir())
    recorder = Recorder()
    result = calibrate(
        str(path),
        DataRequest.of(str(SAMPLE / "iris_calib.csv")),
        ScoreSettings(bootstrap=0),
        method="temperature",
        reporter=recorder,
    )
    assert result.fitted and result.model.calibrator.kind == "temperature"
    assert result.report.calibrator["temperature"] == result.model.calibrator.temperature_ > 0
    # The advice about where "after" was measured goes to the reporter, not the screen.
    assert any("third, untouched split" in w for w in recorder.warnings)
    assert sorted(p.name for p in path.parent.iterdir()) == before
    measured = calibrate(
        str(path),
        DataRequest.of(str(SAMPLE / "iris_calib.csv")),
        ScoreSettings(bootstrap=0),
        method="none",
    )
    assert not measured.fitted and measured.model.calibrator is None


def test_calibrate_hashes_its_inputs_only_when_asked(iris):
    import hashlib

    path, _ = iris
    data = SAMPLE / "iris_calib.csv"
    runs = {
        sha256: calibrate(
            str(path),
            DataRequest.of(str(data), sha256=sha256),
            ScoreSettings(bootstrap=0),
            method="temperature",
        )
        for sha256 in (True, False)
    }
    hashed, plain = runs[True].report, runs[False].report
    assert hashed.inputs["data"]["sha256"] == hashlib.sha256(data.read_bytes()).hexdigest()
    assert hashed.inputs["model"]["sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    assert runs[True].model.calibration_info["fitted_on"] == hashed.inputs["data"]
    assert plain.inputs == {"model": {"path": str(path)}, "data": {"path": str(data)}}
    # Hashing changes nothing else.
    assert hashed.calibrator["temperature"] == plain.calibrator["temperature"]


def test_predict_writes_the_file_and_counts_rows(iris, tmp_path):
    path, core = iris
    rows = predict(
        load_model(path),
        DataRequest.of(str(SAMPLE / "iris_test.csv")),
        str(tmp_path / "p.csv"),
        PredictionColumns(proba=True),
    )
    out = pd.read_csv(tmp_path / "p.csv")
    test = pd.read_csv(SAMPLE / "iris_test.csv")
    assert rows == len(out) == len(test)
    assert (
        out["prediction"].tolist() == core.predict(test.drop(columns="label").to_numpy()).tolist()
    )


class InOrderEngine(LocalEngine):
    """Runs the tasks here, one after another (as a distributed engine would, elsewhere)."""

    def __init__(self):
        self.calls = 0

    def map(self, func, tasks, *, jobs=None):
        self.calls += 1
        return (func(*task) for task in tasks)


def test_predict_batch_reports_a_bad_file_and_runs_on_the_engine_given(iris, tmp_path, capfd):
    path, _ = iris
    (tmp_path / "bad.csv").write_text("nothing,useful\n1,2\n")
    engine = InOrderEngine()
    report = predict_batch(
        str(path),
        DataRequest.of([str(SAMPLE / "iris_test.csv"), str(tmp_path / "bad.csv")]),
        BatchOutput(str(tmp_path / "out")),
        engine=engine,
    )
    assert engine.calls == 1
    assert report.n_failed == 1
    good, bad = report.rows
    assert good[3] is None and good[2] == len(pd.read_csv(SAMPLE / "iris_test.csv"))
    assert bad[3] is not None and "bad.csv" in bad[3]
    assert (tmp_path / "out" / "iris_test.pred.csv").exists()
    assert not (tmp_path / "out" / "bad.pred.csv").exists()
    assert capfd.readouterr() == ("", "")
