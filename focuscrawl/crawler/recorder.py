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
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

from focuscrawl.crawler import counters as names
from focuscrawl.crawler.links import LinkIntake
from focuscrawl.crawler.window import InFlight
from focuscrawl.discovery import Discovery
from focuscrawl.frontier.base import LinkGraph, RunJournal, UrlColumns, UrlQueue
from focuscrawl.output.writers import JsonlOutput, PagesOutput, WarcOutput
from focuscrawl.parse.manners import MannersPolicy
from focuscrawl.parse.page_duplicates import PageDuplicates
from focuscrawl.parse.pdf import PAGES, PdfError, page_from_result
from focuscrawl.provenance import decision_record
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


def digest52(body: bytes) -> float:
    """The first 52 bits of the SHA-1 of ``body``, exact in a float column.

    >>> digest52(b"") == float(int("da39a3ee5e6b4", 16))
    True
    """
    return float(int.from_bytes(hashlib.sha1(body).digest()[:7], "big") >> 4)


class Recorder:
    """Turns fetch results into records, frontier changes and decision-log lines.

    It records the states of the URLs whose results it records (and of the URLs it
    adds); a fetched URL a strategy asks to fetch again goes to ``recrawl`` (the
    scheduler's, which takes and puts back; without one such a request is dropped).
    The fetch round of what it records is ``stats.layer`` (written by the rounds);
    ``journal``: the crawl DB whose commits keep what the sitemaps gave each host."""

    def __init__(
        self,
        settings: Settings,
        *,
        queue: UrlQueue,
        columns: UrlColumns,
        graph: LinkGraph,
        strategy: Strategy,
        model: RelevanceModel | None,
        filters: Sequence[LinkFilter],
        scope: Scope,
        stats: CrawlStats,
        warc: WarcOutput,
        pages: JsonlOutput,
        decisions: JsonlOutput | None,
        recrawl: Callable[[str], bool] | None = None,
        journal: RunJournal | None = None,
    ) -> None:
        self.settings = settings
        self.queue = queue
        self.columns = columns
        self.graph = graph
        self.strategy = strategy
        self.model = model
        self.filters = list(filters)
        self.scope = scope
        self.stats = stats
        self.warc = warc
        self.pages = pages
        self.decisions = decisions
        self.results = 0  # results recorded, skipped ones included (the decision log's n)
        self._recrawl = recrawl
        self.manners = MannersPolicy(settings.fetch, stats.counters)
        self.discovery = Discovery(settings, queue, columns, strategy, stats.counters, scope, journal)  # sitemaps, feeds
        # a page is parsed in full only for a reader of more than its links (a third of the cost)
        self.links_only = not (
            strategy.needs_text or model is not None or any(f.needs_text for f in self.filters)
        )
        self.duplicates = PageDuplicates(settings.parse, stats.counters, has_text=not self.links_only)
        self.links = LinkIntake(
            settings, queue=queue, scope=scope, filters=self.filters, manners=self.manners,
            duplicates=self.duplicates, counters=stats.counters,
        )  # fmt: skip

    # ------------------------------------------------------------------ results
    def record(self, item: InFlight, result: FetchResult) -> None:
        """Judge, score and record one result (durable at the next commit)."""
        self.results += 1
        counters = self.stats.counters
        layer = self.stats.layer  # the fetch round
        current = self.queue.get(item.queued.url) or item.queued
        # the hooks see the URL as it is now: cash that arrived while it was in flight
        q = item.queued  # (built directly: dataclasses.replace costs ~8 us a call)
        queued = QueuedURL(q.url, current.score, q.depth, q.host, q.parent, q.layer, q.seq, current.tier)
        if result.error in NOT_FETCHED:  # the request never reached the origin server
            counters[names.skipped(result.error)] += 1
            if self.strategy.layered:
                counters[names.layer_skipped(layer)] += 1
            self.queue.mark(queued.url, URLState.FAILED)
            return self._failed(queued, result.error or "", None)
        self.stats.fetch_latency.observe(result.elapsed)
        if item.recrawl:
            counters["recrawls_fetched"] += 1
        else:
            self.stats.fetched += 1
            if self.strategy.layered:
                counters[names.layer_fetched(layer)] += 1
        record = PageRecord(
            url=queued.url, status=result.status, depth=queued.depth, parent=queued.parent,
            score=queued.score, relevance=None, fetched_at=result.fetched_at or time.time(),
            content_type=result.content_type, size=len(result.body), out_links=0,
            error=result.error, final_url=result.final_url if result.final_url != queued.url else None,
            layer=layer, truncated=result.truncated, recrawl=item.recrawl,
        )  # fmt: skip
        if result.error is not None and result.status == 0:  # no answer
            self.stats.errors += 1
            counters[names.error(result.error)] += 1
            self.queue.mark(queued.url, URLState.FAILED)
            return self._failed(queued, result.error, record)
        if self._archive(queued.url, result, item.recrawl):  # a re-crawl that found the same payload
            record.extra["unchanged"] = True
        self.queue.mark(queued.url, URLState.FETCHED)
        self.discovery.announced(result)  # the host's sitemaps, when this result first knows them
        if record.final_url:
            queued = self._merge_redirect_target(queued, result.final_url)
        if result.error is not None or not (200 <= result.status < 300):  # an answer, not a page
            counters[names.status(result.status) if result.error is None else names.error(result.error)] += 1
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
            counters[names.failure("parse", exc)] += 1
            return self._failed(queued, "parse-error", record)
        if PAGES in page.meta:
            record.extra["pdf_pages"] = int(page.meta[PAGES])
        if page.markup_cut:  # its links and text past the cut are unread: said, not silent
            record.extra["markup_cut"] = True
            counters["markup_cut"] += 1
        page.depth = queued.depth
        page.parent = queued.parent
        self.stats.pages += source is None  # a sitemap or a feed, read for its links, is no page
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
            if self.settings.fetch.skip_fetched_canonical and page.canonical != queued.url:
                queued = self._canonical_fetched(queued, page.canonical)
        if source is not None:
            record.extra[source.key] = source.kind  # "sitemap": "urlset"...
        if page.main_text is not None and isinstance(self.pages, PagesOutput):
            self.pages.keep_text(page.main_text)  # texts.jsonl: read by the index, not re-extracted
        self.pages.write(record)
        links, dropped = self.links.filter(page, queued, verdict, manners)
        page.links = links  # the page is the strategy's from here (no copy of all its fields)
        decision = self.strategy.on_page(page, verdict.relevance, queued)
        feeds = self.discovery.new_feeds(decision)  # scored as the page's links, then known as feeds
        self._decide("page", decision, queued, relevance=verdict.relevance, dropped=dropped)
        self.discovery.took_feeds(feeds)
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
            self.stats.counters[names.failure("model", exc)] += 1
            return Verdict()
        record.relevance = round(relevance, 6)
        record.relevant = relevant
        self.stats.judged += counted
        self.stats.relevant += int(relevant and counted)
        self.columns.update_values(RELEVANCE, [(page.url, relevance)], Merge.SET)
        return Verdict(relevance, relevant)

    def _archive(self, url: str, result: FetchResult, recrawl: bool) -> bool:
        """The WARC record: a response, or a revisit (True) when a re-crawl found the same
        payload or was answered 304 to its conditional request (then it has no body)."""
        if result.refers_to is not None:  # (fetch.freshness)
            self.warc.write_not_modified(result, *result.refers_to)
            self.stats.counters["recrawls_unchanged"] += recrawl
            return True
        digest = digest52(result.body) if self.strategy.recrawls else None
        unchanged = recrawl and digest is not None and self.columns.value(url, DIGEST) == digest
        if unchanged:
            self.warc.write_revisit(result)
            self.stats.counters["recrawls_unchanged"] += 1
        else:
            self.warc.write(result)
        if digest is not None:
            self.columns.update_values(DIGEST, [(url, digest)], Merge.SET)
        return unchanged

    def _canonical_fetched(self, queued: QueuedURL, canonical: str) -> QueuedURL:
        """The page names another URL its canonical one: that URL's document is the one
        just fetched, and it is not fetched again (queued or not known yet: merged as a
        redirect's target is, and counted)."""
        if self.queue.state(canonical) not in (None, URLState.QUEUED):
            return queued  # fetched already (or under way)
        self.stats.counters["canonical_not_fetched"] += 1
        return self._merge_redirect_target(queued, canonical)

    def _merge_redirect_target(self, queued: QueuedURL, final_url: str) -> QueuedURL:
        """The page now known under its final URL is not fetched a second time, and
        cash waiting on that URL moves to the page that is being processed (so a
        redirect neither duplicates nor strands it)."""
        state = self.queue.state(final_url)
        if state is None:
            self.queue.add(final_url, 0.0, depth=queued.depth, parent=queued.parent,
                           host=host_of(final_url), merge=Merge.KEEP)  # fmt: skip
            self.queue.mark(final_url, URLState.FETCHED)
            return queued
        if state == URLState.IN_FLIGHT:
            return queued  # fetched on its own as well: its cash is processed there
        moved = 0.0
        if self.strategy.merge is Merge.ADD:
            moved = self.columns.value(final_url, "score") or 0.0
            if moved:
                self.columns.update_scores([(final_url, 0.0)], Merge.SET)
                self.columns.update_scores([(queued.url, moved)], Merge.ADD)
                self.stats.counters["redirect_cash_moved"] += 1
        if state == URLState.QUEUED:
            self.queue.mark(final_url, URLState.FETCHED)
        return replace(queued, score=queued.score + moved)

    # ------------------------------------------------------------ decisions
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
            layer = self.stats.layer + 1 if self.strategy.layered else 0
            self.links.add(decision, queued, default=self.strategy.merge, layer=layer)
        updates: dict[tuple[str, Merge], list[tuple[str, float]]] = {}
        for update in decision.updates:
            updates.setdefault((update.column, update.merge), []).append((update.url, update.score))
        for (column, merge), items in updates.items():
            self.columns.update_values(column, items, merge)  # "score" is the score itself
        for host, score, merge in decision.host_updates:
            counters["host_rescored"] += self.columns.update_host(host, score, merge)
        if decision.tiers:
            self.columns.set_tier(decision.tiers)
        if decision.raise_siblings is not None and queued is not None:
            for parent in self.graph.parents(queued.url):
                counters["siblings_raised"] += self.graph.raise_children(
                    parent, decision.raise_siblings, exclude=queued.url
                )
        if self._recrawl is not None:
            for url in decision.recrawl:
                if self._recrawl(url):
                    counters["recrawls_queued"] += 1
        for op in decision.column_ops:
            self.columns.combine_columns(op.dst, op.terms, add=op.add)

    def fetch_list(self, taken: Sequence[QueuedURL]) -> list[str]:
        """A fetch list was taken: the strategy's decision on it applied and logged; its
        re-crawls (fetched URLs to fetch with this list) returned for the scheduler to take."""
        decision = self.strategy.on_fetch_list(taken)
        if decision.is_empty():
            return []
        self.apply(replace(decision, recrawl=[]), None)
        self.log("fetch-list", Decision(recrawl=list(decision.recrawl), reason=decision.reason))
        return list(decision.recrawl)

    @property
    def outputs(self) -> list[WarcOutput | JsonlOutput]:
        """The WARC, pages.jsonl and decisions.jsonl (if kept)."""
        return [self.warc, self.pages, *([] if self.decisions is None else [self.decisions])]

    def close_outputs(self) -> None:
        """Close the outputs (each up to what it holds)."""
        for output in self.outputs:
            output.close()

    def add_seeds(self, seeds: Iterable[str]) -> None:
        """The strategy's seed scores (and other seed values, e.g. P0's initial cash)."""
        decision = Decision()
        updates = self.strategy.seed_scores(list(seeds))
        for update in updates:
            if update.column != "score":
                continue
            reason = self.scope.reject(update.url, 0)
            if reason is not None:
                self.stats.counters[names.seed_rejected(reason)] += 1
                continue
            self.queue.add(update.url, update.score, depth=0, parent=None,
                           host=host_of(update.url), merge=update.merge)  # fmt: skip
            decision.links.append(LinkScore(Link(update.url), update.score, reason=update.reason or "seed"))
        for update in updates:
            if update.column != "score":
                self.columns.update_values(update.column, [(update.url, update.score)], update.merge)
                decision.updates.append(update)
        if self.decisions is not None:
            self.decisions.write(decision_record("seeds", decision, default_merge=Merge.SET))
