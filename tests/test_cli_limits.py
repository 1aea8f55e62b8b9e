"""Option limits refused up front, help that shows only what is accepted,
and titles that say the confidence level asked for."""

from __future__ import annotations

import json
import re

import pytest

from nbcli.reports import thresholds
from tests.conftest import SAMPLE, assert_one_error_line, fitted_model_file, nbcli_in_process


@pytest.fixture
def d(tmp_path):
    fitted_model_file(tmp_path / "m.npz")
    rows = "".join(f"{i % 7},{(i * 3) % 5},{'xy'[i % 2]}\n" for i in range(30))
    (tmp_path / "test.csv").write_text("a,b,label\n" + rows, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("value", ["1", "99", "1000001", "-1"])
def test_bootstrap_takes_0_or_100_to_a_million(d, value):
    for command in ("evaluate", "calibrate"):
        run = nbcli_in_process(
            command, "-m", d / "m.npz", "-d", d / "test.csv", "--bootstrap", value
        )
        assert_one_error_line(run, "--bootstrap", "100 to 1,000,000")


def test_bootstrap_0_with_an_interval_threshold_is_refused_before_any_work(d):
    for command, metric in (
        ("evaluate", "accuracy.lower=0.5"),
        ("compare", "difference.lower=0"),
        ("calibrate", "ece.upper=0.5"),
        ("cv", "accuracy.lower=0.5"),
        ("tune", "log_loss.upper=0.5"),
    ):
        models = {"compare": ["-m", d / "m.npz"] * 2, "cv": ["-m", "gaussian"]}.get(
            command, ["-m", d / "m.npz"]
        )
        if command == "tune":
            models = ["-m", "gaussian", "--var-smoothing", "1e-9,1e-8"]
        option = "--fail-over" if command in ("calibrate", "tune") else "--fail-under"
        run = nbcli_in_process(
            command, *models, "-d", d / "missing.csv", "--bootstrap", "0", option, metric
        )
        # Refused before the (missing) data is read.
        assert_one_error_line(run, metric.split("=")[0], "--bootstrap 0")


def test_bins_at_most_1000_and_at_most_the_rows(d):
    run = nbcli_in_process("evaluate", "-m", d / "m.npz", "-d", d / "test.csv", "--bins", "100000")
    assert_one_error_line(run, "--bins")
    run = nbcli_in_process("evaluate", "-m", d / "m.npz", "-d", d / "test.csv", "--bins", "31")
    assert_one_error_line(run, "--bins 31", "30 rows", "at most 30")
    ok = nbcli_in_process("evaluate", "-m", d / "m.npz", "-d", d / "test.csv", "--bins", "30", "-q")
    assert ok.returncode == 0, ok.stderr
    run = nbcli_in_process("calibrate", "-m", d / "m.npz", "-d", d / "test.csv", "--bins", "1001")
    assert_one_error_line(run, "--bins", "1 to 1,000")


@pytest.mark.parametrize(
    ("edges", "says"),
    [("0,0.5,0.4,1", "strictly increasing"), ("0,0.5,1.5", "within [0, 1]")],
)
def test_calibrate_refuses_bad_bin_edges_before_reading_the_data(d, edges, says):
    # The data file does not exist: the edges are checked first.
    run = nbcli_in_process("calibrate", "-m", d / "m.npz", "-d", d / "missing.csv", "--bins", edges)
    line = assert_one_error_line(run, f"--bins {edges}", says)
    assert "missing.csv" not in line


@pytest.mark.parametrize("method", ["auto", "temperature", "isotonic"])
def test_calibrate_refuses_edges_that_leave_out_confidences_before_reading(d, method):
    # A top-class confidence of K classes is at least 1/K; calibrated rows
    # may fall anywhere above it. Edges from 0.6 used to pass the model's own
    # confidences and fail, after every fit, as an internal error.
    run = nbcli_in_process("calibrate", "-m", d / "m.npz", "-d", d / "missing.csv",
                           "--bins", "0.6,0.9,1", "--method", method)  # fmt: skip
    line = assert_one_error_line(run, "--bins 0.6,0.9,1", "at most 1/2 (0.5)")
    assert "missing.csv" not in line
    ok = nbcli_in_process("calibrate", "-m", d / "m.npz", "-d", d / "test.csv",
                          "--bins", "0.5,0.9,1", "--method", method, "-q")  # fmt: skip
    assert ok.returncode in (0, 3) and "internal error" not in ok.stderr, ok.stderr


@pytest.mark.parametrize("command", ["evaluate", "compare", "calibrate", "tune"])
def test_help_shows_only_threshold_examples_the_command_accepts(command):
    from nbcli.cli.tune_cmd import _tuned_metrics

    known = {
        "evaluate": thresholds.EVALUATION_METRICS,
        "compare": thresholds.COMPARISON_METRICS,
        "calibrate": thresholds.CALIBRATION_METRICS,
        "tune": _tuned_metrics("log_loss"),
    }[command]
    run = nbcli_in_process(command, "--help")
    text = " ".join(run.stdout.split())
    for direction in ("under", "over"):
        found = re.search(rf"--fail-{direction} METRIC=VALUE .*?e\.g\. (.*?)\. Repeatable", text)
        assert found, text
        examples = found.group(1).split(" or ")
        assert len(examples) == 2
        for example in examples:
            thresholds.parse_threshold(example, direction, known)  # raises if refused


def test_help_metavars_are_words_not_type_annotations():
    for command in ("fit", "predict", "evaluate", "compare", "calibrate"):
        run = nbcli_in_process(command, "--help")
        assert run.returncode == 0
        assert not re.search(r"<(str|int|float|list\[.*?\]|int range|float range)>", run.stdout)
    fit_help = nbcli_in_process("fit", "--help").stdout
    assert "--features COLUMNS" in fit_help and "--data PATH" in fit_help


def test_debug_is_accepted_after_the_command_too(d):
    run = nbcli_in_process(
        "fit", "--debug", "-m", "gaussian", "-d", d / "m.train.csv", "-o", d / "n.npz", "-q"
    )
    assert run.returncode == 0, run.stderr
    assert (d / "n.npz").exists()


@pytest.mark.parametrize("level, shown", [(0.975, "97.5%"), (0.995, "99.5%"), (0.95, "95%")])
def test_titles_show_the_confidence_level_unrounded(d, level, shown):
    run = nbcli_in_process(
        "evaluate",
        "-m",
        d / "m.npz",
        "-d",
        d / "test.csv",
        "--confidence",
        str(level),
        "--bootstrap",
        "200",
    )
    assert run.returncode == 0, run.stderr
    assert f"{shown} " in run.stdout
    assert "98%" not in run.stdout and "100%" not in run.stdout


def test_every_command_that_refuses_to_replace_a_file_takes_force():
    # The refusal says "or give --force to replace it": the flag must exist.
    import inspect as python_inspect

    from nbcli.cli.app import COMMANDS, command_function

    for name in COMMANDS:
        source = python_inspect.getsource(python_inspect.getmodule(command_function(name)))
        if "check_outputs" in source:
            assert "--force" in nbcli_in_process(name, "--help").stdout, name


def test_tune_grids_vary_the_first_flag_given_slowest_and_refuse_auto_among_numbers(tmp_path):
    def order(*flags):
        run = nbcli_in_process("tune", "-m", "mixed", "-d", SAMPLE / "penguins_train.csv",
                               "-t", "species", *flags, "--folds", "3", "--bootstrap", "0",
                               "--json", "-", "-q")  # fmt: skip
        assert run.returncode == 0, run.stderr
        return [(r["params"]["alpha"], r["params"]["var_smoothing"])
                for r in json.loads(run.stdout)["results"]]  # fmt: skip

    a, v = ("--alpha", "0.5,1"), ("--var-smoothing", "1e-9,1e-3")
    assert order(*a, *v) == [(0.5, 1e-9), (0.5, 1e-3), (1.0, 1e-9), (1.0, 1e-3)]
    assert order(*v, *a) == [(0.5, 1e-9), (1.0, 1e-9), (0.5, 1e-3), (1.0, 1e-3)]
    run = nbcli_in_process("tune", "-m", "lda", "-d", SAMPLE / "wine_train.csv",
                           "--shrinkage", "auto,0.1", "--folds", "3")  # fmt: skip
    assert run.returncode == 2 and "cannot share one grid" in run.stderr


def test_digits_without_proba_is_refused(tmp_path):
    fitted_model_file(tmp_path / "m.npz")
    (tmp_path / "d.csv").write_text("a,b\n1,2\n")
    run = nbcli_in_process("predict", "-m", tmp_path / "m.npz", "-d", tmp_path / "d.csv",
                           "--digits", "2")  # fmt: skip
    assert_one_error_line(run)
    assert "add --proba" in run.stderr
