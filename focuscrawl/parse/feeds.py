"""RSS and Atom feeds, read with feedparser: an entry's link is a link of the feed,
its title the anchor text and its title and summary the context, so every
strategy scores a feed's links as it scores a page's.

feedparser reads a whole document, some 300 us an entry, on the crawl's event
loop: a feed is read to its first ``max_bytes`` (256 KiB, a thousand entries or
so; a feed's newest entries come first) and ``max_entries`` entries.

feedparser (with chardet and sgmllib, some 20 ms) is imported when the first feed is
read, not when a crawl starts: most crawls meet no feed, and the start-up is a
share of every short crawl's CPU (benchmarks/bench_engine_ab.py).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from focuscrawl.types import Link
from focuscrawl.urls import normalize_url

__all__ = ["FEED_MAX_BYTES", "FEED_MAX_ENTRIES", "Feed", "read_feed"]

FEED_MAX_BYTES = 256 * 1024
FEED_MAX_ENTRIES = 1000
_TAG = re.compile(r"<[^>]*>")


@dataclass(slots=True)
class Feed:
    """A feed read: its title, its entries as links, its format (feedparser's
    ``version``: ``rss20``, ``atom10``...; "" if not a feed), and what went wrong
    (``error``: feedparser's complaint about a malformed feed; ``cut``: entries or
    bytes left unread)."""

    title: str = ""
    links: list[Link] = field(default_factory=list)
    version: str = ""
    error: str | None = None
    cut: bool = False


def _words(text: str, n: int) -> str:
    return " ".join(_TAG.sub(" ", text).split()[:n])


def read_feed(
    body: bytes, url: str, content_type: str = "application/xml", *, context_words: int = 20,
    max_bytes: int = FEED_MAX_BYTES, max_entries: int = FEED_MAX_ENTRIES,
) -> Feed:  # fmt: skip
    """The feed at ``url`` (its body and type as fetched): entries' links resolved against
    ``url``, one link per target (the first entry's words).

    >>> rss = b'<rss version="2.0"><channel><title>News</title><item><title>Cats win</title>' \\
    ...       b'<link>/a</link><description>&lt;p&gt;The cats&lt;/p&gt; won.</description></item></channel></rss>'
    >>> feed = read_feed(rss, "http://h.org/feed")
    >>> feed.title, feed.version, [(k.url, k.anchor, k.context) for k in feed.links]
    ('News', 'rss20', [('http://h.org/a', 'Cats win', 'Cats win The cats won.')])
    """
    import feedparser  # see the module docstring

    cut = len(body) > max_bytes
    parsed = feedparser.parse(
        body[:max_bytes], response_headers={"content-location": url, "content-type": content_type or "application/xml"}
    )
    out = Feed(title=" ".join(str(parsed.feed.get("title", "")).split()), version=str(parsed.get("version", "")))
    fault = parsed.get("bozo_exception")
    # (a feed served as text/xml with no charset is US-ASCII by RFC 3023, and feedparser
    # says so when it reads it as the UTF-8 it declares: no fault of the feed's)
    if parsed.get("bozo") and not cut and not isinstance(fault, feedparser.CharacterEncodingOverride):
        out.error = str(fault or "malformed")[:200]
    seen: set[str] = set()
    for n, entry in enumerate(parsed.entries):
        if n >= max_entries:
            cut = True
            break
        href = entry.get("link") or ""
        target = normalize_url(str(href), url) if href else None
        if target is None or target in seen:
            continue
        seen.add(target)
        title = _words(str(entry.get("title", "")), context_words)
        summary = str(entry.get("summary", ""))
        context = _words(f"{title} {summary}", context_words)
        out.links.append(Link(target, title, context))
    out.cut = cut
    return out
