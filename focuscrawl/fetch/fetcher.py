"""The crawler's fetch logic, above a transport: polite, robots-aware, never raising.

One ``fetch(url)`` is: address check -> robots.txt -> one request per redirect
hop (each hop address- and robots-checked and counted as a request to its own
host), with retries and back-off for 429/503/timeouts/resets, the body read in
chunks up to ``max_body_size`` and only for the accepted content types.
robots.txt downloads follow their redirects here too, each hop address-checked
(RFC 9309 section 2.3.1.2: at most five). Every exchange goes through a
:class:`~focuscrawl.fetch.transport.Transport`: sockets for a crawl, archives
for a simulation. Waits and stamps use the injected clock. Whether a URL may be
requested at all (its address, its host's robots.txt) is :mod:`focuscrawl.fetch.admission`'s.
"""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import Mapping
from typing import Any

from focuscrawl.clock import Clock, SystemClock
from focuscrawl.exceptions import ConfigError
from focuscrawl.fetch.addresses import AddressPolicy
from focuscrawl.fetch.admission import UNREACHABLE, Admission
from focuscrawl.fetch.base import SCOPE
from focuscrawl.fetch.body import download, read_upto
from focuscrawl.fetch.encoding import looks_like_html, sniff_charset
from focuscrawl.fetch.freshness import Validators
from focuscrawl.fetch.politeness import HostPoliteness, parse_retry_after
from focuscrawl.fetch.robots import RobotsCache, robots_url, user_agent_token
from focuscrawl.fetch.transport import (
    Answer,
    Deadline,
    Transport,
    TransportError,
    accept_encoding,
    flat_headers,
    gateway_error,
)
from focuscrawl.output.warc_records import warc_date
from focuscrawl.parse.sitemaps import SITEMAP_TYPES, StreamedSitemap, robots_sitemaps
from focuscrawl.settings import DISCOVERY_CONTENT_TYPES, FetchSettings, is_proxy_url
from focuscrawl.types import FetchResult
from focuscrawl.urls import host_of, normalize_url

__all__ = ["HttpFetcher"]

_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_RETRY_STATUSES = frozenset({429, 503})
_RETRY_ERRORS = frozenset({"timeout", "reset", "connect"})
_ROBOTS_MAX_BYTES = 512 * 1024
_ROBOTS_MAX_REDIRECTS = 5  # RFC 9309 section 2.3.1.2
_SNIFF_BYTES = 1024
_ADMITTED_KEPT = 4096  # URLs refusal() let in whose fetch has not started yet

log = logging.getLogger(__name__)


