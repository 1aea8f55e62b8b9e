"""Every ```sh and ```python block of README.md and docs/guide/ runs as the text says.

Each page runs in a scratch folder of its own that holds ``sample_data/``
and ``configs/`` (links to the repository's), its blocks in the order they
appear, so a later block uses what an earlier one wrote. A command is one
line (a line ending in ``\\`` goes on); lines that start with ``#`` are
comments. A command exits 0 unless its line ends in ``# exits N``.

What a block may not run here it says in its first line, visibly:
``# not run ...: why`` (a cluster, an object store, the test suite itself).
At most one block in ten carries that mark. Two kinds of line are checked
instead of run, since installing is not what these tests are for:
``pip install SPEC`` (the extras SPEC names must exist), and the set-up
form ``python3 -m venv .venv && .venv/bin/pip install SPEC && REST``, whose
REST runs with ``.venv/bin/`` standing for this environment's own.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

from tests.conftest import ROOT, nbcli_in_process

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs" / "guide").glob("*.md"))]
NOT_RUN = re.compile(r"^#\s*not run\b", re.I)
EXITS = re.compile(r"\s#\s*exits?\s+(\d+)\b[^#]*$")
SET_UP = re.compile(r"^python3 -m venv \.venv && \.venv/bin/pip install (\S+) && (.+)$")
BIN = Path(sys.executable).parent


@dataclass
class Block:
    page: Path
    line: int
    language: str
    text: str

    @property
    def not_run(self) -> bool:
        first = next((line for line in self.text.splitlines() if line.strip()), "")
        return bool(NOT_RUN.match(first.strip()))

    def commands(self) -> list[tuple[int, str]]:
        """``(line number in the page, command)`` of a sh block."""
        out, pending, start = [], "", 0
        for i, raw in enumerate(self.text.splitlines(), self.line + 1):
            line = raw.rstrip()
            if not pending and (not line.strip() or line.lstrip().startswith("#")):
                continue
            if not pending:
                start = i
            if line.endswith("\\"):
                pending += line[:-1] + " "
                continue
            out.append((start, pending + line))
            pending = ""
        return out


def blocks(page: Path) -> list[Block]:
    found, language, start, lines = [], None, 0, []
    for i, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        fence = re.match(r"^```(\w*)\s*$", line)
        if fence and language is None:
            language, start, lines = fence.group(1), i, []
        elif line.startswith("```") and language is not None:
            if language in ("sh", "python"):
                found.append(Block(page, start, language, "\n".join(lines)))
            language = None
        elif language is not None:
            lines.append(line)
    return found


def _extras() -> set[str]:
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    return set(pyproject["project"]["optional-dependencies"])


def _check_spec(spec: str, where: str) -> None:
    spec = spec.strip("'\"")
    extras = re.fullmatch(r"(?:\.|nbcli)(?:\[([\w,]+)\])?", spec)
    assert extras, f"{where}: installs {spec!r}, not nbcli"
    unknown = set((extras.group(1) or "").split(",")) - {""} - _extras()
    assert not unknown, f"{where}: no such extra {unknown}"


def _scratch(tmp_path: Path) -> Path:
    for name in ("sample_data", "configs"):
        (tmp_path / name).symlink_to(ROOT / name)
    return tmp_path


def _env() -> dict[str, str]:
    env = dict(os.environ, NO_COLOR="1", COLUMNS="200", PYTHONDONTWRITEBYTECODE="1")
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env.pop("PYTEST_ADDOPTS", None)
    return env


def _plain_nbcli(command: str) -> bool:
    """An ``nbcli`` command with no shell syntax, on the local engine."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    words = list(lexer)
    operators = [w for w in words if w and set(w) <= set("|&;<>()")]
    return words[:1] == ["nbcli"] and not operators and "dask" not in words and "$" not in command


