"""A page's rel="canonical" URL is the document just fetched (issue 36, item 2): not
fetched again unless ``fetch.skip_fetched_canonical`` is off, and counted."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from focuscrawl.api import crawl_async
from tests.sites import html, serve


@pytest.mark.parametrize("skip", [True, False], ids=["skipped", "fetched"])
async def test_a_canonical_url_is_not_fetched_again(tmp_path: Path, skip: bool) -> None:
    routes = {
        "/": html('<a href="/copy.html">copy</a>'),
        "/copy.html": html('<link rel="canonical" href="/original.html"><a href="/original.html">o</a>'
                           '<a href="/other.html">x</a>'),
        "/other.html": html('<a href="/original.html">o</a>'),
    }  # fmt: skip
    async with serve(routes, fallback=html("<p>leaf</p>")) as site:
        stats = await crawl_async(tmp_path / "run", [site.url("/")], overrides={
            "crawl": {"max_pages": 20},
            "fetch": {"delay": 0, "allow_private": ("127.0.0.1",), "skip_fetched_canonical": skip}})  # fmt: skip
        paths = site.paths()
    urls = [json.loads(line)["url"] for line in (tmp_path / "run" / "pages.jsonl").read_text().splitlines()]
    assert site.url("/other.html") in urls
    assert (site.url("/original.html") in urls) is not skip
    assert ("/original.html" in paths) is not skip
    assert stats.counters["canonical_not_fetched"] == int(skip)
