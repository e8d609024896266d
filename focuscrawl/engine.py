"""The crawl loop: fetch list -> fetch -> parse -> judge -> filter -> strategy -> frontier.

Three roles, three objects: the :mod:`scheduler <focuscrawl.scheduler>` takes URLs
from the frontier into a window of fetches and hands results back (as they
complete, or in the order taken: ``crawl.schedule``); the :class:`recorder
<focuscrawl.processing.Recorder>` turns each result into records and frontier
changes; this module's :class:`Crawler` is the small loop between them, with
what belongs to the crawl as a whole: the run directory (its lock, its
outputs), commits, the resume state, ticks, the control channel and progress.

Exactly-once output: results are written to the WARC and JSONL files, the files
are fsynced, and then one SQLite transaction records the URLs' new states, the
new links, the files' lengths and the URLs in flight (:class:`ResumeState`). A
resumed crawl cuts the files back to the recorded lengths and re-issues the
URLs that were in flight: in the ordered schedule in their order, so even a
killed and resumed crawl takes the same URLs in the same order; as-completed the
order after a resume may differ, the set of pages recorded never loses or
doubles a URL.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from focuscrawl.control import ControlChannel
from focuscrawl.exceptions import ConfigError
from focuscrawl.fetch.base import Fetcher
from focuscrawl.frontier.base import FrontierStore
from focuscrawl.gc_tuning import crawl_gc
from focuscrawl.output.lock import RunLock
from focuscrawl.output.writers import JsonlOutput, WarcOutput
from focuscrawl.processing import DIGEST, RELEVANCE, Recorder
from focuscrawl.provenance import DECISIONS_NAME
from focuscrawl.recrawls import Recrawls
from focuscrawl.relevance.base import RelevanceModel
from focuscrawl.scheduler import Scheduler, Slot, make_scheduler
from focuscrawl.settings import Settings, ordered_schedule, scope_settings, window_size
from focuscrawl.stats import CrawlStats
from focuscrawl.strategies.base import Strategy
from focuscrawl.strategies.filters import LinkFilter
from focuscrawl.strategies.view import FrontierView
from focuscrawl.types import FetchResult, URLState
from focuscrawl.urls import Scope, normalize_url

DB_NAME = "crawl.db"
WARC_NAME = "corpus.warc.gz"
PAGES_NAME = "pages.jsonl"
RUN_NAME = "run.json"

_RUN_JSON_EVERY = 5.0  # seconds between two rewrites of run.json while the crawl runs


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


class SharedCrawl(Protocol):
    """What a crawl shared with other processes asks of its coordination
    (:class:`focuscrawl.workers.Coordination`): a page budget that grows by claims on
    the shared one, and whether to go on when this process has nothing to do."""

    def budget(self, fetched: int, in_flight: int) -> int:
        """This process's page budget now (it may claim more when it runs low)."""
        ...

    async def idle(self, fetched: int) -> bool:
        """Nothing to take or wait for here (all recorded and committed): True when the
        crawl may go on here (more came, or budget), False when it is over for this process."""
        ...

    def make_scheduler(self, settings: Settings, strategy: Strategy, **kwargs: Any) -> Scheduler:
        """The scheduler of this process's part of the crawl (``make_scheduler``'s arguments)."""
        ...


def check_model(strategy: Strategy, model: RelevanceModel | None) -> None:
    """One line if ``strategy`` needs a relevance model and has none."""
    if strategy.needs_model and model is None:
        raise ConfigError(
            f"strategy {strategy.name!r} needs a relevance model ([model] in the config)"
        )


def _sync_all(outputs: Sequence[WarcOutput | JsonlOutput]) -> list[int]:
    return [output.sync() for output in outputs]


