"""The scripts and style sheets of rendered pages kept as a browser's HTTP cache keeps
them (:mod:`focuscrawl.fetch.render.kept`): fetched once while fresh, asked again
conditionally when stale, never used where the crawler would refuse the request."""

from __future__ import annotations

import pytest
from aiohttp import web

from focuscrawl.fetch.aiohttp_transport import AiohttpTransport
from focuscrawl.fetch.render import RenderingFetcher, browser_path
from focuscrawl.fetch.render.kept import KeptAnswers
from focuscrawl.settings import FetchSettings
from focuscrawl.types import FetchResult
from tests.sites import respond, serve

pytestmark = pytest.mark.skipif(browser_path(FetchSettings()) is None, reason="no system Chromium")

SHELL = '<!DOCTYPE html><html><body><div id="root"></div><script src="/bundle.js"></script></body></html>'
PAGES = ("/a.html", "/b.html", "/c.html")


def _bundle(text: str) -> str:
    return f"document.getElementById('root').innerHTML += '<p>{text}</p>';"


async def _render_all(routes: dict[str, object], pages: tuple[str, ...] = PAGES) -> tuple[list[bytes], list[str], RenderingFetcher]:
    settings = FetchSettings(delay=0, allow_private=("127.0.0.1",), render="always", respect_robots=False)
    doms = []
    async with serve({**{p: respond(SHELL) for p in pages}, **routes}) as site:  # type: ignore[dict-item]
        async with RenderingFetcher(settings, AiohttpTransport(settings)) as fetcher:
            for page in pages:
                result = await fetcher.fetch(site.url(page))
                assert result.rendered is not None
                doms.append(result.rendered)
        paths = site.paths()
    return doms, paths, fetcher


@pytest.mark.parametrize(
    ("cache_control", "requests"),
    [("max-age=3600", 1), ("", 1), ("max-age=0", 3), ("no-store", 3)],
    ids=["fresh for an hour", "no freshness given: kept for the crawl", "stale at once, no validator", "no-store"],
)
async def test_a_shared_script_is_fetched_again_only_when_it_may_not_be_used(cache_control: str, requests: int) -> None:
    headers = {"Cache-Control": cache_control} if cache_control else {}
    routes = {"/bundle.js": respond(_bundle("kitten"), content_type="application/javascript", headers=headers)}
    doms, paths, fetcher = await _render_all(routes)
    assert all(b"<p>kitten</p>" in dom for dom in doms)
    assert paths.count("/bundle.js") == requests
    assert fetcher.counters["render_subrequest_kept"] == 3 - requests


async def test_a_script_past_its_max_age_is_fetched_again() -> None:
    settings = FetchSettings(delay=0, allow_private=("127.0.0.1",), render="always", respect_robots=False)
    now = [0.0]
    routes = {
        **{p: respond(SHELL) for p in PAGES},
        "/bundle.js": respond(_bundle("kitten"), content_type="application/javascript", headers={"Cache-Control": "max-age=60"}),
    }  # fmt: skip
    async with serve(routes) as site, RenderingFetcher(settings, AiohttpTransport(settings)) as fetcher:  # type: ignore[arg-type]
        fetcher.renderer.kept.clock = lambda: now[0]
        for page, at in zip(PAGES, (0.0, 59.0, 61.0), strict=True):
            now[0] = at
            result = await fetcher.fetch(site.url(page))
            assert result.rendered is not None
            assert b"<p>kitten</p>" in result.rendered
        paths = site.paths()
    assert paths.count("/bundle.js") == 2


@pytest.mark.parametrize(
    ("validator", "condition"),
    [("ETag", "If-None-Match"), ("Last-Modified", "If-Modified-Since")],
    ids=["etag", "last-modified"],
)
async def test_a_stale_script_is_asked_again_conditionally_and_a_changed_one_taken(validator: str, condition: str) -> None:
    """``no-cache``: asked again for every page, conditionally; a 304 answers it from
    what was kept, a new version (the validator changed) is taken and kept in its place."""
    versions = {"ETag": ['"v1"', '"v2"'], "Last-Modified": ["Mon, 01 Jun 2020 00:00:00 GMT", "Tue, 02 Jun 2020 00:00:00 GMT"]}
    current = [0]
    asked: list[str | None] = []

    async def bundle(request: web.Request) -> web.StreamResponse:
        value = versions[validator][current[0]]
        asked.append(request.headers.get(condition))
        headers = {"Cache-Control": "no-cache", validator: value}
        if request.headers.get(condition) == value:
            return web.Response(status=304, headers=headers)
        return web.Response(text=_bundle(f"kitten v{current[0] + 1}"), content_type="application/javascript", headers=headers)

    pages = ("/a.html", "/b.html", "/c.html", "/d.html")
    settings = FetchSettings(delay=0, allow_private=("127.0.0.1",), render="always", respect_robots=False)
    routes = {**{p: respond(SHELL) for p in pages}, "/bundle.js": bundle}
    doms = []
    async with serve(routes) as site, RenderingFetcher(settings, AiohttpTransport(settings)) as fetcher:  # type: ignore[arg-type]
        for n, page in enumerate(pages):
            current[0] = 0 if n < 2 else 1
            result = await fetcher.fetch(site.url(page))
            assert result.rendered is not None
            doms.append(result.rendered)
    first, second = versions[validator]
    assert asked == [None, first, first, second]
    assert [b"<p>kitten v1</p>" in d for d in doms] == [True, True, False, False]
    assert [b"<p>kitten v2</p>" in d for d in doms] == [False, False, True, True]
    assert fetcher.counters["render_subrequest_revalidated"] == 2


async def test_a_kept_script_is_not_used_where_the_crawler_would_refuse_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kept answer makes no request; still, once the crawler would refuse its URL
    (robots.txt read again and disallowing it, its host's name now pointing where the
    address policy says no), the page does not get it from what was kept either."""
    settings = FetchSettings(delay=0, allow_private=("127.0.0.1",), render="always", respect_robots=False)
    routes = {
        **{p: respond(SHELL) for p in PAGES[:2]},
        "/bundle.js": respond(_bundle("kitten"), content_type="application/javascript", headers={"Cache-Control": "max-age=3600"}),
    }  # fmt: skip
    async with serve(routes) as site, RenderingFetcher(settings, AiohttpTransport(settings)) as fetcher:  # type: ignore[arg-type]
        first = await fetcher.fetch(site.url("/a.html"))

        admit = fetcher.admission.admit

        async def refuse(url: str) -> str | None:
            return "blocked-address" if url.endswith("/bundle.js") else await admit(url)

        monkeypatch.setattr(fetcher.admission, "admit", refuse)
        second = await fetcher.fetch(site.url("/b.html"))
        paths = site.paths()
    assert first.rendered is not None
    assert b"<p>kitten</p>" in first.rendered
    assert second.rendered is not None
    assert b"kitten" not in second.rendered
    assert paths.count("/bundle.js") == 1
    assert fetcher.counters["render_subrequest_kept"] == 0


def test_what_is_kept_stays_within_its_bytes() -> None:
    kept = KeptAnswers(budget=100)
    for n in range(6):
        kept.keep(f"http://a.example/{n}.js", FetchResult("u", "u", 200, body=b"x" * 20))
    assert kept.size <= 100
    assert kept.get("http://a.example/0.js")[0] is None  # the least recently used let go
    assert kept.get("http://a.example/5.js")[0] is not None
    kept.keep("http://a.example/big.js", FetchResult("u", "u", 200, body=b"x" * 30))  # over a quarter
    assert kept.get("http://a.example/big.js")[0] is None
    assert kept.size <= 100
