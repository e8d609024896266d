"""WARC and JSONL writers: readable records, honest headers, cut back on resume."""

from __future__ import annotations

import json
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator

from focuscrawl.output.writers import JsonlOutput, WarcOutput
from focuscrawl.types import FetchResult, PageRecord


def _result(url: str, body: bytes, **kw: object) -> FetchResult:
    return FetchResult(
        url=url, final_url=url, status=200, reason="OK", body=body, content_type="text/html",
        headers={"Content-Type": "text/html", "Content-Encoding": "gzip", "Content-Length": "12"},
        request_headers={"User-Agent": "focuscrawl-test", "Host": "h.example"}, **kw,  # type: ignore[arg-type]
    )  # fmt: skip


def test_warc_pairs_are_readable_and_headers_match_the_stored_body(tmp_path: Path) -> None:
    path = tmp_path / "c.warc.gz"
    out = WarcOutput(path)
    out.write(_result("http://h.example/a?x=1", b"<html>decoded body</html>"))
    out.write(_result("http://h.example/big", b"x" * 100, truncated=True))
    out.close()
    with open(path, "rb") as fh:
        records = [(r.rec_type, r.rec_headers, r.http_headers, r.content_stream().read()) for r in ArchiveIterator(fh)]
    # warcio writes each pair response first, as Heritrix and wget do
    assert [r[0] for r in records] == ["warcinfo", "response", "request", "response", "request"]
    _, req_headers, req_http, _ = records[2]
    assert req_http.protocol == "GET"
    assert req_http.statusline.startswith("/a?x=1")
    assert req_http.get_header("User-Agent") == "focuscrawl-test"
    _, rec_headers, http, body = records[1]
    assert rec_headers.get_header("WARC-Target-URI") == "http://h.example/a?x=1"
    assert body == b"<html>decoded body</html>"
    # the body is stored decoded: no Content-Encoding, and the length of what is stored
    assert http.get_header("Content-Encoding") is None
    assert http.get_header("Content-Length") == str(len(body))
    assert records[3][1].get_header("WARC-Truncated") == "length"
    assert req_headers.get_header("WARC-Concurrent-To") == rec_headers.get_header("WARC-Record-ID")


def test_resume_cuts_both_files_back_to_the_committed_offsets(tmp_path: Path) -> None:
    warc = WarcOutput(tmp_path / "c.warc.gz")
    pages = JsonlOutput(tmp_path / "p.jsonl")
    warc.write(_result("http://h.example/1", b"one"))
    pages.write(PageRecord("http://h.example/1", 200, 0, None, 1.0, None, 0.0, "text/html", 3, 0))
    committed = (warc.sync(), pages.sync())
    warc.write(_result("http://h.example/2", b"two"))  # written, never committed
    pages.write({"url": "http://h.example/2"})
    warc.close()
    pages.close()
    warc = WarcOutput(tmp_path / "c.warc.gz", committed[0])
    pages = JsonlOutput(tmp_path / "p.jsonl", committed[1])
    warc.write(_result("http://h.example/3", b"three"))
    pages.write(PageRecord("http://h.example/3", 200, 1, "http://h.example/1", 0.5, 0.2, 0.0, "text/html", 5, 0, extra={"lang_detected": "en"}))
    warc.close()
    pages.close()
    with open(tmp_path / "c.warc.gz", "rb") as fh:
        urls = [r.rec_headers.get_header("WARC-Target-URI") for r in ArchiveIterator(fh) if r.rec_type == "response"]
    assert urls == ["http://h.example/1", "http://h.example/3"]
    lines = [json.loads(line) for line in (tmp_path / "p.jsonl").read_text().splitlines()]
    assert [line["url"] for line in lines] == ["http://h.example/1", "http://h.example/3"]
    assert lines[1]["lang_detected"] == "en"
    assert "extra" not in lines[1]
