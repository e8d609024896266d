"""The one place a crawl's fetcher is made: live over sockets, or simulated over archives.

A simulation (``archives`` given) reads the WARC files through the replay
web's answer function, with a :class:`~focuscrawl.clock.VirtualClock`: no
sockets, no proxy, no sleeping (``fetch.render`` still renders pages in the browser,
their sub-requests answered from the archives). The address policy stays on, with every host
that has records in the archives allowed (a live crawl through ``focuscrawl
replay`` would reach them through the proxy).
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Callable, Sequence
from pathlib import Path

from focuscrawl.clock import Clock, SystemClock, VirtualClock
from focuscrawl.exceptions import ArchiveError, ConfigError
from focuscrawl.fetch.addresses import AddressPolicy
from focuscrawl.fetch.aiohttp_transport import AiohttpTransport
from focuscrawl.fetch.archive_transport import ArchiveTransport
from focuscrawl.fetch.fetcher import HttpFetcher
from focuscrawl.fetch.freshness import Validators
from focuscrawl.fetch.render import RenderingFetcher
from focuscrawl.fetch.transport import Transport
from focuscrawl.settings import Settings, fetch_settings

__all__ = ["build_fetcher"]


def build_fetcher(
    settings: Settings,
    counters: collections.Counter[str] | None = None,
    *,
    archives: Sequence[Path | str] = (),
    clock: Clock | None = None,
    guard: Callable[[Transport], Transport] | None = None,
    validators: Validators | None = None,
) -> HttpFetcher:
    """A fetcher for ``settings.fetch``: live, or a simulation over ``archives``.

    ``counters`` receives the fetcher's counts (see :class:`HttpFetcher`); ``guard``
    wraps the live transport (a shared crawl's worker: every request checks its lease).
    ``validators``: re-fetches of the URLs it holds are conditional (see :class:`HttpFetcher`).
    An archive that cannot be read is a :class:`ConfigError` (one line).
    """
    fetch = fetch_settings(settings)  # PDFs refused when parse.pdf is off
    if archives:
        try:
            transport = ArchiveTransport.from_archives(list(archives))
        except ArchiveError as exc:
            raise ConfigError(f"simulate: {exc}") from None
        fetch = dataclasses.replace(fetch, proxy=None)  # nothing to go through
        policy = AddressPolicy(fetch.allow_private, hosts=transport.web.hosts)
        # a page's scripts and their requests are answered from the archives too (every
        # request of a rendered page goes through this fetcher): rendering works offline
        kind = RenderingFetcher if fetch.render != "never" else HttpFetcher
        return kind(
            fetch,
            transport,
            counters=counters,
            clock=clock if clock is not None else VirtualClock(),
            policy=policy,
            gateway=True,  # the replay web's answers: 502 for a host it does not hold
            validators=validators,
        )
    live: Transport = AiohttpTransport(fetch, ssl_ca_file=fetch.tls_ca_file)
    if guard is not None:
        live = guard(live)
    if fetch.render != "never":  # a browser renders pages (focuscrawl.fetch.render)
        return RenderingFetcher(
            fetch, live, counters=counters, clock=clock if clock is not None else SystemClock(),
            validators=validators,
        )
    return HttpFetcher(
        fetch,
        live,
        counters=counters,
        clock=clock if clock is not None else SystemClock(),
        validators=validators,
    )
