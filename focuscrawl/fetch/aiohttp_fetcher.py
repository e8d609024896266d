"""The crawler's fetcher: asyncio + aiohttp, polite, robots-aware, never raising.

One ``fetch(url)`` is: address check -> robots.txt -> one request per redirect
hop (each hop robots-checked and counted as a request to its own host), with
retries and back-off for 429/503/timeouts/resets, the body read in chunks up to
``max_body_size`` and only for the accepted content types.
"""

from __future__ import annotations

import asyncio
import collections
import email.utils
import logging
import ssl
import time
from collections.abc import Mapping
from urllib.parse import urlsplit

import aiohttp
from aiohttp.abc import AbstractResolver
from w3lib.url import safe_url_string
from yarl import URL

from focuscrawl.clock import Clock, SystemClock
from focuscrawl.exceptions import ConfigError
from focuscrawl.fetch.addresses import AddressPolicy, BlockedAddressError, FilteringResolver
from focuscrawl.fetch.encoding import detect_charset, looks_like_html
from focuscrawl.fetch.politeness import HostPoliteness
from focuscrawl.fetch.robots import RobotsCache, user_agent_token
from focuscrawl.settings import FetchSettings
from focuscrawl.types import FetchResult
from focuscrawl.urls import host_of, normalize_url

__all__ = ["AiohttpFetcher"]

log = logging.getLogger(__name__)

_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_RETRY_STATUSES = frozenset({429, 503})
_RETRY_ERRORS = frozenset({"timeout", "reset", "connect"})
_MAX_RETRY_AFTER = 60.0  # seconds; a server cannot park a host longer than this per answer
_ROBOTS_MAX_BYTES = 512 * 1024
_ROBOTS_MAX_REDIRECTS = 5  # RFC 9309 section 2.3.1.2
_SNIFF_BYTES = 1024
_CHUNK = 64 * 1024


