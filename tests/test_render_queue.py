"""The as-completed window's render queue (issue 37): a page handed to the renderer
gives its window slot back to plain fetches while it waits for the browser and
renders, within a bound; the ordered schedule's window stays what the settings say."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from focuscrawl.api import crawl_async
from focuscrawl.crawler.window import AsCompletedWindow, InFlight, OrderedWindow
from focuscrawl.fetch.base import HAND_OFF
from focuscrawl.fetch.render import browser_path
from focuscrawl.settings import FetchSettings
from focuscrawl.stats import CrawlStats
from focuscrawl.types import FetchResult, QueuedURL
from tests.sites import html, respond, serve

PLAIN = [f"/p{i}.html" for i in range(4)]
SHELL = (
    "<!DOCTYPE html><html><body><div id='root'></div><script src='/slow.js'></script></body></html>"
)
SLOW_JS = "document.getElementById('root').innerHTML = '<p>' + 'kitten '.repeat(60) + '</p>';"


@pytest.mark.skipif(browser_path(FetchSettings()) is None, reason="no system Chromium")
@pytest.mark.parametrize(
    ("schedule", "meanwhile"),
    [pytest.param("as-completed", True, id="as-completed"), pytest.param("ordered", False, id="ordered")],
)
async def test_plain_pages_are_fetched_while_a_page_renders(tmp_path: Path, schedule: str, meanwhile: bool) -> None:
    """A window of one URL and a shell whose script is answered only once every plain
    page has been asked for (or after ``wait`` seconds): as-completed, the shell's slot
    is given back while it renders, so the plain pages are fetched meanwhile and
    recorded before it; ordered, the shell holds the window's one slot through its
    rendering (the window is part of the order) and the plain pages come after it."""
    plain_asked = asyncio.Event()
    asked: set[str] = set()
    waited: list[bool] = []
    wait = 20.0 if meanwhile else 2.0  # (ordered: the answer that never comes early)

    def plain(path: str) -> Any:
        page = html("<p>" + "kitten " * 60 + "</p>")

        async def handler(request: web.Request) -> web.StreamResponse:
            asked.add(path)
            if asked >= set(PLAIN):
                plain_asked.set()
            return await page(request)

        return handler

    async def slow_js(request: web.Request) -> web.StreamResponse:
        try:
            await asyncio.wait_for(plain_asked.wait(), wait)
            waited.append(False)
        except TimeoutError:
            waited.append(True)
        return web.Response(text=SLOW_JS, content_type="application/javascript")

    links = " ".join(f'<a href="{p}">p</a>' for p in ["/shell.html", *PLAIN])
    routes = {"/": html(links), "/shell.html": respond(SHELL), "/slow.js": slow_js, **{p: plain(p) for p in PLAIN}}
    async with serve(routes) as site:  # type: ignore[arg-type]
        await crawl_async(
            tmp_path / "run", [site.url("/")],
            overrides={
                "crawl": {"max_pages": 20, "window": 1, "schedule": schedule},
                # two connections to the host: the shell's script holds one while it waits
                "fetch": {"delay": 0, "per_host": 2, "allow_private": ("127.0.0.1",), "render": "auto",
                          "render_timeout": 60.0, "respect_robots": False},
            },
        )  # fmt: skip
    rows = [json.loads(line) for line in (tmp_path / "run" / "pages.jsonl").read_text().splitlines()]
    order = [row["url"].split("/", 3)[3] for row in rows]
    assert sorted(order) == sorted(["", "shell.html", *(p[1:] for p in PLAIN)])  # every page once
    assert waited == [not meanwhile]
    shell_at = order.index("shell.html")
    assert all((order.index(p[1:]) < shell_at) == meanwhile for p in PLAIN)
    counters = json.loads((tmp_path / "run" / "run.json").read_text())["summary"]["counters"]
    assert counters["render_pages"] == 1
    assert not any(k.startswith("render_failed") for k in counters)


class _HandingFetcher:
    """Every URL's page is "fetched" at once and handed to a renderer that finishes it
    when the test says (:meth:`finish`)."""

    def __init__(self) -> None:
        self.rendering: dict[str, asyncio.Future[None]] = {}

    async def fetch(self, url: str) -> FetchResult:
        handed = HAND_OFF.get()
        if handed is not None:
            handed()
        done = self.rendering[url] = asyncio.get_running_loop().create_future()
        await done
        return FetchResult(url, url, 200)

    def finish(self, url: str) -> None:
        self.rendering[url].set_result(None)

    def refusal(self, url: str) -> FetchResult | None:
        return None

    def sending(self, task: asyncio.Future[Any]) -> bool:
        return False


async def _fill(window: AsCompletedWindow | OrderedWindow, taken: list[InFlight]) -> None:
    """Take URLs (one host each) while the window has room, as the continuous policy does."""
    while window.room() > 0:
        item = InFlight(QueuedURL(f"http://h{len(taken)}.example/", 1.0, 0, f"h{len(taken)}.example"))
        taken.append(item)
        window.launch(item)
        for _ in range(3):  # its fetch starts and hands its page over
            await asyncio.sleep(0)


async def test_the_render_queue_is_bounded() -> None:
    """A window of 2 with a render queue of 3 holds 5 pages being rendered at most: 3
    given back (not their hosts' room), then the window fills and the crawl waits. A
    render done gives its place in the queue to the oldest page waiting in its slot;
    once recorded, its slot takes a new URL."""
    fetcher = _HandingFetcher()
    window = AsCompletedWindow(fetcher, CrawlStats(), asyncio.Event(), 2, straggler_seconds=10.0, render_queue=3)  # type: ignore[arg-type]
    taken: list[InFlight] = []
    await _fill(window, taken)
    assert (len(taken), window.live, len(window.renders), window.room()) == (5, 5, 3, 0)
    assert len(window.hosts) == 5  # each keeps its host's room
    fetcher.finish(taken[0].queued.url)
    results = await window.wait(lambda: None)
    assert [slot.item for slot, _ in results] == [taken[0]]
    assert window.room() == 0  # h3 given back in h0's place; h0 not recorded yet
    assert len(window.hosts) == 5
    window.settled(results[0][0])
    assert (window.live, len(window.renders), window.room()) == (4, 3, 1)
    assert "h0.example" not in window.hosts
    await _fill(window, taken)
    assert (len(taken), window.live, window.room()) == (6, 5, 0)
    for item in taken[1:]:
        fetcher.finish(item.queued.url)
    await window.cancel()


async def test_the_ordered_window_gives_no_slot_back() -> None:
    fetcher = _HandingFetcher()
    window = OrderedWindow(fetcher, CrawlStats(), asyncio.Event(), 2)  # type: ignore[arg-type]
    taken: list[InFlight] = []
    await _fill(window, taken)
    assert (len(taken), window.live, window.room()) == (2, 2, 0)
    await window.cancel()
