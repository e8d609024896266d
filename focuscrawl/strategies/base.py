"""The Strategy ABC: hooks that *return scores*; the engine applies them to the frontier.

Call order, for one crawl:

1. ``seed_scores(seeds)`` once, before anything is fetched (not on resume).
2. For every fetched HTML page, in completion order: ``on_page(page, relevance, queued)``.
   ``relevance`` is the model's score (None when the crawl has no model);
   ``queued`` is the frontier row the URL was taken with (its score, depth, layer).
3. For every URL that gave no page (error, non-HTML, robots): ``on_failure(queued, reason)``.
4. In layered mode only (``layered = True``), after the last page of a layer:
   ``on_layer_end(layer)``.

Every hook returns a :class:`~focuscrawl.types.Decision`. ``merge`` says how the
scores of links already in the frontier combine with new ones. A strategy keeps
whatever state it needs and returns it from ``state_dict`` so that a resumed crawl
gets it back through ``load_state``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from focuscrawl.registry import Registry
from focuscrawl.relevance.base import RelevanceModel
from focuscrawl.types import Decision, Merge, Page, QueuedURL, ScoreUpdate


class Strategy(ABC):
    """Base of every crawl strategy. Subclasses set ``name`` and implement ``on_page``."""

    name: ClassVar[str] = ""
    #: how a new score for a queued URL merges with its stored score
    merge: ClassVar[Merge] = Merge.MAX
    #: Nutch-style generate(topN) / fetch / update rounds instead of a continuous queue
    layered: ClassVar[bool] = False
    #: the strategy cannot work without a relevance model
    needs_model: ClassVar[bool] = False

    def __init__(self, model: RelevanceModel | None = None, **params: Any) -> None:
        self.model = model
        self.params = dict(params)

    def seed_scores(self, seeds: Sequence[str]) -> list[ScoreUpdate]:
        """Initial scores of the seeds (default: 1.0 each)."""
        return [ScoreUpdate(url, 1.0, Merge.SET) for url in seeds]

    @abstractmethod
    def on_page(self, page: Page, relevance: float | None, queued: QueuedURL) -> Decision:
        """Score the out-links of a fetched page (and any other URL it affects)."""

    def on_failure(self, queued: QueuedURL, reason: str) -> Decision:
        """A URL gave no page. Default: nothing changes."""
        return Decision()

    def on_layer_end(self, layer: int) -> Decision:
        """Layered mode: all pages of ``layer`` are in. Default: nothing changes."""
        return Decision()

    def state_dict(self) -> dict[str, Any]:
        """JSON-serialisable state to persist with each commit (for resume)."""
        return {}

    def load_state(self, state: Mapping[str, Any]) -> None:  # noqa: B027 - optional hook
        """Restore what ``state_dict`` returned (default: nothing to restore)."""


STRATEGIES: Registry[type[Strategy]] = Registry(
    "strategy",
    "focuscrawl.strategies",
    builtin_modules=("focuscrawl.strategies.bfs", "focuscrawl.strategies.best_first"),
)
register_strategy = STRATEGIES.register
