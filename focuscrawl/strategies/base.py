"""The Strategy ABC: hooks that *return scores*; the engine applies them to the frontier.

Call order, for one crawl:

1. ``attach(view, rng)`` before anything else (and again on resume): a read-only
   :class:`~focuscrawl.strategies.view.FrontierView` and the crawl's seeded
   random generator (``crawl.seed``), the only randomness a strategy may use.
2. ``seed_scores(seeds)`` once, before anything is fetched (not on resume).
3. ``on_fetch_list(urls)`` whenever a fetch list is generated (every pop of the
   scheduler; in best-N-first mode, each list of N).
4. For every fetched HTML page, in the order its result is recorded (the
   order the URLs were taken from the frontier in the ordered schedule,
   whatever order the fetches complete in; the order of arrival as-completed):
   ``on_page(page, relevance, queued)``. ``relevance`` is the model's score
   (None without a model); ``queued`` is the URL's row *now* (its current
   score, i.e. any cash it gathered while in flight, depth, tier and the round
   that fetched it in ``layer``). After a redirect ``page.url`` is where the
   content was found and ``queued.url`` the frontier's URL: updates of the page's
   own cash go to ``queued.url``. ``page.links`` holds only the links that passed
   the scope rules and the crawl's link filters, so cash split over them never
   leaks to links that would be rejected.
5. For every URL that gave no page (error, non-HTML, robots, parse error):
   ``on_failure(queued, reason)``.
6. Every ``tick_every`` results (0 = never): ``on_tick(results)``.
7. In layered mode only (``layered = True``), after the last page of a layer:
   ``on_layer_end(layer)``.
8. When parameters are changed while the crawl runs (the control channel):
   ``set_params(changes)``, whose Decision is applied at once.

Every hook returns a :class:`~focuscrawl.types.Decision`. ``merge`` says how the
scores of links already in the frontier combine with new ones (a link or update
may override it). Per-URL values a strategy needs besides the score (OPIC's cash
history, P0's per-layer cash, P2's bucket...) are frontier columns: declare them
in ``columns``, write them with ``ScoreUpdate(url, value, merge, column=...)`` and
read them with ``self.view.value(url, column)``. A strategy keeps any small
state as a :class:`StrategyState` dataclass, committed with the crawl as its JSON
form (``state_dict``) and read back on resume (``load_state``); O(N) state belongs
in columns.

Parameters are typed: a strategy is a ``Strategy[P]`` for a frozen dataclass ``P``
whose fields are its parameters (with defaults), ``self.p`` its instance (``Params``
is ``P``, set from the class's base); unknown names, wrong types and values its
``__post_init__`` refuses are a one-line :class:`ConfigError`.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Generic, Self

from typing_extensions import TypeVar

from focuscrawl.params import NoParams, base_params, build_params, params_table
from focuscrawl.registry import Registry
from focuscrawl.relevance.base import RelevanceModel
from focuscrawl.strategies.view import FrontierView
from focuscrawl.types import Decision, Merge, Page, QueuedURL, ScoreUpdate

#: a strategy's parameters (a frozen dataclass); ``Strategy`` alone is a strategy of any
P = TypeVar("P", default=Any)


class StrategyState(ABC):
    """A strategy's small state, kept across a resume: a dataclass and its JSON form.

    ``to_json`` is what the strategy's ``state_dict`` returns (committed with the
    crawl, as JSON in the crawl DB); ``from_json`` reads it back, a missing key at
    its default (a crawl saved before the key existed resumes).
    """

    @abstractmethod
    def to_json(self) -> dict[str, Any]:
        """The state as JSON values (the keys in a fixed order: the bytes committed)."""

    @classmethod
    @abstractmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Self:
        """The state ``to_json`` gave (or an older crawl's, with fewer keys)."""


class Strategy(ABC, Generic[P]):
    """Base of every crawl strategy. Subclasses set ``name`` and implement ``on_page``.

    A subclass names its parameters' dataclass as the type argument,
    ``class OpicStrategy(Strategy[OpicParams])``: ``self.p`` is an ``OpicParams``
    for mypy, and ``Params`` (what the parameters are built as) is set from it.
    """

    name: ClassVar[str] = ""
    #: how a new score for a known URL merges with its stored score
    merge: ClassVar[Merge] = Merge.MAX
    #: Nutch-style generate(topN) / fetch / update rounds instead of a continuous queue
    layered: ClassVar[bool] = False
    #: the strategy cannot work without a relevance model
    needs_model: ClassVar[bool] = False
    #: ``on_page`` reads more than the page's links (URL, count, nofollow), its title
    #: and language: its text, meta, class names, or the links' anchors and contexts.
    #: False (and no model or filter that reads them): the page is parsed for its links only.
    needs_text: ClassVar[bool] = True
    #: the strategy reads parent edges (``view.parents``, ``view.children``) or
    #: returns ``raise_siblings``; without it the crawl DB keeps only first parents
    needs_parents: ClassVar[bool] = False
    #: per-URL columns the strategy reads and writes besides the score
    columns: ClassVar[tuple[str, ...]] = ()
    #: the strategy asks for re-crawls (the engine then keeps payload digests)
    recrawls: ClassVar[bool] = False
    #: best-N-first list size when ``crawl.fetch_list_size`` is not set (0: continuous)
    default_fetch_list_size: ClassVar[int] = 0
    #: call ``on_tick`` every this many results (0: never)
    tick_every: ClassVar[int] = 0
    #: the typed parameters (a frozen dataclass): ``P``, from the class's base
    Params: ClassVar[type[Any]] = NoParams

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """``Params`` from the type argument of the class's base (``Strategy[OpicParams]``,
        or a generic subclass's, ``FCrawl[GenreParams]``)."""
        super().__init_subclass__(**kwargs)
        cls.Params = base_params(cls, Strategy) or cls.Params

    @classmethod
    def make_params(cls, values: Mapping[str, Any]) -> Any:
        """The strategy's ``Params`` from ``values``, or a one-line ConfigError naming the
        strategy: what a crawl, ``set_params``, the service and an experiment check."""
        return build_params(f"strategy {cls.name!r}", cls.Params, values)

    def __init__(self, model: RelevanceModel | None = None, **params: Any) -> None:
        self.model = model
        self.p: P = self.make_params(params)
        self._view: FrontierView | None = None
        self.rng = random.Random(0)

    @property
    def params(self) -> dict[str, Any]:
        """The parameters in force, defaults included."""
        return params_table(self.p)

    @property
    def view(self) -> FrontierView:
        if self._view is None:
            raise RuntimeError(f"strategy {self.name!r} used before attach()")
        return self._view

    def attach(self, view: FrontierView, rng: random.Random) -> None:
        """Called by the engine before any other hook (and again on resume)."""
        self._view = view
        self.rng = rng

    def seed_scores(self, seeds: Sequence[str]) -> list[ScoreUpdate]:
        """Initial scores of the seeds (default: 1.0 each)."""
        return [ScoreUpdate(url, 1.0, Merge.SET, reason="seed") for url in seeds]

    def entry_scores(self, urls: Sequence[str]) -> list[ScoreUpdate]:
        """Scores of URLs that enter the crawl with no page linking to them: the
        sitemaps a host's robots.txt names. Scored as seeds by default; a strategy
        whose scores are shares of a conserved cash (OPIC, OTIE, OPIC+COMMD) gives them
        none, since cash flows from pages and a robots.txt is none."""
        return self.seed_scores(urls)

    def on_fetch_list(self, urls: Sequence[QueuedURL]) -> Decision:
        """A fetch list was generated. ``recrawl`` URLs in the answer join it at once."""
        return Decision()

    @abstractmethod
    def on_page(self, page: Page, relevance: float | None, queued: QueuedURL) -> Decision:
        """Score the out-links of a fetched page (and any other URL it affects)."""

    def on_failure(self, queued: QueuedURL, reason: str) -> Decision:
        """A URL gave no page. Default: nothing changes."""
        return Decision()

    def on_tick(self, results: int) -> Decision:
        """Every ``tick_every`` results. Default: nothing changes."""
        return Decision()

    def on_layer_end(self, layer: int) -> Decision:
        """Layered mode: all pages of ``layer`` are in. Default: nothing changes."""
        return Decision()

    def set_params(self, changes: Mapping[str, Any]) -> Decision:
        """Change parameters while the crawl runs (validated like the initial ones)."""
        merged = {**self.params, **changes}
        self.p = self.make_params(merged)
        return self.on_params_changed()

    def on_params_changed(self) -> Decision:
        """Hook after ``set_params``: e.g. move queued URLs to their new tiers."""
        return Decision()

    def counters(self) -> Mapping[str, int]:
        """Running totals the strategy keeps (e.g. P4's pages per language), copied into
        ``run.json`` and the progress line at every commit (set, not added)."""
        return {}

    def state_dict(self) -> dict[str, Any]:
        """The JSON form of the strategy's :class:`StrategyState`, persisted with each
        commit (for resume); default: no state."""
        return {}

    def load_state(self, state: Mapping[str, Any]) -> None:
        """Restore what ``state_dict`` returned, through the strategy's
        :class:`StrategyState` (default: nothing to restore)."""

    @classmethod
    def merge_states(cls, states: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
        """Layered mode in a crawl shared by workers: the states of the workers at the
        end of a layer (``state_dict`` of each; the one that ends the layer first) as
        the one state ``on_layer_end`` is called in. Default: the first one (a state
        that is the same in every worker, or none)."""
        return dict(states[0]) if states else {}


STRATEGIES: Registry[type[Strategy]] = Registry(
    "strategy",
    "focuscrawl.strategies",
    builtin_modules=tuple(
        f"focuscrawl.strategies.{m}"
        for m in (
            "bfs", "best_first", "link_context", "opic", "otie", "comments", "genre",
            "perplexity", "language", "oracle", "learning",
        )
    ),
)
register_strategy = STRATEGIES.register


def client_error(reason: str) -> bool:
    """Whether ``on_failure``'s reason is a client error its server answered (404, 410,
    403...: no page there), not 408 or 429 (try later); no answer at all (a timeout, a
    refused connection, robots.txt) is not one: it says nothing of the URL's page."""
    code = reason.removeprefix("status-")
    if not reason.startswith("status-") or not code.isdigit():
        return False
    return 400 <= int(code) < 500 and int(code) not in (408, 429)
