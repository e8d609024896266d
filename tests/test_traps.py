"""Spider traps are cut short by the default scope rules (issue 9, item 6)."""

from __future__ import annotations

import json
from pathlib import Path

from aiohttp import web

from focuscrawl.api import crawl_async
from focuscrawl.settings import ScopeSettings
from focuscrawl.urls import Scope
from tests.sites import html, serve


async def _trap(request: web.Request) -> web.StreamResponse:
    """Any path under /trap/ answers, with links that never end: the relative
    ``a/`` (a page that answers any path, as a misconfigured server does) and, on
    the pages of the numbered chain, a new name ``<number of segments>/``."""
    if not request.path.startswith("/trap/"):
        return web.Response(status=404, text="not found")
    depth = len([s for s in request.path.split("/") if s])
    deeper = "" if "/a/" in request.path else f'<a href="{depth}/">deeper</a>'
    body = f'<!DOCTYPE html><html><body><a href="a/">again</a> {deeper}</body></html>'
    return web.Response(body=body.encode(), content_type="text/html")


async def test_default_scope_stops_a_spider_trap(tmp_path: Path) -> None:
    normal = {f"/p{i}.html": html(f"<p>page {i}</p>") for i in range(30)}
    links = " ".join(f'<a href="{p}">{p}</a>' for p in normal)
    routes = {"/": html(f'{links} <a href="/trap/">trap</a>'), **normal}
    async with serve(routes, fallback=_trap) as site:
        stats = await crawl_async(
            tmp_path / "run",
            [site.url("/")],
            overrides={
                "crawl": {"max_pages": 400},
                "fetch": {"delay": 0, "allow_private": ("127.0.0.1",)},
            },
        )
        paths = site.paths()
    trap = [p for p in paths if p.startswith("/trap/")]
    # every ordinary page is fetched; the numbered chain stops at 20 segments:
    # /trap/, /trap/1/ ... /trap/1/2/.../19/; from each of its pages the 'a/'
    # chain gives p/a/ and p/a/a/ (a third 'a' in a row is refused) while they
    # have at most 20 segments: 2 each from the 18 pages of 1..18 segments, one
    # from the page of 19, none from the page of 20: 37
    assert all(p in paths for p in normal)
    numbered = [p for p in trap if "/a/" not in p]
    assert len(numbered) == 20
    assert len(trap) - len(numbered) == 37
    assert max(len([s for s in p.split("/") if s]) for p in trap) == 20
    assert not any("/a/a/a/" in p for p in trap)
    assert stats.fetched == len(paths) - paths.count("/robots.txt") < 400
    counters = json.loads((tmp_path / "run" / "run.json").read_text())["summary"]["counters"]
    assert counters["link_rejected_repeated-segments"] > 0
    assert counters["link_rejected_too-many-segments"] > 0


def test_default_scope_rules() -> None:
    scope = Scope(ScopeSettings())
    assert scope.reject("http://h.org/trap/a/a/a/") == "repeated-segments"
    assert scope.reject("http://h.org/cal/2024/01/2024/01/2024/01/") == "repeated-segments"
    assert scope.reject("http://h.org/" + "x/" * 20 + "y.html") == "too-many-segments"
    assert scope.reject("http://h.org/" + "x/" * 19 + "y.html") == "repeated-segments"
    assert scope.reject("http://h.org/" + "".join(f"{i}/" for i in range(19)) + "y.html") is None
    assert scope.reject("http://h.org/a/a/b/a/a/index.html?x=a/a/a") is None
    assert ScopeSettings().max_pages_per_host == 10_000
    off = Scope(ScopeSettings(max_path_segments=0, max_segment_repeats=0))
    assert off.reject("http://h.org/" + "x/" * 30) is None
