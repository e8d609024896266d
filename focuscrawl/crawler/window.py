"""The window of fetches: the URLs taken and not yet recorded, and the order in which
their results reach the recorder (``crawl.schedule``).

* :class:`AsCompletedWindow` (a live crawl's default): a result is handed over when
  it arrives, and the slot it freed may be refilled at once. A straggler (a hung
  request, a slow body) costs its own slot, never the crawl: while the whole budget
  is in flight, more URLs than it needs are taken (the end game), and what is not
  needed is put back. The order of the results, and so of ``pages.jsonl``, depends
  on the network.
* :class:`OrderedWindow` (the reproducible schedule; ``focuscrawl simulate`` and
  ``focuscrawl experiment``'s default): results are handed over strictly in the
  order their URLs were taken (a reorder buffer), so the window is refilled only at
  those logical points. With the same settings, seed and web, every crawl takes the
  same URLs in the same order, whatever the network does.

The window knows nothing of the frontier: the :mod:`scheduler
<focuscrawl.crawler.scheduler>` takes URLs from it and puts them back.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

from focuscrawl.fetch.base import Fetcher
from focuscrawl.fetch.politeness import StragglerTime
from focuscrawl.stats import CrawlStats
from focuscrawl.types import FetchResult, QueuedURL

__all__ = ["AsCompletedWindow", "InFlight", "OrderedWindow", "Slot", "Window", "make_window"]

STOP_GRACE = 5.0  # seconds in-flight fetches may take to finish after a stop request
_END_GAME = 100  # as-completed: 1 / this of the budget may be taken beyond it at its end,
_END_GAME_LIVE = 20  # or 1 / this of the URLs in flight
_END_GAME_POLL = 0.25  # seconds between two counts of the fetcher's stragglers in the end game

# None: taken while stopping, fetched on resume; a done future: refused without a fetch
Task = asyncio.Future[FetchResult] | None
Results = list[tuple["Slot", FetchResult]]


@dataclass(slots=True)
class InFlight:
    """A URL taken from the frontier, with what the recorder must know when it returns."""

    queued: QueuedURL
    recrawl: bool = False


@dataclass(slots=True, eq=False)
class Slot:
    """One URL taken from the frontier and not yet recorded."""

    item: InFlight
    task: Task
    started: float = 0.0  # monotonic time it was taken
    recorded: bool = False


class Window:
    """Up to ``size`` fetches under way, each in a :class:`Slot`, in the order taken."""

    ordered: bool

    def __init__(self, fetcher: Fetcher, stats: CrawlStats, stop: asyncio.Event, size: int) -> None:
        self.fetcher = fetcher
        self.stats = stats
        self.size = max(1, size)
        self._stop = stop
        self._slots: deque[Slot] = deque()  # in the order taken; recorded ones leave from the left
        self.live = 0  # slots not recorded
        self.new = 0  # of them, URLs that are not re-crawls (they use the page budget)
        self.hosts: dict[str, int] = {}  # host -> slots not recorded

    def __len__(self) -> int:
        """URLs taken and not yet recorded."""
        return self.live

    def open_slots(self) -> Iterator[Slot]:
        """The slots not recorded, in the order taken."""
        return (s for s in self._slots if not s.recorded)

    def slots_since(self, start: int) -> list[Slot]:
        """The slots taken after the first ``start`` still held (see :meth:`held`)."""
        return [s for s in list(self._slots)[start:] if not s.recorded]

    def held(self) -> int:
        """Slots held (recorded ones not yet given back included): a mark for :meth:`slots_since`."""
        return len(self._slots)

    # ------------------------------------------------------------ taking
    def launch(self, item: InFlight) -> None:
        """Start the fetch of ``item`` (while stopping: taken, left for the resume)."""
        host = item.queued.host
        self.hosts[host] = self.hosts.get(host, 0) + 1
        self.live += 1
        self.new += not item.recrawl
        # while stopping (ordered), URLs are still taken where an uninterrupted crawl would
        # take them (so a resumed crawl takes the same ones), but left for the resume to fetch
        slot = Slot(item, None, time.monotonic())
        if not self._stop.is_set():
            url = item.queued.url
            refused = self._refusal(url)
            task: asyncio.Future[FetchResult]
            if refused is None:
                task = asyncio.create_task(self._fetch(url))
            else:  # settled like a fetch, in its turn: a finished one, without a task
                task = asyncio.get_running_loop().create_future()
                task.set_result(refused)
            slot.task = task
            self._watch(slot, task)
        self._slots.append(slot)

    def _watch(self, slot: Slot, task: asyncio.Future[FetchResult]) -> None:
        """A fetch started: what the window does when it ends (ordered: nothing)."""

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
        self._timed(slot)
        self.live -= 1
        self.new -= not slot.item.recrawl
        host = slot.item.queued.host
        left = self.hosts[host] - 1
        if left:
            self.hosts[host] = left
        else:
            del self.hosts[host]
        slots = self._slots
        while slots and slots[0].recorded:
            slots.popleft()

    def _timed(self, slot: Slot) -> None:
        """A result recorded: what the window learns of its duration (ordered: nothing)."""

    def wake(self) -> None:
        """Wake the loop waiting for results (a result came, a stop, a timer)."""

    # ------------------------------------------------------------ the budget
    def budget_left(self, left: int) -> int:
        """Pages that may still be taken, ``left`` being the budget less the pages recorded
        and the URLs in flight (the ordered window never takes beyond it)."""
        return left

    def budget_spent(self, limit: int) -> bool:
        """The budget is reached by pages recorded, what is in flight to be put back."""
        return False

    def wake_in(self, limit: int) -> float | None:
        """Seconds until more may be taken without a result coming in (None: never)."""
        return None

    def list_over(self, slots: set[Slot], mark: float | None) -> bool:
        """A fetch list (its ``slots`` not recorded; ``mark``: when 90 % of it was
        recorded) is over: the next one may be taken."""
        return not self.live

    # ------------------------------------------------------------ results
    async def wait(self, within: Callable[[], float | None]) -> Results:
        """Results to record now, in the order to record them (empty: a stop was
        requested, or ``within()`` seconds passed)."""
        raise NotImplementedError

    async def drain(
        self, *, abort: bool, since: float, refill: Callable[[], None]
    ) -> AsyncIterator[tuple[Slot, FetchResult]]:
        """After a stop request (at monotonic time ``since``): give the requests under way
        what is left of the grace period (none with ``abort``), hand over what finished
        (ordered: the finished head, in order, ``refill`` called after each as an
        uninterrupted crawl would; as-completed: all of it), and cancel the rest: its
        URLs stay in flight, and the window recorded at the final commit re-issues them
        on resume. A fetch that has no request under way (waiting for its host's delay,
        a connection, robots.txt, a back-off; or done with one and about to send
        another) is cancelled at once: a stop sends no new request, and waits for none
        that was not sent."""
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
        async for slot, result in self._finished_after_stop(refill):
            yield slot, result
        await self.cancel()

    def _finished_after_stop(
        self, refill: Callable[[], None]
    ) -> AsyncIterator[tuple[Slot, FetchResult]]:
        """What finished of the window after a stop's grace period, to be recorded."""
        raise NotImplementedError

    async def cancel(self) -> None:
        """Stop what is still in flight; its URLs stay IN_FLIGHT (and in the window)."""
        pending = [s.task for s in self._slots if s.task is not None and not s.task.done()]
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.gather(*pending, return_exceptions=True)
            self.stats.counters["cancelled_in_flight"] += len(pending)


