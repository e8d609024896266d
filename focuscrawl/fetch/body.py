"""Reading an answer's body: up to the cap of what is kept, and a sitemap past it.

The fetcher keeps at most ``fetch.max_body_size`` bytes of a body (after decoding:
a compression bomb is cut like any other body). A sitemap is read on as it arrives
by a :class:`~focuscrawl.parse.sitemaps.StreamedSitemap`, up to the sitemaps.org
limit of 50 MB uncompressed, the bytes past the cap read and dropped: never held whole.
"""

from __future__ import annotations

from focuscrawl.fetch.transport import Answer
from focuscrawl.parse.sitemaps import StreamedSitemap

__all__ = ["CHUNK", "download", "read_upto"]

CHUNK = 64 * 1024  # bytes asked of the transport at a time


async def read_upto(answer: Answer, size: int) -> bytes:
    """Up to ``size`` bytes of the body (fewer only at its end)."""
    data = b""
    while len(data) < size:
        chunk = await answer.body.read(size - len(data))
        if not chunk:
            break
        data += chunk
    return data


async def download(answer: Answer, head: bytes, limit: int, stream: StreamedSitemap | None) -> tuple[bytes, bool]:
    """(the body kept, whether it was cut at ``limit``; 0: no cap), ``head`` its first
    bytes read already; ``stream`` is fed the whole body as it arrives (and closed at
    its end) until it has read what it will read."""
    reading = stream is not None and (stream.feed(head) if head else True)
    body = bytearray(head)
    ended = False
    while not limit or len(body) <= limit or reading:
        chunk = await answer.body.read(CHUNK)
        if not chunk:
            ended = True
            break
        if not limit or len(body) <= limit:
            body += chunk
        if reading:
            assert stream is not None
            reading = stream.feed(chunk)
    if stream is not None and ended:
        stream.close()
    cut = bool(limit) and len(body) > limit
    if cut:
        del body[limit:]
        if not ended:
            answer.body.abandon()
    return bytes(body), cut
