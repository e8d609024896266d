"""The live fetcher: :class:`HttpFetcher` over :class:`AiohttpTransport` (sockets).

Kept as one name for the common case; :func:`focuscrawl.fetch.factory.build_fetcher`
is where a crawl gets its fetcher (live or simulated).
"""

from __future__ import annotations

import collections

from aiohttp.abc import AbstractResolver

from focuscrawl.clock import Clock
from focuscrawl.fetch.aiohttp_transport import AiohttpTransport, error_code
from focuscrawl.fetch.fetcher import HttpFetcher
from focuscrawl.settings import FetchSettings

__all__ = ["AiohttpFetcher", "error_code"]


class AiohttpFetcher(HttpFetcher):
    """The fetch logic over sockets.

    ``resolver`` replaces the system resolver (its answers are still filtered);
    ``ssl_ca_file`` (default ``settings.tls_ca_file``) is a CA trusted besides the system's.
    """

    def __init__(
        self,
        settings: FetchSettings,
        *,
        counters: collections.Counter[str] | None = None,
        ssl_ca_file: str | None = None,
        resolver: AbstractResolver | None = None,
        clock: Clock | None = None,
    ) -> None:
        transport = AiohttpTransport(settings, ssl_ca_file=ssl_ca_file, resolver=resolver)
        super().__init__(settings, transport, counters=counters, clock=clock)