class OrderedWindow(Window):
    """Results handed over in the order their URLs were taken."""

    ordered = True

    async def wait(self, within: Callable[[], float | None]) -> Results:
        slot = self._slots[0]
        head = slot.task
        assert head is not None, "a URL taken while stopping is never waited for"
        # a finished head (the window's usual state under load) needs no watch for a stop
        if not head.done():
            await _first_of(head, self._stop)
            if not head.done():
                return []
        return [(slot, head.result())]

    async def _finished_after_stop(
        self, refill: Callable[[], None]
    ) -> AsyncIterator[tuple[Slot, FetchResult]]:
        while self._slots and (t := self._slots[0].task) is not None and t.done() and not t.cancelled():
            yield self._slots[0], t.result()
            refill()  # the same pops as an uninterrupted crawl (not fetched)


class AsCompletedWindow(Window):
    """Results handed over as they arrive; stragglers timed, the budget's end game."""

    ordered = False

    def __init__(
        self, fetcher: Fetcher, stats: CrawlStats, stop: asyncio.Event, size: int, *, straggler_seconds: float
    ) -> None:
        super().__init__(fetcher, stats, stop, size)
        self._finished: deque[Slot] = deque()  # fetches done, not yet handed over
        self._waiter: asyncio.Future[None] | None = None  # the loop waiting
        # how long recent fetches took from being taken to their result (politeness
        # waits included), for what counts as a straggler (at most, and until 32
        # fetches have been timed, crawl.straggler_seconds)
        self.straggler_seconds = straggler_seconds
        self._straggler = StragglerTime(first=straggler_seconds, cap=straggler_seconds)

    def _watch(self, slot: Slot, task: asyncio.Future[FetchResult]) -> None:
        task.add_done_callback(partial(self._done, slot))

    def _done(self, slot: Slot, _task: asyncio.Future[FetchResult]) -> None:
        self._finished.append(slot)
        self.wake()

    def wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _timed(self, slot: Slot) -> None:
        """A straggler is a fetch in flight for longer than 2 x the 95th percentile of
        the last 256 fetches' durations (at least 1 s, at most ``crawl.straggler_seconds``):
        on a slow web the bound grows with it, so few URLs are taken in place of others."""
        if slot.task is not None:
            self._straggler.learn(time.monotonic() - slot.started)

    def _fetching(self) -> Iterator[Slot]:
        """Fetches (not re-crawls) taken and not done yet: what holds page budget."""
        for slot in self._slots:
            if not slot.recorded and not slot.item.recrawl and not _done(slot):
                yield slot

    def _stragglers(self, now: float) -> Iterator[Slot]:
        """Fetches (not re-crawls) in flight for longer than a straggler's time."""
        cutoff = now - self._straggler.seconds
        return (slot for slot in self._fetching() if slot.started < cutoff)

    def budget_left(self, left: int) -> int:
        """A URL in flight for longer than a straggler's time holds no budget: another URL
        is taken in its place, and whichever of the two is not needed when the budget is
        reached is cancelled and put back (re-issued on resume). So a hung request never
        holds the end of a crawl back either; nor do the slowest of the last fetches."""
        if left > 0 or not self.new:
            return left
        # the end game (as BitTorrent's): with the whole budget in flight, more URLs than
        # it needs (1 % of the budget or 5 % of the URLs in flight, at least one), and one
        # more for each straggler: each URL here for longer than a straggler's time, or
        # each request the fetcher has under way for longer than its own straggler's
        # time (a slow body, a hung request: ~1 s of network time, where a URL's time
        # here includes its host's politeness waits), whichever is more; so the crawl
        # ends with the fastest answers, not its slowest; what is not needed is put back
        limit = left + self.stats.fetched + self.new
        stragglers = sum(1 for _ in self._stragglers(time.monotonic()))
        late = max(stragglers, self.fetcher.stragglers())
        return left + late + max(1, limit // _END_GAME, self.live // _END_GAME_LIVE)

    def budget_spent(self, limit: int) -> bool:
        return 0 < limit <= self.stats.fetched

    def wake_in(self, limit: int) -> float | None:
        """While the budget is all in flight: seconds until a URL in flight becomes a
        straggler (then a URL is taken in its place)."""
        if limit <= 0 or limit - self.stats.fetched - self.new > 0:
            return None
        first = min((s.started for s in self._fetching()), default=None)
        if first is None:
            return None
        # (the fetcher's stragglers are counted again this often: they have no timer here)
        mine = first + self._straggler.seconds - time.monotonic()
        return max(0.0, min(mine, _END_GAME_POLL))

    def list_over(self, slots: set[Slot], mark: float | None) -> bool:
        """As-completed, a list is also over once 90 % of it is recorded and
        ``crawl.straggler_seconds`` have passed since: its stragglers stay in flight."""
        if not slots:
            return True
        if mark is None:
            return False
        return time.monotonic() - mark >= self.straggler_seconds

    async def wait(self, within: Callable[[], float | None]) -> Results:
        # one future a wait, resolved by the first fetch done, a stop (the crawler calls
        # wake) or the timer: no task per wait, as results come one by one on a fast web
        if not self._finished and not self._stop.is_set():
            loop = asyncio.get_running_loop()
            self._waiter = waiter = loop.create_future()
            seconds = within()
            timer = None if seconds is None else loop.call_later(seconds, self.wake)
            try:
                await waiter
            finally:
                self._waiter = None
                if timer is not None:
                    timer.cancel()
        out: Results = []
        finished = self._finished
        while finished:
            slot = finished.popleft()
            task = slot.task
            if task is not None and not task.cancelled():
                out.append((slot, task.result()))
        return out

    async def _finished_after_stop(
        self, refill: Callable[[], None]
    ) -> AsyncIterator[tuple[Slot, FetchResult]]:
        for slot, result in await self.wait(lambda: None):
            yield slot, result

    async def cancel(self) -> None:
        await super().cancel()
        self._finished.clear()


def make_window(
    fetcher: Fetcher, stats: CrawlStats, stop: asyncio.Event, size: int, *, ordered: bool, straggler_seconds: float
) -> Window:
    """The window of ``crawl.schedule``: ordered or as-completed."""
    if ordered:
        return OrderedWindow(fetcher, stats, stop, size)
    return AsCompletedWindow(fetcher, stats, stop, size, straggler_seconds=straggler_seconds)


def _done(slot: Slot) -> bool:
    return slot.task is not None and slot.task.done()


async def _first_of(task: asyncio.Future[Any], stop: asyncio.Event) -> None:
    """Wait until ``task`` is done or ``stop`` is set."""
    if stop.is_set():
        return
    stopped = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({task, stopped}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopped.cancel()
