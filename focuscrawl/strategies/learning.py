"""A crawler that learns while it crawls: link-context's score corrected by an online link model.

Every strategy of the papers scores links with a model fixed before the crawl;
this one learns, from the crawl's own judgements, how wrong that fixed score is
(:mod:`focuscrawl.relevance.online_link`):

1. a link found on a page gets link-context's score (P1 eq. 9: β·the page's
   relevance + (1 − β)·the page model's score of the link's context window), the
   *prior*; the link is known by its anchor, context, URL tokens, the parent's
   relevance, its depth and how many relevant pages link to its URL (kept for the
   URL until it is fetched);
2. when the page it leads to is judged, that link becomes a training example whose
   target is the page's relevance minus the link's prior (the correction the prior
   needed); if the page is relevant (relevance >= ``relevant``), the links that led
   to its ancestors within ``hops`` links are examples too, with ``gamma ** h``
   times the relevance as their reward (the apprentice's discounted reward), where
   that is more than the relevance of the page they led to (``hop_reward = "max"``);
3. every ``update_every`` pages the examples since the last update are learnt
   (one ``partial_fit``), and the ``rescore`` most recently found queued URLs are
   scored again by the new model (a bounded rescore: its cost is that many
   predictions, not the queue's size);
4. a link's score is prior + w · correction (at least 0), where the weight w
   grows from 0 to 1 over the first ``min_examples`` examples learnt (a warm start:
   link-context itself until the model has learnt anything, then a blend by how
   much it has learnt, never a switch).

Updates happen at logical points (a count of pages), and the model is seeded:
in the ordered schedule the same settings, seed and web give the same crawl.

Resume: the model (its float32 weights exactly, version and counts), the examples
not learnt yet and the page count are in the resume state. The per-link features
(the hashed tokens of each queued URL's link, those of the links to fetched pages
for the ancestors' rewards, the relevant in-link counts) grow with the queue and
are not: after a resume, the URLs queued before it keep their scores and are not
rescored, their pages teach nothing, and in-link counts start again from zero; the
links found after the resume are learnt from as before. So a resumed crawl goes on
with the same model, but is not the uninterrupted crawl after the resume point.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any, ClassVar

from focuscrawl.relevance.online_link import OnlineLinkModel
from focuscrawl.strategies.base import Strategy, client_error, register_strategy
from focuscrawl.strategies.language_kinds import MeasuredKinds
from focuscrawl.strategies.learner_state import LearnerState
from focuscrawl.strategies.link_learner import (
    Example,
    LearningParams,
    OnlineLinkLearner,
    link_model_counters,
)
from focuscrawl.strategies.link_words import OwnWordScores
from focuscrawl.strategies.scoring import context_scores, eq9
from focuscrawl.strategies.view import FrontierView
from focuscrawl.types import Decision, LinkScore, Merge, Page, QueuedURL, ScoreUpdate


@register_strategy("learning")
class LearningStrategy(Strategy[LearningParams]):
    """Link-context's score corrected by a link model learnt online, best-first, rescored."""

    name: ClassVar[str] = "learning"
    merge: ClassVar[Merge] = Merge.MAX
    needs_model: ClassVar[bool] = True

    def __init__(self, model: Any = None, **params: Any) -> None:
        super().__init__(model, **params)
        self.learner = OnlineLinkLearner(self.p)
        # kind_pages: the measured mean relevance per kind (no hubs, no probe)
        self.kinds = MeasuredKinds(self.p.kind_pages, 0.0, 0.0, "fixed", 0)
        self.own_words: OwnWordScores | None = None  # cross_words: made at the first page

    def attach(self, view: FrontierView, rng: random.Random) -> None:
        super().attach(view, rng)
        if not self.learner.model.ready:  # seeded by the crawl's generator (load_state may follow)
            self.learner = OnlineLinkLearner(self.p, seed=rng.randrange(1 << 31))

    @property
    def link_model(self) -> OnlineLinkModel:
        return self.learner.model

    @property
    def pending(self) -> list[Example]:
        """The examples since the last update (what the next one learns)."""
        return self.learner.pending

    @property
    def active(self) -> bool:
        return self.learner.active

    def on_page(self, page: Page, relevance: float | None, queued: QueuedURL) -> Decision:
        assert self.model is not None
        r = 0.0 if relevance is None else float(relevance)
        learner = self.learner
        priors = [eq9(r, c, self.p.beta) for c in context_scores(self.model, page)]
        buckets = self.p.cross_words
        marks = None
        if buckets > 0:
            if self.own_words is None:
                self.own_words = OwnWordScores(self.model)
            marks = self.own_words.marks(page, buckets)
        tokens, scores = learner.observe(page, r, queued, priors, marks)
        links = [
            LinkScore(link, score, reason=learner.reason(t, prior, score))
            for link, score, prior, t in zip(page.links, scores, priors, tokens, strict=True)
        ]
        updates = learner.rescore(self.view, self.p.rescore) if learner.tick() else []
        if self.p.kind_pages <= 0:
            return Decision(links=links, updates=updates)
        return self._by_kinds(page, r, links, updates)

    def on_failure(self, queued: QueuedURL, reason: str) -> Decision:
        """With ``learn_failures``: a URL its server answered with a client error (404,
        410, 403; not 408 or 429, not a timeout) is an example of reward 0 for the link
        that found it, learnt at the next update as a page judged irrelevant would be, and
        under the measured kinds a page of its kind of relevance 0 (its kind rescored)."""
        if not self.p.learn_failures or not client_error(reason):
            return Decision()
        self.learner.failed(queued.url, queued.parent)
        why = f"{reason}: its link learnt as one to no relevant page"
        if self.p.kind_pages <= 0:
            return Decision(reason=why)
        kind = self.kinds.failed(queued.url)
        return Decision(updates=self.kinds.rescore(kind, self.view), reason=why)

    def _by_kinds(self, page: Page, relevance: float, links: list[LinkScore], updates: list[ScoreUpdate]) -> Decision:
        """The learnt scores weighed with their kinds' measured mean relevance
        (:class:`MeasuredKinds`: (N_r + k · score) / (N_a + k)); the page's kind's queued
        URLs rescored when its page count reaches a power of two."""
        kinds = self.kinds
        kind = kinds.observe(page.url, relevance, page.links, frozenset())
        weighed = []
        for ls in links:
            score, merge, why = kinds.score(ls.link.url, ls.score, "")
            weighed.append(LinkScore(ls.link, score, merge, reason=ls.reason + why))
        rescored = {u.url: u for u in kinds.rescore(kind, self.view)}
        for u in updates:  # the learner's rescore, weighed (a kind's rescore comes after it)
            if u.url not in rescored:
                rescored[u.url] = ScoreUpdate(u.url, kinds.weigh(u.url, u.score), u.merge, reason=u.reason)
        return Decision(links=weighed, updates=list(rescored.values()))

    def counters(self) -> Mapping[str, int]:
        return link_model_counters(self.learner)

    def state_dict(self) -> dict[str, Any]:
        state = self.learner.state().to_json()
        if self.p.kind_pages > 0:
            state["kinds"] = self.kinds.to_json()
        return state

    def load_state(self, state: Mapping[str, Any]) -> None:
        self.learner.load(LearnerState.from_json(state))
        self.kinds.load(state.get("kinds", {}))
