"""What is fetched when: the URLs taken and not yet recorded, and the fetch-list policies.

The scheduler owns taking URLs from the frontier, putting them back, re-crawls,
and the order in which results reach the recorder. Two schedules
(``crawl.schedule``):

* **as-completed** (a live crawl's default): a result is handed over when it
  arrives, and the slot it freed is refilled at once, greedy by priority with
  each host's own room (``fetch.per_host``; the per-host delay, Crawl-delay and
  Retry-After are waited for inside the fetcher, holding no connection). A
  straggler (a hung request, a slow body) costs its own slot, never the crawl.
  The order of the results, and so of ``pages.jsonl``, depends on the network.
* **ordered** (the reproducible schedule; ``focuscrawl simulate`` and
  ``focuscrawl experiment``'s default): results are handed over strictly in the
  order their URLs were taken (a reorder buffer), and the window is refilled
  only at those logical points. With the same settings, seed and web, every
  crawl takes the same URLs in the same order, whatever the network does.

Three fetch-list policies, one class each:

* :class:`ContinuousScheduler`: the window holds up to ``crawl.window`` URLs, at
  most ``fetch.per_host`` per host, refilled after every result;
* :class:`BestNScheduler` (``crawl.fetch_list_size`` = N, P1's best-N-first): a
  list of the N best URLs is taken, and the next list is generated when it is
  done. As-completed, "done" is also "90 % of it recorded and
  ``crawl.straggler_seconds`` waited since": the stragglers stay in flight and
  are recorded when they come;
* :class:`LayeredScheduler` (strategies with ``layered = True``, P0 / Nutch):
  ``depth`` rounds of generate(topN) -> fetch all -> ``on_layer_end``. A layer is
  a barrier in both schedules (its end needs all its pages).
"""

from __future__ import annotations

import asyncio
import math
import time
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from focuscrawl.fetch.base import Fetcher
from focuscrawl.fetch.politeness import StragglerTime
from focuscrawl.frontier.base import FrontierStore
from focuscrawl.processing import Recorder
from focuscrawl.recrawls import InFlight
from focuscrawl.settings import Settings
from focuscrawl.stats import CrawlStats
from focuscrawl.strategies.base import Strategy
from focuscrawl.types import Decision, FetchResult, QueuedURL, URLState

__all__ = [
    "BestNScheduler",
    "ContinuousScheduler",
    "LayeredScheduler",
    "Scheduler",
    "Slot",
    "make_scheduler",
]

STOP_GRACE = 5.0  # seconds in-flight fetches may take to finish after a stop request
_LIST_DONE = 0.9  # best-N, as-completed: the share of a list after which stragglers are timed
_END_GAME = 100  # as-completed: 1 / this of the budget may be taken beyond it at its end,
_END_GAME_LIVE = 20  # or 1 / this of the URLs in flight
_END_GAME_POLL = 0.25  # seconds between two counts of the fetcher's stragglers in the end game

# None: taken while stopping, fetched on resume; a done future: refused without a fetch
Task = asyncio.Future[FetchResult] | None


@dataclass(slots=True, eq=False)
class Slot:
    """One URL taken from the frontier and not yet recorded."""

    item: InFlight
    task: Task
    started: float = 0.0  # monotonic time it was taken
    recorded: bool = False


