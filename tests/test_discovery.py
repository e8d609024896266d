"""Sitemaps in a crawl (issue 36, item 2): robots.txt's Sitemap lines, index files,
gzip, the limits and the host cap; a sitemap's URLs enter the frontier as its links."""

from __future__ import annotations

import gzip
import json
import logging
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from focuscrawl.api import crawl_async
from focuscrawl.discovery import CHANGEFREQ, LASTMOD, PRIORITY, Discovery
from focuscrawl.frontier.memory import MemoryFrontier
from focuscrawl.settings import Settings
from focuscrawl.strategies.bfs import BreadthFirstStrategy
from focuscrawl.types import FetchResult
from tests.sites import Handler, html, serve

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


def _served(text: str, content_type: str = "application/xml", compressed: bool = False) -> Handler:
    """``text`` with ``{base}`` the site's origin as the client named it."""

    async def handler(request: web.Request) -> web.StreamResponse:
        body = text.replace("{base}", f"http://{request.host}").encode()
        return web.Response(body=gzip.compress(body) if compressed else body, headers={"Content-Type": content_type})

    return handler


def _urlset(*urls: str) -> str:
    return f"<urlset {NS}>" + "".join(f"<url><loc>{{base}}{u}</loc></url>" for u in urls) + "</urlset>"


ROUTES = {
    "/robots.txt": _served("User-agent: *\nDisallow: /private\nSitemap: {base}/index.xml\n"
                           "sitemap: {base}/broken.xml\nSitemap: /relative.xml\n", "text/plain"),
    "/": html("<p>home, no links</p>"),
    "/index.xml": _served(f"<sitemapindex {NS}><sitemap><loc>{{base}}/index.xml</loc></sitemap>"
                          "<sitemap><loc>{base}/s1.xml.gz</loc></sitemap>"
                          "<sitemap><loc>{base}/s2.xml</loc></sitemap></sitemapindex>"),
    "/s1.xml.gz": _served(f"<urlset {NS}><url><loc>{{base}}/a.html</loc><lastmod>1970-01-02</lastmod>"
                          "<changefreq>weekly</changefreq><priority>0.9</priority></url>"
                          "<url><loc>{base}/b.html</loc></url><url><loc>http://elsewhere.example/x</loc></url>"
                          "</urlset>", "application/x-gzip", compressed=True),
    "/s2.xml": _served(_urlset("/c.html", "/deep/e.html", "/private/p.html")),
    "/broken.xml": _served(f"<urlset {NS}><url><loc>{{base}}/d.html</loc></url><url><loc>{{base}}/z"),
    "/data.xml": _served("<rss><channel></channel></rss>"),
}  # fmt: skip
FOUND = {"/a.html", "/b.html", "/c.html", "/d.html", "/deep/e.html"}


async def _crawl(tmp_path: Path, **fetch: Any) -> tuple[set[str], dict[str, dict[str, Any]], Counter[str]]:
    async with serve(ROUTES, fallback=html("<p>leaf</p>")) as site:
        await crawl_async(
            tmp_path / "run", [site.url("/"), site.url("/data.xml")],
            overrides={"crawl": {"max_pages": 100}, "fetch": {"delay": 0, "allow_private": ("127.0.0.1",), **fetch},
                       "scope": {"deny_extensions": ()}},
        )  # fmt: skip
        paths = set(site.paths())
        origin = site.url("")
    rows = {}
    for line in (tmp_path / "run" / "pages.jsonl").read_text().splitlines():
        row = json.loads(line)
        rows[row["url"].removeprefix(origin)] = {**row, "parent": (row["parent"] or "").removeprefix(origin)}
    counters = Counter(json.loads((tmp_path / "run" / "run.json").read_text())["summary"]["counters"])
    return paths, rows, counters


