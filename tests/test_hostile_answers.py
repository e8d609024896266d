"""Answers a hostile or broken server gives, through the fetcher and a crawl on 127.0.0.1.

Each one is one failure of its URL, named for what the server did (or a page kept
as it came), and the crawl goes on: never a crash, never a wrong cause.
"""

from __future__ import annotations

import asyncio
import collections
import json
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from warcio.archiveiterator import ArchiveIterator

from focuscrawl.api import crawl_async
from focuscrawl.fetch.aiohttp_fetcher import AiohttpFetcher
from focuscrawl.settings import FetchSettings
from tests.sites import Hit, html, redirect, serve, serve_raw

RawHandler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def _busy(status: int, retry_after: bytes) -> RawHandler:
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(
            b"HTTP/1.1 %d Busy\r\nRetry-After: %s\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            % (status, retry_after)
        )
        await writer.drain()

    return answer


@pytest.mark.parametrize(
    ("status", "retry_after"),
    [
        pytest.param(503, "²".encode(), id="superscript-digit"),
        pytest.param(429, b"Thu, 01 Jan 99999999999 00:00:00 GMT", id="date-past-year-9999"),
    ],
)
async def test_a_retry_after_that_is_no_number_is_ignored_not_a_failure(
    status: int, retry_after: bytes
) -> None:
    # RFC 9110 section 10.2.3: delay-seconds are ASCII digits; anything else is no
    # Retry-After at all, and the answer is the server's status, retried as any other
    counters: collections.Counter[str] = collections.Counter()
    s = FetchSettings(
        delay=0.0, retries=1, retry_backoff=0.01, respect_robots=False, allow_private=("127.0.0.1",)
    )
    async with (
        serve_raw(_busy(status, retry_after)) as site,
        AiohttpFetcher(s, counters=counters) as fetcher,
    ):
        result = await fetcher.fetch(site.url("/"))
    assert (result.error, result.status) == (None, status)
    assert len(site.hits) == 2  # asked again once, as retries=1 says
    assert counters["retries"] == 1


