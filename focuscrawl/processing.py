"""The recorder: one result at a time, judged, filtered, scored and written.

The crawl loop hands every fetch result here in the order the scheduler gives
(the order the URLs were taken in the ordered schedule, so the crawl DB changes
in the same order in every run with the same settings, seed and web; the order
of arrival as-completed). Nothing here waits or looks at the clock. What
happens to a result is decided here only: a page, or one failure path.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import replace

from focuscrawl.discovery import Discovery
from focuscrawl.frontier.base import FrontierStore
from focuscrawl.output.writers import JsonlOutput, WarcOutput
from focuscrawl.parse.manners import NONE, Manners, MannersPolicy
from focuscrawl.parse.page_duplicates import PageDuplicates
from focuscrawl.parse.pdf import PAGES, PdfError, page_from_result
from focuscrawl.provenance import decision_record
from focuscrawl.recrawls import InFlight, Recrawls
from focuscrawl.relevance.base import RelevanceModel, judge
from focuscrawl.settings import Settings
from focuscrawl.stats import CrawlStats
from focuscrawl.strategies.base import Strategy
from focuscrawl.strategies.filters import LinkFilter, Verdict
from focuscrawl.types import (
    Decision,
    FetchResult,
    Link,
    LinkScore,
    Merge,
    Page,
    PageRecord,
    QueuedURL,
    URLState,
)  # fmt: skip
from focuscrawl.urls import Scope, host_of

log = logging.getLogger(__name__)

# Errors that mean the request never reached the origin server (refused by rule,
# name not resolved, no connection, no TLS, refused by the proxy): the URL is not
# a fetched page, uses none of the page budget, and is counted as skipped_<error>.
NOT_FETCHED = frozenset({"robots", "blocked-address", "bad-url", "dns", "connect", "ssl", "proxy"})

RELEVANCE = "relevance"  # the column that keeps the model's score of every judged page
DIGEST = "_digest"  # 52 bits of the payload's SHA-1, kept only for strategies that re-crawl
_KNOWN_MAX = 1 << 17  # URLs remembered as known to the frontier (~18 MB at most)


def digest52(body: bytes) -> float:
    """The first 52 bits of the SHA-1 of ``body``, exact in a float column.

    >>> digest52(b"") == float(int("da39a3ee5e6b4", 16))
    True
    """
    return float(int.from_bytes(hashlib.sha1(body).digest()[:7], "big") >> 4)


class Recorder:
    """Turns fetch results into records, frontier changes and decision-log lines."""

    def __init__(
        self,
        settings: Settings,
        *,
        frontier: FrontierStore,
        strategy: Strategy,
        model: RelevanceModel | None,
        filters: Sequence[LinkFilter],
        scope: Scope,
        stats: CrawlStats,
        warc: WarcOutput,
        pages: JsonlOutput,
        decisions: JsonlOutput | None,
        recrawls: Recrawls | None = None,
    ) -> None:
        self.settings = settings
        self.frontier = frontier
        self.strategy = strategy
        self.model = model
        self.filters = list(filters)
        self.scope = scope
        self.stats = stats
        self.warc = warc
        self.pages = pages
        self.decisions = decisions
        self.round = 0  # layered mode: the round (layer) being fetched
        self.results = 0  # results recorded, skipped ones included (the decision log's n)
        self.recrawls = recrawls if recrawls is not None else Recrawls(frontier)
        self.manners = MannersPolicy(settings.fetch, stats.counters)
        self.discovery = Discovery(settings, frontier, strategy, stats.counters)  # sitemaps, feeds
        # a page is parsed in full only for a reader of more than its links (a third of the cost)
        self.links_only = not (
            strategy.needs_text or model is not None or any(f.needs_text for f in self.filters)
        )
        # URLs known to be in the frontier (which never forgets one), with their hosts: a
        # page's links are mostly known already, and a dict answers before the frontier
        # is asked (and host_of, ~1 us a link, is not run again on a known link)
        self._known: dict[str, str] = {}
        self._hosts: dict[str, str] = {}  # one str object per host for the values above
        self.duplicates = PageDuplicates(settings.parse, stats.counters, has_text=not self.links_only)

    # ------------------------------------------------------------------ results
    def record(self, item: InFlight, result: FetchResult) -> None:
        """Judge, score and record one result (durable at the next commit)."""
        self.results += 1
        counters = self.stats.counters
        current = self.frontier.get(item.queued.url) or item.queued
        # the hooks see the URL as it is now: cash that arrived while it was in flight
        q = item.queued  # (built directly: dataclasses.replace costs ~8 us a call)
        queued = QueuedURL(q.url, current.score, q.depth, q.host, q.parent, self.round, q.seq, current.tier)
        if result.error in NOT_FETCHED:  # the request never reached the origin server
            counters[f"skipped_{result.error}"] += 1
            if self.strategy.layered:
                counters[f"layer_{self.round}_skipped"] += 1
            self.frontier.mark(queued.url, URLState.FAILED)
            return self._failed(queued, result.error or "", None)
        if item.recrawl:
            counters["recrawls_fetched"] += 1
        else:
            self.stats.fetched += 1
            if self.strategy.layered:
                counters[f"layer_{self.round}_fetched"] += 1
        record = PageRecord(
            url=queued.url, status=result.status, depth=queued.depth, parent=queued.parent,
            score=queued.score, relevance=None, fetched_at=result.fetched_at or time.time(),
            content_type=result.content_type, size=len(result.body), out_links=0,
            error=result.error, final_url=result.final_url if result.final_url != queued.url else None,
            layer=self.round, truncated=result.truncated, recrawl=item.recrawl,
        )  # fmt: skip
        if result.error is not None and result.status == 0:  # no answer
            self.stats.errors += 1
            counters[f"error_{result.error}"] += 1
            self.frontier.mark(queued.url, URLState.FAILED)
            return self._failed(queued, result.error, record)
        if self._archive(queued.url, result, item.recrawl):  # a re-crawl that found the same payload
            record.extra["unchanged"] = True
        self.frontier.mark(queued.url, URLState.FETCHED)
        self.discovery.announced(result)  # the host's sitemaps, when this result first knows them
        if record.final_url:
            queued = self._merge_redirect_target(queued, result.final_url)
        if result.error is not None or not (200 <= result.status < 300):  # an answer, not a page
            counters[f"status_{result.status}" if result.error is None else f"error_{result.error}"] += 1
            return self._failed(queued, result.error or f"status-{result.status}", record)
        try:  # a sitemap or a feed, HTML, or a PDF (parse.pdf)
            source = self.discovery.read(result, queued.url)  # a sitemap or feed, or None
            if source is not None and not source.key:  # XML that is no sitemap or feed (counted)
                record.error = "content-type"
                return self._failed(queued, "content-type", record)
            page = source.page if source is not None else page_from_result(
                result, self.settings.parse, max_links=self.settings.scope.max_links_per_page,
                links_only=self.links_only,
            )  # fmt: skip
        except PdfError as exc:  # encrypted, broken, out of time or past a limit: one failure
            counters[exc.reason.replace("-", "_")] += 1
            log.info("%s: %s", queued.url, exc)
            record.error = exc.reason
            return self._failed(queued, exc.reason, record)
        except Exception as exc:  # a parser failure on hostile HTML is counted, not fatal
            counters[f"parse_error_{type(exc).__name__}"] += 1
            return self._failed(queued, "parse-error", record)
        if PAGES in page.meta:
            record.extra["pdf_pages"] = int(page.meta[PAGES])
        page.depth = queued.depth
        page.parent = queued.parent
        self.stats.pages += 1
        manners = self.manners.read(page)
        if manners.noindex:  # archived, marked, and not one of the crawl's relevant pages
            record.extra["noindex"] = True
        verdict = self._judge(page, record, counted=not manners.noindex) if source is None else Verdict()
        page.relevance, page.relevant = verdict.relevance, verdict.relevant
        record.out_links = len(page.links)
        record.title = page.title or None
        record.lang = page.lang or None
        original = self.duplicates.check(page)
        if original is not None:
            record.extra["duplicate_of"] = original
        if page.canonical and page.canonical != page.url:
            record.extra["canonical"] = page.canonical  # <link rel="canonical">, another URL
        if source is not None:
            record.extra[source.key] = source.kind  # "sitemap": "urlset"...
        self.pages.write(record)
        if not manners.nofollow:
            self.discovery.take_feeds(page)
        links, dropped = self.filter_links(page, queued, verdict, manners)
        page.links = links  # the page is the strategy's from here (no copy of all its fields)
        decision = self.strategy.on_page(page, verdict.relevance, queued)
        self._decide("page", decision, queued, relevance=verdict.relevance, dropped=dropped)
        if source is not None:
            self.discovery.keep_hints(source)

    def _failed(self, queued: QueuedURL, reason: str, record: PageRecord | None) -> None:
        """The one path of a result that gave no page: its line in pages.jsonl (none for
        a URL never sent to its server), then the strategy's ``on_failure``."""
        if record is not None:
            self.pages.write(record)
        self._decide("failure", self.strategy.on_failure(queued, reason), queued)

    def _judge(self, page: Page, record: PageRecord, *, counted: bool = True) -> Verdict:
        if self.model is None:
            return Verdict()
        try:
            relevance, relevant = judge(self.model, page)
        except Exception as exc:  # a model failing on one odd page is counted
            self.stats.counters[f"model_error_{type(exc).__name__}"] += 1
            return Verdict()
        record.relevance = round(relevance, 6)
        record.relevant = relevant
        self.stats.judged += counted
        self.stats.relevant += int(relevant and counted)
        self.frontier.update_values(RELEVANCE, [(page.url, relevance)], Merge.SET)
        return Verdict(relevance, relevant)

    def _archive(self, url: str, result: FetchResult, recrawl: bool) -> bool:
        """The WARC record: a response, or a revisit (True) when a re-crawl found the same payload."""
        digest = digest52(result.body) if self.strategy.recrawls else None
        unchanged = recrawl and digest is not None and self.frontier.value(url, DIGEST) == digest
        if unchanged:
            self.warc.write_revisit(result)
            self.stats.counters["recrawls_unchanged"] += 1
        else:
            self.warc.write(result)
        if digest is not None:
            self.frontier.update_values(DIGEST, [(url, digest)], Merge.SET)
        return unchanged

    def _merge_redirect_target(self, queued: QueuedURL, final_url: str) -> QueuedURL:
        """The page now known under its final URL is not fetched a second time, and
        cash waiting on that URL moves to the page that is being processed (so a
        redirect neither duplicates nor strands it)."""
        state = self.frontier.state(final_url)
        if state is None:
            self.frontier.add(final_url, 0.0, depth=queued.depth, parent=queued.parent,
                              host=host_of(final_url), merge=Merge.KEEP)  # fmt: skip
            self.frontier.mark(final_url, URLState.FETCHED)
            return queued
        if state == URLState.IN_FLIGHT:
            return queued  # fetched on its own as well: its cash is processed there
        moved = 0.0
        if self.strategy.merge is Merge.ADD:
            moved = self.frontier.value(final_url, "score") or 0.0
            if moved:
                self.frontier.update_scores([(final_url, 0.0)], Merge.SET)
                self.frontier.update_scores([(queued.url, moved)], Merge.ADD)
                self.stats.counters["redirect_cash_moved"] += 1
        if state == URLState.QUEUED:
            self.frontier.mark(final_url, URLState.FETCHED)
        return replace(queued, score=queued.score + moved)

    # -------------------------------------------------------------- the links
    def filter_links(
        self, page: Page, queued: QueuedURL, verdict: Verdict, manners: Manners = NONE
    ) -> tuple[list[Link], Counter[str]]:
        """The out-links that may enter the frontier: manners, scope rules, then the filters."""
        dropped: Counter[str] = Counter()
        depth = queued.depth + 1
        max_per_host = self.settings.scope.max_pages_per_host
        known = self._known
        links = self.duplicates.clean_links([link for link in page.links if link.url != queued.url], queued.url)
        links = self.manners.followed(links, manners, dropped)
        # the store asked once for the page's links it may not know (a shared store: one
        # round trip, not one per link); a known URL passed the scope rules when added
        fresh = [link.url for link in links if link.url not in known]
        in_store = self.frontier.known(fresh) if fresh else {}
        new: dict[str, str | None] = {}  # URL -> why it is left out (None: kept)
        for url in fresh:
            if url not in in_store:
                new[url] = self.scope.reject(url, depth)
        if max_per_host:
            hosts = {url: host_of(url) for url, reason in new.items() if reason is None}
            counts = self.frontier.host_counts(list(dict.fromkeys(hosts.values()))) if hosts else {}
            for url, host in hosts.items():
                if counts[host] >= max_per_host:
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
            self.stats.counters[f"link_rejected_{reason.split(':', 1)[1]}"] += count
        return kept, dropped

    def _decide(
        self,
        event: str,
        decision: Decision,
        queued: QueuedURL | None,
        *,
        relevance: float | None = None,
        dropped: Counter[str] | None = None,
    ) -> None:
        """Apply a decision and log it (one decisions.jsonl line)."""
        self.apply(decision, queued)
        self.log(event, decision, queued, relevance=relevance, dropped=dropped)

    def log(
        self,
        event: str,
        decision: Decision,
        queued: QueuedURL | None = None,
        *,
        relevance: float | None = None,
        dropped: Counter[str] | None = None,
    ) -> None:
        """One decisions.jsonl line for a decision (applied by the caller)."""
        if self.decisions is None or (decision.is_empty() and event != "page"):
            return
        self.decisions.write(
            decision_record(
                event, decision, default_merge=self.strategy.merge,
                url=None if queued is None else queued.url,
                n=self.results if queued is not None else None,
                score=None if queued is None else queued.score,
                relevance=relevance, dropped=dropped,
            )
        )  # fmt: skip

    def log_event(self, event: str, decision: Decision) -> None:
        """Apply and log a decision that belongs to no page (tick, layer end, control...)."""
        self._decide(event, decision, None)

    def apply(self, decision: Decision, queued: QueuedURL | None) -> None:
        counters = self.stats.counters
        if decision.links and queued is not None:
            self._add_links(decision, queued)
        updates: dict[tuple[str, Merge], list[tuple[str, float]]] = {}
        for update in decision.updates:
            updates.setdefault((update.column, update.merge), []).append((update.url, update.score))
        for (column, merge), items in updates.items():
            self.frontier.update_values(column, items, merge)  # "score" is the score itself
        for host, score, merge in decision.host_updates:
            counters["host_rescored"] += self.frontier.update_host(host, score, merge)
        if decision.tiers:
            self.frontier.set_tier(decision.tiers)
        if decision.raise_siblings is not None and queued is not None:
            for parent in self.frontier.parents(queued.url):
                counters["siblings_raised"] += self.frontier.raise_children(
                    parent, decision.raise_siblings, exclude=queued.url
                )
        for url in decision.recrawl:
            if self.recrawls.queue(url):
                counters["recrawls_queued"] += 1
        for op in decision.column_ops:
            self.frontier.combine_columns(op.dst, op.terms, add=op.add)

    def _add_links(self, decision: Decision, queued: QueuedURL) -> None:
        depth = queued.depth + 1
        layer = self.round + 1 if self.strategy.layered else 0
        # one batch per merge rule, in the order the rules first appear (usually one:
        # the strategy's, its list kept at hand rather than looked up for every link)
        default, parent = self.strategy.merge, queued.url
        groups: dict[Merge, list[tuple[str, float, int, str | None, str, int, int]]] = {}
        same = None
        known, hosts = self._known, self._hosts
        added: list[tuple[str, str]] = []
        for ls in decision.links:
            link = ls.link
            url = link.url
            host = known.get(url)
            if host is None:
                host = host_of(url)
                host = hosts.setdefault(host, host)
            added.append((url, host))
            item = (url, float(ls.score), depth, parent, host, link.count, ls.tier or 0)
            if ls.merge is None or ls.merge is default:
                if same is None:
                    same = groups[default] = []
                same.append(item)
            else:
                groups.setdefault(ls.merge, []).append(item)
        for merge, items in groups.items():
            self.stats.counters["links_new"] += self.frontier.add_many(items, merge=merge, layer=layer)
        if len(known) > _KNOWN_MAX:
            known.clear()  # bounded: the frontier still knows them
            hosts.clear()
        known.update(added)

    def add_seeds(self, seeds: Iterable[str]) -> None:
        """The strategy's seed scores (and other seed values, e.g. P0's initial cash)."""
        decision = Decision()
        updates = self.strategy.seed_scores(list(seeds))
        for update in updates:
            if update.column != "score":
                continue
            reason = self.scope.reject(update.url, 0)
            if reason is not None:
                self.stats.counters[f"seed_rejected_{reason}"] += 1
                continue
            self.frontier.add(update.url, update.score, depth=0, parent=None,
                              host=host_of(update.url), merge=update.merge)  # fmt: skip
            decision.links.append(LinkScore(Link(update.url), update.score, reason=update.reason or "seed"))
        for update in updates:
            if update.column != "score":
                self.frontier.update_values(update.column, [(update.url, update.score)], update.merge)
                decision.updates.append(update)
        if self.decisions is not None:
            self.decisions.write(decision_record("seeds", decision, default_merge=Merge.SET))
