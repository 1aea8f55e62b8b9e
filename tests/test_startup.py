"""What starting nbcli imports: heavy libraries wait until a command needs them."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import fitted_model_file

ROOT = Path(__file__).resolve().parents[1]

# Runs the console script's entry point with the given arguments in a fresh
# interpreter, then prints which of the heavy libraries got imported.
_PROBE = """
import json, sys
from nbcli.cli.app import main
try:
    main(sys.argv[1:])
except SystemExit:
    pass
heavy = ("pandas", "scipy", "sklearn", "matplotlib", "pyarrow", "polars", "dask", "pydantic")
sys.stderr.write(json.dumps(sorted({m.split(".")[0] for m in sys.modules} & set(heavy))))
"""


def _imported(*args) -> set[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, *map(str, args)],
        capture_output=True,
        env=env,
        timeout=120,
    )
    last = done.stderr.decode().strip().splitlines()[-1]
    return set(json.loads(last))


def test_help_imports_neither_pandas_nor_scipy():
    imported = _imported("--help")
    assert "pandas" not in imported and "scipy" not in imported, imported
    assert not imported & {"sklearn", "matplotlib", "dask"}


def test_help_imports_no_numpy():
    # The root's listing names the commands without building their options.
    code = (
        "import sys; from nbcli.cli.app import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "sys.stderr.write(str('numpy' in sys.modules))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert "fit" in run.stdout and "calibrate" in run.stdout
    assert run.stderr.strip().splitlines()[-1] == "False"


def test_command_summaries_are_the_first_paragraph_of_their_docstrings():
    import inspect

    from nbcli.cli.app import COMMANDS, command_function

    for name, (_, _, summary) in COMMANDS.items():
        doc = inspect.getdoc(command_function(name))
        assert summary == " ".join(doc.split("\n\n")[0].split()), name


def test_command_help_imports_neither_pandas_nor_scipy():
    for command in ("fit", "predict", "evaluate", "compare", "calibrate"):
        imported = _imported(command, "--help")
        assert "pandas" not in imported and "scipy" not in imported, (command, imported)


@pytest.mark.parametrize("model_type", ["gaussian", "qda"])
def test_predict_of_a_small_file_imports_no_scipy(tmp_path, model_type):
    # QDA's scoring factors come from NumPy while they are well conditioned.
    model = tmp_path / "m.npz"
    fitted_model_file(model, model_type)
    data = tmp_path / "small.csv"
    data.write_text("a,b\n" + "".join(f"{i % 7},{i % 3}\n" for i in range(100)), encoding="utf-8")
    imported = _imported("predict", "-m", model, "-d", data, "-o", tmp_path / "out.csv")
    assert (tmp_path / "out.csv").read_text().count("\n") == 101
    assert "scipy" not in imported, imported
    assert not imported & {"sklearn", "matplotlib", "dask"}


def test_evaluate_of_a_small_file_imports_neither_pandas_nor_scipy(tmp_path):
    # Text labels of a few rows are coded by sorting: importing pandas to hash
    # them would be most of a small command's time.
    model = tmp_path / "m.npz"
    fitted_model_file(model)
    data = tmp_path / "small.csv"
    labels = ("x", "y")
    data.write_text(
        "a,b,label\n" + "".join(f"{i % 7},{i % 3},{labels[i % 2]}\n" for i in range(100)),
        encoding="utf-8",
    )
    report = tmp_path / "report.json"
    imported = _imported("evaluate", "-m", model, "-d", data, "--json", report, "-q")
    assert json.loads(report.read_text())["schema"] == "nbcli.evaluation"
    assert "pandas" not in imported and "scipy" not in imported, imported


def test_the_cli_library_is_one_that_starts_without_pydantic():
    # Typer 0.29 builds a pydantic adapter for every option (about 65 ms of
    # each command's start); pyproject.toml keeps to a Typer without it.
    import typer

    major, minor = (int(p) for p in typer.__version__.split(".")[:2])
    assert (major, minor) < (0, 29), typer.__version__
    assert "pydantic" not in _imported("predict", "--help")


def test_the_console_script_spares_the_collector_its_pass_at_exit(tmp_path):
    # The program's objects are frozen once the command is over, so the full
    # collection at interpreter exit examines none of them; a library caller
    # of main() keeps its collector as it was.
    probe = (
        "import gc, sys\n"
        "from nbcli.cli.app import main, run\n"
        "try:\n    main(['--version'])\nexcept SystemExit:\n    pass\n"
        "print('main', gc.get_freeze_count())\n"
        "sys.argv = ['nbcli', '--version']\n"
        "try:\n    run()\nexcept SystemExit as done:\n"
        "    print('run', gc.get_freeze_count(), done.code)\n"
    )
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env)
    said = {line.split()[0]: line.split()[1:] for line in done.stdout.splitlines()}
    assert said["main"] == ["0"], done.stdout
    frozen, code = said["run"]
    assert int(frozen) > 10_000 and code in ("0", "None"), done.stdout


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc",
    reason="glibc's malloc only",
)
def test_the_console_script_has_glibc_reuse_freed_blocks_instead_of_faulting_new_pages():
    # Without it, a 16 MB array freed and made again is mapped afresh, and
    # the kernel zeroes each of its 4 KiB pages as it is first touched.
    probe = (
        "import resource, sys, numpy as np\n"
        "from nbcli.cli import app\n"
        "def faults():\n"
        "    a = np.ones(2_000_000); del a\n"
        "    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt\n"
        "    b = np.ones(2_000_000); del b\n"
        "    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before\n"
        "print('default', faults())\n"
        "calls = []\n"
        "keep = app._keep_freed_memory\n"
        "app._keep_freed_memory = lambda: calls.append(1) or keep()\n"
        "sys.argv = ['nbcli', '--version']\n"
        "try:\n    app.run()\nexcept SystemExit:\n    pass\n"
        "print('kept', faults(), len(calls))\n"
    )
    env = {
        **os.environ,
        "NUMPY_MADVISE_HUGEPAGE": "0",  # 4 KiB pages: one fault each
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env)
    said = {
        line.split()[0]: [int(v) for v in line.split()[1:]]
        for line in done.stdout.splitlines()
        if line.startswith(("default", "kept"))
    }
    assert said["default"][0] > 3000, done.stdout  # 16 MB / 4 KiB = 3906 pages
    assert said["kept"] == [said["kept"][0], 1] and said["kept"][0] < 100, done.stdout
