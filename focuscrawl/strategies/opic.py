"""OPIC, greedy (Abiteboul, Preda & Cobena 2003; the link-only baseline of P1).

Every page holds *cash*; the seeds share the total (1). When a page is fetched
its cash is split evenly among the pages it links to and the *virtual page*,
added to its *history*, and reset to 0. The virtual page links to and is
linked from every page, which keeps the graph strongly connected: the cash it
receives goes to all known pages evenly. The next URL is the one with the most
cash (greedy). Total cash is conserved.

The virtual page's share is handed out in O(1): every known page gains the same
amount ``g`` (a running total), which changes no order. So the stored priority
of a URL is ``cash − g``, and its cash is ``score + g``; a page added later
stores ``gain − g`` and so gets none of the earlier shares.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from focuscrawl.strategies.base import Strategy, StrategyState, register_strategy
from focuscrawl.types import Decision, LinkScore, Merge, Page, QueuedURL, ScoreUpdate

HISTORY = "history"


@dataclass(frozen=True)
class OpicParams:
    virtual_page: bool = True  # False: a page without links keeps its cash (not conserved then)


@dataclass(frozen=True)
class OpicState(StrategyState):
    """``g``: the cash every known page has gained from the virtual page (module doc)."""

    g: float = 0.0

    def to_json(self) -> dict[str, Any]:
        return {"g": self.g}

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Self:
        return cls(float(raw.get("g", 0.0)))


@register_strategy("opic")
class OpicStrategy(Strategy[OpicParams]):
    """Greedy OPIC: highest cash first; cash split evenly over out-links (+ virtual page)."""

    name: ClassVar[str] = "opic"
    merge: ClassVar[Merge] = Merge.ADD
    needs_text: ClassVar[bool] = False  # cash follows the links, whatever they say
    columns: ClassVar[tuple[str, ...]] = (HISTORY,)

    def __init__(self, model: Any = None, **params: Any) -> None:
        super().__init__(model, **params)
        self.g = 0.0  # cash every known page has gained from the virtual page

    def seed_scores(self, seeds: Any) -> list[ScoreUpdate]:
        share = 1.0 / len(seeds)
        return [ScoreUpdate(url, share, Merge.SET, reason=f"seed: 1/{len(seeds)} of the cash") for url in seeds]

    def entry_scores(self, urls: Any) -> list[ScoreUpdate]:
        # no cash: a new URL stores cash - g (module doc), so it gains the virtual page's from now on
        return [ScoreUpdate(url, -self.g, Merge.SET, reason="entered by robots.txt: no cash") for url in urls]

    def cash(self, url: str) -> float:
        """The cash a URL holds now (0 for an unknown URL)."""
        score = self.view.score(url)
        return 0.0 if score is None else score + self.g

    def on_page(self, page: Page, relevance: float | None, queued: QueuedURL) -> Decision:
        g = self.g
        cash = queued.score + g
        parts = len(page.links) + (1 if self.p.virtual_page else 0)
        if parts == 0:
            return Decision()  # nowhere to send it: the page keeps its cash
        gain = cash / parts
        new = [self.view.state(link.url) is None for link in page.links]
        # a known page's cash grows by gain; a new one stores cash - g = gain - g (module doc)
        links = [
            LinkScore(link, gain - g if is_new else gain, reason=f"cash {cash:.4g} / {parts}")
            for link, is_new in zip(page.links, new, strict=True)
        ]
        if self.p.virtual_page:
            # the virtual page's share goes to every known page, this one and the new ones included
            self.g += gain / (self.view.count() + sum(new))
        return Decision(
            links=links,
            updates=[
                ScoreUpdate(queued.url, cash, Merge.ADD, column=HISTORY, reason="history += cash"),
                # cash reset to 0, plus this page's own share of the virtual page: stored -g_old
                ScoreUpdate(queued.url, -g, Merge.SET, reason="cash reset to 0"),
            ],
        )

    def state_dict(self) -> dict[str, Any]:
        return OpicState(self.g).to_json()

    def load_state(self, state: Mapping[str, Any]) -> None:
        self.g = OpicState.from_json(state).g
