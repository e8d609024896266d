"""Sitemaps read as they arrive (issue 36, item 2): urlset and index files, gzip,
plain text, the sitemaps.org limits, malformed files (parse.sitemaps)."""

from __future__ import annotations

import gzip

import pytest

from focuscrawl.parse.sitemaps import SitemapEntry, SitemapReader

NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'


def _urlset(n: int, extra: str = "") -> bytes:
    urls = "".join(f"<url><loc> http://a.org/p{i}.html </loc>{extra}</url>" for i in range(n))
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset {NS}>{urls}</urlset>'.encode()


def _read(body: bytes, piece: int = 7, **limits: int) -> tuple[list[SitemapEntry], SitemapReader]:
    reader = SitemapReader(**limits)
    out: list[SitemapEntry] = []
    for i in range(0, len(body), piece):
        out += reader.feed(body[i : i + piece])
    out += reader.close()
    return out, reader


@pytest.mark.parametrize("piece", [1, 7, 1 << 20], ids=["bytewise", "small", "whole"])
@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gzip"])
def test_urlset_with_hints(piece: int, compressed: bool) -> None:
    body = (f'<urlset {NS}><url><loc>http://a.org/x</loc><lastmod>2024-05-01T10:00:00+00:00</lastmod>'
            "<changefreq>Daily</changefreq><priority>0.8</priority></url>"
            "<url><loc>http://a.org/y</loc><priority>7</priority><changefreq>often</changefreq></url>"
            "<url><lastmod>2024-01-01</lastmod></url></urlset>").encode()  # fmt: skip
    entries, reader = _read(gzip.compress(body) if compressed else body, piece)
    assert entries == [
        SitemapEntry("http://a.org/x", "2024-05-01T10:00:00+00:00", "daily", 0.8),
        SitemapEntry("http://a.org/y"),  # an invalid priority and changefreq are dropped
    ]
    assert (reader.kind, reader.count, reader.cut, reader.error) == ("urlset", 2, None, None)


def test_sitemap_index_without_namespace() -> None:
    body = b"<sitemapindex><sitemap><loc>http://a.org/s1.xml.gz</loc></sitemap><sitemap><loc>http://a.org/s2.xml</loc><lastmod>2023</lastmod></sitemap></sitemapindex>"
    entries, reader = _read(body)
    assert [(e.loc, e.lastmod) for e in entries] == [("http://a.org/s1.xml.gz", None), ("http://a.org/s2.xml", "2023")]
    assert reader.kind == "sitemapindex"


def test_plain_text_sitemap() -> None:
    entries, reader = _read(b"\xef\xbb\xbfhttp://a.org/1\r\n\nnot a url\nhttps://a.org/2")
    assert [e.loc for e in entries] == ["http://a.org/1", "https://a.org/2"]
    assert reader.kind == "text"


def test_url_limit() -> None:
    entries, reader = _read(_urlset(30), piece=50, max_urls=25)
    assert len(entries) == 25
    assert (reader.cut, reader.error) == ("max-urls", None)


@pytest.mark.parametrize("compressed", [False, True], ids=["plain", "gzip"])
def test_size_limit_of_the_uncompressed_file(compressed: bool) -> None:
    body = _urlset(2000)
    entries, reader = _read(gzip.compress(body) if compressed else body, piece=4096, max_bytes=len(body) // 2)
    assert 0 < len(entries) < 2000
    assert entries == [SitemapEntry(f"http://a.org/p{i}.html") for i in range(len(entries))]
    assert reader.cut == "max-bytes"
    assert reader.size == len(body) // 2


@pytest.mark.parametrize(
    ("body", "error"),
    [
        (_urlset(3)[:-30] + b"<url><loc>http://a.org/z</loc></wrong></urlset>", "mismatch"),
        (b"<!DOCTYPE html><html><body>hello</body></html>", "not-a-sitemap"),
        (b"\x1f\x8b\x08\x00garbage", "bad gzip"),
        (b"", "not-a-sitemap"),
    ],
    ids=["malformed", "html", "bad-gzip", "empty"],
)
def test_malformed_files_end_with_an_error(body: bytes, error: str) -> None:
    entries, reader = _read(body)
    assert reader.error is not None
    assert error in reader.error
    if error == "mismatch":  # what came before the fault is kept
        assert [e.loc for e in entries][:2] == ["http://a.org/p0.html", "http://a.org/p1.html"]


def test_entity_expansion_is_not_done() -> None:
    body = (b'<?xml version="1.0"?><!DOCTYPE u [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>'
            b"<urlset><url><loc>http://a.org/&b;</loc></url></urlset>")  # fmt: skip
    entries, _ = _read(body)
    assert all(len(e.loc) < 40 for e in entries)
