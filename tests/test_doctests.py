"""The numpydoc ``Examples`` of the public estimators, workflows and readers run as doctests.

Every example runs (none is skipped) in a scratch folder that holds
``sample_data/``, so an example reads the shipped files by their relative
paths and writes its own files beside them. Each public estimator (every
model class of the registry) and each workflow of the API reference must
have an example of its own.
"""

from __future__ import annotations

import doctest
import importlib
import importlib.util
import inspect
import pkgutil
import re

import pytest

import nbcli
from tests.conftest import ROOT

#: Modules whose docstrings hold examples besides the API objects' own.
MODULES = [
    "nbcli.models",
    "nbcli.models.registry",
    "nbcli.engines",
    "nbcli.io.safe_npz",
    "nbcli.text",
]


def _api_objects() -> list[str]:
    """The objects of the generated API page (``docs/reference_pages.py``)."""
    spec = importlib.util.spec_from_file_location(
        "reference_pages", ROOT / "docs" / "reference_pages.py"
    )
    pages = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(pages)  # type: ignore[union-attr]
    return [path for paths in pages.api_objects().values() for path in paths]


def _resolve(path: str):
    module, _, name = path.rpartition(".")
    try:
        return getattr(importlib.import_module(module), name)
    except ModuleNotFoundError:
        return importlib.import_module(path)


def _modules() -> list[str]:
    found = set(MODULES)
    for path in _api_objects():
        obj = _resolve(path)
        found.add(obj.__name__ if inspect.ismodule(obj) else obj.__module__)
    return sorted(found)


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    (tmp_path / "sample_data").symlink_to(ROOT / "sample_data")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("module", _modules())
def test_examples_run(module, scratch):
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in finder.find(importlib.import_module(module)) if t.examples]
    assert tests, f"{module} has no examples"
    for test in tests:
        runner.run(test)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, f"{result.failed} of {result.attempted} examples of {module} failed"


def test_every_estimator_and_workflow_has_an_example():
    missing = []
    for path in _api_objects():
        obj = _resolve(path)
        if inspect.ismodule(obj):
            continue
        doc = inspect.getdoc(obj) or ""
        if not re.search(r"^Examples\n-+\n(.*\n)*?>>> ", doc + "\n", re.M):
            missing.append(path)
    assert not missing, f"no numpydoc Examples section with >>> lines: {missing}"


def test_no_example_is_skipped():
    skipped = []
    for info in pkgutil.walk_packages(nbcli.__path__, "nbcli."):
        spec = importlib.util.find_spec(info.name)
        if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
            continue
        with open(spec.origin, encoding="utf-8") as f:
            skipped += [f"{info.name}:{i}" for i, line in enumerate(f, 1) if "+SKIP" in line]
    assert not skipped, skipped
