"""Content-Encoding br and zstd (issue 36, item 4): asked for, decoded, and cut at
``fetch.max_body_size`` of the decoded body, so a bomb costs no more than a plain
page (as the gzip one of tests/test_fetch.py)."""

from __future__ import annotations

import zlib
from collections.abc import Callable

import brotli
import pytest
from aiohttp import web
from backports import zstd

from focuscrawl.fetch.aiohttp_fetcher import AiohttpFetcher
from focuscrawl.fetch.transport import accept_encoding
from tests.sites import Handler, serve
from tests.test_fetch import settings

CODINGS: dict[str, Callable[[bytes], bytes]] = {
    "gzip": lambda data: zlib.compress(data, wbits=31),
    "br": lambda data: brotli.compress(data, quality=1),
    "zstd": zstd.compress,
}


def _encoded(coding: str, data: bytes) -> Handler:
    payload = CODINGS[coding](data)

    async def handler(request: web.Request) -> web.StreamResponse:
        return web.Response(body=payload, headers={"Content-Type": "text/html", "Content-Encoding": coding})

    return handler


def test_accept_encoding_names_every_decoder() -> None:
    assert accept_encoding() == "gzip, deflate, br, zstd"


@pytest.mark.parametrize("coding", list(CODINGS))
async def test_encoded_page_is_decoded(coding: str) -> None:
    page = "<html><title>é</title><body>" + "<p>word</p>" * 500 + "</body></html>"
    async with serve({"/": _encoded(coding, page.encode())}) as site, AiohttpFetcher(settings()) as fetcher:
        result = await fetcher.fetch(site.url("/"))
    assert site.hits[-1].headers["Accept-Encoding"] == "gzip, deflate, br, zstd"
    assert (result.status, result.error, result.truncated) == (200, None, False)
    assert result.body == page.encode()


@pytest.mark.parametrize("coding", list(CODINGS))
async def test_bomb_is_cut_after_decoding(coding: str) -> None:
    # 64 MB of zeros in a few hundred bytes (br) or a few KB (zstd, gzip)
    bomb = b"<html><body>" + b"0" * (64 << 20)
    async with (
        serve({"/": _encoded(coding, bomb)}) as site,
        AiohttpFetcher(settings(max_body_size=10_000)) as fetcher,
    ):
        result = await fetcher.fetch(site.url("/"))
    assert (result.status, result.error) == (200, None)
    assert (len(result.body), result.truncated) == (10_000, True)
    assert result.body == bomb[:10_000]


@pytest.mark.parametrize("coding", list(CODINGS))
async def test_a_body_that_is_not_in_its_content_encoding_is_one_failure_not_retried(coding: str) -> None:
    """A body that says ``Content-Encoding: gzip`` (br, zstd) and is not: one failure
    named for what it is (``content-encoding``, a browser's ERR_CONTENT_DECODING_FAILED),
    not a connection reset, and not asked for again (the server would send it again)."""

    async def handler(request: web.Request) -> web.StreamResponse:
        return web.Response(body=b"<html><body>" + b"plain text, not encoded " * 200,
                            headers={"Content-Type": "text/html", "Content-Encoding": coding})  # fmt: skip

    async with serve({"/": handler}) as site, AiohttpFetcher(settings(retries=2)) as fetcher:
        result = await fetcher.fetch(site.url("/"))
    assert result.error == "content-encoding"
    assert [hit.path for hit in site.hits if hit.path == "/"] == ["/"]
