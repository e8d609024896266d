"""May a URL be requested: its address and its host's robots.txt.

The address check is the :class:`~focuscrawl.fetch.addresses.AddressPolicy`'s,
asked once per host name (through a proxy a name the proxy would resolve is
resolved here first, one lookup per name shared by every fetch that waits for
it); the robots.txt check reads the host's rules from the
:class:`~focuscrawl.fetch.robots.RobotsCache` (downloaded by the fetcher when
they are not there yet) and applies its Crawl-delay to the host's politeness.
"""

from __future__ import annotations

import asyncio

from focuscrawl.fetch.addresses import AddressPolicy
from focuscrawl.fetch.politeness import HostPoliteness
from focuscrawl.fetch.robots import RobotsCache, RobotsRules
from focuscrawl.settings import FetchSettings
from focuscrawl.urls import host_of, hostname_of

__all__ = ["UNREACHABLE", "Admission"]

# errors that mean the host could not be reached at all (not an answer from it)
UNREACHABLE = frozenset({"dns", "blocked-address", "ssl", "connect", "proxy"})
_HOSTS_CACHED = 65536  # host names whose address check is remembered


class Admission:
    """Why a URL may not be requested (``"blocked-address"``, ``"robots"``, or the error
    that kept its host's robots.txt away), or None: the fetcher's checks before each hop."""

    def __init__(
        self,
        settings: FetchSettings,
        policy: AddressPolicy,
        robots: RobotsCache,
        politeness: HostPoliteness,
        *,
        proxy: str | None,
        token: str,
    ) -> None:
        self._settings = settings
        self._policy = policy
        self._robots = robots
        self._politeness = politeness
        self._proxy = proxy
        self._token = token
        self._allowed_hosts: dict[str, bool] = {}
        self._lookups: dict[str, asyncio.Task[bool]] = {}  # name checks under way, by host name

    async def close(self) -> None:
        """Cancel the name lookups under way (the fetcher is closing)."""
        lookups = list(self._lookups.values())
        for task in lookups:
            task.cancel()
        await asyncio.gather(*lookups, return_exceptions=True)

    def address_allowed(self, url: str) -> bool | None:
        """The address check of ``url``'s host, or None while its name must still be
        resolved here (through a proxy: :meth:`address_ok`)."""
        try:
            hostname = hostname_of(url).lower()
        except ValueError:
            return False
        # the policy's answer depends on the name alone: asked once per host
        allowed = self._allowed_hosts.get(hostname)
        if allowed is None:
            allowed = self._policy.check_target(hostname)
            if allowed and self._proxy and self._policy.needs_resolving(hostname):
                return None  # the proxy would resolve it: resolved here first
            self._remember(hostname, allowed)
        return allowed

    def _remember(self, hostname: str, allowed: bool) -> None:
        if len(self._allowed_hosts) >= _HOSTS_CACHED:
            self._allowed_hosts.clear()
        self._allowed_hosts[hostname] = allowed

    async def address_ok(self, url: str) -> bool:
        """:meth:`address_allowed`, a host name resolved here where it must be (one
        lookup per name, shared by every fetch that waits for it)."""
        allowed = self.address_allowed(url)
        if allowed is None:
            hostname = hostname_of(url).lower()
            lookup = self._lookups.get(hostname) or self._look_up(hostname)
            # shielded: a fetch cancelled while it waits leaves the lookup to the others
            allowed = await asyncio.shield(lookup)
        return allowed

    def _look_up(self, hostname: str) -> asyncio.Task[bool]:
        """The name check of ``hostname`` started; its answer remembered when it comes."""

        async def check() -> bool:
            return not await self._policy.name_refused(hostname)

        def settled(task: asyncio.Task[bool]) -> None:
            if self._lookups.get(hostname) is task:
                del self._lookups[hostname]
            if not task.cancelled() and task.exception() is None:
                self._remember(hostname, task.result())

        task = asyncio.ensure_future(check())
        self._lookups[hostname] = task
        task.add_done_callback(settled)
        return task

    async def admit(self, url: str) -> str | None:
        """Why ``url`` may not be requested (address, robots.txt), or None."""
        known, why = self.known(url)
        if known:
            return why
        if not await self.address_ok(url):
            return "blocked-address"
        known, why = self.known(url)
        if known:
            return why
        return self._verdict(url, await self._robots.rules_for(url))

    def known(self, url: str) -> tuple[bool, str | None]:
        """``admit``'s answer where it needs no download: (True, why it refuses ``url``,
        or None); (False, None) while the rules of its robots.txt are not here."""
        allowed = self.address_allowed(url)
        if allowed is None:
            return False, None  # a name to resolve first
        if not allowed:
            return True, "blocked-address"
        if not self._settings.respect_robots:
            return True, None
        rules = self._robots.cached(url)
        if rules is None:
            return False, None
        return True, self._verdict(url, rules)

    def _verdict(self, url: str, rules: RobotsRules) -> str | None:
        """Why ``rules`` refuse ``url`` (None: allowed); the host's Crawl-delay applied."""
        if self._settings.obey_crawl_delay:
            delay = rules.crawl_delay(self._token)
            if delay is not None:
                delay = min(delay, self._settings.max_crawl_delay)
            self._politeness.set_crawl_delay(host_of(url), delay)
        if rules.allowed(url, self._token):
            return None
        # A host that cannot be reached says why (the page would fail the same way);
        # "robots" is kept for hosts whose robots.txt answered and said no (or 5xx).
        return rules.error if rules.error in UNREACHABLE else "robots"
