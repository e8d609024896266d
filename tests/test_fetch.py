"""The aiohttp fetcher against small handcrafted sites on 127.0.0.1.

Politeness is checked on the server side (arrival times, handlers running at
once): what the server saw, not how fast the client was.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import ipaddress
import itertools
import socket
import time
from pathlib import Path
from typing import Any

import hypothesis
import pytest
from aiohttp import web
from aiohttp.abc import AbstractResolver, ResolveResult
from hypothesis import strategies as st

from focuscrawl.clock import SystemClock, VirtualClock
from focuscrawl.exceptions import ConfigError
from focuscrawl.fetch.addresses import (
    _LOOSE_IPV4,
    AddressPolicy,
    BlockedAddressError,
    FilteringResolver,
    parse_ip_loose,
)
from focuscrawl.fetch.aiohttp_fetcher import AiohttpFetcher
from focuscrawl.fetch.aiohttp_transport import AiohttpTransport
from focuscrawl.fetch.encoding import decode_html, detect_charset
from focuscrawl.fetch.politeness import HostPoliteness, parse_retry_after
from focuscrawl.fetch.robots import RobotsCache
from focuscrawl.fetch.transport import TransportError
from focuscrawl.replay.tls import LocalCA
from focuscrawl.settings import DEFAULT_USER_AGENT, FetchSettings
from tests.sites import (
    Handler,
    Meter,
    html,
    raw_answer,
    redirect,
    respond,
    sequence,
    serve,
    serve_proxy,
    serve_raw,
    slow,
)

ROBOTS_TYPE = "text/plain"


def settings(**overrides: Any) -> FetchSettings:
    """Fast test settings: no delay, no retries, loopback allowed; timeouts that only
    bound a hang (a test of a timeout sets its own, shorter than its server's hang)."""
    base: dict[str, Any] = {
        "delay": 0.0,
        "retries": 0,
        "retry_backoff": 0.01,
        "connect_timeout": 30.0,
        "read_timeout": 30.0,
        "allow_private": ("127.0.0.1",),
    }
    base.update(overrides)
    return FetchSettings(**base)


def robots(text: str) -> Handler:
    return respond(text, content_type=ROBOTS_TYPE)


class FakeResolver(AbstractResolver):
    """Names -> addresses from a table; unknown names fail like DNS."""

    def __init__(self, table: dict[str, str]) -> None:
        self.table = table
        self.asked: list[str] = []

    async def resolve(
        self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
    ) -> list[ResolveResult]:
        self.asked.append(host)
        if host not in self.table:
            raise OSError(f"cannot resolve {host}")
        return [
            ResolveResult(
                hostname=host,
                host=self.table[host],
                port=port,
                family=socket.AF_INET,
                proto=0,
                flags=0,
            )
        ]

    async def close(self) -> None:
        return None


# --------------------------------------------------------------------------- robots.txt


@pytest.mark.parametrize(
    ("robots_txt", "path", "allowed"),
    [
        ("User-agent: *\nDisallow: /private", "/private/x.html", False),
        ("User-agent: *\nDisallow: /private", "/public.html", True),
        ("User-agent: focuscrawl\nDisallow: /\n\nUser-agent: *\nAllow: /", "/public.html", False),
        ("User-agent: otherbot\nDisallow: /\n", "/public.html", True),
    ],
    ids=["disallowed", "allowed", "our-token-group", "other-bot-group"],
)
async def test_robots_rules_are_applied(robots_txt: str, path: str, allowed: bool) -> None:
    routes = {"/robots.txt": robots(robots_txt), path: html("page")}
    counters: collections.Counter[str] = collections.Counter()
    async with serve(routes) as site, AiohttpFetcher(settings(), counters=counters) as fetcher:
        result = await fetcher.fetch(site.url(path))
    if allowed:
        assert (result.error, result.status) == (None, 200)
        assert site.paths() == ["/robots.txt", path]
    else:
        assert (result.error, result.status) == ("robots", 0)
        assert site.paths() == ["/robots.txt"]  # the page itself was never requested
        assert counters["robots"] == 1


@pytest.mark.parametrize(
    ("status", "allowed"),
    [(404, True), (403, True), (500, False), (503, False)],
    ids=["404-allow-all", "403-allow-all", "500-disallow-all", "503-disallow-all"],
)
async def test_robots_status_decides(status: int, allowed: bool) -> None:
    routes = {"/robots.txt": respond("x", status=status, content_type=ROBOTS_TYPE), "/": html("hi")}
    async with serve(routes) as site, AiohttpFetcher(settings()) as fetcher:
        first = await fetcher.fetch(site.url("/"))
        second = await fetcher.fetch(site.url("/"))
    assert first.error == second.error == (None if allowed else "robots")
    # robots.txt asked once per crawl, whatever the answer
    assert site.paths().count("/robots.txt") == 1
    assert site.paths().count("/") == (2 if allowed else 0)


async def test_robots_fetched_once_under_concurrent_requests() -> None:
    routes: dict[str, Handler] = {"/robots.txt": slow(0.1, robots("User-agent: *\nAllow: /"))}
    routes.update({f"/p{i}": html(f"page {i}") for i in range(10)})
    counters: collections.Counter[str] = collections.Counter()
    async with (
        serve(routes) as site,
        AiohttpFetcher(settings(per_host=4), counters=counters) as fetcher,
    ):
        results = await asyncio.gather(*(fetcher.fetch(site.url(f"/p{i}")) for i in range(10)))
    assert [r.status for r in results] == [200] * 10
    assert site.paths().count("/robots.txt") == 1
    assert counters["robots.txt"] == 1
    assert counters["requests"] == 11


async def test_robots_disabled_sends_no_robots_request() -> None:
    routes = {"/robots.txt": robots("User-agent: *\nDisallow: /"), "/": html("hi")}
    async with serve(routes) as site, AiohttpFetcher(settings(respect_robots=False)) as fetcher:
        result = await fetcher.fetch(site.url("/"))
    assert result.status == 200
    assert site.paths() == ["/"]


async def test_refusal_is_what_fetch_returns_when_it_is_known_without_io() -> None:
    routes = {
        "/robots.txt": robots("User-agent: *\nDisallow: /private\nCrawl-delay: 0.5"),
        "/": html("hi"),
        "/private/a": html("no"),
    }
    counted: collections.Counter[str] = collections.Counter()
    fetched: collections.Counter[str] = collections.Counter()
    async with (
        serve(routes) as site,
        AiohttpFetcher(settings(max_crawl_delay=0.01), counters=counted) as quick,
        AiohttpFetcher(settings(max_crawl_delay=0.01), counters=fetched) as slow_one,
    ):
        private, home = site.url("/private/a"), site.url("/")
        # robots.txt not read yet: only a fetch can say (it downloads it)
        assert quick.refusal(private) is None
        await quick.fetch(home)
        await slow_one.fetch(home)
        for url in (private, site.url("/private/b?x=1#f"), "http://exa mple.org/", "ftp://a.org/"):
            refused = quick.refusal(url)
            expected = await slow_one.fetch(url)
            assert refused is not None, url
            assert (refused.url, refused.final_url, refused.error, refused.status) == (
                expected.url, expected.final_url, expected.error, expected.status,
            )  # fmt: skip
            assert (refused.body, refused.redirects) == (b"", ())
        assert quick.refusal(home) is None  # allowed: a request to make
        # the fetch that follows is the one it would be without the question
        again, expected = await quick.fetch(home), await slow_one.fetch(home)
        assert (again.status, again.final_url, again.body) == (200, home, expected.body)
        assert quick.refusal(site.url("/public")) is None
    assert counted == fetched  # robots 2, bad-url 2, requests 3, robots.txt 1
    assert counted["robots"] == 2
    assert counted["bad-url"] == 2
    # each fetcher read robots.txt and fetched "/" twice: the refusals asked nothing
    assert sorted(site.paths()) == ["/"] * 4 + ["/robots.txt"] * 2


async def test_a_url_let_in_by_refusal_still_has_its_redirects_checked() -> None:
    routes = {
        "/robots.txt": robots("User-agent: *\nDisallow: /private"),
        "/": html("hi"),
        "/moved": redirect("/private/x"),
        "/private/x": html("no"),
    }
    async with serve(routes) as site, AiohttpFetcher(settings()) as fetcher:
        await fetcher.fetch(site.url("/"))
        assert fetcher.refusal(site.url("/moved")) is None
        result = await fetcher.fetch(site.url("/moved"))
    assert (result.error, result.redirects) == ("robots", (site.url("/moved"),))
    assert "/private/x" not in site.paths()


async def test_refusal_with_robots_off_or_a_closed_fetcher_is_none() -> None:
    fetcher = AiohttpFetcher(settings(respect_robots=False))
    assert fetcher.refusal("http://127.0.0.1:9/x") is None  # not open: fetch says why
    async with fetcher:
        assert fetcher.refusal("http://127.0.0.1:9/x") is None
        blocked = fetcher.refusal("http://169.254.169.254/latest")
        assert blocked is not None
        assert blocked.error == "blocked-address"


class QuietClock(VirtualClock):
    """Virtual time that moves on only once every request started has reached the
    server (``arrivals`` of ``counters["requests"]``): what the server stamps with it
    is the time each request was let out, whatever a loaded machine does to real
    arrival times; a fetcher that sent requests closer than its delay shows it exactly."""

    def __init__(self, arrivals: list[float], counters: collections.Counter[str]) -> None:
        super().__init__(100.0)
        self.arrivals, self.counters = arrivals, counters

    async def sleep(self, seconds: float) -> None:
        for _ in range(30_000):  # 30 s at least: only a hang's bound
            if len(self.arrivals) >= self.counters["requests"]:
                break
            await asyncio.sleep(0.001)
        await super().sleep(seconds)


async def test_crawl_delay_spaces_requests_server_side() -> None:
    arrivals: list[float] = []
    counters: collections.Counter[str] = collections.Counter()
    clock = QuietClock(arrivals, counters)

    def stamped(handler: Handler) -> Handler:
        async def arrived(request: web.Request) -> web.StreamResponse:
            arrivals.append(clock.monotonic())
            return await handler(request)

        return arrived

    routes: dict[str, Handler] = {"/robots.txt": stamped(robots("User-agent: *\nCrawl-delay: 0.3"))}
    routes.update({f"/p{i}": stamped(html("x")) for i in range(3)})
    async with (
        serve(routes) as site,
        AiohttpFetcher(settings(per_host=3), counters=counters, clock=clock) as fetcher,
    ):
        results = await asyncio.gather(*(fetcher.fetch(site.url(f"/p{i}")) for i in range(3)))
    assert [r.status for r in results] == [200, 200, 200]
    assert len(arrivals) == counters["requests"] == 4  # robots.txt counts as a request
    gaps = [b - a for a, b in itertools.pairwise(arrivals)]
    assert min(gaps) >= 0.3 - 1e-9, gaps  # three connections open at once: only the delay


async def test_delay_counts_from_when_the_request_reached_the_server() -> None:
    # Issue 9 item 18: the first request waits 0.3 s for its DNS answer after its
    # start was stamped; the second must still arrive a whole delay after it.
    class SlowResolver(FakeResolver):
        async def resolve(
            self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
        ) -> list[ResolveResult]:
            if not self.asked:
                await asyncio.sleep(0.3)
            return await super().resolve(host, port, family)

    resolver = SlowResolver({"slow.test": "127.0.0.1"})
    s = settings(delay=0.5, respect_robots=False, allow_private=("slow.test",))
    async with (
        serve({"/a": html("a"), "/b": html("b")}) as site,
        AiohttpFetcher(s, resolver=resolver) as fetcher,
    ):
        urls = [f"http://slow.test:{site.port}{path}" for path in ("/a", "/b")]
        results = await asyncio.gather(*(fetcher.fetch(u) for u in urls))
    assert [r.status for r in results] == [200, 200]
    first, second = site.times()
    assert second - first >= 0.5 - 0.02  # loopback arrival jitter is far below 20 ms


@pytest.mark.parametrize(
    ("obey", "max_crawl_delay", "expected_interval"),
    [(True, 5.0, 5.0), (True, 100.0, 30.0), (False, 5.0, 0.5)],
    ids=["capped-by-max", "robots-value", "ignored"],
)
async def test_crawl_delay_sets_host_interval(
    obey: bool, max_crawl_delay: float, expected_interval: float
) -> None:
    # Everything disallowed: only robots.txt is requested, so nothing waits for the delay.
    # On a virtual clock no time passes unless someone sleeps: robots.txt starts at 100.
    routes = {"/robots.txt": robots("User-agent: *\nCrawl-delay: 30\nDisallow: /")}
    s = settings(delay=0.5, obey_crawl_delay=obey, max_crawl_delay=max_crawl_delay)
    clock = VirtualClock(100.0)
    async with serve(routes) as site, AiohttpFetcher(s, clock=clock) as fetcher:
        result = await fetcher.fetch(site.url("/"))
        ready = fetcher.host_ready_at(site.host)
    assert result.error == "robots"
    assert site.paths() == ["/robots.txt"]
    # the next start to the host is one interval after robots.txt's
    assert ready == 100.0 + expected_interval


# --------------------------------------------------------------------------- redirects


async def test_redirect_chain_within_limit() -> None:
    routes = {"/a": redirect("/b", 301), "/b": redirect("/c?x=1", 307), "/c?x=1": html("end")}
    async with serve(routes) as site, AiohttpFetcher(settings(max_redirects=2)) as fetcher:
        result = await fetcher.fetch(site.url("/a"))
    assert (result.error, result.status) == (None, 200)
    assert result.url == site.url("/a")
    assert result.final_url == site.url("/c?x=1")
    assert result.redirects == (site.url("/a"), site.url("/b"))
    assert b"end" in result.body
    assert site.paths() == ["/robots.txt", "/a", "/b", "/c?x=1"]


async def test_redirect_chain_over_limit() -> None:
    routes = {"/a": redirect("/b"), "/b": redirect("/c"), "/c": html("end")}
    async with serve(routes) as site, AiohttpFetcher(settings(max_redirects=1)) as fetcher:
        result = await fetcher.fetch(site.url("/a"))
    assert result.error == "too-many-redirects"
    assert result.status == 302
    assert result.final_url == site.url("/b")
    assert "/c" not in site.paths()


async def test_redirect_loop_stops() -> None:
    routes = {"/x": redirect("/y"), "/y": redirect("/x")}
    async with serve(routes) as site, AiohttpFetcher(settings(max_redirects=3)) as fetcher:
        result = await fetcher.fetch(site.url("/x"))
    assert result.error == "too-many-redirects"
    assert site.paths() == ["/robots.txt", "/x", "/y", "/x", "/y"]  # 1 + 3 followed hops


@pytest.mark.parametrize(
    ("target", "error"),
    [("/private/p", "robots"), ("ftp://example.org/file", "bad-url")],
    ids=["hop-disallowed-by-robots", "hop-not-http"],
)
async def test_redirect_hops_are_checked(target: str, error: str) -> None:
    routes = {
        "/robots.txt": robots("User-agent: *\nDisallow: /private"),
        "/go": redirect(target),
        "/private/p": html("secret"),
    }
    async with serve(routes) as site, AiohttpFetcher(settings()) as fetcher:
        result = await fetcher.fetch(site.url("/go"))
    assert result.error == error
    assert "/private/p" not in site.paths()


# --------------------------------------------------------------------------- retries, errors


async def test_429_then_200_honours_retry_after() -> None:
    busy = respond("slow down", status=429, headers={"Retry-After": "1"})
    routes = {"/": sequence([busy, html("fine")])}
    counters: collections.Counter[str] = collections.Counter()
    s = settings(retries=2, retry_backoff=0.01)
    async with serve(routes) as site, AiohttpFetcher(s, counters=counters) as fetcher:
        result = await fetcher.fetch(site.url("/"))
    assert (result.error, result.status) == (None, 200)
    assert counters["retries"] == 1
    first, second = site.times("/")
    # back-off alone would wait 0.01 s: the 1 s gap is Retry-After's
    assert second - first >= 0.95


async def test_503_always_gives_up_after_retries() -> None:
    routes = {"/": respond("down", status=503)}
    counters: collections.Counter[str] = collections.Counter()
    s = settings(retries=2, retry_backoff=0.01)
    async with serve(routes) as site, AiohttpFetcher(s, counters=counters) as fetcher:
        result = await fetcher.fetch(site.url("/"))
    assert (result.error, result.status) == (None, 503)
    assert site.paths().count("/") == 3  # 1 + 2 retries
    assert counters["retries"] == 2


async def hang(request: web.Request) -> web.StreamResponse:
    """Never answer: the client gives up (the server cancels this when it hangs up)."""
    await asyncio.Event().wait()
    raise AssertionError("unreachable")


async def test_read_timeout_is_retried_then_reported() -> None:
    routes = {"/": hang}
    counters: collections.Counter[str] = collections.Counter()
    s = settings(read_timeout=0.2, retries=1, retry_backoff=0.01)
    async with serve(routes) as site, AiohttpFetcher(s, counters=counters) as fetcher:
        result = await fetcher.fetch(site.url("/"))
    assert result.error == "timeout"
    assert site.paths().count("/") == 2
    assert counters["timeout"] == 1
    assert counters["retries"] == 1


async def test_connection_reset_is_retried_then_reported() -> None:
    async def hang_up(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.transport.abort()

    counters: collections.Counter[str] = collections.Counter()
    s = settings(respect_robots=False, retries=1, retry_backoff=0.01)
    async with serve_raw(hang_up) as site, AiohttpFetcher(s, counters=counters) as fetcher:
        result = await fetcher.fetch(site.url("/"))
    assert result.error == "reset"
    assert result.status == 0
    # aiohttp itself may resend an idempotent request once on a dropped connection
    assert (counters["requests"], counters["retries"], counters["reset"]) == (2, 1, 1)
    assert len(site.hits) >= 2


async def test_connection_refused_is_connect_error() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    listener.close()  # nothing listens on this port any more
    s = settings(respect_robots=False)
    async with AiohttpFetcher(s) as fetcher:
        result = await fetcher.fetch(f"http://127.0.0.1:{port}/")
    assert result.error == "connect"


@pytest.mark.parametrize(
    "url", ["ftp://example.org/", "not a url", "http://"], ids=["ftp", "garbage", "no-host"]
)
async def test_bad_url(url: str) -> None:
    counters: collections.Counter[str] = collections.Counter()
    async with AiohttpFetcher(settings(), counters=counters) as fetcher:
        result = await fetcher.fetch(url)
    assert result.error == "bad-url"
    assert counters == {"bad-url": 1}


async def test_fetch_outside_context_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="not open"):
        await AiohttpFetcher(settings()).fetch("http://127.0.0.1/")


# --------------------------------------------------------------------------- bodies and types


@pytest.mark.parametrize(
    ("size", "truncated"),
    [(4095, False), (4096, False), (4097, True), (200_000, True)],
    ids=["under", "exact", "one-over", "far-over"],
)
async def test_body_cut_at_max_size(size: int, truncated: bool) -> None:
    body = b"<html>" + b"a" * (size - 6)
    counters: collections.Counter[str] = collections.Counter()
    async with (
        serve({"/": respond(body)}) as site,
        AiohttpFetcher(settings(max_body_size=4096), counters=counters) as fetcher,
    ):
        result = await fetcher.fetch(site.url("/"))
    assert result.error is None
    assert result.truncated is truncated
    assert result.body == body[:4096]
    assert counters["truncated"] == int(truncated)


async def test_gzip_body_is_limited_after_decompression() -> None:
    async def bomb(request: web.Request) -> web.StreamResponse:
        resp = web.Response(body=b"<html>" + b"0" * 1_000_000, content_type="text/html")
        resp.enable_compression()
        return resp

    async with (
        serve({"/": bomb}) as site,
        AiohttpFetcher(settings(max_body_size=10_000)) as fetcher,
    ):
        result = await fetcher.fetch(site.url("/"))
    assert site.hits[-1].headers["Accept-Encoding"] == "gzip, deflate, br, zstd"
    assert (len(result.body), result.truncated) == (10_000, True)


@pytest.mark.parametrize(
    ("status", "error"), [(200, "content-type"), (404, None)], ids=["ok-filtered", "error-page"]
)
async def test_other_content_type_not_downloaded(status: int, error: str | None) -> None:
    # (PDFs are read since issue 37: parse.pdf; a zip file is not)
    zipped = respond(b"PK\x03\x04" + b"x" * 1000, status=status, content_type="application/zip")
    async with serve({"/doc": zipped}) as site, AiohttpFetcher(settings()) as fetcher:
        result = await fetcher.fetch(site.url("/doc"))
    assert (result.status, result.error) == (status, error)
    assert result.content_type == "application/zip"
    assert result.body == b""


@pytest.mark.parametrize(
    ("body", "content_type", "error"),
    [
        (b"\n<!DOCTYPE html><html><p>hi</p></html>", "text/html", None),
        (b"%PDF-1.4 binary", "", "content-type"),
    ],
    ids=["html-sniffed", "pdf-refused"],
)
async def test_missing_content_type_is_sniffed(
    body: bytes, content_type: str, error: str | None
) -> None:
    s = settings(respect_robots=False)
    async with serve_raw(raw_answer("HTTP/1.1 200 OK", body)) as site, AiohttpFetcher(s) as fetcher:
        result = await fetcher.fetch(site.url("/"))
    assert "Content-Type" not in result.headers
    assert (result.status, result.error, result.content_type) == (200, error, content_type)
    assert result.body == (body if error is None else b"")


# (Content-Type header, body, expected charset, expected decoded text)
CHARSET_CASES = [
    ("text/html; charset=EUC-KR", "<p>한국어</p>".encode("euc-kr"), "euc-kr", "한국어"),
    (
        "text/html",
        b'<meta http-equiv="Content-Type" content="text/html; charset=Shift_JIS">'
        + "日本語".encode("shift_jis"),
        "shift_jis",
        "日本語",
    ),
    ("text/html; charset=iso-8859-1", b"\xef\xbb\xbf<p>caf\xc3\xa9</p>", "utf-8", "café"),
    ("text/html", b'<meta charset="windows-1251"><p>\xcf\xf0\xe8\xe2\xe5\xf2', "cp1251", "Привет"),
    ("text/html; charset=utf-8", b"<p>caf\xe9 cr\xe8me</p>", "cp1252", "café crème"),
    (
        "text/html; charset=x-bogus",
        b'<meta charset="gb2312">' + "中文".encode("gb2312"),
        "gb18030",
        "中文",
    ),
    ("text/html; charset=us-ascii", b"<p>\x93quote\x94</p>", "cp1252", "“quote”"),
    ("text/html", "<p>ünïcödé</p>".encode(), "utf-8", "ünïcödé"),
    (
        "application/xhtml+xml",
        b'<?xml version="1.0" encoding="ISO-8859-2"?><p>\xb1',
        "iso8859-2",
        "ą",
    ),
]
CHARSET_IDS = [
    "euc-kr-header",
    "shift-jis-http-equiv",
    "bom-beats-header",
    "meta-charset",
    "wrong-utf8-header",
    "unknown-header-label",
    "us-ascii-is-cp1252",
    "valid-utf8",
    "xml-declaration",
]


@pytest.mark.parametrize(("header", "body", "charset", "text"), CHARSET_CASES, ids=CHARSET_IDS)
def test_detect_charset(header: str, body: bytes, charset: str, text: str) -> None:
    assert detect_charset(header, body) == charset
    assert text in decode_html(body, charset)


@pytest.mark.parametrize(
    ("header", "body", "charset", "text"), CHARSET_CASES[:5], ids=CHARSET_IDS[:5]
)
async def test_fetch_fills_charset(header: str, body: bytes, charset: str, text: str) -> None:
    async with (
        serve({"/": respond(body, content_type=header)}) as site,
        AiohttpFetcher(settings()) as fetcher,
    ):
        result = await fetcher.fetch(site.url("/"))
    assert result.charset == charset
    assert text in decode_html(result.body, result.charset)


# --------------------------------------------------------------------------- addresses, proxy


async def test_loopback_literal_blocked_without_allow() -> None:
    counters: collections.Counter[str] = collections.Counter()
    async with (
        serve({"/": html("x")}) as site,
        AiohttpFetcher(settings(allow_private=()), counters=counters) as fetcher,
    ):
        result = await fetcher.fetch(site.url("/"))
    assert result.error == "blocked-address"
    assert site.hits == []  # not even robots.txt
    assert counters["blocked-address"] == 1


@pytest.mark.parametrize(
    ("allow", "error"),
    [((), "blocked-address"), (("127.0.0.0/8",), None), (("site.test",), None), (("*",), None)],
    ids=["blocked", "network-allowed", "host-allowed", "everything-allowed"],
)
async def test_resolved_address_filtered(allow: tuple[str, ...], error: str | None) -> None:
    resolver = FakeResolver({"site.test": "127.0.0.1"})
    async with (
        serve({"/": html("x")}) as site,
        AiohttpFetcher(settings(allow_private=allow), resolver=resolver) as fetcher,
    ):
        result = await fetcher.fetch(f"http://site.test:{site.port}/")
    assert result.error == error
    assert "site.test" in resolver.asked
    assert len(site.hits) == (0 if error else 2)


async def test_unresolvable_host_is_dns_error() -> None:
    resolver = FakeResolver({})
    async with AiohttpFetcher(settings(), resolver=resolver) as fetcher:
        result = await fetcher.fetch("http://nowhere.test/")
    assert result.error == "dns"


async def test_filtering_resolver_keeps_only_allowed_addresses() -> None:
    class Mixed(FakeResolver):
        async def resolve(
            self, host: str, port: int = 0, family: socket.AddressFamily = socket.AF_INET
        ) -> list[ResolveResult]:
            return [
                ResolveResult(
                    hostname=host, host=ip, port=port, family=socket.AF_INET, proto=0, flags=0
                )
                for ip in ("10.0.0.7", "93.184.216.34", "169.254.1.1")
            ]

    filtered = FilteringResolver(Mixed({}), AddressPolicy())
    assert [r["host"] for r in await filtered.resolve("mixed.test", 80)] == ["93.184.216.34"]
    only_private = FilteringResolver(FakeResolver({"in.test": "192.168.1.1"}), AddressPolicy())
    with pytest.raises(BlockedAddressError):
        await only_private.resolve("in.test", 80)


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("8.8.8.8", True),
        ("127.0.0.1", False),
        ("10.0.0.1", False),
        ("172.16.5.4", False),
        ("192.168.0.1", False),
        ("169.254.169.254", False),
        ("100.64.0.1", False),
        ("0.0.0.0", False),
        ("224.0.0.251", False),
        ("::1", False),
        ("fe80::1", False),
        ("fc00::1", False),
        ("::ffff:10.0.0.1", False),
        ("2001:4860:4860::8888", True),
    ],
)
def test_address_policy_defaults(address: str, public: bool) -> None:
    assert AddressPolicy().allows_ip(ipaddress.ip_address(address)) is public


