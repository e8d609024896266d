"""A page's out-links on their way into the frontier: filtered (manners, scope rules,
duplicates' links, the configured filters), then added as the strategy scored them."""

from __future__ import annotations

from collections import Counter

from focuscrawl.crawler import counters as names
from focuscrawl.frontier.base import UrlQueue
from focuscrawl.parse.manners import NONE, Manners, MannersPolicy
from focuscrawl.parse.page_duplicates import PageDuplicates
from focuscrawl.settings import Settings
from focuscrawl.strategies.filters import LinkFilter, Verdict
from focuscrawl.types import Decision, Link, Merge, Page, QueuedURL
from focuscrawl.urls import Scope, host_of

__all__ = ["KnownUrls", "LinkIntake"]

_KNOWN_MAX = 1 << 17  # URLs remembered as known to the frontier (~18 MB at most)

# a link as add_many takes it: url, score, depth, parent, host, count, tier
Item = tuple[str, float, int, str | None, str, int, int]


class KnownUrls:
    """URLs known to be in the frontier (which never forgets one), with their hosts: a
    page's links are mostly known already, and a dict answers before the frontier is
    asked (and host_of, ~1 us a link, is not run again on a known link). Bounded: when
    full it starts again empty (the frontier still knows them)."""

    def __init__(self) -> None:
        self.hosts: dict[str, str] = {}  # url -> host
        self.interned: dict[str, str] = {}  # one str object per host for the values above

    def __contains__(self, url: str) -> bool:
        return url in self.hosts

    def learn(self, added: list[tuple[str, str]]) -> None:
        if len(self.hosts) > _KNOWN_MAX:
            self.hosts.clear()
            self.interned.clear()
        self.hosts.update(added)


class LinkIntake:
    """Which of a page's links may enter the frontier, and their addition."""

    def __init__(
        self,
        settings: Settings,
        *,
        queue: UrlQueue,
        scope: Scope,
        filters: list[LinkFilter],
        manners: MannersPolicy,
        duplicates: PageDuplicates,
        counters: Counter[str],
    ) -> None:
        self.max_per_host = settings.scope.max_pages_per_host
        self.queue = queue
        self.scope = scope
        self.filters = filters
        self.manners = manners
        self.duplicates = duplicates
        self.counters = counters
        self.known = KnownUrls()
        self.read_feeds = settings.fetch.read_feeds  # a feed's .xml is what it is

    def filter(
        self, page: Page, queued: QueuedURL, verdict: Verdict, manners: Manners = NONE
    ) -> tuple[list[Link], Counter[str]]:
        """The out-links that may enter the frontier: manners, scope rules, then the filters."""
        dropped: Counter[str] = Counter()
        depth = queued.depth + 1
        known = self.known
        links = self.duplicates.clean_links([link for link in page.links if link.url != queued.url], queued.url)
        links = self.manners.followed(links, manners, dropped)
        # the store asked once for the page's links it may not know (a shared store: one
        # round trip, not one per link); a known URL passed the scope rules when added
        fresh = [link.url for link in links if link.url not in known]
        in_store = self.queue.known(fresh) if fresh else {}
        new: dict[str, str | None] = {}  # URL -> why it is left out (None: kept)
        feeds = {link.url for link in links if link.hreflang == "feed"} if self.read_feeds else ()
        for url in fresh:
            if url not in in_store:
                new[url] = self.scope.reject(url, depth, extensions=url not in feeds)
        if self.max_per_host:
            hosts = {url: host_of(url) for url, reason in new.items() if reason is None}
            counts = self.queue.host_counts(list(dict.fromkeys(hosts.values()))) if hosts else {}
            for url, host in hosts.items():
                if counts[host] >= self.max_per_host:
                    new[url] = "host-full"
        kept: list[Link] = []
        for link in links:
            reason = new.get(link.url)
            if reason is not None:
                dropped[f"scope:{reason}"] += 1
                continue
            kept.append(link)
        for flt in self.filters:
            before = len(kept)
            kept = flt.keep(page, kept, verdict)
            if len(kept) < before:
                dropped[f"filter:{flt.name}"] += before - len(kept)
        for reason, count in dropped.items():
            self.counters[names.link_rejected(reason)] += count
        return kept, dropped

    def add(self, decision: Decision, queued: QueuedURL, *, default: Merge, layer: int) -> None:
        """The decision's scored links into the frontier, found on ``queued``'s page."""
        depth = queued.depth + 1
        # one batch per merge rule, in the order the rules first appear (usually one:
        # the strategy's, its list kept at hand rather than looked up for every link)
        parent = queued.url
        groups: dict[Merge, list[Item]] = {}
        same = None
        known, interned = self.known.hosts, self.known.interned  # (inline: a call a link costs)
        added: list[tuple[str, str]] = []
        for ls in decision.links:
            link = ls.link
            url = link.url
            host = known.get(url)
            if host is None:
                host = host_of(url)
                host = interned.setdefault(host, host)
            added.append((url, host))
            item = (url, float(ls.score), depth, parent, host, link.count, ls.tier or 0)
            if ls.merge is None or ls.merge is default:
                if same is None:
                    same = groups[default] = []
                same.append(item)
            else:
                groups.setdefault(ls.merge, []).append(item)
        for merge, items in groups.items():
            self.counters["links_new"] += self.queue.add_many(items, merge=merge, layer=layer)
        self.known.learn(added)
