"""Small WARC archives written by the tests: one ``response`` record a page."""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter


def write_archive(
    path: Path, pages: Mapping[str, str], content_type: str = "text/html; charset=utf-8"
) -> Path:
    """``pages`` (URL -> HTML text) as a gzipped WARC of 200 answers at ``path``."""
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for url, text in pages.items():
            body = text.encode()
            headers = [("Content-Type", content_type), ("Content-Length", str(len(body)))]
            http = StatusAndHeaders("200 OK", headers, protocol="HTTP/1.1")
            record = writer.create_warc_record(
                url, "response", payload=io.BytesIO(body), length=len(body), http_headers=http
            )
            writer.write_record(record)
    return path
