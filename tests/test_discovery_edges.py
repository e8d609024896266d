"""Sitemaps and feeds as the real Web serves them: a sitemap on another host that a
robots.txt names (a CDN's, sitemaps.org "cross submits"), a host's cap across a
resume, a feed that redirects and names its charset only in its Content-Type."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from aiohttp import web

from focuscrawl.api import crawl_async
from focuscrawl.discovery import Discovery
from focuscrawl.frontier.memory import MemoryFrontier
from focuscrawl.settings import Settings
from focuscrawl.strategies.bfs import BreadthFirstStrategy
from focuscrawl.types import FetchResult
from tests.sites import Handler, html, serve

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
FETCH = {"delay": 0, "allow_private": ("127.0.0.1",)}


def _xml(text: str, origins: dict[str, str], content_type: str = "application/xml") -> Handler:
    """``text`` with ``{a}`` and ``{b}`` the origins of the sites A and B (known once both run)."""

    async def handler(request: web.Request) -> web.StreamResponse:
        return web.Response(body=text.format(**origins).encode(), headers={"Content-Type": content_type})

    return handler


def _urlset(*locs: str) -> str:
    return f"<urlset {NS}>" + "".join(f"<url><loc>{loc}</loc></url>" for loc in locs) + "</urlset>"


def _rows(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "pages.jsonl").read_text().splitlines()]


def _counters(run: Path) -> Counter[str]:
    return Counter(json.loads((run / "run.json").read_text())["summary"]["counters"])


async def test_a_sitemap_on_another_host_named_by_robots_txt_lists_its_hosts_urls(tmp_path: Path) -> None:
    """A's robots.txt names a sitemap index on B (a CDN) whose sitemap, on B too, lists
    A's pages: sitemaps.org lets it (the robots.txt vouches for it). Before: every one of
    A's URLs refused (``sitemap_urls_refused`` 3), as if the index spoke for B only."""
    origins: dict[str, str] = {}
    b_routes = {
        "/robots.txt": _xml("User-agent: *\n", origins, "text/plain"),
        "/index.xml": _xml(f"<sitemapindex {NS}><sitemap><loc>{{b}}/a-pages.xml</loc></sitemap></sitemapindex>", origins),
        "/a-pages.xml": _xml(_urlset("{a}/x.html", "{a}/y.html", "{b}/own.html", "http://elsewhere.example/z"), origins),
    }  # fmt: skip
    async with serve(b_routes, fallback=html("<p>b</p>")) as b:
        origins["b"] = b.url("").rstrip("/")
        a_routes = {"/robots.txt": _xml("User-agent: *\nSitemap: {b}/index.xml\n", origins, "text/plain"),
                    "/": html("<p>home, no links</p>")}  # fmt: skip
        async with serve(a_routes, fallback=html("<p>a</p>")) as a:
            origins["a"] = a.url("").rstrip("/")
            await crawl_async(tmp_path / "run", [a.url("/")],
                              overrides={"crawl": {"max_pages": 20}, "fetch": FETCH,
                                         "scope": {"deny_extensions": ()}})  # fmt: skip
            a_paths, b_paths = set(a.paths()), set(b.paths())
    assert {"/x.html", "/y.html"} <= a_paths
    assert {"/index.xml", "/a-pages.xml", "/own.html"} <= b_paths
    parents = {row["url"]: row["parent"] for row in _rows(tmp_path / "run")}
    assert parents[origins["a"] + "/x.html"] == origins["b"] + "/a-pages.xml"
    assert parents[origins["b"] + "/index.xml"] == origins["a"] + "/robots.txt"
    assert _counters(tmp_path / "run")["sitemap_urls_refused"] == 1  # elsewhere.example only