@hypothesis.given(st.text(alphabet="0123456789abcdefxX.:[]%lLoOcCtThH-", max_size=24))
@hypothesis.settings(max_examples=400, deadline=None)
@hypothesis.example("[1.2.3.4]")
@hypothesis.example("[::1]")
@hypothesis.example("0x7f.1")
@hypothesis.example("cafe.org")
def test_loose_ip_parse_answers_names_early_as_the_full_parse(host: str) -> None:
    """``parse_ip_loose`` answers None for a name without trying the address parsers;
    on hosts made of the characters of names and of addresses in every form it gives
    what the full parse (strict, then loose IPv4) gives."""
    try:
        full: object = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        full = None
        if _LOOSE_IPV4.fullmatch(host.lower()):
            with contextlib.suppress(OSError, ValueError):
                full = ipaddress.IPv4Address(socket.inet_aton(host.lower().rstrip(".")))
    assert parse_ip_loose(host) == full


def test_address_policy_rejects_bad_entry() -> None:
    with pytest.raises(ConfigError, match="allow_private"):
        AddressPolicy(("10.0.0.0/99",))


async def test_proxy_forwards_absolute_form_without_local_resolution() -> None:
    routes = {"/robots.txt": robots("User-agent: *\nDisallow: /no"), "/page": html("via proxy")}
    resolver = FakeResolver({})  # would fail on any local lookup of example.test
    async with (
        serve(routes) as origin,
        serve_proxy({"example.test": origin}) as proxy,
        AiohttpFetcher(settings(proxy=proxy.url("")), resolver=resolver) as fetcher,
    ):
        page = await fetcher.fetch("http://example.test/page")
        refused = await fetcher.fetch("http://example.test/no")
    assert (page.error, page.status) == (None, 200)
    assert b"via proxy" in page.body
    assert refused.error == "robots"  # robots.txt came through the proxy too
    assert [h.target for h in proxy.hits] == [
        "http://example.test/robots.txt",
        "http://example.test/page",
    ]
    assert {h.headers["Host"] for h in origin.hits} == {"example.test"}
    assert resolver.asked == []


