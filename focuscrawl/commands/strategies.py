"""``focuscrawl strategies``: the strategies, filters and models by name, with a line
each from their docstrings and the strategies' parameters (``--json``: as a list)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from focuscrawl.cli_args import first_sentence
from focuscrawl.commands import Command


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="as a JSON list")


def run(args: argparse.Namespace) -> int:
    from focuscrawl.relevance.base import MODELS
    from focuscrawl.strategies.base import STRATEGIES, params_table
    from focuscrawl.strategies.filters import FILTERS

    rows: list[dict[str, Any]] = []
    for name in STRATEGIES.names():
        cls = STRATEGIES.get(name)
        doc = cls.__doc__ or sys.modules[cls.__module__].__doc__
        rows.append({"kind": "strategy", "name": name, "description": first_sentence(doc),
                     "params": params_table(cls.Params)})  # fmt: skip
    for name in FILTERS.names():
        flt = FILTERS.get(name)
        rows.append({"kind": "filter", "name": name, "description": first_sentence(flt.__doc__)})
    for name in MODELS.names():
        cls = MODELS.get(name)
        doc = sys.modules[cls.__module__].__doc__ or cls.__doc__
        rows.append({"kind": "model", "name": name, "description": first_sentence(doc)})
    if args.json:
        print(json.dumps(rows, indent=1, ensure_ascii=False, default=str))
        return 0
    for row in rows:
        print(f"{row['kind']:9s} {row['name']:22s} {row['description']}")
        if row.get("params"):
            print(" " * 33 + ", ".join(f"{k}={v!r}" for k, v in row["params"].items()))
    return 0


COMMAND = Command("strategies", "list strategies and models", add_arguments, run)
