"""The HTTP/1.1 wire format as far as the replay proxy needs it.

Reading request heads (origin-form, absolute-form and CONNECT's authority-form
targets), writing response heads, and an abrupt connection reset.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from urllib.parse import urlsplit, urlunsplit

from focuscrawl.urls import normalize_escapes

# bodies are stored decoded (warcio undoes chunking and gzip), so the framing
# and coding headers of the archived response no longer describe them
DROPPED_HEADERS = frozenset(
    {
        "connection",
        "keep-alive",
        "proxy-connection",
        "transfer-encoding",
        "te",
        "trailer",
        "upgrade",
        "proxy-authenticate",
        "proxy-authorization",
        "content-encoding",
        "content-length",
    }
)
DEFAULT_PORTS = {"http": 80, "https": 443}
_MAX_HEADERS = 100


class BadRequest(Exception):
    """The client sent something that is not an HTTP/1.x request."""


@dataclass(slots=True)
class Request:
    method: str
    target: str
    version: str
    headers: dict[str, str]
    time: float

    def keep_alive(self) -> bool:
        tokens = {
            token.strip().lower()
            for name in ("connection", "proxy-connection")
            for token in self.headers.get(name, "").split(",")
        }
        if self.version == "HTTP/1.0":
            return "keep-alive" in tokens
        return "close" not in tokens


async def read_request(reader: asyncio.StreamReader) -> Request | None:
    """The next request head on the connection, or None at a clean end of stream."""
    try:
        line = await reader.readline()
        while line in (b"\r\n", b"\n"):  # RFC 9112 2.2: ignore blank lines before a request
            line = await reader.readline()
        if not line:
            return None
        started = time.time()
        parts = line.decode("latin-1").split()
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            raise BadRequest(line[:80])
        headers: dict[str, str] = {}
        for _ in range(_MAX_HEADERS):
            raw = await reader.readline()
            if not raw:
                return None
            if raw in (b"\r\n", b"\n"):
                return Request(parts[0].upper(), parts[1], parts[2], headers, started)
            name, colon, value = raw.decode("latin-1").partition(":")
            if not colon:
                raise BadRequest(raw[:80])
            headers[name.strip().lower()] = value.strip()
    except ValueError:  # a line longer than the reader's limit
        raise BadRequest(b"line too long") from None
    raise BadRequest(b"too many headers")


def canonical_url(url: str) -> str:
    """Scheme and host lower-cased, default port dropped, empty path as ``/``, and the
    percent-escapes of path and query in RFC 3986's normal form (6.2.2.1-2: hex digits
    upper-cased, unreserved characters decoded), as a crawler's canonical URLs have them.

    >>> canonical_url("HTTP://WWW.Example.ORG:80")
    'http://www.example.org/'
    >>> canonical_url("https://a.org:8443/X?y")
    'https://a.org:8443/X?y'
    >>> canonical_url("http://a.org/x%2fy%7Ez")
    'http://a.org/x%2Fy~z'
    """
    try:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        host = (parts.hostname or "").lower()
        port = parts.port
    except ValueError:
        return url
    netloc = host if port in (None, DEFAULT_PORTS.get(scheme)) else f"{host}:{port}"
    path, query = parts.path or "/", parts.query
    path, query = normalize_escapes(path), normalize_escapes(query)
    return urlunsplit((scheme, netloc, path, query, ""))


def host_of(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


def _encode_header(name: str, value: str) -> bytes:
    line = f"{name}: {value}".replace("\r", " ").replace("\n", " ")
    try:
        return line.encode("latin-1") + b"\r\n"
    except UnicodeEncodeError:
        return line.encode("utf-8") + b"\r\n"


def reason_phrase(status: int, reason: str = "") -> str:
    """``reason``, or the standard phrase of ``status`` when it is empty.

    >>> reason_phrase(404), reason_phrase(200, "Fine"), reason_phrase(599)
    ('Not Found', 'Fine', 'Unknown')
    """
    if reason:
        return reason
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


def head_fields(
    headers: Iterable[tuple[str, str]], length: int | None, keep: bool
) -> list[tuple[str, str]]:
    """The header fields sent: the archived ones without framing, then ours.

    >>> head_fields([("Content-Length", "9"), ("X", "1")], 3, False)
    [('X', '1'), ('Content-Length', '3'), ('Connection', 'close')]
    """
    out = [(name, value) for name, value in headers if name.lower() not in DROPPED_HEADERS]
    if length is not None:
        out.append(("Content-Length", str(length)))
    out.append(("Connection", "keep-alive" if keep else "close"))
    return out


def encode_head(status: int, reason: str, fields: Iterable[tuple[str, str]]) -> bytes:
    """Status line and header fields, ready for the wire (``reason`` filled in if empty)."""
    out = [f"HTTP/1.1 {status} {reason_phrase(status, reason)}\r\n".encode("latin-1", "replace")]
    out.extend(_encode_header(name, value) for name, value in fields)
    return b"".join(out) + b"\r\n"


def parse_field(line: bytes) -> tuple[str, str]:
    r"""One encoded header line read back as an HTTP client does (aiohttp: UTF-8 with
    surrogate escapes, value stripped), so a simulation sees what a live crawl sees.

    >>> parse_field(_encode_header("X-Name", " caf\xe9 "))
    ('X-Name', 'caf\udce9')
    """
    name, _, value = line.rstrip(b"\r\n").partition(b":")
    return (
        name.strip().decode("utf-8", "surrogateescape"),
        value.strip().decode("utf-8", "surrogateescape"),
    )


def client_view(
    status: int, reason: str, fields: Iterable[tuple[str, str]]
) -> tuple[str, list[tuple[str, str]]]:
    r"""The reason and header fields of a head as the client parses them from the wire.

    >>> client_view(200, "", [("A", "b\nc")])
    ('OK', [('A', 'b c')])
    """
    line = reason_phrase(status, reason).encode("latin-1", "replace")
    return (
        line.decode("utf-8", "surrogateescape").strip(),
        [parse_field(_encode_header(name, value)) for name, value in fields],
    )


def response_head(
    status: int, reason: str, headers: Sequence[tuple[str, str]], length: int | None, keep: bool
) -> bytes:
    return encode_head(status, reason, head_fields(headers, length, keep))


def reset_connection(writer: asyncio.StreamWriter) -> None:
    """Close abruptly: SO_LINGER 0 makes the kernel send RST instead of FIN."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()


