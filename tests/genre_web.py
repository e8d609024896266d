"""The tiny web of the P3 tests: fabricated pages processed by the real Recorder."""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from focuscrawl.crawler.recorder import Recorder
from focuscrawl.crawler.window import InFlight
from focuscrawl.frontier.memory import MemoryFrontier
from focuscrawl.output.writers import JsonlOutput, WarcOutput
from focuscrawl.settings import Settings
from focuscrawl.stats import CrawlStats
from focuscrawl.strategies.base import Strategy
from focuscrawl.strategies.filters import LinkFilter
from focuscrawl.strategies.view import FrontierView
from focuscrawl.types import FetchResult, URLState
from focuscrawl.urls import Scope

# One genre term, one content term and one URL term, each a set of a single term:
# the cosine of eq. 3.1 of a one-term set is 1 if the page has the term, else 0,
# whatever the term weighting. With GW = CW = 1, GCW = 9, UW = 1 (steps 7 and 9):
#   S = (9 · (g + c) / 2 + 1 · u) / 10
# "syllabus database" -> (9 · 1 + 0) / 10 = 0.9;  "database" -> 9 · 0.5 / 10 = 0.45
# "course" only in the URL -> 1 / 10 = 0.1;      neither -> 0.
COSINE: dict[str, Any] = {
    "genre_terms": ["syllabus"], "content_terms": ["database"], "url_terms": ["course"],
    "gw": 1.0, "cw": 1.0, "gcw": 9.0, "uw": 1.0,
}  # fmt: skip

A, P, U, V, W = (
    "http://a.org/",
    "http://a.org/p",
    "http://a.org/u",
    "http://a.org/course/v",
    "http://a.org/w",
)
X, Y, Z = "http://a.org/x", "http://a.org/y", "http://a.org/z"

# A (seed) -> P -> U, V, W (siblings); U -> X, V -> Y, W -> Z
WEB: dict[str, tuple[str, list[str]]] = {
    A: ("welcome", [P]),  # S = 0
    P: ("index", [U, V, W]),  # S = 0
    U: ("syllabus database", [X]),  # S = 0.9
    V: ("notes", [Y]),  # S = 0.1 (the URL term "course")
    W: ("database", [Z]),  # S = 0.45
    X: ("end", []),  # S = 0
    Y: ("end", []),
    Z: ("end", []),
}


def html(text: str, hrefs: list[str]) -> bytes:
    links = "".join(f'<a href="{h}">go</a> ' for h in hrefs)
    return f"<html><body><p>{text}</p>{links}</body></html>".encode()


def result(url: str, text: str, hrefs: list[str]) -> FetchResult:
    return FetchResult(
        url=url, final_url=url, status=200, body=html(text, hrefs),
        content_type="text/html", charset="utf-8", headers={"Content-Type": "text/html"},
    )  # fmt: skip


def processor(
    tmp_path: Path, store: MemoryFrontier, strategy: Strategy, seeds: list[str],
    filters: Sequence[LinkFilter] = (),
) -> Recorder:
    settings = Settings()
    tmp_path.mkdir(parents=True, exist_ok=True)
    store.ensure_columns(("relevance", *strategy.columns))
    strategy.attach(FrontierView(store), random.Random(0))
    proc = Recorder(
        settings, queue=store, columns=store, graph=store, strategy=strategy, model=strategy.model, filters=filters,
        scope=Scope.for_seeds(settings.scope, seeds), stats=CrawlStats(),
        warc=WarcOutput(tmp_path / "c.warc.gz"), pages=JsonlOutput(tmp_path / "pages.jsonl"),
        decisions=JsonlOutput(tmp_path / "decisions.jsonl"),
    )  # fmt: skip
    proc.add_seeds(seeds)
    return proc


def visit(
    proc: Recorder, store: MemoryFrontier, web: dict[str, tuple[str, list[str]]]
) -> str:
    """Pop the best URL (RemoveURL, step 3), fetch it from ``web`` and process it."""
    (queued,) = store.pop(1)
    text, hrefs = web[queued.url]
    proc.record(InFlight(queued), result(queued.url, text, hrefs))
    return queued.url


def decisions(proc: Recorder, run: Path) -> list[dict[str, Any]]:
    assert proc.decisions is not None
    proc.decisions.close()
    return [json.loads(x) for x in (run / "decisions.jsonl").read_text().splitlines()]


def queued_scores(store: MemoryFrontier) -> dict[str, float]:
    return {row.url: round(row.score, 9) for row in store.iter_urls(URLState.QUEUED)}
