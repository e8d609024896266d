"""The response records of a crawl's WARC file, their target URL and offset only.

The crawl writes one gzip member per record (:mod:`focuscrawl.output.warc_records`),
so a record's offset is its member's, and only the WARC header block is needed to
know its type and target: each member is inflated by zlib (to find where it ends),
its first bytes parsed, the rest dropped. warcio's iterator parses every record's
HTTP headers line by line in Python too, which made a 50,000-page WARC a 4.8 s scan
(and a fifth of the search index's CPU); this takes 1.7 s. A file cut in the middle of
a record (a crawl killed while writing it) ends the scan there; bytes that are not a
gzipped WARC record are an :class:`~focuscrawl.exceptions.ArchiveError`.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

from focuscrawl.exceptions import ArchiveError

__all__ = ["Answered", "answers", "page_offsets", "read_payload", "response_offsets"]

_NOT_MODIFIED = "server-not-modified"


@dataclass(frozen=True, slots=True)
class Answered:
    """One archived answer of a crawl's WARC: what a re-visit of its URL needs."""

    uri: str  # WARC-Target-URI
    date: str  # WARC-Date
    etag: str | None
    last_modified: str | None
    digest: str | None  # WARC-Payload-Digest (None: a 304, no payload)
    not_modified: bool  # a revisit record of a 304 (it refers to an earlier one)
    status: int = 0  # the HTTP status (0: none could be read)


def answers(path: Path, end: int | None = None) -> Iterator[Answered]:
    """The response and revisit records of the WARC ``path`` (up to offset ``end``: a
    crawl's committed length), in file order, read one at a time (never the whole file).
    A file cut inside a record ends the scan there."""
    with open(path, "rb") as fh:
        try:
            records = ArchiveIterator(fh)
            for rec in records:
                if end is not None and records.get_record_offset() >= end:
                    return
                if rec.rec_type not in ("response", "revisit"):
                    continue
                head = rec.rec_headers
                http = rec.http_headers
                profile = head.get_header("WARC-Profile") or ""
                yield Answered(
                    uri=head.get_header("WARC-Target-URI") or "",
                    date=head.get_header("WARC-Date") or "",
                    etag=http.get_header("ETag") if http is not None else None,
                    last_modified=http.get_header("Last-Modified") if http is not None else None,
                    digest=head.get_header("WARC-Payload-Digest"),
                    not_modified=profile.endswith(_NOT_MODIFIED),
                    status=_status(http.get_statuscode() if http is not None else None),
                )
        except (ArchiveLoadFailed, EOFError, OSError, ValueError):
            return  # a record cut short (a crawl killed while writing it): the scan ends there


def _status(code: str | None) -> int:
    """An HTTP status line's code as a number (0: none, or not a number)."""
    return int(code) if code is not None and code.isdigit() else 0


_CHUNK = 1 << 16  # compressed bytes read at a time, and inflated bytes made at a time
_HEAD = 1 << 16  # the largest WARC header block looked at


_TYPE = re.compile(rb"\r\nWARC-Type:[ \t]*([^\r]*)", re.IGNORECASE)
_TARGET = re.compile(rb"\r\nWARC-Target-URI:[ \t]*([^\r]*)", re.IGNORECASE)


def _fields(head: bytes) -> tuple[bytes, str] | None:
    """(WARC-Type, WARC-Target-URI) of a header block; None if it is not a WARC record
    (the first of each, found by a regular expression: a third of the CPU of a loop
    over the block's lines, the index's and the export's scan of every record)."""
    end = head.find(b"\r\n\r\n")
    if end < 0 or not head.startswith(b"WARC/"):
        return None
    block = head[: end + 2]  # each line ends in CRLF: a field's value ends there
    kind = _TYPE.search(block)
    target = _TARGET.search(block)
    return (
        kind.group(1).strip() if kind else b"",
        target.group(1).strip().decode("utf-8", "replace") if target else "",
    )


def _members(path: Path, start: int = 0, end: int | None = None) -> Iterator[tuple[bytes, str, int]]:
    """(WARC-Type, target URL, offset) of each record of the WARC ``path`` that starts
    in ``start`` .. ``end`` (``start`` the offset of a record), in file order."""
    with open(path, "rb") as fh:
        fh.seek(start)
        pending = b""  # compressed bytes read and not yet inflated
        offset = start  # of the member about to be read
        while end is None or offset < end:
            inflate = zlib.decompressobj(31)
            head = b""
            data = pending
            used = 0  # compressed bytes of this member
            while not inflate.eof:
                if not data:
                    data = fh.read(_CHUNK)
                    if not data:
                        return  # the end of the file (or a member cut short)
                try:
                    out = inflate.decompress(data, _CHUNK)
                except zlib.error as exc:
                    raise ArchiveError(f"{path}: not a readable WARC at offset {offset:,} ({exc})") from None
                rest = inflate.unconsumed_tail if not inflate.eof else b""
                used += len(data) - len(rest) - (len(inflate.unused_data) if inflate.eof else 0)
                data = rest
                if len(head) < _HEAD and b"\r\n\r\n" not in head:
                    head += out
            pending = inflate.unused_data + data
            fields = _fields(head)
            if fields is None:
                raise ArchiveError(f"{path}: not a WARC record at offset {offset:,}")
            yield fields[0], fields[1], offset
            offset += used


