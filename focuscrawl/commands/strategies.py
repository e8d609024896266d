"""``focuscrawl strategies``: the strategies, filters and models by name, with a line
each from their docstrings and their parameters, typed, with their defaults
(``--json``: as a list)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from focuscrawl.cli_args import first_sentence
from focuscrawl.commands import Command
from focuscrawl.params import describe
from focuscrawl.relevance.base import MODELS


def _row(kind: str, name: str, doc: str | None, params: type[Any]) -> dict[str, Any]:
    described = describe(params)
    return {
        "kind": kind, "name": name, "description": first_sentence(doc),
        "params": {n: default for n, _, default in described},
        "types": {n: type_text for n, type_text, _ in described},
    }  # fmt: skip


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="as a JSON list")


def run(args: argparse.Namespace) -> int:
    from focuscrawl.strategies import STRATEGIES, filters  # the registries: only when run

    rows: list[dict[str, Any]] = []
    for name in STRATEGIES.names():
        strategy = STRATEGIES.get(name)
        doc = strategy.__doc__ or sys.modules[strategy.__module__].__doc__
        rows.append(_row("strategy", name, doc, strategy.Params))
    for name in filters.FILTERS.names():
        flt = filters.FILTERS.get(name)
        rows.append(_row("filter", name, flt.__doc__, flt.Params))
    for name in MODELS.names():
        model = MODELS.get(name)
        rows.append(_row("model", name, sys.modules[model.__module__].__doc__ or model.__doc__, model.Params))
    if args.json:
        print(json.dumps(rows, indent=1, ensure_ascii=False, default=str))
        return 0
    for row in rows:
        print(f"{row['kind']:9s} {row['name']:22s} {row['description']}")
        params = [f"{k}: {row['types'][k]} = {v!r}" for k, v in row["params"].items()]
        for line in _wrap(params, width=100 - 33):
            print(" " * 33 + line)
    return 0


def _wrap(items: list[str], width: int) -> list[str]:
    """``items`` joined by ", " into lines of at most ``width`` characters (a long item alone)."""
    lines: list[str] = []
    for item in items:
        if lines and len(lines[-1]) + 2 + len(item) <= width:
            lines[-1] += ", " + item
        else:
            lines.append(item)
    return lines


COMMAND = Command("strategies", "list strategies, filters and models with their parameters", add_arguments, run)
