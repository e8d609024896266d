"""Crawl metrics of the five papers as pure functions over a crawl's page sequence.

The inputs are plain sequences in fetch order (URLs, booleans judged by an
independent relevance source, layers, languages), so each metric is checked by
hand in its doctest. Reading a run directory is :mod:`focuscrawl.evaluation.run`.

* P0 [V]: harvest rate per layer, share of pages on external (non-seed) domains,
  harvest rate on those, distinct domains, page / domain overlap of two crawls.
* P1 [Metrics]: harvest rate and target recall as curves over pages crawled.
* P3 [4.2]: precision / recall / F1 against an answer set, F1 vs. similarity
  threshold, % relevant found vs. % visited, visited pages per relevant page.
* P2 / P4: language distribution (share of the crawled pages per language).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from focuscrawl.metrics import BinaryScores
from focuscrawl.urls import registered_domain


def value_at(curve: Sequence[float], n: int) -> float:
    """The curve's value after ``n`` pages (1-based); past its end, its last value.

    >>> value_at([0.5, 0.25, 0.75], 2), value_at([0.5, 0.25, 0.75], 10), value_at([], 3)
    (0.25, 0.75, 0.0)
    """
    if not curve or n <= 0:
        return 0.0
    return curve[min(n, len(curve)) - 1]


def target_recall_curve(crawled: Sequence[str], targets: Iterable[str]) -> list[float]:
    """Target recall after each crawled URL (P1); a URL crawled twice counts once.

    >>> target_recall_curve(["a", "x", "b", "a"], ["a", "b", "c", "d"])
    [0.25, 0.25, 0.5, 0.5]
    """
    target_set = set(targets)
    found: set[str] = set()
    out: list[float] = []
    for url in crawled:
        if url in target_set:
            found.add(url)
        out.append(len(found) / len(target_set) if target_set else 0.0)
    return out


def harvest_by_layer(layers: Sequence[int], relevant: Sequence[bool]) -> dict[int, float]:
    """Harvest rate of the pages of each layer (P0: layer = crawl round).

    >>> harvest_by_layer([0, 0, 1, 1, 1], [True, False, True, True, False])
    {0: 0.5, 1: 0.6666666666666666}
    """
    hits: Counter[int] = Counter()
    pages: Counter[int] = Counter()
    for layer, rel in zip(layers, relevant, strict=True):
        pages[layer] += 1
        hits[layer] += bool(rel)
    return {layer: hits[layer] / pages[layer] for layer in sorted(pages)}


def domains_of(urls: Iterable[str]) -> list[str]:
    """Registered domain of each URL (``www.cs.wisc.edu`` -> ``wisc.edu``).

    >>> domains_of(["http://www.cs.wisc.edu/a", "https://blog.example.co.uk/"])
    ['wisc.edu', 'example.co.uk']
    """
    return [registered_domain(u) for u in urls]


@dataclass(frozen=True)
class ExternalShare:
    """P0 [V]: pages outside the seeds' domains and how relevant they are."""

    pages: int
    external: int
    external_relevant: int

    @property
    def share(self) -> float:
        return self.external / self.pages if self.pages else 0.0

    @property
    def harvest(self) -> float:
        return self.external_relevant / self.external if self.external else 0.0


def external_share(
    urls: Sequence[str], relevant: Sequence[bool], seed_domains: Iterable[str]
) -> ExternalShare:
    """Share of pages on a domain that no seed is on, and the harvest rate among them.

    >>> e = external_share(["http://a.org/1", "http://b.org/", "http://www.c.org/"],
    ...                    [True, True, False], ["a.org"])
    >>> (e.external, e.share, e.harvest)
    (2, 0.6666666666666666, 0.5)
    """
    seeds = set(seed_domains)
    ext = ext_rel = 0
    for dom, rel in zip(domains_of(urls), relevant, strict=True):
        if dom not in seeds:
            ext += 1
            ext_rel += bool(rel)
    return ExternalShare(len(urls), ext, ext_rel)


def distinct_domains(urls: Iterable[str]) -> int:
    """Number of distinct registered domains.

    >>> distinct_domains(["http://a.org/1", "http://www.a.org/2", "http://b.net/"])
    2
    """
    return len(set(domains_of(urls)))


