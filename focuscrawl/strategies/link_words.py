"""A link's own words, and its tokens crossed with how well they match the topic
(the learning strategy's ``cross_words``).

The online link model learns from tokens every link of a kind shares: the URL's
directory (``u:subject``), the host, the depth, the parent's relevance and the
words around the link. Once the crawl has fetched a few of a site's subject
indexes that were not about the topic, those tokens carry a negative correction
that takes *every* index to the floor, the topic's own one included (Wikispeedia's
``wp/subject/Science.Biology.Birds.htm`` for Birds: eq. 9 0.41, rescored to 0).
What tells the topic's own index from the others is the link's own words, its
anchor and its URL's file name, as the page model reads them. So with ``B``
buckets every token of a link is crossed with the bucket of the page model's score
of its own words: ``b = min(B - 1, floor(B · score))``, token ``t`` becoming
``t|wB``. A link whose words match the topic is then corrected by what was learnt
from links whose words matched, and an index that matches is not taken down by
the indexes that did not. With ``shared`` the plain tokens are kept beside the
crossed ones (what all links share, plus what each bucket adds).
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from urllib.parse import unquote, urlsplit

from focuscrawl.relevance.base import RelevanceModel
from focuscrawl.strategies.scoring import text_scores
from focuscrawl.types import Page

__all__ = ["OwnWordScores", "cross_tokens", "match_marks", "own_words"]

_WORD = re.compile(r"[^\W\d_]{2,}", re.UNICODE)


def own_words(url: str, anchor: str) -> str:
    """A link's own words: its anchor and the words of its URL's file name (the last
    path segment, its extension dropped).

    >>> own_words("http://s.org/wp/subject/Science.Biology.Birds.htm", "Birds")
    'Birds Science Biology Birds'
    >>> own_words("http://s.org/wp/b/Bald_Eagle.htm", "")
    'Bald Eagle'
    """
    try:
        path = urlsplit(url).path
    except ValueError:
        path = ""
    name = unquote(path.rsplit("/", 1)[-1])
    stem = name.rsplit(".", 1)[0] if "." in name else name
    return " ".join([*_WORD.findall(anchor), *_WORD.findall(stem)])


def bucket(score: float, buckets: int) -> int:
    """The bucket of a score in [0, 1] among ``buckets``: min(B - 1, floor(B · score)).

    >>> [bucket(s, 4) for s in (0.0, 0.24, 0.25, 0.9, 1.0)]
    [0, 0, 1, 3, 3]
    """
    b = math.floor(buckets * min(1.0, max(0.0, score)))
    return min(buckets - 1, b)


def match_marks(model: RelevanceModel, page: Page, buckets: int) -> list[str]:
    """Each link's mark, ``w`` and the bucket of the page model's score of its own
    words (one batch for the page's links)."""
    scores = text_scores(model, [own_words(link.url, link.anchor) for link in page.links])
    return [f"w{bucket(s, buckets)}" for s in scores]


class OwnWordScores:
    """:func:`match_marks` with each distinct own-words string scored once per crawl: a
    site links to the same pages from many pages (Wikispeedia's articles from hundreds),
    and the page model, fixed during the crawl, gives a string the same score each time.
    The page's strings not seen yet are scored in one batch; at most ``size`` strings are
    kept, the oldest dropped first (a bounded memory; a dropped one is scored again)."""

    def __init__(self, model: RelevanceModel, size: int = 100_000) -> None:
        self.model = model
        self.size = size
        self._scores: dict[str, float] = {}

    def marks(self, page: Page, buckets: int) -> list[str]:
        words = [own_words(link.url, link.anchor) for link in page.links]
        known = self._scores
        new = [w for w in dict.fromkeys(words) if w not in known]
        known.update(zip(new, text_scores(self.model, new), strict=True))
        scores = [known[w] for w in words]
        while len(known) > self.size:
            del known[next(iter(known))]
        return [f"w{bucket(s, buckets)}" for s in scores]


def cross_tokens(
    tokens: Sequence[list[str]], marks: Sequence[str] | None, shared: bool
) -> list[list[str]]:
    """Each link's tokens crossed with its mark (``t|mark``), with the plain tokens
    kept before them when ``shared``; unchanged when there are no marks.

    >>> cross_tokens([["u:subject", "d:1"]], ["w3"], False)
    [['u:subject|w3', 'd:1|w3']]
    >>> cross_tokens([["u:subject"]], ["w0"], True)
    [['u:subject', 'u:subject|w0']]
    """
    if marks is None:
        return list(tokens)
    out = []
    for ts, mark in zip(tokens, marks, strict=True):
        crossed = [f"{t}|{mark}" for t in ts]
        out.append([*ts, *crossed] if shared else crossed)
    return out
