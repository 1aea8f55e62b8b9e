"""Rich tables of the reports, rendered as text the way a log or a pipe receives them."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest
from rich.console import Console

from nbcli.render import make_console, render, render_calibration, render_comparison
from nbcli.render.tables import PIPE_WIDTH, _bar
from nbcli.reports import RecalibrationReport, build_calibration, build_comparison, build_evaluation

LONG = "a-very-long-class-label-that-goes-on-and-on-" + "x" * 16
assert len(LONG) == 60


def _text(renderables, width=80) -> str:
    out = io.StringIO()
    console = Console(file=out, width=width, no_color=True, color_system=None, force_terminal=False)
    for r in renderables:
        console.print(r)
    return out.getvalue()


@pytest.fixture(scope="module")
def model_output():
    rng = np.random.default_rng(3)
    classes = np.array(["setosa", "versicolor", LONG])
    n = 300
    idx = rng.integers(0, 3, n)
    logits = rng.normal(size=(n, 3))
    logits[np.arange(n), idx] += 1.5
    p = np.exp(logits)
    p /= p.sum(axis=1, keepdims=True)
    y = classes[idx].astype(object)
    y[:2] = "[bold]not-markup"
    return classes, y, p


@pytest.fixture(scope="module")
def evaluation(model_output):
    classes, y, p = model_output
    return build_evaluation(classes, y, p, n_resamples=200, seed=7)


@pytest.mark.parametrize("width", [80, PIPE_WIDTH])
def test_long_labels_appear_whole(evaluation, width):
    text = _text(render(evaluation), width)
    assert LONG in text
    assert "[bold]not-markup" in text  # printed literally, not as markup
    assert "\x1b[" not in text


def test_headline_shows_values_intervals_and_how_they_were_made(evaluation):
    text = _text(render(evaluation))
    acc = evaluation.metrics["accuracy"]
    row = next(line for line in text.splitlines() if line.strip().startswith("Accuracy "))
    assert f"{acc.value:.4f}" in row and f"[{acc.lower:.4f}, {acc.upper:.4f}]" in row
    assert re.search(r"\d\.\d{4}\s+\[\d\.\d{4}, \d\.\d{4}\]", text)
    assert "95% BCa bootstrap intervals from 200 resamples (seed 7)" in text
    assert "2 rows have labels the model never saw" in text
    kappa = evaluation.metrics["cohen_kappa"]
    assert f"Cohen's kappa       {kappa.value:.4f}" in text


def test_wide_console_shows_labels_in_the_tables_themselves(evaluation):
    text = _text(render(evaluation), PIPE_WIDTH)
    per_class_row = next(
        line for line in text.splitlines() if line.strip().startswith(LONG) and "0." in line
    )
    scores = {r.label: r for r in evaluation.per_class}[LONG]
    # Support, then the label's one-vs-rest ROC AUC, close the row.
    assert f"{scores.precision:.4f}" in per_class_row and per_class_row.rstrip().endswith(
        f"{scores.support}    {scores.roc_auc:.4f}"
    )
    assert "#1" not in text


def test_narrow_console_uses_keys_with_a_legend(evaluation):
    text = _text(render(evaluation), 80)
    assert f"#3  {LONG}" in text
    assert all(len(line.rstrip()) <= 80 for line in text.splitlines() if LONG not in line)


def test_make_console_for_a_pipe_is_wide_and_colourless():
    out = io.StringIO()
    console = make_console(out)
    assert console.width == PIPE_WIDTH
    assert console.no_color and console.color_system is None
    assert make_console(out, width=120).width == 120


def test_percentile_intervals_are_marked():
    y = np.array([0, 1] * 30)
    p = np.eye(2)[y] * 0.8 + 0.1
    r = build_evaluation([0, 1], y, p, n_resamples=100)
    text = _text(render(r), 120)
    assert "[1.0000, 1.0000]*" in text
    assert "* percentile interval" in text

    # Only some intervals marked (average precision has no jackknife): the
    # brackets of every interval still line up, the mark hanging past them.
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 200)
    q = np.clip(0.5 + 0.3 * (2 * y - 1) + rng.normal(0, 0.25, 200), 0.01, 0.99)
    r = build_evaluation([0, 1], y, np.column_stack([1 - q, q]), n_resamples=200)
    table = _text(render(r), 120).split("Metric", 1)[1].split("\n\n", 1)[0]
    lines = [line.rstrip() for line in table.splitlines() if "[" in line]
    marks = [line.endswith("]*") for line in lines]
    assert any(marks) and not all(marks), lines
    assert len({line.index("[") for line in lines}) == 1, lines


def test_no_resamples_say_so(model_output):
    classes, y, p = model_output
    r = build_evaluation(classes, y, p, n_resamples=0)
    text = _text(render(r))
    assert "No intervals: bootstrap resampling was turned off (0 resamples)." in text
    row = next(line for line in text.splitlines() if line.strip().startswith("Accuracy "))
    assert row.split() == ["Accuracy", f"{r.metrics['accuracy'].value:.4f}", "—"]


def test_reliability_bar_marks_accuracy_and_confidence():
    # Cell i covers ((i / 20), (i + 1) / 20]: confidence 0.75 marks cell 14, where a
    # bar of accuracy 0.75 would end.
    assert _bar(0.5, 0.75, width=20) == "█" * 10 + " " * 4 + "|" + " " * 5
    assert _bar(0.75, 0.75, width=20) == "█" * 14 + "|" + " " * 5
    assert _bar(1.0, 0.05, width=20) == "|" + "█" * 19
    assert _bar(0.3125, 1.0, width=8) == "██▌    |"


def test_reliability_rows_in_evaluation(evaluation):
    text = _text(render(evaluation), 120)
    assert "[0, 0.1]" in text and "(0.9, 1]" in text
    busiest = max(evaluation.calibration.diagram.bins, key=lambda b: b.count)
    head = f"({busiest.lower:.3g}, {busiest.upper:.3g}]"
    row = next(line for line in text.splitlines() if line.strip().startswith(head))
    assert f"{busiest.accuracy:.4f}" in row and f"{busiest.gap:+.4f}" in row and "█" in row


def test_comparison_rendering(model_output):
    classes, y, p = model_output
    r = build_comparison(
        classes,
        p,
        classes,
        np.roll(p, 1, axis=0),
        y,
        n_resamples=100,
        inputs={"model_a": {"path": "a.npz"}, "model_b": {"path": "b.npz"}},
    )
    text = _text(render(r))
    assert "A: a.npz" in text and "B: b.npz" in text
    diff = r.metrics["difference"]
    assert f"Difference B - A   {diff.value:.4f}" in text
    assert f"McNemar exact test: p = {r.p_value:.4g} (two-sided;" in text
    assert (
        f"{r.table.only_a_correct} rows only A got right, {r.table.only_b_correct} only B"
        in " ".join(text.split())
    )


def test_calibration_rendering_before_and_after(model_output):
    classes, y, p = model_output
    before = build_calibration(classes, y, p, n_resamples=100)
    sharper = p**2 / (p**2).sum(axis=1, keepdims=True)
    after = build_calibration(classes, y, sharper, n_resamples=100)
    text = _text(render(RecalibrationReport(before, after)), 120)
    ece_row = next(line for line in text.splitlines() if line.strip().startswith("ECE"))
    b, a = before.metrics["ece"], after.metrics["ece"]
    assert f"{b.value:.4f} [{b.lower:.4f}, {b.upper:.4f}]" in ece_row
    assert f"{a.value:.4f} [{a.lower:.4f}, {a.upper:.4f}]" in ece_row
    assert "Reliability before calibration" in text and "Reliability after calibration" in text
    single = _text(render(before), 120)
    assert "Reliability (top-class confidence)" in single and "Before" not in single


def test_comparison_names_models_given_as_a_list(model_output):
    classes, y, p = model_output
    inputs = {
        "models": [{"path": "first.npz", "sha256": "0"}, {"path": "second.npz", "sha256": "1"}]
    }
    r = build_comparison(classes, p, classes, p, y, n_resamples=0, inputs=inputs)
    text = _text(render_comparison(r))
    assert "A: first.npz" in text and "B: second.npz" in text


def test_render_calibration_accepts_a_before_and_after_document(model_output):
    classes, y, p = model_output
    before = build_calibration(classes, y, p, n_resamples=0)
    after = build_calibration(classes, y, p**3 / (p**3).sum(axis=1, keepdims=True), n_resamples=0)
    text = _text(render_calibration(RecalibrationReport(before, after)), 120)
    assert "Reliability before calibration" in text
    header = next(line for line in text.splitlines() if "Metric" in line)
    assert "Before" in header and "After" in header


def test_render_rejects_other_objects():
    with pytest.raises(TypeError, match="no renderer"):
        render(object())


def test_a_confusion_matrix_too_wide_for_the_output_is_not_built():
    # 400 count columns cannot fit 200 characters; building and measuring the
    # three table layouts (160,000 cells each) took tens of seconds.
    rng = np.random.default_rng(0)
    k, n = 400, 800
    idx = rng.integers(0, k, n)
    p = rng.random((n, k))
    p[np.arange(n), idx] += 1.0
    r = build_evaluation(np.arange(k), idx, p / p.sum(axis=1, keepdims=True), n_resamples=0)
    # Its time budget (5 s) is checked by benchmarks/bench_reports.py.
    text = _text(render(r), PIPE_WIDTH)
    assert (
        "Confusion matrix not shown: 400 predicted classes do not fit the width of this output"
        in " ".join(text.split())
    )
    assert "true \\ predicted" not in text
    row = next(x for x in r.per_class if x.support > 0)
    assert any(
        line.split()[:1] == [str(row.label)] and f"{row.recall:.4f}" in line
        for line in text.splitlines()
    )


def test_a_confusion_matrix_that_fits_is_still_drawn_with_keys():
    rng = np.random.default_rng(1)
    k = 25
    idx = rng.integers(0, k, 400)
    p = rng.random((400, k))
    p[np.arange(400), idx] += 0.5
    names = [f"class-{i}" for i in range(k)]
    r = build_evaluation(
        names, [names[i] for i in idx], p / p.sum(axis=1, keepdims=True), n_resamples=0
    )
    text = _text(render(r), PIPE_WIDTH)
    assert "Confusion matrix not shown" not in text
    head = next(line for line in text.splitlines() if "true \\ predicted" in line)
    assert head.split()[-2:] == ["#24", "#25"]
    # At this width rows carry key and label; columns carry keys only.
    row = next(line for line in text.splitlines() if line.split()[:2] == ["#25", "class-24"])
    assert [int(x) for x in row.split()[2:]] == r.confusion[24].tolist()


def test_two_class_report_names_the_class_its_ranking_figures_are_of(evaluation):
    rng = np.random.default_rng(4)
    y = np.where(rng.random(200) < 0.4, "spam", "ham")
    p1 = np.clip((y == "spam") * 0.5 + rng.random(200) * 0.5, 0.01, 0.99)
    report = build_evaluation(np.array(["ham", "spam"]), y, np.c_[1 - p1, p1], n_resamples=0)
    text = " ".join(_text(render(report), 200).split())
    assert "ROC AUC and average precision are those of class spam (the second)" in text
    assert report.to_dict()["ranking_class"] == "spam"
    assert evaluation.to_dict()["ranking_class"] is None
    assert "(the second) against" not in " ".join(_text(render(evaluation), 200).split())


def test_classes_left_out_of_ranking_averages_are_named_by_label():
    rng = np.random.default_rng(1)
    classes = np.array(["setosa", "versicolor", "virginica"])
    y = classes[rng.integers(0, 2, 90)]  # no virginica rows
    report = build_evaluation(classes, y, rng.dirichlet(np.ones(3), size=90), n_resamples=0)
    named = [w for w in report.warnings if "undefined for class 'virginica'" in w]
    assert len(named) == 2 and not any("column(s)" in w for w in report.warnings)


def test_the_report_says_why_a_ranking_metric_has_no_interval():
    from nbcli.render import render_evaluation

    rng = np.random.default_rng(0)
    # Enough rows that the ranking metrics take DeLong's interval: average precision has none.
    y, p = rng.integers(0, 3, 30_000), rng.dirichlet(np.ones(3), 30_000)
    text = " ".join(_text(render_evaluation(build_evaluation(np.arange(3), y, p)), 200).split())
    assert "† DeLong's interval" in text and "Average precision has no interval here" in text
    # Beyond 50 classes none of the three has one.
    y, p = rng.integers(0, 60, 3000), rng.dirichlet(np.ones(60), 3000)
    text = " ".join(_text(render_evaluation(build_evaluation(np.arange(60), y, p)), 200).split())
    assert "The ranking metrics have no interval beyond 50 classes." in text
    assert "Average precision has no interval here" not in text


def test_one_row_has_no_interval_for_any_metric_and_the_note_says_why():
    # A bootstrap of one row repeats it: the confusion metrics, as the mean
    # losses and the ranking metrics, have no interval, and the note does not
    # blame the number of classes.
    from nbcli.render import render_evaluation

    report = build_evaluation(np.arange(3), np.array([1]), np.array([[0.2, 0.7, 0.1]]))
    methods = {k: iv.method for k, iv in report.metrics.items()}
    assert set(methods.values()) == {"none"}, methods
    assert report.metrics["accuracy"].value == 1.0
    text = " ".join(_text(render_evaluation(report), 200).split())
    assert "No intervals: a bootstrap needs at least 2 rows to resample." in text
    assert "beyond 50 classes" not in text
    two = build_evaluation(np.arange(3), np.array([1, 0]), np.array([[0.2, 0.7, 0.1]] * 2))
    assert two.metrics["accuracy"].method != "none"


def test_the_calibration_line_says_which_rows_it_leaves_out(model_output):
    from nbcli.render import render_evaluation

    classes, y, p = model_output
    y = y.copy()
    y[10:15] = "never-seen"
    report = build_evaluation(classes, y, p, n_resamples=0)
    assert report.n_unseen == 7  # and the two "[bold]not-markup" rows
    text = " ".join(_text(render_evaluation(report), 200).split())
    assert "Calibration on 293 rows (the 7 rows with labels the model never saw left out)" in text


def test_bin_edges_show_the_digits_that_tell_them_apart():
    from nbcli.render.tables import _edge_texts, _p_text

    assert _edge_texts([0.0, 0.9996, 0.9999993, 1.0]) == ["0", "0.9996", "0.999999", "1"]
    assert _edge_texts([0.0, 0.1, 0.2, 1.0]) == ["0", "0.1", "0.2", "1"]
    assert _p_text(0.0) == "p < 1e-300" and _p_text(7.2557e-14) == "p = 7.256e-14"


def test_the_titles_of_key_value_summaries_start_at_the_left(tmp_path):
    # Centred over a row as long as the hyperparameters, the title stood far
    # to the right of the short rows under it.
    from tests.conftest import nbcli_in_process

    model = tmp_path / "m.npz"
    run = nbcli_in_process("fit", "-m", "gaussian", "-d", "sample_data/iris_train.csv",
                           "-o", model)  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert "Model" in (run.stdout + run.stderr).splitlines()
    shown = nbcli_in_process("inspect", model)
    assert "Model file" in shown.stdout.splitlines()
