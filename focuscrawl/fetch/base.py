"""The Fetcher protocol: what the engine needs from any fetcher."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any, Protocol

from focuscrawl.types import FetchResult

#: Called by a fetcher, in the task of a fetch, when that fetch has its page and only
#: the page's rendering is left (:mod:`focuscrawl.fetch.render`): set by the crawl's
#: as-completed window in each fetch it starts, whose slot is then given back to plain
#: fetches while the page waits for the browser and renders. None: nobody listens.
HAND_OFF: ContextVar[Callable[[], None] | None] = ContextVar("focuscrawl_hand_off", default=None)
#: The crawl's scope for the redirects of the page being fetched: why a URL is out of it
#: (:meth:`Scope.reject <focuscrawl.urls.scope.Scope.reject>`), or None. Set by the
#: crawl's window in each page fetch it starts, so a redirect never takes a crawl where
#: its links may not (Heritrix and StormCrawler put a redirect's target through the
#: scope as a new link); a rendered page's own requests (a CDN's script) are not
#: confined. None: no scope (a fetcher used on its own).
SCOPE: ContextVar[Callable[[str], str | None] | None] = ContextVar("focuscrawl_scope", default=None)


class Fetcher(Protocol):
    """Fetches URLs politely. Implementations are async context managers."""

    async def __aenter__(self) -> Fetcher: ...

    async def __aexit__(self, *exc: object) -> None: ...

    async def fetch(self, url: str) -> FetchResult:
        """Fetch ``url`` (robots.txt, per-host politeness, redirects, retries included).

        Never raises for network or HTTP problems: they come back in
        ``FetchResult.error`` / ``status``.
        """
        ...

    def refusal(self, url: str) -> FetchResult | None:
        """What :meth:`fetch` would return for ``url`` if that is known now without any
        I/O or wait (a bad URL, robots.txt read already that says no); None: fetch it."""
        ...

    def host_ready_at(self, host: str) -> float:
        """Monotonic time at which ``host`` may be contacted again (0 if now)."""
        ...

    def host_busy(self, host: str) -> bool:
        """True while the host has as many requests in flight as it may have."""
        ...

    def stragglers(self) -> int:
        """Requests under way for longer than a straggler's time (a hung request, a slow
        body): what is in flight and will be late."""
        ...

    def sending(self, task: asyncio.Future[Any]) -> bool:
        """Whether the fetch running in ``task`` has a request under way (sent, its answer
        not read yet), not waiting for its turn (its host's delay, a connection, a
        lookup, robots.txt, a back-off): what a stop's grace period waits for."""
        ...
