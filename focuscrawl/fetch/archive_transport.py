"""The simulation transport: answers from WARC archives, no sockets, no sleeping.

Each GET is answered by :meth:`ArchiveWeb.answer`, the function the replay
server answers with, and is then shaped as an HTTP client would have parsed it
from the server's bytes (same header spelling, framing headers, request
headers), so a crawl that simulates sees what a crawl through ``focuscrawl
replay`` sees. The one answer a live crawl gets differently is an ``https``
URL on an unknown host: the proxy refuses the CONNECT, which the live
transport reports as the error ``"dns"`` (the refusal's ``Proxy-Status`` says
``dns_error``: :func:`~focuscrawl.fetch.transport.gateway_error`); so does this one.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from urllib.parse import urlsplit

from w3lib.url import safe_url_string
from yarl import URL

from focuscrawl.fetch.transport import Answer, BytesBody, TransportError, gateway_error
from focuscrawl.replay.answer import ArchiveWeb
from focuscrawl.replay.archive import ArchiveIndex
from focuscrawl.replay.wire import DEFAULT_PORTS, UNKNOWN_HOST, client_view

__all__ = ["ArchiveTransport", "wire_url"]


def wire_url(url: str) -> tuple[str, str]:
    """(the URL the replay server reconstructs from the request, the Host header sent).

    Through a proxy an ``http`` URL is sent whole (absolute form), an ``https``
    one as a path inside a CONNECT tunnel, with the authority in ``Host``.

    >>> wire_url("http://a.org/x y")
    ('http://a.org/x%20y', 'a.org')
    >>> wire_url("https://a.org:443/p?q")
    ('https://a.org/p?q', 'a.org')
    """
    target = URL(safe_url_string(url), encoded=True)
    host = target.host_port_subcomponent or ""
    if target.scheme != "https":
        return str(target), host
    authority = host.removesuffix(f":{DEFAULT_PORTS['https']}")
    return f"https://{authority}{target.raw_path_qs}", host


class ArchiveTransport:
    """A :class:`~focuscrawl.fetch.transport.Transport` over an :class:`ArchiveWeb`."""

    def __init__(self, web: ArchiveWeb) -> None:
        self.web = web

    @classmethod
    def from_archives(cls, archives: Sequence[Path | str]) -> ArchiveTransport:
        """Index the archives (an :class:`~focuscrawl.exceptions.ArchiveError` if one is bad)."""
        return cls(ArchiveWeb(ArchiveIndex.build(archives)))

    async def __aenter__(self) -> ArchiveTransport:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    @asynccontextmanager
    async def request(
        self,
        url: str,
        headers: Mapping[str, str],
        *,
        proxy: str | None = None,
        time_limit: float | None = None,
    ) -> AsyncIterator[Answer]:
        # no proxy is needed and no time passes: proxy and time_limit have nothing to do
        try:
            asked, host_header = wire_url(url)
            parts = urlsplit(asked)
            host = (parts.hostname or "").lower()
        except ValueError as exc:
            raise TransportError("bad-url", str(exc)) from None
        if parts.scheme == "https" and not self.web.knows_host(host):
            raise TransportError(gateway_error([UNKNOWN_HOST]), f"502 unknown host {host} (CONNECT refused)")
        conditional = {k.lower(): v for k, v in headers.items() if k.lower().startswith("if-")}
        answer = await self.web.answer(asked, in_thread=False, conditional=conditional or None)
        reason, fields = client_view(answer.status, answer.reason, answer.headers)
        yield Answer(
            status=answer.status,
            reason=reason,
            body=BytesBody(answer.body),
            headers=fields,
            http_version="1.1",
            request_headers={"Host": host_header, **headers},
        )