async def test_proxy_connections_carry_requests_for_many_hosts() -> None:
    """Plain-HTTP targets share the connections to the proxy: six hosts fetched one after
    the other (robots.txt included, 12 requests) reach the proxy on one connection, where
    aiohttp's pool (keyed by the target host) opened one per host."""
    meter = Meter()
    names = [f"h{i}.test" for i in range(6)]
    async with contextlib.AsyncExitStack() as stack:
        origins = {
            name: await stack.enter_async_context(serve({"/page": html(name)}, meter=meter))
            for name in names
        }
        proxy = await stack.enter_async_context(serve_proxy(origins))
        fetcher = await stack.enter_async_context(
            AiohttpFetcher(settings(proxy=proxy.url(""), concurrency=4))
        )
        pages = [await fetcher.fetch(f"http://{name}/page") for name in names]
    assert [(p.error, p.status) for p in pages] == [(None, 200)] * 6
    assert [name.encode() in p.body for name, p in zip(names, pages, strict=True)] == [True] * 6
    assert len(proxy.hits) == 12
    assert len({hit.peer for hit in proxy.hits}) == 1


@pytest.mark.parametrize("per_host", [1, 2], ids=["one", "two"])
async def test_per_host_limit_holds_through_a_proxy(per_host: int) -> None:
    """With the proxy's connections shared, the per-host limit is the politeness layer's
    alone: six slow pages of one host, fetched at once, meet at most ``per_host`` at a
    time at the origin, while another host is fetched beside them."""
    meter, other_meter = Meter(), Meter()
    routes: dict[str, Handler] = {f"/p{i}": met(meter, per_host) for i in range(6)}
    other_routes: dict[str, Handler] = {f"/p{i}": met(other_meter, per_host) for i in range(6)}
    async with (
        serve(routes, meter=meter) as one,
        serve(other_routes, meter=other_meter) as other,
        serve_proxy({"one.test": one, "other.test": other}) as proxy,
        AiohttpFetcher(settings(proxy=proxy.url(""), per_host=per_host, concurrency=8)) as fetcher,
    ):
        urls = [f"http://one.test/p{i}" for i in range(6)]
        urls += [f"http://other.test/p{i}" for i in range(6)]
        results = await asyncio.gather(*(fetcher.fetch(u) for u in urls))
    assert [r.status for r in results] == [200] * 12
    assert meter.peak == per_host
    assert other.meter.peak == per_host


