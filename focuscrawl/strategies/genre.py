"""P3's genre-aware focused crawling: FCrawl (Algorithm 2), its queue policies, the SVM baseline.

::

    Procedure FCrawl (Algorithm 2)
    1   foreach pageURL ∈ SeedPages: InsertURL(pageURL, 1, "seed")
    2   while there are non-visited URLs in Frontier
    3       RemoveURL(CurrentURL, URLType)
    4       FetchParsePage(CurrentURL, CurrentPage, PageTerms, PageLinks)
    5-9     FinalSimilarity ← Mean(Mean(Genre, Content; GW, CW), URL; GCW, UW)
    10      if FinalSimilarity ≥ SimilarityThreshold: RelevantPages += CurrentPage
    11      if URLType = "non-seed" and FinalSimilarity ≥ ChangeThreshold:
                ChangeScores(CurrentURL, FinalSimilarity)
    12      foreach link ∈ PageLinks: InsertURL(link, 0, "non-seed")

Where each line lives here: 1 is ``seed_scores`` (the base class's score 1);
2-4 are the engine's; 5-9 are the relevance model (``cosine`` computes exactly
these steps, and any other model's score may stand in for FinalSimilarity); 10
is the engine's judgement ``score ≥ model.threshold`` (``similarity_threshold``
sets that threshold); 11-12 are :meth:`FCrawl.on_page`. The URL type is "seed"
for a URL at link depth 0. ChangeScores *sets* the scores of the siblings still
in Frontier (URLs already visited are not in Frontier), so it may lower them.

The queue policies of section 4.4, for the visited URL U with score S (its
FinalSimilarity) and change threshold 0.20 (section 4.4; Algorithm 2 writes
"≥", section 4.4 "higher than": the algorithm box is followed, for all policies):

=========  ==================  ==================  =========================
policy     children of U       siblings of U       condition
=========  ==================  ==================  =========================
``PS``     set to S            unchanged           always (traditional)
``FS-1``   inserted with 0     set to S            always
``FS-2``   inserted with 0     set to S            S ≥ 0.20 (= Algorithm 2)
``PFS-1``  set to S            set to S            always
``PFS-2``  set to S            set to S            S ≥ 0.20 (else children 0)
=========  ==================  ==================  =========================

Siblings are the other children of the current page's parent (the page U was
found on; ``siblings_of = "all-parents"`` takes every known parent). A URL met
again keeps its score (step 12 inserts only new URLs); "set to S" changes a
queued child's score as ChangeScores does (``change = "max"``: only raise it).

Section 4.1.3's limits, as defaults: at most 200 links of a page are followed
(the first ones, after the scope rules and filters), and a new link is dropped
when it would be more than 7 levels deep in its site (the number of
consecutive same-site hops from where the crawl entered the site; kept per
URL in the ``site_depth`` column, the shortest known path wins). The excluded
domains and extensions of 4.1.3 are the crawl's scope settings.

``genre-svm`` is the baseline of section 4.1.2: the same loop with an SVM-RBF
classifier's score as S, with the traditional queue (Figure 2.3: all links of a
page get the page's score, i.e. ``PS``) or FCrawl's sibling queue (``FS-2``,
where by default the siblings of a page the classifier judges relevant are
changed; give ``change_threshold`` to compare the score with it instead).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple, TypeVar

from focuscrawl.exceptions import ConfigError
from focuscrawl.strategies.base import Strategy, register_strategy
from focuscrawl.types import (
    Decision,
    Link,
    LinkScore,
    Merge,
    Page,
    QueuedURL,
    ScoreUpdate,
    URLState,
)
from focuscrawl.urls import hostname_of, registered_domain

SITE_DEPTH = "site_depth"  # consecutive same-site hops from the site's entry page


class Policy(NamedTuple):
    """One queue policy of section 4.4."""

    children: bool  # the out-links of U get S
    siblings: bool  # the other children of U's parent get S (ChangeScores)
    thresholded: bool  # only if S ≥ the change threshold


POLICIES: dict[str, Policy] = {
    "PS": Policy(children=True, siblings=False, thresholded=False),
    "FS-1": Policy(children=False, siblings=True, thresholded=False),
    "FS-2": Policy(children=False, siblings=True, thresholded=True),
    "PFS-1": Policy(children=True, siblings=True, thresholded=False),
    "PFS-2": Policy(children=True, siblings=True, thresholded=True),
}
QUEUES = {"traditional": "PS", "sibling": "FS-2"}  # section 4.1.2's two baseline queues


def _choice(name: str, value: str, allowed: Mapping[str, Any] | tuple[str, ...]) -> str:
    """``value`` as spelt in ``allowed`` (case-insensitive), or ValueError."""
    for option in allowed:
        if option.lower() == value.lower():
            return option
    raise ValueError(f"{name} = {value!r} must be one of {', '.join(allowed)}")


def _check_limits(
    max_site_depth: int, max_links: int, site: str, siblings_of: str, change: str
) -> None:
    if max_site_depth < -1:
        raise ValueError(f"max_site_depth = {max_site_depth} must be >= 0 (or -1: no limit)")
    if max_links < 0:
        raise ValueError(f"max_links = {max_links} must be >= 0 (0: all links)")
    _choice("site", site, ("host", "domain"))
    _choice("siblings_of", siblings_of, ("first-parent", "all-parents"))
    _choice("change", change, ("set", "max"))


@dataclass(frozen=True)
class GenreParams:
    policy: str = "FS-2"  # queue policy of section 4.4 (FS-2 is Algorithm 2)
    change_threshold: float = 0.20  # ChangeThreshold of step 11 (section 4.4)
    similarity_threshold: float | None = None  # step 10; None: the model's threshold
    max_site_depth: int = 7  # section 4.1.3 (-1: no limit)
    max_links: int = 200  # section 4.1.3: links followed per page (0: all)
    site: str = "host"  # what a site is for max_site_depth: "host" or registered "domain"
    siblings_of: str = "first-parent"  # or "all-parents"
    change: str = "set"  # ChangeScores sets the score (thesis); "max" only raises it

    def __post_init__(self) -> None:
        object.__setattr__(self, "policy", _choice("policy", self.policy, POLICIES))
        if not 0.0 <= self.change_threshold <= 1.0:
            raise ValueError(f"change_threshold = {self.change_threshold} must be in [0, 1]")
        if self.similarity_threshold is not None and not 0.0 <= self.similarity_threshold <= 1.0:
            raise ValueError(
                f"similarity_threshold = {self.similarity_threshold} must be in [0, 1]"
            )
        _check_limits(self.max_site_depth, self.max_links, self.site, self.siblings_of, self.change)


@dataclass(frozen=True)
class GenreSvmParams:
    queue: str = "traditional"  # "traditional" (Figure 2.3, = PS) or "sibling" (FCrawl's, = FS-2)
    change_threshold: float | None = None  # None: a page the classifier judges relevant
    max_site_depth: int = 7
    max_links: int = 200
    site: str = "host"
    siblings_of: str = "first-parent"
    change: str = "set"

    def __post_init__(self) -> None:
        object.__setattr__(self, "queue", _choice("queue", self.queue, QUEUES))
        if self.change_threshold is not None and not 0.0 <= self.change_threshold <= 1.0:
            raise ValueError(f"change_threshold = {self.change_threshold} must be in [0, 1]")
        _check_limits(self.max_site_depth, self.max_links, self.site, self.siblings_of, self.change)


#: FCrawl's parameters: the thesis's own, or the SVM baseline's (same site limits)
FP = TypeVar("FP", GenreParams, GenreSvmParams)


class FCrawl(Strategy[FP]):
    """Algorithm 2 with a queue policy of section 4.4; subclasses say which policy and condition."""

    merge: ClassVar[Merge] = Merge.KEEP  # step 12 inserts a URL once; a known URL keeps its score
    needs_model: ClassVar[bool] = True
    needs_parents: ClassVar[bool] = True  # ChangeScores: the children of U's parents
    columns: ClassVar[tuple[str, ...]] = (SITE_DEPTH,)

    @property
    def policy(self) -> str:
        raise NotImplementedError

    def may_change(self, s: float, page: Page) -> tuple[bool, str]:
        """Step 11's condition on S (for a thresholded policy) and how it reads in the log."""
        raise NotImplementedError

    # ------------------------------------------------------------------ lines 11-12
    def on_page(self, page: Page, relevance: float | None, queued: QueuedURL) -> Decision:
        s = 0.0 if relevance is None else float(relevance)  # FinalSimilarity (steps 5-9)
        policy = POLICIES[self.policy]
        ok, why = self.may_change(s, page) if policy.thresholded else (True, "no threshold")
        seed = queued.depth == 0  # URLType of step 3
        follow, updates, dropped = self._follow(page, queued)
        links = self._insert(follow, s if policy.children and ok else None, why)
        if policy.siblings and ok and not seed:
            updates += self._change_scores(queued, s, why)
        reason = f"{self.policy} S={s:.4g} ({why}{', seed' if seed else ''})"
        if dropped:
            reason += "; dropped " + ", ".join(f"{n} {what}" for what, n in dropped.items())
        return Decision(links=links, updates=updates, reason=reason)

    def _insert(
        self, follow: list[tuple[Link, URLState | None]], s: float | None, why: str
    ) -> list[LinkScore]:
        """Step 12, InsertURL(link, 0); or, for PS and PFS, the children's scores set to S."""
        change = Merge.SET if self.p.change == "set" else Merge.MAX
        out = []
        for link, state in follow:
            if s is None:
                out.append(LinkScore(link, 0.0, Merge.KEEP, reason="step 12 InsertURL(link, 0)"))
            elif state in (None, URLState.QUEUED):
                out.append(
                    LinkScore(link, s, change, reason=f"{self.policy} child: S={s:.4g} ({why})")
                )
            else:  # visited: not in Frontier any more, its score is left alone
                out.append(LinkScore(link, 0.0, Merge.KEEP, reason="child already visited"))
        return out

    def _change_scores(self, queued: QueuedURL, s: float, why: str) -> list[ScoreUpdate]:
        """ChangeScores(CurrentURL, S): the queued siblings of the current URL get S."""
        view = self.view
        if self.p.siblings_of == "first-parent":
            parents = [queued.parent] if queued.parent is not None else []
        else:
            parents = view.parents(queued.url)
        change = Merge.SET if self.p.change == "set" else Merge.MAX
        seen = {queued.url}
        out = []
        for parent in parents:
            for child, _count in view.children(parent):
                if child in seen:
                    continue
                seen.add(child)
                if view.state(child) == URLState.QUEUED:
                    reason = f"ChangeScores {self.policy}: sibling of {queued.url} via {parent}, S={s:.4g} ({why})"
                    out.append(ScoreUpdate(child, s, change, reason=reason))
        return out

    # ------------------------------------------------------------ section 4.1.3
    def _site(self, url: str) -> str:
        return hostname_of(url) if self.p.site == "host" else registered_domain(url)

    def _follow(
        self, page: Page, queued: QueuedURL
    ) -> tuple[list[tuple[Link, URLState | None]], list[ScoreUpdate], dict[str, int]]:
        """The links followed (width and site-depth limits), their states, their site depths."""
        view = self.view
        limit, width = self.p.max_site_depth, self.p.max_links
        links = page.links[:width] if width else page.links
        dropped = {f"beyond the first {width} links": len(page.links) - len(links)} if width else {}
        site = self._site(page.url)
        # after a redirect to another site the page is that site's entry page
        here = int(view.value(queued.url, SITE_DEPTH) or 0) if self._site(queued.url) == site else 0
        follow, updates, deep = [], [], 0
        for link in links:
            depth = here + 1 if self._site(link.url) == site else 0
            state = view.state(link.url)
            if state is None:
                if 0 <= limit < depth:
                    deep += 1
                    continue
                if depth:  # a new URL's column starts at 0
                    updates.append(ScoreUpdate(link.url, depth, Merge.SET, column=SITE_DEPTH,
                                               reason=f"site depth {here} + 1"))  # fmt: skip
            elif depth < (view.value(link.url, SITE_DEPTH) or 0):  # a shorter way into the site
                updates.append(ScoreUpdate(link.url, depth, Merge.SET, column=SITE_DEPTH,
                                           reason=f"shorter site path: depth {depth}"))  # fmt: skip
            follow.append((link, state))
        if deep:
            dropped[f"deeper than {limit} in their site"] = deep
        return follow, updates, {k: v for k, v in dropped.items() if v}


