"""Language identification for language-focused crawling (P2 section 5.1, P4).

Three sources of evidence, from the cheapest:

* the host's country-code TLD (P4 queues every ``.jp`` URL of a Japanese crawl):
  :data:`~focuscrawl.relevance.language_links.TLD_LANGUAGES`,
  :func:`~focuscrawl.relevance.language_links.tld_language`;
* the anchor text of a link (P4: "if the language of the anchor text is Japanese,
  we also queue these URLs"): :func:`anchor_language`. Anchors are a few
  characters long, too short for n-gram statistics, so the Unicode script decides
  first: Hangul -> ko, any Hiragana/Katakana -> ja. Han characters alone are
  shared by Chinese and Japanese (設定 is both); they are read as ``zh`` unless
  the caller's context (the page's language or the host's TLD) says ``ja``;
  Latin, Cyrillic and the rest go to py3langid, restricted to a candidate set
  when one is given;
* the page text: :func:`page_language` with one of two backends, ``"cld2"``
  (pycld2, the default: as accurate as py3langid on the real translations of
  multilingual-dev and about eight times faster, see
  ``benchmarks/bench_language.py``) or ``"py3langid"``.

Codes are normalised to the primary ISO 639-1 subtag with the Chinese variants
(zh-cn, zh-tw, zh-hant, yue) folded into ``zh``, ``pt-br`` into ``pt``. A target
naming one Chinese script (``zh-Hant`` or a region written in it, ``zh-TW``; ``zh-Hans``,
``zh-CN``) keeps it: text whose one-script characters are the other script's
(:func:`~focuscrawl.relevance.scripts.chinese_script`) is not in the target language.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, ClassVar

import pycld2

from focuscrawl.exceptions import ModelError
from focuscrawl.relevance.base import model_params, register_model
from focuscrawl.relevance.language_id import (
    BACKENDS,
    DEFAULT_BACKEND,
    UNKNOWN,
    cld2_languages,
    language_distribution,
    normalise_lang,
    py3langid_codes,
    py3langid_languages,
)
from focuscrawl.relevance.language_links import (
    TLD_LANGUAGES,
    hreflang_language,
    named_language,
    tld_language,
)
from focuscrawl.relevance.language_share import mostly_han, target_text_share
from focuscrawl.relevance.scripts import (
    other_chinese_script,
    script_counts,
    script_of,
    tag_chinese_script,
    wanted_chinese_script,
)
from focuscrawl.types import Page

__all__ = [
    "BACKENDS",
    "LanguageModel",
    "anchor_language",
    "checked_language",
    "cld2_languages",
    "language_distribution",
    "normalise_lang",
    "page_language",
    "py3langid_languages",
    "script_counts",
    "script_of",
    "text_language",
]

DECISIONS = ("share", "top")
LINK_TEXTS = ("context", "anchor")
MIN_SHARE = 0.25  # default threshold of the share rule: a quarter of the page's text
@lru_cache(maxsize=2)
def _known_languages(with_py3langid: bool) -> dict[str, str]:
    """The language codes the identification backends can answer, with English names
    (cld2's, at hand; py3langid's model takes half a second to load, so only when asked)."""
    names: dict[str, str] = {}
    for name, code in pycld2.LANGUAGES:
        lang = normalise_lang(code)
        if lang not in NO_LANGUAGE and not lang.startswith("xx") and len(lang) <= 3:
            names.setdefault(lang, name.title().replace("_", " "))
    if with_py3langid:
        for code in py3langid_codes():
            if normalise_lang(code) not in NO_LANGUAGE:
                names.setdefault(normalise_lang(code), normalise_lang(code))
    return names


# ISO 639-2's special codes (BCP 47 takes them): each names no one language to crawl for
NO_LANGUAGE = {"und": "undetermined", "zxx": "no linguistic content", "mul": "multiple languages",
               "mis": "languages without a code"}  # fmt: skip


def checked_language(code: str) -> str:
    """``code`` normalised (:func:`normalise_lang`), or a one-line ``ValueError`` naming
    the nearest codes when no backend knows it: a country code (``jp``), a language
    name (``japanese``) or a typo would otherwise crawl on at a harvest rate of 0.

    >>> checked_language("zh-TW"), checked_language("JA")
    ('zh', 'ja')
    """
    lang = normalise_lang(str(code))
    if lang in NO_LANGUAGE and str(code).strip().lower() != "un":
        raise ValueError(
            f"language code {code!r} ({NO_LANGUAGE[lang]}) names no language to crawl for: "
            "give a BCP 47 language tag such as ja, ko, zh, zh-TW"
        )
    if lang in _known_languages(False):
        return lang
    known = _known_languages(True)
    if lang in known:
        return lang
    low = str(code).strip().lower()
    guesses = list(TLD_LANGUAGES.get(low, ())[:1])  # jp -> ja, kr -> ko, cn -> zh
    by_name = {name.lower(): c for c, name in known.items()}
    guesses += [by_name[n] for n in difflib.get_close_matches(low, list(by_name), n=2, cutoff=0.75)]
    guesses += difflib.get_close_matches(lang, list(known), n=3, cutoff=0.5)
    nearest = list(dict.fromkeys(guesses))[:3]
    hint = ", ".join(f"{c} ({known[c]})" for c in nearest)
    raise ValueError(
        f"unknown language code {code!r}: give a BCP 47 language tag such as ja, ko, zh, zh-TW"
        + (f"; nearest: {hint}" if hint else "")
    )


def text_language(
    text: str, backend: str = DEFAULT_BACKEND, candidates: Iterable[str] | None = None
) -> tuple[str, float]:
    """(language, confidence) of a text; ``("und", 0.0)`` when it has none.

    >>> text_language("Der schnelle braune Fuchs springt über den faulen Hund.")[0]
    'de'
    """
    found = language_distribution(text, backend, candidates)
    return found[0] if found else (UNKNOWN, 0.0)


def page_language(page: Page, backend: str = DEFAULT_BACKEND) -> tuple[str, float]:
    """(language, confidence) of a page's title and visible text."""
    return text_language(f"{page.title}\n{page.text}", backend)