def _pages(heads: dict[str, bytes], hits: list[Hit]) -> RawHandler:
    """A raw server of a few pages: path -> status line and headers (no Content-Length),
    each with a small HTML body; ``/`` links to every other path. ``hits``: the site's
    (serve_raw records a request just before it calls this: the last is this one's)."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        path = hits[-1].path
        if path == "/":
            head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html"
            body = "".join(f'<a href="{p}">{p}</a>' for p in heads).encode()
        else:
            head = heads.get(path, b"HTTP/1.1 404 Not Found\r\nContent-Type: text/html")
            body = b"<p>page " + path.encode() + b"</p>"
        writer.write(
            head + b"\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(body) + body
        )
        await writer.drain()

    return answer


def _warc_responses(run: Path) -> dict[str, list[tuple[str, str]]]:
    with open(run / "corpus.warc.gz", "rb") as fh:
        return {
            r.rec_headers.get_header("WARC-Target-URI"): r.http_headers.headers
            for r in ArchiveIterator(fh)
            if r.rec_type == "response"
        }


async def test_a_header_that_is_not_utf8_is_archived_as_its_bytes_and_the_crawl_goes_on(
    tmp_path: Path,
) -> None:
    # a header value of bytes that are no UTF-8 (Latin-1 from an old server, or
    # garbage) stopped the crawl with a UnicodeEncodeError from the WARC writer
    heads = {
        "/latin1": b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=\xff\r\nX-Name: caf\xe9",
        "/after": b"HTTP/1.1 200 OK\r\nContent-Type: text/html",
    }
    hits: list[Hit] = []
    async with serve_raw(_pages(heads, hits)) as site:
        site.hits = hits
        await crawl_async(
            tmp_path / "run",
            [site.url("/")],
            overrides={
                "fetch": {"delay": 0, "respect_robots": False, "allow_private": ("127.0.0.1",)}
            },
        )
        latin1, after = site.url("/latin1"), site.url("/after")
    rows = [
        json.loads(line) for line in (tmp_path / "run" / "pages.jsonl").read_text().splitlines()
    ]
    assert {row["url"]: row["status"] for row in rows} == {
        site.url("/"): 200,
        latin1: 200,
        after: 200,
    }
    headers = dict(_warc_responses(tmp_path / "run")[latin1])
    # the bytes past ASCII %-encoded as they came; the rest (the type's ';') readable
    assert headers["X-Name"] == "caf%E9"
    assert headers["Content-Type"] == "text/html; charset=%FF"


async def test_a_redirect_to_a_path_in_latin1_is_followed_as_browsers_follow_it(
    tmp_path: Path,
) -> None:
    # 'Location: /caf\xe9' (Latin-1, as old servers send it): browsers ask for
    # /caf%E9; the crawler called the redirect a bad URL and skipped it as never fetched
    heads = {
        "/old": b"HTTP/1.1 301 Moved Permanently\r\nLocation: /caf\xe9",
        "/caf%E9": b"HTTP/1.1 200 OK\r\nContent-Type: text/html",
    }
    hits: list[Hit] = []
    async with serve_raw(_pages(heads, hits)) as site:
        site.hits = hits
        await crawl_async(
            tmp_path / "run",
            [site.url("/old")],
            overrides={
                "fetch": {"delay": 0, "respect_robots": False, "allow_private": ("127.0.0.1",)}
            },
        )
    assert [hit.path for hit in hits] == ["/old", "/caf%E9"]
    (row,) = [
        json.loads(line) for line in (tmp_path / "run" / "pages.jsonl").read_text().splitlines()
    ]
    assert (row["status"], row["error"], row["final_url"]) == (200, None, site.url("/caf%E9"))


async def test_a_redirect_out_of_the_crawls_scope_is_not_followed(tmp_path: Path) -> None:
    # the scope held for links but not for a redirect's target: a page of the crawl's
    # host redirecting to a denied path, or to a host not allowed, was fetched and kept
    async with serve({"/": html("<p>elsewhere</p>")}) as other:
        routes = {
            "/": html('<a href="/go-away">a</a> <a href="/go-denied">b</a> <a href="/stay">c</a>'),
            "/go-away": redirect(other.url("/")),
            "/go-denied": redirect("/deny/page"),
            "/stay": redirect("/kept"),
            "/kept": html("<p>kept</p>"),
        }
        async with serve(routes) as site:
            await crawl_async(
                tmp_path / "run",
                [site.url("/")],
                overrides={
                    "fetch": {"delay": 0, "respect_robots": False, "allow_private": ("127.0.0.1",)},
                    "scope": {"allow_regex": (f"^{site.url('/')}",), "deny_regex": ("/deny/",)},
                },
            )
    assert other.paths() == []
    assert sorted(site.paths()) == ["/", "/go-away", "/go-denied", "/kept", "/stay"]
    rows = {
        json.loads(line)["url"]: json.loads(line)
        for line in (tmp_path / "run" / "pages.jsonl").read_text().splitlines()
    }
    for path in ("/go-away", "/go-denied"):  # the redirect's answer, its target not asked
        row = rows[site.url(path)]
        assert (row["status"], row["error"], row.get("final_url")) == (302, "redirect-out-of-scope", None)
    assert (rows[site.url("/stay")]["status"], rows[site.url("/stay")]["final_url"]) == (
        200,
        site.url("/kept"),
    )


async def test_a_page_cut_at_its_100000th_tag_says_so(tmp_path: Path) -> None:
    # the parser reads a page to its first 100,000 tags (parse.guard.MAX_TAGS); the
    # links and text past that were dropped without a word (a body cut at
    # fetch.max_body_size is marked "truncated", this one was not)
    routes = {
        "/": html('<a href="/big">big</a> <a href="/small">small</a>'),
        "/big": html(
            '<a href="/early">early</a>' + "<i>x</i>" * 50_000 + '<a href="/late">late</a>'
        ),
        "/small": html("<i>x</i>" * 1_000),
    }
    async with serve(routes) as site:
        stats = await crawl_async(
            tmp_path / "run",
            [site.url("/")],
            overrides={
                "fetch": {"delay": 0, "respect_robots": False, "allow_private": ("127.0.0.1",)}
            },
        )
    rows = {
        json.loads(line)["url"]: json.loads(line)
        for line in (tmp_path / "run" / "pages.jsonl").read_text().splitlines()
    }
    assert rows[site.url("/big")].get("markup_cut") is True
    assert "markup_cut" not in rows[site.url("/small")]
    assert stats.counters["markup_cut"] == 1
    assert site.url("/early") in rows
    assert site.url("/late") not in rows  # (past the cut: unread, as the guard says)
