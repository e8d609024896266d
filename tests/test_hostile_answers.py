"""Answers a hostile or broken server gives, through the fetcher and a crawl on 127.0.0.1.

Each one is one failure of its URL, named for what the server did (or a page kept
as it came), and the crawl goes on: never a crash, never a wrong cause.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Awaitable, Callable

import pytest

from focuscrawl.fetch.aiohttp_fetcher import AiohttpFetcher
from focuscrawl.settings import FetchSettings
from tests.sites import serve_raw

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
