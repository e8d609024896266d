"""Sitemaps and feeds in a crawl: the sitemaps a host's robots.txt names, and the
feeds a page names (``<link rel="alternate" type="application/rss+xml">``),
enter the frontier as URLs of their own (their parent: the robots.txt, the
page); a fetched sitemap or feed is a page whose links are its URLs (their
parent: the sitemap, the feed), so the strategy scores them as it scores any
page's links and ``why`` shows where they came from. A feed entry's title and
summary are its link's anchor text and context (:mod:`focuscrawl.parse.feeds`).

A sitemap index's sitemaps are sitemaps in turn. Every sitemap is read by
:class:`~focuscrawl.parse.sitemaps.SitemapReader` within the sitemaps.org
limits; its URLs must be on its own host or on the host whose robots.txt named it
(sitemaps.org, "Sitemaps & Cross Submits": a robots.txt that names a sitemap on
another host, a CDN's, lets it list its own host's URLs; an index's sitemaps speak
for the host their index speaks for), and a host is given at most
``fetch.sitemap_urls_per_host`` URLs in all, a resumed crawl included (the count is
committed with the crawl DB). A URL's ``lastmod``, ``changefreq`` and ``priority``
are kept in frontier columns for strategies (and a re-visit schedule) to read.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from focuscrawl.crawler import counters as names
from focuscrawl.fetch.robots import robots_url
from focuscrawl.frontier.base import RunJournal, UrlColumns, UrlQueue
from focuscrawl.parse.feeds import read_feed
from focuscrawl.parse.sitemaps import SitemapEntry, SitemapReader, StreamedSitemap
from focuscrawl.settings import DISCOVERY_CONTENT_TYPES, FEED_CONTENT_TYPES, Settings
from focuscrawl.strategies.base import Strategy
from focuscrawl.types import Decision, FetchResult, Link, Merge, Page
from focuscrawl.urls import Scope, host_of, normalize_url

__all__ = ["CHANGEFREQ", "DISCOVERED", "LASTMOD", "PRIORITY", "Discovery", "SourcePage", "lastmod_time"]

log = logging.getLogger(__name__)

DISCOVERED = "_discovered"  # what a URL was entered as: SITEMAP or FEED (0: a page)
SITEMAP, FEED = 1.0, 2.0
LASTMOD = "sitemap_lastmod"  # a sitemap's <lastmod> of the URL, seconds since the epoch
PRIORITY = "sitemap_priority"  # its <priority>, 0-1
CHANGEFREQ = "sitemap_changefreq"  # its <changefreq> as the expected days between changes
_DAYS = {"always": 0.0, "hourly": 1 / 24, "daily": 1.0, "weekly": 7.0, "monthly": 30.0,
         "yearly": 365.0, "never": 36_500.0}  # fmt: skip
_PIECE = 1 << 16  # bytes of a body handed to the reader at once
_TAKEN = "sitemap_urls_taken:"  # the crawl DB's meta key (+ a host) of the URLs a host was given
_NESTING = 16  # sitemap indexes looked through, at most, for the robots.txt that named one


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


class Discovery:
    """The crawl's sitemaps and feeds: entered into ``frontier``, read when fetched."""

    def __init__(
        self,
        settings: Settings,
        queue: UrlQueue,
        columns: UrlColumns,
        strategy: Strategy,
        counters: Counter[str],
        scope: Scope | None = None,
        journal: RunJournal | None = None,
    ) -> None:
        """``journal``: where the URLs each host was given are committed (None: kept in
        memory only, as a shared crawl's worker does, whose hosts are its own)."""
        self.settings = settings.fetch
        self.journal = journal
        self.scope = scope
        self.context_words = settings.parse.context_words
        self.queue = queue
        self.columns = columns
        self.strategy = strategy
        self.counters = counters
        self.per_host: Counter[str] = Counter()  # URLs taken from each host's sitemaps
        self.on = self.settings.read_sitemaps or self.settings.read_feeds
        if self.on:  # (8 bytes a URL each: only for a crawl that reads them)
            columns.ensure_columns((DISCOVERED, LASTMOD, CHANGEFREQ, PRIORITY))

    def enter(self, urls: Sequence[str], parent: str) -> int:
        """Put sitemap URLs in the frontier, scored by the strategy's ``entry_scores``
        (entry points, at depth 0: as seeds, but a cash strategy gives them no cash);
        how many were new. The scope rules hold for them as for
        any link (a sitemap a robots.txt names on a denied host, or outside
        ``allow_regex``, is left out and counted), but for the file extensions a page's
        links may not have (``.xml`` is what they are)."""
        fresh = [url for url in dict.fromkeys(urls) if self.queue.state(url) is None]
        if self.scope is not None:
            kept = []
            for url in fresh:
                reason = self.scope.reject(url, 0, extensions=False)
                if reason is None:
                    kept.append(url)
                else:
                    self.counters[names.link_rejected(f"scope:{reason}")] += 1
            fresh = kept
        if not fresh:  # (a strategy shares its cash among the seeds it is given: never none)
            return 0
        scores = {u.url: u.score for u in self.strategy.entry_scores(fresh) if u.column == "score"}
        for url in fresh:
            self.queue.add(url, scores.get(url, 0.0), depth=0, parent=parent, host=host_of(url), merge=Merge.KEEP)
        self.columns.update_values(DISCOVERED, [(url, SITEMAP) for url in fresh], Merge.SET)
        self.counters["sitemaps_found"] += len(fresh)
        return len(fresh)

    def announced(self, result: FetchResult) -> None:
        """The sitemaps a result's robots.txt named (``FetchResult.sitemaps``)."""
        if result.sitemaps and self.settings.read_sitemaps:
            self.enter(result.sitemaps, robots_url(result.url))  # (the host asked, not a redirect's)

    def new_feeds(self, decision: Decision) -> list[str]:
        """The feeds a page names (``<link rel="alternate" type="application/rss+xml">``)
        among the links a strategy scored for it, those the frontier does not know yet.
        A feed is one of the page's links (its manners, the scope rules but for
        ``deny_extensions``, the filters; the strategy scores it as the others: OPIC
        gives it a share of the page's cash); once added it is read as a feed."""
        if not self.settings.read_feeds:
            return []
        urls = [ls.link.url for ls in decision.links if ls.link.hreflang == "feed"]
        if not urls:
            return []
        known = self.queue.known(urls)
        return [url for url in dict.fromkeys(urls) if url not in known]

    def took_feeds(self, urls: Sequence[str]) -> None:
        """``new_feeds`` the frontier took, marked as feeds (read as one when fetched)."""
        taken = [url for url in urls if self.queue.state(url) is not None]
        if taken:
            self.columns.update_values(DISCOVERED, [(url, FEED) for url in taken], Merge.SET)
            self.counters["feeds_found"] += len(taken)

    def read(self, result: FetchResult, url: str) -> SourcePage | None:
        """The fetched sitemap or feed ``url`` as a page whose links are its URLs (an
        index's sitemaps are entered as sitemaps instead); None for an HTML page, and
        a source without a ``key`` for a sitemap or feed type from another URL."""
        plain = result.content_type == "text/plain"  # (a plain-text sitemap, or no source)
        if not self.on or (result.content_type not in DISCOVERY_CONTENT_TYPES and not plain):
            return None
        kind = self.columns.value(url, DISCOVERED)
        if plain and kind != SITEMAP:
            return None
        if kind == SITEMAP:
            return self._sitemap(result, url)
        if kind == FEED or (self.settings.read_feeds and result.content_type in FEED_CONTENT_TYPES):
            return self._feed(result, url)
        self.counters["error_content-type"] += 1
        return SourcePage(Page(url=url), "", "")

    def _feed(self, result: FetchResult, url: str) -> SourcePage:
        """The feed ``url``, its entries' links resolved against where it was found (a
        redirect's target), its text decoded by the charset its Content-Type names."""
        declared = next((v for k, v in result.headers.items() if k.lower() == "content-type"), "")
        feed = read_feed(result.body, result.final_url or url, declared or result.content_type,
                         context_words=self.context_words)  # fmt: skip
        if feed.error is not None:
            self.counters["feed_errors"] += 1
            log.warning("feed %s: %s (%d entries read)", url, feed.error.splitlines()[0], len(feed.links))
        if feed.cut or result.truncated:
            self.counters["feed_cut"] += 1
            log.info("feed %s: read to its first %d entries", url, len(feed.links))
        page = Page(url=url, title=feed.title, status=result.status, content_type=result.content_type,
                    headers=result.headers, links=feed.links)  # fmt: skip
        return SourcePage(page, "feed", feed.version or "not-a-feed")

    def _sitemap(self, result: FetchResult, url: str) -> SourcePage:
        streamed = result.streamed
        if isinstance(streamed, StreamedSitemap):  # read whole by the fetcher as it arrived
            reader, entries = streamed.reader, streamed.entries
        else:
            reader, entries = SitemapReader(), []
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
        if result.truncated and not isinstance(streamed, StreamedSitemap):
            self.counters["sitemap_cut_body_size"] += 1
        page = Page(url=url, status=result.status, content_type=result.content_type, headers=result.headers)
        targets = self._targets(entries, url, self._speaks_for(url))
        if reader.kind == "sitemapindex":
            self.enter(list(targets), url)
            targets = {}
        page.links = [Link(target) for target in targets]
        return SourcePage(page, "sitemap", reader.kind or "not-a-sitemap", targets)

    def _speaks_for(self, url: str) -> frozenset[str]:
        """The hosts whose URLs the sitemap ``url`` may list: its own, and that of the
        robots.txt that named it (through the indexes that listed it, if any)."""
        hosts = {host_of(url)}
        child, seen = url, {url}
        for _ in range(_NESTING):
            row = self.queue.get(child)
            parent = row.parent if row is not None else None
            if parent is None or parent in seen:
                break
            if self.columns.value(parent, DISCOVERED) != SITEMAP:  # no sitemap: the robots.txt that named it
                hosts.add(host_of(parent))
                break
            child = parent
            seen.add(parent)
        return frozenset(hosts)

    def _taken(self, host: str) -> int:
        """URLs the sitemaps have given ``host`` so far (the committed count after a resume)."""
        if host not in self.per_host and self.journal is not None:
            self.per_host[host] = int(self.journal.get_meta(_TAKEN + host) or 0)
        return self.per_host[host]

    def _targets(self, entries: list[SitemapEntry], url: str, hosts: frozenset[str]) -> dict[str, SitemapEntry]:
        """The entries' URLs, normalised, on the hosts the sitemap speaks for, within each
        host's cap (which counts the URLs the crawl's scope lets in and the frontier does
        not hold yet: those it refuses are refused as any link is, and a focused crawl's
        share of a big sitemap is not lost to them; a URL two sitemaps list counts once)."""
        cap = self.settings.sitemap_urls_per_host
        out: dict[str, SitemapEntry] = {}
        given: set[str] = set()
        # a URL the frontier holds already (from a link, or another of the host's
        # sitemaps) is given nothing new: its hints are kept, the cap is not used
        known = self.queue.known([t for e in entries if (t := normalize_url(e.loc)) is not None]) if cap else {}
        for entry in entries:
            target = normalize_url(entry.loc)
            host = host_of(target) if target is not None else ""
            if target is None or host not in hosts:
                self.counters["sitemap_urls_refused"] += 1
                continue
            if target == url:
                self.counters["sitemap_lists_itself"] += 1
                log.info("sitemap %s lists itself: left out", url)
                continue
            if target in out:
                continue
            if self.scope is not None and self.scope.reject(target, 1) is not None:
                out[target] = entry  # refused with the sitemap's links, and counted, not of the cap
                continue
            if target in known:
                out[target] = entry
                continue
            if cap and self._taken(host) >= cap:
                self.counters["sitemap_urls_over_host_cap"] += 1
                continue
            self.per_host[host] = self._taken(host) + 1
            given.add(host)
            out[target] = entry
        if self.journal is not None:  # committed with the URLs they were given
            for host in sorted(given):
                self.journal.set_meta(_TAKEN + host, str(self.per_host[host]))
        return out

    def keep_hints(self, source: SourcePage) -> None:
        """lastmod, changefreq and priority of a sitemap's URLs in frontier columns, for
        those in the frontier (once the sitemap's links are in it)."""
        columns: dict[str, list[tuple[str, float]]] = {LASTMOD: [], CHANGEFREQ: [], PRIORITY: []}
        for target, entry in source.hints.items():
            if entry.lastmod is not None and (moment := lastmod_time(entry.lastmod)) is not None:
                columns[LASTMOD].append((target, moment))
            if entry.changefreq is not None:
                columns[CHANGEFREQ].append((target, _DAYS[entry.changefreq]))
            if entry.priority is not None:
                columns[PRIORITY].append((target, entry.priority))
        for column, items in columns.items():
            if items:  # (unknown URLs are ignored)
                self.columns.update_values(column, items, Merge.SET)


@dataclass(slots=True)
class SourcePage:
    """A sitemap or feed read: the page of its URLs, its pages.jsonl ``key``
    (``sitemap``, ``feed``) and what it was (``urlset``, ``sitemapindex``, ``rss20``,
    ``not-a-sitemap``...), the sitemap hints of its URLs."""

    page: Page
    key: str
    kind: str
    hints: dict[str, SitemapEntry] = field(default_factory=dict)
