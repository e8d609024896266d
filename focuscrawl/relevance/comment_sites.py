"""Comment keywords that transfer to unseen sites: site-grouped learning and evaluation.

The greedy learner of :func:`focuscrawl.relevance.comments.learn_keywords`,
run once on half of comments-dev, picked class names of one site or one theme
(``flexend``, ``likebutton``, ``vote``): 0.90 accuracy on the other half of the
same collection, 0.79–0.82 on other sites, below the 25 default keywords.
What transfers is a keyword that many *sites* use for comments, so here:

* pages are grouped by site (:func:`site_of`: the host without ``www.``, reduced
  to its registered domain; a ``web.archive.org`` capture counts as the site it
  captured), and a candidate must occur on comment pages of ``min_sites``
  different sites;
* the learner's two settings, ``min_gain`` (net pages a keyword must add) and
  ``min_sites``, are chosen by **site-grouped cross-validation** on the
  learning pages (:func:`tune_learner`): a setting is judged only on sites its
  keywords were not learned on;
* **evaluation**: :func:`cross_validate` learns on some sites and judges pages
  of the others only (site-grouped k-fold), the way the list will be used.

On comments-dev (818 sites, 861 pages; ``benchmarks/bench_comments.py``) the
learned lists are short (``threadeven``, ``commenttext``...) and precise
(precision 0.60–0.65, accuracy 0.865–0.870 on unseen sites, always-no
0.836–0.839) but miss half of the comment pages; the 25 default keywords find
more (recall 0.64–0.69, F1 0.57–0.62, accuracy 0.846–0.859). With ~140 comment
pages the tuning is noisy: one fold chose min_gain 2 and one-site names again.

>>> site_of("https://www.blog.example.co.uk/a"), site_of("http://web.archive.org/web/2019/https://news.test/x")
('example.co.uk', 'news.test')
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Callable, Sequence
from urllib.parse import urlsplit

from focuscrawl.exceptions import ModelError
from focuscrawl.metrics import BinaryScores
from focuscrawl.relevance.comment_keywords import (
    LabelledNames,
    LearnedKeyword,
    candidate_keywords,
    fold_name,
    greedy_cover,
)

_ARCHIVED = re.compile(r"^/web/[^/]+/(https?://.+)$")
# second-level labels under which a name is registered one level deeper (example.co.uk)
_SECOND_LEVEL = {"co", "com", "org", "net", "ac", "gov", "edu", "or", "ne", "go"}

MIN_SITES = 3  # comment pages of at least this many sites carry a candidate


def site_of(url: str) -> str:
    """The site of a URL: registered domain of its host (of the captured URL for archive.org)."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    if host == "web.archive.org":
        match = _ARCHIVED.match(parts.path)
        if match:
            return site_of(match.group(1))
    labels = [x for x in host.split(".") if x]
    if len(labels) >= 3 and labels[-2] in _SECOND_LEVEL and len(labels[-1]) == 2:
        return ".".join(labels[-3:])
    return ".".join(labels[-2:]) if labels else host


def split_sites(url: str) -> str:
    """Site-disjoint 50/50 split: ``"learn"`` or ``"report"`` by the site's hash."""
    return "learn" if hash_fold(site_of(url), 2) == 0 else "report"