@pytest.mark.parametrize("trusted", [True, False], ids=["ca-trusted", "ca-unknown"])
async def test_https_with_extra_ca(tmp_path: Path, trusted: bool) -> None:
    ca = LocalCA(tmp_path)
    server_context = ca.context_for("127.0.0.1")
    s = settings(tls_ca_file=str(ca.cert_path) if trusted else None, respect_robots=False)
    async with (
        serve({"/": html("secure")}, ssl_context=server_context) as site,
        AiohttpFetcher(s) as fetcher,
    ):
        result = await fetcher.fetch(site.url("/"))
    assert site.url("/").startswith("https://")
    if trusted:
        assert (result.error, result.status) == (None, 200)
        assert b"secure" in result.body
    else:
        assert (result.error, result.status) == ("ssl", 0)


def test_missing_ca_file_is_config_error(tmp_path: Path) -> None:
    fetcher = AiohttpFetcher(settings(), ssl_ca_file=str(tmp_path / "nope.pem"))
    with pytest.raises(ConfigError, match="CA file"):
        asyncio.run(fetcher.__aenter__())


async def test_proxy_on_loopback_needs_no_allow_and_opens_nothing_else() -> None:
    # The proxy's own address is allowed; a target on that same address is not.
    routes = {"/page": html("via proxy")}
    async with (
        serve(routes) as origin,
        serve_proxy({"example.test": origin}) as proxy,
        AiohttpFetcher(settings(proxy=proxy.url(""), allow_private=())) as fetcher,
    ):
        page = await fetcher.fetch("http://example.test/page")
        direct = await fetcher.fetch(origin.url("/page"))
        by_name = await fetcher.fetch(f"http://localhost:{origin.port}/page")
    assert (page.error, page.status) == (None, 200)
    assert (direct.error, by_name.error) == ("blocked-address", "blocked-address")
    assert [h.target for h in proxy.hits] == [
        "http://example.test/robots.txt",
        "http://example.test/page",
    ]


