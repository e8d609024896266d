"""Peak RSS of fetching a 1 GB compression bomb (br or zstd, a few hundred KB on
the wire) with the default 5 MB cut: the body is cut after decoding, so the bomb
costs what a 5 MB page does.

    python benchmarks/bench_bombs.py br|zstd|gzip
"""

from __future__ import annotations

import asyncio
import resource
import sys
import zlib

import brotli
from aiohttp import web
from backports import zstd

from focuscrawl.fetch.aiohttp_fetcher import AiohttpFetcher
from focuscrawl.settings import FetchSettings
from tests.sites import serve


def _bomb(coding: str, megabytes: int = 1024) -> bytes:
    """``<html><body>`` and ``megabytes`` MB of zeros, compressed a MB at a time."""
    chunk = b"0" * (1 << 20)
    if coding == "br":
        br = brotli.Compressor(quality=1)
        parts = [br.process(b"<html><body>")] + [br.process(chunk) for _ in range(megabytes)]
        return b"".join([*parts, br.finish()])
    if coding == "zstd":
        zs = zstd.ZstdCompressor()
        parts = [zs.compress(b"<html><body>")] + [zs.compress(chunk) for _ in range(megabytes)]
        return b"".join([*parts, zs.flush()])
    gz = zlib.compressobj(wbits=31)
    parts = [gz.compress(b"<html><body>")] + [gz.compress(chunk) for _ in range(megabytes)]
    return b"".join([*parts, gz.flush()])


async def main(coding: str) -> None:
    payload = _bomb(coding)

    async def handler(request: web.Request) -> web.StreamResponse:
        return web.Response(body=payload, headers={"Content-Type": "text/html", "Content-Encoding": coding})

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    settings = FetchSettings(delay=0, allow_private=("127.0.0.1",))
    async with serve({"/": handler}) as site, AiohttpFetcher(settings) as fetcher:
        result = await fetcher.fetch(site.url("/"))
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(f"{coding}: 1 GB in {len(payload):,} bytes; body {len(result.body):,} bytes, truncated "
          f"{result.truncated}; peak RSS {before} MB before, {after} MB after")  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else "br"))
