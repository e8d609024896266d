"""Issue 26, robustness and security: host names through a proxy are resolved here and
checked against the address policy; report.html escapes what it did not build; the
dashboard answers loopback Host headers only."""

from __future__ import annotations

import asyncio
import collections
from typing import Any

import aiohttp
import pytest

from focuscrawl.evaluation.report import render
from focuscrawl.fetch.addresses import AddressPolicy
from focuscrawl.fetch.aiohttp_transport import AiohttpTransport
from focuscrawl.fetch.fetcher import HttpFetcher
from focuscrawl.settings import FetchSettings
from tests.sites import html, redirect, serve, serve_proxy

# what a hosts file or a wildcard DNS service would answer here
HOSTS_FILE = {
    "intranet.example": ["10.0.0.1"],
    "10.0.0.1.nip.io": ["10.0.0.1"],
    "mixed.example": ["93.184.216.34", "192.168.1.1"],
    "public.example": ["93.184.216.34"],
}


async def _hosts_file(name: str) -> list[str]:
    if name not in HOSTS_FILE:
        raise OSError(f"{name}: Name or service not known")
    return HOSTS_FILE[name]


def _fetcher(proxy: str, counters: collections.Counter[str]) -> HttpFetcher:
    settings = FetchSettings(delay=0.0, retries=0, proxy=proxy)
    policy = AddressPolicy(settings.allow_private, resolve=_hosts_file)
    return HttpFetcher(settings, AiohttpTransport(settings), counters=counters, policy=policy)


@pytest.mark.parametrize(
    "host",
    ["ip6-localhost", "localhost.localdomain", "intranet.example", "10.0.0.1.nip.io", "mixed.example"],
)
async def test_a_name_with_a_private_address_is_not_sent_to_the_proxy(host: str) -> None:
    counters: collections.Counter[str] = collections.Counter()
    async with serve({}) as origin, serve_proxy({host: origin}) as proxy, _fetcher(proxy.url(""), counters) as f:
        result = await f.fetch(f"http://{host}/page")
    assert result.error == "blocked-address"
    assert proxy.hits == []  # not even robots.txt


async def test_names_that_do_not_resolve_here_still_go_to_the_proxy() -> None:
    """The replay server's hosts resolve nowhere but in it (no DNS here), and public
    names pass: both are asked through the proxy, robots.txt first."""
    counters: collections.Counter[str] = collections.Counter()
    routes = {"/page": html("ok")}
    async with (
        serve(routes) as origin,
        serve_proxy({"www.cs.cornell.edu.test": origin, "public.example": origin}) as proxy,
        _fetcher(proxy.url(""), counters) as f,
    ):
        replayed = await f.fetch("http://www.cs.cornell.edu.test/page")
        public = await f.fetch("http://public.example/page")
    assert (replayed.status, public.status) == (200, 200)
    assert [h.target for h in proxy.hits] == [
        "http://www.cs.cornell.edu.test/robots.txt", "http://www.cs.cornell.edu.test/page",
        "http://public.example/robots.txt", "http://public.example/page",
    ]  # fmt: skip


async def test_a_robots_redirect_to_a_private_name_is_not_followed() -> None:
    counters: collections.Counter[str] = collections.Counter()
    routes = {"/robots.txt": redirect("http://intranet.example/robots.txt"), "/page": html("ok")}
    async with (
        serve(routes) as origin,
        serve_proxy({"public.example": origin, "intranet.example": origin}) as proxy,
        _fetcher(proxy.url(""), counters) as f,
    ):
        result = await f.fetch("http://public.example/page")
    assert result.error == "robots"  # the origin pointed where we may not go
    assert [h.target for h in proxy.hits] == ["http://public.example/robots.txt"]


async def test_a_proxy_502_to_robots_txt_is_no_robots_refusal() -> None:
    """Issue 26 item 2: a host the proxy does not know (the replay server answers 502)
    is skipped as "proxy", not blamed on robots.txt."""
    counters: collections.Counter[str] = collections.Counter()
    async with (
        serve({}) as origin,
        serve_proxy({"known.example": origin}) as proxy,
        _fetcher(proxy.url(""), counters) as f,
    ):
        result = await f.fetch("http://unknown.example/")
    assert result.error == "proxy"
    assert counters["proxy"] == 1


X = "<img src=x onerror=alert(1)>"


def test_report_escapes_every_cell() -> None:
    results: dict[str, Any] = {
        "title": X, "notes": X, "repetitions": 1, "budget": 10, "mode": "simulate",
        "summary": {X: {"harvest_rate": {"mean": 0.5, "se": 0.1}}},
        "tests": [{"metric": "harvest_rate", "better": X, "worse": "bfs", "n": 3, "t": 2.0, "p": 0.01,
                   "significant": True}],
        "curves": {X: {"harvest_rate": {"x": [1, 2], "mean": [0.1, 0.2], "se": [0.0, 0.0]}}},
        "runs": [{"topic": X, "label": X, "harvest_rate": 0.5}],
        "topics": [{"name": X, "seeds": 1, "targets": 2}],
        "strategies": [{"label": X, "strategy": "bfs", "model": X, "params": {"a": X}}],
    }  # fmt: skip
    page = render(results)
    assert "<img" not in page
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    assert '<span class="sig">yes</span>' in page  # the report's own markup stays markup


@pytest.mark.parametrize(
    ("host", "ok"),
    [
        pytest.param("127.0.0.1:{port}", True, id="ipv4"),
        pytest.param("localhost:{port}", True, id="localhost"),
        pytest.param("[::1]:{port}", True, id="ipv6"),
        pytest.param("evil.example:{port}", False, id="rebound-name"),
        pytest.param("127.0.0.1.evil.example", False, id="lookalike"),
    ],
)
async def test_the_dashboard_answers_loopback_host_headers_only(host: str, ok: bool, tmp_path: Any) -> None:
    from aiohttp import web

    from focuscrawl.commands.dashboard import build_app, tails_for

    runner = web.AppRunner(build_app(tails_for([tmp_path], None, []), 1.0))
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        async with aiohttp.ClientSession() as session:
            for path in ("/", "/fragment", "/api/runs"):
                headers = {"Host": host.format(port=port)}
                async with session.get(f"http://127.0.0.1:{port}{path}", headers=headers) as resp:
                    assert (resp.status == 200) is ok, (path, resp.status)
                    if not ok:
                        assert resp.status == 421
                        assert "runs" not in await resp.text()
    finally:
        await runner.cleanup()


@pytest.mark.timeout(60)  # a lookup never given up hangs the test: a failure
async def test_where_lookups_hang_names_are_left_to_the_proxy_after_two() -> None:
    """A sandbox whose DNS hangs: two lookups that never answer are given up (at once:
    both were asked before either ended), then no more lookups, so a crawl through the
    replay server is not slowed host by host."""
    asked: list[str] = []

    async def hanging(name: str) -> list[str]:
        asked.append(name)
        await asyncio.Event().wait()  # never set: only giving up ends the lookup
        return ["10.0.0.1"]

    policy = AddressPolicy(resolve=hanging)
    first = await asyncio.gather(policy.name_refused("a.example"), policy.name_refused("b.example"))
    later = await policy.name_refused("c.example")
    assert (first, later) == ([False, False], False)
    assert asked == ["a.example", "b.example"]
