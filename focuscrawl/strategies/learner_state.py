"""The online learner's resume state: its page count, its link model(s) and the
examples not learnt yet (written by :meth:`OnlineLinkLearner.state
<focuscrawl.strategies.link_learner.OnlineLinkLearner.state>`, read by its ``load``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Self

from focuscrawl.relevance.online_link import LinkModelState
from focuscrawl.strategies.base import StrategyState


@dataclass(frozen=True)
class PendingExamples(StrategyState):
    """The examples not learnt yet, in the resume state: their columns as one zlib'd,
    base64 int32 array, each one's length, reward and prior."""

    columns: str = ""
    lengths: list[int] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    priors: list[float] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"columns": self.columns, "lengths": self.lengths, "rewards": self.rewards, "priors": self.priors}

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Self:
        lengths = [int(n) for n in raw.get("lengths", [])]
        if not lengths:  # nothing pending
            return cls(str(raw.get("columns", "")), lengths, list(raw.get("rewards", [])), list(raw.get("priors", [])))
        # the values as JSON holds them (read as floats when the examples are rebuilt)
        return cls(str(raw["columns"]), lengths, list(raw["rewards"]), list(raw["priors"]))


@dataclass(frozen=True)
class LearnerState(StrategyState):
    """An :class:`OnlineLinkLearner` in the resume state (the learning strategy's state,
    and OTIE's and link-context's with ``link_model = "online"``)."""

    pages: int = 0
    model: LinkModelState = field(default_factory=LinkModelState)
    pending: PendingExamples = field(default_factory=PendingExamples)
    # with several rates: every candidate's model (``model`` is the first's) and its
    # prequential loss
    candidates: list[LinkModelState] = field(default_factory=list)
    losses: list[float] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        out = {"pages": self.pages, "model": self.model.to_json(), "pending": self.pending.to_json()}
        if self.candidates:
            out["candidates"] = [c.to_json() for c in self.candidates]
            out["losses"] = list(self.losses)
        return out

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Self:
        return cls(int(raw.get("pages", 0)), LinkModelState.from_json(raw.get("model") or {}),
                   PendingExamples.from_json(raw.get("pending") or {}),
                   [LinkModelState.from_json(c) for c in raw.get("candidates", [])],
                   [float(x) for x in raw.get("losses", [])])  # fmt: skip