@dataclass(frozen=True)
class ResumeState:
    """What a resume needs besides the store's rows: committed with them, in one transaction.

    ``window`` holds the URLs in flight (url, re-crawl) in the order taken; the
    offsets are the outputs' lengths that the committed rows account for.
    """

    warc_offset: int = 0
    pages_offset: int = 0
    decisions_offset: int | None = 0
    stats: Mapping[str, Any] = field(default_factory=dict)
    strategy: Mapping[str, Any] = field(default_factory=dict)
    rng: Any = None  # random.Random.getstate(), as JSON gives it back
    results: int = 0
    window: tuple[tuple[str, bool], ...] = ()
    layer_listed: bool = False
    recrawl_pending: tuple[str, ...] = ()
    control: tuple[Mapping[str, Any], ...] = ()
    control_id: int = 0

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @classmethod
    def from_json(cls, text: str) -> ResumeState:
        try:
            raw = json.loads(text)
            if not isinstance(raw, dict):
                raise TypeError(type(raw).__name__)
            return cls(
                warc_offset=int(raw.get("warc_offset") or 0),
                pages_offset=int(raw.get("pages_offset") or 0),
                decisions_offset=None
                if raw.get("decisions_offset") is None
                else int(raw["decisions_offset"]),
                stats=dict(raw.get("stats") or {}),
                strategy=dict(raw.get("strategy") or {}),
                rng=raw.get("rng"),
                results=int(raw.get("results") or 0),
                window=tuple((str(u), bool(r)) for u, r in raw.get("window") or ()),
                layer_listed=bool(raw.get("layer_listed", False)),
                recrawl_pending=tuple(str(u) for u in raw.get("recrawl_pending") or ()),
                control=tuple(dict(c) for c in raw.get("control") or ()),
                control_id=int(raw.get("control_id") or 0),
            )
        except (ValueError, TypeError, KeyError) as exc:
            raise ConfigError(
                f"the crawl DB's engine state is corrupt ({exc}); cannot resume"
            ) from None


