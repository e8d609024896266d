"""The online learner behind the learning strategy (and OTIE's and link-context's
``link_model = "online"``): its parameters, the training examples a judged page makes,
the per-link features it keeps, the update points (with an optional prequential
choice of the link model's step size), the rescore and the resume state. The
algorithm is told in :mod:`focuscrawl.strategies.learning`."""

from __future__ import annotations

import base64
import zlib
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from focuscrawl.relevance.online_link import ETA0, OnlineLinkModel, link_tokens
from focuscrawl.strategies.learner_state import LearnerState, PendingExamples
from focuscrawl.strategies.link_words import cross_tokens
from focuscrawl.strategies.scoring import context_scores, eq9
from focuscrawl.strategies.view import FrontierView
from focuscrawl.types import Merge, Page, QueuedURL, ScoreUpdate, URLState

_KEEP = 200_000  # link features kept (queued URLs, then fetched pages' inbound links)


@dataclass(frozen=True)
class LearningParams:
    update_every: int = 25  # pages between two updates of the link model
    min_examples: int = 50  # examples learnt before the correction has its full weight
    hops: int = 2  # k: the links to ancestors this many links up are rewarded too
    gamma: float = 0.5  # reward discount per hop
    relevant: float = 0.5  # page relevance from which its ancestors' links are rewarded
    rescore: int = 2000  # queued URLs scored again after an update (latest found first)
    beta: float = 0.25  # eq. 9 of the prior: weight of the parent page's relevance
    epochs: int = 1  # passes of partial_fit over the new examples at each update
    # an ancestor's link is rewarded gamma ** h * relevance: "max" only where that is more
    # than the reward its own page gave it (a link's value is the best of where it leads
    # and what that leads to), "all" as an example of its own in any case
    hop_reward: str = "max"
    # the SGD step sizes (eta0) to choose from by prequential validation: each has its
    # own model, all learn every example, and the one whose predictions of the examples
    # before learning them erred least (summed squared error) scores the links; 0 is
    # the prior alone (a correction of 0). Empty: one model at ETA0, no choice
    rates: tuple[float, ...] = ()
    # the share of its eq. 9 score (the prior) below which the correction may not take a
    # link: score = max(prior_floor · prior, prior + w · correction). 0: the floor is 0
    # (issue 28), where links the model pushes down tie whatever their priors; above 0,
    # those links keep eq. 9's order among themselves
    prior_floor: float = 0.0
    # k: a link's score is weighed with the mean relevance measured on its kind's pages
    # (a directory and the language its URLs name) as k pages' worth, (N_r + k · score) /
    # (N_a + k), so a directory's first pages decide for the rest; 0: off
    kind_pages: float = 0.0
    # h: a page's value as a SOURCE of targets (the hub reward). The link that led to a
    # page D is also rewarded min(1, r(D) + h · N(D)), N(D) the relevant pages judged so
    # far that D's links discovered (D's fetch queued them first), as an example of its
    # own each time that grows; so the model learns which pages are worth fetching for
    # their links, not only for themselves. 0: off (issue 28)
    hub_reward: float = 0.0
    # a URL its server answers with a client error (404, 410, 403: no page there) is an
    # example of reward 0 for the link that found it, as a page judged irrelevant; off:
    # a dead link teaches nothing (issue 28), and a web's dead links keep their scores
    learn_failures: bool = False
    # B: a link's tokens crossed with the bucket (of B) of the page model's score of its own
    # words (:mod:`~focuscrawl.strategies.link_words`); cross_shared: the plain ones kept too
    cross_words: int = 0
    cross_shared: bool = False

    def __post_init__(self) -> None:
        if self.update_every < 1 or self.min_examples < 0 or self.hops < 0 or self.rescore < 0:
            raise ValueError("update_every >= 1, min_examples, hops and rescore >= 0")
        if self.epochs < 1 or self.hop_reward not in ("all", "max"):
            raise ValueError("epochs >= 1; hop_reward 'all' or 'max'")
        if self.kind_pages < 0.0 or self.hub_reward < 0.0 or self.cross_words < 0:
            raise ValueError("kind_pages, hub_reward and cross_words must be >= 0")
        if not all(0.0 <= x <= 1.0 for x in (self.gamma, self.relevant, self.beta, self.prior_floor)):
            raise ValueError("gamma, relevant, beta and prior_floor must be in [0, 1]")
        if any(r < 0.0 for r in self.rates):
            raise ValueError("rates must be >= 0")


