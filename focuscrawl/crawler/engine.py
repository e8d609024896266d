"""The crawl loop: fetch list -> fetch -> parse -> judge -> filter -> strategy -> frontier.

The :mod:`scheduler <focuscrawl.crawler.scheduler>` takes URLs into a window of
fetches and hands results back; the :class:`recorder
<focuscrawl.crawler.recorder.Recorder>` turns each into records and frontier changes;
the :class:`Crawler` is the small loop between them, with what belongs to the crawl as
a whole: the run directory, commits, the resume state, ticks, control and progress.

Exactly-once output: results are written to the WARC and JSONL files, the files are
fsynced, then one SQLite transaction records the URLs' new states, the new links, the
files' lengths and the URLs in flight (:class:`~focuscrawl.crawler.run.ResumeState`).
A resume cuts the files back to those lengths and re-issues the URLs in flight (in
their order, ordered: a killed and resumed crawl takes the same URLs in the same
order; as-completed the order may differ, no URL is lost or doubled).
"""

from __future__ import annotations

import asyncio
import os
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from focuscrawl.control import StrategyControl
from focuscrawl.crawler.budget import Budget
from focuscrawl.crawler.policies import FetchPolicy, make_policy
from focuscrawl.crawler.recorder import DIGEST, RELEVANCE, Recorder
from focuscrawl.crawler.rounds import Layered, LocalRounds
from focuscrawl.crawler.run import (
    CommitThread,
    ResumeState,
    check_model,
    normalize_seeds,
    open_outputs,
    resume_state,
    rng_state,
    sync_all,
    write_run_json,
)
from focuscrawl.crawler.scheduler import Scheduler
from focuscrawl.crawler.shared import SharedCrawl
from focuscrawl.crawler.window import Slot, make_window
from focuscrawl.fetch.base import Fetcher
from focuscrawl.frontier.base import FrontierStore
from focuscrawl.gc_tuning import crawl_gc
from focuscrawl.output.lock import RunLock
from focuscrawl.relevance.base import RelevanceModel
from focuscrawl.settings import Settings, ordered_schedule, scope_settings
from focuscrawl.stats import CrawlStats
from focuscrawl.strategies.base import Strategy
from focuscrawl.strategies.filters import LinkFilter
from focuscrawl.strategies.view import FrontierView
from focuscrawl.types import Decision, FetchResult, QueuedURL, URLState
from focuscrawl.urls import Scope

_RUN_JSON_EVERY = 5.0  # seconds between two rewrites of run.json while the crawl runs


