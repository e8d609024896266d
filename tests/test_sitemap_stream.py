"""A sitemap larger than the body cap (issue 36, item 2): read whole as it arrives,
up to the sitemaps.org limit, not cut at ``fetch.max_body_size``; the archive keeps the
capped body as for any page."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

import pytest
from aiohttp import web

from focuscrawl.api import crawl_async
from tests.sites import Handler, html, serve

N = 300  # URLs of the big sitemap: ~18 KB, over the 4 KB cap of the test


def _big(compressed: bool) -> Handler:
    async def handler(request: web.Request) -> web.StreamResponse:
        base = f"http://{request.host}"
        text = ('<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">'
                + "".join(f"<url><loc>{base}/p/{i}.html</loc></url>" for i in range(N)) + "</urlset>")  # fmt: skip
        body = gzip.compress(text.encode()) if compressed else text.encode()
        return web.Response(body=body, headers={"Content-Type": "application/x-gzip" if compressed else "application/xml"})

    return handler


@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gzip"])
async def test_a_sitemap_over_the_body_cap_is_read_whole(tmp_path: Path, compressed: bool) -> None:
    name = "/big.xml.gz" if compressed else "/big.xml"
    async def robots(request: web.Request) -> web.StreamResponse:
        return web.Response(text=f"User-agent: *\nSitemap: http://{request.host}{name}\n", content_type="text/plain")

    routes = {"/robots.txt": robots, "/": html("<p>home</p>"), name: _big(compressed)}
    async with serve(routes, fallback=html("<p>leaf</p>")) as site:
        await crawl_async(tmp_path / "run", [site.url("/")], overrides={
            "crawl": {"max_pages": 3}, "scope": {"deny_extensions": ()},
            "fetch": {"delay": 0, "allow_private": ("127.0.0.1",), "max_body_size": 4096}})  # fmt: skip
        origin = site.url("")
    rows = {json.loads(line)["url"].removeprefix(origin): json.loads(line)
            for line in (tmp_path / "run" / "pages.jsonl").read_text().splitlines()}  # fmt: skip
    assert rows[name]["sitemap"] == "urlset"
    assert rows[name]["out_links"] == N  # every URL, though the body kept is cut at 4 KB
    assert rows[name]["size"] <= 4096
    counters = Counter(json.loads((tmp_path / "run" / "run.json").read_text())["summary"]["counters"])
    assert counters["sitemap_cut_body_size"] == 0
    assert counters["sitemap_errors"] == 0
