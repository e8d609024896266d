"""A crawler that learns while it crawls: best-first on an online link model.

Every strategy of the papers scores links with a model fixed before the crawl;
this one learns which links lead to relevant pages from the crawl's own
judgements (:mod:`focuscrawl.relevance.online_link`):

1. a link found on a page is known by its anchor, context, URL tokens, the
   parent's relevance and its depth (kept for the URL until it is fetched);
2. when the page it leads to is judged, that link becomes a training example
   with the page's relevance as its reward; if the page is relevant (relevance
   >= ``relevant``), the links that led to its ancestors within ``hops`` links
   are rewarded too, ``gamma ** h`` times (the apprentice's discounted reward);
3. every ``update_every`` pages the examples since the last update are learnt
   (one ``partial_fit``), and the ``rescore`` most recently found queued URLs
   are scored again by the new model (a bounded rescore: its cost is that many
   predictions, not the queue's size);
4. links are scored by the online model once it has learnt from
   ``min_examples`` examples, some of them positive; before that (a cold start)
   by the parent page's relevance, as best-first does.

Updates happen at logical points (a count of pages), and the model is seeded:
in the ordered schedule the same settings, seed and web give the same crawl.
The model's weights are part of the resume state; the features of links found
before a resume are not (those URLs keep their scores and teach nothing).
"""

from __future__ import annotations

import random
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from focuscrawl.relevance.online_link import OnlineLinkModel, link_tokens
from focuscrawl.strategies.base import Strategy, register_strategy
from focuscrawl.strategies.scoring import context_scores
from focuscrawl.strategies.view import FrontierView
from focuscrawl.types import Decision, LinkScore, Merge, Page, QueuedURL, ScoreUpdate, URLState

_KEEP = 200_000  # link features kept (queued URLs, then fetched pages' inbound links)


@dataclass(frozen=True)
class LearningParams:
    update_every: int = 25  # pages between two updates of the link model
    min_examples: int = 50  # examples learnt (some positive) before links are scored by it
    hops: int = 2  # k: the links to ancestors this many links up are rewarded too
    gamma: float = 0.5  # reward discount per hop
    relevant: float = 0.5  # page relevance from which its ancestors' links are rewarded
    rescore: int = 2000  # queued URLs scored again after an update (latest found first)

    def __post_init__(self) -> None:
        if self.update_every < 1 or self.min_examples < 0 or self.hops < 0 or self.rescore < 0:
            raise ValueError("update_every >= 1, min_examples, hops and rescore >= 0")
        if not 0.0 <= self.gamma <= 1.0 or not 0.0 <= self.relevant <= 1.0:
            raise ValueError("gamma and relevant must be in [0, 1]")


class OnlineLinkLearner:
    """The learning part, for any strategy: it sees every judged page, keeps the
    features of the links found, learns at the update points, and scores links.

    The learning strategy uses it with a rescore; OTIE and link-context use it by
    ``link_model = "online"`` as their predicted similarity (eq. 7 / eq. 9), with no
    rescore (their scores are cash and sums, which a rescore would overwrite).
    """

    def __init__(self, p: LearningParams, seed: int = 0) -> None:
        self.p = p
        self.model = OnlineLinkModel(seed=seed)
        self.pages = 0  # pages seen (the update points count these)
        self.pending: list[tuple[np.ndarray, float]] = []  # examples since the last update
        # queued URL -> the hashed columns of the link that found it; a fetched page ->
        # (the columns of its link, its parent), for its ancestors' rewards
        self._found: OrderedDict[str, np.ndarray] = OrderedDict()
        self._inbound: OrderedDict[str, tuple[np.ndarray | None, str | None]] = OrderedDict()

    @property
    def active(self) -> bool:
        """The online model scores links (else the strategy's cold-start score does)."""
        m = self.model
        return m.ready and m.examples >= self.p.min_examples and m.positives > 0

    def examples_for(
        self, url: str, parent: str | None, relevance: float
    ) -> list[tuple[np.ndarray, float]]:
        """The training examples a judged page makes: its own link with its relevance,
        and, if it is relevant, its ancestors' links with the discounted reward."""
        out: list[tuple[np.ndarray, float]] = []
        columns = self._found.pop(url, None)
        if columns is not None:
            out.append((columns, relevance))
        _keep(self._inbound, url, (columns, parent))
        if relevance >= self.p.relevant:
            ancestor, hop = parent, 1
            while ancestor is not None and hop <= self.p.hops:
                known = self._inbound.get(ancestor)
                if known is None:
                    break
                if known[0] is not None:
                    out.append((known[0], self.p.gamma**hop * relevance))
                ancestor, hop = known[1], hop + 1
        return out

    def observe(
        self, page: Page, relevance: float, queued: QueuedURL
    ) -> tuple[list[list[str]], list[np.ndarray]]:
        """A judged page: its examples are kept, its links' features remembered.
        Returns the links' tokens and hashed columns (for :meth:`score`)."""
        self.pending += self.examples_for(queued.url, queued.parent, relevance)
        depth = queued.depth + 1
        tokens = [
            link_tokens(link.url, link.anchor, link.context, relevance, depth)
            for link in page.links
        ]
        rows = [self.model.columns(t) for t in tokens]
        for link, columns in zip(page.links, rows, strict=True):
            if link.url not in self._found and link.url not in self._inbound:
                _keep(self._found, link.url, columns)
        return tokens, rows

    def tick(self) -> bool:
        """One page done: True if this was an update point (the model learnt)."""
        self.pages += 1
        if self.pages % self.p.update_every or not self.pending:
            return False
        self.model.update([c for c, _ in self.pending], [r for _, r in self.pending])
        self.pending.clear()
        return True

    def rescore(self, view: FrontierView, limit: int) -> list[ScoreUpdate]:
        """New scores for up to ``limit`` queued URLs, the latest found first."""
        if not self.active or limit <= 0:
            return []
        urls: list[str] = []
        for url in reversed(self._found):
            if len(urls) >= limit:
                break
            if view.state(url) == URLState.QUEUED:
                urls.append(url)
        scores = self.model.score([self._found[u] for u in urls])
        version = self.model.version
        return [
            ScoreUpdate(
                url, score, Merge.SET, reason=f"rescored by the online link model v{version}"
            )
            for url, score in zip(urls, scores, strict=True)
        ]

    def state(self) -> dict[str, Any]:
        pending = [(columns.tolist(), reward) for columns, reward in self.pending]
        return {"pages": self.pages, "model": self.model.state(), "pending": pending}

    def load(self, state: Mapping[str, Any]) -> None:
        self.pages = int(state.get("pages", 0))
        self.model.load(dict(state.get("model") or {}))
        self.pending = [
            (np.asarray(columns, dtype=np.int32), float(reward))
            for columns, reward in state.get("pending", [])
        ]