def overlap(a: Iterable[str], b: Iterable[str]) -> dict[str, float]:
    """Overlap of two sets (pages or domains of two crawls, P0 [V]).

    >>> overlap(["x", "y", "z"], ["y", "z", "w", "v"])
    {'a': 3, 'b': 4, 'both': 2, 'jaccard': 0.4, 'share_of_a': 0.6666666666666666, 'share_of_b': 0.5}
    """
    sa, sb = set(a), set(b)
    both = len(sa & sb)
    union = len(sa | sb)
    return {
        "a": len(sa), "b": len(sb), "both": both,
        "jaccard": both / union if union else 0.0,
        "share_of_a": both / len(sa) if sa else 0.0,
        "share_of_b": both / len(sb) if sb else 0.0,
    }  # fmt: skip


def answer_set_scores(retrieved: Iterable[str], answer: Iterable[str]) -> BinaryScores:
    """P3's precision / recall / F1: pages the crawler *marked relevant* against the answer set.

    Precision = |marked ∩ answer| / |marked|, recall = |marked ∩ answer| / |answer|
    (tn is not defined here and stays 0).

    >>> s = answer_set_scores(["a", "b", "c", "d"], ["a", "b", "e"])
    >>> (s.tp, s.fp, s.fn, s.precision, round(s.recall, 3), round(s.f1, 3))
    (2, 2, 1, 0.5, 0.667, 0.571)
    """
    marked, truth = set(retrieved), set(answer)
    tp = len(marked & truth)
    return BinaryScores(tp=tp, fp=len(marked) - tp, tn=0, fn=len(truth) - tp)


def f1_by_threshold(
    scores: Mapping[str, float], answer: Iterable[str], thresholds: Sequence[float]
) -> list[dict[str, float]]:
    """Precision, recall and F1 of "score >= t" over the crawled pages, for each threshold t
    (P3's F1 vs. similarity threshold, read from one crawl's recorded similarities).

    >>> rows = f1_by_threshold({"a": 0.9, "b": 0.5, "c": 0.2}, ["a", "c", "z"], [0.1, 0.6])
    >>> [(r["threshold"], r["precision"], round(r["recall"], 3), round(r["f1"], 3)) for r in rows]
    [(0.1, 0.6666666666666666, 0.667, 0.667), (0.6, 1.0, 0.333, 0.5)]
    """
    truth = set(answer)
    out = []
    for t in thresholds:
        s = answer_set_scores([u for u, v in scores.items() if v >= t], truth)
        out.append({"threshold": t, "precision": s.precision, "recall": s.recall, "f1": s.f1})
    return out


def found_vs_visited(
    relevant: Sequence[bool], web_pages: int, web_relevant: int
) -> list[tuple[float, float]]:
    """P3: after each visited page, (% of the web visited, % of its relevant pages found).

    >>> found_vs_visited([True, False, True, False], 8, 4)
    [(12.5, 25.0), (25.0, 25.0), (37.5, 50.0), (50.0, 50.0)]
    """
    out: list[tuple[float, float]] = []
    hits = 0
    for i, rel in enumerate(relevant, 1):
        hits += bool(rel)
        visited = 100.0 * i / web_pages if web_pages else 0.0
        found = 100.0 * hits / web_relevant if web_relevant else 0.0
        out.append((visited, found))
    return out


def visited_per_relevant(relevant: Sequence[bool]) -> float:
    """Pages visited per relevant page found (P3); inf when none was found.

    >>> visited_per_relevant([True, False, False, True]), visited_per_relevant([False])
    (2.0, inf)
    """
    hits = sum(bool(r) for r in relevant)
    return len(relevant) / hits if hits else math.inf


def language_shares(langs: Iterable[str | None]) -> dict[str, float]:
    """Share of pages per language, largest first (ties by name); unknown -> ``"?"``.

    >>> language_shares(["ja", "en", None, "ja"])
    {'ja': 0.5, '?': 0.25, 'en': 0.25}
    """
    counts = Counter(lang or "?" for lang in langs)
    total = sum(counts.values())
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return {lang: n / total for lang, n in ranked}


def share_of(langs: Sequence[str | None], wanted: Iterable[str]) -> float:
    """Share of pages whose language is one of ``wanted`` (P4's target-language share).

    >>> share_of(["zh", "yue", "en", "zh"], ["zh", "yue"])
    0.75
    """
    want = set(wanted)
    return sum(1 for lang in langs if lang in want) / len(langs) if langs else 0.0
