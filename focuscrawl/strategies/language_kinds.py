"""The language strategy's measured kinds: a link's prior weighed with what the crawl measured.

A *kind* is a directory and the language its URLs name (``.../passwd/ #fr``: one
man-page directory holds every translation of a page). Per kind the crawl keeps
N_r, the summed target share of its pages' text (script shares, no labels), N_a,
its pages, and its hubs, the pages that linked to a new URL of another kind naming
the target. A link's score is its prior weighed as k = ``prior_pages`` pages:

    (N_r + k * prior) / (N_a + k),  at least  hub_weight * (hubs + k / 2) / (N_a + k)

A kind not measured yet, on a host whose URLs naming that language have not been
measured either, is *probed*: ``explore = "fixed"`` scores it at least ``probe``;
``explore = "thompson"`` at least one draw from the Beta posterior the prior stands
for, Beta(k * prior + 1/2, k * (1 - prior) + 1/2) (the prior as k pages over
Jeffreys' prior), seeded by ``seed`` and the kind, so a kind is probed in proportion
to how uncertain its prior is and no per-web constant is needed; the crawl is the
same one at every run.

The whole measure (counts, priors, probed hosts) is the strategy's resume state.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit

from focuscrawl.relevance.language_links import url_language_for
from focuscrawl.strategies.view import FrontierView
from focuscrawl.types import Link, Merge, ScoreUpdate, URLState
from focuscrawl.urls import host_of

EXPLORES = ("fixed", "thompson")
JEFFREYS = 0.5  # Beta(1/2, 1/2): the pseudo-counts under the prior's k pages


def directory_of(url: str) -> str:
    """The directory a URL is in: scheme, host and path up to its last slash.

    >>> directory_of("https://httpd.apache.org/docs/2.4/ja/mod/core.html?x=1")
    'https://httpd.apache.org/docs/2.4/ja/mod/'
    >>> directory_of("http://a.org")
    'http://a.org/'
    """
    parts = urlsplit(url)
    path = parts.path or "/"
    return f"{parts.scheme}://{parts.netloc}{path[: path.rfind('/') + 1]}"


@lru_cache(maxsize=65536)
def kind_of(url: str, chinese: str | None = None) -> str:
    """The URLs measured together: a directory and the language their URL names
    (:func:`url_language_for`: in a crawl that wants one Chinese script, the other's URLs
    are a kind of their own).

    >>> kind_of("http://a.org/man/passwd/passwd.5.fr.html")
    'http://a.org/man/passwd/ #fr'
    >>> kind_of("http://a.org/faq/a.zh-cn.html", "zh-Hant"), kind_of("http://a.org/faq/a.zh-tw.html", "zh-Hant")
    ('http://a.org/faq/ #zh-Hans', 'http://a.org/faq/ #zh')
    """
    return f"{directory_of(url)} #{url_language_for(url, chinese) or ''}"


def probe_key(url: str, chinese: str | None = None) -> str:
    """A host and the language a URL names: probed once each."""
    return f"{host_of(url)} #{url_language_for(url, chinese) or ''}"


class MeasuredKinds:
    """Per kind [N_r, N_a, hubs], each URL's best prior, and the probed hosts' languages."""

    def __init__(
        self, prior_pages: float, hub_weight: float, probe: float, explore: str, seed: int,
        chinese: str | None = None,
    ) -> None:
        self.counts: dict[str, list[float]] = {}  # kind -> [N_r, N_a, hubs]
        # kind -> {URL: its best prior}, to rescore a kind's queued URLs as its share grows
        self.priors: dict[str, dict[str, float]] = {}
        self.probed: set[str] = set()
        # link_classes: per kind and the prior a URL's link was given, [N_r, N_a]
        self.classes: dict[str, list[float]] = {}
        # siblings: per template (a kind's directory with its last segment any), [N_r, N_a, hubs]
        self.templates: dict[str, list[float]] = {}
        self.configure(prior_pages, hub_weight, probe, explore, seed, chinese)

    def configure(
        self, prior_pages: float, hub_weight: float, probe: float, explore: str, seed: int,
        chinese: str | None = None, link_classes: bool = False, siblings: bool = False,
    ) -> None:
        """The strategy's parameters (again, when they are changed during the crawl); the
        measures are kept."""
        self.k, self.hub_weight, self.probe = prior_pages, hub_weight, probe
        self.link_classes, self.siblings = link_classes, siblings
        self.explore, self.seed = explore, seed
        self.chinese = chinese  # the one Chinese script the crawl wants, if it names one
        self._draws: dict[str, float] = {}  # kind -> its probe draw (a function of seed, k, kind)

    def observe(self, url: str, share: float, links: Iterable[Link], targets: frozenset[str]) -> str:
        """Count a fetched page of target share ``share``; returns its kind."""
        kind = kind_of(url, self.chinese)
        self.probed.add(self._probe_key(url, kind))
        hub = int(any(url_language_for(link.url, self.chinese) in targets
                      and (other := kind_of(link.url, self.chinese)) != kind
                      and link.url not in self.priors.get(other, {})
                      for link in links))  # fmt: skip
        self._count(url, kind, share, hub)
        return kind

    def failed(self, url: str) -> str:
        """Count a URL its server said has no page (a client error) as a page of its kind
        with no text in the target language, so that a directory of dead links sinks as an
        untranslated one does; returns its kind. No probe is spent: nothing was learnt of
        its host's pages in that language."""
        kind = kind_of(url, self.chinese)
        self._count(url, kind, 0.0, 0)
        return kind

    def _count(self, url: str, kind: str, share: float, hub: int) -> None:
        counts = self.counts.setdefault(kind, [0.0, 0.0, 0.0])
        counts[0] += share
        counts[1] += 1
        counts[2] += hub
        prior = self.priors.get(kind, {}).get(url)
        if self.link_classes and prior is not None:  # a seed has no prior
            measured = self.classes.setdefault(_class_of(kind, prior), [0.0, 0.0])
            measured[0] += share
            measured[1] += 1
        template = template_of(kind)
        if self.siblings and template is not None:
            shared = self.templates.setdefault(template, [0.0, 0.0, 0.0])
            shared[0], shared[1], shared[2] = shared[0] + share, shared[1] + 1, shared[2] + hub

    def _probe_key(self, url: str, kind: str) -> str:
        """What is probed once: a host and URL language; with siblings, a kind's siblings."""
        template = template_of(kind) if self.siblings else None
        return probe_key(url, self.chinese) if template is None else template

    def draw(self, kind: str, prior: float) -> float:
        """The probe of a kind not measured: ``probe``, or its Thompson draw."""
        if self.explore == "fixed":
            return self.probe
        key = f"{kind} {prior!r}"
        if key not in self._draws:
            rng = random.Random(f"{self.seed} {key}")
            self._draws[key] = rng.betavariate(self.k * prior + JEFFREYS, self.k * (1.0 - prior) + JEFFREYS)
        return self._draws[key]

    def score(self, url: str, prior: float, why: str) -> tuple[float, Merge, str]:
        """``prior`` (the best one ``url`` was given) weighed with its kind's measure."""
        kind = kind_of(url, self.chinese)
        known = self.priors.setdefault(kind, {})
        prior = known[url] = max(prior, known.get(url, prior))
        counts = self.counts.get(kind)
        if (counts is None or counts[1] == 0) and self.siblings:
            counts = self.templates.get(template_of(kind) or "")  # a sibling directory's measure
            if counts is not None and counts[1]:
                k = self.k
                score = (counts[0] + k * prior) / (counts[1] + k)
                score = max(score, self.hub_weight * (counts[2] + k * 0.5) / (counts[1] + k))
                return score, Merge.SET, f"{why}, sibling directories' pages {counts[0] / counts[1]:.2f} ({counts[1]:g})"
        if counts is None or counts[1] == 0:
            if self._probe_key(url, kind) in self.probed:
                return prior, Merge.SET, why
            return max(prior, self.draw(kind, prior)), Merge.SET, why
        k = self.k
        score = self.weigh(url, prior)
        measured = self.classes.get(_class_of(kind, prior)) if self.link_classes else None
        if measured is not None and measured[1]:  # the kind's share, as the prior of its class's
            score = (measured[0] + k * score) / (measured[1] + k)
        score = max(score, self.hub_weight * (counts[2] + k * 0.5) / (counts[1] + k))
        return score, Merge.SET, f"{why}, such pages {counts[0] / counts[1]:.2f} in the target language ({counts[1]:g})"

    def weigh(self, url: str, prior: float) -> float:
        """(N_r + k * prior) / (N_a + k) of ``url``'s kind; ``prior`` for a kind not measured."""
        counts = self.counts.get(kind_of(url, self.chinese))
        if counts is None or counts[1] == 0:
            return prior
        return (counts[0] + self.k * prior) / (counts[1] + self.k)

    def rescore(self, kind: str, view: FrontierView) -> list[ScoreUpdate]:
        """The queued URLs of ``kind`` scored again by its measured share: when its
        page count reaches a power of two (a share changes less with every page)."""
        counts = self.counts.get(kind)
        kinds = [] if counts is None or int(counts[1]) & (int(counts[1]) - 1) else [kind]
        template = template_of(kind)
        shared = self.templates.get(template or "") if self.siblings else None
        if shared is not None and not int(shared[1]) & (int(shared[1]) - 1):  # its siblings not measured
            kinds += [other for other in self.priors if other != kind and template_of(other) == template
                      and not self.counts.get(other, [0.0, 0.0])[1]]  # fmt: skip
        updates = []
        for each in kinds:
            for url, prior in self.priors.get(each, {}).items():
                if view.state(url) is URLState.QUEUED:
                    score, merge, why = self.score(url, prior, "")
                    updates.append(ScoreUpdate(url, score, merge, reason=f"rescored{why}"))
        return updates

    @property
    def empty(self) -> bool:
        """Nothing measured, scored or probed yet (a resume state need not carry it)."""
        return not (self.counts or self.priors or self.probed)

    def to_json(self) -> dict[str, Any]:
        return {"counts": self.counts, "priors": self.priors, "probed": sorted(self.probed), "classes": self.classes,
                "templates": self.templates}  # fmt: skip

    def load(self, raw: Mapping[str, Any]) -> None:
        self.counts = {str(k): [float(v[0]), float(v[1]), float(v[2])] for k, v in raw.get("counts", {}).items()}
        self.priors = {str(k): {str(u): float(p) for u, p in v.items()} for k, v in raw.get("priors", {}).items()}
        self.probed = {str(key) for key in raw.get("probed", [])}
        self.classes = {str(k): [float(v[0]), float(v[1])] for k, v in raw.get("classes", {}).items()}
        self.templates = {str(k): [float(x) for x in v] for k, v in raw.get("templates", {}).items()}


@lru_cache(maxsize=65536)
def template_of(kind: str) -> str | None:
    """A kind's directory with its last segment any: its siblings (``/users/*/``, one
    application's help each), None for a host's root.

    >>> template_of("http://a.org/users/baobab/ #"), template_of("http://a.org/2.10/ko/ #ko"), template_of("http://a.org/ #")
    ('http://a.org/users/*/ #', 'http://a.org/2.10/*/ #ko', None)
    """
    directory, _, lang = kind.partition(" #")
    head, _, last = directory.rstrip("/").rpartition("/")
    if head.endswith("/") or not last:  # the root: http://a.org
        return None
    return f"{head}/*/ #{lang}"


def _class_of(kind: str, prior: float) -> str:
    """A kind's URLs whose links were given one prior (the link's own evidence: its
    anchor passed the rule or not, its URL names the target or not)."""
    return f"{kind} @{prior:.6g}"