def anchor_language(
    text: str,
    *,
    context: str | None = None,
    candidates: Iterable[str] | None = None,
    hreflang: str = "",
    anchor: str | None = None,
) -> str | None:
    """Language of a link's text (its anchor, or its context window with ``anchor`` the
    anchor); None if nothing names one and the text has no letters. The one reading of
    a link's language: P4's rule, the language filter and eq. 9's link-context score.

    The link's own evidence first: the language its ``hreflang`` names
    (:func:`hreflang_language`; ``x-default`` names none), else one its short Han-only
    anchor names in its own script (:func:`named_language`: 日本語, 简体中文). Then the
    script (see :func:`script_of`); Han-only text is ``ja`` when ``context`` (the page's
    or the TLD's language) is ``ja``, else ``zh``. Other scripts: py3langid over
    ``candidates`` (all its languages if None).

    >>> [anchor_language(t) for t in ("한국어", "ひらがな", "中文", "123")]
    ['ko', 'ja', 'zh', None]
    >>> anchor_language("設定", context="ja"), anchor_language("简体中文", context="ja")
    ('ja', 'zh')
    >>> anchor_language("Deutsch", hreflang="ja-JP"), anchor_language("123", hreflang="x-default")
    ('ja', None)
    """
    named = hreflang_language(hreflang) or named_language(text if anchor is None else anchor)
    if named is not None:
        return named
    script = script_of(text)
    if script is None:
        return None
    if script in ("ko", "ja"):
        return script
    if script == "han":
        return "ja" if context is not None and normalise_lang(context) == "ja" else "zh"
    found = py3langid_languages(text, candidates)
    return found[0][0] if found else None


_PAGE_SCRIPT_CHARS = 4000  # of a page's text read for its script (score_link_contexts)


@dataclass(frozen=True)
class LanguageParams:
    target: tuple[str, ...] = ()  # language codes, e.g. ja (required)
    backend: str = DEFAULT_BACKEND  # cld2 or py3langid
    min_confidence: float = 0.0  # decide = "top": the best language's least confidence
    probability: bool = False  # decide = "top": score = P(target)
    han_context: str | None = None  # language of Han-only anchors (None: ja for a ja target)
    threshold: float | None = None  # None: 0.25 of the text (share), 0.5 (top)
    decide: str = "share"  # share: the targets' share of the text; top: the best language
    anchor_candidates: tuple[str, ...] = ()  # anchors are told apart among (none: targets + en)
    link_text: str = "context"  # a link's text for eq. 9: its context window, or its anchor first


