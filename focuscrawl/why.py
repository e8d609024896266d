"""Why a URL of a run has its priority: every decision that scored it (which parent,
which equation term: :func:`focuscrawl.provenance.explain`) and its row in the crawl DB
now. ``focuscrawl why`` prints it; the service's ``/why`` answers it as JSON."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from focuscrawl.crawler.run import DB_NAME, RUN_NAME
from focuscrawl.exceptions import ConfigError
from focuscrawl.frontier.factory import open_frontier
from focuscrawl.provenance import explain, format_explanation
from focuscrawl.settings import load_settings
from focuscrawl.urls import normalize_url


def explain_url(run_dir: Path, url: str, *, need_db: bool = True) -> dict[str, Any]:
    """The decisions that scored ``url`` (normalised), its row and the text ``why`` prints;
    without ``need_db``, a run with no crawl DB gives no row instead of a ConfigError.
    A URL that is no http(s) URL (empty, ``ftp:``, ``mailto:``) is a ConfigError."""
    target = normalize_url(url)
    if target is None:  # nothing a crawl could hold: say so, not an empty explanation
        raise ConfigError(f"why: {url!r} is not an http(s) URL (give one the crawl could have seen)")
    info = explain(run_dir, target)
    row = db_row(run_dir, target) if need_db or (run_dir / DB_NAME).exists() else None
    return {"url": target, "row": row, "contributions": info["contributions"],
            "text": format_explanation(info, row)}  # fmt: skip


def db_row(run_dir: Path, url: str) -> dict[str, Any] | None:
    """The URL's state, score, tier, depth and strategy columns, read from the crawl DB."""
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
