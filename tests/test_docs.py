"""The documentation: the site builds strictly, the reference covers the code, README holds.

The reference pages are generated from the code (``docs/reference_pages.py``);
these tests find what the code has by other routes (the click commands, the
registry, every schema name written in the source, every JSON Schema
defined) and fail when any of it lacks an entry. The strict build fails on
every MkDocs warning: a link to a page or heading that does not exist, a
docstring mkdocstrings cannot parse.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import pkgutil
import re
import shlex
import subprocess
import sys

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    import tomli as tomllib

import pytest

import nbcli
from tests.conftest import ROOT

README = ROOT / "README.md"


def reference_pages():
    """``docs/reference_pages.py``, the generator of the reference (not a package module)."""
    spec = importlib.util.spec_from_file_location(
        "reference_pages", ROOT / "docs" / "reference_pages.py"
    )
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    return reference_pages().pages()


def _sections(page: str) -> dict[str, str]:
    """``{level-2 heading: its text}`` of a Markdown page."""
    parts = re.split(r"^## (.+)$", page, flags=re.M)
    return {parts[i].strip(): parts[i + 1] for i in range(1, len(parts), 2)}


def test_site_builds_with_warnings_as_errors(tmp_path):
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1", NO_COLOR="1")
    run = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert "WARNING" not in run.stderr, run.stderr[-3000:]
    site = tmp_path / "site"
    for page in ("guide/commands", "reference/commands", "reference/models", "reference/api"):
        assert (site / page / "index.html").is_file(), page
    # mkdocstrings rendered the docstrings (a class and a workflow by name).
    api = (site / "reference" / "api" / "index.html").read_text(encoding="utf-8")
    assert "GaussianNB" in api and "cross_validate" in api and "Examples" in api


def test_every_command_and_option_has_a_reference_entry(pages):
    from nbcli.cli import app

    sections = _sections(pages["reference/commands.md"])
    options = reference_pages().command_options()
    assert set(options) - {""} == set(app.COMMANDS)
    missing = []
    for name, params in options.items():
        text = sections.get(f"nbcli {name}".strip(), "")
        if not text:
            missing.append(name or "nbcli")
            continue
        for p in params:
            for opt in [*p.opts, *getattr(p, "secondary_opts", [])]:
                if not p.hidden and f"`{opt}`" not in text:
                    missing.append(f"{name} {opt}")
    assert not missing, missing


def test_every_model_and_hyperparameter_has_a_reference_entry(pages):
    from nbcli.models import registry

    sections = _sections(pages["reference/models.md"])
    missing = []
    for name, cls in registry.model_classes().items():
        text = sections.get(name)
        if text is None:
            missing.append(name)
            continue
        missing += [
            f"{name}.{s.name}" for s in cls.hyperparameters if f"| `{s.name}` |" not in text
        ]
    assert not missing, missing
    # The table of every flag is the registry's own rendering.
    assert registry.hyperparameter_table() in pages["reference/models.md"]


def _schema_names_in_source() -> set[str]:
    """Every report schema name the package's source writes (``schema = "nbcli.x"``)."""
    pattern = re.compile(r"""(?:schema|SCHEMA_NAME)\w*\s*=\s*["'](nbcli\.[a-z_]+)["']""")
    names = set()
    for path in (ROOT / "nbcli").rglob("*.py"):
        names |= set(pattern.findall(path.read_text(encoding="utf-8")))
    return names


def _json_schemas_defined() -> dict[str, str]:
    """``{schema name: module.attribute}`` of every JSON Schema dict in the package."""
    found = {}
    for info in pkgutil.walk_packages(nbcli.__path__, "nbcli."):
        if not info.name.startswith(("nbcli.reports", "nbcli.workflows")):
            continue
        module = importlib.import_module(info.name)
        for attr, value in vars(module).items():
            if isinstance(value, dict) and "$schema" in value:
                const = value.get("properties", {}).get("schema", {}).get("const")
                if const and getattr(module, "__name__", "") == info.name:
                    found.setdefault(const, f"{info.name}.{attr}")
    return found


def test_every_json_schema_has_a_reference_entry(pages):
    listed = reference_pages().SCHEMAS
    names = _schema_names_in_source()
    assert len(names) >= 10, names  # the search itself still finds them
    assert not names - set(listed), (
        f"list these in docs/reference_pages.py SCHEMAS: {names - set(listed)}"
    )
    for name, where in _json_schemas_defined().items():
        module, attribute, _, _ = listed[name]
        assert attribute is not None, f"{name} has a JSON Schema, {where}: name it in SCHEMAS"
    sections = _sections(pages["reference/schemas.md"])
    assert set(listed) <= set(sections)
    for name, (_, attribute, _, _) in listed.items():
        if attribute is not None:
            assert '"$schema"' in sections[name], name


def test_readme_is_a_front_door():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) < 300
    for heading in (
        "## Install",
        "## Set up",
        "## Quick start",
        "## From Python",
        "## Documentation",
    ):
        assert heading in text, heading


def _readme_test_command() -> str:
    text = README.read_text(encoding="utf-8")
    found = [
        line
        for line in text.splitlines()
        if "pytest" in line and line.startswith("python3 -m venv")
    ]
    assert len(found) == 1, found
    return found[0]


