"""The simplest relevance model: share of topic keywords found in the page.

score = (number of distinct keywords occurring in title + text) / (number of
keywords), so a page holding every keyword scores 1. Matching is on whole words,
case-insensitive; a keyword may be a phrase. Scripts written without spaces
(Chinese, Japanese, Thai, ...) have no word boundaries to look for: an edge of a
keyword in such a script matches anywhere (認証 inside 認証方式を設定する). Meant as a baseline and as the
smallest example of the model interface.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from focuscrawl.exceptions import ModelError
from focuscrawl.relevance.base import register_model
from focuscrawl.relevance.text import HANGUL, UNSEGMENTED, fold_forms
from focuscrawl.types import Page

# Hangul has no word boundary for a keyword either: particles and endings are attached
# to Korean nouns (인증을, 인증서 for the keyword 인증)
_UNSEGMENTED_CHAR = re.compile(f"[{UNSEGMENTED}{HANGUL}]")
# a word character of a script written with spaces
_SEGMENTED_WORD_CHAR = f"[^\\W{UNSEGMENTED}{HANGUL}]"
_NOT_AFTER_WORD = f"(?<!{_SEGMENTED_WORD_CHAR})"
_NOT_BEFORE_WORD = f"(?!{_SEGMENTED_WORD_CHAR})"


def _pattern(keyword: str) -> re.Pattern[str]:
    """``keyword`` as a whole word: at each edge no letter of a space-separated script beside it,
    and no boundary at all at an edge whose own letter is of an unsegmented script.

    >>> [bool(_pattern(k).search("apacheの認証方式を設定する")) for k in ("認証", "apache", "pache", "apacheの")]
    [True, True, False, True]
    """
    head = "" if _UNSEGMENTED_CHAR.match(keyword[0]) else _NOT_AFTER_WORD
    tail = "" if _UNSEGMENTED_CHAR.match(keyword[-1]) else _NOT_BEFORE_WORD
    return re.compile(head + re.escape(keyword) + tail)


@dataclass(frozen=True)
class KeywordParams:
    keywords: tuple[str, ...] = ()  # words or phrases (required)
    threshold: float = 1e-9  # share of the keywords present: any keyword


@register_model("keyword")
@dataclass
class KeywordModel:
    """Fraction of ``keywords`` present; relevant at ``threshold`` (default: any keyword)."""

    name: ClassVar[str] = "keyword"
    Params: ClassVar[type[KeywordParams]] = KeywordParams
    keywords: Sequence[str]
    threshold: float = 1e-9

    def __post_init__(self) -> None:
        # keywords and text in one form: ＡＰＩ is API, a zero width space inside a word no break
        words = [fold_forms(k).strip().lower() for k in self.keywords if fold_forms(k).strip()]
        if not words:
            raise ModelError("keyword model: give at least one keyword")
        self.keywords = words
        self._patterns = [_pattern(k) for k in words]

    def score_text(self, text: str) -> float:
        low = fold_forms(text).lower()
        hits = sum(1 for p in self._patterns if p.search(low))
        return hits / len(self._patterns)

    def score(self, page: Page) -> float:
        return self.score_text(page.title + " " + page.text)

    @classmethod
    def from_params(cls, p: KeywordParams) -> KeywordModel:
        return cls(list(p.keywords), p.threshold)

    def save(self, directory: Path) -> None:
        data = {"keywords": list(self.keywords), "threshold": self.threshold}
        (directory / "keywords.json").write_text(json.dumps(data, ensure_ascii=False), "utf-8")

    @classmethod
    def load(cls, directory: Path) -> KeywordModel:
        data = json.loads((directory / "keywords.json").read_text("utf-8"))
        return cls(data["keywords"], float(data["threshold"]))
