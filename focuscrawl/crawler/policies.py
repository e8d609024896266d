"""The fetch-list policies: when the scheduler takes URLs, and how many.

* :class:`Continuous`: the window holds up to ``crawl.window`` URLs, at most
  ``fetch.per_host`` per host, refilled after every result;
* :class:`BestN` (``crawl.fetch_list_size`` = N, P1's best-N-first): a list of the
  N best URLs is taken, and the next list when it is over (the window says when:
  ordered, once all of it is recorded; as-completed, also once 90 % of it is
  recorded and ``crawl.straggler_seconds`` have passed, the stragglers staying in
  flight and recorded when they come);
* :class:`~focuscrawl.crawler.rounds.Layered` (strategies with ``layered = True``,
  P0 / Nutch): rounds of generate(topN) -> fetch all -> ``on_layer_end``, local or
  shared (:mod:`focuscrawl.crawler.rounds`).

A policy decides; the :class:`Scheduler <focuscrawl.crawler.scheduler.Scheduler>`
(what :class:`Taking` describes) takes and puts back.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Protocol

from focuscrawl.crawler.budget import Budget
from focuscrawl.crawler.window import Slot, Window
from focuscrawl.settings import Settings
from focuscrawl.stats import CrawlStats
from focuscrawl.strategies.base import Strategy
from focuscrawl.types import QueuedURL

__all__ = ["BestN", "Continuous", "FetchPolicy", "Taking", "make_policy"]

_LIST_DONE = 0.9  # best-N, as-completed: the share of a list after which stragglers are timed


class Taking(Protocol):
    """What a policy asks of the scheduler."""

    window: Window
    budget: Budget
    stats: CrawlStats

    @property
    def stopped(self) -> bool: ...
    def __len__(self) -> int: ...
    def budget_left(self) -> int: ...
    def take(self, taken: Sequence[QueuedURL]) -> None: ...
    def put_back(self, urls: Iterable[QueuedURL]) -> None: ...
    def pop_list(self, want: int) -> list[QueuedURL]: ...
    def pop_in_room(
        self,
        want: int,
        per_host: int,
        keep: Callable[[list[QueuedURL], list[QueuedURL]], list[QueuedURL]],
    ) -> list[QueuedURL]: ...


class FetchPolicy:
    """When URLs are taken: :meth:`fill` at each logical point (the start, a result)."""

    @property
    def listed(self) -> bool:
        """A layered round's fetch list was generated (part of the resume state)."""
        return False

    def fill(self, s: Taking) -> None:
        """Take what may be taken now."""
        raise NotImplementedError

    def settled(self, slot: Slot) -> None:
        """``slot``'s result is recorded."""

    def next_round(self, s: Taking) -> bool:
        """The window is empty: True if the crawl goes on (a layered crawl's next round)."""
        return False

    def wake_in(self, s: Taking) -> float | None:
        """Seconds until :meth:`fill` may take more without a result coming in (None: never)."""
        return s.window.wake_in(s.budget.limit)


class Continuous(FetchPolicy):
    """A window of up to ``crawl.window`` URLs, refilled after every result."""

    def __init__(self, settings: Settings) -> None:
        self.per_host = settings.fetch.per_host
        self.patience = settings.crawl.patience

    def fill(self, s: Taking) -> None:
        window = s.window
        want = min(s.budget_left(), window.room())
        if want <= 0:
            return
        s.take(s.pop_in_room(want, self.per_host, lambda got, taken: self._patient(s, got, taken)))

    def _patient(self, s: Taking, got: list[QueuedURL], taken: list[QueuedURL]) -> list[QueuedURL]:
        """``got`` up to its first URL below ``crawl.patience`` x the best score in flight
        (taken before this fill or in it); that URL and the rest are put back."""
        patience = self.patience
        if patience <= 0:
            return got
        scores = [slot.item.queued.score for slot in s.window.open_slots()]
        best = max([*scores, *(q.score for q in taken)], default=None)
        for i, queued in enumerate(got):
            if best is not None and queued.score < patience * best:
                s.put_back(got[i:])
                return got[:i]
            best = queued.score if best is None else max(best, queued.score)
        return got


class BestN(FetchPolicy):
    """P1's best-N-first: a list of the N best URLs, fetched and recorded, then the next."""

    def __init__(self, settings: Settings, size: int) -> None:
        self.size = size
        self.straggler_seconds = settings.crawl.straggler_seconds
        self._list: set[Slot] = set()  # the current list's slots not recorded
        self._list_len = 0
        self._mark: float | None = None  # when 90 % of the current list was recorded

    def fill(self, s: Taking) -> None:
        if s.stopped or not s.window.list_over(self._list, self._mark):
            return
        if self._list:
            s.stats.counters["fetch_list_stragglers"] += len(self._list)
        before = s.window.held()
        s.take(s.pop_list(min(self.size, s.budget_left())))
        self._list = set(s.window.slots_since(before))
        self._list_len = len(self._list)
        self._mark = None
        self._check_mark()

    def settled(self, slot: Slot) -> None:
        if slot in self._list:
            self._list.discard(slot)
            self._check_mark()

    def _check_mark(self) -> None:
        """Once 90 % of the list (rounded down) is recorded, its stragglers are timed."""
        if self._mark is None and self._list:
            recorded = self._list_len - len(self._list)
            if recorded >= math.floor(_LIST_DONE * self._list_len):
                self._mark = time.monotonic()

    def wake_in(self, s: Taking) -> float | None:
        budget = super().wake_in(s)
        if s.window.ordered or not self._list or self._mark is None:
            return budget
        mine = max(0.0, self._mark + self.straggler_seconds - time.monotonic())
        return mine if budget is None else min(mine, budget)


def make_policy(settings: Settings, strategy: Strategy) -> FetchPolicy:
    """The policy of a crawl that is not layered: best-N-first or continuous."""
    size = settings.crawl.fetch_list_size or strategy.default_fetch_list_size
    if size:
        return BestN(settings, size)
    return Continuous(settings)
