"""``focuscrawl why RUN_DIR URL``: the URL's row in the crawl DB and every decision
that gave it a score (which parent, which equation term), from ``decisions.jsonl``."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from focuscrawl.commands import Command
from focuscrawl.exceptions import ConfigError

# the crawl's modules are imported when the command runs: `focuscrawl --help` imports
# every command module


def db_row(run_dir: Path, url: str) -> dict[str, Any] | None:
    """The URL's state, score, tier, depth and strategy columns, read from the crawl DB."""
    from focuscrawl.crawler.run import DB_NAME, RUN_NAME
    from focuscrawl.frontier.factory import open_frontier
    from focuscrawl.settings import load_settings

    try:
        run = json.loads((run_dir / RUN_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"why: {run_dir}: no readable {RUN_NAME} ({exc})") from None
    if not (run_dir / DB_NAME).exists():
        raise ConfigError(f"why: {run_dir}: no {DB_NAME}")
    saved = run.get("settings", {})
    crawl = saved.get("crawl", {})
    store_of = {
        "frontier": crawl.get("frontier", "indexed"),
        "frontier_url": crawl.get("frontier_url"),
    }
    settings = load_settings(None, {"crawl": store_of})
    store = open_frontier(settings, run_dir / DB_NAME)
    try:
        row = store.get(url)
        if row is None:
            return None
        state = store.state(url)
        columns: dict[str, float] = {}
        for name in store.column_names():
            if name.startswith("_"):
                continue
            value = store.value(url, name)
            if value is not None:
                columns[name] = value
        return {
            "state": state.name.lower() if state is not None else "unknown",
            "score": row.score, "tier": row.tier, "depth": row.depth, "columns": columns,
        }  # fmt: skip
    finally:
        store.close()


def why(run_dir: Path, url: str) -> str:
    """The explanation ``focuscrawl why`` prints: the URL's decisions, then its row."""
    from focuscrawl.provenance import explain, format_explanation
    from focuscrawl.urls import normalize_url

    run_dir = Path(run_dir)
    target = normalize_url(url) or url
    return format_explanation(explain(run_dir, target), db_row(run_dir, target))


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dir", type=Path)
    p.add_argument("url")


def run(args: argparse.Namespace) -> int:
    print(why(args.run_dir, args.url))
    return 0


COMMAND = Command(
    "why", "why a URL of a run has its priority: parents, equation terms", add_arguments, run
)
