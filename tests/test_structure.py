"""The package's shape (issue 35), checked from its source: no import cycle among its
modules, no module over 400 lines, the package's own modules imported inside functions
fewer than 30 times outside the commands layer, and no folder that stands in for
packages by file-name prefixes (``indexed_queue.py`` beside ``indexed_table.py``).

Each check is a function over a source tree, tested here on a small planted package
first (so that a check that can no longer fail is caught), then run on focuscrawl."""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "focuscrawl"
MAX_LINES = 400
MAX_FUNCTION_IMPORTS = 30
# the commands layer imports what a command needs when it runs (a CLI starts fast)
LATE_IMPORTS_ALLOWED = ("commands",)


def modules(root: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every module of the package at ``root``."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _target(name: str, known: dict[str, Path]) -> str | None:
    """The package module ``name`` names (itself, or the nearest enclosing module)."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def _resolved(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base if is_package else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports(root: Path) -> tuple[dict[str, set[str]], Counter[str]]:
    """The module-level import edges between the package's modules (outside
    ``if TYPE_CHECKING:``), and per module the package's modules it imports inside
    functions."""
    known = modules(root)
    top = root.name
    edges: dict[str, set[str]] = {m: set() for m in known}
    late: Counter[str] = Counter()

    def names(module: str, node: ast.Import | ast.ImportFrom) -> list[str]:
        if isinstance(node, ast.Import):
            return [a.name for a in node.names]
        base = _resolved(module, node, known[module].name == "__init__.py")
        return [f"{base}.{a.name}" for a in node.names]

    for module, path in known.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))

        def walk(body: list[ast.stmt], in_function: bool, module: str = module) -> None:
            for node in body:
                if isinstance(node, ast.If) and _type_checking(node):
                    walk(node.orelse, in_function)
                    continue
                if isinstance(node, ast.Import | ast.ImportFrom):
                    for name in names(module, node):
                        target = _target(name, known) if name.split(".")[0] == top else None
                        if target is None or target == module:
                            continue
                        if in_function:
                            late[module] += 1
                        else:
                            edges[module].add(target)
                    continue
                inner = isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda)
                for field in ("body", "orelse", "finalbody", "handlers"):
                    block = getattr(node, field, None)
                    if isinstance(block, list) and block and isinstance(block[0], ast.stmt | ast.excepthandler):
                        stmts = [s for h in block for s in (h.body if isinstance(h, ast.excepthandler) else [h])]
                        walk(stmts, in_function or inner)

        walk(tree.body, False)
    return edges, late


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The import cycles: each strongly connected component of more than one module
    (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return sorted(found)


def long_modules(root: Path, limit: int = MAX_LINES) -> dict[str, int]:
    return {m: n for m, p in modules(root).items() if (n := len(p.read_text(encoding="utf-8").splitlines())) > limit}


def late_imports(root: Path, allowed: tuple[str, ...] = LATE_IMPORTS_ALLOWED) -> int:
    top = root.name
    _, late = imports(root)
    return sum(n for m, n in late.items() if m.split(".")[1:2] not in ([a] for a in allowed) or m == top)


def prefix_families(folder: Path) -> dict[str, list[str]]:
    """Within each folder under ``folder``: file-name prefixes (``word_``) shared by two
    or more modules, which stand in for a package."""
    families: dict[str, list[str]] = {}
    for d in [folder, *(p for p in folder.rglob("*") if p.is_dir())]:
        by_prefix: dict[str, list[str]] = {}
        for f in sorted(d.glob("*.py")):
            if "_" in f.stem.strip("_"):
                by_prefix.setdefault(f.stem.split("_")[0], []).append(f.name)
        for prefix, names in by_prefix.items():
            if len(names) > 1:
                families[f"{d.relative_to(folder.parent)}/{prefix}_"] = names
    return families


# ---------------------------------------------------------------- the checks checked
@pytest.fixture
def planted(tmp_path: Path) -> Path:
    root = tmp_path / "pkg"
    (root / "store").mkdir(parents=True)
    (root / "commands").mkdir()
    (root / "__init__.py").write_text("")
    (root / "a.py").write_text("from pkg.b import thing\n")
    (root / "b.py").write_text("from pkg import c\nthing = 1\n")
    (root / "c.py").write_text("import pkg.a\n")  # a -> b -> c -> a
    (root / "d.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.e import x\n"
        "def f():\n    from pkg.e import x\n    try:\n        import pkg.a\n    except ImportError:\n        pass\n"
        + "y = 0\n" * 401
    )
    (root / "e.py").write_text("from . import d\nx = 1\n")  # d -> e only inside functions
    (root / "commands" / "__init__.py").write_text("")
    (root / "commands" / "run.py").write_text("def run():\n    from pkg.e import x\n")
    (root / "store" / "__init__.py").write_text("")
    (root / "store" / "indexed_queue.py").write_text("")
    (root / "store" / "indexed_table.py").write_text("")
    (root / "store" / "redis.py").write_text("from ..a import thing\n")
    return root


def test_each_check_finds_what_was_planted(planted: Path) -> None:
    edges, late = imports(planted)
    assert (edges["pkg.a"], edges["pkg.b"], edges["pkg.c"]) == ({"pkg.b"}, {"pkg.c"}, {"pkg.a"})
    assert edges["pkg.store.redis"] == {"pkg.a"}
    assert (edges["pkg.e"], edges["pkg.d"]) == ({"pkg.d"}, set())  # TYPE_CHECKING, functions
    assert cycles(edges) == [["pkg.a", "pkg.b", "pkg.c"]]
    assert late == Counter({"pkg.d": 2, "pkg.commands.run": 1})
    assert late_imports(planted) == 2  # the commands layer's not counted
    assert long_modules(planted) == {"pkg.d": 410}
    assert prefix_families(planted) == {"pkg/store/indexed_": ["indexed_queue.py", "indexed_table.py"]}


# ---------------------------------------------------------------- the package
def test_no_import_cycle() -> None:
    edges, _ = imports(PACKAGE)
    assert cycles(edges) == []


def test_no_module_over_400_lines() -> None:
    assert long_modules(PACKAGE) == {}


def test_few_imports_of_the_package_inside_functions() -> None:
    assert late_imports(PACKAGE) < MAX_FUNCTION_IMPORTS


def test_no_folder_of_the_frontier_or_the_crawl_loop_has_prefix_families() -> None:
    assert prefix_families(PACKAGE / "frontier") == {}
    assert prefix_families(PACKAGE / "crawler") == {}
    assert prefix_families(PACKAGE / "workers") == {}