class Example(NamedTuple):
    """One training example: a link's hashed columns, its reward (a page's relevance,
    discounted for ancestors) and the prior score the link had."""

    columns: np.ndarray
    reward: float
    prior: float


# The per-link tables hold plain tuples of arrays, floats and strings, which Python's
# garbage collector stops tracking (a NamedTuple it tracks for ever: 200,000 of them
# made every full collection, and so the steps that allocate, slower at scale).
_Found = tuple[np.ndarray, float, float]  # a queued URL's link: columns, prior, score
# a fetched page: its link's columns, reward and prior (None: a seed), and its parent
_Inbound = tuple[np.ndarray | None, float, float, str | None]


class OnlineLinkLearner:
    """The learning part, for any strategy: it sees every judged page, keeps the
    features of the links found, learns at the update points, and scores links.

    The learning strategy uses it with a rescore; OTIE and link-context use it by
    ``link_model = "online"`` for their predicted similarity (eq. 7 / eq. 9), with no
    rescore (their scores are cash and maxima, which a rescore would overwrite).
    """

    def __init__(self, p: LearningParams, seed: int = 0) -> None:
        self.p = p
        # one model per candidate step size (prequential choice), or the one at ETA0
        self.rates = p.rates or (ETA0,)
        self.models = [OnlineLinkModel(seed=seed, eta0=r or ETA0) for r in self.rates]
        self.losses = [0.0] * len(self.rates)
        self.best = 0  # the candidate that scores: the least loss, the first listed on ties
        self.pages = 0  # pages seen (the update points count these)
        self.pending: list[Example] = []  # examples since the last update
        # queued URL -> the link that found it (the best scored, if found again); a
        # fetched page -> (the columns and prior of its link, its parent), for its
        # ancestors' rewards; a URL -> relevant pages linking to it
        self._found: OrderedDict[str, _Found] = OrderedDict()
        self._inbound: OrderedDict[str, _Inbound] = OrderedDict()
        self._inlinks: OrderedDict[str, int] = OrderedDict()
        # with hub_reward: a URL not judged yet -> the page whose fetch first found it;
        # a fetched page -> the relevant pages its links discovered (N(D))
        self._discoverer: OrderedDict[str, str] = OrderedDict()
        self._discovered: OrderedDict[str, int] = OrderedDict()

    @property
    def model(self) -> OnlineLinkModel:
        """The model that scores (the chosen candidate's)."""
        return self.models[self.best]

    @property
    def weight(self) -> float:
        """w of the correction: examples learnt / ``min_examples``, at most 1."""
        m = self.model
        if not m.ready:
            return 0.0
        return 1.0 if self.p.min_examples == 0 else min(1.0, m.examples / self.p.min_examples)

    @property
    def active(self) -> bool:
        """The online model corrects the prior (else the prior alone scores)."""
        return self.weight > 0.0

    def examples_for(self, url: str, parent: str | None, relevance: float) -> list[Example]:
        """The training examples a judged page makes: its own link with its relevance,
        and, if it is relevant, its ancestors' links with the discounted reward."""
        out: list[Example] = []
        source = self._discoverer.pop(url, None) if self.p.hub_reward > 0.0 else None
        found = self._found.pop(url, None)
        if found is not None:
            out.append(Example(found[0], relevance, found[1]))
            _keep(self._inbound, url, (found[0], relevance, found[1], parent))
        elif url not in self._inbound:  # a seed, or found before a resume
            _keep(self._inbound, url, (None, 0.0, 0.0, parent))
        if relevance >= self.p.relevant:
            ancestor, hop = parent, 1
            while ancestor is not None and hop <= self.p.hops:
                known = self._inbound.get(ancestor)
                if known is None:
                    break
                columns, own_reward, prior, up = known
                reward = self.p.gamma**hop * relevance
                if columns is not None and (self.p.hop_reward == "all" or reward > own_reward):
                    out.append(Example(columns, reward, prior))
                ancestor, hop = up, hop + 1
            if source is not None:
                out += self._hub_example(source)
        return out

    def failed(self, url: str, parent: str | None) -> None:
        """A URL with no page (a client error): its link is an example of reward 0."""
        self._discoverer.pop(url, None)
        found = self._found.pop(url, None)
        if found is not None:
            self.pending.append(Example(found[0], 0.0, found[1]))
            _keep(self._inbound, url, (found[0], 0.0, found[1], parent))

    def _hub_example(self, source: str) -> list[Example]:
        """A relevant page judged that ``source`` (D) discovered: D has discovered one
        more, and the link that led to D is an example of min(1, r(D) + h · N(D)) (none
        when that is not above what N(D) - 1 gave, i.e. once at 1, or when D was a seed)."""
        n = self._discovered.get(source, 0) + 1
        _keep(self._discovered, source, n)
        known = self._inbound.get(source)
        if known is None:
            return []
        columns, own_reward, prior, _ = known
        if columns is None:  # a seed
            return []
        reward = min(1.0, own_reward + self.p.hub_reward * n)
        before = min(1.0, own_reward + self.p.hub_reward * (n - 1))
        return [Example(columns, reward, prior)] if reward > before else []

    def observe(
        self, page: Page, relevance: float, queued: QueuedURL, priors: Sequence[float], marks: Sequence[str] | None = None
    ) -> tuple[list[list[str]], list[float]]:
        """A judged page: its examples are kept, its links' features remembered (crossed with
        ``marks`` if given), its links scored (prior + w · correction); their tokens, scores."""
        first_visit = queued.url not in self._inbound
        self.pending += self.examples_for(queued.url, queued.parent, relevance)
        if relevance >= self.p.relevant and first_visit:  # (OTIE re-crawls: counted once)
            for url in dict.fromkeys(link.url for link in page.links):
                _keep(self._inlinks, url, self._inlinks.get(url, 0) + 1)
        depth = queued.depth + 1
        inlinks = self._inlinks
        tokens = [
            link_tokens(
                link.url, link.anchor, link.context, relevance, depth, inlinks.get(link.url, 0)
            )
            for link in page.links
        ]
        tokens = cross_tokens(tokens, marks, self.p.cross_shared)
        rows = [self.model.columns(t) for t in tokens]
        scores = self.scores(rows, priors)
        hub = self.p.hub_reward > 0.0
        for link, columns, prior, score in zip(page.links, rows, priors, scores, strict=True):
            if link.url in self._inbound:
                continue  # fetched already
            known = self._found.get(link.url)
            if hub and known is None and link.url not in self._discoverer and link.url != queued.url:
                _keep(self._discoverer, link.url, queued.url)  # discovered by this page
            if known is None or score >= known[2]:
                _keep(self._found, link.url, (columns, prior, score))
        return tokens, scores

    def scores(self, rows: Sequence[np.ndarray], priors: Sequence[float]) -> list[float]:
        """prior + w · the model's correction, at least ``prior_floor`` · prior (0 by
        default), for each link (not capped at 1: a page model that gives many links
        priors near 1 would tie them all there)."""
        w = self.weight
        if w == 0.0:
            return [max(0.0, p) for p in priors]
        corrections = self.model.predict(rows)
        f = self.p.prior_floor
        if f == 0.0:
            return [max(0.0, p + w * c) for p, c in zip(priors, corrections, strict=True)]
        return [max(f * p, p + w * c) for p, c in zip(priors, corrections, strict=True)]

    def reason(self, tokens: Sequence[str], prior: float, score: float) -> str:
        """Why a link has its score: the prior, the correction, the model's top tokens."""
        if not self.active:
            return f"eq9 {prior:.4g} (the link model has not learnt yet)"
        explained = self.model.explain(tokens, score - prior)  # the correction applied
        return f"eq9 {prior:.4g}, {explained.text()} at weight {self.weight:.2g}"

    def tick(self) -> bool:
        """One page done: True if this was an update point (the model learnt)."""
        self.pages += 1
        if self.pending and self.pages % self.p.update_every == 0:
            self.learn()
            return True
        return False

    def learn(self) -> None:
        """Learn the pending examples: with several candidates, each first predicts
        them (the prequential test: its loss grows by the squared error, a model not
        ready or the rate 0 predicting 0), then each with a rate learns them, and the
        least loss chooses the model that scores."""
        rows = [e.columns for e in self.pending]
        targets = [e.reward - e.prior for e in self.pending]
        positives = sum(1 for e in self.pending if e.reward >= self.p.relevant)
        several = len(self.models) > 1
        for k, (rate, model) in enumerate(zip(self.rates, self.models, strict=True)):
            if several:
                predicted = model.predict(rows) if rate > 0 else [0.0] * len(rows)
                self.losses[k] += sum((t - y) ** 2 for t, y in zip(targets, predicted, strict=True))
            if rate > 0:
                model.update(rows, targets, positives=positives, epochs=self.p.epochs)
        if several:
            self.best = min(range(len(self.losses)), key=lambda k: (self.losses[k], k))
        self.pending.clear()

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
        found = [self._found[u] for u in urls]
        scores = self.scores([f[0] for f in found], [f[1] for f in found])
        version = self.model.version
        return [
            ScoreUpdate(
                url, score, Merge.SET, reason=f"rescored by the online link model v{version}"
            )
            for url, score in zip(urls, scores, strict=True)
        ]

    def state(self) -> LearnerState:
        """The page count, the model and the examples not learnt yet (compact: their
        columns as one zlib'd int32 array)."""
        lengths = [len(e.columns) for e in self.pending]
        columns = [e.columns for e in self.pending] or [np.zeros(0, dtype=np.int32)]
        blob = zlib.compress(np.concatenate(columns).astype(np.int32).tobytes(), 6)
        pending = PendingExamples(
            columns=base64.b64encode(blob).decode("ascii"), lengths=lengths,
            rewards=[e.reward for e in self.pending], priors=[e.prior for e in self.pending],
        )  # fmt: skip
        if len(self.models) == 1:
            return LearnerState(self.pages, self.model.state(), pending)
        candidates = [m.state() for m in self.models]
        return LearnerState(self.pages, candidates[0], pending, candidates, list(self.losses))

    def load(self, state: LearnerState) -> None:
        self.pages = state.pages
        if len(self.models) == 1:
            self.model.load(state.model)
        else:
            for model, saved in zip(self.models, state.candidates, strict=True):
                model.load(saved)
            self.losses = list(state.losses)
            self.best = min(range(len(self.losses)), key=lambda k: (self.losses[k], k))
        pending = state.pending
        if not pending.lengths:
            self.pending = []
            return
        raw = zlib.decompress(base64.b64decode(pending.columns))
        flat = np.frombuffer(raw, dtype=np.int32)
        bounds = np.cumsum([0, *pending.lengths])
        rows = zip(bounds[:-1], bounds[1:], pending.rewards, pending.priors, strict=True)
        self.pending = [Example(flat[a:b].copy(), float(r), float(p)) for a, b, r, p in rows]


