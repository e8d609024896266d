"""Genre-aware cosine relevance (P3, the thesis's chapter 3): genre, content and URL terms.

A topic is three sets of terms (words or phrases): the *genre* (e.g. "syllabus",
"required text"), the *content* (e.g. "relational algebra") and, optionally,
words expected in the *URL*. Each set is a query compared with the page by the
cosine of the vector space model (eq. 3.1-3.5); the three similarities are
combined as in steps 5-9 of FCrawl (Algorithm 2):

    genre_content = Mean(genre, content; GW, CW)
    final         = Mean(genre_content, url; GCW, UW)

with the weighted mean Mean(a, b; wa, wb) = (wa·a + wb·b) / (wa + wb) and the
thesis's weights GW = CW = 5 (syllabi; 4 and 6 for job and sale offers),
GCW = 7, UW = 3 (4.1.3). A set given no terms is left out of its mean (its
weight dropped) rather than counted as 0, so a topic without URL terms can
still reach 1. The page is relevant when ``final >= threshold``; the default
0.47 is the threshold the thesis names "the best" for its DB-2 crawl (4.4);
its other best thresholds lie between 0.37 and 0.80 (Tables 4.4, 5.1-5.5).

Parameters of the ``[model]`` table (name = "cosine"): ``genre_terms``,
``content_terms``, ``url_terms`` (lists of strings), ``gw``, ``cw``, ``gcw``,
``uw``, ``threshold``, ``idf`` (path of a table written by ``focuscrawl model
idf``; absent = idf 1 for every term, which the thesis found as good, 4.2),
``lang`` (stop words and stemmer, default "en"; any language code in any form,
``de-DE``; one without a bundled list, such as ``ja``, has no stop words), ``stem`` (default false; the thesis
does not stem) and ``topic`` (a topic TOML file whose [model] table supplies
defaults for all of these, e.g. one written by ``focuscrawl model generate-terms``).
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import unquote, urlsplit

from focuscrawl.exceptions import ModelError
from focuscrawl.relevance.base import model_params, register_model
from focuscrawl.relevance.terms import (
    IdfTable,
    count_terms,
    index_tokens,
    normalise_term,
    page_tokens,
)
from focuscrawl.relevance.text import checked_words_language, tokenize
from focuscrawl.types import Page

__all__ = ["CosineModel", "CosineParams", "cosine_similarity", "weighted_mean"]

SETS = ("genre", "content", "url")


@dataclass(frozen=True)
class CosineParams:
    """The ``[model]`` table of a cosine model (a ``topic`` file may give any of them)."""

    genre_terms: tuple[str, ...] = ()  # words or phrases of the genre ("syllabus")
    content_terms: tuple[str, ...] = ()  # of the content ("relational algebra")
    url_terms: tuple[str, ...] = ()  # words expected in the URL
    gw: float = 5.0  # weight of the genre similarity (4.1.3)
    cw: float = 5.0  # of the content similarity
    gcw: float = 7.0  # of genre and content together
    uw: float = 3.0  # of the URL similarity
    threshold: float = 0.47  # the thesis's best for DB-2 (4.4)
    idf: Path | None = None  # a table of `focuscrawl model idf` (None: idf 1 for every term)
    lang: str = "en"  # stop-word list
    stem: bool = False  # the thesis does not stem


def cosine_similarity(freqs: Sequence[int], idfs: Sequence[float], query: Sequence[float]) -> float:
    """sim(p_j, s) of eq. 3.1 for the t terms k_i of one set s.

    ``freqs`` are the raw page frequencies freq(i, j) of the set's terms,
    ``idfs`` their idf_i, ``query`` the weights w(i, s) of eq. 3.5. Both sums of
    eq. 3.1 run over i = 1..t, the terms of s only: the page vector is the page's
    weights restricted to the query's terms, and it is normalised by its own
    length over those terms. The page weight w(i, j) = f(i, j)·idf_i (eq. 3.2)
    with f(i, j) = freq(i, j) / max_l freq(l, j) (eq. 3.3); the divisor is the
    same for every term of the page, so it cancels in the cosine and is left
    out here (the thesis is unclear whether the max runs over all words of the
    page or only over the query's terms; either way the result is the same).

    >>> round(cosine_similarity([2, 1, 0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]), 4)
    0.7746
    """
    page = [f * idf for f, idf in zip(freqs, idfs, strict=True)]  # eq. 3.2, up to 1/max freq
    dot = sum(p * q for p, q in zip(page, query, strict=True))
    norm = math.sqrt(sum(p * p for p in page)) * math.sqrt(sum(q * q for q in query))
    return min(1.0, dot / norm) if norm > 0 else 0.0


def weighted_mean(values: Sequence[tuple[float | None, float]]) -> float:
    """Mean(...) of Algorithm 2 over (similarity, weight) pairs; ``None`` values are left out.

    >>> weighted_mean([(0.5, 5), (1.0, 5)]), weighted_mean([(0.8, 7), (None, 3)])
    (0.75, 0.8)
    """
    present = [(v, w) for v, w in values if v is not None and w > 0]
    total = sum(w for _, w in present)
    return sum(v * w for v, w in present) / total if total > 0 else 0.0


class _TermSet:
    """One query s of eq. 3.1: distinct normalised terms with idf_i and w(i, s)."""

    def __init__(self, raw: Sequence[str], lang: str, stem: bool, idf: IdfTable | None) -> None:
        normalised = [normalise_term(t, lang, stem=stem) for t in raw]
        self.dropped = [t for t, n in zip(raw, normalised, strict=True) if not n]
        freq = Counter(n for n in normalised if n)  # freq(i, s): a term listed twice counts 2
        self.terms = list(freq)
        self.idfs = [idf.idf(t) if idf is not None else 1.0 for t in self.terms]
        top = max(freq.values(), default=1)
        # eq. 3.5: w(i, s) = (0.5 + 0.5·freq(i, s) / max_l freq(l, s))·idf_i, = idf_i for distinct terms
        self.weights = [
            (0.5 + 0.5 * freq[t] / top) * i for t, i in zip(self.terms, self.idfs, strict=True)
        ]

    def similarity(self, tokens: Sequence[str], index: Mapping[str, list[int]]) -> float | None:
        if not self.terms:
            return None
        return cosine_similarity(count_terms(tokens, self.terms, index), self.idfs, self.weights)


def url_tokens(url: str, lang: str = "en", *, stem: bool = False) -> list[str]:
    """Words of a URL without its scheme (host, path, query), percent-decoded and normalised.

    >>> url_tokens("http://www.cs.wisc.edu/~cs564/Syllabus%20Fall.html?x=Courses")
    ['www', 'cs', 'wisc', 'edu', 'cs564', 'syllabus', 'fall', 'html', 'x', 'courses']
    """
    parts = urlsplit(url)
    text = unquote(" ".join((parts.netloc, parts.path, parts.query)))
    return tokenize(text, lang=lang, stem=stem)


@register_model("cosine")
class CosineModel:
    """The genre-aware cosine model of P3; see the module docstring for the parameters."""

    name: ClassVar[str] = "cosine"
    Params: ClassVar[type[CosineParams]] = CosineParams

    def __init__(
        self,
        genre_terms: Sequence[str] = (),
        content_terms: Sequence[str] = (),
        url_terms: Sequence[str] = (),
        *,
        gw: float = 5.0,
        cw: float = 5.0,
        gcw: float = 7.0,
        uw: float = 3.0,
        threshold: float = 0.47,
        idf: IdfTable | None = None,
        lang: str = "en",
        stem: bool = False,
    ) -> None:
        if any(w < 0 or not math.isfinite(w) for w in (gw, cw, gcw, uw)):
            raise ModelError("cosine model: the weights gw, cw, gcw, uw must be finite and >= 0")
        self.raw_terms = {
            "genre": [str(t) for t in genre_terms],
            "content": [str(t) for t in content_terms],
            "url": [str(t) for t in url_terms],
        }
        self.gw, self.cw, self.gcw, self.uw = float(gw), float(cw), float(gcw), float(uw)
        self.threshold = float(threshold)
        self.idf_table = idf
        self.lang = lang
        self.stem = bool(stem)
        self.sets = {k: _TermSet(v, lang, self.stem, idf) for k, v in self.raw_terms.items()}
        #: terms that normalise to nothing (only stop words or punctuation), skipped
        self.dropped_terms = [t for s in self.sets.values() for t in s.dropped]
        if not self.sets["genre"].terms and not self.sets["content"].terms:
            raise ModelError(
                "cosine model: give genre_terms or content_terms (none left after normalisation)"
            )

    def terms(self, which: str) -> list[str]:
        """The normalised, distinct terms of a set ("genre", "content" or "url")."""
        return list(self.sets[which].terms)

    def _genre_content(self, tokens: Sequence[str]) -> tuple[float | None, float | None, float]:
        index = index_tokens(tokens)
        genre = self.sets["genre"].similarity(tokens, index)  # Algorithm 2, step 5
        content = self.sets["content"].similarity(tokens, index)  # step 6
        return genre, content, weighted_mean([(genre, self.gw), (content, self.cw)])  # step 7

    def similarities(self, page: Page) -> dict[str, float]:
        """genre, content, url, genre_content and final similarity of a page (steps 5-9).

        A set without terms reports 0.0 and is left out of its mean.
        """
        tokens = page_tokens(page, self.lang, stem=self.stem)
        genre, content, combined = self._genre_content(tokens)
        utoks = url_tokens(page.url, self.lang, stem=self.stem)
        url = self.sets["url"].similarity(utoks, index_tokens(utoks))  # step 8
        final = weighted_mean([(combined, self.gcw), (url, self.uw)])  # step 9
        return {
            "genre": genre or 0.0,
            "content": content or 0.0,
            "url": url or 0.0,
            "genre_content": combined or 0.0,
            "final": final,
        }

    def score(self, page: Page) -> float:
        """FinalSimilarity of Algorithm 2 (step 9), in [0, 1]."""
        return self.similarities(page)["final"]

    def score_text(self, text: str) -> float:
        """Mean of the genre and content similarities (step 7) of a text alone, no URL."""
        return self._genre_content(tokenize(text, lang=self.lang, stem=self.stem))[2]

    # -- configuration and persistence ------------------------------------------------

    def config(self) -> dict[str, Any]:
        """The parameters as a [model] table (without the idf table itself)."""
        out: dict[str, Any] = {f"{k}_terms": list(v) for k, v in self.raw_terms.items()}
        out.update(gw=self.gw, cw=self.cw, gcw=self.gcw, uw=self.uw, threshold=self.threshold)
        out.update(lang=self.lang, stem=self.stem)
        return out

    @classmethod
    def from_params(cls, p: CosineParams) -> CosineModel:
        lang = checked_words_language(p.lang, "cosine model")
        return cls(
            p.genre_terms, p.content_terms, p.url_terms, gw=p.gw, cw=p.cw, gcw=p.gcw, uw=p.uw,
            threshold=p.threshold, idf=IdfTable.load(p.idf) if p.idf else None, lang=lang, stem=p.stem,
        )  # fmt: skip

    def save(self, directory: Path) -> None:
        cfg = self.config()
        if self.idf_table is not None:
            self.idf_table.save(directory / "idf.json")
            cfg["idf"] = "idf.json"
        (directory / "cosine.json").write_text(
            json.dumps(cfg, ensure_ascii=False, indent=2), "utf-8"
        )

    @classmethod
    def load(cls, directory: Path) -> CosineModel:
        try:
            cfg = json.loads((Path(directory) / "cosine.json").read_text("utf-8"))
        except (OSError, ValueError) as exc:
            raise ModelError(f"{directory}: not a saved cosine model ({exc})") from None
        return cls.from_params(model_params(cls, cfg, Path(directory)))
