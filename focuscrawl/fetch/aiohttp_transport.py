"""The live transport: one GET over aiohttp's sockets (directly or through a proxy).

Host names are resolved through :class:`FilteringResolver`, so the addresses
checked are the addresses connected to. With a proxy no target name is
resolved here; the resolver then only sees the proxy's own name, which is
allowed whatever it resolves to (the user configured it).

Through an HTTP proxy, a plain ``http://`` request is an absolute-form GET sent
to the proxy, and any open connection to the proxy can carry it, whatever the
target host (Scrapy, curl and browsers share them so). aiohttp keys its pool by
the target host, so a crawl of many hosts (1,000 new hosts in 2,000 WebKB pages,
each with its robots.txt) opened a connection to the proxy for every host:
:class:`ProxyPooledRequest` keys such requests by the proxy alone. The
connector's per-host limit then has no target host to count, and is off with a
proxy: :class:`~focuscrawl.fetch.politeness.HostPoliteness` holds every host to
``fetch.per_host`` anyway. ``https://`` targets keep a tunnel (CONNECT) per host.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from urllib.parse import urlsplit

import aiohttp
from aiohttp.abc import AbstractResolver
from aiohttp.client_reqrep import ConnectionKey
from aiohttp.http_exceptions import ContentEncodingError
from w3lib.url import safe_url_string
from yarl import URL

from focuscrawl.exceptions import ConfigError
from focuscrawl.fetch.addresses import AddressPolicy, BlockedAddressError, FilteringResolver
from focuscrawl.fetch.transport import (
    SEND_GATE,
    Answer,
    TransportError,
    flat_headers,
    gateway_error,
)
from focuscrawl.settings import FetchSettings
from focuscrawl.urls import is_plain_url

__all__ = ["AiohttpTransport", "ProxyPooledRequest", "error_code"]

log = logging.getLogger(__name__)


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
    if isinstance(exc, aiohttp.TooManyRedirects):
        return "too-many-redirects"
    if isinstance(exc, aiohttp.ClientHttpProxyError):  # "dns" if its Proxy-Status says so
        return gateway_error(exc.headers or {})
    if isinstance(exc, aiohttp.ClientConnectorError):
        return "connect"
    if isinstance(exc, aiohttp.ClientPayloadError) and isinstance(exc.__cause__, ContentEncodingError):
        return "content-encoding"  # a body not in its Content-Encoding: the server's, sent again alike
    if isinstance(
        exc,
        aiohttp.ServerDisconnectedError
        | aiohttp.ClientPayloadError
        | aiohttp.ClientOSError
        | ConnectionError,
    ):
        return "reset"
    if isinstance(exc, aiohttp.InvalidURL | ValueError):  # yarl's port, IPv6 or IDNA error
        return "bad-url"
    if isinstance(exc, aiohttp.ClientResponseError):
        return "protocol"  # a malformed HTTP response
    return "connect" if isinstance(exc, OSError) else "error"



async def _at_send(*_: object) -> None:
    """:data:`~focuscrawl.fetch.transport.SEND_GATE`, awaited with the connection in hand."""
    gate = SEND_GATE.get()
    if gate is not None:
        await gate()


def _gated() -> aiohttp.TraceConfig:
    """The trace that awaits the send gate: every request either reuses a connection or
    makes one, and is written right after."""
    trace = aiohttp.TraceConfig()
    trace.on_connection_reuseconn.append(_at_send)
    trace.on_connection_create_end.append(_at_send)
    return trace

class _StreamBody:
    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response

    async def read(self, size: int) -> bytes:
        return await self._response.content.read(size)

    def abandon(self) -> None:
        self._response.close()  # the rest is never read: do not reuse the connection


class ProxyPooledRequest(aiohttp.ClientRequest):
    """A request whose plain-HTTP proxied exchanges share the proxy's connections."""

    @property
    def connection_key(self) -> ConnectionKey:
        key = super().connection_key
        if self.proxy is not None and not key.is_ssl:
            return key._replace(host="", port=None)  # the proxy's connections: any target
        return key


class AiohttpTransport:
    """GETs over one aiohttp session (connection pool, TLS, resolver)."""

    def __init__(
        self,
        settings: FetchSettings,
        *,
        ssl_ca_file: str | None = None,
        resolver: AbstractResolver | None = None,
    ) -> None:
        self.settings = settings
        self._ssl_ca_file = ssl_ca_file or settings.tls_ca_file
        self._inner_resolver = resolver
        proxy_host = urlsplit(settings.proxy).hostname if settings.proxy else None
        # the resolver sees target names (no proxy) or only the proxy's name
        self._policy = AddressPolicy(
            settings.allow_private, hosts=(proxy_host,) if proxy_host else ()
        )
        self._session: aiohttp.ClientSession | None = None
        self._resolver: FilteringResolver | None = None

    async def __aenter__(self) -> AiohttpTransport:
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
            # no cap of its own: HostPoliteness holds the requests under way to
            # fetch.concurrency, and a straggler's connection (a hung request, a slow
            # body) must not take a moving request's place here either
            limit=0,
            # through a proxy the pool has no target host to count (see the module doc)
            limit_per_host=0 if s.proxy else s.per_host,
            ttl_dns_cache=300,
            resolver=self._resolver,
            ssl=ssl_context,
        )
        self._session = aiohttp.ClientSession(
            connector=connector,
            timeout=aiohttp.ClientTimeout(
                total=None, sock_connect=s.connect_timeout or None, sock_read=s.read_timeout or None
            ),
            cookie_jar=aiohttp.DummyCookieJar(),  # stateless: what is recorded is what is sent
            trust_env=False,  # only the configured proxy, never one from the environment
            request_class=ProxyPooledRequest,
            trace_configs=[_gated()],
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
        if self._resolver is not None:
            await self._resolver.close()
            self._resolver = None

    @asynccontextmanager
    async def request(
        self,
        url: str,
        headers: Mapping[str, str],
        *,
        proxy: str | None = None,
        time_limit: float | None = None,
    ) -> AsyncIterator[Answer]:
        if self._session is None:
            raise ConfigError("fetch: the transport is not open (use `async with`)")
        answered = False  # a ValueError before the answer is the URL's (yarl), after it is not
        try:
            # one deadline for the whole exchange: a body trickling in byte by
            # byte satisfies sock_read forever, never this
            async with (
                asyncio.timeout(time_limit),
                self._session.get(
                    # a normalised URL is safe as it is (w3lib is ~10 µs a URL)
                    URL(url if is_plain_url(url) else safe_url_string(url), encoded=True),
                    headers=headers,
                    allow_redirects=False,  # every hop is checked above, robots.txt included
                    proxy=proxy,
                ) as resp,
            ):
                version, answered = resp.version, True
                yield Answer(
                    status=resp.status,
                    reason=resp.reason or "",
                    body=_StreamBody(resp),
                    headers=list(resp.headers.items()),
                    http_version=f"{version.major}.{version.minor}" if version else "1.1",
                    request_headers=flat_headers(resp.request_info.headers),
                )
        except TransportError:
            raise
        except Exception as exc:
            code = "protocol" if answered and isinstance(exc, ValueError) else error_code(exc)
            if code == "error" or (code == "protocol" and not isinstance(exc, aiohttp.ClientError)):
                log.warning("fetch %s: unexpected %s: %s", url, type(exc).__name__, exc)
            raise TransportError(code, str(exc)) from exc
