"""What the scheduler hands the recorder with a URL, and the fetched URLs a strategy
asked to fetch again (re-exported by :mod:`focuscrawl.processing`, where they were)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from focuscrawl.frontier.base import FrontierStore
from focuscrawl.types import QueuedURL, URLState

__all__ = ["InFlight", "Recrawls"]


@dataclass(slots=True)
class InFlight:
    """A URL taken from the frontier, with what the engine must know when it returns."""

    queued: QueuedURL
    recrawl: bool = False


class Recrawls:
    """Fetched URLs a strategy asked to fetch again: queued until the scheduler takes them."""

    def __init__(self, frontier: FrontierStore, pending: Iterable[str] = ()) -> None:
        self.frontier = frontier
        self.pending: set[str] = set(pending)

    def queue(self, url: str) -> bool:
        """Queue a fetched URL again (False: it is not fetched, nothing to do)."""
        if self.frontier.state(url) != URLState.FETCHED:
            return False
        self.frontier.mark(url, URLState.QUEUED)
        self.pending.add(url)
        return True

    def taken(self, url: str) -> bool:
        """``url`` was taken from the queue: True if it is a re-crawl."""
        if url in self.pending:
            self.pending.discard(url)
            return True
        return False
