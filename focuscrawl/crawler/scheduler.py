"""What is fetched when: the one writer of the states of URLs taken and put back.

``Scheduler(policy, window)``: the :mod:`policy <focuscrawl.crawler.policies>` says
when a fetch list is taken and how large (continuous, best-N-first, layered
rounds); the :mod:`window <focuscrawl.crawler.window>` holds the fetches under way and
hands their results over, ordered or as they complete; the :class:`Budget
<focuscrawl.crawler.budget.Budget>` says how many pages may still be taken. This
module takes URLs from the queue (``IN_FLIGHT``), puts them back (``QUEUED``: a
pop beyond a host's room or the patience, a fetched URL a strategy asked to fetch
again, a resume's re-issues and retries); the :mod:`recorder
<focuscrawl.crawler.recorder>` records the states of the URLs whose results it records.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from focuscrawl.crawler.budget import Budget
from focuscrawl.crawler.counters import UNREACHED
from focuscrawl.crawler.policies import FetchPolicy
from focuscrawl.crawler.window import InFlight, Results, Slot, Window
from focuscrawl.frontier.base import UrlQueue
from focuscrawl.stats import CrawlStats
from focuscrawl.types import FetchResult, QueuedURL, URLState

__all__ = ["Scheduler", "retry_unreached"]

# a fetch list heard by the strategy (the recorder applies and logs its decision):
# the fetched URLs it asks to fetch again with the list
FetchListHook = Callable[[Sequence[QueuedURL]], Sequence[str]]


class Scheduler:
    """Takes URLs from the queue into the window and hands results back.

    The crawl loop calls :meth:`fill`, then :meth:`wait` for results (recording
    each and calling :meth:`settled`), and :meth:`next_round` when the window is
    empty.
    """

    def __init__(
        self,
        policy: FetchPolicy,
        window: Window,
        *,
        queue: UrlQueue,
        budget: Budget,
        stats: CrawlStats,
        stop: asyncio.Event,
        fetch_list: FetchListHook,
        recrawl_pending: Iterable[str] = (),
    ) -> None:
        self.policy = policy
        self.window = window
        self.queue = queue
        self.budget = budget
        self.stats = stats
        self._stop = stop
        self._fetch_list = fetch_list
        # fetched URLs a strategy asked to fetch again: queued until they are taken
        self.recrawl_pending: set[str] = set(recrawl_pending)

    # ------------------------------------------------------------ the window
    def __len__(self) -> int:
        """URLs taken and not yet recorded."""
        return self.window.live

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()

    @property
    def listed(self) -> bool:
        """A layered crawl's round has its fetch list (part of the resume state)."""
        return self.policy.listed

    def in_flight(self) -> list[tuple[str, bool]]:
        """(url, re-crawl) of the URLs taken and not recorded, in the order taken."""
        return [(s.item.queued.url, s.item.recrawl) for s in self.window.open_slots()]

    def budget_left(self) -> int:
        """Pages that may still be taken: the budget less the pages recorded and the URLs
        in flight (as-completed, more at the budget's end: see the window's end game)."""
        limit = self.budget.limit
        if limit <= 0:
            return 1 << 30
        return self.window.budget_left(limit - self.stats.fetched - self.window.new)

    def budget_spent(self) -> bool:
        """As-completed: the budget is reached by pages recorded (what is still in flight
        is cancelled and put back). The ordered schedule never takes beyond its budget."""
        return self.window.budget_spent(self.budget.limit)

    def wake(self) -> None:
        """Wake the loop waiting for results (a result came, a stop, a timer)."""
        self.window.wake()

    def settled(self, slot: Slot) -> None:
        """``slot``'s result is recorded: its host's room and its place are given back."""
        self.window.settled(slot)
        self.policy.settled(slot)

    # ---------------------------------------------------------- taking URLs
    def fill(self) -> None:
        """Take what may be taken now (a logical point: the start, or after a result)."""
        self.policy.fill(self)

    def next_round(self) -> bool:
        """The window is empty: True if the crawl goes on (a layered crawl's next round)."""
        return self.policy.next_round(self)

    def wake_in(self) -> float | None:
        """Seconds until :meth:`fill` may take more without a result coming in (None: never)."""
        return self.policy.wake_in(self)

    def take(self, taken: Sequence[QueuedURL]) -> None:
        """Start a fetch list: the strategy hears of it first and may add re-crawls."""
        if not taken:
            return
        pending = self.recrawl_pending
        for queued in taken:
            url = queued.url
            recrawl = url in pending
            if recrawl:
                pending.discard(url)
            self.window.launch(InFlight(queued, recrawl))
        # re-crawls join this list at once, not the queue
        for url in self._fetch_list(taken):
            if self.take_url(url, URLState.FETCHED, recrawl=True):
                self.stats.counters["recrawls"] += 1

    def take_url(self, url: str, state: URLState, *, recrawl: bool) -> bool:
        """Put one URL in ``state`` into the window, not popped (a resumed window, a re-crawl)."""
        if self.queue.state(url) != state:
            return False
        self.queue.mark(url, URLState.IN_FLIGHT)
        row = self.queue.get(url)
        if row is None:
            return False
        self.window.launch(InFlight(row, recrawl))
        return True

    def put_back(self, urls: Iterable[QueuedURL]) -> None:
        """URLs popped and not taken go back to the queue."""
        for queued in urls:
            self.queue.mark(queued.url, URLState.QUEUED)

    def recrawl(self, url: str) -> bool:
        """Queue a fetched URL again, a strategy having asked (False: it is not fetched)."""
        if self.queue.state(url) != URLState.FETCHED:
            return False
        self.queue.mark(url, URLState.QUEUED)
        self.recrawl_pending.add(url)
        return True

    def reissue(self, window: Sequence[tuple[str, bool]]) -> None:
        """Resume: the window recorded at the last commit is re-taken in its order;
        anything else left in flight (a crash before the window was recorded) is queued again."""
        requeued = self.queue.requeue_in_flight()
        for url, recrawl in window:
            self.take_url(url, URLState.QUEUED, recrawl=recrawl)
        live = self.window.live
        self.stats.counters["resume_reissued"] += live
        self.stats.counters["resume_requeued"] += requeued - live

    def pop_list(self, want: int) -> list[QueuedURL]:
        """A fetch list of up to ``want`` best URLs, tier by tier (best-N-first, layered).

        One pop serves one tier; the next tier is reached when the higher one is empty.
        """
        taken: list[QueuedURL] = []
        while len(taken) < want:
            got = self.queue.pop(want - len(taken))
            if not got:
                break
            taken += got
        return taken

    def pop_in_room(
        self,
        want: int,
        per_host: int,
        keep: Callable[[list[QueuedURL], list[QueuedURL]], list[QueuedURL]],
    ) -> list[QueuedURL]:
        """Up to ``want`` URLs greedy by priority, each host within its own room (at most
        ``per_host`` in the window), as the store's :meth:`~focuscrawl.frontier.base.UrlQueue.pop_in_room`
        gives them: the store is the one place a host's room is decided (the fetcher's
        politeness decides only when). ``keep(got, taken)`` may cut the pop short (the
        patience); what it cuts is put back by it."""
        return keep(self.queue.pop_in_room(want, self.window.hosts, per_host), [])

    # ----------------------------------------------------------- the results
    async def wait(self) -> Results:
        """Results to record now, in the order to record them (empty: a stop was
        requested, or :meth:`wake_in` passed)."""
        return await self.window.wait(self.wake_in)

    def drain(self, *, abort: bool, since: float) -> AsyncIterator[tuple[Slot, FetchResult]]:
        """After a stop request: what finished within the grace period (see :meth:`Window.drain`)."""
        return self.window.drain(abort=abort, since=since, refill=self.fill)

    async def cancel(self) -> None:
        """Stop what is still in flight; its URLs stay IN_FLIGHT (and in :meth:`in_flight`)."""
        await self.window.cancel()


