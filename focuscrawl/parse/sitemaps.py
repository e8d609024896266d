"""Sitemaps (sitemaps.org protocol 0.9), read as they arrive: a ``<urlset>``'s
``<url>`` entries with ``lastmod``, ``changefreq`` and ``priority``, or a
``<sitemapindex>``'s sitemaps; gzip-compressed or not; a plain-text sitemap
(one URL a line) too.

The reader is fed the body in pieces and hands back the entries each piece
completes; the element of an entry is dropped once read, so a 50 MB sitemap is
never held whole (``benchmarks/bench_sitemaps.py`` measures the peak RSS). The
protocol's limits are the reader's: 50,000 URLs and 50 MB uncompressed per
file; what lies beyond is not read and the reader says why (``cut``). Malformed
XML ends the reading with the entries read so far and the parser's message
(``error``), never an exception.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from lxml import etree

from focuscrawl.urls import normalize_url

__all__ = ["MAX_SITEMAP_BYTES", "MAX_SITEMAP_URLS", "SITEMAP_TYPES", "SitemapEntry", "SitemapReader", "StreamedSitemap", "robots_sitemaps"]

# what a sitemap is served as (a plain or a gzipped XML file)
SITEMAP_TYPES = frozenset({"application/xml", "text/xml", "application/gzip", "application/x-gzip"})

MAX_SITEMAP_URLS = 50_000  # sitemaps.org: URLs (or sitemaps of an index) per file
MAX_SITEMAP_BYTES = 50 * 1024 * 1024  # sitemaps.org: bytes per file, uncompressed
_CHANGEFREQ = frozenset({"always", "hourly", "daily", "weekly", "monthly", "yearly", "never"})
_FIELDS = frozenset({"loc", "lastmod", "changefreq", "priority"})
# bytes handed to the XML parser at once (libxml2 refuses a single piece over 10 MB)
_STEP = 1 << 20


@dataclass(frozen=True, slots=True)
class SitemapEntry:
    """One ``<url>`` (or ``<sitemap>`` of an index): its location as written (trimmed)
    and the hints given with it (None when absent or invalid)."""

    loc: str
    lastmod: str | None = None  # W3C datetime, as written
    changefreq: str | None = None  # one of the protocol's seven values
    priority: float | None = None  # 0.0 - 1.0


def _local(tag: object) -> str:
    """An element's name without its namespace (sitemaps in another or no namespace
    are read all the same, as search engines do)."""
    if not isinstance(tag, str):
        return ""
    return tag.rpartition("}")[2]


def _entry(fields: dict[str, str]) -> SitemapEntry | None:
    loc = fields.get("loc", "").strip()
    if not loc:
        return None
    changefreq = fields.get("changefreq", "").strip().lower() or None
    priority: float | None = None
    try:
        value = float(fields.get("priority", "").strip())
        priority = value if 0.0 <= value <= 1.0 else None
    except ValueError:
        pass
    lastmod = fields.get("lastmod", "").strip() or None
    return SitemapEntry(loc, lastmod, changefreq if changefreq in _CHANGEFREQ else None, priority)


class SitemapReader:
    """Reads one sitemap file fed in pieces (:meth:`feed`, then :meth:`close`).

    ``kind`` is ``"urlset"``, ``"sitemapindex"``, ``"text"`` or None (nothing read
    yet, or not a sitemap); ``count`` the entries handed back; ``cut`` why reading
    stopped early (``"max-urls"``, ``"max-bytes"``), ``error`` a malformed file's
    message (or ``"not-a-sitemap"``)."""

    def __init__(self, *, max_urls: int = MAX_SITEMAP_URLS, max_bytes: int = MAX_SITEMAP_BYTES) -> None:
        self.max_urls = max_urls
        self.max_bytes = max_bytes
        self.kind: str | None = None
        self.count = 0
        self.size = 0  # uncompressed bytes read
        self.cut: str | None = None
        self.error: str | None = None
        self._gunzip: zlib._Decompress | None = None
        self._started = False  # the first bytes were seen (gzip or not decided)
        self._head = b""  # the first byte, while it is alone
        self._parser: etree.XMLPullParser | None = None
        self._text_tail = b""  # a plain-text sitemap's unfinished last line
        self._fields: dict[str, str] = {}
        self._depth = 0  # of the element being read, the root at 1

    @property
    def done(self) -> bool:
        """Nothing more will be read (a limit reached, or an error)."""
        return self.cut is not None or self.error is not None

    def feed(self, data: bytes) -> list[SitemapEntry]:
        """The entries completed by the next piece of the body (as sent: gzip or not)."""
        if self.done or not data:
            return []
        if not self._started:  # the first two bytes say whether it is gzip
            data = self._head = self._head + data
            if len(data) < 2:
                return []
            self._started = True
            if data[:2] == b"\x1f\x8b":
                self._gunzip = zlib.decompressobj(wbits=31)
        if self._gunzip is None:
            out: list[SitemapEntry] = []
            for start in range(0, len(data), _STEP):
                out += self._read(data[start : start + _STEP])
            return out
        out = []
        while data and not self.done:
            try:  # inflated a piece at a time: a gzip bomb never is whole
                piece = self._gunzip.decompress(data, _STEP)
            except zlib.error as exc:
                self.error = f"bad gzip: {exc}"
                break
            data = self._gunzip.unconsumed_tail
            out += self._read(piece)
        return out

    def close(self) -> list[SitemapEntry]:
        """The entries of the end of the body; sets ``error`` if the file is malformed."""
        if self.done:
            return []
        out: list[SitemapEntry] = []
        if not self._started and self._head:
            self._started = True
            out = self._read(self._head)
        if self._gunzip is not None:
            out = self._read(self._gunzip.flush())
            if not self._gunzip.eof and not self.done:
                self.error = "bad gzip: the stream is cut"
        if self.done:
            return out
        if self.kind == "text":
            out += self._text(b"\n", final=True)
        elif self._parser is not None:
            try:
                self._parser.close()
            except etree.XMLSyntaxError as exc:
                self.error = str(exc)[:200]
            out += self._events()
        if self.kind is None and self.error is None:
            self.error = "not-a-sitemap"
        return out

    def _read(self, data: bytes) -> list[SitemapEntry]:
        room = self.max_bytes - self.size
        if len(data) > room:
            data = data[:room]
            self.cut = "max-bytes"
        self.size += len(data)
        if self.kind is None and self._parser is None:
            head = data.lstrip()
            if not head:
                return []
            if not head.startswith(b"<") and not head.startswith(b"\xef\xbb\xbf<"):
                self.kind = "text"
            else:
                self._parser = etree.XMLPullParser(
                    events=("start", "end"), resolve_entities=False, no_network=True, huge_tree=False,
                    remove_comments=True, remove_pis=True,
                )  # fmt: skip
        if self.kind == "text":
            return self._text(data, final=False)
        assert self._parser is not None
        try:
            self._parser.feed(data)
        except etree.XMLSyntaxError as exc:
            out = self._events()
            self.error = str(exc)[:200]
            return out
        return self._events()

    def _events(self) -> list[SitemapEntry]:
        """The entries the parser's new events complete; each read element cleared."""
        assert self._parser is not None
        out: list[SitemapEntry] = []
        for event, element in self._parser.read_events():
            name = _local(element.tag)
            if event == "start":
                self._depth += 1
                if self._depth == 1:
                    if name not in ("urlset", "sitemapindex"):
                        self.error = f"not-a-sitemap (<{name[:40]}>)"
                        return out
                    self.kind = name
                continue
            self._depth -= 1
            if self._depth == 2 and name in _FIELDS:  # a field of an entry
                self._fields[name] = element.text or ""
            elif self._depth == 1:  # an entry ends
                entry = _entry(self._fields) if name in ("url", "sitemap") else None
                self._fields = {}
                if entry is not None:
                    if self.count >= self.max_urls:
                        self.cut = "max-urls"
                        return out
                    self.count += 1
                    out.append(entry)
                element.clear()  # and the entries read before: memory stays bounded
                parent = element.getparent()
                while parent is not None and element.getprevious() is not None:
                    del parent[0]
        return out

    def _text(self, data: bytes, *, final: bool) -> list[SitemapEntry]:
        """A plain-text sitemap: one URL a line (UTF-8)."""
        lines = (self._text_tail + data).split(b"\n")
        self._text_tail = b"" if final else lines.pop()
        if len(self._text_tail) > 4096:  # no URL is that long: not a text sitemap
            self.error = "not-a-sitemap (a line over 4 KB)"
            return []
        out: list[SitemapEntry] = []
        for line in lines:
            loc = line.decode("utf-8", "replace").strip().lstrip("\ufeff")
            if not loc:
                continue
            if not loc.startswith(("http://", "https://")):
                continue
            if self.count >= self.max_urls:
                self.cut = "max-urls"
                break
            self.count += 1
            out.append(SitemapEntry(loc))
        return out


