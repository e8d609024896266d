"""A small archived web with the real Web's manners and discovery aids (issue 36,
item 5): robots.txt with Sitemap lines, a sitemap index (listing itself), a gzip
sitemap, a malformed one, an RSS feed, meta robots and X-Robots-Tag pages,
rel=nofollow links, hreflang and canonical links. Written as a WARC file that the
replay server serves and ``simulate`` reads."""

from __future__ import annotations

import gzip
import hashlib
import io
import uuid
from pathlib import Path

from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

SITE = "http://manners.example"
SEED = f"{SITE}/"
NS = 'xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"'
HTML = "text/html; charset=utf-8"


def _page(body: str, head: str = "") -> bytes:
    return f"<!DOCTYPE html><html><head><title>t</title>{head}</head><body>{body}</body></html>".encode()


def _urlset(*paths: str) -> bytes:
    return (f"<urlset {NS}>" + "".join(f"<url><loc>{SITE}{p}</loc></url>" for p in paths) + "</urlset>").encode()


# path -> (content type, body, extra headers)
PAGES: dict[str, tuple[str, bytes, list[tuple[str, str]]]] = {
    "/robots.txt": ("text/plain", f"User-agent: *\nDisallow: /private/\nSitemap: {SITE}/sitemap-index.xml\n"
                    f"Sitemap: {SITE}/broken.xml\n".encode(), []),
    "/": ("text/html", _page('<a href="/noindex.html">a</a> <a href="/nofollow.html">b</a> '
                             '<a href="/header.html">c</a> <a href="/ads.html" rel="sponsored">ad</a> '
                             '<a href="/copy.html">copy</a>',
                             '<link rel="alternate" type="application/rss+xml" href="/feed.rss">'
                             '<link rel="alternate" hreflang="de" href="/de/">'), []),
    "/noindex.html": (HTML, _page('<a href="/from-noindex.html">x</a>', '<meta name="robots" content="noindex">'), []),
    "/nofollow.html": (HTML, _page('<a href="/from-nofollow.html">x</a>', '<meta name="robots" content="nofollow">'), []),
    "/header.html": (HTML, _page('<a href="/from-header.html">x</a>'), [("X-Robots-Tag", "focuscrawl: none")]),
    "/copy.html": (HTML, _page("copy", '<link rel="canonical" href="/original.html">'), []),
    "/sitemap-index.xml": ("application/xml", f"<sitemapindex {NS}><sitemap><loc>{SITE}/sitemap-index.xml</loc></sitemap>"
                           f"<sitemap><loc>{SITE}/pages.xml.gz</loc></sitemap></sitemapindex>".encode(), []),
    "/pages.xml.gz": ("application/x-gzip", gzip.compress(_urlset("/orphan-1.html", "/orphan-2.html", "/private/x.html"), mtime=0), []),
    "/broken.xml": ("application/xml", _urlset("/orphan-3.html")[:-25], []),
    "/feed.rss": ("application/rss+xml", (f'<rss version="2.0"><channel><title>News</title><item><title>Story</title>'
                                          f"<link>{SITE}/story.html</link><description>a story</description></item>"
                                          "</channel></rss>").encode(), []),
}  # fmt: skip
for _leaf in ("/from-noindex.html", "/from-nofollow.html", "/from-header.html", "/ads.html", "/original.html",
              "/orphan-1.html", "/orphan-2.html", "/orphan-3.html", "/story.html", "/de/", "/private/x.html"):  # fmt: skip
    PAGES[_leaf] = (HTML, _page(f"leaf {_leaf}"), [])

# what a crawl of the seed fetches, and what it must not
FETCHED = {"/", "/noindex.html", "/nofollow.html", "/header.html", "/copy.html", "/from-noindex.html",
           "/sitemap-index.xml", "/pages.xml.gz", "/broken.xml", "/orphan-1.html", "/orphan-2.html",
           "/feed.rss", "/story.html", "/de/"}  # fmt: skip
NOT_FETCHED = {"/from-nofollow.html", "/from-header.html", "/ads.html", "/private/x.html", "/orphan-3.html"}


def build_manners_web(path: Path) -> Path:
    """Write the web to ``path`` (a .warc.gz file); returns it."""
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True, warc_version="WARC/1.1")
        for route, (ctype, body, extra) in PAGES.items():
            url = SITE + route
            record_id = f"<urn:uuid:{uuid.UUID(bytes=hashlib.md5(url.encode()).digest())}>"
            headers = [("Date", "Wed, 01 Jan 2020 00:00:00 GMT"), ("Content-Type", ctype), *extra,
                       ("Content-Length", str(len(body)))]  # fmt: skip
            record = writer.create_warc_record(
                url, "response", payload=io.BytesIO(body), length=len(body),
                http_headers=StatusAndHeaders("200 OK", headers, protocol="HTTP/1.1"),
                warc_headers_dict={"WARC-Date": "2020-01-01T00:00:00Z", "WARC-Record-ID": record_id},
            )  # fmt: skip
            writer.write_record(record)
    return path