@register_model("language")
@dataclass(init=False)
class LanguageModel:
    """Is the page (or anchor, or link) in one of the ``target`` languages?

    ``score(page)`` with ``decide="share"`` (default): the share of the page's
    text in the target languages (:func:`~focuscrawl.relevance.language_share.language_shares`:
    CJK by script, the rest by the backend), relevant from ``threshold``
    (default 0.25: a quarter of the text) on. With ``decide="top"`` (the
    earlier rule): ``probability=False`` 1.0 if the backend's best language is
    a target with confidence >= ``min_confidence``, else 0.0; ``probability=True``
    the backend's probability (py3langid) or share of text (cld2) of the targets.

    ``score_text``: 1.0 if :func:`anchor_language` of the text is a target,
    Latin-script text decided by py3langid among ``anchor_candidates`` (default:
    the targets and English, the usual other language of a link) and Han-only
    text read in the ``han_context`` language (or the ``context`` given). ``score_link``:
    P4's queueing rule, 1.0 if the URL's ccTLD or else the anchor is in a target language.
    """

    name: ClassVar[str] = "language"
    Params: ClassVar[type[LanguageParams]] = LanguageParams
    target: list[str]
    backend: str
    min_confidence: float
    probability: bool
    han_context: str | None
    threshold: float
    decide: str
    anchor_candidates: list[str]
    link_text: str

    def __init__(
        self,
        target: Sequence[str] = ("en",),
        backend: str = DEFAULT_BACKEND,
        min_confidence: float = 0.0,
        probability: bool = False,
        han_context: str | None = None,
        threshold: float | None = None,  # None: 0.25 of the text (share), 0.5 (top)
        decide: str = "share",
        anchor_candidates: Sequence[str] | None = None,  # None: targets + en
        link_text: str = "context",
    ) -> None:
        if decide not in DECISIONS or link_text not in LINK_TEXTS:
            raise ModelError(f"language model: decide must be one of {', '.join(DECISIONS)}, "
                             f"link_text one of {', '.join(LINK_TEXTS)}")  # fmt: skip
        self.link_text = link_text
        self.decide = decide
        if threshold is None:
            threshold = MIN_SHARE if decide == "share" else 0.5
        self.threshold = float(threshold)
        try:
            codes = {checked_language(t) for t in target if t.strip()}
            # the other codes too: han_context=jp read kanji anchors as Chinese, silently
            han_context = checked_language(han_context) if han_context and han_context.strip() else None
            if anchor_candidates is not None:
                anchor_candidates = [checked_language(c) for c in anchor_candidates if c.strip()] or None
        except ValueError as exc:
            raise ModelError(f"language model: {exc}") from None
        if not codes:
            raise ModelError("language model: give at least one target language")
        # zh-Hant / zh-TW (or zh-Hans / zh-CN) alone: Chinese text in the other script is not a target
        self.chinese = wanted_chinese_script(target)
        self.target = sorted(codes - {"zh"} | ({self.chinese} if self.chinese else codes & {"zh"}))
        if backend not in BACKENDS:
            raise ModelError(
                f"language model: unknown backend {backend!r} (use one of {', '.join(BACKENDS)})"
            )
        self.backend, self.min_confidence, self.probability = backend, min_confidence, probability
        self._targets = frozenset(codes)
        if han_context is None and "ja" in self._targets and "zh" not in self._targets:
            han_context = "ja"  # a Japanese crawl reads kanji-only anchors as Japanese
        self.han_context = han_context
        if anchor_candidates is None:
            anchor_candidates = sorted({*self.target, "en"})
        self.anchor_candidates = sorted({normalise_lang(c) for c in anchor_candidates})

    def score(self, page: Page) -> float:
        text = f"{page.title}\n{page.text}"
        if self.decide == "share":
            # no han_context: it is for short anchors; a page of Han without any kana
            # is Chinese (a ja-only target sets it to ja, and Chinese pages passed)
            return target_text_share(text, self._targets, self.backend, self.chinese)
        found = language_distribution(text, self.backend)
        if other_chinese_script(text, self.chinese):
            found = [(lang, p) for lang, p in found if lang != "zh"]
        if self.probability:
            return min(1.0, sum(p for lang, p in found if lang in self._targets))
        if not found:
            return 0.0
        lang, conf = found[0]
        return 1.0 if lang in self._targets and conf >= self.min_confidence else 0.0

    def score_text(
        self, text: str, context: str | None = None, *, hreflang: str = "", anchor: str | None = None
    ) -> float:
        """1.0 if the anchor (or short text; a link's context window with ``anchor`` its
        anchor) is in a target language by :func:`anchor_language`, the link's
        ``hreflang`` first; ``context`` is the language Han-only text is read in
        (default ``han_context``). A target of one Chinese script: a zh-Hant/zh-Hans
        hreflang decides the script, else the text's one-script characters do."""
        lang = anchor_language(
            text, context=context or self.han_context, candidates=self.anchor_candidates,
            hreflang=hreflang, anchor=anchor,
        )  # fmt: skip
        if lang == "zh" and self.chinese is not None:
            script = tag_chinese_script(hreflang) if hreflang_language(hreflang) == "zh" else None
            if script != self.chinese and (script is not None or other_chinese_script(text, self.chinese)):
                return 0.0
        return 1.0 if lang in self._targets else 0.0

    def score_link_contexts(self, page: Page) -> list[float]:
        """Each link of ``page``: ``score_text`` of its context window (its anchor if it
        has none) with its own evidence (hreflang, a language its anchor names), Han-only
        text read in the page's script (:meth:`page_context`)."""
        context, anchors = self.page_context(page), self.link_text == "anchor"
        return [
            self.score_text(link.anchor if anchors and script_of(link.anchor) else link.context or link.anchor,
                            context, hreflang=link.hreflang, anchor=link.anchor)
            for link in page.links
        ]  # fmt: skip

    def page_context(self, page: Page) -> str | None:
        """The language Han-only link text on ``page`` is read in: ``zh`` on a page whose
        text is mostly Han with no kana and no hangul (Japanese text carries kana) when
        ``han_context`` would read it as Japanese, so a Japanese crawl does not take the
        kanji-only anchors of a Chinese page for Japanese; else None (``han_context``)."""
        japanese = self.han_context is not None and normalise_lang(self.han_context) == "ja"
        return "zh" if japanese and mostly_han(f"{page.title}\n{page.text[:_PAGE_SCRIPT_CHARS]}") else None

    def score_link(self, url: str, anchor: str, context: str | None = None) -> float:
        if tld_language(url) in self._targets:
            return 1.0
        return self.score_text(anchor, context)

    def _params(self) -> dict[str, Any]:
        return {
            "target": list(self.target), "backend": self.backend,
            "min_confidence": self.min_confidence, "probability": self.probability,
            "han_context": self.han_context, "threshold": self.threshold,
            "decide": self.decide, "anchor_candidates": list(self.anchor_candidates or ()),
            "link_text": self.link_text,
        }  # fmt: skip

    @classmethod
    def from_params(cls, p: LanguageParams) -> LanguageModel:
        return cls(
            list(p.target), backend=p.backend, min_confidence=p.min_confidence,
            probability=p.probability, han_context=p.han_context, threshold=p.threshold,
            decide=p.decide, anchor_candidates=list(p.anchor_candidates) or None, link_text=p.link_text,
        )  # fmt: skip

    def save(self, directory: Path) -> None:
        text = json.dumps(self._params(), ensure_ascii=False, indent=1)
        (directory / "language.json").write_text(text, "utf-8")

    @classmethod
    def load(cls, directory: Path) -> LanguageModel:
        try:
            data = json.loads((directory / "language.json").read_text("utf-8"))
        except (OSError, ValueError) as exc:
            raise ModelError(f"{directory}: not a saved language model ({exc})") from None
        if not isinstance(data, dict):
            raise ModelError(f"{directory}: not a saved language model")
        data.setdefault("decide", "top")  # saved before the share rule existed
        return cls.from_params(model_params(cls, data, directory))
