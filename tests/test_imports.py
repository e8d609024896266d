"""Imports flow one way: the package's import graph has no cycle, and layers point down.

The graph is read from the source with ``ast``, not from ``sys.modules``: an import
inside a function (there to break a cycle at run time) or under ``TYPE_CHECKING``
is an edge like any other, so a cycle cannot hide behind a deferred import.
Importing ``a.b.c`` also runs the ``__init__`` of ``a`` and ``a.b``; those implicit
edges are left out (every module would otherwise depend on every package above it).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "focuscrawl"

# (importing layer, layers it must never import); a layer is a module and its submodules
_TOP = ("focuscrawl.crawler", "focuscrawl.cli", "focuscrawl.commands", "focuscrawl.api", "focuscrawl.demo")
FORBIDDEN = [
    (layer, _TOP)
    for layer in ("focuscrawl.strategies", "focuscrawl.relevance", "focuscrawl.parse", "focuscrawl.frontier",
                  "focuscrawl.fetch", "focuscrawl.output", "focuscrawl.urls")
]  # fmt: skip
LEAVES = ("focuscrawl.types", "focuscrawl.exceptions")  # values only: import nothing internal


def module_files(package: Path = PACKAGE) -> dict[str, Path]:
    """{dotted module name: file} of every module of the package."""
    out: dict[str, Path] = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _owner(name: str, modules: Mapping[str, Path]) -> str | None:
    """The module that defines ``name`` (``a.b.C`` -> ``a.b``), None if not in the package."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name or None


def _imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement of a module: module level, in functions, under ``if``."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node


def imported_modules(name: str, path: Path, modules: Mapping[str, Path]) -> set[str]:
    """The package's modules that module ``name`` (file ``path``) imports anywhere."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in _imports(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            base = node.module or ""
            if node.level:  # from . import x / from ..a import b
                anchor = package
                for _ in range(node.level - 1):
                    anchor = anchor.rpartition(".")[0]
                base = f"{anchor}.{base}" if base else anchor
            # `from a import b`: the submodule a.b if there is one, else a itself
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        for target in targets:
            owner = _owner(target, modules)
            if owner is not None and owner != name:
                found.add(owner)
    return found


def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    modules = module_files(package)
    return {name: imported_modules(name, path, modules) for name, path in modules.items()}


def cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """One cycle (a -> b -> ... -> a) through every strongly connected set of 2+ modules.

    >>> cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}})
    [['a', 'b', 'c', 'a']]
    >>> cycles({"a": {"b"}, "b": set()})
    []
    """
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
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
                components.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [_cycle_in(set(c), graph) for c in sorted(components)]


def _cycle_in(component: set[str], graph: Mapping[str, set[str]]) -> list[str]:
    """A shortest cycle through the first module of a strongly connected set (breadth first)."""
    start = min(component)
    paths = {start: [start]}
    queue = [start]
    for v in queue:
        for w in sorted(graph.get(v, set()) & component):
            if w == start:
                return [*paths[v], start]
            if w not in paths:
                paths[w] = [*paths[v], w]
                queue.append(w)
    raise AssertionError(f"{sorted(component)} is not strongly connected")


def _in_layer(module: str, layer: str) -> bool:
    return module == layer or module.startswith(layer + ".")


GRAPH = import_graph()


def test_the_graph_sees_imports_made_inside_functions(tmp_path: Path) -> None:
    package = tmp_path / "p"
    (package / "sub").mkdir(parents=True)
    files = {
        "__init__.py": "",
        "a.py": "def f():\n    from p import b\n",  # inside a function: an edge all the same
        "b.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from p.sub.c import X\n",
        "sub/__init__.py": "",
        "sub/c.py": "from .. import a\nimport json\n",  # relative; json is no module of the package
    }
    for name, text in files.items():
        (package / name).write_text(text, encoding="utf-8")
    graph = import_graph(package)
    assert graph == {"p": set(), "p.a": {"p.b"}, "p.b": {"p.sub.c"}, "p.sub": set(), "p.sub.c": {"p.a"}}
    assert cycles(graph) == [["p.a", "p.b", "p.sub.c", "p.a"]]


def test_the_package_has_no_import_cycle() -> None:
    found = cycles(GRAPH)
    assert not found, "import cycles: " + "; ".join(" -> ".join(c) for c in found)


@pytest.mark.parametrize(("layer", "forbidden"), FORBIDDEN, ids=[layer for layer, _ in FORBIDDEN])
def test_layers_point_one_way(layer: str, forbidden: tuple[str, ...]) -> None:
    wrong = sorted(
        f"{module} imports {target}"
        for module, targets in GRAPH.items()
        if _in_layer(module, layer)
        for target in targets
        if any(_in_layer(target, f) for f in forbidden)
    )
    assert not wrong, wrong


@pytest.mark.parametrize("module", LEAVES)
def test_value_modules_import_nothing_internal(module: str) -> None:
    assert GRAPH[module] == set()


def test_cycles_are_found_and_named() -> None:
    graph = {"p.a": {"p.b"}, "p.b": {"p.c", "p.d"}, "p.c": {"p.a"}, "p.d": set()}
    assert cycles(graph) == [["p.a", "p.b", "p.c", "p.a"]]
