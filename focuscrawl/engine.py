"""The crawl loop: fetch list -> fetch -> parse -> judge -> filter -> strategy -> frontier.

A reproducible schedule. The frontier hands out URLs into a *window* of fetches
in flight; results are recorded strictly in the order their URLs were taken
(a reorder buffer), and the window is refilled only at those logical points,
with hosts blocked by their count of URLs in the window. Politeness waits
(per-host delay, Crawl-delay, Retry-After) happen inside the fetcher, below the
scheduler. So with the same settings, seed and web, every crawl takes the same
URLs in the same order and writes the same ``pages.jsonl`` (timestamps aside),
whatever the concurrency and however the network behaves; ``focuscrawl
simulate`` runs this very loop over an archive with no sockets and no sleeping.

Three schedules share that machinery:

* continuous (default): the window holds up to ``crawl.window`` URLs (32), at
  most ``fetch.per_host`` per host; the concurrency only sets how many of them
  are fetched at once, so it changes the speed of a crawl, never its order;
* best-N-first batches (``crawl.fetch_list_size`` = N, P1): a list of the N
  best URLs is taken, fetched and recorded before the next is generated;
* layered (strategies with ``layered = True``, P0 / Nutch): ``depth`` rounds of
  generate(topN) -> fetch all -> update, then the strategy's ``on_layer_end``.

Exactly-once output: results are written to the WARC and JSONL files, the files
are fsynced, and then one SQLite transaction records the URLs' new states, the
new links, the files' lengths and the window itself. A resumed crawl cuts the
files back to the recorded lengths and re-issues the recorded window in its
order, so even a killed and resumed crawl takes the same URLs in the same order.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import os
import random
import time
from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from focuscrawl.control import ControlChannel
from focuscrawl.exceptions import ConfigError
from focuscrawl.fetch.base import Fetcher
from focuscrawl.frontier.base import FrontierStore
from focuscrawl.gc_tuning import crawl_gc
from focuscrawl.output.writers import JsonlOutput, WarcOutput
from focuscrawl.processing import DIGEST, RELEVANCE, InFlight, ResultProcessor
from focuscrawl.provenance import DECISIONS_NAME
from focuscrawl.relevance.base import RelevanceModel
from focuscrawl.settings import Settings
from focuscrawl.stats import CrawlStats
from focuscrawl.strategies.base import Strategy
from focuscrawl.strategies.filters import LinkFilter
from focuscrawl.strategies.view import FrontierView
from focuscrawl.types import Decision, FetchResult, QueuedURL, URLState
from focuscrawl.urls import Scope, normalize_url

DB_NAME = "crawl.db"
WARC_NAME = "corpus.warc.gz"
PAGES_NAME = "pages.jsonl"
RUN_NAME = "run.json"

_STOP_GRACE = 5.0  # seconds in-flight fetches may take to finish after a stop request
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


def _sync_all(outputs: Sequence[WarcOutput | JsonlOutput]) -> list[int]:
    return [output.sync() for output in outputs]


_COMMITS = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="focuscrawl-commit")


async def _in_thread(work: Callable[[], None]) -> None:
    """``work()`` in the commit thread. A thread cannot be stopped: if the waiting task
    is cancelled, the thread is waited for before the cancellation goes on, so that
    nothing (the final commit of a stopped crawl) touches the outputs or the store
    while it runs."""
    future = _COMMITS.submit(work)
    try:
        await asyncio.wrap_future(future)
    except asyncio.CancelledError:
        concurrent.futures.wait([future])
        raise


# None: taken while stopping, fetched on resume; a done future: refused without a fetch
_Task = asyncio.Future[FetchResult] | None


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
        filters: Sequence[LinkFilter] = (),
        resume: bool = False,
        on_progress: Callable[[CrawlStats], None] | None = None,
        archives: Sequence[str] = (),
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
        self.filters = list(filters)
        self.resume = resume
        self.on_progress = on_progress
        self.scope = Scope.for_seeds(settings.scope, self.seeds)
        self.stats = CrawlStats()
        self.rng = random.Random(settings.crawl.seed)
        self._stop = asyncio.Event()
        self._abort = False
        self._window: deque[tuple[InFlight, _Task]] = deque()
        self._window_new = 0  # URLs in the window that are not re-crawls (use page budget)
        self._host_inflight: Counter[str] = Counter()
        self._uncommitted = 0
        self._last_commit = time.monotonic()
        self._last_run_json = time.monotonic()
        self.archives = tuple(archives)  # a simulated crawl's WARC files, named in run.json
        self._layer_listed = False  # layered mode: this round's fetch list was generated
        self._control_log: list[dict[str, Any]] = []
        self._control: ControlChannel | None = None
        self._proc: ResultProcessor | None = None
        self._builder_due = settings.crawl.warc_builder and (os.cpu_count() or 1) > 1

    @property
    def proc(self) -> ResultProcessor:
        assert self._proc is not None, "crawler not opened"
        return self._proc

    # ------------------------------------------------------------------ set-up
    def request_stop(self, *, now: bool = False) -> None:
        """Stop gracefully: no new fetches; what is in flight gets a few seconds to
        finish (none with ``now``, e.g. a second Ctrl-C) and the rest is re-fetched on resume."""
        if now:
            self._abort = True
        self._stop.set()

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    def _open(self) -> list[tuple[str, bool]]:
        """Open outputs and state; returns the window to re-issue (resume) in its order."""
        meta = self.frontier.get_meta("engine")
        if meta is None and self.resume and self.frontier.count() > 0:
            raise ConfigError(f"{self.out_dir}: crawl DB has no engine state; cannot resume")
        if meta is not None and not self.resume:
            raise ConfigError(f"{self.out_dir} holds a crawl already; use --resume or another --out")
        state: dict[str, Any] = json.loads(meta) if meta else {}
        self.out_dir.mkdir(parents=True, exist_ok=True)
        pages_path = self.out_dir / PAGES_NAME
        if meta is None and pages_path.exists() and pages_path.stat().st_size > 0:
            # records the crawl DB does not account for (a lost or emptied crawl.db): keep them
            raise ConfigError(
                f"{self.out_dir}: {PAGES_NAME} holds records but {DB_NAME} has no crawl state;"
                " refusing to overwrite them (move them away or use another --out)"
            )
        # a first run that died before its first commit starts the files afresh
        warc = WarcOutput(self.out_dir / WARC_NAME, state.get("warc_offset") if meta else 0)
        pages = JsonlOutput(self.out_dir / PAGES_NAME, state.get("pages_offset") if meta else 0)
        decisions = None
        if self.settings.crawl.provenance:
            decisions = JsonlOutput(self.out_dir / DECISIONS_NAME, state.get("decisions_offset") if meta else 0)
        columns = (RELEVANCE, *self.strategy.columns, *((DIGEST,) if self.strategy.recrawls else ()))
        self.frontier.ensure_columns(columns)
        self.strategy.attach(FrontierView(self.frontier), self.rng)
        self._proc = ResultProcessor(
            self.settings, frontier=self.frontier, strategy=self.strategy, model=self.model,
            filters=self.filters, scope=self.scope, stats=self.stats, warc=warc, pages=pages,
            decisions=decisions,
        )  # fmt: skip
        window: list[tuple[str, bool]] = []
        if meta:
            self.stats.restore(state.get("stats", {}))
            self.strategy.load_state(state.get("strategy", {}))
            if "rng" in state:
                self.rng.setstate(_rng_state(state["rng"]))
            self.proc.results = int(state.get("results", 0))
            self.proc.round = self.stats.layer
            self._layer_listed = bool(state.get("layer_listed", False))
            self.proc.recrawl_pending = set(state.get("recrawl_pending", []))
            self._control_log = list(state.get("control", []))
            window = [(str(u), bool(r)) for u, r in state.get("window", [])]
            self.stats.counters["resumes"] += 1
        else:
            self.proc.add_seeds(self.seeds)
        self._control = ControlChannel(self.out_dir, int(state.get("control_id", 0)))
        return window

    def _reissue(self, window: list[tuple[str, bool]]) -> None:
        """Resume: the window recorded at the last commit is re-taken in its order;
        anything else left in flight (a crash before the window was recorded) is queued again."""
        requeued = self.frontier.requeue_in_flight()
        for url, recrawl in window:
            self._take_url(url, URLState.QUEUED, recrawl=recrawl)
        self.stats.counters["resume_reissued"] += len(self._window)
        self.stats.counters["resume_requeued"] += requeued - len(self._window)

    def _outputs(self) -> list[WarcOutput | JsonlOutput]:
        proc = self.proc
        return [proc.warc, proc.pages, *([] if proc.decisions is None else [proc.decisions])]

    def _commit(self) -> None:
        """Make everything since the last commit durable, outputs first."""
        state = self._engine_state()
        self._store(_sync_all(self._outputs()), state)
        self._committed()

    async def _commit_overlapped(self) -> None:
        """:meth:`_commit`, its disk work in a thread: the fetches in flight go on reading
        meanwhile. The thread syncs the outputs (the builder's last records written,
        flushes, three fsyncs: some 2 ms of each commit, the whole loop stopped) and
        then commits the store (its rows, and SQLite's own writes, which release the
        GIL). Nothing is recorded during the wait (this is the only recorder, and the
        fetches touch neither the outputs nor the store), so the state committed is
        that of the lengths synced; it is read here, before the wait."""
        state = self._engine_state()
        outputs = self._outputs()
        await _in_thread(lambda: self._store(_sync_all(outputs), state))
        self._committed()

    def _engine_state(self) -> dict[str, Any]:
        """What a resume needs besides the store and the outputs' lengths (which
        :meth:`_store` adds), as it is now."""
        proc = self.proc
        for key, value in self.strategy.counters().items():
            self.stats.counters[key] = value
        return {
            "stats": self.stats.to_dict(),
            "strategy": self.strategy.state_dict(),
            "rng": self.rng.getstate(),
            "results": proc.results,
            "window": [[item.queued.url, item.recrawl] for item, _ in self._window],
            "layer_listed": self._layer_listed,
            "recrawl_pending": sorted(proc.recrawl_pending),
            "control": self._control_log,
            "control_id": self._control.last_id if self._control is not None else 0,
        }

    def _store(self, offsets: list[int], state: dict[str, Any]) -> None:
        """The commit of the store, once the outputs are durable up to ``offsets``."""
        lengths = {
            "warc_offset": offsets[0],
            "pages_offset": offsets[1],
            "decisions_offset": offsets[2] if self.proc.decisions is not None else None,
        }
        self.frontier.set_meta("engine", json.dumps({**lengths, **state}))
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
        window = self._open()
        self.stats.started = time.time()
        self._commit()  # the start (or the resume) is recorded, even if killed again at once
        self._write_run_json(final=False)  # what --resume reads back after a crash
        with crawl_gc():  # the collector set for a crawl loop (see gc_tuning)
            try:
                self._reissue(window)
                if self.strategy.layered:
                    await self._run_layered()
                else:
                    await self._run_queue()
            finally:
                await self._cancel_window()
                self.proc.warc.stop_builder()
                self.stats.counters.update(self.proc.warc.builder_counts)
                self._commit()
                self.stats.queued = self.frontier.count(URLState.QUEUED)
                self._write_run_json(final=True)
                self.proc.warc.close()
                self.proc.pages.close()
                if self.proc.decisions is not None:
                    self.proc.decisions.close()
        return self.stats

    def _budget_left(self) -> int:
        limit = self.settings.crawl.max_pages
        if limit <= 0:
            return 1 << 30
        return limit - self.stats.fetched - self._window_new

    async def _fetch(self, url: str) -> FetchResult:
        try:
            return await self.fetcher.fetch(url)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a fetcher bug must not kill the crawl: count it
            return FetchResult(url, url, error=f"internal:{type(exc).__name__}")

    def _refusal(self, url: str) -> FetchResult | None:
        try:
            return self.fetcher.refusal(url)
        except Exception:  # a fetcher bug: the fetch runs, and counts it if it fails too
            return None

    def _launch(self, item: InFlight) -> None:
        self._host_inflight[item.queued.host] += 1
        # while stopping, URLs are still taken where an uninterrupted crawl would take
        # them (so a resumed crawl takes the same ones), but left for the resume to fetch
        task: _Task = None
        if not self._stop.is_set():
            url = item.queued.url
            refused = self._refusal(url)
            if refused is None:
                task = asyncio.create_task(self._fetch(url))
            else:  # settled like a fetch, in its turn: a finished one, without a task
                task = asyncio.get_running_loop().create_future()
                task.set_result(refused)
        self._window.append((item, task))
        self._window_new += not item.recrawl

    def _take(self, taken: Sequence[QueuedURL]) -> None:
        """Start a fetch list: the strategy hears of it first and may add re-crawls."""
        if not taken:
            return
        pending = self.proc.recrawl_pending
        for queued in taken:
            again = queued.url in pending
            pending.discard(queued.url)
            self._launch(InFlight(queued, again))
        decision = self.strategy.on_fetch_list(taken)
        if decision.is_empty():
            return
        # re-crawls join this list at once, not the queue (what apply would do with them)
        self.proc.apply(replace(decision, recrawl=[]), None)
        self.proc.log("fetch-list", Decision(recrawl=list(decision.recrawl), reason=decision.reason))
        for url in decision.recrawl:
            if self._take_url(url, URLState.FETCHED, recrawl=True):
                self.stats.counters["recrawls"] += 1

    def _take_url(self, url: str, state: URLState, *, recrawl: bool) -> bool:
        """Put one URL in ``state`` into the window, not popped (a resumed window, a re-crawl)."""
        if self.frontier.state(url) != state:
            return False
        self.frontier.mark(url, URLState.IN_FLIGHT)
        row = self.frontier.get(url)
        if row is None:
            return False
        self._launch(InFlight(row, recrawl))
        return True

    def _refill(self) -> None:
        """Top the window up (continuous mode), at a logical point: after a result."""
        crawl = self.settings.crawl
        per_host = self.settings.fetch.per_host
        want = min(self._budget_left(), max(1, crawl.window) - len(self._window))
        if want <= 0:
            return
        inflight = dict(self._host_inflight)  # (plain dicts: a Counter costs a few µs to make)
        taken: list[QueuedURL] = []
        while len(taken) < want:
            blocked = {h for h, n in inflight.items() if n >= per_host}
            # Every host has room for per_host - inflight more URLs. One pop caps all hosts
            # alike, so it is capped at the least room of a host in flight (per_host if
            # none): it never takes a URL beyond a host's room, where a cap of per_host
            # made it take (with one host, 16 per host) 16 URLs to keep 1 and put 15 back.
            cap = per_host - max((n for n in inflight.values() if n < per_host), default=0)
            got = self.frontier.pop(want - len(taken), exclude_hosts=blocked, max_per_host=cap)
            if not got:
                break
            # Greedy by priority with each host's own room is the schedule. A host that
            # reached the common cap with room to spare may have a better URL than the
            # rest of this pop: keep the pop up to the first such URL, put back the rest.
            count: dict[str, int] = {}
            for i, queued in enumerate(got):
                host = queued.host
                count[host] = mine = count.get(host, 0) + 1
                inflight[host] = busy = inflight.get(host, 0) + 1
                taken.append(queued)
                if mine == cap and busy < per_host:
                    for later in got[i + 1 :]:
                        self.frontier.mark(later.url, URLState.QUEUED)
                    break
        self._take(taken)

    def _pop_list(self, want: int) -> list[QueuedURL]:
        """A fetch list of up to ``want`` best URLs, tier by tier (best-N-first, layered).

        One pop serves one tier; the next tier is reached when the higher one is empty.
        """
        taken: list[QueuedURL] = []
        while len(taken) < want:
            got = self.frontier.pop(want - len(taken))
            if not got:
                break
            taken += got
        return taken

    async def _settle_head(self) -> None:
        """Record the oldest fetch of the window (waiting for it if need be)."""
        item, task = self._window[0]
        assert task is not None
        result = await task
        self._window.popleft()
        self._window_new -= not item.recrawl
        host = item.queued.host
        self._host_inflight[host] -= 1
        if self._host_inflight[host] <= 0:
            del self._host_inflight[host]
        self.proc.record(item, result)
        self._uncommitted += 1
        if self._builder_due and self.proc.results >= self.settings.crawl.warc_builder_after:
            self._builder_due = False
            self.proc.warc.start_builder()  # the records are built on another core from here
        tick = self.strategy.tick_every
        if tick and self.proc.results % tick == 0:
            self.proc.log_event("tick", self.strategy.on_tick(self.proc.results))
        self._poll_control()
        crawl = self.settings.crawl
        if self._uncommitted >= crawl.commit_every or (
            crawl.commit_seconds and time.monotonic() - self._last_commit >= crawl.commit_seconds
        ):
            await self._commit_overlapped()
        self._report()

    def _batch_size(self) -> int:
        """N of best-N-first (0: continuous)."""
        return self.settings.crawl.fetch_list_size or self.strategy.default_fetch_list_size

    async def _run_queue(self) -> None:
        batch = self._batch_size()
        while True:
            if not batch:
                self._refill()  # while stopping too: those URLs are left for the resume
            elif not self._stop.is_set() and not self._window:
                self._take(self._pop_list(min(batch, self._budget_left())))
            if not self._window or not await self._settle_or_stop():
                break

    async def _settle_or_stop(self) -> bool:
        """Settle the head; on a stop request, give the window a grace period only,
        record what finished in order and cancel the rest (returns False: stop)."""
        head = self._window[0][1]
        # a finished head (the window's usual state under load) needs no watch for a stop
        if not self._stop.is_set() and head is not None and not head.done():
            stop = asyncio.ensure_future(self._stop.wait())
            try:
                watched: set[asyncio.Future[Any]] = {head, stop}
                await asyncio.wait(watched, return_when=asyncio.FIRST_COMPLETED)
            finally:
                stop.cancel()
        if self._stop.is_set():
            deadline = time.monotonic() + _STOP_GRACE
            while not self._abort and time.monotonic() < deadline:
                pending = [t for _, t in self._window if t is not None and not t.done()]
                if not pending:
                    break
                await asyncio.wait(pending, timeout=0.1)
            continuous = not (self.strategy.layered or self._batch_size())
            while self._window and (t := self._window[0][1]) is not None and t.done() and not t.cancelled():
                await self._settle_head()
                if continuous:
                    self._refill()  # the same pops as an uninterrupted crawl (not fetched)
            await self._cancel_window()
            return False
        await self._settle_head()
        return True

    async def _cancel_window(self) -> None:
        """Stop what is still in flight; its URLs stay IN_FLIGHT and the recorded
        window re-issues them on resume."""
        pending = [task for _, task in self._window if task is not None and not task.done()]
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
            self.stats.counters["cancelled_in_flight"] += len(pending)
        # kept in self._window so that the final commit records them

    async def _run_layered(self) -> None:
        crawl = self.settings.crawl
        while self.stats.layer < crawl.depth and not self._stop.is_set():
            layer = self.stats.layer
            self.proc.round = layer
            if not self._layer_listed:
                want = min(crawl.top_n, self._budget_left())
                taken = self._pop_list(want)
                if not taken:
                    break
                self._layer_listed = True
                self._take(taken)
                self._commit()  # the round's fetch list is recorded: a resume re-issues it
            while self._window and await self._settle_or_stop():
                pass
            if self._stop.is_set():
                break  # the layer is not over: it continues on resume
            self.proc.log_event("layer-end", self.strategy.on_layer_end(layer))
            self.stats.layer = layer + 1
            self._layer_listed = False
            self._commit()
            if self._budget_left() <= 0:
                break

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
            self.proc.log_event("control", decision)
            self._control_log.append({"id": request["id"], "strategy": changes, "at": self.proc.results})
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
            "finished": final and not self._stop.is_set(),
            "stopped_early": self._stop.is_set(),
            "control": self._control_log,
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
