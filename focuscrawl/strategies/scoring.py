"""Scoring helpers shared by strategies: link contexts in batches, eq. 9 of P1."""

from __future__ import annotations

from collections.abc import Sequence

from focuscrawl.relevance.base import LinkTextScorer, RelevanceModel, TextScorer
from focuscrawl.types import Page


def text_scores(model: RelevanceModel, texts: Sequence[str]) -> list[float]:
    """``model.score_text`` of every text, in one batch where the model can (classifiers)."""
    if isinstance(model, TextScorer):
        return [float(s) for s in model.score_texts(list(texts))]
    return [float(model.score_text(t)) for t in texts]


def context_scores(model: RelevanceModel, page: Page) -> list[float]:
    """The relevance of the context window of each link of ``page`` (its anchor if it
    has no context), read as text of that page where the model reads so
    (:class:`~focuscrawl.relevance.base.LinkTextScorer`: the language model)."""
    if isinstance(model, LinkTextScorer):
        return [float(s) for s in model.score_link_contexts(page)]
    return text_scores(model, [link.context or link.anchor for link in page.links])


def eq9(page_score: float, context_score: float, beta: float) -> float:
    """P1 eq. 9: score = β·page_score + (1 − β)·context_score.

    >>> eq9(0.8, 0.4, 0.25)
    0.5
    """
    return beta * page_score + (1.0 - beta) * context_score
