"""Small handcrafted web sites on 127.0.0.1 for protocol tests.

``async with serve({"/": html("<p>hi")}) as site:`` starts an aiohttp server on a
free loopback port; every request is recorded server-side (``site.hits``, with
monotonic arrival times and the number of handlers running at once), so tests
check what the server saw rather than how fast the client was.
"""

from __future__ import annotations

import asyncio
import ssl
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import aiohttp
from aiohttp import web

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

__all__ = [
    "Handler",
    "Hit",
    "Meter",
    "Site",
    "html",
    "raw_answer",
    "redirect",
    "respond",
    "sequence",
    "serve",
    "serve_proxy",
    "serve_raw",
    "slow",
]


@dataclass
class Hit:
    """One request as the server saw it."""

    path: str  # path and query
    target: str  # the raw request target (absolute-form when sent to a proxy)
    at: float  # time.monotonic() on arrival
    headers: dict[str, str]
    peer: object = None  # the client's address: one per connection


@dataclass
class Meter:
    """Handlers running at once, possibly shared by several sites."""

    active: int = 0
    peak: int = 0

    def enter(self) -> None:
        self.active += 1
        self.peak = max(self.peak, self.active)

    def leave(self) -> None:
        self.active -= 1


@dataclass
class Site:
    port: int
    hits: list[Hit] = field(default_factory=list)
    meter: Meter = field(default_factory=Meter)
    scheme: str = "http"

    @property
    def host(self) -> str:
        """The host key of this site (``127.0.0.1:port``)."""
        return f"127.0.0.1:{self.port}"

    def url(self, path: str = "/") -> str:
        return f"{self.scheme}://{self.host}{path}"

    def paths(self) -> list[str]:
        return [hit.path for hit in self.hits]

    def times(self, path: str | None = None) -> list[float]:
        return [hit.at for hit in self.hits if path is None or hit.path == path]


def respond(
    body: bytes | str = b"",
    *,
    status: int = 200,
    content_type: str = "text/html; charset=utf-8",
    headers: dict[str, str] | None = None,
) -> Handler:
    """A handler answering always the same bytes (see ``raw_answer`` for no Content-Type)."""
    data = body.encode() if isinstance(body, str) else body

    async def handler(request: web.Request) -> web.StreamResponse:
        resp = web.Response(body=data, status=status, headers=headers)
        resp.headers["Content-Type"] = content_type
        return resp

    return handler


def html(text: str, status: int = 200) -> Handler:
    return respond(f"<!DOCTYPE html><html><body>{text}</body></html>", status=status)


def redirect(to: str, status: int = 302) -> Handler:
    return respond(b"", status=status, content_type="text/html", headers={"Location": to})


def sequence(handlers: Sequence[Handler]) -> Handler:
    """The n-th request gets the n-th handler; the last one repeats."""
    calls = 0

    async def handler(request: web.Request) -> web.StreamResponse:
        nonlocal calls
        chosen = handlers[min(calls, len(handlers) - 1)]
        calls += 1
        return await chosen(request)

    return handler


def slow(seconds: float, then: Handler) -> Handler:
    async def handler(request: web.Request) -> web.StreamResponse:
        await asyncio.sleep(seconds)
        return await then(request)

    return handler


@asynccontextmanager
async def serve(
    routes: Mapping[str, Handler],
    *,
    meter: Meter | None = None,
    fallback: Handler | None = None,
    ssl_context: ssl.SSLContext | None = None,
) -> AsyncIterator[Site]:
    """Serve ``routes`` (path with query, or path) on 127.0.0.1; ``fallback`` or 404 elsewhere.

    With ``ssl_context`` the site speaks https.
    """
    site = Site(port=0, meter=meter or Meter(), scheme="https" if ssl_context else "http")

    async def dispatch(request: web.Request) -> web.StreamResponse:
        site.hits.append(
            Hit(
                request.path_qs,
                request.raw_path,
                time.monotonic(),
                dict(request.headers),
                request.transport.get_extra_info("peername") if request.transport else None,
            )
        )
        site.meter.enter()
        try:
            handler = routes.get(request.path_qs) or routes.get(request.path) or fallback
            if handler is None:
                return web.Response(status=404, text="not found")
            return await handler(request)
        finally:
            site.meter.leave()

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", dispatch)
    runner = web.AppRunner(app, handler_cancellation=True, shutdown_timeout=0.1, access_log=None)
    await runner.setup()
    tcp = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=ssl_context)
    await tcp.start()
    site.port = runner.addresses[0][1]
    try:
        yield site
    finally:
        await runner.cleanup()


@asynccontextmanager
async def serve_proxy(upstreams: dict[str, Site]) -> AsyncIterator[Site]:
    """A forward proxy for absolute-form GETs: host name -> a local test site.

    Targets are looked up by name here, never resolved, so a test can use host
    names that do not exist (``http://example.test/``).
    """
    async with aiohttp.ClientSession() as client:

        async def forward(request: web.Request) -> web.StreamResponse:
            upstream = upstreams.get(request.url.host or "")
            if upstream is None or not request.raw_path.startswith("http"):
                return web.Response(status=502, text="unknown upstream")
            headers = {k: v for k, v in request.headers.items() if k.lower() != "host"}
            headers["Host"] = request.url.host or ""
            async with client.get(
                upstream.url(request.path_qs), headers=headers, allow_redirects=False
            ) as resp:
                body = await resp.read()
                out = web.Response(body=body, status=resp.status)
                for name in ("Content-Type", "Location", "Retry-After"):
                    if name in resp.headers:
                        out.headers[name] = resp.headers[name]
                return out

        async with serve({}, fallback=forward) as proxy:
            yield proxy


def raw_answer(
    head: str, body: bytes = b""
) -> Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]:
    """For serve_raw: send ``head`` (status line and headers, no blank line) and ``body``.

    aiohttp.web always adds a Content-Type; this is how to answer without one.
    """

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        lines = head.strip().replace("\r\n", "\n").split("\n")
        lines += [f"Content-Length: {len(body)}", "Connection: close"]
        writer.write("\r\n".join(lines).encode("latin-1") + b"\r\n\r\n" + body)
        await writer.drain()

    return answer


@asynccontextmanager
async def serve_raw(
    on_request: Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]],
) -> AsyncIterator[Site]:
    """A raw TCP server for answers aiohttp.web cannot give (resets, garbage)."""
    site = Site(port=0)

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            head = await reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            writer.close()
            return
        target = head.split(b" ", 2)[1].decode("latin-1") if b" " in head else ""
        site.hits.append(Hit(target, target, time.monotonic(), {}))
        try:
            await on_request(reader, writer)
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    site.port = server.sockets[0].getsockname()[1]
    try:
        yield site
    finally:
        server.close()
        await server.wait_closed()
