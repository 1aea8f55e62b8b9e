"""Messages that name what the user gave: options, columns, and remedies that apply."""

from __future__ import annotations

import json

import numpy as np
import pytest

from nbcli.models.registry import model_classes
from nbcli.workflows.tables import smoothing_warnings
from tests.conftest import assert_one_error_line, nbcli_in_process
from tests.declared import model_types_where


@pytest.mark.parametrize("command", ["evaluate", "compare", "cv", "tune", "calibrate"])
def test_a_nan_confidence_is_refused_as_out_of_range(tmp_path, sample_dir, command):
    data = sample_dir / "iris_calib.csv"
    model = tmp_path / "m.npz"
    assert nbcli_in_process("fit", "-m", "gaussian", "-d", data, "-o", model, "-q").returncode == 0
    args = {
        "evaluate": ["-m", model, "-d", data],
        "compare": ["-m", model, "-m", model, "-d", data],
        "cv": ["-m", "gaussian", "-d", data],
        "tune": ["-m", "gaussian", "-d", data, "--var-smoothing", "1e-9,1e-8"],
        "calibrate": ["-m", model, "-d", data, "-o", tmp_path / "c.npz"],
    }[command]
    run = nbcli_in_process(command, *args, "--confidence", "nan")
    line = assert_one_error_line(run, "'--confidence'", "nan is not in the range 0.5<=x<=0.9999")
    assert "internal error" not in line and str(data) not in line
    assert not (tmp_path / "c.npz").exists()


@pytest.mark.parametrize("command", ["cv", "tune"])
def test_a_fold_without_a_column_value_in_a_class_names_the_column(tmp_path, command):
    # Column 'g' is observed in one row of class b only: the fold model that
    # leaves that row out has no value of it in class b; all rows have one.
    rows = [f"{i % 3},{i * 0.7:.1f},{'uvw'[i % 3]},a" for i in range(9)]
    rows += [f"{i % 3},{'' if i else '2.5'},{'uvw'[i % 3]},b" for i in range(9)]
    data = tmp_path / "holes.csv"
    data.write_text("x,g,c,label\n" + "\n".join(rows) + "\n", encoding="utf-8")
    fit = nbcli_in_process("fit", "-m", "mixed", "-d", data, "-o", tmp_path / "f.npz", "-q")
    assert fit.returncode == 0, fit.stderr
    grid = ["--var-smoothing", "1e-9,1e-8"] if command == "tune" else []
    run = nbcli_in_process(command, "-m", "mixed", "-d", data, "--folds", "3", *grid)
    line = assert_one_error_line(run, "Gaussian column 'g' has no observed value in class 'b'")
    assert "column 1" not in line


def test_allow_worse_says_the_refused_calibrator_is_written_anyway(tmp_path, sample_dir):
    # Gaussian NB on digits: the temperature calibrator makes the Brier score
    # worse, so no verdict accepts it.
    model, out = tmp_path / "dg.npz", tmp_path / "dg-cal.npz"
    data = sample_dir / "digits_train.csv"
    assert nbcli_in_process("fit", "-m", "gaussian", "-d", data, "-o", model).returncode == 0
    args = ["calibrate", "-m", model, "-d", sample_dir / "digits_calib.csv", "-o", out]
    args += ["--method", "temperature", "--bootstrap", "0"]
    run = nbcli_in_process(*args, "--allow-worse")
    assert run.returncode == 0, run.stderr
    warning = next(line for line in run.stderr_lines if "is not accepted" in line)
    assert "its Brier score is worse beyond the margin" in warning
    assert warning.startswith("warning:")
    assert "written anyway, because of --allow-worse" in warning
    assert "would not be written" not in run.stderr
    assert f"wrote {out}" in run.stderr_lines
    refused = nbcli_in_process(*args, "--force", "--json", tmp_path / "r.json")
    assert refused.returncode == 3 and "was not written" in refused.stderr_lines[-1]
    # The error line gives the verdict's figures; its warning is not printed
    # before it as well, and stays in the JSON report.
    said = [line for line in refused.stderr_lines if "is not accepted" in line]
    assert said == [refused.stderr_lines[-1]] and said[0].startswith("error:")
    doc = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert any("is not accepted" in w for w in doc["after"]["warnings"])