def _keep(table: OrderedDict[str, Any], key: str, value: Any) -> None:
    table[key] = value
    if len(table) > _KEEP:
        table.popitem(last=False)


def predicted_scores(
    learner: OnlineLinkLearner | None, model: Any, page: Page, relevance: float,
    queued: QueuedURL, beta: float,
) -> tuple[list[float], list[str]]:  # fmt: skip
    """Eq. 9's score of each link of a page (P1's predicted similarity of an unfetched
    page), corrected by the online link model when there is one (``link_model =
    "online"``, once it has learnt), with a reason for each. The learner sees the page
    either way (and learns at its update points)."""
    contexts = context_scores(model, page)
    priors = [eq9(relevance, c, beta) for c in contexts]
    if learner is None:  # (eq. 9's two terms in the reason: `focuscrawl why` shows them)
        return priors, [f"eq9 page {relevance:.4g} context {c:.4g}" for c in contexts]
    tokens, scores = learner.observe(page, relevance, queued, priors)
    if learner.active:
        reasons = [learner.reason(t, p, s) for t, p, s in zip(tokens, priors, scores, strict=True)]
    else:
        reasons = [f"eq9 {p:.4g} (the link model has not learnt yet)" for p in priors]
    learner.tick()
    return scores, reasons


def link_model_counters(learner: OnlineLinkLearner) -> dict[str, int]:
    m = learner.model
    return {"link_model_version": m.version, "link_model_examples": m.examples,
            "link_model_positives": m.positives}  # fmt: skip
