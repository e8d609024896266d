"""A stop's grace period is for the requests under way (issue 40, Low: Ctrl-C at the
defaults took about 8 s where the README says 5): a fetch still waiting for its turn
(its host's delay) is not waited for, sends nothing after the stop, and is fetched on
resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from focuscrawl.api import open_crawl
from focuscrawl.stats import CrawlStats
from tests.sites import html, serve, serve_proxy


@pytest.mark.parametrize("schedule", ["as-completed", "ordered"])
async def test_a_stop_sends_no_request_and_waits_for_none_not_sent(tmp_path: Path, schedule: str) -> None:
    routes = {"/": html("home"), "/a": html("a")}
    out = tmp_path / "run"
    seeds = ["http://a.example/", "http://a.example/a"]
    async with serve(routes) as origin, serve_proxy({"a.example": origin}) as proxy:
        # two connections to the host, but 3 s between two requests: "/a" waits for its
        # turn (well within the 5 s grace) while "/" is recorded and the stop is asked
        fetch = {"proxy": proxy.url(""), "delay": 3.0, "per_host": 2, "respect_robots": False}
        crawler = open_crawl(out, seeds, overrides={"fetch": fetch, "crawl": {"schedule": schedule}})

        def stop_at_first(stats: CrawlStats) -> None:
            if stats.fetched >= 1:
                crawler.request_stop()

        crawler.on_progress = stop_at_first
        try:
            async with crawler.fetcher:
                await crawler.run()
        finally:
            crawler.close()
        assert crawler.stopped
        assert origin.paths() == ["/"]  # "/a" was never sent: not waited for either
        resumed = open_crawl(out, [], resume=True)
        try:
            async with resumed.fetcher:
                await resumed.run()
        finally:
            resumed.close()
    assert origin.paths() == ["/", "/a"]
    urls = [json.loads(line)["url"] for line in (out / "pages.jsonl").read_text().splitlines()]
    assert urls == ["http://a.example/", "http://a.example/a"]
