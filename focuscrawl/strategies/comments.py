"""P0's type-specific strategies for pages with Web comments: OPIC+COMMD and COMMD.

Both run layered (Nutch-style generate(topN) / fetch / update rounds; layer 0 =
the seeds) and take the relevance indicator 1_i (eq. 2) from the crawl's binary
model, by default the comment detector (any model with a judgement will do).

**OPIC+COMMD** (soft focus). The cash C = 1 is shared by the seeds (eq. 1). A
page i fetched in layer k passes its cash c_k(i) to its children j in
proportion t_k(i, j) / n_k(i) if it is relevant; the cash R_k of the
non-relevant pages of the layer (eq. 4) is shared evenly by the relevant ones,
R_{k+1} = R_k / Σ 1_i, which pass it on the same way (eq. 5):

    c_{k+1}(j) = Σ_{i ∈ M_k} t_k(i, j) / n_k(i) · (c_k(i) + R_{k+1}) · 1_i

and the priority of j is its score s_{k+1}(j) = Σ_{n ≤ k+1} c_n(j) / C. While the
layer is fetched each child collects A_j = Σ t/n · c_k(i) and B_j = Σ t/n over
its relevant parents (two frontier columns); at the layer's end
c_{k+1}(j) = A_j + R_{k+1} · B_j for every page at once. A page that is not among
the topN of a layer keeps its cash until it is fetched, and a layer without a
relevant page carries R on, so the total cash stays C at all times.

**COMMD** (hard focus). s_{k+1}(j) = 1 if at least one fetched parent i of j is
relevant (with n(i) > 0), else 0; ties are broken at random. The 0/1 score is
the URL's priority *tier*, and a random number orders the URLs within a tier. Each
URL gets one draw per layer, a hash of (salt, layer, URL) with the salt from the
crawl's seeded generator: reproducible, the same however often the URL is found in
the layer (one draw per parent kept by MAX would favour URLs with many relevant
parents, which is not P0's uniform tie-break), and at a layer's end every queued URL
is drawn again for the next generate (a URL that lost a tie is not doomed to lose
every later one).
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from focuscrawl.params import NoParams
from focuscrawl.strategies.base import Strategy, StrategyState, register_strategy
from focuscrawl.strategies.view import FrontierView
from focuscrawl.types import (
    ColumnOp,
    Decision,
    LinkScore,
    Merge,
    Page,
    QueuedURL,
    ScoreUpdate,
    URLState,
)

CASH, GAIN, SHARE = "cash", "cash_next", "share_next"


@dataclass(frozen=True)
class OpicCommdParams:
    total_cash: float = 1.0  # C of eq. 1

    def __post_init__(self) -> None:
        if not self.total_cash > 0:
            raise ValueError(f"total_cash = {self.total_cash} must be > 0")


@dataclass(frozen=True)
class OpicCommdState(StrategyState):
    """This layer's R_k (the cash of its non-relevant pages, eq. 4) and Σ 1_i."""

    undistributed: float = 0.0
    relevant: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"undistributed": self.undistributed, "relevant": self.relevant}

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Self:
        return cls(float(raw.get("undistributed", 0.0)), int(raw.get("relevant", 0)))

    @classmethod
    def merge(cls, states: Sequence[OpicCommdState]) -> Self:
        """Workers' layers as one: R_k and the relevant pages are sums over all pages (eq. 4)."""
        return cls(sum((s.undistributed for s in states), 0.0), sum(s.relevant for s in states))


@dataclass(frozen=True)
class CommdState(StrategyState):
    """The salt of the tie-break draws (from the crawl's generator; 0: none yet) and
    the layer they are drawn for."""

    salt: int = 0
    layer: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"salt": self.salt, "layer": self.layer}

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Self:
        return cls(int(raw.get("salt", 0)), int(raw.get("layer", 0)))


