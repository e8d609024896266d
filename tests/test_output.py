"""WARC and JSONL writers: readable records, honest headers, cut back on resume."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import re
from pathlib import Path

from warcio.archiveiterator import ArchiveIterator
from warcio.statusandheaders import StatusAndHeaders

from focuscrawl.output.warc_records import request_head, response_head
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
    # each pair is written response first, as Heritrix and wget do
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


def _b32_sha1(data: bytes) -> str:
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode()


def test_warc_digests_check_out_with_warcio(tmp_path: Path) -> None:
    path = tmp_path / "c.warc.gz"
    out = WarcOutput(path)
    bodies = [f"<html>page {i} {'x' * (i * 997)}</html>".encode() for i in range(40)]
    for i, body in enumerate(bodies):
        out.write(_result(f"http://h.example/{i}", body))
        if i == 20:
            out.write_revisit(_result("http://h.example/3", bodies[3]))
    committed = out.sync()
    out.close()
    assert committed == path.stat().st_size  # every record given is on disk at the sync
    with open(path, "rb") as fh:
        records = []
        for rec in ArchiveIterator(fh, check_digests="raise"):  # a wrong digest raises
            records.append((rec.rec_type, rec.rec_headers, rec.content_stream().read()))
    assert [r[0] for r in records[:3]] == ["warcinfo", "response", "request"]
    assert len(records) == 1 + 2 * 41
    responses = [r for r in records if r[0] == "response"]
    # in the order given
    assert [r[1].get_header("WARC-Target-URI") for r in responses] == [f"http://h.example/{i}" for i in range(40)]
    for (_, headers, body), expected in zip(responses, bodies, strict=True):
        assert body == expected
        assert headers.get_header("WARC-Payload-Digest") == _b32_sha1(expected)
        assert headers.get_header("WARC-Date").endswith("Z")
    revisit = next(r for r in records if r[0] == "revisit")
    assert revisit[1].get_header("WARC-Profile") == "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
    assert revisit[1].get_header("WARC-Payload-Digest") == _b32_sha1(bodies[3])
    assert revisit[2] == b""  # the head only: the payload is the first fetch's
    assert gzip.decompress(path.read_bytes()).count(b"WARC/1.1\r\n") == len(records)


def test_warc_records_block_digest_covers_http_head_and_body(tmp_path: Path) -> None:
    path = tmp_path / "c.warc.gz"
    out = WarcOutput(path)
    out.write(_result("http://h.example/a", b"<p>body</p>"))
    out.close()
    raw = gzip.decompress(path.read_bytes())
    response = raw.split(b"WARC/1.1\r\n")[2]  # after the warcinfo record
    head, block = response.split(b"\r\n\r\n", 1)
    block = block[: -len(b"\r\n\r\n")]
    length = int(re.search(rb"Content-Length: (\d+)", head).group(1))  # type: ignore[union-attr]
    assert length == len(block)
    assert block.startswith(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 11\r\n\r\n")
    assert block.endswith(b"<p>body</p>")
    assert b"WARC-Block-Digest: " + _b32_sha1(block).encode() in head


def test_http_heads_are_what_warcio_would_store() -> None:
    # a non-ASCII header value is %-encoded as warcio does (RFC 8187); the rest is plain
    result = _result("http://h.example/a?x=1", b"abc")
    result.headers["Content-Disposition"] = 'attachment; filename="résumé.html"'
    result.headers["X-Plain"] = "v"
    theirs = StatusAndHeaders(
        "200 OK",
        [("Content-Type", "text/html"), ("Content-Disposition", 'attachment; filename="résumé.html"'),
         ("X-Plain", "v"), ("Content-Length", "3")],
        protocol="HTTP/1.1",
    )  # fmt: skip
    assert response_head(result) == theirs.to_ascii_bytes()
    request = StatusAndHeaders("GET /a?x=1 HTTP/1.1", list(result.request_headers.items()), is_http_request=True)
    assert request_head(result) == request.to_ascii_bytes()


def test_request_line_targets_are_what_urlsplit_finds() -> None:
    # the request line's target (path and query) without urlsplit for plain URLs,
    # and with it for the rest: written out by hand, the same either way
    cases = {
        "http://h.org": "/",
        "http://h.org?": "/",
        "http://h.org/a?#x": "/a",
        "HTTP://H.org/%41?b=%20#f": "/%41?b=%20",
        "http://h.org:81/a/b;p?q=1&r=2": "/a/b;p?q=1&r=2",
        "https://h.org/#?x": "/",
        "http://h.org/a#b?c": "/a",
        "http://u@h.org/x?y": "/x?y",
        "http://[::1]:8080/x": "/x",
    }
    for url, target in cases.items():
        for sent in ({"Host": "h.org"}, {}):
            head = request_head(FetchResult(url, url, request_headers=dict(sent)))
            assert head.split(b" ")[1] == target.encode(), (url, sent)


def test_a_304_is_archived_after_the_records_before_it_with_no_body(tmp_path: Path) -> None:
    path = tmp_path / "n.warc.gz"
    out = WarcOutput(path)
    out.write(_result("http://h.example/a", b"<html>a</html>"))
    out.write_not_modified(_result("http://h.example/a", b""), "http://h.example/a", "2026-01-02T03:04:05Z")
    out.close()
    with open(path, "rb") as fh:
        records = [(r.rec_type, r.rec_headers, r.content_stream().read()) for r in ArchiveIterator(fh)]
    assert [r[0] for r in records] == ["warcinfo", "response", "request", "revisit", "request"]
    revisit = records[3]
    assert revisit[1].get_header("WARC-Profile") == "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
    assert revisit[1].get_header("WARC-Refers-To-Date") == "2026-01-02T03:04:05Z"
    assert revisit[2] == b""