def _keep(table: OrderedDict[str, Any], key: str, value: Any) -> None:
    table[key] = value
    if len(table) > _KEEP:
        table.popitem(last=False)


@register_strategy("learning")
class LearningStrategy(Strategy):
    """Best-first on a link model learnt online from the crawl's own page judgements."""

    name: ClassVar[str] = "learning"
    merge: ClassVar[Merge] = Merge.MAX
    needs_model: ClassVar[bool] = True
    Params: ClassVar[type[Any]] = LearningParams

    def __init__(self, model: Any = None, **params: Any) -> None:
        super().__init__(model, **params)
        self.learner = OnlineLinkLearner(self.p)

    def attach(self, view: FrontierView, rng: random.Random) -> None:
        super().attach(view, rng)
        if (
            not self.learner.model.ready
        ):  # seeded from the crawl's generator (load_state may follow)
            self.learner = OnlineLinkLearner(self.p, seed=rng.randrange(1 << 31))

    @property
    def link_model(self) -> OnlineLinkModel:
        return self.learner.model

    @property
    def pending(self) -> list[tuple[np.ndarray, float]]:
        """The examples since the last update (what the next one learns)."""
        return self.learner.pending

    @property
    def active(self) -> bool:
        return self.learner.active

    def on_page(self, page: Page, relevance: float | None, queued: QueuedURL) -> Decision:
        r = 0.0 if relevance is None else float(relevance)
        learner = self.learner
        tokens, rows = learner.observe(page, r, queued)
        if learner.active:
            model = learner.model
            scores = model.score(rows)
            links = [
                LinkScore(link, score, reason=model.explain(t, score).text())
                for link, score, t in zip(page.links, scores, tokens, strict=True)
            ]
        else:
            links = [
                LinkScore(link, r, reason="cold start: parent relevance") for link in page.links
            ]
        updates = learner.rescore(self.view, self.p.rescore) if learner.tick() else []
        return Decision(links=links, updates=updates)

    def counters(self) -> Mapping[str, int]:
        return link_model_counters(self.learner)

    def state_dict(self) -> dict[str, Any]:
        return self.learner.state()

    def load_state(self, state: Mapping[str, Any]) -> None:
        self.learner.load(state)


def link_model_counters(learner: OnlineLinkLearner) -> dict[str, int]:
    m = learner.model
    return {"link_model_version": m.version, "link_model_examples": m.examples,
            "link_model_positives": m.positives}  # fmt: skip


def online_or_fixed(
    learner: OnlineLinkLearner | None, model: Any, page: Page, relevance: float, queued: QueuedURL
) -> tuple[list[float], str]:
    """The predicted similarity of a page's links for eq. 7 / eq. 9: the online link
    model's (``link_model = "online"``, once it scores), else the page model's score of
    each link's context window (P1). The learner sees the page either way."""
    if learner is not None:
        _, rows = learner.observe(page, relevance, queued)
        active = learner.active
        learner.tick()
        if active:
            return learner.model.score(rows), f"online v{learner.model.version}"
    return context_scores(model, page.links), "context"