@register_strategy("opic-commd")
class OpicCommdStrategy(Strategy[OpicCommdParams]):
    """P0 OPIC+COMMD: layered OPIC cash to the children of relevant pages (eq. 1-5)."""

    name: ClassVar[str] = "opic-commd"
    merge: ClassVar[Merge] = Merge.ADD
    layered: ClassVar[bool] = True
    needs_model: ClassVar[bool] = True
    columns: ClassVar[tuple[str, ...]] = (CASH, GAIN, SHARE)

    def __init__(self, model: Any = None, **params: Any) -> None:
        super().__init__(model, **params)
        self.undistributed = 0.0  # R_k: cash of this layer's non-relevant pages (eq. 4)
        self.relevant = 0  # Σ 1_i over this layer's pages

    def seed_scores(self, seeds: Sequence[str]) -> list[ScoreUpdate]:
        c0 = self.p.total_cash / len(seeds)  # eq. 1
        out = []
        for url in seeds:
            out.append(ScoreUpdate(url, c0 / self.p.total_cash, Merge.SET, reason="s_0 = c_0 / C"))
            out.append(ScoreUpdate(url, c0, Merge.SET, column=CASH, reason=f"eq1 c_0 = C/{len(seeds)}"))
        return out

    def entry_scores(self, urls: Sequence[str]) -> list[ScoreUpdate]:
        return [ScoreUpdate(url, 0.0, Merge.SET, reason="entered by robots.txt: no cash") for url in urls]

    def on_page(self, page: Page, relevance: float | None, queued: QueuedURL) -> Decision:
        cash = self.view.value(queued.url, CASH) or 0.0  # c_k(i)
        n = sum(link.count for link in page.links)  # n_k(i), kept links only
        # every child enters P_{k+1}; its score changes only at the layer's end
        links = [LinkScore(link, 0.0, reason="child (score at layer end)") for link in page.links]
        updates = [ScoreUpdate(queued.url, 0.0, Merge.SET, column=CASH, reason="cash passed on")]
        if page.relevant and n > 0:
            self.relevant += 1
            for link in page.links:
                share = link.count / n
                updates.append(ScoreUpdate(link.url, share * cash, Merge.ADD, column=GAIN,
                                           reason=f"eq5 t/n={link.count}/{n} of c={cash:.4g}"))  # fmt: skip
                updates.append(ScoreUpdate(link.url, share, Merge.ADD, column=SHARE, reason="eq5 share of R"))
        else:
            self.undistributed += cash  # eq. 4
        return Decision(links=links, updates=updates)

    def on_layer_end(self, layer: int) -> Decision:
        if self.relevant == 0:  # nobody to give R to: it waits for a layer with relevant pages
            return Decision(column_ops=[ColumnOp(GAIN, add=False), ColumnOp(SHARE, add=False)], reason="no relevant page")
        r_next = self.undistributed / self.relevant  # eq. 4: R_{k+1}
        reason = f"eq4 R={self.undistributed:.4g} over {self.relevant} relevant pages"
        self.undistributed, self.relevant = 0.0, 0
        c = self.p.total_cash
        return Decision(
            column_ops=[
                ColumnOp(GAIN, ((SHARE, r_next),), add=True),  # c_{k+1}(j) = A_j + R_{k+1} B_j (eq. 5)
                ColumnOp("score", ((GAIN, 1.0 / c),), add=True),  # s_{k+1} = s_k + c_{k+1} / C
                ColumnOp(CASH, ((GAIN, 1.0),), add=True),
                ColumnOp(GAIN, add=False),
                ColumnOp(SHARE, add=False),
            ],
            reason=reason,
        )

    def state_dict(self) -> dict[str, Any]:
        return OpicCommdState(self.undistributed, self.relevant).to_json()

    @classmethod
    def merge_states(cls, states: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """Workers' layers as one: R_k and the relevant pages are sums over all pages (eq. 4)."""
        return OpicCommdState.merge([OpicCommdState.from_json(s) for s in states]).to_json()

    def load_state(self, state: Mapping[str, Any]) -> None:
        saved = OpicCommdState.from_json(state)
        self.undistributed, self.relevant = saved.undistributed, saved.relevant


@register_strategy("commd")
class CommdStrategy(Strategy[NoParams]):
    """P0 COMMD: children of a relevant page score 1, others 0, ties broken at random."""

    name: ClassVar[str] = "commd"
    merge: ClassVar[Merge] = Merge.MAX
    layered: ClassVar[bool] = True
    needs_model: ClassVar[bool] = True

    def __init__(self, model: Any = None, **params: Any) -> None:
        super().__init__(model, **params)
        self.salt = 0
        self.layer = 0  # the layer whose generate the draws are for

    def attach(self, view: FrontierView, rng: random.Random) -> None:
        super().attach(view, rng)
        if not self.salt:  # on resume load_state brings the first one back
            self.salt = rng.getrandbits(63) | 1

    def draw(self, url: str) -> float:
        """The URL's tie-break in [0, 1) for this layer: one draw per URL per layer."""
        digest = hashlib.blake2b(f"{self.salt}:{self.layer}:{url}".encode(), digest_size=8).digest()
        return int.from_bytes(digest, "big") / 2**64

    def seed_scores(self, seeds: Sequence[str]) -> list[ScoreUpdate]:
        return [ScoreUpdate(url, 1.0, Merge.SET, reason="seed") for url in seeds]

    def on_page(self, page: Page, relevance: float | None, queued: QueuedURL) -> Decision:
        tier = 1 if page.relevant and page.links else 0
        reason = "s=1: a relevant parent" if tier else "s=0: parent not relevant"
        # tier = s(j); the score is only the random tie-break within a tier (MAX keeps tier 1)
        return Decision(links=[LinkScore(link, self.draw(link.url), tier=tier, reason=reason) for link in page.links])

    def on_layer_end(self, layer: int) -> Decision:
        """A fresh draw for every queued URL before the next layer's generate."""
        self.layer = layer + 1
        return Decision(updates=[
            ScoreUpdate(row.url, self.draw(row.url), Merge.SET, reason="tie-break drawn again")
            for row in self.view.urls(URLState.QUEUED)
        ])  # fmt: skip

    def state_dict(self) -> dict[str, Any]:
        return CommdState(self.salt, self.layer).to_json()

    def load_state(self, state: Mapping[str, Any]) -> None:
        saved = CommdState.from_json(state)
        self.salt = saved.salt or self.salt  # a state without one keeps attach()'s draw
        self.layer = saved.layer