class HttpFetcher:
    """The :class:`~focuscrawl.fetch.base.Fetcher` of the crawler, over any transport.

    ``counters`` receives one count per error code of a returned result, plus
    ``"requests"`` (HTTP requests sent, robots.txt and retries included),
    ``"retries"``, ``"truncated"`` and ``"robots.txt"`` (robots files downloaded).
    ``policy`` (default: ``settings.allow_private``) decides which targets may
    be asked for at all, proxy or not; the proxy itself is always allowed. Through a
    proxy a host name is resolved here first (:meth:`AddressPolicy.name_refused`).
    ``gateway`` (default: a proxy is set): a 502 answer to robots.txt is the
    gateway's: the host's pages are skipped as ``"proxy"`` (``"dns"`` if it says so), not ``"robots"``.
    ``validators``: a URL whose earlier answer had an ETag or Last-Modified is asked
    conditionally; a 304 comes back with ``refers_to`` set, no body (fetch.freshness).
    """

    def __init__(
        self,
        settings: FetchSettings,
        transport: Transport,
        *,
        counters: collections.Counter[str] | None = None,
        clock: Clock | None = None,
        policy: AddressPolicy | None = None,
        gateway: bool | None = None,
        validators: Validators | None = None,
    ) -> None:
        self.settings = settings
        self.validators = validators
        self.transport = transport
        self.clock: Clock = clock if clock is not None else SystemClock()
        self.counters: collections.Counter[str] = (
            counters if counters is not None else collections.Counter()
        )
        self._token = user_agent_token(settings.user_agent)
        self._proxy = self._check_proxy(settings.proxy)
        # answers come through a gateway (a proxy, or the replay web a simulation reads):
        # its 502 to robots.txt means it could not reach the host, not the host's "no"
        self._gateway = bool(self._proxy) if gateway is None else gateway
        self._politeness = HostPoliteness(
            settings.concurrency, settings.per_host, settings.delay, clock=self.clock,
            release_stragglers=isinstance(self.clock, SystemClock),
        )  # fmt: skip
        self._robots = RobotsCache(self._download_robots, settings.robots_cache_size)
        self._types = frozenset(t.strip().lower() for t in settings.content_types)
        if (settings.read_sitemaps or settings.read_feeds) and self._types:
            self._types |= frozenset(DISCOVERY_CONTENT_TYPES)
        self._sitemaps_told: set[str] = set()  # hosts whose sitemaps a result has given
        types = [t for t in settings.content_types if t.strip()]
        self._headers = {
            "User-Agent": settings.user_agent,
            "Accept": ",".join(types) + ",*/*;q=0.8" if types else "*/*",
            "Accept-Encoding": accept_encoding(),
        }
        self.admission = Admission(  # (asked by the renderer too, for an answer it kept)
            settings, policy if policy is not None else AddressPolicy(settings.allow_private),
            self._robots, self._politeness, proxy=self._proxy, token=self._token,
        )  # fmt: skip
        self._open = False
        self._admitted: dict[str, str] = {}  # URL -> its normalised form, let in by refusal()
        self._sending: set[asyncio.Future[Any]] = set()  # tasks with a request under way

    @staticmethod
    def _check_proxy(proxy: str | None) -> str | None:
        """The settings' check, for a FetchSettings made by hand (not built from a config)."""
        if proxy and not is_proxy_url(proxy):
            raise ConfigError(f"config: fetch.proxy {proxy!r} is not an http(s)://host:port URL")
        return proxy or None

    async def __aenter__(self) -> HttpFetcher:
        await self.transport.__aenter__()
        self._open = True
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._open = False
        await self.admission.close()
        await self.transport.__aexit__(*exc)

    def host_ready_at(self, host: str) -> float:
        return self._politeness.host_ready_at(host)

    def host_busy(self, host: str) -> bool:
        return self._politeness.host_busy(host)

    def stragglers(self) -> int:
        return self._politeness.stragglers

    def sending(self, task: asyncio.Future[Any]) -> bool:
        return task in self._sending

    async def fetch(self, url: str, *, any_type: bool = False, conditional: Mapping[str, str] | None = None) -> FetchResult:
        """Fetch ``url``; ``redirects`` lists the URLs that answered with a redirect.
        ``any_type``: a body of any content type; ``conditional``: validators to ask with."""
        if not self._open:
            raise ConfigError("fetch: the fetcher is not open (use `async with` on it)")
        started = self.clock.monotonic()
        target = self._admitted.pop(url, None)  # admitted by refusal() just now
        admitted = target is not None
        if target is None:
            target = normalize_url(url)
        if target is None:
            result = FetchResult(url=url, final_url=url, error="bad-url")
        else:
            async with self._politeness.claim(host_of(target)):
                result = await self._revisit(url, target, admitted, any_type, conditional)
        result.elapsed = self.clock.monotonic() - started
        if result.error is not None:
            self.counters[result.error] += 1
        elif target is not None and self.settings.read_sitemaps:
            result.sitemaps = self._new_sitemaps(target)
        return result

    async def _revisit(self, url: str, target: str, admitted: bool, any_type: bool, conditional: Mapping[str, str] | None = None) -> FetchResult:
        """:meth:`_follow`, conditional when ``url``'s validators are kept (then kept anew);
        a 304 that refers to nothing kept: one log line, the URL asked again unconditionally."""
        validators = self.validators
        if validators is None or conditional:  # (the caller's own validators: its 304 is its own)
            return await self._follow(url, target, admitted, any_type, conditional)
        earlier, conditional = validators.get(url), validators.conditional(url)
        result = await self._follow(url, target, admitted, any_type, conditional)
        if result.error is None and result.status == 304 and not result.redirects:
            if earlier is not None and conditional:
                result.refers_to = (earlier.uri, earlier.date)
                self.counters["not_modified"] += 1
                return result
            log.info("%s: 304 Not Modified with no earlier record kept; fetched again unconditionally", url)
            self.counters["not_modified_unknown"] += 1
            result = await self._follow(url, target, True, any_type, {})
        if result.ok:
            validators.keep(url, result.headers, result.final_url, warc_date(result.fetched_at))
        return result

    def _new_sitemaps(self, url: str) -> tuple[str, ...]:
        """The sitemaps of the host of ``url`` (robots.txt's Sitemap lines, and
        /sitemap.xml when ``guess_sitemap``), the first time its rules are here."""
        host = host_of(url)
        if host in self._sitemaps_told:
            return ()
        rules = self._robots.cached(url)
        if rules is None and self.settings.respect_robots:
            return ()  # robots.txt not read yet (a later result gives them)
        self._sitemaps_told.add(host)
        lines = rules.robots.sitemaps if rules is not None and rules.robots is not None else []
        found, refused = robots_sitemaps(lines, robots_url(url), self.settings.guess_sitemap)
        if refused:  # counted, and one line per host
            self.counters["robots_sitemap_refused"] += len(refused)
            log.warning("%s: %d Sitemap line(s) of robots.txt not a full http(s) URL, "
                        "skipped (the first: %r)", host, len(refused), refused[0])  # fmt: skip
        return found

    def _names_sitemap(self, url: str) -> bool:
        """Whether the robots.txt of ``url``'s host names it a sitemap (a plain-text one is
        served as text/plain, a type no page of the crawl is taken in)."""
        rules = self._robots.cached(url) if self.settings.read_sitemaps else None
        lines = rules.robots.sitemaps if rules is not None and rules.robots is not None else []
        return url in robots_sitemaps(lines, robots_url(url), self.settings.guess_sitemap)[0]

    def refusal(self, url: str) -> FetchResult | None:
        """What :meth:`fetch` would return for ``url`` when that is known now, without a
        request or a wait: a bad URL, a blocked address, or rules of robots.txt read
        already that disallow it (counted as fetch counts them); else None: fetch it.

        A focused crawl's links often point where robots.txt says no (1,641 of 3,641
        URLs in the first 2,000 WebKB fetches): the engine settles those from here,
        without a task, the host's claim and the async steps of a fetch. A URL found
        allowed here is remembered, and its fetch does not check it again (its
        redirects' targets are checked as always).
        """
        if not self._open:
            return None  # (fetch says why)
        target = normalize_url(url)
        if target is None:
            refused = "bad-url"
        else:
            known, why = self.admission.known(target)
            if not known:
                return None  # robots.txt not read yet: fetch reads it (or waits for it)
            if why is None:  # allowed: the fetch that follows need not ask again
                if len(self._admitted) >= _ADMITTED_KEPT:
                    self._admitted.clear()  # (URLs whose fetch never started: cancelled)
                self._admitted[url] = target
                return None
            refused = why
        result = FetchResult(url=url, final_url=target or url, error=refused)
        self.counters[refused] += 1
        return result

    async def _follow(
        self, url: str, current: str, admitted: bool = False, any_type: bool = False,
        conditional: Mapping[str, str] | None = None,
    ) -> FetchResult:
        """``url`` from ``current`` on, redirects followed; ``conditional``: its first request's headers."""
        chain: list[str] = []
        deadline = Deadline(self.settings.fetch_timeout)
        confine = SCOPE.get()  # a page's redirects stay in its crawl's scope
        while True:
            refused = None if admitted and not chain else await self.admission.admit(current)
            if refused is not None:
                return FetchResult(
                    url=url, final_url=current, error=refused, redirects=tuple(chain)
                )
            extra = None if chain else conditional
            result, location = await self._with_retries(current, deadline, any_type=any_type, extra=extra)
            result.url, result.redirects = url, tuple(chain)
            if location is None or result.error is not None:
                return result
            if len(chain) >= self.settings.max_redirects:
                result.error = "too-many-redirects"
                return result
            following = normalize_url(location, base=current)
            if following is None or (confine is not None and confine(following) is not None):
                result.error = "bad-url" if following is None else "redirect-out-of-scope"
                return result  # not http(s) or unparsable; or where the crawl may not go
            chain.append(current)
            current = following

    async def _download_robots(self, robots_url: str) -> tuple[int, bytes, str | None]:
        """robots.txt, its redirects followed here with the checks every page gets."""
        self.counters["robots.txt"] += 1
        deadline = Deadline(self.settings.fetch_timeout)
        current, hops = robots_url, 0
        while True:
            if not await self.admission.address_ok(current):
                # only a redirect can get here (the page's own host passed): the
                # origin answered, pointing somewhere we may not go
                return 0, b"", "robots"
            result, location = await self._with_retries(current, deadline, robots=True)
            if result.error is None and result.status == 502 and self._gateway:
                result.error = gateway_error(result.headers)  # it could not reach the host
            if result.error is not None:
                # an unreachable redirect target is the origin's doing, not ours
                error = "robots" if hops and result.error in UNREACHABLE else result.error
                return result.status, result.body, error
            if location is None:
                return result.status, result.body, None
            following = normalize_url(location, base=current)
            if hops >= _ROBOTS_MAX_REDIRECTS:
                return result.status, b"", "too-many-redirects"
            if following is None:
                return result.status, b"", "robots"
            current, hops = following, hops + 1

    async def _with_retries(
        self, url: str, deadline: Deadline, robots: bool = False, any_type: bool = False,
        extra: Mapping[str, str] | None = None,
    ) -> tuple[FetchResult, str | None]:
        host = host_of(url)
        attempt = 0
        while True:
            result, location, retry_after = await self._exchange(url, host, robots, deadline, any_type, extra)
            overloaded = result.error is None and result.status in _RETRY_STATUSES
            if (overloaded or result.error in _RETRY_ERRORS) and not deadline.over:
                wait = self.settings.retry_backoff * 2**attempt  # exponential back-off
                if retry_after is not None:
                    wait = retry_after
                if overloaded:  # the host asked everyone to slow down, not just this URL
                    self._politeness.defer(host, wait)
                if attempt < self.settings.retries:
                    attempt += 1
                    self.counters["retries"] += 1
                    await self.clock.sleep(wait)
                    continue
            return result, location

    async def _exchange(
        self, url: str, host: str, robots: bool, deadline: Deadline, any_type: bool = False,
        extra: Mapping[str, str] | None = None,
    ) -> tuple[FetchResult, str | None, float | None]:
        """One request (``extra``: more headers): the result, a redirect's Location, the Retry-After."""
        headers = {**self._headers, **extra} if extra else self._headers
        result = FetchResult(url=url, final_url=url)
        location: str | None = None
        retry_after: float | None = None
        async with self._politeness.slot(host):
            if deadline.over:
                result.error = "timeout"
                return result, None, None
            self.counters["requests"] += 1
            began = self.clock.monotonic()
            task = asyncio.current_task()
            if task is not None:
                self._sending.add(task)
            try:
                async with self.transport.request(
                    url, headers, proxy=self._proxy, time_limit=deadline.left
                ) as answer:
                    self._politeness.sent(host)
                    result.fetched_at = self.clock.time()
                    result.status = answer.status
                    result.reason = answer.reason
                    result.http_version = answer.http_version
                    result.headers = flat_headers(answer.headers)
                    result.request_headers = dict(answer.request_headers)
                    if answer.status in _RETRY_STATUSES:
                        retry_after = parse_retry_after(
                            answer.header("Retry-After"), self.clock.time()
                        )
                    if answer.status in _REDIRECT_STATUSES:
                        location = answer.location()
                        if location:
                            return result, location, retry_after
                    await self._read_body(answer, result, robots, any_type)
            except TransportError as exc:
                result.error = exc.code
                self._politeness.sent(host)  # it may have arrived before failing
            finally:
                self._sending.discard(task)
                deadline.spend(self.clock.monotonic() - began)
        return result, location, retry_after

    async def _read_body(self, answer: Answer, result: FetchResult, robots: bool, any_type: bool = False) -> None:
        """Fill body/content_type/charset/truncated, or refuse the content type."""
        header = answer.header("Content-Type") or ""
        mime = header.split(";", 1)[0].strip().lower()
        limit = _ROBOTS_MAX_BYTES if robots else self.settings.max_body_size
        head = b""
        if not robots and not mime:
            head = await read_upto(answer, _SNIFF_BYTES)
            mime = "text/html" if looks_like_html(head) else ""
        result.content_type = mime
        plain_sitemap = mime == "text/plain" and not robots and self._names_sitemap(result.url)
        if not (robots or any_type or plain_sitemap) and self._types and mime not in self._types:
            # Not downloaded; only a successful answer counts as "filtered by type".
            if 200 <= answer.status < 300:
                result.error = "content-type"
            answer.body.abandon()
            return
        # a sitemap is read on past the cap, up to the sitemaps.org limit (fetch.body)
        sitemap = self.settings.read_sitemaps and not robots and (mime in SITEMAP_TYPES or plain_sitemap)
        stream = StreamedSitemap() if sitemap else None
        result.body, result.truncated = await download(answer, head, limit, stream)
        result.streamed = stream
        if result.truncated:
            self.counters["truncated"] += 1
        if mime.startswith("text/") or "html" in mime or "xml" in mime:
            result.charset, result.utf8_checked = sniff_charset(header, result.body)

