"""``focuscrawl why RUN_DIR URL``: the URL's row in the crawl DB and every decision
that gave it a score (which parent, which equation term), from ``decisions.jsonl``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from focuscrawl.engine import DB_NAME, RUN_NAME
from focuscrawl.exceptions import ConfigError
from focuscrawl.frontier.factory import open_frontier
from focuscrawl.provenance import explain, format_explanation
from focuscrawl.settings import load_settings
from focuscrawl.urls import normalize_url


def db_row(run_dir: Path, url: str) -> dict[str, Any] | None:
    """The URL's state, score, tier, depth and strategy columns, read from the crawl DB."""
    try:
        run = json.loads((run_dir / RUN_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"why: {run_dir}: no readable {RUN_NAME} ({exc})") from None
    if not (run_dir / DB_NAME).exists():
        raise ConfigError(f"why: {run_dir}: no {DB_NAME}")
    saved = run.get("settings", {})
    settings = load_settings(None, {"crawl": {"frontier": saved.get("crawl", {}).get("frontier", "indexed")}})
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
    run_dir = Path(run_dir)
    target = normalize_url(url) or url
    return format_explanation(explain(run_dir, target), db_row(run_dir, target))