@pytest.mark.parametrize(
    "target",
    [
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1/",
        "http://127.0.0.2/",
        "http://[::1]/",
        "http://192.168.0.1/",
        "http://0.0.0.0/",
        "http://127.2/",
        "http://2130706434/",
        "http://0x7f.0.0.2/",
        "http://[::ffff:10.0.0.1]/",
    ],
)
async def test_proxy_does_not_carry_refused_targets(target: str) -> None:
    # Issue 9 item 2: the policy applies to the target URL, proxy or not. The
    # proxy's own address is allowed the way the CLI used to allow it.
    counters: collections.Counter[str] = collections.Counter()
    async with (
        serve({}) as origin,
        serve_proxy({"example.test": origin}) as proxy,
        AiohttpFetcher(
            settings(proxy=proxy.url(""), allow_private=("127.0.0.1",)), counters=counters
        ) as fetcher,
    ):
        result = await fetcher.fetch(target)
    assert result.error == "blocked-address"
    assert proxy.hits == []  # not even robots.txt was asked through the proxy
    assert counters == {"blocked-address": 1}


def test_proxy_url_must_be_http() -> None:
    with pytest.raises(ConfigError, match=r"fetch\.proxy"):
        AiohttpFetcher(settings(proxy="socks5://127.0.0.1:1080"))