async def test_a_hosts_sitemap_cap_holds_across_a_resume(tmp_path: Path) -> None:
    """Two sitemaps of 6 URLs each, a cap of 8 URLs for the host: the crawl stops after
    the first sitemap and is resumed. Before: the count started again at 0 on resume,
    and the host was given 12 URLs."""
    origins: dict[str, str] = {}
    routes = {
        "/robots.txt": _xml("User-agent: *\nSitemap: {a}/s1.xml\nSitemap: {a}/s2.xml\n", origins, "text/plain"),
        "/": html("<p>home, no links</p>"),
        "/s1.xml": _xml(_urlset(*(f"{{a}}/one/{i}.html" for i in range(6))), origins),
        "/s2.xml": _xml(_urlset(*(f"{{a}}/two/{i}.html" for i in range(6))), origins),
    }  # fmt: skip
    run = tmp_path / "run"
    fetch = {**FETCH, "sitemap_urls_per_host": 8, "concurrency": 1}
    async with serve(routes, fallback=html("<p>leaf</p>")) as site:
        origins["a"] = site.url("").rstrip("/")
        await crawl_async(run, [site.url("/")], overrides={"crawl": {"max_pages": 2}, "fetch": fetch,
                                                           "scope": {"deny_extensions": ()}})  # fmt: skip
        assert [row["url"].removeprefix(origins["a"]) for row in _rows(run)] == ["/", "/s1.xml"]
        await crawl_async(run, [], resume=True, overrides={"crawl": {"max_pages": 100}, "fetch": fetch,
                                                           "scope": {"deny_extensions": ()}})  # fmt: skip
    rows = _rows(run)
    sitemaps = {origins["a"] + "/s1.xml", origins["a"] + "/s2.xml"}
    assert {origins["a"] + "/s2.xml"} <= {row["url"] for row in rows}
    assert sum(row["parent"] in sitemaps for row in rows) == 8
    assert _counters(run)["sitemap_urls_over_host_cap"] == 4


def test_a_feed_is_read_where_it_was_found_in_the_charset_its_type_names() -> None:
    """A feed asked at /feed, redirected to /blog/feed.xml, with relative entry links and
    a windows-1251 body whose charset only its Content-Type names. Before: its links
    resolved against /feed (``/post1.html``, not found on the site) and its titles read
    guessed from too few letters (``Êîò`` for ``Кот``)."""
    frontier, counters = MemoryFrontier(), Counter[str]()
    discovery = Discovery(Settings(), frontier, frontier, BreadthFirstStrategy(), counters)
    body = ('<rss version="2.0"><channel><title>Коты</title>'
            "<item><title>Кот</title><link>post1.html</link></item></channel></rss>").encode("windows-1251")  # fmt: skip
    result = FetchResult("http://h.org/feed", "http://h.org/blog/feed.xml", 200, body=body,
                         content_type="application/rss+xml", redirects=("http://h.org/feed",),
                         headers={"Content-Type": "application/rss+xml; charset=windows-1251"})  # fmt: skip
    read = discovery.read(result, "http://h.org/feed")
    assert read is not None
    assert read.key == "feed"
    assert [(link.url, link.anchor) for link in read.page.links] == [("http://h.org/blog/post1.html", "Кот")]
    assert read.page.title == "Коты"


async def test_a_plain_text_sitemap_served_as_text_plain_is_read(tmp_path: Path) -> None:
    """sitemaps.org's text format (one URL a line), served as text/plain as it is on the
    Web. Before: refused as a content type no page is taken in (``content-type``), its
    URLs never seen. A text file the robots.txt does not name stays refused."""
    origins: dict[str, str] = {}
    routes = {
        "/robots.txt": _xml("User-agent: *\nSitemap: {a}/sitemap.txt\n", origins, "text/plain"),
        "/": html('<a href="/notes.txt">notes</a>'),
        "/sitemap.txt": _xml("{a}/x.html\n{a}/y.html\n", origins, "text/plain"),
        "/notes.txt": _xml("{a}/z.html\n", origins, "text/plain"),
    }
    run = tmp_path / "run"
    async with serve(routes, fallback=html("<p>leaf</p>")) as site:
        origins["a"] = site.url("").rstrip("/")
        await crawl_async(run, [site.url("/")], overrides={"crawl": {"max_pages": 20}, "fetch": FETCH})
        paths = set(site.paths())
    rows = {row["url"].removeprefix(origins["a"]): row for row in _rows(run)}
    assert {"/x.html", "/y.html"} <= paths
    assert "/z.html" not in paths
    assert (rows["/sitemap.txt"]["sitemap"], rows["/sitemap.txt"]["out_links"]) == ("text", 2)
    assert rows["/notes.txt"]["error"] == "content-type"


