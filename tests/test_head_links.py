"""A page's <link> elements (issue 36, item 2): rel=canonical recorded, hreflang
alternates and feeds as links annotated with their language or "feed"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from focuscrawl.api import crawl_async
from focuscrawl.parse.html import parse_html
from tests.sites import html, serve

HEAD = ('<html><head><link rel="canonical" href="/main.html"><link rel="canonical" href="/second.html">'
        '<link rel="alternate" hreflang="de-AT" href="/de.html"><link rel="alternate" hreflang="x-default" href="/">'
        '<link rel="alternate" type="application/atom+xml" title="Site  news" href="/feed">'
        '<link rel="alternate" type="text/html" href="/print.html"><link rel="stylesheet" href="/s.css">'
        '<link rel="alternate" hreflang="fr" href="/body-link.html"></head>'
        '<body><a href="/body-link.html">linked</a></body></html>')  # fmt: skip


@pytest.mark.parametrize("links_only", [False, True], ids=["full", "links-only"])
def test_canonical_hreflang_and_feeds(links_only: bool) -> None:
    page = parse_html("http://h.org/x.html", HEAD, links_only=links_only)
    assert page.canonical == "http://h.org/main.html"  # the first
    assert [(k.url, k.hreflang) for k in page.links] == [
        ("http://h.org/body-link.html", ""),  # linked in the body already: kept as it is
        ("http://h.org/de.html", "de-at"),
        ("http://h.org/", "x-default"),
        ("http://h.org/feed", "feed"),
    ]
    assert page.links[-1].anchor == "Site news"


async def test_canonical_is_recorded_and_alternates_followed(tmp_path: Path) -> None:
    routes = {
        "/": html('<a href="/copy.html">copy</a>'),
        "/copy.html": html('<link rel="canonical" href="/original.html"><link rel="alternate" hreflang="de" href="/de.html">'),
    }  # fmt: skip
    async with serve(routes, fallback=html("<p>leaf</p>")) as site:
        await crawl_async(tmp_path / "run", [site.url("/")], overrides={
            "crawl": {"max_pages": 20}, "fetch": {"delay": 0, "allow_private": ("127.0.0.1",)}})  # fmt: skip
        paths = site.paths()
    rows = {json.loads(line)["url"]: json.loads(line) for line in (tmp_path / "run" / "pages.jsonl").read_text().splitlines()}
    assert rows[site.url("/copy.html")]["canonical"] == site.url("/original.html")
    assert "canonical" not in rows[site.url("/")]
    assert "/de.html" in paths