class NameIndex:
    """Which labelled pages each candidate keyword matches, computed once for many learner runs.

    Candidates are the spans of the comment pages' names (as in
    :func:`~focuscrawl.relevance.comments.candidate_keywords`); the substring
    tests behind each candidate's page set are the slow part of learning, and
    cross-validation only restricts those sets to a subset of pages (bit masks).
    """

    def __init__(
        self, pages: Sequence[LabelledNames], *, use_ids: bool = False, fold_separators: bool = True
    ) -> None:
        self.pages = list(pages)
        self.use_ids, self.fold_separators = use_ids, fold_separators
        blobs = [
            "\n".join(fold_name(n, fold_separators) for n in p.names(use_ids)) for p in self.pages
        ]
        span_support: Counter[str] = Counter()
        for page in self.pages:
            if page.label:
                spans: set[str] = set()
                for name in page.names(use_ids):
                    spans |= candidate_keywords(name, fold_separators)
                span_support.update(spans)
        # a span of the names of a single comment page can never reach min_sites >= 2:
        # leaving those out (9 in 10 spans) makes the index ten times faster
        cands = {c for c, n in span_support.items() if n >= 2}
        self.pos_mask = sum(1 << i for i, p in enumerate(self.pages) if p.label)
        site_ids: dict[str, int] = {}
        self.site = [site_ids.setdefault(site_of(p.url), len(site_ids)) for p in self.pages]
        self.cover: dict[str, int] = {}
        self.pos_pages: dict[str, list[int]] = {}
        for cand in sorted(cands):
            hits = [i for i, blob in enumerate(blobs) if cand in blob]
            self.cover[cand] = sum(1 << i for i in hits)
            self.pos_pages[cand] = [i for i in hits if self.pages[i].label]
        self.all_mask = (1 << len(self.pages)) - 1

    def mask(self, keep: Callable[[LabelledNames], bool]) -> int:
        return sum(1 << i for i, p in enumerate(self.pages) if keep(p))

    def learn(
        self,
        subset: int | None = None,
        *,
        top_k: int = 25,
        min_support: int = 3,
        min_sites: int = MIN_SITES,
        min_gain: int = 3,
    ) -> list[LearnedKeyword]:
        """The greedy forward selection of ``learn_keywords`` on the pages of ``subset``
        (a bit mask; None = all), counting a candidate's support in pages and sites."""
        if top_k < 1:
            raise ModelError("comments model: --top-k must be at least 1")
        subset = self.all_mask if subset is None else subset
        pos_mask = self.pos_mask & subset
        cover: dict[str, int] = {}
        for cand, mask in self.cover.items():
            pos = [i for i in self.pos_pages[cand] if subset >> i & 1]
            if len(pos) >= min_support and len({self.site[i] for i in pos}) >= min_sites:
                cover[cand] = mask & subset
        return greedy_cover(cover, pos_mask, top_k=top_k, min_gain=min_gain)

    def evaluate(self, keywords: Sequence[str], subset: int) -> BinaryScores:
        """Counts of the OR-of-keywords rule on the pages of ``subset``."""
        hit = 0
        for k in keywords:
            hit |= self.cover.get(k, 0) if k in self.cover else self._scan(k)
        hit &= subset
        tp = (hit & self.pos_mask).bit_count()
        fp = hit.bit_count() - tp
        n_pos = (subset & self.pos_mask).bit_count()
        return BinaryScores(tp, fp, subset.bit_count() - n_pos - fp, n_pos - tp)

    def _scan(self, keyword: str) -> int:
        key = fold_name(keyword, self.fold_separators)
        names = [
            "\n".join(fold_name(n, self.fold_separators) for n in p.names(self.use_ids))
            for p in self.pages
        ]
        mask = sum(1 << i for i, blob in enumerate(names) if key in blob)
        self.cover[keyword] = mask
        self.pos_pages[keyword] = [
            i for i in range(len(self.pages)) if mask >> i & 1 and self.pages[i].label
        ]
        return mask

    def site_folds(self, subset: int, folds: int, salt: str = "") -> list[int]:
        """``folds`` site-disjoint bit masks covering ``subset`` (sites by a salted hash)."""
        parts = [0] * folds
        for i, page in enumerate(self.pages):
            if subset >> i & 1:
                parts[hash_fold(site_of(page.url) + salt, folds)] |= 1 << i
        return parts


# min_gain x min_sites tried by site-grouped cross-validation (tune_learner)
GAIN_GRID = (1, 2, 3, 5)
SITES_GRID = (2, 3, 5)


def tune_learner(
    index: NameIndex, subset: int | None = None, *, top_k: int = 25, folds: int = 5
) -> tuple[dict[str, int], BinaryScores]:
    """``min_gain`` and ``min_sites`` chosen by site-grouped cross-validation on ``subset``.

    Each setting learns on the sites of 4 folds and is judged on the 5th
    fold's sites (pooled counts); the best accuracy wins, ties: higher F1,
    then the stricter setting (larger min_sites, larger min_gain).
    """
    subset = index.all_mask if subset is None else subset
    parts = index.site_folds(subset, folds, salt="#tune")
    best: tuple[tuple[float, float, int, int], dict[str, int], BinaryScores] | None = None
    for min_gain in GAIN_GRID:
        for min_sites in SITES_GRID:
            tp = fp = tn = fn = 0
            for part in parts:
                words = [k.keyword for k in index.learn(
                    subset & ~part, top_k=top_k, min_sites=min_sites, min_gain=min_gain,
                )]  # fmt: skip
                s = index.evaluate(words, part)
                tp, fp, tn, fn = tp + s.tp, fp + s.fp, tn + s.tn, fn + s.fn
            scores = BinaryScores(tp, fp, tn, fn)
            key = (scores.accuracy, scores.f1, min_sites, min_gain)
            if best is None or key > best[0]:
                best = (key, {"min_gain": min_gain, "min_sites": min_sites}, scores)
    assert best is not None
    return best[1], best[2]


def learn_transferable(
    index: NameIndex, subset: int | None = None, *, top_k: int = 25, folds: int = 5
) -> tuple[list[LearnedKeyword], dict[str, int], BinaryScores]:
    """Tune by site-grouped CV (:func:`tune_learner`), then learn on all of ``subset``.

    Returns the keywords, the chosen settings and their cross-validated counts.
    """
    params, cv = tune_learner(index, subset, top_k=top_k, folds=folds)
    return index.learn(subset, top_k=top_k, **params), params, cv


def cross_validate(
    index: NameIndex,
    learner: Callable[[int], Sequence[str]],
    subset: int | None = None,
    folds: int = 5,
) -> BinaryScores:
    """Site-grouped k-fold: each page judged by keywords learned on other sites only.

    ``learner(train_mask) -> keywords``; pooled counts over the folds. The fold
    cut uses its own hash salt, different from :func:`tune_learner`'s inner folds.
    """
    subset = index.all_mask if subset is None else subset
    tp = fp = tn = fn = 0
    for part in index.site_folds(subset, folds, salt="#cv"):
        if not part:
            continue
        s = index.evaluate(list(learner(subset & ~part)), part)
        tp, fp, tn, fn = tp + s.tp, fp + s.fp, tn + s.tn, fn + s.fn
    return BinaryScores(tp, fp, tn, fn)


def hash_fold(key: str, folds: int) -> int:
    digest = hashlib.sha256(key.encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big") % folds
