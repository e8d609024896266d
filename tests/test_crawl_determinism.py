"""The ordered schedule: same settings, seed and web, the same URLs in the same
order, whatever the concurrency, the network's timing, or a stop and resume in
the middle."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pytest

from focuscrawl.api import crawl, open_crawl
from focuscrawl.demo import WEBKB_SEEDS
from focuscrawl.replay.process import ReplayProcess
from focuscrawl.strategies.base import Strategy, register_strategy
from focuscrawl.types import Decision, LinkScore, Merge, Page, QueuedURL
from tests.stopping import run_stopped_after

COURSE = {"name": "keyword", "keywords": ["course", "syllabus", "homework", "lecture"]}


def order(run: Path) -> list[tuple[str, int, Any]]:
    """(url, status, score) of every line of pages.jsonl, in order."""
    with open(run / "pages.jsonl", encoding="utf-8") as fh:
        return [(r["url"], r["status"], r["score"]) for r in map(json.loads, fh)]


def _crawl(replay: ReplayProcess, out: Path, **kw: Any) -> None:
    args: dict[str, Any] = {"max_pages": 400, "delay": 0.0, "proxy": replay.proxy_url, "schedule": "ordered"}
    crawl(WEBKB_SEEDS, out, **{**args, **kw})


@pytest.mark.parametrize(
    ("kw", "other"),
    [  # one pair in the quick run; the others with --full (each pair: two crawls of WebKB)
        pytest.param({"concurrency": 16}, {"concurrency": 16}, id="bfs-twice", marks=pytest.mark.slow),
        pytest.param({"concurrency": 16}, {"concurrency": 3}, id="bfs-any-concurrency", marks=pytest.mark.slow),
        pytest.param(
            {"strategy": "best-first", "model": COURSE, "fetch_list_size": 50},
            {"strategy": "best-first", "model": COURSE, "fetch_list_size": 50, "concurrency": 5},
            id="best-n-batches", marks=pytest.mark.slow,
        ),
        pytest.param({"strategy": "best-first", "model": COURSE}, {"strategy": "best-first", "model": COURSE},
                     id="best-first-continuous"),
    ],
)
def test_two_live_crawls_fetch_the_same_urls_in_the_same_order(
    webkb_replay: ReplayProcess, tmp_path: Path, kw: dict[str, Any], other: dict[str, Any]
) -> None:
    _crawl(webkb_replay, tmp_path / "a", **kw)
    _crawl(webkb_replay, tmp_path / "b", **other)
    first, second = order(tmp_path / "a"), order(tmp_path / "b")
    assert len(first) == 400
    assert first == second


def _stop_after(run: Path, replay: ReplayProcess, pages: int, **kw: Any) -> None:
    """A crawl asked to stop (as by Ctrl-C) once ``pages`` pages are in."""
    crawler = open_crawl(run, WEBKB_SEEDS, overrides=_overrides(replay, **kw), model=kw.get("model"))
    run_stopped_after(crawler, pages)


def _overrides(replay: ReplayProcess, **kw: Any) -> dict[str, Any]:
    crawl_kw = {k: v for k, v in kw.items() if k not in ("model",)}
    return {
        "crawl": {"max_pages": 300, "schedule": "ordered", **crawl_kw},
        "fetch": {"delay": 0.0, "proxy": replay.proxy_url, "allow_private": ("127.0.0.1",)},
    }


class _LayeredBfs(Strategy):
    """Layered breadth-first with a score that prefers short URLs (so topN cuts matter)."""

    name: ClassVar[str] = "test-layered-short"
    layered: ClassVar[bool] = True
    merge: ClassVar[Merge] = Merge.MAX

    def on_page(self, page: Page, relevance: float | None, queued: QueuedURL) -> Decision:
        return Decision(links=[LinkScore(link, 1.0 / len(link.url)) for link in page.links])


register_strategy("test-layered-short")(_LayeredBfs)


@pytest.mark.slow  # crawls stopped and resumed, and their reference
@pytest.mark.parametrize(
    "kw",
    [{"strategy": "bfs"}, {"strategy": "test-layered-short", "top_n": 60, "depth": 6, "max_pages": 0}],
    ids=["continuous", "layered"],
)
def test_a_stopped_and_resumed_crawl_keeps_the_order(
    webkb_replay: ReplayProcess, tmp_path: Path, kw: dict[str, Any]
) -> None:
    whole, parts = tmp_path / "whole", tmp_path / "parts"
    overrides = _overrides(webkb_replay, **kw)
    crawl(WEBKB_SEEDS, whole, **overrides["crawl"], delay=0.0, proxy=webkb_replay.proxy_url)
    _stop_after(parts, webkb_replay, 75, **kw)
    stopped = order(parts)
    assert 75 <= len(stopped) < len(order(whole))
    run = json.loads((parts / "run.json").read_text())
    assert run["finished"] is False
    crawl([], parts, resume=True)
    assert order(parts) == order(whole)
    if kw["strategy"] != "bfs":
        # every round fetched exactly the list generated for it: rounds in pages.jsonl
        rounds = [json.loads(x)["layer"] for x in (parts / "pages.jsonl").read_text().splitlines()]
        assert rounds == sorted(rounds)
        assert set(rounds) == set(range(max(rounds) + 1))