async def test_sitemaps_of_robots_txt_are_read(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    # the fetcher's warnings, whatever an earlier CLI test did to the package's logger
    logger = logging.getLogger("focuscrawl.fetch.fetcher")
    caplog.set_level(logging.WARNING, logger=logger.name)
    logger.addHandler(caplog.handler)
    logger.propagate = False  # (else the root's caplog handler takes each record twice)
    try:
        paths, rows, counters = await _crawl(tmp_path)
    finally:
        logger.removeHandler(caplog.handler)
        logger.propagate = True
    # a Sitemap line that is no full URL (before, b47: dropped unseen): counted, one line
    assert counters["robots_sitemap_refused"] == 1
    said = [r.getMessage() for r in caplog.records if "Sitemap line" in r.getMessage()]
    assert len(said) == 1
    assert said[0].endswith("skipped (the first: '/relative.xml')")
    assert paths >= FOUND  # no page links to them
    assert "/private/p.html" not in paths  # robots.txt still rules
    assert "/z" not in paths  # cut by the malformed XML
    # each URL's parent is the sitemap that listed it; a sitemap's, its index or robots.txt
    assert {u: rows[u]["parent"] for u in ("/a.html", "/c.html", "/d.html")} == {
        "/a.html": "/s1.xml.gz", "/c.html": "/s2.xml", "/d.html": "/broken.xml"}
    assert (rows["/s1.xml.gz"]["parent"], rows["/index.xml"]["parent"]) == ("/index.xml", "/robots.txt")
    assert (rows["/index.xml"]["sitemap"], rows["/s1.xml.gz"]["sitemap"]) == ("sitemapindex", "urlset")
    assert rows["/s1.xml.gz"]["out_links"] == 2
    # XML that is no sitemap is not a page; the bad input is counted, the crawl went on
    assert rows["/data.xml"]["error"] == "content-type"
    assert counters["sitemaps_found"] == 4
    assert (counters["sitemap_errors"], counters["sitemap_lists_itself"], counters["sitemap_urls_refused"]) == (1, 1, 1)


async def test_sitemaps_setting_and_host_cap(tmp_path: Path) -> None:
    paths, _, _ = await _crawl(tmp_path / "off", read_sitemaps=False)
    assert not (FOUND | {"/index.xml"}) & paths
    # 8 URLs in the host's sitemaps (2 sitemaps of the index, 6 pages): 4 taken, whatever the order
    paths, _, counters = await _crawl(tmp_path / "cap", sitemap_urls_per_host=4)
    assert counters["sitemap_urls_over_host_cap"] == 4
    assert len(FOUND & paths) == 2


def test_hints_are_kept_in_columns() -> None:
    frontier, counters = MemoryFrontier(), Counter[str]()
    discovery = Discovery(Settings(), frontier, frontier, BreadthFirstStrategy(), counters)
    assert discovery.enter(["http://a.org/s.xml"], "http://a.org/robots.txt") == 1
    body = (f"<urlset {NS}><url><loc>http://a.org/x</loc><lastmod>1970-01-02T00:00:00Z</lastmod>"
            "<changefreq>weekly</changefreq><priority>0.25</priority></url></urlset>").encode()  # fmt: skip
    xml = "application/xml"
    read = discovery.read(FetchResult("http://a.org/s.xml", "http://a.org/s.xml", 200, body=body, content_type=xml), "http://a.org/s.xml")
    assert read is not None
    assert [link.url for link in read.page.links] == ["http://a.org/x"]
    frontier.add("http://a.org/x", 1.0, depth=1, parent="http://a.org/s.xml", host="a.org")
    discovery.keep_hints(read)
    assert [frontier.value("http://a.org/x", c) for c in (LASTMOD, CHANGEFREQ, PRIORITY)] == [86400.0, 7.0, 0.25]
    # XML from a URL not entered as a sitemap or feed: a source without a key (not a page)
    not_one = discovery.read(FetchResult("http://a.org/y.xml", "http://a.org/y.xml", 200, body=body, content_type=xml), "http://a.org/y.xml")
    assert not_one is not None
    assert not_one.key == ""
    html_page = FetchResult("http://a.org/s.xml", "http://a.org/s.xml", 200, body=body, content_type="text/html")
    assert discovery.read(html_page, "http://a.org/s.xml") is None


def _rss(*items: tuple[str, str]) -> str:
    entries = "".join(f"<item><title>{t}</title><link>{{base}}{u}</link><description>about {t}</description></item>"
                      for t, u in items)  # fmt: skip
    return f'<?xml version="1.0"?><rss version="2.0"><channel><title>News</title>{entries}</channel></rss>'


FEED_ROUTES = {
    "/": html('<link rel="alternate" type="application/rss+xml" href="/feed.xml">'
              '<link rel="alternate" type="application/atom+xml" href="/big.atom">'
              '<link rel="alternate" type="application/rss+xml" href="/broken.rss"><p>home</p>'),
    "/feed.xml": _served(_rss(("Cats", "/f1.html"), ("Dogs", "/f2.html"), ("Cats again", "/f1.html")),
                         "application/rss+xml"),
    "/big.atom": _served('<feed xmlns="http://www.w3.org/2005/Atom"><title>Big</title>'
                         + "".join(f'<entry><title>e{i}</title><link href="{{base}}/big/{i}.html"/></entry>'
                                   for i in range(20_000)) + "</feed>", "application/atom+xml"),
    "/broken.rss": _served(_rss(("Fish", "/f3.html"))[:-40], "text/xml"),
}  # fmt: skip


async def test_feeds_a_page_names_are_read(tmp_path: Path) -> None:
    async with serve(FEED_ROUTES, fallback=html("<p>leaf</p>")) as site:
        await crawl_async(
            tmp_path / "run", [site.url("/")],
            overrides={"crawl": {"max_pages": 12}, "fetch": {"delay": 0, "allow_private": ("127.0.0.1",)}},
        )  # fmt: skip
        paths = set(site.paths())
        origin = site.url("")
    rows = {}
    for line in (tmp_path / "run" / "pages.jsonl").read_text().splitlines():
        row = json.loads(line)
        rows[row["url"].removeprefix(origin)] = (row["parent"] or "").removeprefix(origin), row
    counters = Counter(json.loads((tmp_path / "run" / "run.json").read_text())["summary"]["counters"])
    assert {"/feed.xml", "/big.atom", "/broken.rss", "/f1.html", "/f2.html"} <= paths
    assert rows["/feed.xml"][0] == "/"
    assert (rows["/f1.html"][0], rows["/f2.html"][0]) == ("/feed.xml", "/feed.xml")
    assert (rows["/feed.xml"][1]["feed"], rows["/feed.xml"][1]["out_links"]) == ("rss20", 2)
    assert rows["/big.atom"][1]["feed"] == "atom10"
    assert counters["feeds_found"] == 3
    assert counters["feed_cut"] == 1  # the big feed: read to its first entries
    assert 0 < rows["/big.atom"][1]["out_links"] <= 1000
    assert counters["feed_errors"] == 1  # the broken one: its entries before the fault are kept
    assert rows["/broken.rss"][1]["out_links"] == 1


async def test_feeds_and_sitemaps_keep_to_the_scope_rules(tmp_path: Path) -> None:
    # an experiment's in_archive_only is an allow_regex: a feed a page names outside it
    # (P0's comment web: every blog's /feed/, not archived) was fetched anyway, as a seed
    deny = {"deny_regex": [r"/broken\.rss$", r"/s2\.xml$"]}
    async with serve(FEED_ROUTES, fallback=html("<p>leaf</p>")) as site:
        await crawl_async(
            tmp_path / "feeds", [site.url("/")],
            overrides={"crawl": {"max_pages": 12}, "fetch": {"delay": 0, "allow_private": ("127.0.0.1",)},
                       "scope": deny},
        )  # fmt: skip
        feed_paths = set(site.paths())
    summary = json.loads((tmp_path / "feeds" / "run.json").read_text())["summary"]
    assert {"/feed.xml", "/big.atom"} <= feed_paths  # .xml and .atom are what they are
    assert "/broken.rss" not in feed_paths
    assert (summary["counters"]["feeds_found"], summary["counters"]["link_rejected_denied-regex"]) == (2, 1)
    async with serve(ROUTES, fallback=html("<p>leaf</p>")) as site:
        await crawl_async(
            tmp_path / "sitemaps", [site.url("/")],
            overrides={"crawl": {"max_pages": 100}, "fetch": {"delay": 0, "allow_private": ("127.0.0.1",)},
                       "scope": {**deny, "deny_extensions": ()}},
        )  # fmt: skip
        sitemap_paths = set(site.paths())
    assert {"/index.xml", "/s1.xml.gz"} <= sitemap_paths
    assert "/s2.xml" not in sitemap_paths  # named by the index, out of scope


async def test_feeds_all_out_of_scope_leave_a_cash_strategy_running(tmp_path: Path) -> None:
    # OPIC shares its cash among the entry points it is given: none must not be a crash
    # (the P0 experiment's OPIC+COMMD stopped with ZeroDivisionError on a page whose
    # feeds were all outside in_archive_only)
    async with serve(FEED_ROUTES, fallback=html("<p>leaf</p>")) as site:
        await crawl_async(
            tmp_path / "run", [site.url("/")],
            overrides={"crawl": {"max_pages": 12, "strategy": "opic"}, "fetch": {"delay": 0, "allow_private": ("127.0.0.1",)},
                       "scope": {"deny_regex": [r"\.(rss|atom|xml)$"]}},
        )  # fmt: skip
        paths = set(site.paths())
    summary = json.loads((tmp_path / "run" / "run.json").read_text())["summary"]
    assert "/" in paths
    assert not paths & {"/feed.xml", "/big.atom", "/broken.rss"}
    assert summary["counters"]["link_rejected_denied-regex"] == 3


async def test_a_feed_is_scored_as_a_link_of_its_page(tmp_path: Path) -> None:
    # OPIC without the virtual page: the seed's cash 1 split over its 3 links, the 3
    # feeds: 1/3 each (as seeds, each feed got 1/3 of a new unit of cash, 1 + 1 in all)
    async with serve(FEED_ROUTES, fallback=html("<p>leaf</p>")) as site:
        await crawl_async(
            tmp_path / "run", [site.url("/")],
            overrides={"crawl": {"max_pages": 4, "strategy": "opic",
                                 "strategy_params": {"virtual_page": False}},
                       "fetch": {"delay": 0, "allow_private": ("127.0.0.1",)}},
        )  # fmt: skip
        origin = site.url("")
    rows = [json.loads(line) for line in (tmp_path / "run" / "pages.jsonl").read_text().splitlines()]
    feeds = {row["url"].removeprefix(origin): row for row in rows if row["url"] != origin + "/"}
    assert set(feeds) == {"/feed.xml", "/big.atom", "/broken.rss"}
    assert all(row["score"] == pytest.approx(1 / 3) for row in feeds.values())
    assert all((row["depth"], row["parent"]) == (1, origin + "/") for row in feeds.values())
    assert {row["feed"] for row in feeds.values()} == {"rss20", "atom10"}


@pytest.mark.parametrize("strategy", ["opic", "bfs"])
async def test_a_sitemap_of_robots_txt_gets_no_cash_of_its_own(tmp_path: Path, strategy: str) -> None:
    # OPIC without the virtual page, one seed: the seed's cash 1 goes whole to its one
    # link /x.html (1/1). The sitemap robots.txt names is linked by no page, so it holds
    # no cash (0): as a seed it got a new unit, and the crawl had 2 units of cash.
    # /x.html (cash 1) is taken before it, and its URL /a.html gets 0/1 = 0. A strategy
    # without cash scores it as a seed (BFS: 1, at depth 0).
    routes = {
        "/robots.txt": _served("User-agent: *\nSitemap: {base}/s.xml\n", "text/plain"),
        "/": html('<p>home</p><a href="/x.html">x</a>'),
        "/s.xml": _served(_urlset("/a.html")),
    }
    async with serve(routes, fallback=html("<p>leaf</p>")) as site:
        await crawl_async(
            tmp_path / "run", [site.url("/")],
            overrides={"crawl": {"max_pages": 10, "strategy": strategy, "strategy_params":
                                 {"virtual_page": False} if strategy == "opic" else {}},
                       "fetch": {"delay": 0, "allow_private": ("127.0.0.1",)}, "scope": {"deny_extensions": ()}},
        )  # fmt: skip
        origin = site.url("")
    rows = [json.loads(line) for line in (tmp_path / "run" / "pages.jsonl").read_text().splitlines()]
    order = [row["url"].removeprefix(origin) for row in rows]
    scores = {row["url"].removeprefix(origin): row["score"] for row in rows}
    assert set(order) == {"/", "/x.html", "/s.xml", "/a.html"}
    if strategy == "opic":
        assert scores == pytest.approx({"/": 1.0, "/x.html": 1.0, "/s.xml": 0.0, "/a.html": 0.0})
        assert order.index("/x.html") < order.index("/s.xml")
    else:
        assert scores["/s.xml"] == 1.0


async def test_a_feed_the_body_links_to_as_well_is_read(tmp_path: Path) -> None:
    # a blog names its feed in <head> and links to it from an RSS button: the button's
    # <a> came first, so the feed was an ordinary link, refused for its .xml (a
    # deny_extensions of the defaults) and never read
    routes = {
        "/": html('<link rel="alternate" type="application/rss+xml" href="/feed.xml">'
                  '<p><a href="/feed.xml">RSS</a> <a href="/page.html">a page</a></p>'),
        "/feed.xml": FEED_ROUTES["/feed.xml"],
    }  # fmt: skip
    async with serve(routes, fallback=html("<p>leaf</p>")) as site:
        await crawl_async(
            tmp_path / "run", [site.url("/")],
            overrides={"crawl": {"max_pages": 10}, "fetch": {"delay": 0, "allow_private": ("127.0.0.1",)}},
        )  # fmt: skip
        paths = set(site.paths())
        origin = site.url("")
    rows = {}
    for line in (tmp_path / "run" / "pages.jsonl").read_text().splitlines():
        row = json.loads(line)
        rows[row["url"].removeprefix(origin)] = row
    assert {"/feed.xml", "/f1.html", "/f2.html"} <= paths
    assert (rows["/feed.xml"]["feed"], rows["/feed.xml"]["out_links"]) == ("rss20", 2)
    assert rows["/f1.html"]["parent"] == origin + "/feed.xml"


async def test_the_summarys_pages_are_the_dashboards_sitemaps_and_feeds_aside(tmp_path: Path) -> None:
    # before (c49): the summary's "HTML pages" counted every document parsed, the
    # sitemaps and feeds read for their links too (which are no page of the corpus,
    # judged by no model and left out of eval's rates); the dashboard counted them too
    from focuscrawl.dashboard import RunTail
    from focuscrawl.evaluation.run import RunPages

    await _crawl(tmp_path)
    async with serve(FEED_ROUTES, fallback=html("<p>leaf</p>")) as site:
        await crawl_async(
            tmp_path / "feeds", [site.url("/")],
            overrides={"crawl": {"max_pages": 12}, "fetch": {"delay": 0, "allow_private": ("127.0.0.1",)}},
        )  # fmt: skip
    for run in (tmp_path / "run", tmp_path / "feeds"):
        rows = [json.loads(line) for line in (run / "pages.jsonl").read_text().splitlines()]
        read = [r for r in rows if r.get("sitemap") or r.get("feed")]
        pages = [r for r in rows if r.get("status") == 200 and not r.get("error") and r not in read]
        assert read
        assert pages
        assert all(RunPages.is_page(r) == (r in pages) for r in rows)
        summary = json.loads((run / "run.json").read_text())["summary"]
        assert summary["pages"] == len(pages)
        tail = RunTail(run)
        tail.update()
        assert tail.snapshot()["pages"] == len(pages)


async def test_a_2xx_page_other_than_200_is_a_page_for_the_summary_the_dashboard_and_eval(tmp_path: Path) -> None:
    # before: the crawl judged and counted a 203 (a proxy's "non-authoritative") page as
    # a page, the dashboard, /metrics and eval did not (status == 200 only)
    from focuscrawl.dashboard import RunTail
    from focuscrawl.evaluation.run import RunPages

    routes = {
        "/": html('<a href="/a.html">a</a> <a href="/b.html">b</a> <a href="/gone.html">c</a>'),
        "/a.html": html("<p>a page</p>", status=203),
        "/b.html": html("<p>b page</p>"),
        "/gone.html": html("<p>not here</p>", status=404),
    }
    async with serve(routes) as site:
        await crawl_async(
            tmp_path / "run", [site.url("/")],
            overrides={"crawl": {"max_pages": 10}, "fetch": {"delay": 0, "allow_private": ("127.0.0.1",)}},
        )  # fmt: skip
    rows = [json.loads(line) for line in (tmp_path / "run" / "pages.jsonl").read_text().splitlines()]
    assert sorted(r["status"] for r in rows) == [200, 200, 203, 404]
    assert [RunPages.is_page(r) for r in rows if r["status"] == 203] == [True]
    summary = json.loads((tmp_path / "run" / "run.json").read_text())["summary"]
    assert summary["pages"] == 3  # the crawl's own count: /, a (203) and b
    tail = RunTail(tmp_path / "run")
    tail.update()
    assert tail.snapshot()["pages"] == 3
