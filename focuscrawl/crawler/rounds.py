"""A layered crawl's rounds (P0 / Nutch): ``depth`` rounds of generate(topN) -> fetch
all -> ``on_layer_end``, a barrier in both schedules (a round's end needs all its pages).

One :class:`Layered` policy over one :class:`Rounds` interface: :class:`LocalRounds`
in one process; a shared crawl's workers have theirs
(:class:`focuscrawl.workers.coordination.SharedRounds`), where a round is generated
across every partition and ended by one worker. The rounds are the one writer of
the fetch round (``CrawlStats.layer``), which the recorder reads.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from focuscrawl.crawler.policies import FetchPolicy, Taking
from focuscrawl.stats import CrawlStats
from focuscrawl.strategies.base import Strategy
from focuscrawl.types import Decision, QueuedURL

__all__ = ["Layered", "LocalRounds", "Rounds"]


class Rounds:
    """Where a layered crawl's fetch lists come from, and what ends a round."""

    listed = False  # this round's fetch list was generated (part of the resume state)

    def fetch_list(self, s: Taking) -> Sequence[QueuedURL]:
        """The current round's URLs to take now (none: nothing now)."""
        raise NotImplementedError

    def taken(self) -> None:
        """A fetch list was taken."""

    def end(self, s: Taking) -> bool:
        """The window is empty: True if this process goes on with the next round now."""
        return False

    @staticmethod
    def close(stats: CrawlStats, strategy: Strategy, decide: Callable[[str, Decision], None] | None) -> None:
        """Round ``stats.layer`` ends: the strategy's ``on_layer_end``, its decision
        applied and logged by ``decide`` (None: not applied, a shared crawl's worker
        following the one that ended it), and the next round begins."""
        layer = stats.layer
        decision = strategy.on_layer_end(layer)
        if decide is not None:
            decide("layer-end", decision)
        stats.layer = layer + 1


class LocalRounds(Rounds):
    """One process's rounds: the fetch list is the queue's ``top_n`` best URLs; a round
    ends when its list is recorded."""

    def __init__(
        self,
        stats: CrawlStats,
        strategy: Strategy,
        *,
        depth: int,
        top_n: int,
        decide: Callable[[str, Decision], None],
        commit: Callable[[], None],
        listed: bool = False,
    ) -> None:
        self.stats = stats
        self.strategy = strategy
        self.depth = depth
        self.top_n = top_n
        self._decide = decide  # apply and log a decision (the recorder's log_event)
        self._commit = commit
        self.listed = listed
        self._over = False

    def fetch_list(self, s: Taking) -> Sequence[QueuedURL]:
        if self.listed or self._over or s.stopped or self.stats.layer >= self.depth:
            return []
        taken = s.pop_list(min(self.top_n, s.budget_left()))
        if not taken:
            self._over = True
            return []
        self.listed = True
        return taken

    def taken(self) -> None:
        self._commit()  # the round's fetch list is recorded: a resume re-issues it

    def end(self, s: Taking) -> bool:
        if not self.listed or s.stopped:
            return False
        self.close(self.stats, self.strategy, self._decide)
        self.listed = False
        self._commit()
        return s.budget_left() > 0 and self.stats.layer < self.depth


class Layered(FetchPolicy):
    """The layered policy: each round's fetch list taken whole, the next round when the
    window is empty."""

    def __init__(self, rounds: Rounds) -> None:
        self.rounds = rounds

    @property
    def listed(self) -> bool:
        return self.rounds.listed

    def fill(self, s: Taking) -> None:
        taken = self.rounds.fetch_list(s)
        if taken:
            s.take(taken)
            self.rounds.taken()

    def next_round(self, s: Taking) -> bool:
        return self.rounds.end(s)
