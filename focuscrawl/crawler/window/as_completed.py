"""A live crawl's window: results handed over as they arrive; stragglers timed, the
budget's end game."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator
from functools import partial

from focuscrawl.crawler.window.base import Results, Slot, Window
from focuscrawl.crawler.window.renders import RenderQueue
from focuscrawl.fetch.base import Fetcher
from focuscrawl.fetch.politeness import StragglerTime
from focuscrawl.stats import CrawlStats
from focuscrawl.types import FetchResult

__all__ = ["AsCompletedWindow"]

_END_GAME = 100  # as-completed: 1 / this of the budget may be taken beyond it at its end,
_END_GAME_LIVE = 20  # or 1 / this of the URLs in flight
_END_GAME_POLL = 0.25  # seconds between two counts of the fetcher's stragglers in the end game


class AsCompletedWindow(Window):
    """Results handed over as they arrive; stragglers timed, the budget's end game."""

    ordered = False

    def __init__(
        self, fetcher: Fetcher, stats: CrawlStats, stop: asyncio.Event, size: int, *, straggler_seconds: float,
        render_queue: int = 0, scope: Callable[[str], str | None] | None = None,
    ) -> None:  # fmt: skip
        super().__init__(fetcher, stats, stop, size, scope)
        self.renders = RenderQueue(render_queue)  # pages being rendered, their slots given back
        self.hands_off = render_queue > 0
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
        if self.renders.size:  # its place in the render queue to a page waiting, if any
            self.renders.done(slot)
        self._finished.append(slot)
        self.wake()

    def room(self) -> int:
        return self.size - self.live + len(self.renders)

    def _handed(self, slot: Slot) -> None:
        """``slot``'s page waits for the renderer: its slot is given back to plain
        fetches if the render queue has room (else it waits in its slot). Its host's
        room is not: the host has no more pages in flight than ``fetch.per_host``, and
        the render's own requests are not queued behind more of them."""
        if not slot.recorded and self.renders.handed(slot):
            self.wake()  # the loop takes a URL in its place

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
        self.renders.clear()


def _done(slot: Slot) -> bool:
    return slot.task is not None and slot.task.done()
