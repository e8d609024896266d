"""The transport interface: one HTTP exchange, below all the fetch logic.

A :class:`Transport` sends one GET (no redirects followed, no retries, no
policy) and hands back an :class:`Answer` whose body is read in pieces; it
reports every failure as a :class:`TransportError` carrying the short error
code of :class:`~focuscrawl.types.FetchResult`. Address policy, robots.txt,
redirects, retries, content types, the size cut and charsets live above it in
:class:`~focuscrawl.fetch.fetcher.HttpFetcher`, shared by the live transport
(sockets) and the archive transport (a simulation), so both behave alike.
"""

from __future__ import annotations

import math
import re
import sys
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from contextvars import ContextVar
from dataclasses import dataclass, field
from importlib.util import find_spec
from typing import Protocol

from focuscrawl.output.warc_records import raw_bytes_quoted

__all__ = [
    "SEND_GATE",
    "Answer",
    "Body",
    "BytesBody",
    "Deadline",
    "Transport",
    "TransportError",
    "accept_encoding",
    "flat_headers",
    "gateway_error",
]

#: Awaited by a network transport once it holds the connection a request goes out on,
#: just before the request is written (None: nothing to wait for); it raises
#: :class:`TransportError` if the request must not go out. A check made before the
#: transport is asked holds only until then: the request may wait for a connection
#: meanwhile (a shared worker stopped there would send it once continued, on a host
#: that is another worker's by then: :class:`~focuscrawl.workers.handover.LeasedTransport`).
SEND_GATE: ContextVar[Callable[[], Awaitable[None]] | None] = ContextVar(
    "focuscrawl_send_gate", default=None
)


def accept_encoding() -> str:
    """The ``Accept-Encoding`` of every request: the codings aiohttp decodes here,
    gzip and deflate always, br and zstd once their decoders are installed (both are
    dependencies: Brotli, and backports.zstd before Python 3.14, which aiohttp reads
    from 3.13.1 on). The size cut applies to the decoded body (fetch.max_body_size)."""
    codings = ["gzip", "deflate"]
    if find_spec("brotli") is not None or find_spec("brotlicffi") is not None:
        codings.append("br")
    zstd = "compression" if sys.version_info >= (3, 14) else "backports"
    if find_spec(zstd) is not None and find_spec(f"{zstd}.zstd") is not None:
        codings.append("zstd")
    return ", ".join(codings)


def gateway_error(headers: Iterable[tuple[str, str]] | Mapping[str, str]) -> str:
    """The error a gateway's 502 means: ``"dns"`` when its ``Proxy-Status`` (RFC 9209)
    says ``error=dns_error`` (the replay web and ``simulate`` for a host the archive does
    not hold), else ``"proxy"`` (a proxy that could not reach the host, for a reason it
    does not name).

    >>> gateway_error({"Proxy-Status": 'focuscrawl-replay; error=dns_error; details="x"'})
    'dns'
    >>> gateway_error([("content-type", "text/plain")])
    'proxy'
    """
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    for name, value in pairs:
        if name.lower() == "proxy-status" and re.search(r";\s*error\s*=\s*dns_error\b", value):
            return "dns"
    return "proxy"


class TransportError(Exception):
    """One exchange failed; ``code`` is the FetchResult error code (``"timeout"``...)."""

    def __init__(self, code: str, detail: str = "") -> None:
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code = code


class Body(Protocol):
    """The body of an answer, read in pieces (a stream: bytes not asked for are never read)."""

    async def read(self, size: int) -> bytes:
        """Up to ``size`` bytes (at least one unless the body has ended: then b"")."""
        ...

    def abandon(self) -> None:
        """The rest will not be read (a live connection is closed, not reused)."""
        ...


class BytesBody:
    """A body already in memory.

    >>> import asyncio
    >>> body = BytesBody(b"abcde")
    >>> asyncio.run(body.read(2)), asyncio.run(body.read(10)), asyncio.run(body.read(1))
    (b'ab', b'cde', b'')
    """

    def __init__(self, data: bytes) -> None:
        self._data = memoryview(data)
        self._pos = 0

    async def read(self, size: int) -> bytes:
        chunk = bytes(self._data[self._pos : self._pos + max(0, size)])
        self._pos += len(chunk)
        return chunk

    def abandon(self) -> None:
        self._pos = len(self._data)


@dataclass(slots=True)
class Answer:
    """Status line and headers of one response (as received), and its body."""

    status: int
    reason: str
    body: Body
    headers: Sequence[tuple[str, str]] = ()  # in order, repeated names repeated
    http_version: str = "1.1"
    request_headers: Mapping[str, str] = field(default_factory=dict)  # as sent

    def header(self, name: str) -> str | None:
        """The first value of a header (names are case-insensitive)."""
        low = name.lower()
        for key, value in self.headers:
            if key.lower() == low:
                return value
        return None

    def location(self) -> str | None:
        """The Location header, the bytes of it that are no UTF-8 (a Latin-1 path from an
        old server, which aiohttp hands over as surrogate escapes) %-encoded as they came,
        as browsers follow them; the URL parser refuses surrogates."""
        value = self.header("Location")
        return None if value is None else raw_bytes_quoted(value, _URL_PRINTABLE)


_URL_PRINTABLE = "".join(map(chr, range(0x21, 0x7F)))  # left as they are by Answer.location


class Deadline:
    """Network time left to one fetch (``fetch_timeout``): politeness waits and
    back-off sleeps are not counted, every exchange (hops, retries) is."""

    def __init__(self, seconds: float) -> None:
        self.left: float | None = seconds if seconds > 0 and math.isfinite(seconds) else None

    def spend(self, seconds: float) -> None:
        if self.left is not None:
            self.left -= max(0.0, seconds)

    @property
    def over(self) -> bool:
        return self.left is not None and self.left <= 0


class Transport(Protocol):
    """One GET exchange at a time; an async context manager around its resources."""

    async def __aenter__(self) -> Transport: ...

    async def __aexit__(self, *exc: object) -> None: ...

    def request(
        self,
        url: str,
        headers: Mapping[str, str],
        *,
        proxy: str | None = None,
        time_limit: float | None = None,
    ) -> AbstractAsyncContextManager[Answer]:
        """GET ``url`` with ``headers``; the answer is valid inside the ``async with``.

        ``time_limit`` (seconds) bounds the whole exchange, body reading inside the block
        included. Raises :class:`TransportError` on entry or from the block.
        """
        ...


def flat_headers(headers: Sequence[tuple[str, str]] | Mapping[str, str]) -> dict[str, str]:
    """Multi-valued headers joined with ", " (first spelling of the name kept).

    >>> flat_headers([("Vary", "a"), ("vary", "b"), ("X", "1")])
    {'Vary': 'a, b', 'X': '1'}
    """
    items = headers.items() if isinstance(headers, Mapping) else headers
    out: dict[str, str] = {}
    lower: dict[str, str] = {}
    for name, value in items:
        key = lower.setdefault(name.lower(), name)
        out[key] = f"{out[key]}, {value}" if key in out else value
    return out
