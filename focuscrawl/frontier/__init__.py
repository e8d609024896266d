"""The crawl DB: the FrontierStore protocol and its stores."""

from __future__ import annotations

from focuscrawl.frontier.base import FrontierStore
from focuscrawl.frontier.factory import open_frontier
from focuscrawl.frontier.indexed import IndexedFrontier
from focuscrawl.frontier.memory import MemoryFrontier

__all__ = ["FrontierStore", "IndexedFrontier", "MemoryFrontier", "open_frontier"]
