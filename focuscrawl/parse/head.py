"""The ``<link>`` elements of a page that name other URLs: ``rel="canonical"``
(the URL the page says it is a copy of), ``rel="alternate" hreflang`` (the page
in other languages: links annotated with their language) and ``rel="alternate"``
feeds (RSS, Atom: links annotated as feeds).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from selectolax.lexbor import LexborNode as Node

from focuscrawl.settings import FEED_CONTENT_TYPES
from focuscrawl.types import Link
from focuscrawl.urls import normalize_url

__all__ = ["FEED_TYPES", "HeadLinks", "head_links"]

FEED_TYPES = frozenset(FEED_CONTENT_TYPES)
_MAX_HEAD_LINKS = 500  # alternates read per page at most


@dataclass(slots=True)
class HeadLinks:
    """A page's canonical URL ("" if none) and its alternates as links: a language
    version's ``hreflang`` is its language (``x-default`` too), a feed's is ``"feed"``."""

    canonical: str = ""
    links: list[Link] = field(default_factory=list)


def head_links(nodes: Iterable[Node], base: str) -> HeadLinks:
    """Read ``<link rel>`` elements (``nodes``; others are passed over) resolved
    against ``base``: the first canonical, and the alternates in document order.

    >>> from selectolax.lexbor import LexborHTMLParser as P
    >>> tree = P('<link rel=canonical href="/a"><link rel="alternate" hreflang="DE" href="/de/a">'
    ...          '<link rel=alternate type="application/rss+xml" href="/feed" title="News">')
    >>> found = head_links(tree.css("link[rel]"), "http://h.org/x")
    >>> found.canonical, [(k.url, k.hreflang, k.anchor) for k in found.links]
    ('http://h.org/a', [('http://h.org/de/a', 'de', ''), ('http://h.org/feed', 'feed', 'News')])
    """
    out = HeadLinks()
    for node in nodes:
        if node.tag != "link":
            continue
        attrs = node.attributes
        rel = (attrs.get("rel") or "").lower().split()
        href = attrs.get("href")
        if not href:
            continue
        if "canonical" in rel:
            if not out.canonical:
                out.canonical = normalize_url(href, base) or ""
            continue
        if "alternate" not in rel or len(out.links) >= _MAX_HEAD_LINKS:
            continue
        lang = (attrs.get("hreflang") or "").strip().lower()
        kind = (attrs.get("type") or "").split(";", 1)[0].strip().lower()
        if not lang and kind not in FEED_TYPES:
            continue
        target = normalize_url(href, base)
        if target is not None:
            anchor = " ".join((attrs.get("title") or "").split())
            out.links.append(Link(target, anchor, anchor, hreflang=lang or "feed"))
    return out
