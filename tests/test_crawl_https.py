"""https through the replay server's CONNECT on a web generated here, so that the https
end-to-end path runs without ../shared/testweb (issue 9, item 17)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from focuscrawl.api import crawl
from focuscrawl.replay.process import ReplayProcess

SITE = "https://secure.example"
PAGES = {
    "/": '<a href="/a.html">a</a> <a href="b.html">b</a>',
    "/a.html": '<p>page a</p><a href="/b.html">b</a>',
    "/b.html": '<p>page b</p><a href="https://secure.example/">home</a>',
}


def _archive(path: Path) -> Path:
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for page_path, body_html in PAGES.items():
            body = f"<!DOCTYPE html><html><body>{body_html}</body></html>".encode()
            headers = StatusAndHeaders(
                "200 OK",
                [("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(body)))],
                protocol="HTTP/1.1",
            )
            record = writer.create_warc_record(
                SITE + page_path, "response", payload=io.BytesIO(body), length=len(body),
                http_headers=headers,
            )  # fmt: skip
            writer.write_record(record)
    return path


@pytest.mark.parametrize("trust_ca", [True, False], ids=["replay-ca-trusted", "untrusted"])
def test_https_crawl_of_a_generated_site(trust_ca: bool, tmp_path: Path) -> None:
    archive = _archive(tmp_path / "secure.warc.gz")
    with ReplayProcess([archive]) as replay:
        stats = crawl(
            [f"{SITE}/"], tmp_path / "run", max_pages=10, proxy=replay.proxy_url, delay=0.0,
            proxy_ca=replay.ca_cert_path if trust_ca else None,
        )  # fmt: skip
    lines = (tmp_path / "run" / "pages.jsonl").read_text(encoding="utf-8").splitlines()
    pages = [json.loads(line) for line in lines]
    if trust_ca:
        assert sorted(p["url"] for p in pages) == sorted(SITE + p for p in PAGES)
        assert all(p["status"] == 200 for p in pages)
        assert stats.fetched == 3
    else:
        # nothing fetched over an untrusted TLS tunnel, and said as it is (not as robots)
        assert pages == []
        assert stats.fetched == 0
        assert stats.counters["skipped_ssl"] == 1
