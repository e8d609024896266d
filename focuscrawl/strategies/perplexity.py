"""Perplexity buckets: P2's focused crawler (Remus & Biemann, sections 3.2-3.3 and 4).

A URL's priority is the perplexity PP = 2^H (eq. 1) of its parent document
under the domain's n-gram language model, lower first: the link's score is
``1 / PP``, and a URL linked from several documents keeps its best parent
(``Merge.MAX``). Three buckets split the perplexity range by two user bounds,
HIGH (PP ≤ ``high``), MEDIUM (PP ≤ ``medium``) and NORMAL (the rest); a bucket is
the URL's priority *tier*, and the frontier never serves a lower tier while a
higher one holds a queued URL, "even if this delays the overall crawling process"
(footnote 9). Documents above the discard bound (``discard``) pass on no links at all.

The bounds: P2 set HIGH and MEDIUM "by short test crawls" and the discard bound at
10^5 for an LM whose perplexities reached about 10^7. Ours tops out near 1.5·10^5, so
10^5 discards almost nothing. By default (``bounds = "model"``) every bound not given
comes from the model's own perplexities of held-out domain texts
(:mod:`focuscrawl.relevance.ngram_lm`: HIGH up to their median, MEDIUM up to their
95 % quantile, discard above twice the largest); ``bounds = "paper"`` takes P2's
10^3 / 10^4 / 10^5.

Heritrix keeps one queue per server whose priority is that of its best URL. The
frontier's pop is the same schedule: it takes the best queued URL (tier, then
score) of a host that is not busy, i.e. it picks the host queue with the best
head and serves that head; a host's queue is never reordered by its other URLs.
When every URL of the top tier waits on a busy host, nothing of a lower tier is
taken (the paper's delay).

The bounds can be changed while the crawl runs (``focuscrawl control RUN_DIR
high=800``): each queued URL keeps the PP of its best parent in the ``parent_pp``
column, and ``on_params_changed`` moves every queued URL whose PP now falls in
another bucket to its new tier. A changed discard bound applies to the documents
fetched from then on. Seeds have no parent: they get the SEED tier above HIGH at
the first fetch list, so that all seeds are fetched before the links they lead to.

The strategy needs the ``perplexity`` relevance model. PP is read back from the
model's score s = 1 − ln PP / ln PP_max (PP = PP_max^(1−s), no second scoring
pass); where s is clipped (PP ≥ PP_max) or the model maps PP differently, PP is
computed by the model again.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

from focuscrawl.exceptions import ConfigError
from focuscrawl.relevance.base import PerplexityScorer, RelevanceModel
from focuscrawl.strategies.base import Strategy, StrategyState, register_strategy
from focuscrawl.types import Decision, LinkScore, Merge, Page, QueuedURL, ScoreUpdate, URLState

PARENT_PP = "parent_pp"  # PP of the best parent document (0: none, e.g. a seed)
NORMAL, MEDIUM, HIGH, SEED = 0, 1, 2, 3
BUCKETS = {NORMAL: "NORMAL", MEDIUM: "MEDIUM", HIGH: "HIGH", SEED: "SEED"}


PAPER_BOUNDS = {"high": 1000.0, "medium": 10000.0, "discard": 1e5}  # P2's numbers


@dataclass(frozen=True)
class PerplexityParams:
    high: float | None = None  # PP ≤ high: the HIGH bucket
    medium: float | None = None  # high < PP ≤ medium: MEDIUM; above: NORMAL
    discard: float | None = None  # links of documents with PP > discard are dropped (P2, section 4)
    # where bounds not given come from: "model" (the LM's own held-out quantiles, see
    # focuscrawl.relevance.ngram_lm) or "paper" (P2's 10^3, 10^4, 10^5)
    bounds: str = "model"

    def __post_init__(self) -> None:
        if self.bounds not in ("model", "paper"):
            raise ValueError(f"bounds must be 'model' or 'paper', not {self.bounds!r}")
        for name in ("high", "medium", "discard"):
            value = getattr(self, name)
            if value is not None and not (value >= 1.0 and value < math.inf):
                raise ValueError(f"{name} = {value} must be a perplexity >= 1")
        if self.high is not None and self.medium is not None and self.high > self.medium:
            raise ValueError(f"high = {self.high:g} must be <= medium = {self.medium:g}")


def resolve_bounds(p: PerplexityParams, model: PerplexityScorer | None) -> PerplexityParams:
    """The bounds in force: those given, the rest from the model's held-out quantiles
    (``bucket_perplexities``, ``discard_perplexity``) or, with ``bounds = "paper"`` or a
    model not calibrated on held-out texts, P2's numbers.

    >>> resolve_bounds(PerplexityParams(bounds="paper"), None)
    PerplexityParams(high=1000.0, medium=10000.0, discard=100000.0, bounds='paper')
    """
    own: dict[str, float] = dict(PAPER_BOUNDS)
    if p.bounds == "model" and model is not None and model.calibrated:
        high, medium = model.bucket_perplexities
        own = {"high": float(high), "medium": float(medium), "discard": float(model.discard_perplexity)}
    values = {k: own[k] if getattr(p, k) is None else float(getattr(p, k)) for k in own}
    if values["high"] > values["medium"]:
        raise ConfigError(f"strategy 'perplexity': high {values['high']:g} > medium {values['medium']:g}")
    return PerplexityParams(**values, bounds=p.bounds)


def bucket(pp: float, high: float, medium: float) -> int:
    """The tier of a URL whose best parent has perplexity ``pp``.

    >>> [bucket(pp, 10.0, 100.0) for pp in (2.0, 10.0, 10.5, 100.0, 1e4)]
    [2, 2, 1, 1, 0]
    """
    if pp <= high:
        return HIGH
    return MEDIUM if pp <= medium else NORMAL


@dataclass(frozen=True)
class PerplexityState(StrategyState):
    """The seeds until they are tiered (then none: the state stays small), and the
    documents per bucket (and discarded, and failed)."""

    seeds: list[str] = field(default_factory=list)
    seeds_tiered: bool = False
    pages: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"seeds": self.seeds, "seeds_tiered": self.seeds_tiered, "pages": self.pages}

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Self:
        return cls([str(u) for u in raw.get("seeds", [])], bool(raw.get("seeds_tiered", False)),
                   {str(k): int(v) for k, v in raw.get("pages", {}).items()})  # fmt: skip


@register_strategy("perplexity")
class PerplexityStrategy(Strategy[PerplexityParams]):
    """P2: priority 1/PP of the parent document, HIGH/MEDIUM/NORMAL tiers, discard bound."""

    name: ClassVar[str] = "perplexity"
    merge: ClassVar[Merge] = Merge.MAX
    needs_model: ClassVar[bool] = True
    columns: ClassVar[tuple[str, ...]] = (PARENT_PP,)

    def __init__(self, model: RelevanceModel | None = None, **params: Any) -> None:
        super().__init__(model, **params)
        if model is not None and not isinstance(model, PerplexityScorer):
            raise ConfigError(f"strategy 'perplexity' needs the perplexity model, not {model.name!r}")
        self.lm: PerplexityScorer | None = model if isinstance(model, PerplexityScorer) else None
        self._invertible = self.lm is not None and _score_is_invertible(self.lm)
        self.p = resolve_bounds(self.p, self.lm)
        self.seeds: list[str] = []
        self.seeds_tiered = False
        self.pages: Counter[str] = Counter()  # documents per bucket, and discarded ones

    # ---------------------------------------------------------------- the PP
    def perplexity(self, page: Page, relevance: float | None) -> float:
        """PP of a fetched document: read back from the model's score when exact, else recomputed."""
        assert self.lm is not None
        if relevance is not None and self._invertible and 0.0 < relevance < 1.0:
            return math.exp((1.0 - relevance) * math.log(self.lm.reference_perplexity))
        if relevance is not None and self._invertible and relevance >= 1.0:
            return 1.0
        try:
            return float(self.lm.perplexity(page))
        except Exception:  # a model failing on one odd page: its links are dropped, counted
            self.pages["errors"] += 1
            return math.inf

    # ---------------------------------------------------------------- hooks
    def seed_scores(self, seeds: Sequence[str]) -> list[ScoreUpdate]:
        self.seeds = list(seeds)
        return super().seed_scores(seeds)

    def on_fetch_list(self, urls: Sequence[QueuedURL]) -> Decision:
        if self.seeds_tiered or not self.seeds:
            return Decision()
        self.seeds_tiered = True  # seeds have no parent PP: they go before every bucket
        seeds, self.seeds = self.seeds, []  # not needed any more: keep the saved state small
        return Decision(tiers=[(url, SEED) for url in seeds], reason="seeds before the buckets")

    @property
    def bounds(self) -> tuple[float, float, float]:
        """(high, medium, discard) in force: :func:`resolve_bounds` gave every one."""
        high, medium, discard = self.p.high, self.p.medium, self.p.discard
        assert high is not None
        assert medium is not None
        assert discard is not None
        return high, medium, discard

    def on_page(self, page: Page, relevance: float | None, queued: QueuedURL) -> Decision:
        pp = self.perplexity(page, relevance)
        high, medium, discard = self.bounds
        if pp > discard:
            self.pages["discarded"] += 1
            return Decision(reason=f"PP {pp:.6g} > discard {discard:g}: {len(page.links)} links dropped")
        tier = bucket(pp, high, medium)
        self.pages[BUCKETS[tier]] += 1
        score = 1.0 / pp
        reason = f"parent PP {pp:.6g}: {BUCKETS[tier]}"
        links = [LinkScore(link, score, tier=tier, reason=reason) for link in page.links]
        # the parent_pp column keeps the best (lowest) parent PP: a SET where it improves
        updates = []
        for link in page.links:
            stored = self.view.value(link.url, PARENT_PP)
            if stored is None or stored <= 0.0 or pp < stored:
                updates.append(ScoreUpdate(link.url, pp, Merge.SET, column=PARENT_PP, reason="best parent PP"))
        return Decision(links=links, updates=updates)

    def on_params_changed(self) -> Decision:
        """New bounds: every queued URL whose best parent PP is now in another bucket changes tier."""
        high, medium, _ = self.bounds
        tiers: list[tuple[str, int]] = []
        for row in self.view.urls(URLState.QUEUED):
            pp = self.view.value(row.url, PARENT_PP)
            if pp is None or pp <= 0.0 or row.tier == SEED:
                continue
            tier = bucket(pp, high, medium)
            if tier != row.tier:
                tiers.append((row.url, tier))
        moved = Counter(BUCKETS[t] for _, t in tiers)
        text = ", ".join(f"{n} to {b}" for b, n in sorted(moved.items())) or "no URL moved"
        return Decision(tiers=tiers, reason=f"bounds high {high:g}, medium {medium:g}: {text}")

    def counters(self) -> dict[str, int]:
        """Documents per bucket so far (``pp_HIGH``, ``pp_MEDIUM``, ``pp_NORMAL``, ``pp_discarded``,
        ``pp_errors``: PP not computable, links dropped)."""
        return {f"pp_{k}": v for k, v in sorted(self.pages.items())}

    def state_dict(self) -> dict[str, Any]:
        return PerplexityState(self.seeds, self.seeds_tiered, dict(self.pages)).to_json()

    def load_state(self, state: Mapping[str, Any]) -> None:
        saved = PerplexityState.from_json(state)
        self.seeds, self.seeds_tiered, self.pages = saved.seeds, saved.seeds_tiered, Counter(saved.pages)


def _score_is_invertible(model: PerplexityScorer) -> bool:
    """True if the model's score is 1 − ln PP / ln PP_max with PP_max = ``reference_perplexity``
    (checked on two values, so a model with another mapping is detected and re-asked)."""
    ref = model.reference_perplexity
    if not isinstance(ref, float | int) or not ref > 1.0:
        return False
    for pp in (2.0, math.sqrt(float(ref))):
        s = float(model.pp_to_score(pp))
        if not 0.0 < s < 1.0 or abs(math.exp((1.0 - s) * math.log(ref)) - pp) > 1e-9 * pp:
            return False
    return True