def _flat(headers: Mapping[str, str]) -> dict[str, str]:
    """Multi-valued headers joined with ", " (first spelling of the name kept)."""
    out: dict[str, str] = {}
    lower: dict[str, str] = {}
    for name, value in headers.items():
        key = lower.setdefault(name.lower(), name)
        out[key] = f"{out[key]}, {value}" if key in out else value
    return out


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta or HTTP date), capped at 60.

    >>> parse_retry_after("3"), parse_retry_after("900"), parse_retry_after("soon")
    (3.0, 60.0, None)
    >>> parse_retry_after("Thu, 01 Jan 1970 00:00:10 GMT", now=4.0)
    6.0
    """
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        seconds = float(value)
    else:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError):
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    return min(max(seconds, 0.0), _MAX_RETRY_AFTER)


def error_code(exc: BaseException) -> str:
    """The short FetchResult.error code for an exception raised by aiohttp."""
    if isinstance(getattr(exc, "os_error", None), BlockedAddressError):
        return "blocked-address"
    if isinstance(exc, aiohttp.ClientConnectorDNSError):
        return "dns"
    if isinstance(exc, asyncio.TimeoutError | aiohttp.ServerTimeoutError):
        return "timeout"
    if isinstance(exc, aiohttp.ClientSSLError | ssl.SSLError):
        return "ssl"
    if isinstance(exc, aiohttp.TooManyRedirects):  # robots.txt only: pages follow by hand
        return "too-many-redirects"
    if isinstance(exc, aiohttp.ClientHttpProxyError):
        return "proxy"
    if isinstance(exc, aiohttp.ClientConnectorError):
        return "connect"
    if isinstance(
        exc,
        aiohttp.ServerDisconnectedError
        | aiohttp.ClientPayloadError
        | aiohttp.ClientOSError
        | ConnectionError,
    ):
        return "reset"
    if isinstance(exc, aiohttp.InvalidURL | ValueError):
        return "bad-url"
    if isinstance(exc, aiohttp.ClientResponseError):
        return "protocol"  # a malformed HTTP response
    return "connect" if isinstance(exc, OSError) else "error"


_UNREACHABLE = frozenset({"dns", "blocked-address", "ssl", "connect", "proxy"})


class AiohttpFetcher:
    """The :class:`~focuscrawl.fetch.base.Fetcher` of the crawler.

    ``counters`` receives one count per error code of a returned result, plus
    ``"requests"`` (HTTP requests sent, robots.txt and retries included),
    ``"retries"``, ``"truncated"`` and ``"robots.txt"`` (robots files downloaded).
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
        self.settings = settings
        self.clock: Clock = clock if clock is not None else SystemClock()
        self.counters: collections.Counter[str] = (
            counters if counters is not None else collections.Counter()
        )
        self._ssl_ca_file = ssl_ca_file or settings.tls_ca_file
        self._inner_resolver = resolver
        self._policy = AddressPolicy(settings.allow_private)
        self._token = user_agent_token(settings.user_agent)
        self._proxy = self._check_proxy(settings.proxy)
        self._politeness = HostPoliteness(
            settings.concurrency, settings.per_host, settings.delay, clock=self.clock
        )
        self._robots = RobotsCache(self._download_robots, settings.robots_cache_size)
        self._types = frozenset(t.strip().lower() for t in settings.content_types)
        self._session: aiohttp.ClientSession | None = None
        self._resolver: FilteringResolver | None = None

    def _check_proxy(self, proxy: str | None) -> str | None:
        if not proxy:
            return None
        parts = urlsplit(proxy)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(f"config: fetch.proxy {proxy!r} is not an http(s)://host:port URL")
        # A proxy named by host is checked by the filtering resolver when connecting.
        if not self._policy.check_literal(parts.hostname):
            raise ConfigError(
                f"config: fetch.proxy address {parts.hostname} is private or loopback;"
                " add it to fetch.allow_private"
            )
        return proxy

    async def __aenter__(self) -> AiohttpFetcher:
        ssl_context: ssl.SSLContext | bool = True
        if self._ssl_ca_file:
            try:
                ssl_context = ssl.create_default_context()  # the system CAs, plus:
                ssl_context.load_verify_locations(cafile=self._ssl_ca_file)
            except (OSError, ssl.SSLError) as exc:
                raise ConfigError(
                    f"fetch: cannot load CA file {self._ssl_ca_file}: {exc}"
                ) from None
        inner = self._inner_resolver or aiohttp.ThreadedResolver()
        self._resolver = FilteringResolver(
            inner, self._policy, close_inner=self._inner_resolver is None
        )
        s = self.settings
        connector = aiohttp.TCPConnector(
            limit=s.concurrency,
            limit_per_host=s.per_host,
            ttl_dns_cache=300,
            resolver=self._resolver,
            ssl=ssl_context,
        )
        types = [t for t in s.content_types if t.strip()]
        accept = ",".join(types) + ",*/*;q=0.8" if types else "*/*"
        self._session = aiohttp.ClientSession(
            connector=connector,
            timeout=aiohttp.ClientTimeout(
                total=None, sock_connect=s.connect_timeout or None, sock_read=s.read_timeout or None
            ),
            headers={
                "User-Agent": s.user_agent,
                "Accept": accept,
                "Accept-Encoding": "gzip, deflate",
            },
            cookie_jar=aiohttp.DummyCookieJar(),  # stateless: what is recorded is what is sent
            trust_env=False,  # only the configured proxy, never one from the environment
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
        if self._resolver is not None:
            await self._resolver.close()
            self._resolver = None

    def host_ready_at(self, host: str) -> float:
        return self._politeness.host_ready_at(host)

    def host_busy(self, host: str) -> bool:
        return self._politeness.host_busy(host)

    async def fetch(self, url: str) -> FetchResult:
        """Fetch ``url``; ``redirects`` lists the URLs that answered with a redirect."""
        if self._session is None:
            raise ConfigError(
                "fetch: the fetcher is not open (use `async with AiohttpFetcher(...)`)"
            )
        started = self.clock.monotonic()
        target = normalize_url(url)
        if target is None:
            result = FetchResult(url=url, final_url=url, error="bad-url")
        else:
            async with self._politeness.claim(host_of(target)):
                result = await self._follow(url, target)
        result.elapsed = self.clock.monotonic() - started
        if result.error is not None:
            self.counters[result.error] += 1
        return result

    async def _follow(self, url: str, current: str) -> FetchResult:
        chain: list[str] = []
        while True:
            refused = await self._admit(current)
            if refused is not None:
                return FetchResult(
                    url=url, final_url=current, error=refused, redirects=tuple(chain)
                )
            result, location = await self._with_retries(current)
            result.url, result.redirects = url, tuple(chain)
            if location is None or result.error is not None:
                return result
            if len(chain) >= self.settings.max_redirects:
                result.error = "too-many-redirects"
                return result
            following = normalize_url(location, base=current)
            if following is None:  # not http(s), or unparsable
                result.error = "bad-url"
                return result
            chain.append(current)
            current = following

    async def _admit(self, url: str) -> str | None:
        """Why ``url`` may not be requested (address, robots.txt), or None."""
        hostname = urlsplit(url).hostname or ""
        if self._proxy is None and not self._policy.check_literal(hostname):
            return "blocked-address"
        if not self.settings.respect_robots:
            return None
        rules = await self._robots.rules_for(url)
        if self.settings.obey_crawl_delay:
            delay = rules.crawl_delay(self._token)
            if delay is not None:
                delay = min(delay, self.settings.max_crawl_delay)
            self._politeness.set_crawl_delay(host_of(url), delay)
        if rules.allowed(url, self._token):
            return None
        # A host that cannot be reached says why (the page would fail the same way);
        # "robots" is kept for hosts whose robots.txt answered and said no (or 5xx).
        return rules.error if rules.error in _UNREACHABLE else "robots"

    async def _download_robots(self, robots_url: str) -> tuple[int, bytes, str | None]:
        self.counters["robots.txt"] += 1
        result, _ = await self._with_retries(robots_url, robots=True)
        return result.status, result.body, result.error

    async def _with_retries(self, url: str, robots: bool = False) -> tuple[FetchResult, str | None]:
        host = host_of(url)
        attempt = 0
        while True:
            result, location, retry_after = await self._exchange(url, host, robots)
            overloaded = result.error is None and result.status in _RETRY_STATUSES
            if overloaded or result.error in _RETRY_ERRORS:
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
        self, url: str, host: str, robots: bool
    ) -> tuple[FetchResult, str | None, float | None]:
        """One request; returns the result, the Location of a redirect, the Retry-After."""
        assert self._session is not None
        result = FetchResult(url=url, final_url=url)
        location: str | None = None
        retry_after: float | None = None
        try:
            async with self._politeness.slot(host):
                self.counters["requests"] += 1
                async with self._session.get(
                    URL(safe_url_string(url), encoded=True),
                    allow_redirects=robots,
                    max_redirects=_ROBOTS_MAX_REDIRECTS,
                    proxy=self._proxy,
                ) as resp:
                    result.fetched_at = self.clock.time()
                    result.status = resp.status
                    result.reason = resp.reason or ""
                    if resp.version is not None:
                        result.http_version = f"{resp.version.major}.{resp.version.minor}"
                    result.headers = _flat(resp.headers)
                    result.request_headers = _flat(resp.request_info.headers)
                    result.final_url = str(resp.url) if robots else url
                    if resp.status in _RETRY_STATUSES:
                        retry_after = parse_retry_after(
                            resp.headers.get("Retry-After"), self.clock.time()
                        )
                    if resp.status in _REDIRECT_STATUSES and not robots:
                        location = resp.headers.get("Location")
                        if location:
                            return result, location, retry_after
                    await self._read_body(resp, result, robots)
        except Exception as exc:
            result.error = error_code(exc)
            if result.error == "error":
                log.warning("fetch %s: unexpected %s: %s", url, type(exc).__name__, exc)
        return result, location, retry_after

    async def _read_body(
        self, resp: aiohttp.ClientResponse, result: FetchResult, robots: bool
    ) -> None:
        """Fill body/content_type/charset/truncated, or refuse the content type."""
        header = resp.headers.get("Content-Type", "")
        mime = header.split(";", 1)[0].strip().lower()
        limit = _ROBOTS_MAX_BYTES if robots else self.settings.max_body_size
        head = b""
        if not robots and not mime:
            head = await _read_upto(resp, _SNIFF_BYTES)
            mime = "text/html" if looks_like_html(head) else ""
        result.content_type = mime
        if not robots and self._types and mime not in self._types:
            # Not downloaded; only a successful answer counts as "filtered by type".
            if 200 <= resp.status < 300:
                result.error = "content-type"
            resp.close()
            return
        body = bytearray(head)
        while not limit or len(body) <= limit:
            chunk = await resp.content.read(_CHUNK)
            if not chunk:
                break
            body += chunk
        if limit and len(body) > limit:
            del body[limit:]
            result.truncated = True
            self.counters["truncated"] += 1
            resp.close()  # the rest is never read: do not reuse the connection
        result.body = bytes(body)
        if mime.startswith("text/") or "html" in mime or "xml" in mime:
            result.charset = detect_charset(header, result.body)


async def _read_upto(resp: aiohttp.ClientResponse, size: int) -> bytes:
    """Up to ``size`` bytes of the body (fewer only at its end)."""
    data = b""
    while len(data) < size:
        chunk = await resp.content.read(size - len(data))
        if not chunk:
            break
        data += chunk
    return data
