"""The window's parts every schedule shares: a URL taken (:class:`InFlight`), its
:class:`Slot`, and the :class:`Window` of slots with the host's room each holds, the
page budget and a stop's drain."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from functools import partial

from focuscrawl.fetch.base import HAND_OFF, SCOPE, Fetcher
from focuscrawl.stats import CrawlStats
from focuscrawl.types import FetchResult, QueuedURL

__all__ = ["STOP_GRACE", "InFlight", "Results", "Slot", "Window"]

STOP_GRACE = 5.0  # seconds in-flight fetches may take to finish after a stop request

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

    def __init__(
        self, fetcher: Fetcher, stats: CrawlStats, stop: asyncio.Event, size: int,
        scope: Callable[[str], str | None] | None = None,
    ) -> None:  # fmt: skip
        self.fetcher = fetcher
        self.scope = scope  # why a redirect's target is out of the crawl's scope, or None
        self.stats = stats
        self.size = max(1, size)
        self._stop = stop
        self._slots: deque[Slot] = deque()  # in the order taken; recorded ones leave from the left
        self.live = 0  # slots not recorded
        self.new = 0  # of them, URLs that are not re-crawls (they use the page budget)
        self.hosts: dict[str, int] = {}  # host -> slots not recorded
        self.hands_off = False  # told when a fetch's page waits for the renderer (as-completed)

    def __len__(self) -> int:
        """URLs taken and not yet recorded."""
        return self.live

    def open_slots(self) -> Iterator[Slot]:
        """The slots not recorded, in the order taken."""
        return (s for s in self._slots if not s.recorded)

    def slots_since(self, start: int) -> list[Slot]:
        """The slots taken after the first ``start`` still held (see :meth:`held`)."""
        return [s for s in list(self._slots)[start:] if not s.recorded]

    def room(self) -> int:
        """Fetches that may be taken now (the window's size less the slots held)."""
        return self.size - self.live

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
                task = asyncio.create_task(self._fetch(slot))
            else:  # settled like a fetch, in its turn: a finished one, without a task
                task = asyncio.get_running_loop().create_future()
                task.set_result(refused)
            slot.task = task
            self._watch(slot, task)
        self._slots.append(slot)

    def _watch(self, slot: Slot, task: asyncio.Future[FetchResult]) -> None:
        """A fetch started: what the window does when it ends (ordered: nothing)."""

    def _handed(self, slot: Slot) -> None:
        """``slot``'s page waits for the renderer (with :attr:`hands_off` only)."""

    async def _fetch(self, slot: Slot) -> FetchResult:
        url = slot.item.queued.url
        if self.hands_off:  # the fetcher says when only the page's rendering is left
            HAND_OFF.set(partial(self._handed, slot))
        # (this fetch's task's own context) a seed's redirect goes where it leads, as
        # Heritrix's seedsRedirectNewSeeds: the user named that URL
        SCOPE.set(self.scope if slot.item.queued.depth > 0 else None)
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