def retry_unreached(
    queue: UrlQueue, summary: Mapping[str, Any], out_dir: Path, *, proxy_changed: bool = False
) -> list[str]:
    """The failed URLs a resume queues again, where the cause of their failure may be
    fixed: all failed URLs of a crawl that reached no host at all (a wrong ``--proxy``,
    the network down), which would otherwise crawl 0 URLs; and, when the resume gives
    another proxy, every failed URL without a line in pages.jsonl (those that never
    reached their host: robots.txt refusals among them, refused again at no cost to
    the budget). Marked QUEUED here; the caller commits.

    Otherwise failures stay as they are: which URLs failed for connection reasons is
    not recorded per URL, and a resume goes on as the crawl would have.
    """
    counters = summary.get("counters") or {}
    if not any(counters.get(key) for key in UNREACHED):
        return []
    fetched_any = bool(
        summary.get("fetched") or counters.get("recrawls_fetched") or queue.count(URLState.FETCHED)
    )
    if fetched_any and not proxy_changed:
        return []
    recorded: set[str] = set()
    if fetched_any:  # URLs with a line in pages.jsonl reached their host (or count as fetched)
        with contextlib.suppress(OSError), (out_dir / "pages.jsonl").open("rb") as fh:
            for line in fh:
                with contextlib.suppress(ValueError, TypeError, KeyError):
                    recorded.add(str(json.loads(line)["url"]))
    failed = [q.url for q in queue.iter_urls(URLState.FAILED) if q.url not in recorded]
    for url in failed:
        queue.mark(url, URLState.QUEUED)
    return failed