# --------------------------------------------------------------------------- robots redirects


async def test_robots_redirect_to_refused_literal_is_not_followed() -> None:
    # Issue 9 item 1: the site is allowed by name; its robots.txt redirects to an
    # IP literal the policy refuses (here 127.0.0.1, standing for 169.254.169.254).
    async with serve({"/robots.txt": robots("User-agent: *\nAllow: /")}) as trap:
        routes = {"/robots.txt": redirect(trap.url("/robots.txt")), "/": html("page")}
        resolver = FakeResolver({"site.test": "127.0.0.1"})
        s = settings(allow_private=("site.test",))
        async with (
            serve(routes) as site,
            AiohttpFetcher(s, resolver=resolver) as fetcher,
        ):
            result = await fetcher.fetch(f"http://site.test:{site.port}/")
    assert trap.hits == []
    # the origin answered robots.txt with a place we may not go: nothing is allowed
    assert (result.error, result.status) == ("robots", 0)
    assert site.paths() == ["/robots.txt"]


async def test_robots_redirect_to_metadata_address_is_refused() -> None:
    routes = {"/robots.txt": redirect("http://169.254.169.254/latest/meta-data/"), "/": html("x")}
    counters: collections.Counter[str] = collections.Counter()
    async with serve(routes) as site, AiohttpFetcher(settings(), counters=counters) as fetcher:
        result = await fetcher.fetch(site.url("/"))
    assert result.error == "robots"
    assert counters["requests"] == 1  # the origin's robots.txt, nothing else


async def test_robots_redirects_followed_by_hand_with_robots_checks() -> None:
    routes = {
        "/robots.txt": redirect("/r1", 301),
        "/r1": redirect("/real-robots.txt", 302),
        "/real-robots.txt": robots("User-agent: *\nDisallow: /private"),
        "/private/p": html("secret"),
        "/open": html("open"),
    }
    async with serve(routes) as site, AiohttpFetcher(settings()) as fetcher:
        refused = await fetcher.fetch(site.url("/private/p"))
        allowed = await fetcher.fetch(site.url("/open"))
    assert (refused.error, allowed.error, allowed.status) == ("robots", None, 200)
    assert site.paths() == ["/robots.txt", "/r1", "/real-robots.txt", "/open"]


async def test_robots_redirect_loop_means_unavailable() -> None:
    # RFC 9309 2.3.1.2: after five redirects robots.txt may be taken as unavailable
    routes: dict[str, Handler] = {"/robots.txt": redirect("/r0")}
    routes.update({f"/r{i}": redirect(f"/r{i + 1}") for i in range(10)})
    routes["/page"] = html("ok")
    async with serve(routes) as site, AiohttpFetcher(settings()) as fetcher:
        result = await fetcher.fetch(site.url("/page"))
    assert (result.error, result.status) == (None, 200)
    assert site.paths() == ["/robots.txt", "/r0", "/r1", "/r2", "/r3", "/r4", "/page"]


# --------------------------------------------------------------------------- fetch deadline