async def test_a_hosts_sitemap_cap_counts_the_urls_in_the_crawls_scope(tmp_path: Path) -> None:
    """A sitemap of 4 URLs the scope refuses, then 2 it lets in, and a cap of 3 URLs for
    the host. Before: the 3 first, all out of scope, used the cap up, and the crawl took
    none of the host's URLs it could crawl."""
    origins: dict[str, str] = {}
    locs = [*(f"{{a}}/archive/{i}.html" for i in range(4)), "{a}/docs/1.html", "{a}/docs/2.html"]
    routes = {
        "/robots.txt": _xml("User-agent: *\nSitemap: {a}/s.xml\n", origins, "text/plain"),
        "/": html("<p>home, no links</p>"),
        "/s.xml": _xml(_urlset(*locs), origins),
    }
    run = tmp_path / "run"
    async with serve(routes, fallback=html("<p>leaf</p>")) as site:
        origins["a"] = site.url("").rstrip("/")
        await crawl_async(run, [site.url("/")], overrides={
            "crawl": {"max_pages": 20}, "fetch": {**FETCH, "sitemap_urls_per_host": 3},
            "scope": {"deny_extensions": (), "deny_regex": ["/archive/"]}})  # fmt: skip
        paths = set(site.paths())
    assert {"/docs/1.html", "/docs/2.html"} <= paths
    assert not any(path.startswith("/archive/") for path in paths)
    counters = _counters(run)
    assert (counters["sitemap_urls_over_host_cap"], counters["link_rejected_denied-regex"]) == (0, 4)


def test_a_feed_served_as_text_xml_without_a_charset_is_no_fault() -> None:
    """The usual feed: UTF-8 as its XML declaration says, served as text/xml with no
    charset (US-ASCII by RFC 3023; feedparser reads it as UTF-8 and says it did). Before:
    counted in ``feed_errors`` with a warning line, a fault of every such feed."""
    frontier, counters = MemoryFrontier(), Counter[str]()
    discovery = Discovery(Settings(), frontier, frontier, BreadthFirstStrategy(), counters)
    body = ('<?xml version="1.0" encoding="utf-8"?><rss version="2.0"><channel><title>Café</title>'
            "<item><title>Crème</title><link>http://h.org/a</link></item></channel></rss>").encode()  # fmt: skip
    result = FetchResult("http://h.org/feed", "http://h.org/feed", 200, body=body, content_type="text/xml",
                         headers={"Content-Type": "text/xml"})  # fmt: skip
    frontier.add("http://h.org/feed", 1.0, depth=1, parent="http://h.org/", host="h.org")
    discovery.took_feeds(["http://h.org/feed"])
    read = discovery.read(result, "http://h.org/feed")
    assert read is not None
    assert [(link.url, link.anchor) for link in read.page.links] == [("http://h.org/a", "Crème")]
    assert counters["feed_errors"] == 0


async def test_a_url_two_of_a_hosts_sitemaps_list_counts_once_toward_its_cap(tmp_path: Path) -> None:
    """Two sitemaps of one host list the same 4 URLs, the second 2 more, under a cap of 6
    URLs for the host. Before: the second sitemap's 4 URLs the first had given counted
    again, and its 2 new ones were over the cap."""
    origins: dict[str, str] = {}
    shared = [f"{{a}}/docs/{i}.html" for i in range(4)]
    routes = {
        "/robots.txt": _xml("User-agent: *\nSitemap: {a}/s1.xml\nSitemap: {a}/s2.xml\n", origins, "text/plain"),
        "/": html("<p>home, no links</p>"),
        "/s1.xml": _xml(_urlset(*shared), origins),
        "/s2.xml": _xml(_urlset(*shared, "{a}/docs/new1.html", "{a}/docs/new2.html"), origins),
    }
    run = tmp_path / "run"
    async with serve(routes, fallback=html("<p>leaf</p>")) as site:
        origins["a"] = site.url("").rstrip("/")
        await crawl_async(run, [site.url("/")], overrides={
            "crawl": {"max_pages": 20}, "fetch": {**FETCH, "sitemap_urls_per_host": 6},
            "scope": {"deny_extensions": ()}})  # fmt: skip
        paths = set(site.paths())
    assert {f"/docs/{i}.html" for i in range(4)} | {"/docs/new1.html", "/docs/new2.html"} <= paths
    assert _counters(run)["sitemap_urls_over_host_cap"] == 0
