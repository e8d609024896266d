"""A redirect never takes a crawl where its links may not go: each hop's target goes
through the crawl's scope (allow/deny hosts and regexes, same-site), as Heritrix and
StormCrawler put a redirect's target through the scope as a new link. Before, the
fetcher checked each hop's address and robots.txt only, so a page redirecting out of
the scope was fetched, recorded and followed."""

from __future__ import annotations

import json
from pathlib import Path

from focuscrawl.api import crawl_async
from tests.sites import html, redirect, serve


async def test_a_redirect_out_of_the_scope_is_not_followed(tmp_path: Path) -> None:
    async with serve({}, fallback=html("<p>elsewhere</p>")) as other:
        routes = {
            "/": html('<a href="/out">o</a> <a href="/deny">d</a> <a href="/in">i</a>'),
            "/out": redirect(other.url("/landed").replace("127.0.0.1", "localhost")),
            "/deny": redirect("/private/landed"),
            "/in": redirect("/public/landed"),
            "/private/landed": html("<p>private</p>"),
            "/public/landed": html("<p>public</p>"),
        }
        async with serve(routes, fallback=html("<p>leaf</p>")) as site:
            stats = await crawl_async(tmp_path / "run", [site.url("/")], overrides={
                "crawl": {"max_pages": 20},
                "scope": {"allow_hosts": ("127.0.0.1",), "deny_regex": ("/private/",)},
                "fetch": {"delay": 0, "allow_private": ("127.0.0.1", "localhost")}})  # fmt: skip
            paths = site.paths()
        assert other.paths() == []  # not even its robots.txt
    rows = {r["url"]: r for r in map(json.loads, (tmp_path / "run" / "pages.jsonl").read_text().splitlines())}
    assert "/private/landed" not in paths
    for path in ("/out", "/deny"):
        row = rows[site.url(path)]
        assert (row["status"], row["error"], row.get("final_url")) == (302, "redirect-out-of-scope", None)
    assert rows[site.url("/in")]["final_url"] == site.url("/public/landed")
    assert stats.counters["error_redirect-out-of-scope"] == 2


async def test_a_seeds_redirect_goes_where_it_leads(tmp_path: Path) -> None:
    """The user named the seed: its redirect is followed out of the scope's rules (as
    Heritrix's seedsRedirectNewSeeds), its page recorded."""
    async with serve({"/": redirect("/private/start")}, fallback=html("<p>start</p>")) as site:
        await crawl_async(tmp_path / "run", [site.url("/")], overrides={
            "crawl": {"max_pages": 5}, "scope": {"deny_regex": ("/private/",)},
            "fetch": {"delay": 0, "allow_private": ("127.0.0.1",)}})  # fmt: skip
    row = json.loads((tmp_path / "run" / "pages.jsonl").read_text().splitlines()[0])
    assert (row["status"], row["final_url"]) == (200, site.url("/private/start"))