def trickle(pause: float) -> Any:
    """A raw answer whose body never ends: one byte every ``pause`` seconds."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\n"
        )
        for _ in range(2000):  # the client hangs up long before this ends
            if writer.is_closing():
                return
            writer.write(b"a")
            try:
                await writer.drain()
            except ConnectionError:
                return
            await asyncio.sleep(pause)

    return answer


@pytest.mark.parametrize("retries", [0, 2], ids=["no-retries", "retries-not-spent"])
async def test_trickling_body_ends_at_fetch_deadline(retries: int) -> None:
    # Issue 9 item 4: each byte arrives well within read_timeout, so only a
    # total deadline per fetch can end this; a deadline that is over is not retried.
    counters: collections.Counter[str] = collections.Counter()
    s = settings(respect_robots=False, read_timeout=30.0, fetch_timeout=0.5, retries=retries)
    async with serve_raw(trickle(0.05)) as site, AiohttpFetcher(s, counters=counters) as fetcher:
        result = await asyncio.wait_for(fetcher.fetch(site.url("/")), 20)
    assert (result.error, result.status) == ("timeout", 200)
    assert counters["retries"] == 0
    assert len(site.hits) == 1


# --------------------------------------------------------------------------- headers, results


async def test_user_agent_and_recorded_request_headers() -> None:
    routes = {"/": html("x")}
    clock = VirtualClock(epoch=1_700_000_000.0)  # stamps from the fetcher's clock
    async with serve(routes) as site, AiohttpFetcher(settings(), clock=clock) as fetcher:
        result = await fetcher.fetch(site.url("/"))
    assert [h.headers.get("User-Agent") for h in site.hits] == [DEFAULT_USER_AGENT] * 2
    assert result.request_headers["User-Agent"] == DEFAULT_USER_AGENT
    assert result.request_headers["Host"] == site.host
    assert (result.http_version, result.reason) == ("1.1", "OK")
    assert result.headers["Content-Type"] == "text/html; charset=utf-8"
    assert result.fetched_at == 1_700_000_000.0
    assert result.elapsed == 0.0  # no virtual time passed (the back-off test counts some)
    assert result.ok


async def test_custom_user_agent_token_used_for_robots() -> None:
    routes = {"/robots.txt": robots("User-agent: mybot\nDisallow: /\n"), "/": html("x")}
    async with (
        serve(routes) as site,
        AiohttpFetcher(settings(user_agent="MyBot/2.0 (+mailto:a@b.c)")) as fetcher,
    ):
        result = await fetcher.fetch(site.url("/"))
    assert site.hits[0].headers["User-Agent"] == "MyBot/2.0 (+mailto:a@b.c)"
    assert result.error == "robots"


# --------------------------------------------------------------------------- concurrency


def met(meter: Meter, size: int) -> Handler:
    """A page answered 0.05 s after ``size`` requests first ran at once on ``meter``'s
    servers: an event the fetcher's limit allows, not a time the requests must overlap
    in (a fetcher that never sends ``size`` at once fails after 30 s); a request beyond
    the limit would still meet the slow answers of the others."""

    async def handler(request: web.Request) -> web.StreamResponse:
        for _ in range(6000):
            if meter.peak >= size:
                break
            await asyncio.sleep(0.005)
        return await slow(0.05, html("x"))(request)

    return handler


@pytest.mark.parametrize("per_host", [1, 2], ids=["one", "two"])
async def test_per_host_connections_server_side(per_host: int) -> None:
    meter = Meter()
    routes: dict[str, Handler] = {f"/p{i}": met(meter, per_host) for i in range(6)}
    async with (
        serve(routes, meter=meter) as site,
        AiohttpFetcher(settings(per_host=per_host)) as fetcher,
    ):
        results = await asyncio.gather(*(fetcher.fetch(site.url(f"/p{i}")) for i in range(6)))
    assert [r.status for r in results] == [200] * 6
    assert site.meter.peak == per_host


async def test_global_concurrency_across_hosts() -> None:
    # On a virtual clock no request becomes a straggler that gives its global slot back
    # (a real one would, should a loaded machine hold an answer for a second)
    meter = Meter()
    routes: dict[str, Handler] = {f"/p{i}": met(meter, 2) for i in range(3)}
    async with (
        serve(routes, meter=meter) as a,
        serve(routes, meter=meter) as b,
        serve(routes, meter=meter) as c,
        serve(routes, meter=meter) as d,
        AiohttpFetcher(settings(concurrency=2, per_host=2), clock=VirtualClock()) as fetcher,
    ):
        urls = [site.url(f"/p{i}") for site in (a, b, c, d) for i in range(3)]
        results = await asyncio.gather(*(fetcher.fetch(u) for u in urls))
    assert [r.status for r in results] == [200] * 12
    assert meter.peak == 2


async def test_a_straggler_gives_its_global_slot_back() -> None:
    # Issue 24: a hung request (here: one answered only when the test says so) holds its
    # own host, never the crawl; after a straggler's time (at least 1 s) the request on
    # another host gets the only global slot while the hung one is still under way.
    arrived, release = asyncio.Event(), asyncio.Event()
    order: list[str] = []

    async def hung(request: web.Request) -> web.StreamResponse:
        arrived.set()
        await release.wait()
        order.append("hung answered")
        return await html("late")(request)

    async with (
        serve({"/": hung}) as a,
        serve({"/": html("b")}) as b,
        AiohttpFetcher(settings(concurrency=1, respect_robots=False)) as fetcher,
    ):
        stuck = asyncio.create_task(fetcher.fetch(a.url("/")))
        await arrived.wait()
        assert fetcher.stragglers() == 0
        other = await asyncio.wait_for(fetcher.fetch(b.url("/")), 20)
        order.append("other host fetched")
        assert fetcher.stragglers() == 1
        assert fetcher.host_busy(a.host)  # its host's slot is kept: politeness is unchanged
        release.set()
        late = await stuck
    assert (other.status, late.status) == (200, 200)
    assert order == ["other host fetched", "hung answered"]
    assert fetcher.stragglers() == 0


async def test_host_busy_and_ready_at() -> None:
    arrived, release = asyncio.Event(), asyncio.Event()

    async def wait_for_test(request: web.Request) -> web.StreamResponse:
        arrived.set()
        await release.wait()
        return await html("x")(request)

    routes = {"/": wait_for_test}
    clock = VirtualClock(start=100.0)  # moves only when told: the delay is counted exactly
    async with (
        serve(routes) as site,
        AiohttpFetcher(settings(delay=5.0, respect_robots=False), clock=clock) as fetcher,
    ):
        assert (fetcher.host_busy(site.host), fetcher.host_ready_at(site.host)) == (False, 0.0)
        task = asyncio.create_task(fetcher.fetch(site.url("/")))
        await arrived.wait()
        assert fetcher.host_busy(site.host)
        release.set()
        assert (await task).status == 200
        assert not fetcher.host_busy(site.host)
        assert fetcher.host_ready_at(site.host) == 105.0  # the start at 100 + the delay
        clock.advance(4.0)
        assert fetcher.host_ready_at(site.host) == 105.0
        clock.advance(1.0)
        assert fetcher.host_ready_at(site.host) == 0.0  # the delay has passed: ready now


# --------------------------------------------------------------------------- units


async def test_politeness_retry_after_defers_host() -> None:
    clock = VirtualClock(start=10.0)
    polite = HostPoliteness(concurrency=1, per_host=1, delay=0.0, clock=clock)
    polite.defer("h", 30.0)
    assert polite.host_ready_at("h") == 40.0
    assert polite.host_ready_at("other") == 0.0
    clock.advance(30.0)
    assert polite.host_ready_at("h") == 0.0


async def test_virtual_clock_politeness_spaces_starts_without_sleeping() -> None:
    clock = VirtualClock(epoch=1_000.0)
    polite = HostPoliteness(concurrency=4, per_host=1, delay=2.0, clock=clock)
    starts: list[tuple[str, float]] = []

    async def request(host: str) -> None:
        async with polite.slot(host):
            starts.append((host, clock.monotonic()))

    await asyncio.gather(*(request(h) for h in ("a", "a", "b", "a")))
    # a: 0, 2, 4 (2 s apart); b is another host and starts at once, at the
    # virtual time reached so far (time only moves forward)
    assert [t for h, t in starts if h == "a"] == [0.0, 2.0, 4.0]
    assert [h for h, _ in starts].count("b") == 1
    polite.defer("a", 30.0)  # Retry-After: 30 s after the last start at 4
    assert polite.host_ready_at("a") == 34.0
    assert clock.time() == 1_004.0


async def test_virtual_clock_retry_back_off_is_virtual() -> None:
    busy = respond("slow down", status=503, headers={"Retry-After": "40"})
    routes = {"/": sequence([busy, html("fine")])}
    clock = VirtualClock()
    s = settings(retries=1, respect_robots=False)
    async with serve(routes) as site, AiohttpFetcher(s, clock=clock) as fetcher:
        result = await fetcher.fetch(site.url("/"))
    assert (result.error, result.status) == (None, 200)
    assert clock.monotonic() == 40.0  # waited 40 virtual seconds, not real ones
    assert result.elapsed == 40.0
    first, second = site.times("/")
    assert second - first < 30.0


async def test_system_clock_sleeps_for_real() -> None:
    # A real sleep lets the event loop's earlier timers fire first (a virtual one would
    # return at once); and the clock reads the system's clocks.
    clock = SystemClock()
    loop = asyncio.get_running_loop()
    fired: list[str] = []
    loop.call_later(0.01, fired.append, "timer")
    await clock.sleep(0.03)
    fired.append("woke")
    assert fired == ["timer", "woke"]
    mono, wall = clock.monotonic(), clock.time()
    assert mono <= time.monotonic()  # the system's clocks, read again later
    assert wall <= time.time()


async def test_robots_cache_lru_and_single_download() -> None:
    asked: list[str] = []

    async def download(url: str) -> tuple[int, bytes, str | None]:
        asked.append(url)
        await asyncio.sleep(0.01)
        return 200, b"User-agent: *\nDisallow: /x", None

    cache = RobotsCache(download, size=2)
    rules = await asyncio.gather(*(cache.rules_for("http://a.test/p") for _ in range(5)))
    assert all(
        r.allowed("http://a.test/y", "bot") and not r.allowed("http://a.test/x", "bot")
        for r in rules
    )
    await cache.rules_for("http://b.test/")
    await cache.rules_for("http://c.test/")  # evicts a.test
    await cache.rules_for("http://a.test/again")
    assert asked == [
        "http://a.test/robots.txt",
        "http://b.test/robots.txt",
        "http://c.test/robots.txt",
        "http://a.test/robots.txt",
    ]
    assert len(cache) == 2


async def test_robots_cache_survives_cancelled_download() -> None:
    started = asyncio.Event()
    calls = 0

    async def download(url: str) -> tuple[int, bytes, str | None]:
        nonlocal calls
        calls += 1
        if calls == 1:
            started.set()
            await asyncio.sleep(10)
        return 404, b"", None

    cache = RobotsCache(download)
    first = asyncio.create_task(cache.rules_for("http://a.test/"))
    await started.wait()
    waiter = asyncio.create_task(cache.rules_for("http://a.test/"))
    await asyncio.sleep(0)
    first.cancel()
    assert (await waiter).allow_all
    assert calls == 2


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("0", 0.0), ("7", 7.0), ("86400", 60.0), ("", None), ("later", None)],
    ids=["zero", "seconds", "capped", "empty", "garbage"],
)
def test_parse_retry_after(value: str, seconds: float | None) -> None:
    assert parse_retry_after(value) == seconds


async def test_robots_cache_size_bounds_the_origins_kept() -> None:
    # Three origins (three ports), room for two: the first is asked again.
    counters: collections.Counter[str] = collections.Counter()
    async with (
        serve({"/": html("a")}) as a,
        serve({"/": html("b")}) as b,
        serve({"/": html("c")}) as c,
        AiohttpFetcher(settings(robots_cache_size=2), counters=counters) as fetcher,
    ):
        for site in (a, b, c, a, c):
            assert (await fetcher.fetch(site.url("/"))).status == 200
    assert (a.paths(), b.paths(), c.paths()) == (
        ["/robots.txt", "/", "/robots.txt", "/"],
        ["/robots.txt", "/"],
        ["/robots.txt", "/", "/"],
    )
    assert counters["robots.txt"] == 4


async def test_connect_and_read_timeouts_reach_the_session() -> None:
    transport = AiohttpTransport(settings(connect_timeout=3.5, read_timeout=7.0))
    async with transport:
        assert transport._session is not None
        timeout = transport._session.timeout
        assert (timeout.total, timeout.sock_connect, timeout.sock_read) == (None, 3.5, 7.0)


async def test_a_value_error_is_a_bad_url_only_before_the_answer() -> None:
    # yarl's ValueErrors (a port out of range) are the URL's: never fetched, "bad-url";
    # one raised once the answer is in hand, while it is read, is not the URL's: before
    # (b47) it was "bad-url" too, and the page was recorded as never fetched
    statuses: list[int] = []

    async def read(transport: AiohttpTransport, url: str) -> None:
        async with transport.request(url, {}) as answer:
            statuses.append(answer.status)
            raise ValueError("a value read from the answer")

    async with serve({"/": html("x")}) as site, AiohttpTransport(settings()) as transport:
        with pytest.raises(TransportError) as caught:
            await read(transport, "http://127.0.0.1:99999/")
        assert caught.value.code == "bad-url"
        with pytest.raises(TransportError) as caught:
            await read(transport, site.url("/"))
        assert caught.value.code == "protocol"
    assert statuses == [200]


async def test_credentials_in_a_url_are_never_sent() -> None:
    # before (b47): aiohttp sent a URL's user:pass@ as Basic auth to the host it named,
    # a seed's or a redirect's alike
    async def to_b(request: web.Request) -> web.StreamResponse:
        return web.Response(status=302, headers={"Location": f"http://u:p@{request.host}/b"})

    async with serve({"/a": to_b, "/b": html("x")}) as site, AiohttpFetcher(settings()) as fetcher:
        result = await fetcher.fetch(site.url("/a").replace("http://", "http://s:t@"))
    assert result.error is None
    assert result.final_url == site.url("/b")
    assert [h.path for h in site.hits if h.path != "/robots.txt"] == ["/a", "/b"]
    assert [h.headers.get("Authorization") for h in site.hits] == [None] * len(site.hits)
