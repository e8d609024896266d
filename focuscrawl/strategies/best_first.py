"""Best-first crawling: a URL's priority is the relevance of the page that links to it.

The classic focused crawler (Cho et al. 1998; the "naive best-first" of
Menczer et al.): out-links of a page inherit the page's relevance score from a
pluggable relevance model. A URL linked from several pages keeps its best
parent's score (``Merge.MAX``). Seeds start at 1.
"""

from __future__ import annotations

from typing import ClassVar

from focuscrawl.params import NoParams
from focuscrawl.strategies.base import Strategy, register_strategy
from focuscrawl.types import Decision, LinkScore, Merge, Page, QueuedURL


@register_strategy("best-first")
class BestFirstStrategy(Strategy[NoParams]):
    name: ClassVar[str] = "best-first"
    merge: ClassVar[Merge] = Merge.MAX
    needs_model: ClassVar[bool] = True

    def on_page(self, page: Page, relevance: float | None, queued: QueuedURL) -> Decision:
        score = 0.0 if relevance is None else float(relevance)
        return Decision(links=[LinkScore(link, score, reason="parent relevance") for link in page.links])