def response_offsets(path: Path, start: int = 0, end: int | None = None) -> Iterator[tuple[str, int]]:
    """(target URL, offset) of each response record of the WARC ``path`` that starts in
    ``start`` .. ``end`` (``start`` the offset of a record), in file order.

    >>> import gzip, tempfile
    >>> def record(kind, url):
    ...     return gzip.compress(f"WARC/1.1\\r\\nWARC-Type: {kind}\\r\\nWARC-Target-URI: {url}"
    ...                          "\\r\\n\\r\\nbody\\r\\n\\r\\n".encode())
    >>> first = record("request", "http://a/")
    >>> with tempfile.NamedTemporaryFile(suffix=".warc.gz") as fh:
    ...     _ = fh.write(first + record("response", "http://a/")); fh.flush()
    ...     list(response_offsets(Path(fh.name))) == [("http://a/", len(first))]
    True
    """
    for kind, target, offset in _members(path, start, end):
        if kind == b"response":
            yield target, offset


def page_offsets(path: Path, start: int = 0, end: int | None = None) -> Iterator[tuple[str, int, int | None]]:
    """(target URL, offset of its response record, offset of the ``conversion`` record
    holding the DOM a browser built from it, or None) of each response record of the
    WARC ``path``, in file order: a rendered page's conversion record follows its
    response and request (:func:`~focuscrawl.output.warc_records.exchange`).

    >>> import gzip, tempfile
    >>> def record(kind, url):
    ...     return gzip.compress(f"WARC/1.1\\r\\nWARC-Type: {kind}\\r\\nWARC-Target-URI: {url}"
    ...                          "\\r\\n\\r\\nbody\\r\\n\\r\\n".encode())
    >>> members = [record(*r) for r in (("response", "http://a/"), ("request", "http://a/"),
    ...            ("conversion", "http://a/"), ("response", "http://b/"), ("request", "http://b/"))]
    >>> at = [sum(map(len, members[:n])) for n in range(len(members))]
    >>> with tempfile.NamedTemporaryFile(suffix=".warc.gz") as fh:
    ...     _ = fh.write(b"".join(members)); fh.flush()
    ...     list(page_offsets(Path(fh.name))) == [("http://a/", 0, at[2]), ("http://b/", at[3], None)]
    True
    """
    pending: tuple[str, int] | None = None  # the last response, its conversion not seen yet
    for kind, target, offset in _members(path, start, end):
        if kind == b"response":
            if pending is not None:
                yield *pending, None
            pending = target, offset
        elif kind == b"conversion" and pending is not None and pending[0] == target:
            yield *pending, offset
            pending = None
    if pending is not None:
        yield *pending, None


def _header(block: bytes, names: tuple[bytes, ...]) -> dict[bytes, bytes]:
    """The first value of each of ``names`` (lower case) in a header block's lines after
    its first."""
    found: dict[bytes, bytes] = {}
    for line in block.split(b"\r\n")[1:]:
        name, colon, value = line.partition(b":")
        name = name.strip().lower()
        if colon and name in names and name not in found:
            found[name] = value.strip()
    return found


def read_payload(fh: BinaryIO, offset: int) -> tuple[str, bytes] | None:
    """(Content-Type, body) of the response record at ``offset`` of the open WARC ``fh``
    (or of a ``conversion`` record there: a rendered page's DOM, its WARC Content-Type),
    a record as the crawl writes them (:mod:`focuscrawl.output.warc_records`: one gzip
    member, its HTTP body stored decoded and whole), read with zlib alone: a tenth of
    warcio's CPU, which parses the record through Python-level buffers. None where the
    record is not such a record (cut short, not gzipped, no Content-Length, a body with
    a transfer or content encoding): warcio reads it then.

    >>> import gzip, tempfile
    >>> http = b"HTTP/1.1 200 OK\\r\\nContent-Type: text/html\\r\\n\\r\\n<p>hi</p>"
    >>> head = ("WARC/1.1\\r\\nWARC-Type: response\\r\\nContent-Type: application/http; msgtype=response"
    ...         f"\\r\\nContent-Length: {len(http)}\\r\\n\\r\\n")
    >>> with tempfile.NamedTemporaryFile(suffix=".warc.gz") as fh:
    ...     _ = fh.write(gzip.compress(head.encode() + http + b"\\r\\n\\r\\n")); fh.flush()
    ...     read_payload(fh, 0)
    ('text/html', b'<p>hi</p>')
    """
    inflate = zlib.decompressobj(31)
    parts = []
    fh.seek(offset)
    while not inflate.eof:
        data = fh.read(_CHUNK)
        if not data:
            return None
        try:
            parts.append(inflate.decompress(data))
        except zlib.error:
            return None
    head, sep, rest = b"".join(parts).partition(b"\r\n\r\n")
    if not sep or not head.startswith(b"WARC/"):
        return None
    fields = _header(head, (b"warc-type", b"content-type", b"content-length"))
    try:
        length = int(fields.get(b"content-length", b""))
    except ValueError:
        return None
    if fields.get(b"warc-type") == b"conversion" and len(rest) >= length:  # a DOM a browser built
        return fields.get(b"content-type", b"").decode("latin-1"), rest[:length]
    if fields.get(b"warc-type") != b"response" or not fields.get(b"content-type", b"").startswith(b"application/http"):
        return None
    http, sep, body = rest[:length].partition(b"\r\n\r\n")
    if not sep or not http.startswith(b"HTTP/") or len(rest) < length:
        return None
    headers = _header(http, (b"content-type", b"transfer-encoding", b"content-encoding"))
    if b"transfer-encoding" in headers or b"content-encoding" in headers:
        return None
    raw = headers.get(b"content-type", b"")
    try:
        content_type = raw.decode("utf-8")
    except UnicodeDecodeError:
        content_type = raw.decode("latin-1")
    return content_type, body