def test_allow_worse_does_not_promise_a_temperature_run_to_zero(tmp_path):
    # Two classes 20 spreads apart: every calibration row is predicted right,
    # so temperature scaling runs to T -> 0, which not even --allow-worse writes.
    rng = np.random.default_rng(3)
    for name in ("train", "calib"):
        y = np.repeat([0, 1], 15)
        x = rng.normal(size=y.size) + 20.0 * y
        rows = [f"{v!r},{c}" for v, c in zip(x.tolist(), y.tolist())]
        (tmp_path / f"{name}.csv").write_text("x,label\n" + "\n".join(rows) + "\n")
    model, out = tmp_path / "far.npz", tmp_path / "far-cal.npz"
    fit = nbcli_in_process("fit", "-m", "gaussian", "-d", tmp_path / "train.csv", "-o", model)
    assert fit.returncode == 0, fit.stderr
    args = ["calibrate", "-m", model, "-d", tmp_path / "calib.csv", "-o", out]
    run = nbcli_in_process(*args, "--method", "temperature", "--bootstrap", "0", "--allow-worse")
    assert run.returncode == 2 and not out.exists()
    warning = next(line for line in run.stderr_lines if "is not taken" in line)
    assert "no calibrated model is written, even with --allow-worse" in warning
    assert "written anyway" not in run.stderr
    assert "nothing was written" in run.stderr_lines[-1]


def _iris_model(tmp_path, sample_dir):
    """A Gaussian NB model file of the iris training split."""
    model = tmp_path / "iris.npz"
    fit = nbcli_in_process(
        "fit", "-m", "gaussian", "-d", sample_dir / "iris_train.csv", "-o", model
    )
    assert fit.returncode == 0, fit.stderr
    return model


def test_calibration_says_unseen_labels_are_left_out_not_counted(tmp_path, sample_dir):
    model = _iris_model(tmp_path, sample_dir)
    lines = (sample_dir / "iris_calib.csv").read_text(encoding="utf-8").splitlines()
    header = lines[0].split(",")
    extra = ",".join([*["1.0"] * (len(header) - 1), "novel"])  # the label last
    data = tmp_path / "calib.csv"
    data.write_text("\n".join([*lines, extra, extra]) + "\n", encoding="utf-8")
    run = nbcli_in_process("calibrate", "-m", model, "-d", data, "--method", "none")
    assert run.returncode == 0, run.stderr
    assert (
        "warning: 2 calibration rows have labels the model never saw ('novel'); "
        "they are left out of every figure of this report"
    ) in run.stderr_lines


def _two_classes(column: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A varying column and ``column`` (class 0's values), 6 rows a class."""
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.normal(size=12), np.concatenate([column, rng.normal(size=6)])])
    return X, np.repeat([0, 1], 6)


def _with_zero_variance():
    """Model classes that report pairs whose variance is smoothing alone."""
    X, y = _two_classes(np.full(6, 4.0))
    return [
        cls
        for cls in model_classes().values()
        if "var_smoothing" in cls().get_params()
        and len(getattr(cls().fit(X, y), "zero_variance_", ())) > 0
    ]


def test_the_zero_variance_classes_are_found():
    assert len(_with_zero_variance()) >= 2


@pytest.mark.parametrize("cls", _with_zero_variance(), ids=lambda c: c.name)
def test_the_smoothing_warning_suggests_only_what_the_model_takes(cls):
    X, y = _two_classes(np.full(6, 4.0))
    (warning,) = smoothing_warnings("t.csv", cls().fit(X, y), ["f", "g"])
    assert "the feature is constant within the class: 'g' in class 0" in warning
    assert "underflows" not in warning
    # Suggested only where the model does not use it already (mixed's default).
    scaled = cls().get_params().get("var_smoothing_scale") == "feature"
    assert ("--var-smoothing-scale feature" in warning) != scaled
    assert "--column NAME=categorical" in warning
    if "categorical" in cls.feature_kinds:
        assert "--model" not in warning
    else:
        # The model suggested is one that reads a column as categories.
        name = warning.split("--model ")[1].split()[0]
        assert "categorical" in model_classes()[name].feature_kinds
    scaled = cls(var_smoothing_scale="feature").fit(X, y)
    assert "--var-smoothing-scale" not in smoothing_warnings("t.csv", scaled, ["f", "g"])[0]


@pytest.mark.parametrize("cls", _with_zero_variance(), ids=lambda c: c.name)
def test_a_variance_that_underflows_is_not_called_constant(cls):
    # Differing values near 1e-310: their squares, so their variance, are 0.
    X, y = _two_classes(np.array([1.0, 2.0, 4.0, 3.0, 2.0, 5.0]) * 1e-311)
    model = cls().fit(X, y)
    assert model.zero_variance_.tolist() == [[0, 1]]
    (warning,) = smoothing_warnings("t.csv", model, ["f", "g"])
    assert "the values differ, but their variance underflows float64: 'g' in class 0" in warning
    assert "constant" not in warning and "categorical" not in warning
    assert "rescaling the column" in warning


