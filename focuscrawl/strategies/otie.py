"""OTIE: on-line topical importance estimation (P1, Algorithm 1).

::

    OTIE()
    1  inject seed URLs into the frontier, with cash distributed evenly
    2  while frontier not empty and fetched < MAX_PAGES
    3      fetch_list = the URLs in the frontier with the highest priorities
    4      if the periodical condition is satisfied
    5          add the fetched URL with the highest cash into fetch_list
    7      download the URLs in fetch_list
    8      foreach p_i in the downloaded pages
    9          revise p_i's cash by eq. 8
    10         foreach p_j linked to by p_i
    11             cash[p_j] += cash_gain(p_j, p_i)          (eq. 6, 7)
    13         cash[p_i] = 0

Eq. 8: Δcash = cash · max(−1, a·(2r − 1)^d), r the page's relevance, a > 0,
d > 0 with x^d an odd function (a = 0.85, d = 3). Eq. 6:
cash_gain(j, i) = sim'(j, t) / Σ_{u∈O_i} sim'(u, t) · cash[i]; eq. 7: sim' is the
real similarity (the model's score, kept in the ``relevance`` column) for a
fetched page and the eq.-9 prediction from the link context for an unfetched one.
The priority of a URL is its cash (``Merge.ADD``: cash accumulates, also on
fetched pages, which line 5 re-crawls to pass it on). No link graph is needed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, ClassVar, Self

from focuscrawl.strategies.base import Strategy, StrategyState, register_strategy
from focuscrawl.strategies.learner_state import LearnerState
from focuscrawl.strategies.link_learner import (
    LearningParams,
    OnlineLinkLearner,
    link_model_counters,
    predicted_scores,
)
from focuscrawl.types import Decision, LinkScore, Merge, Page, QueuedURL, ScoreUpdate, URLState


def odd_power(x: float, d: float) -> float:
    """x^d for an exponent d that makes it an odd function (sign kept).

    >>> odd_power(-0.5, 3), odd_power(0.5, 3)
    (-0.125, 0.125)
    """
    return (1.0 if x >= 0 else -1.0) * float(abs(x) ** d)


def revised_cash(cash: float, r: float, a: float, d: float) -> float:
    """Eq. 8 applied: cash + cash · max(−1, a(2r − 1)^d).

    >>> revised_cash(1.0, 1.0, 0.85, 3)   # fully relevant: +85 %
    1.85
    >>> revised_cash(1.0, 0.0, 0.85, 3)   # irrelevant: −85 %
    0.15000000000000002
    >>> revised_cash(2.0, 0.75, 0.85, 3)  # 2 + 2·0.85·0.5^3
    2.2125
    """
    return cash + cash * max(-1.0, a * odd_power(2.0 * r - 1.0, d))


@dataclass(frozen=True)
class OtieParams:
    a: float = 0.85  # eq. 8: how strongly relevance revises the cash
    d: float = 3.0  # eq. 8: flatness of the revision near r = 0.5
    beta: float = 0.25  # eq. 9, for the predicted similarity of unfetched pages
    recrawl_every: int = 10  # line 4: every this many fetch lists (0: never)
    # eq. 7's predicted similarity of an unfetched page: "fixed" (eq. 9, P1) or
    # "online" (eq. 9 corrected by the online link model learnt during the crawl, its
    # weight growing with the examples learnt): focuscrawl.strategies.learning
    link_model: str = "fixed"

    def __post_init__(self) -> None:
        if self.link_model not in ("fixed", "online"):
            raise ValueError(f"link_model = {self.link_model!r} must be 'fixed' or 'online'")
        if not self.a > 0:
            raise ValueError(f"a = {self.a} must be > 0 (eq. 8)")
        frac = Fraction(self.d).limit_denominator(1000)
        if not (self.d > 0 and frac.numerator % 2 == 1 and frac.denominator % 2 == 1
                and abs(float(frac) - self.d) < 1e-9):  # fmt: skip
            raise ValueError(
                f"d = {self.d} must be > 0 with x^d an odd function (eq. 8): 1, 3, 5, 1/3, 3/5 ..."
            )
        if not 0.0 <= self.beta <= 1.0:
            raise ValueError(f"beta = {self.beta} must be in [0, 1]")
        if self.recrawl_every < 0:
            raise ValueError(f"recrawl_every = {self.recrawl_every} must be >= 0")


@dataclass(frozen=True)
class OtieState(StrategyState):
    """The fetch lists generated so far (line 4's periodical condition) and, with
    ``link_model = "online"``, the link model's learner."""

    lists: int = 0
    learner: LearnerState | None = None

    def to_json(self) -> dict[str, Any]:
        if self.learner is None:
            return {"lists": self.lists}
        return {"lists": self.lists, "learner": self.learner.to_json()}

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Self:
        learner = LearnerState.from_json(raw["learner"]) if "learner" in raw else None
        return cls(int(raw.get("lists", 0)), learner)


@register_strategy("otie")
class OtieStrategy(Strategy[OtieParams]):
    """P1's OTIE: relevance-revised cash (eq. 8) split by similarity (eq. 6-7), best-N-first."""

    name: ClassVar[str] = "otie"
    merge: ClassVar[Merge] = Merge.ADD
    needs_model: ClassVar[bool] = True
    recrawls: ClassVar[bool] = True
    default_fetch_list_size: ClassVar[int] = 50

    def __init__(self, model: Any = None, **params: Any) -> None:
        super().__init__(model, **params)
        self.lists = 0  # fetch lists generated so far (the periodical condition)
        self.learner = (
            OnlineLinkLearner(LearningParams(rescore=0, beta=self.p.beta))
            if self.p.link_model == "online"
            else None
        )

    def seed_scores(self, seeds: Sequence[str]) -> list[ScoreUpdate]:
        share = 1.0 / len(seeds)  # line 1
        return [
            ScoreUpdate(url, share, Merge.SET, reason=f"line 1: 1/{len(seeds)} of the cash")
            for url in seeds
        ]

    def entry_scores(self, urls: Sequence[str]) -> list[ScoreUpdate]:
        return [ScoreUpdate(url, 0.0, Merge.SET, reason="entered by robots.txt: no cash") for url in urls]

    def on_fetch_list(self, urls: Sequence[QueuedURL]) -> Decision:
        self.lists += 1
        every = self.p.recrawl_every
        if not every or self.lists % every:
            return Decision()
        best = self.view.top("score", URLState.FETCHED)  # line 5
        if best is None or best[1] <= 0.0:
            return Decision()
        return Decision(
            recrawl=[best[0]], reason=f"line 5: fetched page with the most cash {best[1]:.4g}"
        )

    def on_page(self, page: Page, relevance: float | None, queued: QueuedURL) -> Decision:
        assert self.model is not None
        r = 0.0 if relevance is None else min(1.0, max(0.0, relevance))
        cash = revised_cash(queued.score, r, self.p.a, self.p.d)  # line 9, eq. 8
        updates = [ScoreUpdate(queued.url, 0.0, Merge.SET, reason="line 13: cash = 0")]
        if not page.links:
            return Decision(updates=updates)
        sims = self._similarities(page, r, queued)
        total = sum(sim for sim, _ in sims)
        links = []
        for link, (sim, kind) in zip(page.links, sims, strict=True):
            share = sim / total if total > 0 else 1.0 / len(page.links)  # eq. 6
            links.append(
                LinkScore(
                    link, share * cash, reason=f"eq6 {kind} sim {sim:.4g}/{total:.4g} of {cash:.4g}"
                )
            )
        return Decision(links=links, updates=updates)

    def _similarities(self, page: Page, r: float, queued: QueuedURL) -> list[tuple[float, str]]:
        """sim'(j, t) of eq. 7 for every out-link j of the page, with its branch."""
        assert self.model is not None
        predicted, _ = predicted_scores(self.learner, self.model, page, r, queued, self.p.beta)
        out: list[tuple[float, str]] = []
        for link, sim in zip(page.links, predicted, strict=True):
            if self.view.state(link.url) == URLState.FETCHED:
                real = self.view.value(link.url, "relevance")
                if real is not None:
                    out.append((real, "real"))
                    continue
            out.append((sim, "predicted"))
        return out

    def counters(self) -> Mapping[str, int]:
        return {} if self.learner is None else link_model_counters(self.learner)

    def state_dict(self) -> dict[str, Any]:
        return OtieState(self.lists, None if self.learner is None else self.learner.state()).to_json()

    def load_state(self, state: Mapping[str, Any]) -> None:
        saved = OtieState.from_json(state)
        self.lists = saved.lists
        if self.learner is not None and saved.learner is not None:
            self.learner.load(saved.learner)
