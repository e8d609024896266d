"""Sitemaps in a crawl: the sitemaps a host's robots.txt names enter the frontier
as URLs of their own (their parent: the robots.txt), and a fetched sitemap is a
page whose links are its URLs (their parent: the sitemap), so the strategy
scores them as it scores any page's links and ``why`` shows where they came from.

A sitemap index's sitemaps are sitemaps in turn. Every sitemap is read by
:class:`~focuscrawl.parse.sitemaps.SitemapReader` within the sitemaps.org
limits; its URLs must be on its own host (sitemaps.org: a sitemap found
through robots.txt speaks for its host), and a host gives at most
``fetch.sitemap_urls_per_host`` URLs in all. A URL's ``lastmod``, ``changefreq``
and ``priority`` are kept in frontier columns for strategies (and a re-visit
schedule) to read.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime

from focuscrawl.fetch.robots import robots_url
from focuscrawl.frontier.base import FrontierStore
from focuscrawl.parse.sitemaps import SitemapEntry, SitemapReader
from focuscrawl.settings import FetchSettings
from focuscrawl.strategies.base import Strategy
from focuscrawl.types import FetchResult, Link, Merge, Page
from focuscrawl.urls import host_of, normalize_url

__all__ = ["CHANGEFREQ", "LASTMOD", "PRIORITY", "SITEMAP", "SitemapDiscovery", "SitemapPage", "lastmod_time"]

log = logging.getLogger(__name__)

SITEMAP = "_sitemap"  # 1.0 for a URL entered as a sitemap
LASTMOD = "sitemap_lastmod"  # a sitemap's <lastmod> of the URL, seconds since the epoch
PRIORITY = "sitemap_priority"  # its <priority>, 0-1
CHANGEFREQ = "sitemap_changefreq"  # its <changefreq> as the expected days between changes
_DAYS = {"always": 0.0, "hourly": 1 / 24, "daily": 1.0, "weekly": 7.0, "monthly": 30.0,
         "yearly": 365.0, "never": 36_500.0}  # fmt: skip
_PIECE = 1 << 16  # bytes of a body handed to the reader at once


def lastmod_time(value: str) -> float | None:
    """A W3C datetime (``2024``, ``2024-05``, ``2024-05-01``, ``2024-05-01T10:00Z``...)
    as seconds since the epoch (UTC where no zone is given); None if it is not one.

    >>> lastmod_time("2024-05-01T10:00:00+02:00"), lastmod_time("1970-01-02"), lastmod_time("2024-13")
    (1714550400.0, 86400.0, None)
    """
    text = value.strip()
    if len(text) == 4:
        text += "-01-01"
    elif len(text) == 7:
        text += "-01"
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


class SitemapDiscovery:
    """The crawl's sitemaps: entered into ``frontier``, read when fetched."""

    def __init__(
        self, settings: FetchSettings, frontier: FrontierStore, strategy: Strategy, counters: Counter[str]
    ) -> None:
        self.settings = settings
        self.frontier = frontier
        self.strategy = strategy
        self.counters = counters
        self.per_host: Counter[str] = Counter()  # URLs taken from each host's sitemaps
        frontier.ensure_columns((SITEMAP, LASTMOD, CHANGEFREQ, PRIORITY))

    def enter(self, sitemaps: tuple[str, ...] | list[str], parent: str) -> int:
        """Put sitemap URLs in the frontier, scored as the strategy scores seeds
        (entry points, at depth 0); how many were new."""
        fresh = [url for url in sitemaps if self.frontier.state(url) is None]
        scores = {u.url: u.score for u in self.strategy.seed_scores(fresh) if u.column == "score"}
        for url in fresh:
            self.frontier.add(url, scores.get(url, 0.0), depth=0, parent=parent, host=host_of(url), merge=Merge.KEEP)
        if fresh:
            self.frontier.update_values(SITEMAP, [(url, 1.0) for url in fresh], Merge.SET)
            self.counters["sitemaps_found"] += len(fresh)
        return len(fresh)

    def announced(self, result: FetchResult) -> None:
        """The sitemaps a result's robots.txt named (``FetchResult.sitemaps``)."""
        if result.sitemaps:
            self.enter(result.sitemaps, robots_url(result.final_url))

    def read(self, result: FetchResult, url: str) -> SitemapPage | None:
        """The fetched sitemap ``url`` as a page whose links are its URLs (an index's
        sitemaps are entered as sitemaps instead); None if ``url`` is not a sitemap."""
        if self.frontier.value(url, SITEMAP) != 1.0:
            return None
        reader = SitemapReader()
        entries: list[SitemapEntry] = []
        body = result.body
        for start in range(0, len(body), _PIECE):
            entries += reader.feed(body[start : start + _PIECE])
            if reader.done:
                break
        entries += reader.close()
        if reader.error is not None:  # what was read before the fault is kept
            self.counters["sitemap_errors"] += 1
            log.warning("sitemap %s: %s (%d URLs read before it)", url, reader.error.splitlines()[0], len(entries))
        if reader.cut is not None:
            self.counters[f"sitemap_cut_{reader.cut}"] += 1
            log.info("sitemap %s: cut at the sitemaps.org limit (%s)", url, reader.cut)
        if result.truncated:
            self.counters["sitemap_cut_body_size"] += 1
        page = Page(url=url, status=result.status, content_type=result.content_type, headers=result.headers)
        host = host_of(url)
        targets = self._targets(entries, url, host)
        if reader.kind == "sitemapindex":
            self.enter(list(targets), url)
            targets = {}
        page.links = [Link(target) for target in targets]
        return SitemapPage(page, reader.kind or "not-a-sitemap", targets)

    def _targets(self, entries: list[SitemapEntry], url: str, host: str) -> dict[str, SitemapEntry]:
        """The entries' URLs, normalised, on the sitemap's host, within the host's cap."""
        cap = self.settings.sitemap_urls_per_host
        out: dict[str, SitemapEntry] = {}
        for entry in entries:
            target = normalize_url(entry.loc)
            if target is None or host_of(target) != host:
                self.counters["sitemap_urls_refused"] += 1
                continue
            if target == url:
                self.counters["sitemap_lists_itself"] += 1
                log.info("sitemap %s lists itself: left out", url)
                continue
            if cap and self.per_host[host] >= cap:
                self.counters["sitemap_urls_over_host_cap"] += 1
                continue
            if target not in out:
                self.per_host[host] += 1
                out[target] = entry
        return out

    def keep_hints(self, hints: dict[str, SitemapEntry]) -> None:
        """lastmod, changefreq and priority in frontier columns, for the URLs of ``hints``
        in the frontier (once the sitemap's links are in it)."""
        columns: dict[str, list[tuple[str, float]]] = {LASTMOD: [], CHANGEFREQ: [], PRIORITY: []}
        for target, entry in hints.items():
            if entry.lastmod is not None and (moment := lastmod_time(entry.lastmod)) is not None:
                columns[LASTMOD].append((target, moment))
            if entry.changefreq is not None:
                columns[CHANGEFREQ].append((target, _DAYS[entry.changefreq]))
            if entry.priority is not None:
                columns[PRIORITY].append((target, entry.priority))
        for column, items in columns.items():
            if items:  # (unknown URLs are ignored)
                self.frontier.update_values(column, items, Merge.SET)


@dataclass(slots=True)
class SitemapPage:
    """A sitemap read: the page of its URLs, what it was (``urlset``, ``sitemapindex``,
    ``not-a-sitemap``...), the hints of its URLs."""

    page: Page
    kind: str
    hints: dict[str, SitemapEntry] = field(default_factory=dict)