def test_a_class_without_values_in_a_gaussian_column_is_told_the_remedy(tmp_path):
    # Column 'X' is missing in every row of class 'Van'; the line says how to
    # fit all the same, and each remedy it names works.
    data = tmp_path / "miss.csv"
    data.write_text("X,Z,label\n,2,Van\n,3,Van\n,4,Van\n5,6,Bus\n6,7,Bus\n", encoding="utf-8")
    out = tmp_path / "m.npz"
    # The models of Gaussian columns whose command line leaves a missing cell
    # out; one that also takes categorical columns reads X as categories
    # itself, the others are pointed at the first model of both kinds.
    gaussian = model_types_where(
        lambda cls: (
            "gaussian" in cls.feature_kinds
            and any(s.name == "missing" and s.cli_default == "ignore" for s in cls.hyperparameters)
        )
    )
    both = model_types_where(lambda cls: {"gaussian", "categorical"} <= set(cls.feature_kinds))
    assert gaussian and both
    for model in gaussian:
        alternative = (
            "or read it as categorical with --column X=categorical"
            if model in both
            else f"or fit --model {both[0]} with --column X=categorical"
        )
        run = nbcli_in_process("fit", "-m", model, "-d", data, "-o", out)
        line = assert_one_error_line(
            run,
            "column 'X' has no observed value in class 'Van'",
            f"need at least one: leave the column out with --drop X, {alternative}",
        )
        assert "Traceback" not in line and not out.exists()
    for remedy in (
        ["-m", "gaussian", "--drop", "X"],
        ["-m", "mixed", "--column", "X=categorical"],
    ):
        run = nbcli_in_process("fit", *remedy, "-d", data, "-o", out, "-q")
        assert run.returncode == 0, (remedy, run.stderr)


def _value_options(command: str):
    """Every option of ``command`` declared to take one value (not a flag, not a list)."""
    from nbcli.cli import app

    app.register_commands([command])
    sub = app.command().commands[command]
    return [
        p
        for p in sub.params
        if getattr(p, "param_type_name", "") == "option"
        and not p.is_flag
        and not p.multiple
        and p.name != "help"
    ]


@pytest.mark.parametrize(
    "command",
    [
        "fit",
        "predict",
        "evaluate",
        "compare",
        "calibrate",
        "cv",
        "tune",
        "split",
        "inspect",
        "export",
    ],
)
def test_every_option_of_one_value_given_twice_is_refused_naming_both(tmp_path, command):
    options = _value_options(command)
    assert options, command
    for param in options:
        flag = max(param.opts, key=len)
        run = nbcli_in_process(command, flag, "first-value", flag, "second-value")
        line = assert_one_error_line(run, "given twice", "(first-value, second-value)")
        assert flag in line, line


def test_the_last_of_two_models_is_never_taken_silently(tmp_path, sample_dir):
    data = sample_dir / "iris_calib.csv"
    a, b = tmp_path / "a.npz", tmp_path / "b.npz"
    for model, path in (("gaussian", a), ("lda", b)):
        assert nbcli_in_process("fit", "-m", model, "-d", data, "-o", path, "-q").returncode == 0
    run = nbcli_in_process("evaluate", "-m", a, "-m", b, "-d", data, "--bootstrap", "0")
    assert_one_error_line(run, "-m/--model given twice", str(a), str(b), "nbcli compare")
    run = nbcli_in_process("fit", "-m", "gaussian", "--model=lda", "-d", data, "-o", a)
    assert_one_error_line(run, "-m/--model given twice (gaussian, lda)")
    out1, out2 = tmp_path / "o1.npz", tmp_path / "o2.npz"
    run = nbcli_in_process("fit", "-m", "gaussian", "-d", data, "-o", out1, "--output", out2)
    assert_one_error_line(run, "-o/--output given twice")
    assert not out1.exists() and not out2.exists()
    # Flags say the same thing twice; lists take every value.
    run = nbcli_in_process("fit", "-m", "gaussian", "-d", data, "-o", out1, "-q", "--quiet")
    assert run.returncode == 0 and out1.exists()


@pytest.mark.parametrize("command", ["fit", "cv", "tune", "evaluate", "predict"])
def test_every_on_off_pair_given_both_ways_is_refused(command):
    from nbcli.cli import app

    app.register_commands([command])
    sub = app.command().commands[command]
    pairs = [p for p in sub.params if getattr(p, "secondary_opts", None)]
    for param in pairs:
        on, off = max(param.opts, key=len), max(param.secondary_opts, key=len)
        for first, second in ((on, off), (off, on)):
            run = nbcli_in_process(command, first, second)
            line = assert_one_error_line(run, "both given", "contradict")
            assert on in line and off in line, line
    if command == "fit":
        assert pairs, "fit has on/off pairs (--standardize/--no-standardize)"


def _gaussian_column_models():
    """Model types whose numeric column is Gaussian (so any real numbers are data)."""
    return [cls for cls in model_classes().values() if cls.feature_kinds[0] == "gaussian"]


