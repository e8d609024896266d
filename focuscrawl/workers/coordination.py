"""A worker's part in a shared crawl: its page budget by claims, what it does when it
has nothing to take, and a layered strategy's global rounds (see
:mod:`focuscrawl.workers`)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

from focuscrawl.crawler.engine import Crawler
from focuscrawl.crawler.policies import Taking
from focuscrawl.crawler.rounds import Rounds
from focuscrawl.settings import Settings
from focuscrawl.stats import CrawlStats
from focuscrawl.types import QueuedURL
from focuscrawl.workers.handover import retire_dead

_IDLE_POLL = 0.2  # seconds between two looks of an idle worker at its own partitions
_FINISHED_EVERY = 10  # looks between two reads of whether the whole crawl is over


class Coordination:
    """A worker's part in the shared crawl: its page budget, and whether it goes on
    when it has nothing to do (:class:`~focuscrawl.crawler.shared.SharedCrawl`)."""

    def __init__(
        self,
        frontier: Any,
        settings: Settings,
        *,
        limited: bool,
        workers: int = 1,
        seeder: bool = False,
    ) -> None:
        self.frontier = frontier
        self.settings = settings
        self.limited = limited
        self.seeder = seeder  # this worker added the seeds (and so generates layer 0)
        self.crawler: Crawler | None = None  # (set once the worker's crawler is built)
        # a claim keeps the fetcher busy: topped up to its concurrency when half is used,
        # and no more than a share of the budget (the workers started together all get some)
        share = settings.crawl.max_pages // (2 * max(1, workers))
        self.target = max(1, min(settings.fetch.concurrency, share or settings.fetch.concurrency))
        # a partition given back stays free this long (its hosts' next allowed times, a
        # Crawl-delay above the crawl's delay included, go with it: HandoverFetcher)
        self.handover = settings.fetch.delay
        self._dry_until = 0.0  # the shared budget was found all handed out: not asked again before
        self._rounds: SharedRounds | None = None  # (a layered strategy's: made by the engine)

    def budget(self, fetched: int, in_flight: int) -> int:
        """This worker's claims so far (claiming more when less than half of a claim is left)."""
        if not self.limited:
            return 0
        claims = self.frontier.budget
        left = claims.claimed - fetched - in_flight
        now = time.monotonic()
        low = left < self.target // 2 + 1 and now >= self._dry_until
        if low and not claims.claim(self.target - max(0, left)):
            self._dry_until = now + 1.0
        # (0 would mean no limit; the first claim is made before the crawl starts)
        return max(1, int(claims.claimed))

    def rounds(self, stats: CrawlStats) -> Rounds:
        """A layered strategy's rounds: those of the shared crawl (:class:`SharedRounds`),
        which generate and end each round when this worker has nothing to take."""
        self._rounds = SharedRounds(self.frontier, stats, self)
        return self._rounds

    async def idle(self, fetched: int) -> bool:
        if self.frontier.layered:
            assert self._rounds is not None, "a layered crawl's rounds are made first"
            return await self._rounds.between()
        f = self.frontier
        claims = f.budget
        if self.limited:  # its unused claim back, for a worker with work
            claims.settle(max(fetched, 1))
        looks = 0
        # a signal stops an idle worker too (it asked for no fetch: nothing to wait for)
        while self.crawler is None or not self.crawler.stopped:
            budget = not self.limited or claims.claimed > fetched
            if f.queued_here() and (budget or claims.claim(self.target)):
                return True
            # whether the whole crawl is over reads every partition's counts: not at every
            # look (hundreds of idle workers at a crawl's end would keep Redis busy); a dead
            # worker's claim and batch come back first (once its heartbeat has expired)
            if looks % _FINISHED_EVERY == 0:
                await asyncio.to_thread(retire_dead, f)
                if await asyncio.to_thread(f.progress.finished):
                    return False
            looks += 1
            # the budget is all handed out and this worker's share used: over, unless another
            # worker holds claims it may not use (it may die: then they come back)
            dry = self.limited and claims.claimed <= fetched and claims.left() == 0
            if dry and not claims.holding():
                return False
            await asyncio.sleep(_IDLE_POLL)
        return False


class SharedRounds(Rounds):
    """A layered strategy's rounds in a shared crawl: the worker takes the URLs picked
    for the current round in the partitions it holds (in flight since they were
    picked); when it has nothing to take (:meth:`Coordination.idle`) the rounds are
    generated and ended here (:meth:`between`)."""

    def __init__(self, frontier: Any, stats: CrawlStats, coordination: Coordination) -> None:
        self.frontier = frontier
        self.stats = stats
        self._coordination = coordination
        self._looked = -1.0

    def fetch_list(self, s: Taking) -> Sequence[QueuedURL]:
        if s.stopped:
            return []
        now = time.monotonic()
        if len(s) and now - self._looked < _IDLE_POLL:  # (a pipeline over its partitions)
            return []
        self._looked = now
        if self.frontier.progress.round().get("layer", 0) != self.stats.layer:
            return []  # the layer was ended elsewhere: followed first (Coordination.idle)
        picked: Sequence[QueuedURL] = self.frontier.picked()
        return picked

    async def between(self) -> bool:
        """A layered crawl's rounds, as P0's generate(topN) / fetch / update with a
        barrier: a layer is generated by one worker across every partition; each
        partition's owner fetches its part; when no URL of the layer is left picked or in
        flight anywhere and every batch is delivered, one worker ends the layer with the
        workers' strategy states merged (``Strategy.merge_states``, from their journals)
        and the others follow (their own ``on_layer_end``, its decision not applied)."""
        f, crawler = self.frontier, self._coordination.crawler
        assert crawler is not None
        crawl = self._coordination.settings.crawl
        looks = 0
        while not crawler.stopped:
            state = f.progress.round()
            layer = crawler.stats.layer
            if state.get("layer", 0) > layer:  # ended by the worker that led it: follow
                self._end_layer(apply=False)
                continue
            if f.picked_here():
                return True
            if state.get("over"):
                return False
            if looks % _FINISHED_EVERY == 0:  # a dead worker's batch, delivered: the layer ends
                await asyncio.to_thread(retire_dead, f)
            if not state.get("picked"):
                # generated by the first worker that asks (layer 0: the one that added the
                # seeds, which are delivered by then)
                if (layer or self._coordination.seeder) and f.progress.lead(f"pick:{layer}"):
                    selected = state.get("selected", 0)
                    want = crawl.top_n
                    if crawl.max_pages > 0:
                        want = min(want, crawl.max_pages - selected)
                    got = f.pick(want) if want > 0 else 0
                    f.progress.set_round(picked=1, selected=selected + got, over=int(got == 0))
                    continue
            elif (
                looks % _FINISHED_EVERY == 0
                and not await asyncio.to_thread(f.progress.layer_open)
                and f.progress.lead(f"end:{layer}")
            ):
                merged = crawler.strategy.merge_states(f.progress.workers_states(layer))
                crawler.strategy.load_state(merged)
                self._end_layer(apply=True)
                await asyncio.to_thread(crawler.commit)  # the layer's end delivered first
                over = layer + 1 >= crawl.depth
                f.progress.set_round(layer=layer + 1, picked=0, over=int(over))
                continue
            looks += 1
            await asyncio.sleep(_IDLE_POLL)
        return False

    def _end_layer(self, *, apply: bool) -> None:
        crawler = self._coordination.crawler
        assert crawler is not None
        self.close(crawler.stats, crawler.strategy, crawler.recorder.log_event if apply else None)
