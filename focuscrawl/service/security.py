"""Who may talk to the server, and from which page.

- Loopback by default; another address needs a token (``--token`` or
  ``FOCUSCRAWL_TOKEN``), compared in constant time (:func:`hmac.compare_digest`),
  given as ``Authorization: Bearer TOKEN`` or as the cookie ``/login`` sets.
- The ``Host`` header must name the server itself (a DNS-rebinding page has its own
  name there); a request that changes something must come from the server's own
  pages (``Origin``, when given, names the server) and carry JSON, which a foreign
  form cannot send without a preflight this server never grants (CSRF).
- Every error is one line of JSON (``{"error": ..., "field": ...}``).
"""

from __future__ import annotations

import hmac
import ipaddress
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from aiohttp import web

from focuscrawl.service.search import SearchError
from focuscrawl.service.specs import RequestError

COOKIE = "focuscrawl_token"
TOKEN_ENV = "FOCUSCRAWL_TOKEN"
_SAFE = frozenset({"GET", "HEAD", "OPTIONS"})
_OPEN_PATHS = frozenset({"/login"})  # reachable without the token (to give it)

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the server to this machine.

    >>> is_loopback("127.0.0.1"), is_loopback("::1"), is_loopback("localhost"), is_loopback("0.0.0.0")
    (True, True, True, False)
    """
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def json_error(status: int, message: str, field_name: str | None = None) -> web.Response:
    body = {"error": message.splitlines()[0] if message else "error"}
    if field_name:
        body["field"] = field_name
    return web.Response(status=status, text=json.dumps(body, ensure_ascii=False) + "\n",
                        content_type="application/json")  # fmt: skip


@dataclass
class Guard:
    """The checks of every request: host names the server answers to, the token."""

    hosts: set[str] = field(default_factory=set)  # "127.0.0.1:8321", "localhost:8321", ...
    token: str | None = None

    def host_ok(self, request: web.Request) -> bool:
        return request.host.lower() in self.hosts

    def origin_ok(self, request: web.Request) -> bool:
        origin = request.headers.get("Origin")
        if origin is None:
            return True
        scheme, _, host = origin.partition("://")
        return scheme in ("http", "https") and host.lower() in self.hosts

    def token_ok(self, request: web.Request) -> bool:
        if self.token is None:
            return True
        given = request.headers.get("Authorization", "")
        if given.startswith("Bearer "):
            given = given[len("Bearer ") :]
        else:
            given = request.cookies.get(COOKIE, "")
        return self.matches(given)

    def matches(self, given: str) -> bool:
        """Whether ``given`` is the token, in constant time (no timing tells how close)."""
        return self.token is not None and hmac.compare_digest(given.encode(), self.token.encode())

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if not self.host_ok(request):
            return json_error(421, f"Host {request.host[:100]!r} is not this server's name")
        if request.method not in _SAFE:
            if not self.origin_ok(request):
                return json_error(403, "cross-origin request refused")
            # (a DELETE carries no body: a foreign page sends one only after a CORS
            # preflight, which the server never grants)
            if (
                request.path != "/login"
                and request.method != "DELETE"
                and request.content_type != "application/json"
            ):
                return json_error(415, "send JSON (Content-Type: application/json)")
        if request.path not in _OPEN_PATHS and not self.token_ok(request):
            if request.method == "GET" and not request.path.startswith(("/api", "/metrics")):
                raise web.HTTPSeeOther("/login")
            return json_error(401, "a token is needed (Authorization: Bearer TOKEN)")
        try:
            response = await handler(request)
        except RequestError as exc:
            return json_error(exc.status, exc.message, exc.field)
        except SearchError as exc:
            return json_error(400, str(exc), "q")
        except web.HTTPException as exc:
            if exc.status < 400:
                raise
            return json_error(exc.status, exc.reason)
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("X-Frame-Options", "DENY")
        response.headers.setdefault("Referrer-Policy", "same-origin")
        response.headers.setdefault(
            "Content-Security-Policy",
            "default-src 'self'; style-src 'self' 'unsafe-inline'; script-src 'self' 'unsafe-inline'; "
            "img-src 'self' data:; frame-ancestors 'none'",
        )
        return response


def hosts_for(host: str, port: int) -> set[str]:
    """The Host header values a server bound to ``host:port`` answers to: the loopback
    names, and the bound address unless it is a wildcard (0.0.0.0, ::), whose names
    are the operator's to give (``--allow-host``).

    >>> sorted(hosts_for("127.0.0.1", 8321))
    ['127.0.0.1:8321', '[::1]:8321', 'localhost:8321']
    >>> sorted(hosts_for("0.0.0.0", 80))
    ['127.0.0.1', '127.0.0.1:80', '[::1]', '[::1]:80', 'localhost', 'localhost:80']
    """
    names = {"127.0.0.1", "localhost", "[::1]"}
    if host not in ("0.0.0.0", "::", ""):
        names.add(f"[{host.lower()}]" if ":" in host else host.lower())
    return {f"{name}:{port}" for name in names} | (names if port == 80 else set())
