"""Breadth-first crawling (BFIRST of P0, the baseline of every paper).

Every URL gets the same score, so the frontier serves them in discovery order
(its tie-break); ``Merge.KEEP`` means a URL seen again keeps its place.
"""

from __future__ import annotations

from typing import ClassVar

from focuscrawl.params import NoParams
from focuscrawl.strategies.base import Strategy, register_strategy
from focuscrawl.types import Decision, LinkScore, Merge, Page, QueuedURL


@register_strategy("bfs")
class BreadthFirstStrategy(Strategy[NoParams]):
    name: ClassVar[str] = "bfs"
    merge: ClassVar[Merge] = Merge.KEEP
    needs_text: ClassVar[bool] = False  # links only

    def on_page(self, page: Page, relevance: float | None, queued: QueuedURL) -> Decision:
        return Decision(links=[LinkScore(link, 0.0) for link in page.links])