@contextlib.contextmanager
def _chdir(path: Path):
    before = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def _run_command(command: str, where: str, cwd: Path) -> None:
    code = EXITS.search(command)
    expected = int(code.group(1)) if code else 0
    command = EXITS.sub("", command).strip()
    set_up = SET_UP.match(command)
    if set_up:
        _check_spec(set_up.group(1), where)
        command = set_up.group(2).replace(".venv/bin/", f"{BIN}/")
    elif command.startswith("pip install "):
        for spec in shlex.split(command, comments=True)[2:]:
            if not spec.startswith("-"):
                _check_spec(spec, where)
        return
    if _plain_nbcli(command):
        # No shell around it: the entry point in this process, without an
        # interpreter's start-up (most of a small command's time).
        with _chdir(cwd):
            done = nbcli_in_process(*shlex.split(command)[1:])
        assert done.returncode == expected, (
            f"{where}: `{command}` exited {done.returncode}, the text says {expected}\n"
            f"{done.stderr[-2000:]}"
        )
        return
    run = subprocess.run(
        ["bash", "-c", f"set -o pipefail; {command}"],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == expected, (
        f"{where}: `{command}` exited {run.returncode}, the text says {expected}\n{run.stderr[-2000:]}"
    )


def _steps(command: str) -> list[str]:
    """The set-up form's install, then each of its ``&&`` steps; any other command whole."""
    set_up = SET_UP.match(command)
    if not set_up:
        return [command]
    rest = [s.strip() for s in set_up.group(2).split(" && ")]
    return [f"pip install {set_up.group(1)}", *(s.replace(".venv/bin/", "") for s in rest)]


def _run_python(block: Block, where: str, cwd: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-c", block.text],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert run.returncode == 0, f"{where}: the Python block failed\n{run.stderr[-2000:]}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_page_examples_run_as_the_text_says(page, tmp_path):
    cwd = _scratch(tmp_path)
    done: set[str] = set()  # a command the page repeats (set-up, then quick start) runs once
    for block in blocks(page):
        if block.not_run:
            continue
        where = f"{page.relative_to(ROOT)}:{block.line}"
        if block.language == "python":
            _run_python(block, where, cwd)
        else:
            for line, command in block.commands():
                for step in _steps(command):
                    if step not in done:
                        _run_command(step, f"{page.relative_to(ROOT)}:{line}", cwd)
                        done.add(step)


def test_at_most_one_block_in_ten_is_not_run():
    every = [b for page in PAGES for b in blocks(page)]
    skipped = [f"{b.page.relative_to(ROOT)}:{b.line}" for b in every if b.not_run]
    assert len(every) >= 20, len(every)
    assert len(skipped) * 10 <= len(every), skipped


def test_the_runner_reads_exit_codes_and_marks():
    page = Path("example.md")
    block = Block(page, 1, "sh", "# a comment\nnbcli a \\\n  --b  # exits 3\n\nnbcli c")
    assert block.commands() == [(3, "nbcli a    --b  # exits 3"), (6, "nbcli c")]
    assert EXITS.search(block.commands()[0][1]).group(1) == "3"
    assert not EXITS.search("nbcli c")
    assert Block(page, 1, "sh", "# not run here: needs a cluster\nx").not_run
    assert not Block(page, 1, "sh", "# a cluster\nx").not_run
    with pytest.raises(AssertionError, match="no such extra"):
        _check_spec("'.[nonesuch]'", "here")
    with pytest.raises(AssertionError, match="exited 0, the text says 3"):
        _run_command("true  # exits 3", "here", Path.cwd())
    with pytest.raises(AssertionError, match="exited 0, the text says 2"):
        _run_command("nbcli --version  # exits 2", "here", Path.cwd())
    assert _plain_nbcli("nbcli fit -d 'a b.csv'")
    assert not _plain_nbcli("nbcli predict -m m.npz -d x.csv | head -3")
    assert not _plain_nbcli("nbcli fit --engine dask -d parts/")
