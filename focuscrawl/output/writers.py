"""Append-only outputs of a run: ``corpus.warc.gz`` and ``pages.jsonl``.

Both writers know their committed length. The engine writes a batch, calls
:meth:`sync` (flush + fsync) and stores the new offsets in the crawl DB in the
same transaction that marks the batch's URLs fetched. On resume each file is cut
back to the offset the DB remembers, so a record whose URL was not committed
disappears and is written again when the URL is fetched again: nothing lost,
nothing twice. (Each WARC record is its own gzip member, so a cut at a record
boundary leaves a valid archive.)
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import os
from dataclasses import fields
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from focuscrawl.types import FetchResult, PageRecord

_HOP_BY_HOP = frozenset(
    h.lower()
    for h in (
        "Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "TE", "Trailer",
        "Transfer-Encoding", "Upgrade", "Content-Encoding", "Content-Length",
    )
)  # fmt: skip


_RECORD_FIELDS = tuple(f.name for f in fields(PageRecord) if f.name != "extra")


class _AppendFile:
    """A binary file opened for appending, cut back to ``offset`` when resuming."""

    def __init__(self, path: Path, offset: int | None = None) -> None:
        self.path = path
        mode = "r+b" if path.exists() else "w+b"
        self._fh: IO[bytes] = open(path, mode)  # noqa: SIM115 - closed in close()
        if offset is not None:
            self._fh.truncate(offset)
        self._fh.seek(0, io.SEEK_END)

    @property
    def offset(self) -> int:
        return self._fh.tell()

    def sync(self) -> int:
        self._fh.flush()
        os.fsync(self._fh.fileno())
        return self._fh.tell()

    def close(self) -> None:
        if not self._fh.closed:
            self.sync()
            self._fh.close()


class WarcOutput(_AppendFile):
    """``corpus.warc.gz``: a request and a response record per fetched URL."""

    def __init__(self, path: Path, offset: int | None = None, *, software: str = "focuscrawl") -> None:
        super().__init__(path, offset)
        self._writer = WARCWriter(self._fh, gzip=True)
        if self.offset == 0:
            info = self._writer.create_warcinfo_record(
                path.name, {"software": software, "format": "WARC File Format 1.1"}
            )
            self._writer.write_record(info)

    @staticmethod
    def _http(result: FetchResult) -> tuple[str, StatusAndHeaders, StatusAndHeaders]:
        """The URL, the request head and the response head of an exchange."""
        url = result.final_url or result.url
        parts = urlsplit(url)
        target = parts.path + ("?" + parts.query if parts.query else "")
        req_headers = list(result.request_headers.items()) or [("Host", parts.netloc)]
        request = StatusAndHeaders(f"GET {target} HTTP/1.1", req_headers, is_http_request=True)
        headers = [(k, v) for k, v in result.headers.items() if k.lower() not in _HOP_BY_HOP]
        headers.append(("Content-Length", str(len(result.body))))
        status_line = f"{result.status} {result.reason}".strip()
        http = StatusAndHeaders(status_line, headers, protocol=f"HTTP/{result.http_version}")
        return url, request, http

    def write_revisit(self, result: FetchResult) -> None:
        """A re-crawl that found the payload unchanged: a ``revisit`` record
        (identical-payload-digest profile) instead of a second copy of the body."""
        url, request, http = self._http(result)
        digest = "sha1:" + base64.b32encode(hashlib.sha1(result.body).digest()).decode("ascii")
        revisit = self._writer.create_revisit_record(url, digest, url, "", http_headers=http)
        # WARC-Refers-To-Date is optional (WARC 1.1, 5.14): the first fetch's date is not kept
        revisit.rec_headers.remove_header("WARC-Refers-To-Date")
        req_record = self._writer.create_warc_record(
            url, "request", payload=io.BytesIO(b""), length=0, http_headers=request
        )
        self._writer.write_request_response_pair(req_record, revisit)

    def write(self, result: FetchResult) -> None:
        """Archive one HTTP exchange (its final URL after redirects)."""
        url, request, http = self._http(result)
        warc_headers: dict[str, str] = {}
        if result.truncated:
            warc_headers["WARC-Truncated"] = "length"
        response = self._writer.create_warc_record(
            url,
            "response",
            payload=io.BytesIO(result.body),
            length=len(result.body),
            http_headers=http,
            warc_headers_dict=warc_headers,
        )
        req_record = self._writer.create_warc_record(
            url, "request", payload=io.BytesIO(b""), length=0, http_headers=request
        )
        self._writer.write_request_response_pair(req_record, response)


class JsonlOutput(_AppendFile):
    """``pages.jsonl``: one JSON object per fetched URL, in fetch order."""

    def write(self, record: PageRecord | dict[str, Any]) -> None:
        if isinstance(record, PageRecord):
            # a flat dict by hand: dataclasses.asdict deep-copies and is 4x slower
            data = {name: getattr(record, name) for name in _RECORD_FIELDS}
            data.update(record.extra)
        else:
            data = record
        line = json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n"
        self._fh.write(line.encode("utf-8"))
