"""A long crawl's renderers stay within their memory: each page leaves its document to
a garbage collector that does not feel the need, so a renderer grew by 0.35–0.5 MiB a
page until its tab's garbage is collected every ``COLLECT_EVERY`` pages (issue 37)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random

import psutil
import pytest

from focuscrawl.fetch.aiohttp_transport import AiohttpTransport
from focuscrawl.fetch.render import RenderingFetcher, browser_path
from focuscrawl.fetch.render.browser import COLLECT_EVERY
from focuscrawl.settings import FetchSettings
from tests.sites import respond, serve

pytestmark = pytest.mark.skipif(browser_path(FetchSettings()) is None, reason="no system Chromium")


def _renderers_pss_mib() -> float:
    """The proportional resident memory of the renderer processes under this one."""
    total = 0
    for proc in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            if "--type=renderer" in " ".join(proc.cmdline()):
                total += proc.memory_full_info().pss
    return total / 2**20


async def test_a_renderer_does_not_grow_with_the_pages_it_renders() -> None:
    # 100 script-built pages of ~200 words each, each its own script, in one context:
    # without collection the renderer grew by 50 MiB from the 10th page to the 110th
    # (0.5 MiB a page), with it by 5 MiB
    assert COLLECT_EVERY <= 50
    rng = random.Random(37)
    routes = {}
    for n in range(110):
        text = " ".join(rng.choice(("cat", "river", "market", "energy", "school")) for _ in range(200))
        routes[f"/p{n}.html"] = respond(f'<!DOCTYPE html><html><body><div id="root"></div><script src="/s{n}.js"></script></body></html>')
        script = f"document.getElementById('root').innerHTML = {json.dumps(f'<p>{text}</p>')};"
        routes[f"/s{n}.js"] = respond(script, content_type="application/javascript")
    settings = FetchSettings(delay=0, allow_private=("127.0.0.1",), render="always", respect_robots=False, render_contexts=1)
    marks = []
    async with serve(routes) as site, RenderingFetcher(settings, AiohttpTransport(settings)) as fetcher:  # type: ignore[arg-type]
        for n in range(110):
            result = await fetcher.fetch(site.url(f"/p{n}.html"))
            assert result.rendered is not None
            assert b"<p>" in result.rendered
            if n in (9, 109):
                await asyncio.sleep(0.3)  # (a collection under way ends)
                marks.append(_renderers_pss_mib())
    assert marks[1] - marks[0] < 25, marks
