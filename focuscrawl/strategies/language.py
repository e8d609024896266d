"""Language focus: P4's link rule (Chan & Yamana) and Tamura's policies (P4, section 2.2).

P4's experimental group keeps a link if its host's ccTLD is the target
language's (.jp for ja, .cn/.tw for zh, .kr for ko), else if its anchor text is in
the target language, and drops it otherwise; the queue is not prioritised
("We don't prioritize the URLs in queue"): breadth-first among the kept links.
The rule is the ``language`` link filter (:class:`LanguageLinkFilter`), reused
here; ``rule`` picks ``tld-or-anchor`` (P4), ``tld`` (Tamura's step 5: drop
links whose TLD is not the target's) or ``anchor``, ``off`` skips it.

On top of the rule, ``policy`` chooses how a page's language steers the queue.
Every fetched page is identified (:func:`page_language`, an n-gram/script
categoriser as P4 used), counted per language (``counters()``, P4's "web page
counter"), and per server i the strategy keeps N_r(i), the target-language
pages, and N_a(i), all pages (Tamura's steps 2-3):

* ``rule``: the link rule (P4's experimental group); discovery order among the
  links that pass it. P4 drops the others (``fallback = "off"``); by default
  (``fallback = "soft"``) they are queued after every passing link, scored by the
  language their URL names (``/ja/``, ``index.ja.html``, ``?hl=ja``:
  :mod:`focuscrawl.relevance.language_links`) or else by their page's language, so
  a crawl from a seed whose links all fail the rule does not stop at the seed.
  With ``prior_pages = k > 0`` the rule policy's score is a prior weighed with what
  the crawl measured: per *kind* (a directory and the language its URLs name,
  ``.../passwd/ #fr``) the summed target share of its pages' text N_r and its pages
  N_a give (N_r + k * prior) / (N_a + k), so an untranslated ``ja/`` directory sinks
  and a translated one rises (its queued URLs rescored at 1, 2, 4, ... pages); at
  least ``hub_weight`` x (hubs + k/2) / (N_a + k), hubs its pages that linked to a
  new URL of another kind naming the target (English man pages linking to their
  translations); a kind not measured yet takes at least ``probe`` until one page
  of its host and URL language is measured (``explore = "thompson"``: a draw from the
  prior's Beta posterior instead). By default k = 2, ``hub_weight`` 1 and the Thompson
  probe (D2, chosen by a rule fixed before the third web that judged it, issue 38);
  ``prior_pages = 0`` is the prior alone, the default before.
* ``hard``: links of a page not in the target language are dropped (hard focus).
* ``soft``: links of target-language pages score 1, the others 0, so the first
  are all fetched before the second (soft focus; a URL keeps its best score).
* ``server``: a URL scores its server's class: 1 if N_r/N_a ≥ ``min_share``, 0
  if below, ``unknown`` for a server not visited yet (``unknown`` = 0.5 is the
  aggressive variant, new servers before known foreign ones; 0 the conservative
  one). When a server's class changes, all its queued URLs are rescored at once
  (``Decision.host_updates``).
* ``directory``: the same per directory (``https://host/docs/2.4/ja/``); a URL
  in a directory not visited yet takes the class of its nearest visited
  ancestor directory. When a directory's class changes, its queued URLs are
  rescored (one pass over the queue per change; classes change rarely).

Two deliberate differences from Tamura's policies as P4 describes them: the
server and directory policies *lower* the URLs of a foreign server or directory
(score 0, fetched after everything else) instead of dropping them, so a crawl with
budget left still reaches them (``hard`` is the policy that drops); and Tamura's
own TLD filter (his step 5, ``rule = "tld"``) is not part of ``soft``/``hard``: give
``rule`` to add it (on a web whose hosts all have generic TLDs it keeps nothing or,
as the ``tld-or-anchor`` rule, falls back to the anchors).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self
from urllib.parse import urlsplit

from focuscrawl.relevance.base import RelevanceModel
from focuscrawl.relevance.language import BACKENDS, checked_language, normalise_lang, page_language
from focuscrawl.relevance.language_links import url_language_for
from focuscrawl.relevance.language_share import target_text_share
from focuscrawl.relevance.scripts import other_chinese_script, wanted_chinese_script
from focuscrawl.strategies.base import Strategy, StrategyState, client_error, register_strategy
from focuscrawl.strategies.filters import LANGUAGE_RULES, LanguageLinkFilter, Verdict
from focuscrawl.strategies.language_kinds import EXPLORES, MeasuredKinds, directory_of
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
from focuscrawl.urls import host_of

POLICIES = ("rule", "hard", "soft", "server", "directory")
RULES = (*LANGUAGE_RULES, "off")
FALLBACKS = ("soft", "off")
# the scores of the rule policy: links that pass the rule first (in discovery order),
# then the soft fallback's, by the language their URL names and the page's own
PASSED_URL_TARGET, PASSED, PASSED_URL_OTHER = 1.0, 0.9, 0.1
URL_TARGET, TARGET_PAGE, OTHER_PAGE, URL_OTHER = 0.75, 0.5, 0.25, 0.0


@dataclass(frozen=True)
class LanguageParams:
    target: tuple[str, ...] = ()  # language codes, e.g. ["ja"]
    policy: str = "rule"  # rule, hard, soft, server, directory
    rule: str = "tld-or-anchor"  # the link rule: tld-or-anchor (P4), tld (Tamura), anchor, any (+ URL tag), off
    fallback: str = "soft"  # rule policy: links failing the rule queued after the rest (off: dropped, P4)
    min_share: float = 0.5  # server/directory: N_r/N_a at or above it is a target server
    unknown: float = 0.5  # server/directory: the score of a server or directory not visited yet
    backend: str = "cld2"  # page language identification (cld2 or py3langid)
    # rule policy: a link's score, a prior, is weighed with its directory's measured target
    # share as this many pages' worth (0: the prior alone). The defaults (2, 1, thompson:
    # D2) were picked by the rule pre-registered in experiments/docweb_languages.py on three
    # webs (issue 38); before, 0
    prior_pages: float = 2.0
    # rule policy with prior_pages: a link's score is at least this times the share of
    # its kind's pages that linked to a URL of another kind naming the target (a hub)
    hub_weight: float = 1.0
    probe: float = 0.0  # rule policy with prior_pages: the least score of a kind not measured yet
    # how a kind not measured yet is probed: "fixed" (at least probe) or "thompson" (at least a
    # draw from the Beta posterior its prior stands for, seeded by seed: no per-web constant)
    explore: str = "thompson"
    seed: int = 0
    # rule policy with prior_pages: each kind measured apart per prior its links were given
    # (the link's own evidence), its class's share weighed with the kind's as k pages
    link_classes: bool = False
    # rule policy with prior_pages: a kind not measured takes its sibling directories' measure
    # (the same path with another last segment) before any probe
    siblings: bool = False

    def __post_init__(self) -> None:
        if not self.target:
            raise ValueError("target must name at least one language, e.g. target = ['ja']")
        for code in self.target:
            checked_language(code)
        if self.policy not in POLICIES:
            raise ValueError(f"policy must be one of {', '.join(POLICIES)}, not {self.policy!r}")
        if self.rule not in RULES:
            raise ValueError(f"rule must be one of {', '.join(RULES)}, not {self.rule!r}")
        if self.fallback not in FALLBACKS:
            raise ValueError(f"fallback must be one of {', '.join(FALLBACKS)}, not {self.fallback!r}")
        if not 0.0 < self.min_share <= 1.0:
            raise ValueError(f"min_share = {self.min_share} must be in (0, 1]")
        if not 0.0 <= self.unknown <= 1.0:
            raise ValueError(f"unknown = {self.unknown} must be in [0, 1]")
        if self.prior_pages < 0.0:
            raise ValueError(f"prior_pages = {self.prior_pages} must be >= 0")
        if not (0.0 <= self.hub_weight <= 1.0 and 0.0 <= self.probe <= 1.0):
            raise ValueError(f"hub_weight = {self.hub_weight} and probe = {self.probe} must be in [0, 1]")
        if self.explore not in EXPLORES:
            raise ValueError(f"explore must be one of {', '.join(EXPLORES)}, not {self.explore!r}")
        if self.backend not in BACKENDS:
            raise ValueError(f"backend must be one of {', '.join(BACKENDS)}, not {self.backend!r}")


def ancestors(directory: str) -> list[str]:
    """The directory and its ancestors, nearest first.

    >>> ancestors("http://a.org/x/y/")
    ['http://a.org/x/y/', 'http://a.org/x/', 'http://a.org/']
    """
    parts = urlsplit(directory)
    root = f"{parts.scheme}://{parts.netloc}/"
    out = [directory]
    path = parts.path.rstrip("/")
    while path:
        path = path[: path.rfind("/")]
        out.append(root + path.lstrip("/") + ("/" if path else ""))
    return out


@dataclass(frozen=True)
class LanguageState(StrategyState):
    """Pages per detected language, and [N_r, N_a] per server or directory (Tamura's
    steps 2-3)."""

    langs: dict[str, int] = field(default_factory=dict)
    places: dict[str, list[int]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"langs": self.langs, "places": self.places}

    @classmethod
    def from_json(cls, raw: Mapping[str, Any]) -> Self:
        return cls({str(k): int(v) for k, v in raw.get("langs", {}).items()},
                   {str(k): [int(v[0]), int(v[1])] for k, v in raw.get("places", {}).items()})  # fmt: skip


@register_strategy("language")
class LanguageStrategy(Strategy[LanguageParams]):
    """P4's link rule plus Tamura's hard / soft / server / directory policies."""

    name: ClassVar[str] = "language"
    merge: ClassVar[Merge] = Merge.KEEP

    def __init__(self, model: RelevanceModel | None = None, **params: Any) -> None:
        super().__init__(model, **params)
        # rule policy with prior_pages: per kind (directory + URL language) what was measured
        self.kinds = MeasuredKinds(self.p.prior_pages, self.p.hub_weight, self.p.probe, self.p.explore, self.p.seed)
        self._build()
        self.langs: Counter[str] = Counter()  # pages per detected language
        # per server (host) or directory: [N_r, N_a] (Tamura's steps 2-3)
        self.places: dict[str, list[int]] = {}

    def _build(self) -> None:
        p = self.p
        self.targets = frozenset(normalise_lang(t) for t in p.target)
        # target zh-Hant or zh-TW (zh-Hans, zh-CN) alone: the other script's pages and URLs are not
        self.chinese = wanted_chinese_script(p.target)
        self._rule: LanguageLinkFilter | None = None
        if p.rule != "off":
            self._rule = LanguageLinkFilter(target=list(p.target), rule=p.rule)
        self.kinds.configure(p.prior_pages, p.hub_weight, p.probe, p.explore, p.seed, self.chinese, p.link_classes, p.siblings)

    def on_params_changed(self) -> Decision:
        self._build()
        return Decision()

    # ------------------------------------------------------------ the places
    def _place(self, url: str) -> str:
        return host_of(url) if self.p.policy == "server" else directory_of(url)

    def _class(self, place: str) -> float | None:
        """1.0 for a target server/directory, 0.0 for another, None if not visited."""
        counts = self.places.get(place)
        if counts is None or counts[1] == 0:
            return None
        return 1.0 if counts[0] / counts[1] >= self.p.min_share else 0.0

    def place_score(self, url: str) -> float:
        """The score of ``url`` under the server or directory policy."""
        if self.p.policy == "server":
            known = self._class(host_of(url))
            return float(self.p.unknown) if known is None else known
        for directory in ancestors(directory_of(url)):
            known = self._class(directory)
            if known is not None:
                return known
        return float(self.p.unknown)

    # ------------------------------------------------------------------ hooks
    def on_page(self, page: Page, relevance: float | None, queued: QueuedURL) -> Decision:
        lang, _ = page_language(page, self.p.backend)
        text = f"{page.title}\n{page.text}"
        if lang == "zh" and other_chinese_script(text, self.chinese):
            lang = "zh-Hans" if self.chinese == "zh-Hant" else "zh-Hant"  # counted apart, no target
        self.langs[lang] += 1
        is_target = lang in self.targets
        links: list[Link] = page.links
        if self._rule is not None:
            links = self._rule.keep(page, links, Verdict(relevance))
        dropped = len(page.links) - len(links)
        note = f"page {lang}; {dropped} links failed the {self.p.rule} rule" if dropped else f"page {lang}"
        policy = self.p.policy
        if policy == "rule":
            if self.p.prior_pages <= 0:
                return self._by_rule(page, links, is_target, note)
            share = target_text_share(text, self.targets, self.p.backend, self.chinese)
            kind = self.kinds.observe(page.url, share, page.links, self.targets)
            decision = self._by_rule(page, links, is_target, note)
            decision.updates = self.kinds.rescore(kind, self.view)
            return decision
        if policy == "hard":
            if not is_target:
                return Decision(reason=f"hard focus: {note}, its {len(links)} other links dropped")
            return Decision(links=[LinkScore(link, 0.0, reason=f"{policy}: {note}") for link in links])
        if policy == "soft":
            score = 1.0 if is_target else 0.0
            reason = f"soft: {note}, {'high' if is_target else 'low'} priority"
            return Decision(links=[LinkScore(link, score, Merge.MAX, reason=reason) for link in links])
        return self._by_place(page, queued, is_target, links, note)

    def on_failure(self, queued: QueuedURL, reason: str) -> Decision:
        """Under the measured kinds, a URL its server answered with a client error (404,
        410, 403: no page there) counts as a page of its kind with no text in the target
        language (:meth:`MeasuredKinds.failed`): a manual's links to translations never
        made (``.ja.html`` pages that are not there) sink as an untranslated directory
        does, where before a failure was never measured and the kind kept its prior to the
        end. No answer (a timeout, a refused connection) and 408 / 429 (try later) say
        nothing of the kind and are not counted."""
        if self.p.policy != "rule" or self.p.prior_pages <= 0 or not client_error(reason):
            return Decision()
        kind = self.kinds.failed(queued.url)
        return Decision(updates=self.kinds.rescore(kind, self.view), reason=f"{reason}: a page of {kind} not in the target language")

    def _by_rule(self, page: Page, kept: list[Link], is_target: bool, note: str) -> Decision:
        """P4's rule: the links that pass it first; with ``fallback = "soft"`` the others
        after them (Tamura's soft focus), so that a crawl whose seed links fail the rule
        (an English portal, no ccTLD) goes on instead of stopping. A fallback link scores
        by the language its URL names (:func:`url_language_for`: ``/ja/``, ``index.ja.html``,
        ``?hl=ja``), else by its page's language."""
        scored = []
        for link in kept:
            named = url_language_for(link.url, self.chinese)
            if named is None:
                score, why = PASSED, ""
            else:
                score = PASSED_URL_TARGET if named in self.targets else PASSED_URL_OTHER
                why = f", URL names {named}"
            score, merge, why = self._measured(link.url, score, why)
            scored.append(LinkScore(link, score, merge, reason=f"rule: {note}{why}"))
        if self.p.fallback == "off" or len(kept) == len(page.links):
            return Decision(links=scored)
        passed = {link.url for link in kept}
        for link in page.links:
            if link.url in passed:
                continue
            named = url_language_for(link.url, self.chinese)
            if named is not None:
                score = URL_TARGET if named in self.targets else URL_OTHER
                why = f"URL names {named}"
            else:
                score = TARGET_PAGE if is_target else OTHER_PAGE
                why = f"on a {'target-language' if is_target else 'foreign'} page"
            score, merge, why = self._measured(link.url, score, why)
            scored.append(LinkScore(link, score, merge, reason=f"fallback: failed the {self.p.rule} rule, {why}"))
        return Decision(links=scored)

    def _measured(self, url: str, prior: float, why: str) -> tuple[float, Merge, str]:
        """``prior`` weighed with the measured target share of its kind
        (:class:`MeasuredKinds`); the prior alone, kept at its best, with k = 0."""
        if self.p.prior_pages <= 0:
            return prior, Merge.MAX, why
        return self.kinds.score(url, prior, why)

    def _by_place(
        self, page: Page, queued: QueuedURL, is_target: bool, links: list[Link], note: str
    ) -> Decision:
        place = self._place(page.url)  # after a redirect: where the content was found
        before = self._class(place)
        counts = self.places.setdefault(place, [0, 0])
        counts[0] += int(is_target)
        counts[1] += 1
        after = self._class(place)
        decision = Decision(reason=f"{self.p.policy} {place}: N_r {counts[0]}, N_a {counts[1]}; {note}")
        if after != before and after is not None:
            if self.p.policy == "server":
                decision.host_updates.append((place, after, Merge.SET))
            else:
                decision.updates = self._rescore_directory(place)
        decision.links = [
            LinkScore(link, s, Merge.SET, reason=f"{self.p.policy} class {s:g}")
            for link in links
            for s in (self.place_score(link.url),)
        ]
        return decision

    def _rescore_directory(self, directory: str) -> list[ScoreUpdate]:
        """Queued URLs in ``directory`` (or below) whose score its new class changes."""
        updates = []
        for row in self.view.urls(URLState.QUEUED):
            if row.depth == 0 or not row.url.startswith(directory):
                continue  # seeds keep their score
            score = self.place_score(row.url)
            if score != row.score:
                updates.append(ScoreUpdate(row.url, score, Merge.SET, reason=f"directory {directory} class {score:g}"))
        return updates

    # ------------------------------------------------------------- reporting
    def counters(self) -> dict[str, int]:
        """Pages per detected language (``pages_lang_ja`` ...) and in a target language."""
        out = {f"pages_lang_{lang}": n for lang, n in sorted(self.langs.items())}
        out["pages_lang_target"] = sum(n for lang, n in self.langs.items() if lang in self.targets)
        return out

    def state_dict(self) -> dict[str, Any]:
        state = LanguageState(dict(self.langs), self.places).to_json()
        if self.p.prior_pages > 0 and not self.kinds.empty:  # (measured under the rule policy only)
            state["kinds"] = self.kinds.to_json()
        return state

    def load_state(self, state: Mapping[str, Any]) -> None:
        saved = LanguageState.from_json(state)
        self.langs = Counter(saved.langs)
        self.places = saved.places
        self.kinds.load(state.get("kinds", {}))