class Scheduler(ABC):
    """Takes URLs from the frontier into a window of fetches and hands results back.

    The crawl loop calls :meth:`fill`, then :meth:`wait` for results (recording
    each and calling :meth:`settled`), and :meth:`next_round` when the window is
    empty. All state changes of URLs taken or put back happen here; the
    recorder changes the states of URLs whose results it records.
    """

    def __init__(
        self,
        settings: Settings,
        *,
        frontier: FrontierStore,
        fetcher: Fetcher,
        strategy: Strategy,
        recorder: Recorder,
        stats: CrawlStats,
        stop: asyncio.Event,
        ordered: bool,
        window: int,
        commit: Callable[[], None],
    ) -> None:
        self.settings = settings
        self.frontier = frontier
        self.fetcher = fetcher
        self.strategy = strategy
        self.recorder = recorder
        self.stats = stats
        self.ordered = ordered
        self.window_size = max(1, window)
        self._stop = stop
        self._commit = commit
        self._slots: deque[Slot] = deque()  # in the order taken; recorded ones leave from the left
        self._live = 0  # slots not recorded
        self._new = 0  # of them, URLs that are not re-crawls (they use the page budget)
        self._hosts: dict[str, int] = {}  # host -> slots not recorded
        self._finished: deque[Slot] = deque()  # as-completed: fetches done, not yet handed over
        self._waiter: asyncio.Future[None] | None = None  # as-completed: the loop waiting
        # as-completed: how long recent fetches took from being taken to their result
        # (politeness waits included), for what counts as a straggler
        # (at most, and until 32 fetches have been timed, crawl.straggler_seconds)
        seconds = settings.crawl.straggler_seconds
        self._straggler = StragglerTime(first=seconds, cap=seconds)

    # ------------------------------------------------------------ the window
    def __len__(self) -> int:
        """URLs taken and not yet recorded."""
        return self._live

    def in_flight(self) -> list[tuple[str, bool]]:
        """(url, re-crawl) of the URLs taken and not recorded, in the order taken."""
        return [(s.item.queued.url, s.item.recrawl) for s in self._slots if not s.recorded]

    def budget_left(self) -> int:
        """Pages that may still be taken: the budget less the pages recorded and the URLs
        in flight. As-completed, a URL in flight for longer than a straggler's time (see
        :meth:`_learn_duration`) holds no budget: another URL is taken in its place, and
        whichever of the two is not needed when the budget is reached is cancelled and put
        back (re-issued on resume). So a hung request never holds the end of a crawl back
        either; nor do the slowest of the last fetches (the end game below)."""
        limit = self.settings.crawl.max_pages
        if limit <= 0:
            return 1 << 30
        left = limit - self.stats.fetched - self._new
        if left > 0 or self.ordered or not self._new:
            return left
        # the end game (as BitTorrent's): with the whole budget in flight, more URLs than
        # it needs (1 % of the budget or 5 % of the URLs in flight, at least one), and one
        # more for each straggler: each URL here for longer than a straggler's time, or
        # each request the fetcher has under way for longer than its own straggler's
        # time (a slow body, a hung request: ~1 s of network time, where a URL's time
        # here includes its host's politeness waits), whichever is more; so the crawl
        # ends with the fastest answers, not its slowest; what is not needed is put back
        stragglers = sum(1 for _ in self._stragglers(time.monotonic()))
        late = max(stragglers, self.fetcher.stragglers())
        return left + late + max(1, limit // _END_GAME, self._live // _END_GAME_LIVE)

    def _fetching(self) -> Iterator[Slot]:
        """Fetches (not re-crawls) taken and not done yet: what holds page budget."""
        for slot in self._slots:
            if not slot.recorded and not slot.item.recrawl and not _done(slot):
                yield slot

    def _stragglers(self, now: float) -> Iterator[Slot]:
        """Fetches (not re-crawls) in flight for longer than a straggler's time."""
        cutoff = now - self._straggler.seconds
        return (slot for slot in self._fetching() if slot.started < cutoff)

    def budget_spent(self) -> bool:
        """As-completed: the budget is reached by pages recorded (what is still in flight
        is cancelled and put back). The ordered schedule never takes beyond its budget."""
        limit = self.settings.crawl.max_pages
        return not self.ordered and 0 < limit <= self.stats.fetched

    def _straggler_wake(self) -> float | None:
        """Seconds until a URL in flight becomes a straggler, while the budget is all
        in flight (as-completed): then a URL is taken in its place."""
        limit = self.settings.crawl.max_pages
        if self.ordered or limit <= 0 or limit - self.stats.fetched - self._new > 0:
            return None
        first = min((s.started for s in self._fetching()), default=None)
        if first is None:
            return None
        # (the fetcher's stragglers are counted again this often: they have no timer here)
        mine = first + self._straggler.seconds - time.monotonic()
        return max(0.0, min(mine, _END_GAME_POLL))

    def _learn_duration(self, slot: Slot) -> None:
        """A straggler is a fetch in flight for longer than 2 x the 95th percentile of
        the last 256 fetches' durations (at least 1 s, at most ``crawl.straggler_seconds``):
        on a slow web the bound grows with it, so few URLs are taken in place of others."""
        self._straggler.learn(time.monotonic() - slot.started)

    def _launch(self, item: InFlight) -> None:
        host = item.queued.host
        self._hosts[host] = self._hosts.get(host, 0) + 1
        self._live += 1
        self._new += not item.recrawl
        # while stopping (ordered), URLs are still taken where an uninterrupted crawl would
        # take them (so a resumed crawl takes the same ones), but left for the resume to fetch
        task: Task = None
        slot = Slot(item, None, time.monotonic())
        if not self._stop.is_set():
            url = item.queued.url
            refused = self._refusal(url)
            if refused is None:
                task = asyncio.create_task(self._fetch(url))
            else:  # settled like a fetch, in its turn: a finished one, without a task
                task = asyncio.get_running_loop().create_future()
                task.set_result(refused)
            slot.task = task
            if not self.ordered:
                task.add_done_callback(partial(self._done, slot))
        self._slots.append(slot)

    def _done(self, slot: Slot, _task: asyncio.Future[FetchResult]) -> None:
        self._finished.append(slot)
        self.wake()

    def wake(self) -> None:
        """Wake the loop waiting for results (a result came, a stop, a timer)."""
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

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

    def settled(self, slot: Slot) -> None:
        """``slot``'s result is recorded: its host's room and its place are given back."""
        slot.recorded = True
        if not self.ordered and slot.task is not None:
            self._learn_duration(slot)
        self._live -= 1
        self._new -= not slot.item.recrawl
        host = slot.item.queued.host
        left = self._hosts[host] - 1
        if left:
            self._hosts[host] = left
        else:
            del self._hosts[host]
        slots = self._slots
        while slots and slots[0].recorded:
            slots.popleft()

    # ---------------------------------------------------------- taking URLs
    def take(self, taken: Sequence[QueuedURL]) -> None:
        """Start a fetch list: the strategy hears of it first and may add re-crawls."""
        if not taken:
            return
        for queued in taken:
            self._launch(InFlight(queued, self.recorder.recrawls.taken(queued.url)))
        decision = self.strategy.on_fetch_list(taken)
        if decision.is_empty():
            return
        # re-crawls join this list at once, not the queue (what apply would do with them)
        self.recorder.apply(replace(decision, recrawl=[]), None)
        self.recorder.log(
            "fetch-list", Decision(recrawl=list(decision.recrawl), reason=decision.reason)
        )
        for url in decision.recrawl:
            if self.take_url(url, URLState.FETCHED, recrawl=True):
                self.stats.counters["recrawls"] += 1

    def take_url(self, url: str, state: URLState, *, recrawl: bool) -> bool:
        """Put one URL in ``state`` into the window, not popped (a resumed window, a re-crawl)."""
        if self.frontier.state(url) != state:
            return False
        self.frontier.mark(url, URLState.IN_FLIGHT)
        row = self.frontier.get(url)
        if row is None:
            return False
        self._launch(InFlight(row, recrawl))
        return True

    def reissue(self, window: Sequence[tuple[str, bool]]) -> None:
        """Resume: the window recorded at the last commit is re-taken in its order;
        anything else left in flight (a crash before the window was recorded) is queued again."""
        requeued = self.frontier.requeue_in_flight()
        for url, recrawl in window:
            self.take_url(url, URLState.QUEUED, recrawl=recrawl)
        self.stats.counters["resume_reissued"] += self._live
        self.stats.counters["resume_requeued"] += requeued - self._live

    def pop_list(self, want: int) -> list[QueuedURL]:
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

    @abstractmethod
    def fill(self) -> None:
        """Take what may be taken now (a logical point: the start, or after a result)."""

    def next_round(self) -> bool:
        """The window is empty: True if the crawl goes on (a layered crawl's next layer)."""
        return False

    def wake_in(self) -> float | None:
        """Seconds until :meth:`fill` may take more without a result coming in (None: never)."""
        return self._straggler_wake()

    # ----------------------------------------------------------- the results
    async def wait(self) -> list[tuple[Slot, FetchResult]]:
        """Results to record now, in the order to record them (empty: a stop was
        requested, or :meth:`wake_in` passed)."""
        if self.ordered:
            return await self._wait_head()
        return await self._wait_any()

    async def _wait_head(self) -> list[tuple[Slot, FetchResult]]:
        slot = self._slots[0]
        head = slot.task
        assert head is not None, "a URL taken while stopping is never waited for"
        # a finished head (the window's usual state under load) needs no watch for a stop
        if not head.done():
            await _first_of(head, self._stop)
            if not head.done():
                return []
        return [(slot, head.result())]

    async def _wait_any(self) -> list[tuple[Slot, FetchResult]]:
        # one future a wait, resolved by the first fetch done, a stop (the crawler calls
        # wake) or the timer: no task per wait, as results come one by one on a fast web
        if not self._finished and not self._stop.is_set():
            loop = asyncio.get_running_loop()
            self._waiter = waiter = loop.create_future()
            within = self.wake_in()
            timer = None if within is None else loop.call_later(within, self.wake)
            try:
                await waiter
            finally:
                self._waiter = None
                if timer is not None:
                    timer.cancel()
        out: list[tuple[Slot, FetchResult]] = []
        finished = self._finished
        while finished:
            slot = finished.popleft()
            task = slot.task
            if task is not None and not task.cancelled():
                out.append((slot, task.result()))
        return out

    async def drain(self, *, abort: bool, since: float) -> AsyncIterator[tuple[Slot, FetchResult]]:
        """After a stop request (at monotonic time ``since``): give the requests under way
        what is left of the grace period (none with ``abort``), hand over what finished (ordered: the finished head, in order,
        the window refilled after each as an uninterrupted crawl would; as-completed:
        all of it), and cancel the rest: its URLs stay in flight, and the window
        recorded at the final commit re-issues them on resume. A fetch that has no
        request under way (waiting for its host's delay, a connection, robots.txt, a
        back-off; or done with one and about to send another) is cancelled at once: a
        stop sends no new request, and waits for none that was not sent."""
        deadline = since + STOP_GRACE
        while not abort and time.monotonic() < deadline:
            pending = [s.task for s in self._slots if s.task is not None and not s.task.done()]
            sending = [t for t in pending if self.fetcher.sending(t)]
            for task in pending:
                if not self.fetcher.sending(task):
                    task.cancel()
            self.stats.counters["cancelled_in_flight"] += len(pending) - len(sending)
            if not sending:
                break
            await asyncio.wait(sending, timeout=0.1)
        if self.ordered:
            while (
                self._slots
                and (t := self._slots[0].task) is not None
                and t.done()
                and not t.cancelled()
            ):
                yield self._slots[0], t.result()
                self.fill()  # the same pops as an uninterrupted crawl (not fetched)
        else:
            for slot, result in await self._wait_any():
                yield slot, result
        await self.cancel()

    async def cancel(self) -> None:
        """Stop what is still in flight; its URLs stay IN_FLIGHT (and in :meth:`in_flight`)."""
        pending = [s.task for s in self._slots if s.task is not None and not s.task.done()]
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
            self.stats.counters["cancelled_in_flight"] += len(pending)
        self._finished.clear()


def _done(slot: Slot) -> bool:
    return slot.task is not None and slot.task.done()


async def _first_of(
    task: asyncio.Future[Any], stop: asyncio.Event, within: float | None = None
) -> None:
    """Wait until ``task`` is done, ``stop`` is set or ``within`` seconds pass."""
    if stop.is_set():
        return
    stopped = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({task, stopped}, timeout=within, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopped.cancel()


class ContinuousScheduler(Scheduler):
    """A window of up to ``window`` URLs, refilled after every result."""

    def fill(self) -> None:
        per_host = self.settings.fetch.per_host
        want = min(self.budget_left(), self.window_size - self._live)
        if want <= 0:
            return
        inflight = dict(self._hosts)
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
            got = self._patient(got, taken)
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
        self.take(taken)


    def _patient(self, got: list[QueuedURL], taken: list[QueuedURL]) -> list[QueuedURL]:
        """``got`` up to its first URL below ``crawl.patience`` x the best score in flight
        (taken before this fill or in it); that URL and the rest are put back."""
        patience = self.settings.crawl.patience
        if patience <= 0:
            return got
        scores = [slot.item.queued.score for slot in self._slots if not slot.recorded]
        best = max([*scores, *(q.score for q in taken)], default=None)
        for i, queued in enumerate(got):
            if best is not None and queued.score < patience * best:
                for later in got[i:]:
                    self.frontier.mark(later.url, URLState.QUEUED)
                return got[:i]
            best = queued.score if best is None else max(best, queued.score)
        return got


class BestNScheduler(Scheduler):
    """P1's best-N-first: a list of the N best URLs, fetched and recorded, then the next."""

    def __init__(self, settings: Settings, *, size: int, **kwargs: Any) -> None:
        super().__init__(settings, **kwargs)
        self.size = size
        self._list: set[Slot] = set()  # as-completed: the current list's slots not recorded
        self._list_len = 0
        self._mark: float | None = None  # when 90 % of the current list was recorded

    def _list_done(self) -> bool:
        if not self._list:
            return True
        if self._mark is None:
            return False
        return time.monotonic() - self._mark >= self.settings.crawl.straggler_seconds

    def fill(self) -> None:
        if self._stop.is_set():
            return
        if self.ordered:
            if self._live:
                return
        elif not self._list_done():
            return
        if self._list:
            self.stats.counters["fetch_list_stragglers"] += len(self._list)
        before = len(self._slots)
        self.take(self.pop_list(min(self.size, self.budget_left())))
        if not self.ordered:
            self._list = {s for s in list(self._slots)[before:] if not s.recorded}
            self._list_len = len(self._list)
            self._mark = None
            self._check_mark()

    def settled(self, slot: Slot) -> None:
        super().settled(slot)
        if slot in self._list:
            self._list.discard(slot)
            self._check_mark()

    def _check_mark(self) -> None:
        """Once 90 % of the list (rounded down) is recorded, its stragglers are timed."""
        if self._mark is None and self._list:
            recorded = self._list_len - len(self._list)
            if recorded >= math.floor(_LIST_DONE * self._list_len):
                self._mark = time.monotonic()

    def wake_in(self) -> float | None:
        budget = self._straggler_wake()
        if self.ordered or not self._list or self._mark is None:
            return budget
        mine = max(0.0, self._mark + self.settings.crawl.straggler_seconds - time.monotonic())
        return mine if budget is None else min(mine, budget)


class LayeredScheduler(Scheduler):
    """P0 / Nutch: ``depth`` rounds of generate(topN) -> fetch all -> update."""

    def __init__(self, settings: Settings, *, listed: bool, **kwargs: Any) -> None:
        super().__init__(settings, **kwargs)
        self.listed = listed  # this round's fetch list was generated (part of the resume state)
        self._over = False

    def fill(self) -> None:
        crawl = self.settings.crawl
        if self.listed or self._over or self._stop.is_set() or self.stats.layer >= crawl.depth:
            return
        self.recorder.round = self.stats.layer
        taken = self.pop_list(min(crawl.top_n, self.budget_left()))
        if not taken:
            self._over = True
            return
        self.listed = True
        self.take(taken)
        self._commit()  # the round's fetch list is recorded: a resume re-issues it

    def next_round(self) -> bool:
        if not self.listed or self._stop.is_set():
            return False
        layer = self.stats.layer
        self.recorder.log_event("layer-end", self.strategy.on_layer_end(layer))
        self.stats.layer = layer + 1
        self.listed = False
        self._commit()
        return self.budget_left() > 0 and self.stats.layer < self.settings.crawl.depth


def make_scheduler(
    settings: Settings, strategy: Strategy, *, layer_listed: bool, **kwargs: Any
) -> Scheduler:
    """The scheduler of a crawl's fetch-list policy: layered, best-N-first or continuous."""
    if strategy.layered:
        return LayeredScheduler(settings, strategy=strategy, listed=layer_listed, **kwargs)
    size = settings.crawl.fetch_list_size or strategy.default_fetch_list_size
    if size:
        return BestNScheduler(settings, strategy=strategy, size=size, **kwargs)
    return ContinuousScheduler(settings, strategy=strategy, **kwargs)
