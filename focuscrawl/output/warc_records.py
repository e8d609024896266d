"""WARC/1.1 records as bytes, each its own gzip member, without warcio's writer.

warcio builds a record through header objects, stream wrappers and a gzip
wrapper that flushes per write; for a crawler that archives every page, that
and zlib at level 9 were 40 % of the CPU per page. Here a record is one bytes
object (headers, HTTP head, payload, CRLF CRLF) compressed in one call (ISA-L's deflate, at
a low level), with the digests WARC 1.1 names (section 5.8
WARC-Block-Digest, 5.9 WARC-Payload-Digest) as base32 SHA-1, the form CDX
indexes and pywb expect. Everything here is a pure function of its arguments
(and the clock and a random record ID).

The bytes are what warcio would write for the same exchange (the header order
aside); warcio's ``ArchiveIterator`` and ``warcio check`` read them back.
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import time
import zlib
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from functools import lru_cache
from types import ModuleType
from urllib.parse import quote, urlsplit

from warcio.statusandheaders import StatusAndHeaders

from focuscrawl.types import FetchResult

_deflate: ModuleType
try:  # ISA-L's deflate: at its level 2, 4x faster than zlib at level 1, and smaller
    from isal import isal_zlib as _deflate

    #: the compressor's level (ISA-L: 0-3; zlib, without isal: 0-9)
    GZIP_LEVEL = 2
except ImportError:  # pragma: no cover - isal is a dependency; zlib still writes the same format
    _deflate = zlib
    GZIP_LEVEL = 1  # 40 % of level 9's time for ~13 % more bytes

WARC_VERSION = "WARC/1.1"
REVISIT_PROFILE = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
NOT_MODIFIED_PROFILE = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"

# Framing of the original transfer: the stored body is decoded and whole, so these
# would describe bytes the archive does not hold (Content-Length is written anew).
_HOP_BY_HOP = frozenset(
    h.lower()
    for h in (
        "Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "TE", "Trailer",
        "Transfer-Encoding", "Upgrade", "Content-Encoding", "Content-Length",
    )
)  # fmt: skip
_RESPONSE_TYPE = "application/http; msgtype=response"
_REQUEST_TYPE = "application/http; msgtype=request"
_END = b"\r\n\r\n"


# base32 (RFC 4648) of a 20-byte SHA-1 is 32 letters, 10 bits per two: one table
# lookup per pair, a third of the time of base64.b32encode (pure Python in 3.11)
_B32 = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
_B32_PAIRS = [_B32[i >> 5] + _B32[i & 31] for i in range(1024)]
_B32_SHIFTS = tuple(range(150, -1, -10))


def b32_digest(digest: bytes) -> str:
    """``base64.b32encode`` of a 20-byte digest, as text.

    >>> d = hashlib.sha1(b"abc").digest()
    >>> b32_digest(d) == base64.b32encode(d).decode("ascii")
    True
    """
    if len(digest) != 20:
        return base64.b32encode(digest).decode("ascii")
    n = int.from_bytes(digest, "big")
    return "".join([_B32_PAIRS[(n >> shift) & 1023] for shift in _B32_SHIFTS])


def sha1_b32(data: bytes) -> str:
    """``sha1:`` and the base32 SHA-1 of ``data`` (the WARC digest form).

    >>> sha1_b32(b"")
    'sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ'
    """
    return "sha1:" + b32_digest(hashlib.sha1(data).digest())


_EMPTY_DIGEST = sha1_b32(b"")


def warc_date(when: float) -> str:
    """WARC 1.1 date (section 5.4): UTC, with microseconds.

    >>> warc_date(1.5)
    '1970-01-01T00:00:01.500000Z'
    """
    second = int(when)
    return f"{_second(second)}.{int((when - second) * 1e6):06d}Z"


@lru_cache(maxsize=4)
def _second(second: int) -> str:
    return datetime.fromtimestamp(second, UTC).strftime("%Y-%m-%dT%H:%M:%S")


def record_id() -> str:
    """A random (version 4) UUID URN, what ``uuid.uuid4()`` gives, in half its time.

    >>> rid = record_id()
    >>> rid[:10], rid[24], rid[29] in "89ab", len(rid)
    ('<urn:uuid:', '4', True, 47)
    """
    b = bytearray(os.urandom(16))
    b[6] = (b[6] & 0x0F) | 0x40  # version 4
    b[8] = (b[8] & 0x3F) | 0x80  # the RFC 4122 variant
    h = b.hex()
    return f"<urn:uuid:{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}>"


def _head(first_line: str, headers: Iterable[tuple[str, str]]) -> bytes:
    """An HTTP head as warcio stores it: ASCII, non-ASCII values %-encoded (RFC 8187)."""
    pairs = list(headers)
    if not first_line.isascii():  # a reason phrase in another charset: kept readable
        first_line = first_line.encode("ascii", "replace").decode("ascii")
    text = first_line + "\r\n" + "".join(f"{k}: {v}\r\n" for k, v in pairs) + "\r\n"
    if text.isascii():
        return text.encode("ascii")
    protocol, _, rest = first_line.partition(" ")
    pairs = [(k, raw_bytes_quoted(v, _PRINTABLE)) for k, v in pairs]
    head: bytes = StatusAndHeaders(rest, pairs, protocol=protocol).to_ascii_bytes()
    return head


def raw_bytes_quoted(value: str, safe: str) -> str:
    """A header's ``value`` with its bytes that are no UTF-8 %-encoded as the server sent
    them (aiohttp hands them over as surrogate escapes, which warcio's encoding and the
    URL parser refuse), the characters of ``safe`` left as they are; any other value as
    it is. The WARC's headers and a redirect's Location (:meth:`Answer.location
    <focuscrawl.fetch.transport.Answer.location>`) both read it.

    >>> raw_bytes_quoted("text/html; charset=\\udcff", _PRINTABLE), raw_bytes_quoted("café", _PRINTABLE)
    ('text/html; charset=%FF', 'café')
    """
    if value.isascii():
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return quote(value.encode("utf-8", "surrogateescape"), safe=safe)
    return value


_PRINTABLE = "".join(map(chr, range(0x20, 0x7F)))  # a WARC header's ASCII, a type's "; " included


# The path and query of an http(s) URL as urlsplit finds them, for a URL without
# what urlsplit strips or checks (controls, spaces, IPv6 brackets, a user part)
_TARGET = re.compile(
    r"https?://[A-Za-z0-9.\-_:]*(/[^?#\x00-\x20\x7f]*)?(?:\?([^#\x00-\x20\x7f]*))?(?:#.*)?\Z",
    re.IGNORECASE | re.DOTALL,
)


def request_head(result: FetchResult) -> bytes:
    """The request line and headers that were sent for ``result``'s final URL.

    >>> request_head(FetchResult("http://h.org", "http://h.org?q=1#f"))
    b'GET /?q=1 HTTP/1.1\\r\\nHost: h.org\\r\\n\\r\\n'
    """
    url = result.final_url or result.url
    match = _TARGET.match(url) if result.request_headers else None
    if match is not None:  # the common case, without urlsplit
        path, query = match.groups()
        headers = list(result.request_headers.items())
    else:
        parts = urlsplit(url)
        path, query = parts.path, parts.query
        headers = list(result.request_headers.items()) or [("Host", parts.netloc)]
    target = (path or "/") + ("?" + query if query else "")
    return _head(f"GET {target} HTTP/1.1", headers)


def response_head(result: FetchResult) -> bytes:
    """The status line and headers of ``result``, framed for the decoded body it holds."""
    headers = [(k, v) for k, v in result.headers.items() if k.lower() not in _HOP_BY_HOP]
    headers.append(("Content-Length", str(len(result.body))))
    status_line = f"HTTP/{result.http_version} {result.status} {result.reason}".rstrip()
    return _head(status_line, headers)


def record(
    warc_type: str,
    fields: Iterable[tuple[str, str]],
    block: Iterable[bytes],
    *,
    content_type: str,
    rec_id: str | None = None,
) -> bytes:
    """One uncompressed record: the WARC head (type, ID, ``fields``, block digest,
    type, length) and the block's parts."""
    parts = list(block)
    length = sum(len(p) for p in parts)
    digest = hashlib.sha1()
    for part in parts:
        digest.update(part)
    head = [
        f"{WARC_VERSION}\r\nWARC-Type: {warc_type}\r\nWARC-Record-ID: {rec_id or record_id()}\r\n",
        *(f"{k}: {v}\r\n" for k, v in fields),
        "WARC-Block-Digest: sha1:",
        b32_digest(digest.digest()),
        f"\r\nContent-Type: {content_type}\r\nContent-Length: {length}\r\n\r\n",
    ]
    # WARC 1.1 section 4: header values are UTF-8 (an IRI as target, say)
    return b"".join([("".join(head)).encode("utf-8"), *parts, _END])


