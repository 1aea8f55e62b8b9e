"""Smoothing defaults through the command line and model files: mixed's
per-feature scale, gaussian's warning, older files' meaning."""

import json
import zipfile

import numpy as np
import pytest

from tests.conftest import nbcli_in_process

sklearn = pytest.importorskip("sklearn")
from sklearn.datasets import load_breast_cancer  # noqa: E402

pytestmark = pytest.mark.numerical

FACTOR = 1e5


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    """Breast cancer train/test CSVs as they are, and with 'worst area' times 1e5."""
    root = tmp_path_factory.mktemp("cancer")
    frame = load_breast_cancer(as_frame=True).frame
    train, test = frame.iloc[::2], frame.iloc[1::2]
    paths = {}
    for name, part in (("train", train), ("test", test)):
        part.to_csv(root / f"{name}.csv", index=False)
        scaled = part.assign(**{"worst area": part["worst area"] * FACTOR})
        scaled.to_csv(root / f"{name}_scaled.csv", index=False)
        paths[name], paths[f"{name}_scaled"] = root / f"{name}.csv", root / f"{name}_scaled.csv"
    return root, paths


def _fit(root, data, name, *options):
    model = root / f"{name}.npz"
    run = nbcli_in_process("fit", "-d", data, "-t", "target", "-o", model, *options)
    assert run.returncode == 0, run.stderr
    return model, run


def _proba(root, model, data):
    out = root / f"{model.stem}-pred.csv"
    run = nbcli_in_process("predict", "-m", model, "-d", data, "--proba", "-o", out, "-q")
    assert run.returncode == 0, run.stderr
    import pandas as pd

    frame = pd.read_csv(out)
    return frame["prediction"].to_numpy(), frame.filter(like="proba").to_numpy()


def test_mixed_default_gives_the_same_predictions_in_other_units(tables):
    root, paths = tables
    a, run_a = _fit(root, paths["train"], "mixed", "-m", "mixed")
    b, run_b = _fit(root, paths["train_scaled"], "mixed_scaled", "-m", "mixed")
    pa, qa = _proba(root, a, paths["test"])
    pb, qb = _proba(root, b, paths["test_scaled"])
    assert np.array_equal(pa, pb)
    np.testing.assert_allclose(qa, qb, rtol=0, atol=1e-9)
    assert "var_smoothing's epsilon" not in run_a.stderr + run_b.stderr
    with np.load(b) as z:
        meta = json.loads(z["metadata"].tobytes())
    assert meta["hyperparameters"]["var_smoothing_scale"] == "feature"


def test_gaussian_warns_naming_column_class_and_flag_and_the_flag_silences_it(tables):
    root, paths = tables
    _, run = _fit(root, paths["train_scaled"], "gauss", "-m", "gaussian")
    lines = [line for line in run.stderr.splitlines() if "var_smoothing's epsilon" in line]
    assert len(lines) == 1, run.stderr
    line = lines[0]
    assert line.startswith("warning: ")
    assert "that of 'worst area'" in line  # the column whose variance sets epsilon
    assert "more than 10% of the class variance of 'mean radius' in class 0" in line
    assert "--var-smoothing-scale feature" in line
    _, run = _fit(
        root, paths["train_scaled"], "gauss_f", "-m", "gaussian", "--var-smoothing-scale", "feature"
    )
    assert "var_smoothing's epsilon" not in run.stderr


