"""Scoring helpers shared by strategies: link contexts in batches, eq. 9 of P1."""

from __future__ import annotations

from collections.abc import Sequence

from focuscrawl.relevance.base import RelevanceModel, TextScorer
from focuscrawl.types import Link


def text_scores(model: RelevanceModel, texts: Sequence[str]) -> list[float]:
    """``model.score_text`` of every text, in one batch where the model can (classifiers)."""
    if isinstance(model, TextScorer):
        return [float(s) for s in model.score_texts(list(texts))]
    return [float(model.score_text(t)) for t in texts]


def context_scores(model: RelevanceModel, links: Sequence[Link]) -> list[float]:
    """The relevance of each link's context window (its anchor if it has no context)."""
    return text_scores(model, [link.context or link.anchor for link in links])


def eq9(page_score: float, context_score: float, beta: float) -> float:
    """P1 eq. 9: score = β·page_score + (1 − β)·context_score.

    >>> eq9(0.8, 0.4, 0.25)
    0.5
    """
    return beta * page_score + (1.0 - beta) * context_score