@register_strategy("genre")
class GenreStrategy(FCrawl[GenreParams]):
    """P3 FCrawl (Algorithm 2): seeds 1, out-links 0, ChangeScores by the queue policy."""

    name: ClassVar[str] = "genre"

    def __init__(self, model: Any = None, **params: Any) -> None:
        super().__init__(model, **params)
        self._apply_threshold()

    @property
    def policy(self) -> str:
        return str(self.p.policy)

    def may_change(self, s: float, page: Page) -> tuple[bool, str]:
        t = self.p.change_threshold
        return s >= t, f"{'≥' if s >= t else '<'} change threshold {t:g}"

    def _apply_threshold(self) -> None:
        """Step 10's SimilarityThreshold is the one the engine judges pages by: the model's."""
        if self.p.similarity_threshold is not None and self.model is not None:
            self.model.threshold = float(self.p.similarity_threshold)

    def on_params_changed(self) -> Decision:
        self._apply_threshold()
        return Decision()


@register_strategy("genre-svm")
class GenreSvmStrategy(FCrawl[GenreSvmParams]):
    """Section 4.1.2's baseline: an SVM-RBF classifier's score with the traditional or sibling queue."""

    name: ClassVar[str] = "genre-svm"

    def __init__(self, model: Any = None, **params: Any) -> None:
        super().__init__(model, **params)
        if model is not None:  # without a model the engine says a model is needed
            name, algorithm = getattr(model, "name", ""), getattr(model, "algorithm", "")
            if name != "classifier" or algorithm != "svm-rbf":
                got = f"{name} {algorithm}".strip() or type(model).__name__
                raise ConfigError(
                    f"strategy 'genre-svm' needs the classifier model with algorithm svm-rbf, not {got}"
                )

    @property
    def policy(self) -> str:
        return QUEUES[self.p.queue]

    def may_change(self, s: float, page: Page) -> tuple[bool, str]:
        t = self.p.change_threshold
        if t is None:  # "the sibling pages of a relevant URL" (4.1.2)
            relevant = bool(page.relevant)
            return relevant, "judged relevant" if relevant else "judged not relevant"
        return s >= t, f"{'≥' if s >= t else '<'} change threshold {t:g}"