class CommitThread:
    """The one thread that makes a crawl's outputs and store durable (fsyncs, SQLite's
    writes: both release the GIL), so that fetches in flight go on meanwhile."""

    def __init__(self) -> None:
        self._pool: concurrent.futures.ThreadPoolExecutor | None = None

    async def run(self, work: Callable[[], None]) -> None:
        """``work()`` in the thread. A thread cannot be stopped: if the waiting task is
        cancelled, the thread is waited for before the cancellation goes on, so that
        nothing (the final commit of a stopped crawl) touches the outputs or the store
        while it runs."""
        if self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(
                1, thread_name_prefix="focuscrawl-commit"
            )
        future = self._pool.submit(work)
        try:
            await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            concurrent.futures.wait([future])
            raise

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None


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
        self._add_seeds = add_seeds  # (a shared crawl's seeds are added by its first worker)
        self._stop = asyncio.Event()
        self._abort = False
        self._stop_at = 0.0  # when the stop was asked (monotonic)
        self._uncommitted = 0
        self._last_commit = time.monotonic()
        self._last_run_json = time.monotonic()
        self._control_log: list[dict[str, Any]] = []
        # the crawl's parts with another strategy, model, schedule or live/simulated
        # (a forced resume's; see focuscrawl.segments), kept in run.json
        self.segments: list[dict[str, Any]] = []
        self._control: ControlChannel | None = None
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
        meta = self.frontier.get_meta("engine")
        if meta is None and self.resume and self.frontier.count() > 0:
            raise ConfigError(f"{self.out_dir}: crawl DB has no engine state; cannot resume")
        if meta is not None and not self.resume:
            raise ConfigError(
                f"{self.out_dir} holds a crawl already: resume it (--resume; resume=True in Python)"
                " or choose another directory (--out; out)"
            )
        state = ResumeState.from_json(meta) if meta else None
        self.out_dir.mkdir(parents=True, exist_ok=True)
        pages_path = self.out_dir / PAGES_NAME
        if state is None and pages_path.exists() and pages_path.stat().st_size > 0:
            # records the crawl DB does not account for (a lost or emptied crawl.db): keep them
            raise ConfigError(
                f"{self.out_dir}: {PAGES_NAME} holds records but {DB_NAME} has no crawl state;"
                " refusing to overwrite them (move them away or use another --out)"
            )
        # a first run that died before its first commit starts the files afresh
        start = state if state is not None else ResumeState()
        # a state committed says the lengths, 0 too (killed before its first records)
        known = state is not None
        warc = WarcOutput(self.out_dir / WARC_NAME, start.warc_offset, committed=known)
        pages = JsonlOutput(self.out_dir / PAGES_NAME, start.pages_offset, committed=known)
        decisions = None
        if self.settings.crawl.provenance:
            decisions = JsonlOutput(
                self.out_dir / DECISIONS_NAME, start.decisions_offset, committed=known
            )
        columns = (
            RELEVANCE,
            *self.strategy.columns,
            *((DIGEST,) if self.strategy.recrawls else ()),
        )
        self.frontier.ensure_columns(columns)
        self.strategy.attach(FrontierView(self.frontier), self.rng)
        self._recorder = Recorder(
            self.settings, frontier=self.frontier, strategy=self.strategy, model=self.model,
            filters=self.filters, scope=self.scope, stats=self.stats, warc=warc, pages=pages,
            decisions=decisions, recrawls=Recrawls(self.frontier, start.recrawl_pending),
        )  # fmt: skip
        if state is not None:
            self.stats.restore(dict(state.stats))
            self.strategy.load_state(state.strategy)
            if state.rng is not None:
                self.rng.setstate(_rng_state(state.rng))
            self.recorder.results = state.results
            self.recorder.round = self.stats.layer
            self._control_log = [dict(c) for c in state.control]
            self.stats.counters["resumes"] += 1
        # (a shared crawl's worker is told: a resumed one may add them, see open_worker)
        if self._add_seeds and (state is None or self.shared is not None):
            self.recorder.add_seeds(self.seeds)
        self._control = ControlChannel(self.out_dir, start.control_id)
        make = make_scheduler if self.shared is None else self.shared.make_scheduler
        self._scheduler = make(
            self.settings, self.strategy, layer_listed=start.layer_listed,
            frontier=self.frontier, fetcher=self.fetcher, recorder=self.recorder,
            stats=self.stats, stop=self._stop, ordered=self.ordered,
            window=window_size(self.settings, self.ordered), commit=self._commit,
        )  # fmt: skip
        if self.shared is not None:
            self._set_budget(self.shared.budget(self.stats.fetched, 0))
        return state

    def _set_budget(self, limit: int) -> None:
        """A shared crawl's worker: its page budget is what it has claimed so far."""
        if limit == self.settings.crawl.max_pages:
            return
        self.settings = replace(self.settings, crawl=replace(self.settings.crawl, max_pages=limit))
        self.scheduler.settings = self.recorder.settings = self.settings

    def _outputs(self) -> list[WarcOutput | JsonlOutput]:
        rec = self.recorder
        return [rec.warc, rec.pages, *([] if rec.decisions is None else [rec.decisions])]

    def commit(self) -> None:
        """Make everything recorded so far durable now (a shared crawl's layer end)."""
        self._commit()

    def _commit(self) -> None:
        """Make everything since the last commit durable, outputs first."""
        state = self._state()
        self._store(_sync_all(self._outputs()), state)
        self._committed()

    async def _commit_overlapped(self) -> None:
        """:meth:`_commit`, its disk work in the commit thread: the fetches in flight go
        on reading meanwhile. The thread syncs the outputs (the builder's last records
        written, flushes, three fsyncs: some 2 ms of each commit, the whole loop stopped)
        and then commits the store (its rows, and SQLite's own writes, which release the
        GIL). Nothing is recorded during the wait (the loop is the only recorder, and the
        fetches touch neither the outputs nor the store), so the state committed is
        that of the lengths synced; it is read here, before the wait."""
        state = self._state()
        outputs = self._outputs()
        await self._commits.run(lambda: self._store(_sync_all(outputs), state))
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
            layer_listed=getattr(scheduler, "listed", False),
            recrawl_pending=tuple(sorted(self.recorder.recrawls.pending)),
            control=tuple(self._control_log),
            control_id=self._control.last_id if self._control is not None else 0,
        )

    def _store(self, offsets: list[int], state: ResumeState) -> None:
        """The commit of the store, once the outputs are durable up to ``offsets``."""
        decisions = offsets[2] if self.recorder.decisions is not None else None
        done = replace(
            state, warc_offset=offsets[0], pages_offset=offsets[1], decisions_offset=decisions
        )
        self.frontier.set_meta("engine", done.to_json())
        self.frontier.commit()

    def _committed(self) -> None:
        self._uncommitted = 0
        now = time.monotonic()
        if now - self._last_run_json >= _RUN_JSON_EVERY:  # the live numbers, for readers
            self._last_run_json = now
            self.stats.queued = self.frontier.count(URLState.QUEUED)  # (the dashboard shows it)
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
            try:
                scheduler.reissue(state.window if state is not None else ())
                await self._loop(scheduler)
            finally:
                await scheduler.cancel()
                rec = self.recorder
                rec.warc.stop_builder()
                self.stats.counters.update(rec.warc.builder_counts)
                self._commit()
                self.stats.queued = self.frontier.count(URLState.QUEUED)
                self.stats.ended = time.time()
                self._write_run_json(final=True)
                rec.warc.close()
                rec.pages.close()
                if rec.decisions is not None:
                    rec.decisions.close()
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
        if self.shared is not None:
            self._set_budget(self.shared.budget(self.stats.fetched, len(scheduler)))
        return scheduler.budget_spent()

    async def _go_on(self) -> bool:
        """Nothing left to take here: a shared crawl's worker commits what it recorded
        (its links reach the others) and asks whether the crawl goes on."""
        if self.shared is None or self._stop.is_set():
            return False
        await self._commit_overlapped()
        if not await self.shared.idle(self.stats.fetched):
            return False
        self._set_budget(self.shared.budget(self.stats.fetched, 0))
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
        self._poll_control()
        crawl = self.settings.crawl
        if self._uncommitted >= crawl.commit_every or (
            crawl.commit_seconds and time.monotonic() - self._last_commit >= crawl.commit_seconds
        ):
            await self._commit_overlapped()
        if self.shared is not None:
            self._set_budget(self.shared.budget(self.stats.fetched, len(self.scheduler)))
        self._report()

    # ------------------------------------------------------------ control
    def _poll_control(self) -> None:
        if self._control is None:
            return
        request = self._control.poll()
        if request is None:
            return
        changes = request.get("strategy") or {}
        error: str | None = None
        try:
            if not isinstance(changes, dict):
                raise ConfigError("control: 'strategy' must be a table of parameters")
            decision = self.strategy.set_params(changes)
        except ConfigError as exc:
            error = str(exc)
        else:
            self.recorder.log_event("control", decision)
            self._control_log.append(
                {"id": request["id"], "strategy": changes, "at": self.recorder.results}
            )
            self.stats.counters["control_changes"] += 1
        self._control.answer(int(request["id"]), error)
        self._commit()

    # --------------------------------------------------------------- reporting
    def _report(self) -> None:
        if self.on_progress is not None:
            self.stats.queued = self.frontier.count(URLState.QUEUED)
            self.on_progress(self.stats)

    def _write_run_json(self, *, final: bool) -> None:
        write_run_json(self.out_dir, {
            "seeds": self.seeds,
            "strategy": self.strategy.name,
            "strategy_params": self.strategy.params,
            "model": getattr(self.model, "name", None),
            "filters": [f.name for f in self.filters],
            "simulated_from": list(self.archives) or None,
            "settings": self.settings.to_dict(),
            "schedule": "ordered" if self.ordered else "as-completed",
            "finished": final and not self._stop.is_set(),
            "stopped_early": self._stop.is_set(),
            "control": self._control_log,
            **({"segments": self.segments} if self.segments else {}),
            "summary": self.stats.to_dict(),
        })  # fmt: skip


def write_run_json(out_dir: Path, run: dict[str, Any]) -> None:
    """``run.json``, replaced atomically (what ``--resume`` reads back)."""
    path = out_dir / RUN_NAME
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(run, indent=2, ensure_ascii=False, default=str), encoding="utf-8")
    tmp.replace(path)


def _rng_state(saved: Any) -> tuple[Any, ...]:
    """random.Random.getstate() after a JSON round trip (lists back to tuples)."""
    version, internal, gauss = saved
    return (version, tuple(internal), gauss)
