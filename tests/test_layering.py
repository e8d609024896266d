"""Imports flow one way (STYLE.md): values import nothing internal; strategies and
relevance models never import the engine or the CLI."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "focuscrawl"


def internal_imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("focuscrawl"):
            out.add(node.module)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name.startswith("focuscrawl"))
    return out


def modules_under(folder: str) -> list[Path]:
    return sorted((PACKAGE / folder).glob("*.py"))


@pytest.mark.parametrize("name", ["types.py", "exceptions.py"], ids=["types", "exceptions"])
def test_value_modules_import_nothing_internal(name: str) -> None:
    assert internal_imports(PACKAGE / name) == set()


@pytest.mark.parametrize(
    "path",
    [pytest.param(p, id=f"{p.parent.name}/{p.name}") for f in ("strategies", "relevance", "parse", "frontier", "fetch", "output") for p in modules_under(f)],
)
def test_lower_layers_never_import_engine_or_cli(path: Path) -> None:
    forbidden = {"focuscrawl.engine", "focuscrawl.cli", "focuscrawl.commands", "focuscrawl.api", "focuscrawl.demo"}
    if path.name == "cli.py":  # a package's own command module may build on the API
        forbidden -= {"focuscrawl.api"}
    assert internal_imports(path) & forbidden == set()


def test_the_check_sees_imports() -> None:
    assert "focuscrawl.strategies.base" in internal_imports(PACKAGE / "strategies" / "bfs.py")
