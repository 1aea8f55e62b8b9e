"""What the terminal and the reader see: escaped data text, and refusals
that name what is known."""

from __future__ import annotations

import json

import pytest

from nbcli.io.modelfile import load_model
from nbcli.terminal import escape_controls
from tests.conftest import assert_one_error_line, fitted_model_file, nbcli, nbcli_in_process
from tests.declared import (
    grid_number,
    is_numeric_only,
    model_types_where,
    takes_column_types,
    takes_counts,
)

EVIL = "b\x1b]0;pwned\x07\u202e"


def test_escape_controls():
    assert escape_controls("plain, ünïcødé 名") == "plain, ünïcødé 名"
    assert escape_controls("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert escape_controls("x\x9by\x7f") == "x\\x9by\\x7f"
    assert escape_controls("r\u202el") == "r\\u202el"
    assert escape_controls("a\nb") == "a\\nb"
    assert escape_controls("a\nb", keep_whitespace=True) == "a\nb"


@pytest.fixture
def d(tmp_path):
    rows = [("1", "2", "x\x1b[2J"), ("2", "3", "x\x1b[2J"), ("3", "1", "x\x1b[2J")]
    rows += [("5", "6", "y"), ("6", "7", "y"), ("7", "5", "y")]
    text = f"a,{EVIL},label\n" + "".join(",".join(r) + "\n" for r in rows)
    (tmp_path / "evil.csv").write_text(text, encoding="utf-8")
    return tmp_path


def test_control_characters_in_names_and_labels_never_reach_the_terminal(d):
    runs = [
        nbcli_in_process("fit", "-m", "gaussian", "-d", d / "evil.csv", "-o", d / "e.npz"),
        nbcli_in_process("evaluate", "-m", d / "e.npz", "-d", d / "evil.csv", "--bootstrap", "0"),
        nbcli_in_process("predict", "-m", d / "e.npz", "-d", d / "evil.csv", "-t", "nope"),
        nbcli_in_process("fit", "-m", "gaussian", "-d", d / "evil.csv", "--features", "zz"),
    ]
    assert runs[0].returncode == 0 and runs[1].returncode == 0, (runs[0].stderr, runs[1].stderr)
    for run in runs:
        for stream in (run.stdout, run.stderr):
            assert "\x1b" not in stream and "\x07" not in stream and "\u202e" not in stream
    assert "x\\x1b[2J" in runs[1].stdout  # the label, shown escaped in the tables
    assert "\\x1b]0;pwned\\x07" in runs[2].stderr  # the column name, in the message


@pytest.fixture
def ints(tmp_path):
    rows = "1,2,1\n2,3,1\n3,1,1\n5,6,2\n6,7,2\n7,5,2\n"
    (tmp_path / "ints.csv").write_text("a,b,label\n" + rows, encoding="utf-8")
    floats = rows.replace(",1\n", ",1.0\n").replace(",2\n", ",2.0\n")
    (tmp_path / "floats.csv").write_text("a,b,label\n" + floats, encoding="utf-8")
    some = rows.replace("7,5,2\n", "7,5,3\n")
    (tmp_path / "some.csv").write_text("a,b,label\n" + some, encoding="utf-8")
    run = nbcli_in_process(
        "fit", "-m", "gaussian", "-d", tmp_path / "ints.csv", "-o", tmp_path / "i.npz"
    )
    assert run.returncode == 0, run.stderr
    return tmp_path


def test_evaluate_refuses_data_with_no_label_the_model_knows(ints):
    m = ints / "i.npz"
    run = nbcli_in_process("evaluate", "-m", m, "-d", ints / "floats.csv", "--bootstrap", "0")
    assert_one_error_line(run, "floats.csv", "'1.0'", "knows 1, 2", "--target")
    run = nbcli_in_process(
        "compare", "-m", m, "-m", m, "-d", ints / "floats.csv", "--bootstrap", "0"
    )
    assert_one_error_line(run, "knows 1, 2")
    # Some unknown: scored, with the warning.
    run = nbcli_in_process("evaluate", "-m", m, "-d", ints / "some.csv", "--bootstrap", "0")
    assert run.returncode == 0, run.stderr
    assert any(line.startswith("warning: 1 test row has a label") for line in run.stderr_lines)


def test_a_calibrator_that_makes_the_brier_score_worse_is_not_written(tmp_path, sample_dir):
    # Gaussian NB on digits with the default var_smoothing: log-likelihoods so
    # extreme that the NLL-optimal temperature flattens every posterior. The
    # cross-fitted log-loss falls (from 16 nats), the Brier score rises.
    model, out = tmp_path / "dg.npz", tmp_path / "dg-cal.npz"
    run = nbcli_in_process(
        "fit", "-m", "gaussian", "-d", sample_dir / "digits_train.csv", "-o", model
    )
    assert run.returncode == 0, run.stderr
    args = ["calibrate", "-m", model, "-d", sample_dir / "digits_calib.csv", "-o", out]
    run = nbcli_in_process(*args, "--method", "temperature", "--bootstrap", "0")
    assert run.returncode == 3, run.stderr
    errors = [line for line in run.stderr_lines if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in run.stderr
    # The log-loss did fall: the message names the criterion that failed.
    assert "does not improve the cross-fitted log-loss" not in run.stderr
    assert (
        "the temperature calibrator is not accepted: its Brier score is worse beyond the margin "
        "(temperature: cross-fitted log-loss 16.31 -> 2.19, difference -14.1"
    ) in errors[0]
    assert "Brier score difference +0.5" in errors[0] and "was not written" in errors[0]
    assert "--method auto" in errors[0] and "--allow-worse" in errors[0]
    assert not out.exists()
    run = nbcli_in_process(*args, "--method", "temperature", "--bootstrap", "0", "--allow-worse")
    assert run.returncode == 0, run.stderr
    assert out.exists() and f"wrote {out}" in run.stderr_lines
    warned = [line for line in run.stderr_lines if "is not accepted" in line]
    assert len(warned) == 1 and warned[0].startswith(
        "warning: the temperature calibrator is not accepted: its Brier score is worse beyond "
        "the margin (temperature log-loss 16.31 -> 2.19 (difference -14.1"
    )
    # A calibrator that helps is written without the flag, and auto finds one.
    run = nbcli_in_process(*args, "--method", "isotonic", "--bootstrap", "0", "--force")
    assert run.returncode == 0, run.stderr
    run = nbcli_in_process(*args, "--bootstrap", "0", "--force", "--json", "-", "-q")
    assert run.returncode == 0, run.stderr
    verdict = json.loads(run.stdout)["verdict"]
    assert verdict["chosen"] in ("sigmoid", "isotonic")
    assert load_model(out).calibrator.kind == verdict["chosen"]


def test_piped_lines_have_no_trailing_spaces(sample_dir, tmp_path):
    model = tmp_path / "w.npz"
    assert (
        nbcli_in_process(
            "fit", "-m", "gaussian", "-d", sample_dir / "wine_train.csv", "-o", model
        ).returncode
        == 0
    )
    run = nbcli_in_process(
        "evaluate", "-m", model, "-d", sample_dir / "wine_test.csv", "--bootstrap", "0"
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert len(lines) > 20
    assert [line for line in lines if line != line.rstrip()] == []


def test_a_model_type_where_a_file_is_read_and_the_reverse_get_a_hint(ints):
    run = nbcli_in_process("predict", "-m", "gaussian", "-d", ints / "ints.csv")
    assert_one_error_line(run, "--model gaussian", "is a model type", "nbcli fit -m gaussian")
    run = nbcli_in_process("evaluate", "-m", "QDA", "-d", ints / "ints.csv")
    assert_one_error_line(run, "is a model type")
    run = nbcli_in_process("fit", "-m", ints / "i.npz", "-d", ints / "ints.csv")
    assert_one_error_line(run, "fit takes a model type and writes a model file")
    for command in ("cv", "tune"):
        # They write no model file: the hint says what they do take.
        run = nbcli_in_process(command, "-m", ints / "i.npz", "-d", ints / "ints.csv")
        line = assert_one_error_line(run, f"{command} takes a model type, as fit does")
        assert "writes a model file" not in line
    run = nbcli_in_process("fit", "-m", "nonsense", "-d", ints / "ints.csv")
    assert_one_error_line(run, "'nonsense'")
    assert "model file" not in run.stderr
    for command in ("fit", "predict", "evaluate", "calibrate"):
        text = " ".join(nbcli_in_process(command, "--help").stdout.split())
        expected = (
            "Model type to train" if command == "fit" else "Model FILE (.npz) written by nbcli fit"
        )
        assert expected in text, (command, text)


def test_several_data_files_are_one_data_set_in_order(ints):
    """fit and evaluate read every --data, in order, as one data set (never
    only the last); so does calibrate, whose report on two files is the report
    on the two joined."""
    import json

    import numpy as np

    from nbcli.io.modelfile import load_model

    (ints / "first.csv").write_text("a,b,label\n1,2,1\n2,3,1\n5,6,2\n", encoding="utf-8")
    (ints / "second.csv").write_text("a,b,label\n3,1,1\n6,7,2\n7,5,2\n", encoding="utf-8")
    (ints / "both.csv").write_text(
        "a,b,label\n1,2,1\n2,3,1\n5,6,2\n3,1,1\n6,7,2\n7,5,2\n", encoding="utf-8"
    )
    two = ["-d", ints / "first.csv", "-d", ints / "second.csv"]
    for out, data in (("two.npz", two), ("one.npz", ["-d", ints / "both.csv"])):
        run = nbcli_in_process("fit", "-m", "gaussian", *data, "-o", ints / out, "-q")
        assert run.returncode == 0, run.stderr
    a, b = load_model(ints / "two.npz"), load_model(ints / "one.npz")
    assert a.training["n_samples"] == b.training["n_samples"] == 6
    X = np.array([[1.0, 2.0], [6.0, 6.0], [4.0, 4.0]])
    np.testing.assert_allclose(a.predict_proba(X), b.predict_proba(X), rtol=0, atol=1e-12)
    runs = [
        nbcli_in_process(
            "evaluate", "-m", ints / "one.npz", *data, "--bootstrap", "0", "--json", "-"
        )
        for data in (two, ["-d", ints / "both.csv"])
    ]
    assert all(r.returncode == 0 for r in runs), [r.stderr for r in runs]
    accuracy = [json.loads(r.stdout)["metrics"]["accuracy"]["value"] for r in runs]
    assert accuracy[0] == accuracy[1]
    runs = [
        nbcli_in_process("calibrate", "-m", ints / "i.npz", *data, "--json", "-")
        for data in (two, ["-d", ints / "both.csv"])
    ]
    assert all(r.returncode == 0 for r in runs), [r.stderr for r in runs]

    def figures(node):
        # The files read are named as given (one path or two): all else agrees.
        if isinstance(node, dict):
            return {
                k: figures(v) for k, v in node.items() if k not in ("inputs", "fitted_on", "data")
            }
        return [figures(v) for v in node] if isinstance(node, list) else node

    reports = [figures(json.loads(r.stdout)) for r in runs]
    assert reports[0]["calibrator"]["n_samples"] == 6
    assert reports[0] == reports[1]


@pytest.mark.parametrize(
    "options, fragments",
    [
        (["--features", "a", "--drop", "a"], ["'a'", "both --features and --drop"]),
        (["--features", ""], ["--features ''", "names no column"]),
        (["--drop", ","], ["--drop ','", "names no column"]),
        (["--target", "label", "--drop", "label"], ["--target label is also in --drop"]),
        (["--drop", "label"], ["--drop label", "--target"]),
    ],
)
@pytest.mark.parametrize("command", ["fit", "cv", "tune"])
def test_contradicting_column_options_are_refused(ints, options, fragments, command):
    # cv and tune select columns as fit does, and refuse the same contradictions.
    extra = {
        "fit": ["-o", ints / "n.npz"],
        "cv": ["--folds", "2", "--json", ints / "n.json"],
        "tune": ["--folds", "2", "--var-smoothing", "1e-9,1e-8", "-o", ints / "n.npz"],
    }[command]
    run = nbcli_in_process(command, "-m", "gaussian", "-d", ints / "ints.csv", *extra, *options)
    assert_one_error_line(run, *fragments)
    assert not (ints / "n.npz").exists() and not (ints / "n.json").exists()


def test_a_file_with_both_label_and_target_columns_needs_target(tmp_path):
    rows = "1,2,p,x\n2,3,p,x\n3,1,q,x\n5,6,q,y\n6,7,p,y\n7,5,q,y\n"
    (tmp_path / "two.csv").write_text("a,b,target,label\n" + rows, encoding="utf-8")
    run = nbcli_in_process(
        "fit", "-m", "gaussian", "-d", tmp_path / "two.csv", "-o", tmp_path / "t.npz"
    )
    assert_one_error_line(
        run, "several columns named like a target", "'target', 'label'", "--target"
    )
    run = nbcli_in_process(
        "fit",
        "-m",
        "gaussian",
        "-d",
        tmp_path / "two.csv",
        "-o",
        tmp_path / "t.npz",
        "--target",
        "label",
        "--drop",
        "target",
        "-q",
    )
    assert run.returncode == 0, run.stderr


def test_lda_warns_naming_collinear_features_and_refuses_when_nothing_is_left(tmp_path):
    import warnings

    import numpy as np

    from nbcli.models import MODELS
    from nbcli.models.discriminant import CollinearWarning

    rows = "1,2,3,5,x\n2,4,6,5,x\n3,5,8,5,x\n5,6,11,5,y\n6,7,13,5,y\n7,5,12,5,y\n"
    (tmp_path / "col.csv").write_text("a,b,c,k,label\n" + rows, encoding="utf-8")
    run = nbcli_in_process(
        "fit", "-m", "lda", "-d", tmp_path / "col.csv", "-o", tmp_path / "l.npz", "-q"
    )
    assert run.returncode == 0, run.stderr
    assert run.stderr_lines == [
        f"warning: {tmp_path / 'col.csv'}: variables are collinear: 2 of 4 directions of the "
        "within-class covariance dropped (along features 'a', 'b', 'c', 'k')"
    ]
    (tmp_path / "const.csv").write_text("a,label\n1,x\n1,x\n1,y\n1,y\n", encoding="utf-8")
    run = nbcli_in_process(
        "fit", "-m", "lda", "-d", tmp_path / "const.csv", "-o", tmp_path / "c.npz"
    )
    assert_one_error_line(run, "constant or collinear", "'a'", "nothing left")
    # The Python class warns too, and a full-rank fit does not.
    X = np.array([[1.0, 2, 3], [2, 4, 6], [3, 5, 8], [5, 6, 11], [6, 7, 13], [7, 5, 12]])
    y = np.array([0, 0, 0, 1, 1, 1])
    with pytest.warns(CollinearWarning, match="1 of 3 directions") as record:
        MODELS["lda"]().fit(X, y)
    assert record[0].message.features == [0, 1, 2]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        MODELS["lda"]().fit(X[:, :2], y)


def test_piped_output_keeps_the_confusion_matrix_of_40_classes(tmp_path):
    import numpy as np

    rng = np.random.default_rng(1)
    y = np.repeat([f"class_{i:02d}" for i in range(40)], 4)
    X = rng.normal(size=(len(y), 2)) + np.repeat(np.arange(40), 4)[:, None]
    lines = "".join(f"{a:.4f},{b:.4f},{label}\n" for (a, b), label in zip(X, y))
    (tmp_path / "c40.csv").write_text("a,b,label\n" + lines, encoding="utf-8")
    model = tmp_path / "c40.npz"
    assert (
        nbcli_in_process(
            "fit", "-m", "gaussian", "-d", tmp_path / "c40.csv", "--target", "label", "-o", model
        ).returncode
        == 0
    )
    run = nbcli_in_process("evaluate", "-m", model, "-d", tmp_path / "c40.csv", "--bootstrap", "0")
    assert run.returncode == 0, run.stderr
    assert "Confusion matrix not shown" not in run.stdout
    matrix = run.stdout.split("Confusion matrix", 1)[1]
    header = next(line for line in matrix.splitlines() if "true \\ predicted" in line)
    assert header.split()[-1] == "class_39" and len(header.split()) == 3 + 40


def test_reports_explain_their_terms_and_evaluate_names_what_it_scored(ints):
    m, data = ints / "i.npz", ints / "ints.csv"
    run = nbcli_in_process("evaluate", "-m", m, "-d", data, "--bootstrap", "0")
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines()[0] == f"Model {m} scored on {data}"
    text = " ".join(run.stdout.split())
    for term in (
        "ECE: expected calibration error",
        "MCE: the largest such gap",
        "positive means under-confident, negative over-confident",
        "twice the usual binary figure",
        "clipped below at 2.2e-308",
    ):
        assert term in text, term
    run = nbcli_in_process(
        "calibrate",
        "-m",
        m,
        "-d",
        data,
        "--method",
        "none",
        "--allow-training-data",
        "--bins",
        "2",
        "--bootstrap",
        "0",
    )
    assert run.returncode == 0, run.stderr
    assert (
        "ECE: expected calibration error" in run.stdout
        and "Gap: accuracy - confidence" in run.stdout
    )


def test_labels_and_header_names_lose_surrounding_whitespace_at_fit_and_predict(tmp_path):
    rows = "1,2,x\n2,3, x\n3,1,x \n5,6,y\n6,7, y\n7,5,y\n"
    (tmp_path / "ws.csv").write_text("a, b ,label\n" + rows, encoding="utf-8")
    (tmp_path / "new.csv").write_text(" a ,b\n1,2\n7,6\n", encoding="utf-8")
    model = tmp_path / "ws.npz"
    run = nbcli_in_process("fit", "-m", "gaussian", "-d", tmp_path / "ws.csv", "-o", model, "-q")
    assert run.returncode == 0, run.stderr
    from nbcli.io.modelfile import load_model

    mf = load_model(model)
    assert mf.classes.tolist() == ["x", "y"] and mf.feature_names == ["a", "b"]
    run = nbcli_in_process("predict", "-m", model, "-d", tmp_path / "new.csv")
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["prediction", "x", "y"]
    run = nbcli_in_process("evaluate", "-m", model, "-d", tmp_path / "ws.csv", "--bootstrap", "0")
    assert run.returncode == 0 and "never saw" not in run.stderr


def test_calibrator_rows_are_counted_from_1_and_mapped_to_data_rows():
    import numpy as np

    from nbcli.calibration import TemperatureScaling
    from nbcli.workflows.calibrate import _data_rows

    z = np.log(np.array([[0.9, 0.1], [1.0, 0.0], [0.2, 0.8]]))
    with pytest.raises(ValueError, match=r"^row 2 gives its true class probability 0"):
        TemperatureScaling().fit(z, np.array([0, 1, 1]))
    # The calibrator saw the known-label rows 0, 4, 5 of the file: its row 2 is data row 5.
    assert _data_rows("row 2 gives", np.array([0, 4, 5])) == "data row 5 gives"


def test_labels_spelled_as_missing_values_are_classes_and_said_to_be(tmp_path):
    rows = ["a,b,label"] + [f"{i % 7},{(i * 3) % 5},{'x' if i % 2 else 'y'}" for i in range(40)]
    rows[5] = "1,2,NaN"
    rows[9] = "3,1,NaN"
    data = tmp_path / "labels.csv"
    data.write_text("\n".join(rows) + "\n")
    fit = nbcli("fit", "-m", "gaussian", "-d", data, "-o", tmp_path / "m.npz", "-q")
    assert fit.returncode == 0, fit.stderr
    assert "the label 'NaN' is read as a class, as written" in fit.stderr
    assert "blank those cells if they mean no label" in fit.stderr
    # A model without that class: the scoring commands say why the rows count as errors.
    clean = tmp_path / "clean.csv"
    clean.write_text("\n".join(r for r in rows if not r.endswith("NaN")) + "\n")
    nbcli("fit", "-m", "gaussian", "-d", clean, "-o", tmp_path / "c.npz", "-q")
    run = nbcli("evaluate", "-m", tmp_path / "c.npz", "-d", data, "--bootstrap", "0", "-q")
    assert run.returncode == 0, run.stderr
    assert "never saw ('NaN')" in run.stderr and "'NaN' is read as a class" in run.stderr


def test_compare_names_the_model_a_refusal_is_about(tmp_path):
    wide = tmp_path / "wide.csv"
    wide.write_text("a,b,c,label\n" + "".join(f"{i},{i % 3},{i % 5},{i % 2}\n" for i in range(30)))
    narrow = tmp_path / "narrow.csv"
    narrow.write_text("a,b,label\n" + "".join(f"{i},{i % 3},{i % 2}\n" for i in range(30)))
    nbcli("fit", "-m", "gaussian", "-d", narrow, "-o", tmp_path / "a.npz", "-q")
    nbcli("fit", "-m", "gaussian", "-d", wide, "-o", tmp_path / "b.npz", "-q")
    run = nbcli("compare", "-m", tmp_path / "a.npz", "-m", tmp_path / "b.npz", "-d", narrow)
    line = assert_one_error_line(run, "missing column 'c'")
    assert line.endswith(f"(model B, {tmp_path / 'b.npz'})"), line


def test_isotonic_calibration_refuses_rows_without_some_class(tmp_path):
    model = tmp_path / "m.npz"
    fitted_model_file(model)  # classes x and y
    only_x = tmp_path / "x.csv"
    only_x.write_text("a,b,label\n" + "".join(f"{i % 7},{(i * 2) % 5},x\n" for i in range(30)))
    out = tmp_path / "cal.npz"
    run = nbcli("calibrate", "-m", model, "-d", only_x, "--method", "isotonic", "-o", out)
    assert_one_error_line(run, "no calibration row has the class 'y'", "--method temperature")
    assert not out.exists()


def test_compare_of_models_of_two_targets_names_them(tmp_path):
    data = tmp_path / "d.csv"
    data.write_text(
        "a,b,kind,colour\n"
        + "".join(f"{i % 7},{(i * 3) % 5},{'xy'[i % 2]},{'rgb'[i % 3]}\n" for i in range(60))
    )
    one, two = tmp_path / "kind.npz", tmp_path / "colour.npz"
    assert (
        nbcli(
            "fit", "-m", "gaussian", "-d", data, "-t", "kind", "--drop", "colour", "-o", one, "-q"
        ).returncode
        == 0
    )
    assert (
        nbcli(
            "fit", "-m", "gaussian", "-d", data, "-t", "colour", "--drop", "kind", "-o", two, "-q"
        ).returncode
        == 0
    )
    run = nbcli("compare", "-m", one, "-m", two, "-d", data)
    assert_one_error_line(run, "model A was trained on the target 'kind' and model B on 'colour'")


def test_a_target_mostly_of_na_labels_is_not_said_to_be_empty(tmp_path):
    rows = "a,b,label\n" + "".join(
        f"{i % 7},{(i * 3) % 5},{'NA' if i % 4 else 'ok'}\n" for i in range(40)
    )
    data = tmp_path / "na.csv"
    data.write_text(rows)
    fit = nbcli("fit", "-m", "gaussian", "-d", data, "-t", "label", "-o", tmp_path / "m.npz", "-q")
    assert fit.returncode == 0, fit.stderr
    assert "mostly empty" not in fit.stderr
    assert "the label 'NA' is read as a class" in fit.stderr


def test_compare_says_when_a_model_is_scored_on_its_training_rows(tmp_path):
    model_a, model_b = tmp_path / "a.npz", tmp_path / "b.npz"
    fitted_model_file(model_a)
    fitted_model_file(model_b, var_smoothing=0.5)
    data = tmp_path / "a.train.csv"  # the rows model A (and B) was fitted on
    run = nbcli("compare", "-m", model_a, "-m", model_b, "-d", data, "--bootstrap", "0")
    assert run.returncode == 0, run.stderr
    assert "these are the rows models A and B were trained on" in run.stderr
    other = tmp_path / "other.csv"
    other.write_text("a,b,label\n1,3,x\n2,2,x\n6,6,y\n7,7,y\n")
    run = nbcli("compare", "-m", model_a, "-m", model_b, "-d", other, "--bootstrap", "0")
    assert run.returncode == 0 and "trained on" not in run.stderr, run.stderr


def test_scoring_data_without_the_fitted_target_names_it(tmp_path):
    # The model was fitted with target 'label'; a file without it is told so.
    model = tmp_path / "m.npz"
    fitted_model_file(model)
    (tmp_path / "nolabel.csv").write_text("a,b\n1,2\n5,6\n", encoding="utf-8")
    for command in ("evaluate", "calibrate"):
        run = nbcli_in_process(command, "-m", model, "-d", tmp_path / "nolabel.csv")
        assert_one_error_line(
            run,
            "nolabel.csv: has no column 'label', the target the model was fitted with",
            "the columns are: 'a', 'b'",
            "--target COLUMN",
        )


def test_a_refusal_names_the_criterion_each_candidate_missed():
    from types import SimpleNamespace

    from nbcli.reports.reliability import BRIER_WORSE, LOG_LOSS_NOT_LOWER
    from nbcli.workflows.calibrate import shortfall

    loss, brier = SimpleNamespace(note=LOG_LOSS_NOT_LOWER), SimpleNamespace(note=BRIER_WORSE)
    assert shortfall("sigmoid", [loss]) == (
        "the sigmoid calibrator does not improve the cross-fitted log-loss beyond its margin"
    )
    assert shortfall("sigmoid", [brier]) == (
        "the sigmoid calibrator is not accepted: its Brier score is worse beyond the margin"
    )
    assert shortfall("auto", [loss, loss], writable=True) == (
        "no calibrator that can be written improves the cross-fitted log-loss beyond its margin"
    )
    assert shortfall("auto", [brier, brier]) == (
        "no calibrator is accepted: the Brier score of each is worse beyond the margin"
    )
    assert shortfall("auto", [loss, brier]) == (
        "no calibrator is accepted: each has a cross-fitted log-loss not lower, or a Brier "
        "score worse, beyond the margin"
    )


@pytest.mark.parametrize("command", ["fit", "cv", "tune"])
def test_no_row_left_to_learn_from_says_why(tmp_path, command):
    # No row labelled, or every row dropped for a missing cell: one line that
    # says which (not "no data rows" of a file that has rows, nor a crash).
    model = model_types_where(is_numeric_only)[0]
    rows = [f"{i % 3},{i % 5}" for i in range(12)]
    unlabelled = tmp_path / "unlabelled.csv"
    unlabelled.write_text("a,b,label\n" + "".join(f"{r},\n" for r in rows))
    holes = tmp_path / "holes.csv"
    holes.write_text(
        "a,b,empty,label\n" + "".join(f"{r},,{'xy'[i % 2]}\n" for i, r in enumerate(rows))
    )
    out = ["-o", tmp_path / "m.npz"] if command == "fit" else []
    grid = ["--folds", "3"] if command != "fit" else []
    if command == "tune":
        from nbcli.models.registry import model_classes

        spec = grid_number(model_classes()[model])
        grid += [f"--{spec.name.replace('_', '-')}", f"{spec.default},{spec.default * 2 or 1}"]
    run = nbcli_in_process(command, "-m", model, "-d", unlabelled, "-t", "label", *out, *grid)
    assert_one_error_line(run, "none of its 12 rows has a label", "check --target")
    run = nbcli_in_process(command, "-m", model, "-d", holes, "--missing", "drop", *out, *grid)
    assert_one_error_line(
        run, "every one of its 12 rows is left out", "12 have a missing cell", "--drop"
    )


@pytest.mark.parametrize("command", ["fit", "cv"])
def test_a_class_whose_rows_are_all_dropped_is_named(tmp_path, command):
    # Class c's rows all miss column b: under drop the model never learns c,
    # and says so rather than reporting two classes as if there were no third.
    model = model_types_where(is_numeric_only)[0]
    lines = ["a,b,label"]
    for i in range(30):
        label = "abc"[i % 3]
        b = "" if label == "c" else f"{(i * 7) % 5 + 0.5 * (label == 'b')}"
        lines.append(f"{i % 4 + (label == 'b')},{b},{label}")
    data = tmp_path / "d.csv"
    data.write_text("\n".join(lines) + "\n")
    out = ["-o", tmp_path / "m.npz"] if command == "fit" else ["--folds", "3", "--bootstrap", "0"]
    run = nbcli_in_process(command, "-m", model, "-d", data, "--missing", "drop", *out)
    assert run.returncode == 0, run.stderr
    said = [line for line in run.stderr_lines if "class 'c' is left out of the model" in line]
    assert len(said) == 1 and "all 10 of its rows have a missing cell" in said[0], run.stderr
    assert said[0].startswith("warning:")
    # Rows of a class dropped in part leave the class in the model: nothing said.
    lines[1] = "0,,a"
    data.write_text("\n".join(lines) + "\n")
    again = ["--force"] if command == "fit" else []
    run = nbcli_in_process(command, "-m", model, "-d", data, "--missing", "drop", *out, *again)
    assert run.returncode == 0, run.stderr
    assert "class 'a' is left out" not in run.stderr
    assert "class 'c' is left out" in run.stderr


def test_scikit_learn_wording_is_left_to_the_python_api(tmp_path):
    from nbcli.workflows.data_errors import model_message

    # The models end some messages with scikit-learn's words, for code that
    # matches them; a command's line says it once, in its own words.
    said = "the covariance of class 'a' is singular; set reg_param > 0 (The covariance matrix of class 'a' is not full rank.)"
    assert (
        model_message(ValueError(said), None)
        == "the covariance of class 'a' is singular; set reg_param > 0"
    )
    data = tmp_path / "neg.csv"
    data.write_text("a,b,label\n" + "".join(f"{-i - 0.5},{i},{i % 2}\n" for i in range(6)))
    for model in model_types_where(takes_counts):
        run = nbcli_in_process("fit", "-m", model, "-d", data, "-o", tmp_path / "m.npz")
        line = assert_one_error_line(run, "column 'a', row 1")
        assert "passed to" not in line and "(input X)" not in line, line


@pytest.mark.parametrize("command", ["predict", "evaluate", "calibrate"])
def test_a_target_that_is_a_feature_column_is_refused(ints, command):
    # predict would not ignore it (its output was the same as without it);
    # evaluate and calibrate would read the feature as labels.
    run = nbcli_in_process(command, "-m", ints / "i.npz", "-d", ints / "ints.csv", "-t", "a")
    assert_one_error_line(run, "--target a is a feature column of the model", "'label'")
    fine = nbcli_in_process(
        command, "-m", ints / "i.npz", "-d", ints / "ints.csv", "-t", "label", "-q",
        *(["--bootstrap", "0", "--folds", "2"] if command == "calibrate" else []),
    )  # fmt: skip
    assert "feature column" not in fine.stderr


def _needs_a_value_per_class(cls) -> bool:
    """Models whose numeric columns need an observed value in each class
    (a mean and variance, a rate) and that can leave missing cells out."""
    if not {"gaussian", "poisson"} & set(cls.feature_kinds):
        return False
    return any(
        spec.name == "missing" and "ignore" in (spec.options or ()) for spec in cls.hyperparameters
    )


@pytest.mark.parametrize("model", model_types_where(_needs_a_value_per_class))
def test_a_column_without_any_value_is_told_to_be_left_out(tmp_path, model):
    # Under ignore a column empty in every row determines nothing, in any
    # class: the one way on is --drop (categories would not help either).
    data = tmp_path / "d.csv"
    data.write_text(
        "a,empty,label\n" + "".join(f"{i % 4 + i % 2},,{'xy'[i % 2]}\n" for i in range(12))
    )
    run = nbcli_in_process(
        "fit",
        "-m",
        model,
        "-d",
        data,
        "-t",
        "label",
        "--missing",
        "ignore",
        "-o",
        tmp_path / "m.npz",
    )
    line = assert_one_error_line(run, "'empty' has no observed value in training")
    assert line.endswith(": leave the column out with --drop empty"), line


@pytest.mark.parametrize("command", ["fit", "predict", "evaluate", "cv", "compare", "split"])
def test_a_data_file_given_twice_is_refused(ints, command):
    # Read once (its rows not counted twice, as the command line seems to ask).
    model = {
        "fit": ["-m", "gaussian"], "cv": ["-m", "gaussian"], "split": [],
        "compare": ["-m", ints / "i.npz", "-m", ints / "i.npz"],
    }.get(command, ["-m", ints / "i.npz"])  # fmt: skip
    out = {
        "fit": ["-o", ints / "again.npz"],
        "split": ["--test", "0.2", "--output-dir", ints / "o"],
    }
    out = out.get(command, [])
    data = ints / "ints.csv"
    run = nbcli_in_process(command, *model, "-d", data, "-d", data, *out)
    assert_one_error_line(run, f"--data {data} is given 2 times", "give it once")


def test_an_empty_output_folder_is_refused(ints, monkeypatch):
    # An unset shell variable ($OUT) wrote into the current folder unasked.
    monkeypatch.chdir(ints)
    before = sorted(p.name for p in ints.iterdir())
    data = ints / "ints.csv"
    for args in (
        ("split", "-d", data, "--test", "0.5", "--output-dir", ""),
        ("predict", "-m", ints / "i.npz", "-d", data, "--output-dir", ""),
    ):
        assert_one_error_line(nbcli_in_process(*args), "--output-dir is empty")
    assert sorted(p.name for p in ints.iterdir()) == before


def test_text_in_a_column_typed_numeric_names_the_column_option(tmp_path):
    # --column region=KIND made a text column numeric: "fix the value" was no way on.
    from nbcli.models.registry import model_classes

    model, cls = next((n, c) for n, c in model_classes().items() if takes_column_types(c))
    numeric = cls.feature_kinds[0]
    data = tmp_path / "d.csv"
    data.write_text(
        "a,region,label\n" + "".join(f"{i % 5},{'NS'[i % 2]},{'xy'[i % 2]}\n" for i in range(10))
    )
    run = nbcli_in_process(
        "fit", "-m", model, "-d", data, "--column", f"region={numeric}", "-o", tmp_path / "m.npz"
    )
    line = assert_one_error_line(run, "column 'region' has the non-numeric value 'N' at row 1")
    assert f"--column region={numeric} reads it as numbers" in line
    assert "fix the value" not in line


def test_the_binary_average_row_names_its_class(ints):
    # With two classes the per-class table ends with the positive class's
    # scores: a row labelled as a class would read as that class repeated.
    run = nbcli_in_process(
        "evaluate", "-m", ints / "i.npz", "-d", ints / "ints.csv", "--bootstrap", "0"
    )
    assert run.returncode == 0, run.stderr
    table = run.stdout.split("Per class")[1].split("Confusion matrix")[0]
    heads = [line.split()[0] for line in table.splitlines() if line.strip()]
    assert heads.count("2") == 1 and "binary (2)" in table, table


def test_a_config_for_another_model_is_named_with_its_model(ints):
    config = ints / "lda.toml"
    config.write_text('model = "lda"\n[hyperparameters]\nshrinkage = 0.5\nsolver = "lsqr"\n')
    run = nbcli_in_process("fit", "-m", "gaussian", "--config", config, "-d", ints / "ints.csv")
    assert_one_error_line(run, "shrinkage, solver do not apply to the gaussian model")
    assert "the config is for model 'lda', --model says gaussian: drop one of them" in run.stderr


def test_priors_of_the_wrong_length_leave_the_python_wording_out(ints):
    run = nbcli_in_process(
        "fit", "-m", "gaussian", "--priors", "0.2,0.3,0.5", "-d", ints / "ints.csv"
    )
    assert_one_error_line(run, "has 3 values but there are 2 classes")
    assert "Number of priors" not in run.stderr
    # Nor for a value of no class count: the line says it in its own words.
    config = ints / "p.toml"
    config.write_text("[hyperparameters]\npriors = [0.3, 0.3]\n")
    for args in (["--priors", "nan,0.5"], ["--priors", "0.3,0.3"], ["-c", config]):
        run = nbcli_in_process("fit", "-m", "gaussian", *args, "-d", ints / "ints.csv")
        line = assert_one_error_line(run, "priors must be non-negative numbers that sum to 1")
        assert line.endswith("]"), line  # no "(Priors must be ...)" after the value


@pytest.mark.parametrize("command", ["predict", "evaluate", "inspect"])
def test_a_model_from_stdin_is_refused_as_such(ints, command):
    args = (
        ("inspect", "-") if command == "inspect" else (command, "-m", "-", "-d", ints / "ints.csv")
    )
    run = nbcli_in_process(*args)
    assert_one_error_line(run, "a model is read from its file, not from stdin (-)")


def test_files_left_over_by_an_unquoted_glob_earn_a_hint(ints):
    # `-d parts/*.csv` unquoted: the shell gives the files after the first as arguments.
    run = nbcli_in_process("fit", "-m", "gaussian", "-d", ints / "ints.csv", ints / "some.csv")
    assert_one_error_line(run, "unexpected extra argument", "a glob the shell expanded? quote it")
    run = nbcli_in_process("fit", "-m", "gaussian", "-d", ints / "ints.csv", "nosuchfile")
    assert_one_error_line(run, "unexpected extra argument")
    assert "glob" not in run.stderr


@pytest.mark.parametrize("command", ["inspect", "export"])
def test_commands_of_one_model_argument_say_so(ints, command):
    # They have no --data: the glob hint would point at an option they lack.
    model = ints / "i.npz"
    run = nbcli_in_process(command, model, model)
    line = assert_one_error_line(
        run, "unexpected extra argument", f"{command} takes one model file"
    )
    assert "--data" not in line, line
    for flag in ("--model", "-m"):
        run = nbcli_in_process(command, flag, model)
        assert_one_error_line(
            run,
            f"No such option: {flag}",
            f"takes the model file as its argument: nbcli {command} MODEL",
        )
