"""What a crawl shared with other processes (:mod:`focuscrawl.workers`) asks of its
coordination: the loop's seam to the workers."""

from __future__ import annotations

from typing import Protocol

from focuscrawl.crawler.rounds import Rounds
from focuscrawl.stats import CrawlStats


class SharedCrawl(Protocol):
    """What a crawl shared with other processes asks of its coordination
    (:class:`focuscrawl.workers.Coordination`): a page budget that grows by claims on
    the shared one, whether to go on when this process has nothing to do, and a
    layered strategy's shared rounds."""

    def budget(self, fetched: int, in_flight: int) -> int:
        """This process's page budget now (it may claim more when it runs low)."""
        ...

    async def idle(self, fetched: int) -> bool:
        """Nothing to take or wait for here (all recorded and committed): True when the
        crawl may go on here (more came, or budget), False when it is over for this process."""
        ...

    def rounds(self, stats: CrawlStats) -> Rounds:
        """A layered strategy's rounds, shared by the workers."""
        ...
