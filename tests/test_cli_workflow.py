"""End-to-end runs of nbcli's commands on the shipped sample data.

Most run the console script's entry point in this process (the same code
without an interpreter start per command); the fixture model and the
exit-code checks run the real executable.
"""

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from nbcli.io.request import DataRequest
from nbcli.workflows.settings import ScoreSettings
from tests.conftest import posterior_tolerance

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "sample_data"


def nbcli(*args):
    """Run ``nbcli ARGS`` in this process, at a table width of 80 columns."""
    from tests.conftest import nbcli_in_process

    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "80"
    try:
        return nbcli_in_process(*args)
    finally:
        if saved is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = saved


def nbcli_process(*args, cwd=None, input=None):
    """Run ``python -m nbcli ARGS``; returns the CompletedProcess (text mode)."""
    env = dict(os.environ, COLUMNS="80")
    return subprocess.run(
        [sys.executable, "-m", "nbcli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        input=input,
        env=env,
        timeout=120,
    )


def ok(result):
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return result


@pytest.fixture(scope="module")
def iris_model(tmp_path_factory):
    out = tmp_path_factory.mktemp("iris") / "iris.npz"
    ok(
        nbcli_process(
            "fit", "--model", "gaussian", "--data", SAMPLE / "iris_train.csv", "--output", out
        )
    )
    return out


def test_fit_prints_summary_and_predict_matches_core(iris_model, tmp_path):
    from nbcli.io.modelfile import load_model
    from nbcli.models import GaussianNB

    train = pd.read_csv(SAMPLE / "iris_train.csv")
    test = pd.read_csv(SAMPLE / "iris_test.csv")
    core = GaussianNB().fit(train.drop(columns="label").to_numpy(), train["label"].to_numpy())

    res = ok(nbcli("predict", "--model", iris_model, "--data", SAMPLE / "iris_test.csv", "--proba"))
    pred = pd.read_csv(io.StringIO(res.stdout))
    assert list(pred.columns) == [
        "prediction",
        "proba_setosa",
        "proba_versicolor",
        "proba_virginica",
    ]
    X = test.drop(columns="label").to_numpy()
    np.testing.assert_array_equal(pred["prediction"].to_numpy(), core.predict(X))
    # The CSV holds exp(log posterior) written in full precision: what the
    # core gives, to the rounding of another summation order (the command
    # scores row blocks of its own layout), and its direct softmax to rounding.
    got, expected = pred.iloc[:, 1:].to_numpy(), np.exp(core.predict_log_proba(X))
    np.testing.assert_array_less(
        np.abs(got - expected), posterior_tolerance(core, X, got, expected)
    )
    np.testing.assert_allclose(
        pred.iloc[:, 1:].to_numpy(), core.predict_proba(X), rtol=1e-12, atol=0
    )
    assert load_model(iris_model).training["n_samples"] == 90

    # The summary of a fit: classes with counts and priors, training accuracy.
    out = tmp_path / "m.npz"
    res = ok(nbcli("fit", "-m", "gaussian", "-d", SAMPLE / "iris_train.csv", "-o", out))
    assert "setosa" in res.stdout and "0.3333" in res.stdout and "30" in res.stdout
    acc = np.mean(core.predict(train.drop(columns="label").to_numpy()) == train["label"].to_numpy())
    assert f"{acc:.4f}" in res.stdout
    assert "using column 'label' as the target" in res.stderr


def test_predict_output_file_and_reordered_columns(iris_model, tmp_path):
    test = pd.read_csv(SAMPLE / "iris_test.csv")
    shuffled = test[
        ["petal_width_cm", "label", "sepal_width_cm", "petal_length_cm", "sepal_length_cm"]
    ]
    shuffled = shuffled.assign(extra=1.0, id=np.arange(len(test)))
    src = tmp_path / "shuffled.csv"
    shuffled.to_csv(src, index=False)
    out = tmp_path / "pred.csv"
    ok(nbcli("predict", "-m", iris_model, "-d", src, "-o", out, "--keep", "id"))
    direct = pd.read_csv(
        io.StringIO(ok(nbcli("predict", "-m", iris_model, "-d", SAMPLE / "iris_test.csv")).stdout)
    )
    got = pd.read_csv(out)
    assert list(got.columns) == ["id", "prediction"]
    assert got["id"].tolist() == list(range(len(test)))
    assert got["prediction"].tolist() == direct["prediction"].tolist()


def test_integer_labels_keep_their_type(tmp_path):
    out = tmp_path / "digits.npz"
    ok(nbcli("fit", "-m", "multinomial", "-d", SAMPLE / "digits_train.csv", "-o", out, "-q"))
    from nbcli.io.modelfile import load_model

    mf = load_model(out)
    assert mf.classes.tolist() == list(range(10))
    assert mf.metadata["classes"] == list(range(10))
    res = ok(nbcli("predict", "-m", out, "-d", SAMPLE / "digits_test.csv"))
    assert res.stdout.splitlines()[1].isdigit()


def test_config_file_and_flags_override(tmp_path):
    cfg = tmp_path / "lda.toml"
    cfg.write_text('model = "lda"\n[hyperparameters]\nshrinkage = 0.5\n[data]\ntarget = "label"\n')
    a, b = tmp_path / "a.npz", tmp_path / "b.npz"
    ok(nbcli("fit", "--config", cfg, "-d", SAMPLE / "wine_train.csv", "-o", a, "-q"))
    ok(
        nbcli(
            "fit",
            "--config",
            cfg,
            "--shrinkage",
            "auto",
            "-d",
            SAMPLE / "wine_train.csv",
            "-o",
            b,
            "-q",
        )
    )
    from nbcli.io.modelfile import load_model

    assert load_model(a).metadata["hyperparameters"]["shrinkage"] == 0.5
    assert load_model(b).metadata["hyperparameters"]["shrinkage"] == "auto"
    res = nbcli("fit", "--config", cfg, "--alpha", "2", "-d", SAMPLE / "wine_train.csv", "-o", a)
    assert res.returncode == 2
    assert res.stderr.strip() == "error: --alpha does not apply to the lda model"


def test_priors_by_label(tmp_path):
    out = tmp_path / "m.npz"
    ok(
        nbcli(
            "fit",
            "-m",
            "gaussian",
            "-d",
            SAMPLE / "iris_train.csv",
            "-o",
            out,
            "-q",
            "--priors",
            "virginica=0.5,setosa=0.2,versicolor=0.3",
        )
    )
    from nbcli.io.modelfile import load_model

    np.testing.assert_allclose(load_model(out).model.class_prior_, [0.2, 0.3, 0.5])


def _eval_json(model, data, *extra):
    res = ok(nbcli("evaluate", "-m", model, "-d", data, "--json", "-", *extra))
    return json.loads(res.stdout), res


def test_evaluate_json_on_stdout_only_and_matches_sklearn(iris_model):
    metrics = pytest.importorskip("sklearn.metrics")
    report, res = _eval_json(
        iris_model, SAMPLE / "iris_test.csv", "--bootstrap", "200", "--seed", "7"
    )
    assert report["schema"] == "nbcli.evaluation" and report["schema_version"] == 1
    assert report["settings"]["seed"] == 7 and report["settings"]["bootstrap_resamples"] == 200
    import hashlib

    digest = hashlib.sha256((SAMPLE / "iris_test.csv").read_bytes()).hexdigest()
    assert report["inputs"]["data"]["sha256"] == digest
    assert (
        report["inputs"]["model"]["sha256"]
        == hashlib.sha256(Path(iris_model).read_bytes()).hexdigest()
    )
    test = pd.read_csv(SAMPLE / "iris_test.csv")
    pred = pd.read_csv(
        io.StringIO(
            ok(nbcli("predict", "-m", iris_model, "-d", SAMPLE / "iris_test.csv", "--proba")).stdout
        )
    )
    y, p = test["label"], pred["prediction"]
    assert report["metrics"]["accuracy"]["value"] == pytest.approx(
        metrics.accuracy_score(y, p), abs=1e-12
    )
    assert report["metrics"]["macro_f1"]["value"] == pytest.approx(
        metrics.f1_score(y, p, average="macro"), abs=1e-12
    )
    assert report["metrics"]["log_loss"]["value"] == pytest.approx(
        metrics.log_loss(
            y, pred.iloc[:, 1:].to_numpy(), labels=["setosa", "versicolor", "virginica"]
        ),
        rel=1e-9,
    )
    # Same seed, same interval.
    again, _ = _eval_json(iris_model, SAMPLE / "iris_test.csv", "--bootstrap", "200", "--seed", "7")
    assert again["metrics"] == report["metrics"]


def test_evaluate_and_compare_hash_inputs_only_when_asked(iris_model):
    from nbcli.workflows.evaluate import compare, evaluate

    data = str(SAMPLE / "iris_test.csv")
    plain = evaluate(iris_model, DataRequest.of(data, sha256=False), ScoreSettings(bootstrap=0))
    assert plain.inputs == {"model": {"path": iris_model}, "data": {"path": data}}
    hashed = evaluate(iris_model, DataRequest.of(data), ScoreSettings(bootstrap=0))
    assert len(hashed.inputs["data"]["sha256"]) == 64
    pair = compare(
        [iris_model, iris_model], DataRequest.of(data, sha256=False), ScoreSettings(bootstrap=0)
    )
    assert pair.inputs == {"models": [{"path": iris_model}] * 2, "data": {"path": data}}


def test_fail_under_exit_codes(iris_model):
    data = SAMPLE / "iris_test.csv"
    res = nbcli_process(
        "evaluate", "-m", iris_model, "-d", data, "-q", "--fail-under", "accuracy=0.99"
    )
    assert res.returncode == 3
    assert (
        res.stderr.strip()
        .splitlines()[-1]
        .startswith("error: accuracy 0.9667 is below the threshold 0.99")
    )
    ok(
        nbcli_process(
            "evaluate",
            "-m",
            iris_model,
            "-d",
            data,
            "-q",
            "--fail-under",
            "accuracy=0.9",
            "--fail-under",
            "accuracy.lower=0.5",
        )
    )
    res = nbcli_process(
        "evaluate", "-m", iris_model, "-d", data, "-q", "--fail-under", "accurasy=0.9"
    )
    assert res.returncode == 2 and "accurasy" in res.stderr


def test_training_data_is_flagged(iris_model):
    res = ok(
        nbcli(
            "evaluate", "-m", iris_model, "-d", SAMPLE / "iris_train.csv", "-q", "--bootstrap", "0"
        )
    )
    assert "warning:" in res.stderr and "trained on" in res.stderr


def test_compare_self_and_pair(iris_model, tmp_path):
    report = json.loads(
        ok(
            nbcli(
                "compare",
                "-m",
                iris_model,
                "-m",
                iris_model,
                "-d",
                SAMPLE / "iris_test.csv",
                "--json",
                "-",
            )
        ).stdout
    )
    assert report["metrics"]["difference"]["value"] == 0
    assert (
        report["metrics"]["difference"]["lower"] == 0
        and report["metrics"]["difference"]["upper"] == 0
    )
    assert report["mcnemar"]["p_value"] == 1
    other = tmp_path / "b.npz"
    ok(
        nbcli(
            "fit",
            "-m",
            "bernoulli",
            "--binarize",
            "7",
            "-d",
            SAMPLE / "digits_train.csv",
            "-o",
            other,
            "-q",
        )
    )
    a = tmp_path / "a.npz"
    ok(nbcli("fit", "-m", "lda", "-d", SAMPLE / "digits_train.csv", "-o", a, "-q"))
    res = nbcli(
        "compare",
        "-m",
        a,
        "-m",
        other,
        "-d",
        SAMPLE / "digits_test.csv",
        "--json",
        "-",
        "--fail-under",
        "difference.upper=0",
    )
    report = json.loads(res.stdout)
    # Bernoulli NB is significantly worse than LDA on digits: the whole
    # interval of B - A lies below 0, so the CI gate fails.
    assert report["metrics"]["difference"]["upper"] < 0
    assert res.returncode == 3


def _calibration_figures(model, split):
    report, _ = _eval_json(model, SAMPLE / f"digits_{split}.csv", "--bootstrap", "0")
    return report


# Gaussian NB with var_smoothing 0.1: with the default 1e-9, pixels that are
# constant within a class get variances of ~1e-8 and the posteriors become
# so extreme (test log-loss 13.6) that the NLL-optimal temperature (2e7)
# flattens them to near uniform: log-loss falls, but ECE rises. With a
# smoothing suited to pixel data the model is over-confident in the ordinary
# way that temperature scaling repairs.
@pytest.mark.parametrize(
    "kind,flags,expected_T",
    [
        ("gaussian", ["--var-smoothing", "0.1"], 4.2364907207),
        ("bernoulli", ["--binarize", "7"], 2.23066183628),
    ],
)
def test_temperature_scaling_repairs_overconfidence_on_digits(kind, flags, expected_T, tmp_path):
    model, calibrated = tmp_path / "m.npz", tmp_path / "cal.npz"
    ok(nbcli("fit", "-m", kind, *flags, "-d", SAMPLE / "digits_train.csv", "-o", model, "-q"))
    res = ok(
        nbcli(
            "calibrate",
            "-m",
            model,
            "-d",
            SAMPLE / "digits_calib.csv",
            "-o",
            calibrated,
            "--json",
            "-",
            "--bootstrap",
            "0",
        )
    )
    cal = json.loads(res.stdout)
    T = cal["calibrator"]["temperature"]
    assert T > 1
    before = _calibration_figures(model, "test")
    after = _calibration_figures(calibrated, "test")
    # Over-confident on the untouched test split: claims more than it achieves.
    assert before["calibration"]["mean_confidence"] > before["metrics"]["accuracy"]["value"] + 0.03
    assert after["metrics"]["log_loss"]["value"] < before["metrics"]["log_loss"]["value"]
    assert after["calibration"]["ece"] < before["calibration"]["ece"]
    assert after["metrics"]["accuracy"]["value"] == before["metrics"]["accuracy"]["value"]
    assert T == pytest.approx(expected_T, rel=1e-8)


def test_calibrate_refuses_training_data_and_bins(iris_model, tmp_path):
    res = nbcli("calibrate", "-m", iris_model, "-d", SAMPLE / "iris_train.csv")
    assert res.returncode == 2 and "--allow-training-data" in res.stderr
    rows = len((SAMPLE / "iris_test.csv").read_text().strip().splitlines()) - 1
    res = nbcli(
        "calibrate", "-m", iris_model, "-d", SAMPLE / "iris_test.csv", "--bins", str(rows + 1)
    )
    assert res.returncode == 2
    assert f"--bins {rows + 1}: more bins than the {rows} rows" in res.stderr
    assert f"give at most {rows}" in res.stderr
    res = ok(
        nbcli(
            "calibrate",
            "-m",
            iris_model,
            "-d",
            SAMPLE / "iris_calib.csv",
            "--method",
            "none",
            "--bins",
            "0,0.9,0.99,0.999,1",
            "--json",
            "-",
            "--bootstrap",
            "0",
        )
    )
    edges = json.loads(res.stdout)["reliability"]["edges"]
    assert edges == [0, 0.9, 0.99, 0.999, 1]


def test_isotonic_calibrated_model_round_trip(tmp_path):
    model, calibrated = tmp_path / "m.npz", tmp_path / "iso.npz"
    ok(nbcli("fit", "-m", "gaussian", "-d", SAMPLE / "digits_train.csv", "-o", model, "-q"))
    ok(
        nbcli(
            "calibrate",
            "-m",
            model,
            "-d",
            SAMPLE / "digits_calib.csv",
            "--method",
            "isotonic",
            "-o",
            calibrated,
            "-q",
        )
    )
    from nbcli.io.modelfile import load_model, save_model

    mf = load_model(calibrated)
    assert mf.calibrator.kind == "isotonic" and mf.metadata["calibration"]["method"] == "isotonic"
    again = tmp_path / "again.npz"
    save_model(mf, again)
    assert again.read_bytes() == calibrated.read_bytes()
    res = ok(nbcli("predict", "-m", calibrated, "-d", SAMPLE / "digits_test.csv", "--proba"))
    probs = pd.read_csv(io.StringIO(res.stdout)).iloc[:, 1:].to_numpy()
    np.testing.assert_allclose(probs.sum(axis=1), 1.0, rtol=1e-12)
    X = pd.read_csv(SAMPLE / "digits_test.csv").drop(columns="label").to_numpy()
    np.testing.assert_allclose(probs, mf.predict_proba(X), rtol=1e-15, atol=0)


def test_batch_prediction_skips_a_broken_file(iris_model, tmp_path):
    src = tmp_path / "in"
    src.mkdir()
    test = pd.read_csv(SAMPLE / "iris_test.csv")
    for i in range(3):
        test.iloc[i * 10 : (i + 1) * 10].assign(id=np.arange(10) + 100 * i).to_csv(
            src / f"part{i}.csv", index=False
        )
    (src / "broken.csv").write_text("sepal_length_cm,sepal_width_cm\n1,2\n")
    out = tmp_path / "out"
    res = nbcli(
        "predict",
        "-m",
        iris_model,
        "-d",
        str(src / "*.csv"),
        "--output-dir",
        out,
        "--keep",
        "id",
        "--jobs",
        "2",
    )
    assert res.returncode == 4
    assert "broken.csv" in res.stderr and "(file skipped)" in res.stderr
    assert sorted(p.name for p in out.iterdir()) == [
        "part0.pred.csv",
        "part1.pred.csv",
        "part2.pred.csv",
    ]
    whole = pd.read_csv(
        io.StringIO(ok(nbcli("predict", "-m", iris_model, "-d", SAMPLE / "iris_test.csv")).stdout)
    )
    for i in range(3):
        got = pd.read_csv(out / f"part{i}.pred.csv")
        assert got["id"].tolist() == list(np.arange(10) + 100 * i)
        assert (
            got["prediction"].tolist() == whole["prediction"].iloc[i * 10 : (i + 1) * 10].tolist()
        )
    assert "10" in res.stdout


def test_streaming_fit_equals_whole_fit(tmp_path):
    from nbcli.io.modelfile import load_model

    whole, chunked = tmp_path / "w.npz", tmp_path / "c.npz"
    ok(
        nbcli(
            "fit",
            "-m",
            "qda",
            "--reg-param",
            "0.1",
            "-d",
            SAMPLE / "digits_train.csv",
            "-o",
            whole,
            "-q",
        )
    )
    ok(
        nbcli(
            "fit",
            "-m",
            "qda",
            "--reg-param",
            "0.1",
            "-d",
            SAMPLE / "digits_train.csv",
            "-o",
            chunked,
            "-q",
            "--chunk-size",
            "97",
        )
    )
    a, b = load_model(whole), load_model(chunked)
    assert a.training["fingerprint"] == b.training["fingerprint"]
    X = pd.read_csv(SAMPLE / "digits_test.csv").drop(columns="label").to_numpy()
    np.testing.assert_allclose(b.predict_proba(X), a.predict_proba(X), rtol=1e-9, atol=1e-12)


def test_calibrate_takes_missing_drop_and_unseen_like_evaluate(tmp_path):
    import pandas as pd

    rng = np.random.default_rng(7)
    n = 120
    y = rng.integers(0, 2, n)
    frame = pd.DataFrame({"a": rng.normal(size=n) + y, "b": rng.normal(size=n) - y, "label": y})
    frame.iloc[:80].to_csv(tmp_path / "train.csv", index=False)
    calib = frame.iloc[80:].copy()
    calib.loc[calib.index[3], "a"] = np.nan
    calib.to_csv(tmp_path / "calib.csv", index=False)
    ok(nbcli("fit", "-m", "lda", "-d", tmp_path / "train.csv", "-o", tmp_path / "m.npz", "-q"))
    refused = nbcli("calibrate", "-m", tmp_path / "m.npz", "-d", tmp_path / "calib.csv")
    assert refused.returncode == 2 and "--missing drop" in refused.stderr
    run = ok(
        nbcli(
            "calibrate",
            "-m",
            tmp_path / "m.npz",
            "-d",
            tmp_path / "calib.csv",
            "--missing",
            "drop",
            "--unseen",
            "ignore",
            "--json",
            tmp_path / "c.json",
        )
    )
    assert "1 row with a missing value left out (--missing drop)" in run.stderr
    import json

    doc = json.loads((tmp_path / "c.json").read_text())
    assert doc["before"]["n_samples"] == 39


def test_config_data_table_takes_columns_and_na_values(tmp_path):
    import json

    data = tmp_path / "t.csv"
    data.write_text("code,x,label\n1,0.5,a\n2,?,b\n1,0.7,a\n2,1.9,b\n3,1.1,a\n1,0.2,b\n")
    config = tmp_path / "c.toml"
    config.write_text(
        'model = "mixed"\n[data]\ntarget = "label"\nna_values = ["?"]\n'
        'columns = {"code" = "categorical"}\n'
    )
    ok(
        nbcli(
            "fit", "-c", config, "-d", data, "-o", tmp_path / "m.npz", "--json", tmp_path / "f.json"
        )
    )
    doc = json.loads((tmp_path / "f.json").read_text())
    assert doc["n_samples"] == 6
    shown = nbcli("inspect", tmp_path / "m.npz", "--json", "-", "-q")
    assert '"categorical"' in shown.stdout
    config.write_text('model = "mixed"\n[data]\ncolumns = "code=categorical"\n')
    bad = nbcli("fit", "-c", config, "-d", data, "-o", tmp_path / "m2.npz")
    assert bad.returncode == 2 and "[data] columns must be a table" in bad.stderr


def test_evaluate_and_calibrate_give_one_interval_for_one_mean_loss(tmp_path):
    from nbcli.workflows.calibrate import calibrate
    from nbcli.workflows.evaluate import evaluate

    rng = np.random.default_rng(5)
    n = 30_000  # beyond the exact resampling of the means: the grouped path
    y = rng.integers(0, 3, n)
    X = rng.normal(size=(n, 4)) + y[:, None] * 0.8
    header = "a,b,c,d,label"
    data, train = tmp_path / "d.csv", tmp_path / "t.csv"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",", header=header, comments="")
    np.savetxt(
        train, np.column_stack([X[:5000], y[:5000]]), delimiter=",", header=header, comments=""
    )
    model = tmp_path / "m.npz"
    assert nbcli_process("fit", "-m", "gaussian", "-d", train, "-o", model, "-q").returncode == 0
    ev = evaluate(
        str(model), DataRequest.of(str(data), sha256=False), ScoreSettings(bootstrap=1000, seed=3)
    )
    cal = calibrate(
        str(model), DataRequest.of(str(data)), ScoreSettings(bootstrap=1000, seed=3), method="none"
    ).report
    for key in ("log_loss", "brier"):
        assert ev.metrics[key] == cal.metrics[key], key
    assert ev.metrics["log_loss"].method == "BCa"
