"""No import circle among nbcli's modules.

The graph is built from the source with ``ast``: an edge from module ``a`` to
module ``b`` for every ``import`` of ``b`` in ``a``, at module level or inside
a function (a deferred import still makes the two modules depend on each
other); imports under ``if TYPE_CHECKING:`` are left out, as they never run.
``from package import name`` is an edge to the submodule ``package.name``
when there is one, else to the package.
"""

from __future__ import annotations

import ast
from pathlib import Path

import nbcli

ROOT = Path(nbcli.__file__).parent


def _modules(root: Path) -> dict[str, Path]:
    out = {}
    for path in root.rglob("*.py"):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


def _type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


class _Imports(ast.NodeVisitor):
    """The modules of ``modules`` one source file imports (see the module notes)."""

    def __init__(self, package: str, modules: dict) -> None:
        self.package, self.modules, self.found = package, modules, set()

    def visit_If(self, node: ast.If) -> None:
        if _type_checking(node.test):
            for child in node.orelse:
                self.visit(child)
            return
        self.generic_visit(node)

    def visit_Import(self, node: ast.Import) -> None:
        self.found.update(a.name for a in node.names)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        base = node.module or ""
        if node.level:
            up = self.package.split(".")
            up = up[: len(up) - (node.level - 1)]
            base = ".".join(up + ([node.module] if node.module else []))
        for alias in node.names:
            sub = f"{base}.{alias.name}"
            self.found.add(sub if sub in self.modules else base)


def import_graph(root: Path) -> dict[str, set[str]]:
    """``{module: modules of the package it imports}`` of the package at ``root``."""
    modules = _modules(root)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        imports = _Imports(package, modules)
        imports.visit(ast.parse(path.read_text(encoding="utf-8")))
        graph[name] = {m for m in imports.found if m in modules and m != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_no_module_of_nbcli_imports_one_that_imports_it():
    graph = import_graph(ROOT)
    assert len(graph) > 100 and "nbcli.workflows.cv" in graph["nbcli.cli.cv_cmd"]
    found = cycles(graph)
    shown = [" -> ".join(c) + f" ({'; '.join(f'{a}: {sorted(graph[a] & set(c))}' for a in c)})"
             for c in found]  # fmt: skip
    assert not found, "import circles:\n" + "\n".join(shown)


def test_the_check_finds_a_circle_through_a_deferred_import(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg import b\n")
    (package / "b.py").write_text("def f():\n    from pkg.c import g\n")
    (package / "c.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg import b\n"
        "def g():\n    from . import a\n"
    )
    (package / "d.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.a\n"
    )
    graph = import_graph(package)
    assert graph["pkg.c"] == {"pkg.a"} and graph["pkg.d"] == set()
    assert cycles(graph) == [["pkg.a", "pkg.b", "pkg.c"]]
