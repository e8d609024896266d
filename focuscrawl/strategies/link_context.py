"""Link-context prediction (P1's strongest baseline; Pant & Srinivasan 2006).

Best-N-first (N = 50): each iteration fetches the 50 highest-priority frontier
URLs. The priority of a link is eq. 9,
``score = β·page_score + (1 − β)·context_score``, with ``page_score`` the
relevance of the page the link is on, ``context_score`` the relevance of the
window of T = 20 words around the link, anchor included (``parse.context_words``),
and β = 0.25. A URL found again keeps the higher score (``Merge.MAX``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Self

from focuscrawl.strategies.base import Strategy, StrategyState, register_strategy
from focuscrawl.strategies.learner_state import LearnerState
from focuscrawl.strategies.link_learner import (
    LearningParams,
    OnlineLinkLearner,
    link_model_counters,
    predicted_scores,
)
from focuscrawl.types import Decision, LinkScore, Merge, Page, QueuedURL


@dataclass(frozen=True)
class LinkContextParams:
    beta: float = 0.25  # eq. 9: weight of the page's own score
    # "fixed": eq. 9 as P1 has it; "online": eq. 9 corrected by the online link model
    # learnt during the crawl (eq. 9 alone until it has learnt; the correction's weight
    # grows with its examples): focuscrawl.strategies.learning
    link_model: str = "fixed"

    def __post_init__(self) -> None:
        if not 0.0 <= self.beta <= 1.0:
            raise ValueError(f"beta = {self.beta} must be in [0, 1]")
        if self.link_model not in ("fixed", "online"):
            raise ValueError(f"link_model = {self.link_model!r} must be 'fixed' or 'online'")


@dataclass(frozen=True)
class LinkContextState(StrategyState):
    """With ``link_model = "online"``, the link model's learner (else nothing)."""

    learner: LearnerState | None = None

    def to_json(self) -> dict[str, Any]:
        return {} if self.learner is None else {"learner": self.learner.to_json()}

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Self:
        return cls(LearnerState.from_json(raw["learner"]) if "learner" in raw else None)


@register_strategy("link-context")
class LinkContextStrategy(Strategy[LinkContextParams]):
    """P1 link-context prediction: eq. 9 priority, best-N-first, duplicates keep the max."""

    name: ClassVar[str] = "link-context"
    merge: ClassVar[Merge] = Merge.MAX
    needs_model: ClassVar[bool] = True
    default_fetch_list_size: ClassVar[int] = 50

    def __init__(self, model: Any = None, **params: Any) -> None:
        super().__init__(model, **params)
        self.learner = (
            OnlineLinkLearner(LearningParams(rescore=0, beta=self.p.beta))
            if self.p.link_model == "online"
            else None
        )

    def on_page(self, page: Page, relevance: float | None, queued: QueuedURL) -> Decision:
        assert self.model is not None
        page_score = 0.0 if relevance is None else relevance
        scores, reasons = predicted_scores(
            self.learner, self.model, page, page_score, queued, self.p.beta
        )
        return Decision(
            links=[
                LinkScore(link, score, reason=reason)
                for link, score, reason in zip(page.links, scores, reasons, strict=True)
            ]
        )

    def counters(self) -> Mapping[str, int]:
        return {} if self.learner is None else link_model_counters(self.learner)

    def state_dict(self) -> dict[str, Any]:
        return LinkContextState(None if self.learner is None else self.learner.state()).to_json()

    def load_state(self, state: Mapping[str, Any]) -> None:
        saved = LinkContextState.from_json(state)
        if self.learner is not None and saved.learner is not None:
            self.learner.load(saved.learner)