def gzip_member(data: bytes, level: int = GZIP_LEVEL) -> bytes:
    """``data`` as one complete gzip member (a record per member: cut-safe, seekable)."""
    packer = _deflate.compressobj(level, _deflate.DEFLATED, 31)
    member: bytes = packer.compress(data) + packer.flush()
    return member


def _request(result: FetchResult, url: str, date: str, concurrent_to: str) -> bytes:
    """The request record that goes with the response or revisit record ``concurrent_to``."""
    fields = [
        ("WARC-Target-URI", url), ("WARC-Date", date), ("WARC-Payload-Digest", _EMPTY_DIGEST),
        ("WARC-Concurrent-To", concurrent_to),
    ]  # fmt: skip
    return record("request", fields, (request_head(result),), content_type=_REQUEST_TYPE)


_RENDERED_TYPE = "text/html; charset=utf-8"


def exchange(result: FetchResult, *, level: int = GZIP_LEVEL, when: float | None = None) -> bytes:
    """A response record and its request record, each a gzip member, response first
    (as Heritrix, wget and warcio write them)."""
    url = result.final_url or result.url
    date = warc_date(time.time() if when is None else when)
    http = response_head(result)
    response_id = record_id()
    fields = [("WARC-Target-URI", url), ("WARC-Date", date)]
    if result.truncated:
        fields.append(("WARC-Truncated", "length"))  # WARC 1.1 section 5.13
    fields.append(("WARC-Payload-Digest", sha1_b32(result.body)))
    response = record("response", fields, (http, result.body), content_type=_RESPONSE_TYPE,
                      rec_id=response_id)  # fmt: skip
    out = gzip_member(response, level) + gzip_member(_request(result, url, date, response_id), level)
    if result.rendered is not None:  # the DOM a browser built from it (WARC 1.1 section 6.8)
        fields = [("WARC-Target-URI", url), ("WARC-Date", date), ("WARC-Refers-To", response_id),
                  ("WARC-Payload-Digest", sha1_b32(result.rendered))]  # fmt: skip
        out += gzip_member(record("conversion", fields, (result.rendered,), content_type=_RENDERED_TYPE), level)
    return out