class Crawler:
    """One crawl into one run directory. Build it, then ``await crawler.run()``;
    :meth:`close` when done (the store, and the run directory's lock)."""

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
        filters: Sequence[LinkFilter] = (),
        resume: bool = False,
        on_progress: Callable[[CrawlStats], None] | None = None,
        archives: Sequence[str] = (),
        lock: RunLock | None = None,
        shared: SharedCrawl | None = None,
        add_seeds: bool = True,
    ) -> None:
        check_model(strategy, model)
        self.settings = settings
        self.seeds = normalize_seeds(seeds)
        self.out_dir = out_dir
        self.strategy = strategy
        self.fetcher = fetcher
        self.frontier = frontier
        self.model = model
        self.filters = list(filters)
        self.resume = resume
        self.on_progress = on_progress
        self.scope = Scope.for_seeds(scope_settings(settings), self.seeds)  # .pdf refused without parse.pdf
        self.stats = CrawlStats()
        self.rng = random.Random(settings.crawl.seed)
        self.archives = tuple(archives)  # a simulated crawl's WARC files, named in run.json
        self.ordered = ordered_schedule(settings.crawl, simulated=bool(self.archives))
        self.lock = lock
        self.shared = shared  # a worker of a shared crawl (focuscrawl.workers)
        self.budget = Budget(settings.crawl.max_pages, shared)
        self._add_seeds = add_seeds  # (a shared crawl's seeds are added by its first worker)
        self._stop = asyncio.Event()
        self._abort = False
        self._stop_at = 0.0  # when the stop was asked (monotonic)
        self._uncommitted = 0
        self._last_commit = time.monotonic()
        self._last_run_json = time.monotonic()
        # the crawl's parts with another strategy, model, schedule or live/simulated
        # (a forced resume's; see focuscrawl.segments), kept in run.json
        self.segments: list[dict[str, Any]] = []
        self._control: StrategyControl | None = None
        self._recorder: Recorder | None = None
        self._scheduler: Scheduler | None = None
        self._commits = CommitThread()
        self._builder_due = settings.crawl.warc_builder and (os.cpu_count() or 1) > 1

    @property
    def recorder(self) -> Recorder:
        assert self._recorder is not None, "crawler not opened"
        return self._recorder

    @property
    def scheduler(self) -> Scheduler:
        assert self._scheduler is not None, "crawler not opened"
        return self._scheduler

    def close(self, *, failed: bool = False) -> None:
        """Close the store and give the run directory back (its lock); a new crawl that
        ``failed`` first takes back what it wrote, if it recorded nothing (under its lock:
        see :meth:`RunLock.take_back`)."""
        self._commits.close()
        self.frontier.close()
        if self.lock is not None:
            if failed and not self.resume:
                self.lock.take_back()
            self.lock.release()

    # ------------------------------------------------------------------ set-up
    def request_stop(self, *, now: bool = False) -> None:
        """Stop gracefully: no new fetches; what is in flight gets a few seconds to
        finish (none with ``now``, e.g. a second Ctrl-C) and the rest is re-fetched on resume."""
        if now:
            self._abort = True
        if not self._stop.is_set():
            self._stop_at = time.monotonic()  # the grace period runs from here
        self._stop.set()
        if self._scheduler is not None:
            self._scheduler.wake()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def _open(self) -> ResumeState | None:
        """Open outputs and state; returns the state to resume from (None: a new crawl)."""
        state = resume_state(self.frontier, self.frontier, self.out_dir, resume=self.resume)
        # a first run that died before its first commit starts the files afresh
        start = state if state is not None else ResumeState()
        warc, pages, decisions = open_outputs(
            self.out_dir, start, committed=state is not None, provenance=self.settings.crawl.provenance
        )
        columns = (
            RELEVANCE,
            *self.strategy.columns,
            *((DIGEST,) if self.strategy.recrawls else ()),
        )
        self.frontier.ensure_columns(columns)
        self.strategy.attach(FrontierView(self.frontier), self.rng)
        window = make_window(  # a redirect's target through the scope (not its extension: its type decides)
            self.fetcher, self.stats, self._stop, self.settings, ordered=self.ordered,
            scope=partial(self.scope.reject, extensions=False),
        )  # fmt: skip
        self._scheduler = scheduler = Scheduler(
            self._policy(start.layer_listed), window, queue=self.frontier, budget=self.budget,
            stats=self.stats, stop=self._stop, fetch_list=self._fetch_list,
            recrawl_pending=start.recrawl_pending,
        )  # fmt: skip
        f = self.frontier
        self._recorder = Recorder(
            self.settings, queue=f, columns=f, graph=f, strategy=self.strategy, model=self.model,
            filters=self.filters, scope=self.scope, stats=self.stats, warc=warc, pages=pages,
            decisions=decisions, recrawl=scheduler.recrawl, journal=f if self.shared is None else None,
        )  # fmt: skip
        if state is not None:
            self.stats.restore(dict(state.stats))
            self.strategy.load_state(state.strategy)
            if state.rng is not None:
                self.rng.setstate(rng_state(state.rng))
            self.recorder.results = state.results
            self.recorder.duplicates.restore(self.frontier if self.shared is None else None)
            self.stats.counters["resumes"] += 1
        # (a shared crawl's worker is told: a resumed one may add them, see open_worker)
        if self._add_seeds and (state is None or self.shared is not None):
            self.recorder.add_seeds(self.seeds)
        self._control = StrategyControl(self.out_dir, start.control_id, start.control)
        self.budget.claim(self.stats.fetched, 0)
        return state

    def _policy(self, listed: bool) -> FetchPolicy:
        """The fetch-list policy: layered rounds (local or shared), best-N-first or continuous."""
        if not self.strategy.layered:
            return make_policy(self.settings, self.strategy)
        crawl = self.settings.crawl
        if self.shared is not None:
            return Layered(self.shared.rounds(self.stats))
        return Layered(LocalRounds(
            self.stats, self.strategy, depth=crawl.depth, top_n=crawl.top_n,
            decide=self._decide, commit=self._commit, listed=listed,
        ))  # fmt: skip

    def _fetch_list(self, taken: Sequence[QueuedURL]) -> Sequence[str]:
        """The scheduler took a fetch list: the recorder applies the strategy's decision."""
        return self.recorder.fetch_list(taken)

    def _decide(self, event: str, decision: Decision) -> None:  # (the recorder's, once built)
        self.recorder.log_event(event, decision)

    def commit(self) -> None:
        """Make everything recorded so far durable now (a shared crawl's layer end)."""
        self._commit()

    def _commit(self) -> None:
        """Make everything since the last commit durable, outputs first."""
        state, dedup = self._state(), self.recorder.duplicates.take_journal()
        self._store(sync_all(self.recorder.outputs), state, dedup)
        self._committed()

    async def _commit_overlapped(self) -> None:
        """:meth:`_commit`, its disk work in the commit thread: the fetches in flight go
        on reading meanwhile. The thread syncs the outputs (the builder's last records
        written, flushes, three fsyncs: some 2 ms of each commit, the whole loop stopped)
        and then commits the store (its rows, and SQLite's own writes, which release the
        GIL). Nothing is recorded during the wait (the loop is the only recorder, and the
        fetches touch neither the outputs nor the store), so the state committed is
        that of the lengths synced; it is read here, before the wait."""
        state, dedup, outputs = self._state(), self.recorder.duplicates.take_journal(), self.recorder.outputs
        await self._commits.run(lambda: self._store(sync_all(outputs), state, dedup))
        self._committed()

    def _state(self) -> ResumeState:
        """What a resume needs besides the store and the outputs' lengths (which
        :meth:`_store` adds), as it is now."""
        for key, value in self.strategy.counters().items():
            self.stats.counters[key] = value
        scheduler = self.scheduler
        return ResumeState(
            stats=self.stats.to_dict(),
            strategy=self.strategy.state_dict(),
            rng=self.rng.getstate(),
            results=self.recorder.results,
            window=tuple(scheduler.in_flight()),
            layer_listed=scheduler.listed,
            recrawl_pending=tuple(sorted(scheduler.recrawl_pending)),
            control=tuple(self._control.applied) if self._control is not None else (),
            control_id=self._control.channel.last_id if self._control is not None else 0,
        )

    def _store(self, offsets: list[int], state: ResumeState, dedup: str | None = None) -> None:
        """The store's commit (with ``dedup``: see PageDuplicates), the outputs durable up to ``offsets``."""
        decisions = offsets[2] if self.recorder.decisions is not None else None
        done = replace(state, warc_offset=offsets[0], pages_offset=offsets[1], decisions_offset=decisions)
        self.frontier.set_meta("engine", done.to_json())
        self.recorder.duplicates.commit(self.frontier, dedup if self.shared is None else None)
        self.frontier.commit()

    def _committed(self) -> None:
        self._uncommitted = 0
        now = time.monotonic()
        if now - self._last_run_json >= _RUN_JSON_EVERY:  # the live numbers, for readers
            self._last_run_json = now
            self.stats.queued = self.frontier.count(URLState.QUEUED)  # (the dashboard shows it)
            self.stats.in_flight = len(self.scheduler)  # (for /metrics)
            self._write_run_json(final=False)
        self._last_commit = now

    # ------------------------------------------------------------------- the loop
    async def run(self) -> CrawlStats:
        state = self._open()
        self.stats.started = time.time()
        self._commit()  # the start (or the resume) is recorded, even if killed again at once
        self._write_run_json(final=False)  # what --resume reads back after a crash
        scheduler = self.scheduler
        with crawl_gc():  # the collector set for a crawl loop (see gc_tuning)
            ended = False  # the loop ran to its end (else run.json says not finished)
            try:
                scheduler.reissue(state.window if state is not None else ())
                await self._loop(scheduler)
                ended = True
            finally:
                await scheduler.cancel()
                self.recorder.warc.stop_builder()
                self.stats.counters.update(self.recorder.warc.builder_counts)
                try:
                    self._commit()
                    self.stats.queued = self.frontier.count(URLState.QUEUED)
                except BaseException:
                    ended = False
                    raise
                finally:  # the numbers of what the files hold, even when the store failed
                    self.stats.ended = time.time()
                    self.stats.in_flight = 0  # nothing is fetched any more
                    self._write_run_json(final=ended)
                    self.recorder.close_outputs()
                    self._commits.close()
        return self.stats

    async def _loop(self, scheduler: Scheduler) -> None:
        """fill -> wait for results -> record each, until nothing is left or a stop."""
        while True:
            scheduler.fill()  # while stopping too (ordered): those URLs are left for the resume
            if not len(scheduler):
                if scheduler.next_round() or await self._go_on():
                    continue
                break
            if self._stop.is_set():
                async for slot, result in scheduler.drain(abort=self._abort, since=self._stop_at):
                    if not scheduler.budget_spent():  # (else put back, as below)
                        await self._record(slot, result)
                break
            for slot, result in await scheduler.wait():
                if self._spent(scheduler):
                    break  # (as-completed) the rest, done or in flight, is put back
                await self._record(slot, result)
            if self._spent(scheduler):
                break

    def _spent(self, scheduler: Scheduler) -> bool:
        """The budget is reached (a shared crawl's worker first claims more)."""
        if not scheduler.budget_spent():
            return False
        self.budget.claim(self.stats.fetched, len(scheduler))
        return scheduler.budget_spent()

    async def _go_on(self) -> bool:
        """Nothing left to take here: a shared crawl's worker commits what it recorded
        (its links reach the others) and asks whether the crawl goes on."""
        if self.shared is None or self._stop.is_set():
            return False
        await self._commit_overlapped()
        if not await self.shared.idle(self.stats.fetched):
            return False
        self.budget.claim(self.stats.fetched, 0)
        return True

    async def _record(self, slot: Slot, result: FetchResult) -> None:
        """One result recorded, and what follows it: ticks, control, a commit, progress."""
        rec = self.recorder
        rec.record(slot.item, result)
        self.scheduler.settled(slot)
        self._uncommitted += 1
        if self._builder_due and rec.results >= self.settings.crawl.warc_builder_after:
            self._builder_due = False
            rec.warc.start_builder()  # the records are built on another core from here
        tick = self.strategy.tick_every
        if tick and rec.results % tick == 0:
            rec.log_event("tick", self.strategy.on_tick(rec.results))
        if self._control is not None and self._control.poll(
            self.strategy, self._decide, rec.results, self.stats.counters
        ):
            self._commit()
        crawl = self.settings.crawl
        if self._uncommitted >= crawl.commit_every or (
            crawl.commit_seconds and time.monotonic() - self._last_commit >= crawl.commit_seconds
        ):
            await self._commit_overlapped()
        self.budget.claim(self.stats.fetched, len(self.scheduler))
        self._report()

    def _report(self) -> None:
        if self.on_progress is not None:
            self.stats.queued = self.frontier.count(URLState.QUEUED)
            self.on_progress(self.stats)

    def _write_run_json(self, *, final: bool) -> None:
        settings = self.settings  # (a worker's max_pages: what it has claimed)
        if self.budget.shared:
            settings = replace(settings, crawl=replace(settings.crawl, max_pages=self.budget.limit))
        write_run_json(self.out_dir, {
            "seeds": self.seeds,
            "strategy": self.strategy.name,
            "strategy_params": self.strategy.params,
            "model": getattr(self.model, "name", None),
            "filters": [f.name for f in self.filters],
            "simulated_from": list(self.archives) or None,
            "settings": settings.to_dict(),
            "schedule": "ordered" if self.ordered else "as-completed",
            "finished": final and not self._stop.is_set(),
            "stopped_early": self._stop.is_set(),
            "control": self._control.applied if self._control is not None else [],
            **({"segments": self.segments} if self.segments else {}),
            "summary": self.stats.to_dict(),
            "live": self.stats.live(),
        })  # fmt: skip


