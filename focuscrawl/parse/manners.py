"""A page's own manners: the robots directives of its ``<meta name="robots">``, of
``<meta name="focuscrawl">`` (the crawler's own token) and of its ``X-Robots-Tag``
header, and the link relations that ask a crawler not to follow a link.

As Google reads them (developers.google.com/search/docs/crawling-indexing/
robots-meta-tag): directives are comma-separated and case-insensitive, ``none`` is
``noindex, nofollow``, the most restrictive wins; an ``X-Robots-Tag`` value
``name: directives`` applies to the crawler named ``name`` only. Directives
that ask nothing of a crawler (``noarchive``, ``max-snippet:``...) are known and
ignored; others are unknown, counted and ignored.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from focuscrawl.fetch.robots import user_agent_token
from focuscrawl.settings import FetchSettings
from focuscrawl.types import Link, Page

__all__ = ["META_NAMES", "Manners", "MannersPolicy", "directives", "page_manners", "unfollowed_rel"]

log = logging.getLogger(__name__)

# the <meta name> values read (lower-cased): the generic one and the crawler's own
META_NAMES = ("robots", "focuscrawl")
# directives a search engine reads that ask nothing of a crawler that archives pages
_IGNORED = frozenset({
    "all", "index", "follow", "noarchive", "nocache", "nosnippet", "noimageindex",
    "notranslate", "indexifembedded", "noodp", "noydir", "max-snippet", "max-image-preview",
    "max-video-preview", "unavailable_after",
})  # fmt: skip
# rel values that ask a crawler not to follow the link (Google: nofollow, ugc, sponsored)
_UNFOLLOWED = ("nofollow", "ugc", "sponsored")


@dataclass(frozen=True, slots=True)
class Manners:
    """What a page asks: not to be indexed, its links not to be followed; the
    directives not understood (lower-cased, as written)."""

    noindex: bool = False
    nofollow: bool = False
    unknown: tuple[str, ...] = ()


NONE = Manners()


def unfollowed_rel(rel: str) -> bool:
    """Whether a link's ``rel`` asks not to follow it (``nofollow``, ``ugc``, ``sponsored``).

    >>> unfollowed_rel("external NoFollow"), unfollowed_rel("UGC"), unfollowed_rel("noopener")
    (True, True, False)
    """
    tokens = rel.lower().split()
    return any(token in _UNFOLLOWED for token in tokens)


def directives(content: str) -> Manners:
    """The manners of one directive list (a robots meta tag's ``content``).

    >>> directives("NOINDEX, follow")
    Manners(noindex=True, nofollow=False, unknown=())
    >>> directives("none"), directives("max-snippet:20, nofollow, noai")
    (Manners(noindex=True, nofollow=True, unknown=()), Manners(noindex=False, nofollow=True, unknown=('noai',)))
    """
    noindex = nofollow = False
    unknown: list[str] = []
    for item in content.lower().replace(";", ",").split(","):
        token = item.split(":", 1)[0].strip()
        if token in ("noindex", "none"):
            noindex = True
        if token in ("nofollow", "none"):
            nofollow = True
        elif token and token != "noindex" and token not in _IGNORED:
            unknown.append(token)
    return Manners(noindex, nofollow, tuple(unknown))


def header_directives(value: str, token: str) -> Manners:
    """The manners an ``X-Robots-Tag`` value gives the crawler whose product token
    is ``token``: its general directives and those after ``token:``; those after
    another crawler's name are not ours. Several headers arrive joined with ", ":
    a name applies to the directives after it, up to the next name.

    >>> header_directives("googlebot: noindex, nofollow", "focuscrawl")
    Manners(noindex=False, nofollow=False, unknown=())
    >>> header_directives("noarchive, FocusCrawl: nofollow", "focuscrawl")
    Manners(noindex=False, nofollow=True, unknown=())
    >>> header_directives("unavailable_after: 25 Jun 2010 15:00:00 PST, noindex", "x")
    Manners(noindex=True, nofollow=False, unknown=())
    """
    ours: list[str] = []
    agent_ours = True  # directives before any name are for every crawler
    for item in value.split(","):
        name, sep, rest = item.partition(":")
        name = name.strip().lower()
        if sep and name not in _IGNORED and " " not in name and name:
            agent_ours = name == token
            item = rest
        if agent_ours:
            ours.append(item)
    return directives(",".join(ours))


def page_manners(meta: Mapping[str, str], headers: Mapping[str, str], token: str) -> Manners:
    """The manners a page asks of the crawler ``token``: its robots meta tags
    (``meta`` as :class:`~focuscrawl.types.Page` keeps them, lower-cased names) and
    its ``X-Robots-Tag`` headers (any spelling of the name), the strictest of them."""
    found = [directives(meta[name]) for name in META_NAMES if name in meta]
    for name, value in headers.items():
        if len(name) == 12 and name.lower() == "x-robots-tag":
            found.append(header_directives(value, token))
    if not found:
        return NONE
    return Manners(
        any(m.noindex for m in found),
        any(m.nofollow for m in found),
        tuple(u for m in found for u in m.unknown),
    )


class MannersPolicy:
    """What the crawl obeys of a page's manners (``fetch.obey_noindex``,
    ``obey_nofollow``, ``follow_nofollow_links``), counted in ``counters``; each
    unknown directive logged once."""

    def __init__(self, settings: FetchSettings, counters: Counter[str]) -> None:
        self.settings = settings
        self.counters = counters
        self.token = user_agent_token(settings.user_agent)
        self._logged: set[str] = set()

    def read(self, page: Page) -> Manners:
        """The manners of ``page`` the crawl obeys."""
        found = page_manners(page.meta, page.headers, self.token)
        if found is NONE:
            return NONE
        for token in found.unknown:
            self.counters["manners_unknown_directive"] += 1
            if token not in self._logged and len(self._logged) < 1000:
                self._logged.add(token)
                log.info("%s: unknown robots directive %r ignored", page.url, token[:80])
        noindex = found.noindex and self.settings.obey_noindex
        nofollow = found.nofollow and self.settings.obey_nofollow
        self.counters["manners_noindex"] += noindex
        self.counters["manners_nofollow"] += nofollow
        return Manners(noindex, nofollow) if noindex or nofollow else NONE

    def followed(self, links: list[Link], manners: Manners, dropped: Counter[str]) -> list[Link]:
        """The links of a page with ``manners`` that may be followed; the others counted
        in ``dropped`` (``manners:nofollow-page``, ``manners:nofollow``)."""
        if manners.nofollow:
            if links:
                dropped["manners:nofollow-page"] += len(links)
            return []
        if self.settings.follow_nofollow_links:
            return links
        kept = [link for link in links if not link.nofollow]
        if len(kept) < len(links):
            dropped["manners:nofollow"] += len(links) - len(kept)
        return kept