@pytest.mark.parametrize("cls", _gaussian_column_models(), ids=lambda c: c.name)
def test_a_refused_missing_cell_offers_only_the_policies_the_model_takes(tmp_path, cls):
    from nbcli.workflows.tables import MISSING_POLICIES

    spec = {s.name: s for s in cls.hyperparameters}["missing"]
    takes = {p for p in MISSING_POLICIES if p != "error" and spec.is_valid(p)}
    rows = [f"{i * 0.5:.1f},{(i * 7) % 5 + 0.25 * i:.2f},{'ab'[i % 2]}" for i in range(12)]
    rows[3] = "," + rows[3].split(",", 1)[1]
    data = tmp_path / "na.csv"
    data.write_text("x,z,label\n" + "\n".join(rows) + "\n", encoding="utf-8")
    model = tmp_path / "m.npz"
    fit = nbcli_in_process("fit", "-m", cls.name, "-d", data, "--missing", "error", "-o", model)
    line = assert_one_error_line(fit, "column 'x' has a missing value at row 4")
    offered = {p for p in MISSING_POLICIES if f"--missing {p} " in line}
    assert offered == takes and takes, line
    # Each policy offered is then taken.
    for policy in sorted(offered):
        assert (
            nbcli_in_process(
                "fit", "-m", cls.name, "-d", data, "--missing", policy, "-o", model, "-q", "--force"
            ).returncode
            == 0
        )
    run = nbcli_in_process("evaluate", "-m", model, "-d", data, "--missing", "error", "-q")
    line = assert_one_error_line(run, "column 'x' has a missing value at row 4")
    assert {p for p in MISSING_POLICIES if f"--missing {p} " in line} == takes


def test_some_model_cannot_leave_a_missing_cell_out():
    assert any(
        not {s.name: s for s in c.hyperparameters}["missing"].is_valid("ignore")
        for c in _gaussian_column_models()
    )


def _binary_models():
    return [c for c in model_classes().values() if c.feature_kinds == ("bernoulli",)]


@pytest.mark.parametrize("cls", _binary_models(), ids=lambda c: c.name)
def test_a_non_binary_value_at_fit_is_not_said_to_break_a_training_yet_to_come(tmp_path, cls):
    binary = "a,b,label\n0,1,x\n1,0,x\n0,0,x\n1,1,y\n1,0,y\n0,1,y\n"
    counts = binary.replace("1,1,y", "3,1,y")
    (tmp_path / "counts.csv").write_text(counts, encoding="utf-8")
    (tmp_path / "binary.csv").write_text(binary, encoding="utf-8")
    model = tmp_path / "m.npz"
    fit = nbcli_in_process("fit", "-m", cls.name, "-d", tmp_path / "counts.csv", "-o", model)
    line = assert_one_error_line(fit, "value 3 is not 0 or 1", "takes binary features")
    assert "trained" not in line and "--binarize THRESHOLD" in line
    assert (
        nbcli_in_process(
            "fit", "-m", cls.name, "-d", tmp_path / "binary.csv", "-o", model, "-q"
        ).returncode
        == 0
    )
    run = nbcli_in_process("predict", "-m", model, "-d", tmp_path / "counts.csv")
    assert_one_error_line(run, "was trained on binary features", "retrain with --binarize")


def test_auto_on_rows_of_one_class_does_not_point_to_temperature(tmp_path, sample_dir):
    # Sigmoid and isotonic cannot be fitted on rows of one class; --method
    # auto fits temperature itself, so its notes may not offer it as the way on.
    model = _iris_model(tmp_path, sample_dir)
    lines = (sample_dir / "iris_calib.csv").read_text(encoding="utf-8").splitlines()
    first = lines[1].rsplit(",", 1)[1]
    one = tmp_path / "one.csv"
    one.write_text("\n".join([lines[0], *(l for l in lines[1:] if l.endswith("," + first))]) + "\n")
    run = nbcli_in_process(
        "calibrate", "-m", model, "-d", one, "--bootstrap", "0", "-o", tmp_path / "c.npz"
    )
    assert run.returncode in (2, 3) and "Traceback" not in run.stderr, run.stderr
    left_out = [line for line in run.stderr_lines if "--method auto leaves out" in line]
    assert len(left_out) == 2 and all("Calibrate on rows of every class" in l for l in left_out)
    assert "--method temperature" not in run.stderr, run.stderr


@pytest.mark.parametrize("command", ["evaluate", "calibrate", "compare"])
def test_scoring_commands_say_their_target_default_is_the_models(command):
    text = " ".join(nbcli_in_process(command, "--help").stdout.split())
    assert "Default: the model's own target column" in text, text