def revisit(result: FetchResult, *, level: int = GZIP_LEVEL, when: float | None = None) -> bytes:
    """A re-crawl that found the same payload: a ``revisit`` record (identical-payload-digest
    profile, WARC 1.1 section 6.7.2) holding only the HTTP head, and its request."""
    url = result.final_url or result.url
    date = warc_date(time.time() if when is None else when)
    revisit_id = record_id()
    # WARC-Refers-To-Date is optional (section 5.14): the first fetch's date is not kept
    fields = [
        ("WARC-Target-URI", url), ("WARC-Date", date), ("WARC-Profile", REVISIT_PROFILE),
        ("WARC-Refers-To-Target-URI", url), ("WARC-Payload-Digest", sha1_b32(result.body)),
    ]  # fmt: skip
    response = record("revisit", fields, (response_head(result),), content_type=_RESPONSE_TYPE,
                      rec_id=revisit_id)  # fmt: skip
    return gzip_member(response, level) + gzip_member(_request(result, url, date, revisit_id), level)


def not_modified(
    result: FetchResult, refers_to_uri: str, refers_to_date: str, *, level: int = GZIP_LEVEL,
    when: float | None = None,
) -> bytes:
    """A conditional re-fetch answered ``304 Not Modified``: a ``revisit`` record
    (server-not-modified profile, WARC 1.1 section 6.7.3) holding the 304's HTTP head
    and no payload, pointing to the earlier record (WARC 1.1 sections 5.13 and 5.14
    WARC-Refers-To-Target-URI and -Date), and its request."""
    url = result.final_url or result.url
    date = warc_date(time.time() if when is None else when)
    revisit_id = record_id()
    fields = [
        ("WARC-Target-URI", url), ("WARC-Date", date), ("WARC-Profile", NOT_MODIFIED_PROFILE),
        ("WARC-Refers-To-Target-URI", refers_to_uri), ("WARC-Refers-To-Date", refers_to_date),
    ]  # fmt: skip
    response = record("revisit", fields, (response_head(result),), content_type=_RESPONSE_TYPE,
                      rec_id=revisit_id)  # fmt: skip
    return gzip_member(response, level) + gzip_member(_request(result, url, date, revisit_id), level)


def warcinfo(filename: str, info: Mapping[str, str], *, level: int = GZIP_LEVEL) -> bytes:
    """The warcinfo record a WARC file starts with (``application/warc-fields``)."""
    block = "".join(f"{k}: {v}\r\n" for k, v in info.items()).encode("utf-8")
    fields = [("WARC-Filename", filename), ("WARC-Date", warc_date(time.time()))]
    return gzip_member(record("warcinfo", fields, (block,), content_type="application/warc-fields"), level)
