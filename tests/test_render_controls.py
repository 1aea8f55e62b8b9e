"""Text from the data (labels, paths) shown with control characters escaped
on every plain-text line of a report, as in its tables."""

from __future__ import annotations

from tests.conftest import nbcli_in_process

# Two classes whose labels hold a newline and a tab; the overlapping rows
# make the model confuse them once, so the "Most confused" line names both labels.
TRAIN = (
    "a,b,label\n"
    '1,2,"vir\ngo"\n2,3,"vir\ngo"\n3,1,"vir\ngo"\n4,4,"vir\ngo"\n'
    '5,6,"set\tosa"\n6,7,"set\tosa"\n7,5,"set\tosa"\n4,4,"set\tosa"\n'
)


def _fit(tmp_path, name):
    data = tmp_path / "train.csv"
    data.write_text(TRAIN, encoding="utf-8")
    out = tmp_path / name
    run = nbcli_in_process("fit", "-m", "gaussian", "-d", data, "-o", out, "-q")
    assert run.returncode == 0, run.stderr
    return data, out


def test_most_confused_line_escapes_labels(tmp_path):
    data, model = _fit(tmp_path, "m.npz")
    run = nbcli_in_process("evaluate", "-m", model, "-d", data, "--bootstrap", "0")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("Most confused"))
    # The point (4, 4) is in both classes: one of its rows is a mistake.
    assert lines[at + 1].strip() in {"vir\\ngo -> set\\tosa (1)", "set\\tosa -> vir\\ngo (1)"}
    # No line of the report starts inside a label.
    assert not any(line.startswith("go") for line in lines), run.stdout
    assert "\t" not in run.stdout


def test_compare_legend_escapes_model_paths(tmp_path):
    data, a = _fit(tmp_path, "a\nb.npz")
    run = nbcli_in_process("compare", "-m", a, "-m", a, "-d", data, "--bootstrap", "0")
    assert run.returncode == 0, run.stderr
    assert "a\\nb.npz" in run.stdout
    assert not any(line.startswith("b.npz") for line in run.stdout.splitlines()), run.stdout