def _without_member(path, name, out):
    """A copy of the model file whose metadata lacks hyperparameter ``name``
    (as files written before it was stored)."""
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    meta = json.loads(arrays["metadata"].tobytes())
    del meta["hyperparameters"][name]
    arrays["metadata"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    with open(out, "wb") as f:
        np.savez(f, **arrays)
    assert zipfile.is_zipfile(out)


def test_a_file_without_the_scale_loads_with_the_global_scale_it_was_fitted_with(tables):
    from nbcli.io.modelfile import load_model

    root, paths = tables
    model, _ = _fit(
        root, paths["train_scaled"], "mixed_g", "-m", "mixed", "--var-smoothing-scale", "global"
    )
    old = root / "old.npz"
    _without_member(model, "var_smoothing_scale", old)
    loaded = load_model(old).model
    assert loaded.var_smoothing_scale == "global"
    np.testing.assert_allclose(loaded.epsilon_, load_model(model).model.epsilon_, rtol=1e-15)
    assert np.array_equal(
        _proba(root, old, paths["test_scaled"])[0], _proba(root, model, paths["test_scaled"])[0]
    )


def test_help_states_each_models_default():
    run = nbcli_in_process("fit", "--help")
    text = " ".join(run.stdout.split())
    assert "gaussian: global; mixed: feature" in text


def test_tune_searches_the_scale_on_one_pass(tables, tmp_path):
    _, paths = tables
    report = tmp_path / "tune.json"
    run = nbcli_in_process(
        "tune", "-m", "gaussian", "-d", paths["train_scaled"], "-t", "target",
        "--var-smoothing-scale", "global,feature", "--folds", "3", "--bootstrap", "0",
        "--metric", "accuracy", "--json", report,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    doc = json.loads(report.read_text())
    assert doc["grid"] == {"var_smoothing_scale": ["global", "feature"]}
    assert [r["params"]["var_smoothing_scale"] for r in doc["results"]] == ["global", "feature"]


def _smoothing_lines(stderr: str) -> list[str]:
    return [
        line
        for line in stderr.splitlines()
        if "var_smoothing's epsilon" in line or "a variance set by smoothing alone" in line
    ]


def test_cv_and_tune_give_fits_smoothing_warning_once(tables, tmp_path):
    _, paths = tables
    data = paths["train_scaled"]
    _, fit = _fit(tmp_path, data, "gauss_w", "-m", "gaussian")
    want = _smoothing_lines(fit.stderr)
    assert len(want) == 1 and "in class 0" in want[0], fit.stderr
    for command, extra in (
        ("cv", ["--folds", "5"]),
        ("tune", ["--var-smoothing", "1e-9,1e-12", "--folds", "3", "--metric", "accuracy"]),
    ):
        report = tmp_path / f"{command}.json"
        run = nbcli_in_process(
            command, "-m", "gaussian", "-d", data, "-t", "target", "--bootstrap", "0",
            *extra, "--json", report, "-q",
        )  # fmt: skip
        assert run.returncode == 0, run.stderr
        doc = json.loads(report.read_text())
        if command == "tune" and doc["best"]["params"]["var_smoothing"] != 1e-9:
            # Another epsilon chosen: its own warning (or none), not the default's.
            assert want[0] not in run.stderr
            continue
        # Once on stderr, not once per fold, the line fit gives; and in the report.
        assert _smoothing_lines(run.stderr) == want, run.stderr
        assert run.stdout == ""
        assert [w for w in doc["warnings"] if "var_smoothing's epsilon" in w] == [
            want[0].removeprefix("warning: ")
        ]
    # The flag the warning names silences it in cv too.
    run = nbcli_in_process(
        "cv", "-m", "gaussian", "-d", data, "-t", "target", "--bootstrap", "0",
        "--folds", "5", "--var-smoothing-scale", "feature", "-q",
    )  # fmt: skip
    assert run.returncode == 0 and _smoothing_lines(run.stderr) == [], run.stderr


def test_tune_warns_of_the_chosen_scale_only(tables, tmp_path):
    _, paths = tables
    report = tmp_path / "tune.json"
    run = nbcli_in_process(
        "tune", "-m", "gaussian", "-d", paths["train_scaled"], "-t", "target",
        "--var-smoothing-scale", "global,feature", "--folds", "3", "--bootstrap", "0",
        "--metric", "accuracy", "--json", report, "-q",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    best = json.loads(report.read_text())["best"]["params"]["var_smoothing_scale"]
    lines = _smoothing_lines(run.stderr)
    assert len(lines) == (1 if best == "global" else 0), (best, run.stderr)


def test_cv_gives_fits_warning_of_a_variance_that_is_epsilon_alone(tmp_path):
    import pandas as pd

    rng = np.random.default_rng(0)
    frame = pd.DataFrame(rng.normal(size=(60, 2)), columns=["u", "v"])
    frame.loc[:29, "v"] = 1.5  # constant within class 'a'
    frame["target"] = ["a"] * 30 + ["b"] * 30
    data = tmp_path / "zero.csv"
    frame.to_csv(data, index=False)
    _, fit = _fit(tmp_path, data, "zero", "-m", "gaussian")
    want = _smoothing_lines(fit.stderr)
    assert len(want) == 1 and "'v' in class 'a'" in want[0], fit.stderr
    run = nbcli_in_process("cv", "-m", "gaussian", "-d", data, "--folds", "3", "--bootstrap", "0")
    assert run.returncode == 0, run.stderr
    assert _smoothing_lines(run.stderr) == want, run.stderr


def test_a_variance_of_smoothing_alone_is_said_to_decide_for_or_against_its_class(tmp_path):
    # 'b' is 5 in every row of class y: its variance is epsilon alone, so a
    # row with b = 5 is drawn into y whatever 'a' says, and one off 5 ruled out.
    rows = "".join(f"{i},{i % 3},x\n" for i in range(6)) + "".join(f"{i},5,y\n" for i in range(6))
    (tmp_path / "c.csv").write_text("a,b,label\n" + rows)
    fit = nbcli_in_process("fit", "-m", "gaussian", "-d", tmp_path / "c.csv", "-o", tmp_path / "m")
    assert fit.returncode == 0, fit.stderr
    (line,) = _smoothing_lines(fit.stderr)
    assert "the feature is constant within the class: 'b' in class 'y'" in line
    assert "can decide a row's class by itself (a row at the class's value is drawn" in line