def test_readme_test_command_is_what_ci_runs():
    # README: python3 -m venv .venv && .venv/bin/pip install SPEC && .venv/bin/python -m pytest ARGS
    steps = [shlex.split(step) for step in _readme_test_command().split("&&")]
    assert steps[0] == ["python3", "-m", "venv", ".venv"]
    assert steps[1][:2] == [".venv/bin/pip", "install"]
    spec, pytest_args = steps[1][2:], steps[2][3:]
    assert steps[2][:3] == [".venv/bin/python", "-m", "pytest"]
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    installs = [
        shlex.split(line)
        for line in ci.splitlines()
        if "-m pip install" in line and "--upgrade" not in line
    ]
    assert len(installs) == 1 and installs[0][-len(spec) :] == spec, (installs, spec)
    runs = [
        shlex.split(line)
        for line in ci.splitlines()
        if re.search(r"-m pytest -q -p no:cacheprovider$", line)
    ]
    assert runs and runs[0][3:] == pytest_args, (runs, pytest_args)
    assert "python3 -m venv" in ci


def test_extras_named_in_readme_exist():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "optional-dependencies"
    ]
    named = set(re.findall(r"nbcli\[(\w+)\]", README.read_text(encoding="utf-8")))
    named |= {
        e
        for group in re.findall(r"'\.\[([\w,]+)\]'", README.read_text(encoding="utf-8"))
        for e in group.split(",")
    }
    assert named and named <= set(extras), named - set(extras)
    # The site's tools are installed with the tests, so CI builds it.
    docs = {re.split(r"[\[<>=]", d)[0] for d in extras["docs"]}
    test = {re.split(r"[\[<>=]", d)[0] for d in extras["test"]}
    assert {"mkdocs", "mkdocs-material", "mkdocstrings"} <= docs <= test


def test_readme_links_resolve(pages):
    text = README.read_text(encoding="utf-8")
    generated = {ROOT / "docs" / path for path in pages}
    broken = []
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
        if re.match(r"[a-z]+://", target):
            continue
        path = ROOT / target
        if not (path.exists() or path in generated):
            broken.append(target)
    assert not broken, broken


def test_docstrings_do_not_count_the_models_in_words():
    # "two models" is compare's A and B; a larger count is a count of model types.
    words = "three|four|five|six|seven|eight|nine|ten|eleven|twelve"
    pattern = re.compile(rf"\b({words}) (models|model types|estimators|classifiers)\b", re.I)
    stale = [
        f"{path.relative_to(ROOT)}: {m.group(0)}"
        for path in (ROOT / "nbcli").rglob("*.py")
        for m in pattern.finditer(path.read_text(encoding="utf-8"))
    ]
    assert not stale, stale


def test_changelog_has_one_heading_per_kind_and_no_repeated_entry():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    releases = re.split(r"^## ", text, flags=re.M)[1:]
    assert releases and releases[0].startswith("[Unreleased]")
    for release in releases:
        kinds = re.findall(r"^### (.+)$", release, flags=re.M)
        assert len(kinds) == len(set(kinds)), (release.splitlines()[0], kinds)
        assert set(kinds) <= {"Added", "Changed", "Deprecated", "Removed", "Fixed", "Security"}
        entries = [" ".join(e.split()) for e in re.split(r"^- |^### .*$", release, flags=re.M)[1:]]
        repeated = {e[:80] for e in entries if e and entries.count(e) > 1}
        assert not repeated, repeated
    # Where the version lives, as the changelog says it.
    assert "`__version__` in `nbcli/__init__.py`" in text
    assert 'version = { attr = "nbcli.__version__" }' in (ROOT / "pyproject.toml").read_text(
        encoding="utf-8"
    )


def test_committed_reference_pages_are_what_the_code_gives(pages):
    # Committed so that links to them work in the repository as it is read;
    # regenerated here, so that a change of the code without them fails.
    stale = [
        name
        for name, text in pages.items()
        if not (ROOT / "docs" / name).is_file()
        or (ROOT / "docs" / name).read_text(encoding="utf-8") != text
    ]
    assert not stale, f"stale reference pages {stale}: run python docs/reference_pages.py"


def test_the_guide_lists_the_schema_version_every_report_carries():
    # The guide's table of `schema` -> `schema_version`, against what the code writes.
    text = (ROOT / "docs" / "guide" / "outputs.md").read_text(encoding="utf-8")
    table = dict(re.findall(r"^\| `(nbcli\.[a-z_]+)` \| (\d+) \|$", text, flags=re.M))
    generator = reference_pages()
    assert set(table) == set(generator.SCHEMAS), set(table) ^ set(generator.SCHEMAS)
    written = {name: generator.schema_version(name) for name in generator.SCHEMAS}
    assert {name: int(v) for name, v in table.items()} == written
    # Not every report is at version 1: the table is the code's, not a guess.
    assert written["nbcli.model"] > 1 and written["nbcli.recalibration"] > 1
    assert "`schema_version` (1)" not in text


def test_every_way_to_exit_3_is_in_the_exit_code_table_and_in_help():
    # 3 is raised for a missed threshold and for calibrate's refused calibrator.
    text = (ROOT / "docs" / "guide" / "outputs.md").read_text(encoding="utf-8")
    (row,) = [line for line in text.splitlines() if line.startswith("| 3 |")]
    assert "--fail-under" in row and "calibrate" in row and "--allow-worse" in row
    source = (ROOT / "nbcli" / "cli" / "calibrate_cmd.py").read_text(encoding="utf-8")
    assert "THRESHOLD_MISSED" in source
    from nbcli.cli.app import command_function

    assert "exits 3" in " ".join(command_function("calibrate").__doc__.split())