#: What the replay web adds to its 502 for a host it does not hold (RFC 9209's
#: Proxy-Status): the crawler counts the URL as ``dns`` (no such host), as a DNS
#: failure behind a proxy that names it, not as a proxy that could not reach the host.
UNKNOWN_HOST = ("Proxy-Status", 'focuscrawl-replay; error=dns_error; details="not in the archive"')


def simple_response(
    status: int, text: str, keep: bool, extra: Sequence[tuple[str, str]] = ()
) -> tuple[bytes, int]:
    """A short text/plain answer of the proxy itself, and the length of its body."""
    body = f"{status} {HTTPStatus(status).phrase}: {text}\n".encode()
    headers = [("Content-Type", "text/plain; charset=utf-8"), *extra]
    return response_head(status, "", headers, len(body), keep) + body, len(body)


def request_url(request: Request, tunnel: str | None) -> str | None:
    """The absolute URL a request asks for; inside a CONNECT tunnel the scheme is https.

    >>> request_url(Request("GET", "/a?b", "HTTP/1.1", {"host": "x.org"}, 0.0), None)
    'http://x.org/a?b'
    >>> request_url(Request("GET", "/", "HTTP/1.1", {}, 0.0), "x.org:443")
    'https://x.org/'
    """
    target = request.target
    if target[:8].lower().startswith(("http://", "https://")):
        return target
    if not target.startswith("/"):
        return None
    authority = request.headers.get("host") or tunnel or ""
    if not authority:
        return None
    scheme = "https" if tunnel is not None else "http"
    if authority.endswith(f":{DEFAULT_PORTS[scheme]}"):
        authority = authority.rsplit(":", 1)[0]
    return f"{scheme}://{authority}{target}"


def host_table(urls: Iterable[str]) -> tuple[set[str], dict[str, str]]:
    """The host names of ``urls``, and ``canonical_url(u) -> u`` where the two differ.

    Most archived URLs are canonical already; a plain string test spots them
    and spares a ``urlsplit`` (the testweb has tens of thousands of URLs).

    >>> hosts, aliases = host_table(["http://a.org/x", "HTTP://B.org:80"])
    >>> sorted(hosts), aliases
    (['a.org', 'b.org'], {'http://b.org/': 'HTTP://B.org:80'})
    """
    hosts: set[str] = set()
    aliases: dict[str, str] = {}
    for url in urls:
        scheme, sep, rest = url.partition("://")
        netloc, slash, _ = rest.partition("/")
        if (
            sep
            and slash
            and scheme in DEFAULT_PORTS
            and netloc
            and netloc.islower()
            and not any(c in netloc for c in ":@?#[")
            and "%" not in url
        ):
            hosts.add(netloc)
            continue
        hosts.add(host_of(url))
        canon = canonical_url(url)
        if canon != url:
            aliases.setdefault(canon, url)
    hosts.discard("")
    return hosts, aliases