class StreamedSitemap:
    """A body read as it arrives, past the page size cap, by a :class:`SitemapReader`:
    the entries it gave, kept; the bytes themselves not (the fetcher keeps the
    first ``max_body_size`` of them, for the archive).

    >>> streamed = StreamedSitemap()
    >>> streamed.feed(b'<urlset><url><loc>http://a/1</loc></url>'), streamed.feed(b'</urlset>')
    (True, True)
    >>> streamed.close(); [e.loc for e in streamed.entries], streamed.reader.kind
    (['http://a/1'], 'urlset')
    """

    def __init__(self) -> None:
        self.reader = SitemapReader()
        self.entries: list[SitemapEntry] = []

    def feed(self, data: bytes) -> bool:
        """Read the next piece; False once nothing more will be read."""
        self.entries += self.reader.feed(data)
        return not self.reader.done

    def close(self) -> None:
        """The end of the body."""
        self.entries += self.reader.close()


def robots_sitemaps(lines: list[str], robots_txt: str, guess: bool) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The sitemaps of robots.txt ``robots_txt``'s ``Sitemap:`` lines (and its host's
    ``/sitemap.xml`` when ``guess``), canonical and once each, and the lines refused: the
    sitemaps.org protocol and RFC 9309 ask for a full URL, so a relative one is no sitemap.

    >>> robots_sitemaps(["/s.xml", "HTTP://h.org/a.xml", "http://h.org/a.xml", "ftp://h.org/b"],
    ...                 "http://h.org/robots.txt", guess=True)
    (('http://h.org/a.xml', 'http://h.org/sitemap.xml'), ('/s.xml', 'ftp://h.org/b'))
    """
    found = [*lines, robots_txt.removesuffix("robots.txt") + "sitemap.xml"] if guess else lines
    canonical = [normalize_url(line) for line in found]
    refused = tuple(line for line, url in zip(found, canonical, strict=True) if url is None)
    return tuple(dict.fromkeys(url for url in canonical if url is not None)), refused
