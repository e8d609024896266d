"""The crawl loop: fetch list -> fetch -> parse -> judge -> strategy -> frontier.

Two schedules share the same per-result processing:

* continuous (default) or best-N-first batches (``crawl.fetch_list_size`` = N,
  P1): the best queued URLs of hosts that are neither busy nor cooling down are
  taken; in batch mode a whole list is fetched before the next is generated;
* layered (strategies with ``layered = True``, P0 / Nutch): ``depth`` rounds of
  generate(topN) -> fetch all -> update, then the strategy's ``on_layer_end``.

Exactly-once output: results are written to the WARC and JSONL files, the files
are fsynced, and then one SQLite transaction records the URLs' new states, the
new links and the files' lengths. A resumed crawl cuts the files back to the
recorded lengths and re-fetches whatever was in flight.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from focuscrawl.exceptions import ConfigError
from focuscrawl.fetch.base import Fetcher
from focuscrawl.frontier.base import FrontierStore
from focuscrawl.output.writers import JsonlOutput, WarcOutput
from focuscrawl.parse.html import page_from_fetch
from focuscrawl.relevance.base import RelevanceModel, judge
from focuscrawl.settings import Settings
from focuscrawl.stats import CrawlStats
from focuscrawl.strategies.base import Strategy
from focuscrawl.types import Decision, FetchResult, PageRecord, QueuedURL, URLState
from focuscrawl.urls import Scope, host_of, normalize_url

DB_NAME = "crawl.db"
WARC_NAME = "corpus.warc.gz"
PAGES_NAME = "pages.jsonl"
RUN_NAME = "run.json"

# Longest the loop sleeps without news (a completion or a host's delay running out).
_TICK = 0.25

# Errors that mean the request never reached the origin server (refused by rule,
# name not resolved, no connection, no TLS, refused by the proxy): the URL is not
# a fetched page, uses none of the page budget, and is counted as skipped_<error>.
# Once a host's robots.txt failed this way, all its URLs fail the same way at once.
_NOT_FETCHED = frozenset({"robots", "blocked-address", "bad-url", "dns", "connect", "ssl", "proxy"})


def normalize_seeds(seeds: Sequence[str]) -> list[str]:
    out: list[str] = []
    for seed in seeds:
        url = normalize_url(seed)
        if url is None:
            raise ConfigError(f"seed {seed!r} is not an http(s) URL")
        if url not in out:
            out.append(url)
    if not out:
        raise ConfigError("no seeds given")
    return out


class Crawler:
    """One crawl into one run directory. Build it, then ``await crawler.run()``."""

    def __init__(
        self,
        settings: Settings,
        seeds: Sequence[str],
        out_dir: Path,
        *,
        strategy: Strategy,
        fetcher: Fetcher,
        frontier: FrontierStore,
        model: RelevanceModel | None = None,
        resume: bool = False,
        on_progress: Callable[[CrawlStats], None] | None = None,
    ) -> None:
        if strategy.needs_model and model is None:
            raise ConfigError(f"strategy {strategy.name!r} needs a relevance model ([model] in the config)")
        self.settings = settings
        self.seeds = normalize_seeds(seeds)
        self.out_dir = out_dir
        self.strategy = strategy
        self.fetcher = fetcher
        self.frontier = frontier
        self.model = model
        self.resume = resume
        self.on_progress = on_progress
        self.scope = Scope.for_seeds(settings.scope, self.seeds)
        self.stats = CrawlStats()
        self.rng = random.Random(settings.crawl.seed)
        self._stop = asyncio.Event()
        self._host_inflight: Counter[str] = Counter()
        self._recent_hosts: set[str] = set()
        self._uncommitted = 0
        self._layer = 0  # layered mode: the layer that links found now belong to
        self.warc: WarcOutput | None = None
        self.pages: JsonlOutput | None = None

    # ------------------------------------------------------------------ set-up
    def request_stop(self) -> None:
        """Stop gracefully: no new fetches, finish and commit what is in flight."""
        self._stop.set()

    def _open(self) -> None:
        meta = self.frontier.get_meta("engine")
        if meta is None and self.resume and self.frontier.count() > 0:
            raise ConfigError(f"{self.out_dir}: crawl DB has no engine state; cannot resume")
        if meta is not None and not self.resume:
            raise ConfigError(f"{self.out_dir} holds a crawl already; use --resume or another --out")
        state: dict[str, Any] = json.loads(meta) if meta else {}
        warc_offset = state.get("warc_offset")
        pages_offset = state.get("pages_offset")
        self.out_dir.mkdir(parents=True, exist_ok=True)
        # a first run that died before its first commit starts the files afresh
        self.warc = WarcOutput(self.out_dir / WARC_NAME, warc_offset if meta else 0)
        self.pages = JsonlOutput(self.out_dir / PAGES_NAME, pages_offset if meta else 0)
        if meta:
            s = state.get("stats", {})
            self.stats.fetched = int(s.get("fetched", 0))
            self.stats.pages = int(s.get("pages", 0))
            self.stats.relevant = int(s.get("relevant", 0))
            self.stats.judged = int(s.get("judged", 0))
            self.stats.errors = int(s.get("errors", 0))
            self.stats.layer = int(s.get("layer", 0))
            self.stats.elapsed_before = float(s.get("elapsed", 0.0))
            self.stats.counters.update(s.get("counters", {}))
            self.strategy.load_state(state.get("strategy", {}))
            requeued = self.frontier.requeue_in_flight()
            self.stats.counters["resume_requeued"] += requeued
            self.stats.counters["resumes"] += 1
            self._commit()  # the resume itself is recorded, even if killed again at once
        else:
            self._add_seeds()
            self._commit()

    def _add_seeds(self) -> None:
        for update in self.strategy.seed_scores(self.seeds):
            reason = self.scope.reject(update.url, 0)
            if reason is not None:
                self.stats.counters[f"seed_rejected_{reason}"] += 1
                continue
            self.frontier.add(update.url, update.score, depth=0, parent=None, host=host_of(update.url), merge=update.merge)

    def _commit(self) -> None:
        """Make everything since the last commit durable, outputs first."""
        assert self.warc is not None
        assert self.pages is not None
        state = {
            "warc_offset": self.warc.sync(),
            "pages_offset": self.pages.sync(),
            "stats": self.stats.to_dict(),
            "strategy": self.strategy.state_dict(),
        }
        self.frontier.set_meta("engine", json.dumps(state))
        self.frontier.commit()
        self._uncommitted = 0

    # ------------------------------------------------------------------- the loop
    def _budget_left(self) -> int:
        limit = self.settings.crawl.max_pages
        if limit <= 0:
            return 1 << 30
        return limit - self.stats.fetched - sum(self._host_inflight.values())

    def _blocked_hosts(self) -> tuple[set[str], float]:
        """Hosts not to take URLs of now, and how long until a cooling host is ready.

        A host is blocked while it has ``per_host`` fetches in flight (a completion
        wakes the loop) or while its politeness delay runs (the returned wait wakes
        it: without it, short delays would be rounded up to the loop's tick).
        """
        per_host = self.settings.fetch.per_host
        now = time.monotonic()
        blocked = {h for h, n in self._host_inflight.items() if n >= per_host}
        wait = _TICK
        for host in list(self._recent_hosts):
            ready_at = self.fetcher.host_ready_at(host)
            if ready_at > now:
                blocked.add(host)
                if host not in self._host_inflight:
                    wait = min(wait, ready_at - now)
            elif self._host_inflight.get(host, 0) == 0:
                self._recent_hosts.discard(host)
        return blocked, max(wait, 0.0005)

    async def run(self) -> CrawlStats:
        self._open()
        self.stats.started = time.time()
        self._write_run_json(final=False)  # what --resume reads back after a crash
        try:
            if self.strategy.layered:
                await self._run_layered()
            else:
                await self._run_queue()
        finally:
            self._commit()
            self.stats.queued = self.frontier.count(URLState.QUEUED)
            self._write_run_json(final=True)
            assert self.warc is not None
            assert self.pages is not None
            self.warc.close()
            self.pages.close()
        return self.stats

    async def _fetch(self, queued: QueuedURL) -> tuple[QueuedURL, FetchResult]:
        try:
            return queued, await self.fetcher.fetch(queued.url)
        except Exception as exc:  # a fetcher bug must not kill the crawl: count it
            return queued, FetchResult(queued.url, queued.url, error=f"internal:{type(exc).__name__}")

    def _start(self, queued: QueuedURL, tasks: set[asyncio.Task[tuple[QueuedURL, FetchResult]]]) -> None:
        self._host_inflight[queued.host] += 1
        self._recent_hosts.add(queued.host)
        tasks.add(asyncio.create_task(self._fetch(queued)))

    async def _drain(
        self, tasks: set[asyncio.Task[tuple[QueuedURL, FetchResult]]], wait: float | None
    ) -> None:
        """Record the fetches that complete within ``wait`` seconds (None: the first one)."""
        if not tasks:
            if wait:
                await asyncio.sleep(wait)
            return
        done, _ = await asyncio.wait(tasks, timeout=wait, return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            tasks.discard(task)
            queued, result = task.result()
            self._host_inflight[queued.host] -= 1
            if self._host_inflight[queued.host] <= 0:
                del self._host_inflight[queued.host]
            self._record(queued, result)
            self._uncommitted += 1
        if self._uncommitted >= self.settings.crawl.commit_every:
            self._commit()

    async def _run_queue(self) -> None:
        tasks: set[asyncio.Task[tuple[QueuedURL, FetchResult]]] = set()
        batch = self.settings.crawl.fetch_list_size
        window = max(2, self.settings.fetch.concurrency * 2)
        while not self._stop.is_set():
            budget = self._budget_left()
            wait: float | None = None if batch else _TICK
            if budget > 0 and (batch == 0 or not tasks):
                want = min(budget, batch or window - len(tasks))
                if want > 0:
                    if batch:
                        taken = self.frontier.pop(want)
                    else:
                        blocked, wait = self._blocked_hosts()
                        taken = self.frontier.pop(
                            want, exclude_hosts=blocked, max_per_host=self.settings.fetch.per_host
                        )
                    for queued in taken:
                        self._start(queued, tasks)
            if not tasks and (budget <= 0 or self.frontier.count(URLState.QUEUED) == 0):
                break
            # until a fetch completes, or a cooling host is ready for its next URL
            await self._drain(tasks, wait)
            self._report()
        while tasks:  # graceful stop: let what is in flight finish
            await self._drain(tasks, None)

    async def _run_layered(self) -> None:
        crawl = self.settings.crawl
        tasks: set[asyncio.Task[tuple[QueuedURL, FetchResult]]] = set()
        while self.stats.layer < crawl.depth and not self._stop.is_set():
            layer = self.stats.layer
            # on resume, the pages of this layer recorded before the crash count
            already = self.stats.counters[f"layer_{layer}_fetched"]
            want = min(crawl.top_n - already, self._budget_left())
            taken = self.frontier.pop(want) if want > 0 else []
            if not taken and already == 0:
                break
            self._layer = layer + 1
            for queued in taken:
                self._start(queued, tasks)
            while tasks:
                await self._drain(tasks, 0.25)
                self._report()
            self._commit()
            if self._stop.is_set():
                break  # the layer is not over: it continues on resume
            self._apply(self.strategy.on_layer_end(layer), None)
            self.stats.layer = layer + 1
            self._commit()
            if self._budget_left() <= 0:
                break

    # ------------------------------------------------------- one result at a time
    def _record(self, queued: QueuedURL, result: FetchResult) -> None:
        """Judge, score and record one result (durable at the next commit)."""
        assert self.warc is not None
        assert self.pages is not None
        counters = self.stats.counters
        if self.strategy.layered:
            counters[f"layer_{self.stats.layer}_fetched"] += 1
        if result.error in _NOT_FETCHED:
            counters[f"skipped_{result.error}"] += 1
            self.frontier.mark(queued.url, URLState.FAILED)
            self._apply(self.strategy.on_failure(queued, result.error or ""), queued)
            return
        self.stats.fetched += 1
        record = PageRecord(
            url=queued.url,
            status=result.status,
            depth=queued.depth,
            parent=queued.parent,
            score=queued.score,
            relevance=None,
            fetched_at=result.fetched_at or time.time(),
            content_type=result.content_type,
            size=len(result.body),
            out_links=0,
            error=result.error,
            final_url=result.final_url if result.final_url != queued.url else None,
            layer=queued.layer,
            truncated=result.truncated,
        )
        if result.error is not None and result.status == 0:
            self.stats.errors += 1
            counters[f"error_{result.error}"] += 1
            self.frontier.mark(queued.url, URLState.FAILED)
            self.pages.write(record)
            self._apply(self.strategy.on_failure(queued, result.error), queued)
            return
        self.warc.write(result)
        self.frontier.mark(queued.url, URLState.FETCHED)
        if record.final_url:
            self._note_redirect_target(queued, result.final_url)
        if result.error is not None or not (200 <= result.status < 300):
            counters[f"status_{result.status}" if result.error is None else f"error_{result.error}"] += 1
            self.pages.write(record)
            self._apply(self.strategy.on_failure(queued, result.error or f"status-{result.status}"), queued)
            return
        try:
            page = page_from_fetch(
                result,
                context_words=self.settings.parse.context_words,
                max_links=self.settings.scope.max_links_per_page,
            )
        except Exception as exc:  # a parser failure on hostile HTML is counted, not fatal
            counters[f"parse_error_{type(exc).__name__}"] += 1
            self.pages.write(record)
            return
        page.depth = queued.depth
        page.parent = queued.parent
        self.stats.pages += 1
        relevance: float | None = None
        if self.model is not None:
            try:
                relevance, relevant = judge(self.model, page)
            except Exception as exc:  # a model failing on one odd page is counted
                counters[f"model_error_{type(exc).__name__}"] += 1
            else:
                record.relevance = round(relevance, 6)
                record.relevant = relevant
                self.stats.judged += 1
                self.stats.relevant += int(relevant)
        record.out_links = len(page.links)
        record.title = page.title or None
        record.lang = page.lang or None
        self.pages.write(record)
        decision = self.strategy.on_page(page, relevance, queued)
        self._apply(decision, queued)

    def _note_redirect_target(self, queued: QueuedURL, final_url: str) -> None:
        """The page now known under its final URL is not fetched a second time."""
        host = host_of(final_url)
        if self.frontier.state(final_url) is None:
            self.frontier.add(final_url, queued.score, depth=queued.depth, parent=queued.parent, host=host)
        if self.frontier.state(final_url) == URLState.QUEUED:
            self.frontier.mark(final_url, URLState.FETCHED)

    def _apply(self, decision: Decision, queued: QueuedURL | None) -> None:
        counters = self.stats.counters
        if decision.links and queued is not None:
            depth = queued.depth + 1
            max_per_host = self.settings.scope.max_pages_per_host
            items = []
            for ls in decision.links:
                url = ls.link.url
                if url == queued.url:
                    continue
                reason = self.scope.reject(url, depth)
                host = host_of(url)
                if (
                    reason is None
                    and max_per_host
                    and self.frontier.state(url) is None
                    and self.frontier.host_count(host) >= max_per_host
                ):
                    reason = "host-full"
                if reason is not None:
                    counters[f"link_rejected_{reason}"] += 1
                    continue
                items.append((url, float(ls.score), depth, queued.url, host, ls.link.count, 0))
            counters["links_new"] += self.frontier.add_many(items, merge=self.strategy.merge, layer=self._layer)
        by_merge: dict[Any, list[tuple[str, float]]] = {}
        for update in decision.updates:
            by_merge.setdefault(update.merge, []).append((update.url, update.score))
        for merge, updates in by_merge.items():
            self.frontier.update_scores(updates, merge)
        if decision.raise_siblings is not None and queued is not None:
            for parent in self.frontier.parents(queued.url):
                counters["siblings_raised"] += self.frontier.raise_children(
                    parent, decision.raise_siblings, exclude=queued.url
                )
        for url in decision.recrawl:
            if self.frontier.state(url) == URLState.FETCHED:
                self.frontier.mark(url, URLState.QUEUED)
                counters["recrawls"] += 1

    # --------------------------------------------------------------- reporting
    def _report(self) -> None:
        if self.on_progress is not None:
            self.stats.queued = self.frontier.count(URLState.QUEUED)
            self.on_progress(self.stats)

    def _write_run_json(self, *, final: bool) -> None:
        run = {
            "seeds": self.seeds,
            "strategy": self.strategy.name,
            "model": getattr(self.model, "name", None),
            "settings": self.settings.to_dict(),
            "finished": final,
            "stopped_early": self._stop.is_set(),
            "summary": self.stats.to_dict(),
        }
        path = self.out_dir / RUN_NAME
        tmp = path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(run, indent=2, ensure_ascii=False), encoding="utf-8")
        tmp.replace(path)
