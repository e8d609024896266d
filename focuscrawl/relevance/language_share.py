"""How much of a page is in each language: script share for CJK, identified share for the rest.

A translated documentation page mixes the translation with English directive
names, code and untranslated paragraphs; its single "best" language is often
English (cld2 recall 0.665 for zh, 0.81 for ko on multilingual-dev's real
translations), although most of what a reader sees is Chinese or Korean. So a
page is judged by the *share* of its text in the target language:

* Hangul, kana and Han characters are attributed by script (Hangul -> ko; kana
  -> ja; Han -> ja when the page has kana, that is at least ``KANA_SHARE`` of its
  Han + kana letters, else the ``han_context`` language or zh). Script is exact
  where n-gram statistics are not needed, and it sees every CJK block, however
  short, that a page-level detector outvotes;
* the rest of the text (CJK characters removed) goes to the backend: cld2
  identifies it chunk by chunk and reports each language's share of the bytes
  (py3langid: its probabilities), and those shares split the rest's letters;
* units are UTF-8 bytes of letters, as cld2 counts them: a CJK character (3
  bytes) weighs like three Latin letters, about one short word each way.

10 Hangul syllables (30 bytes) and 32 Latin letters: ko = 30/62.

>>> shares = language_shares("설정 파일 httpd.conf 을 편집합니다 and then restart the server")
>>> round(shares["ko"], 4), max(shares, key=lambda k: shares[k]) == "en"
(0.4839, True)
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from focuscrawl.relevance.language_id import (
    DEFAULT_BACKEND,
    language_distribution,
    normalise_lang,
)
from focuscrawl.relevance.scripts import BLOCKS, char_script, other_chinese_script

KANA_SHARE = 0.05  # kana among Han + kana letters above which Han text is read as Japanese


def _char_class(scripts: set[str]) -> re.Pattern[str]:
    ranges = "".join(f"{chr(first)}-{chr(last)}" for first, last, script in BLOCKS if script in scripts)
    return re.compile(f"[{ranges}]")


_CJK_PATTERNS = {script: _char_class({script}) for script in ("hangul", "kana", "han")}
_ANY_CJK = _char_class({"hangul", "kana", "han"})
_NOT_ASCII_LETTER = re.compile("[^A-Za-z]+")
_NON_ASCII = re.compile("[^\x00-\x7f]")


def mostly_han(text: str) -> bool:
    """Whether ``text`` is mostly Han (more Han characters than other letters, ASCII
    letters counted) with no kana and no hangul: Chinese, as Japanese text carries kana.
    By regular expressions (a Python loop over the characters costs a millisecond a page).

    >>> [mostly_han(t) for t in ("这是一个说明页面", "これは説明ページです", "Choose 日本語", "")]
    [True, False, False, False]
    """
    if _ANY_CJK.search(text) is None:
        return False
    if _CJK_PATTERNS["kana"].search(text) or _CJK_PATTERNS["hangul"].search(text):
        return False
    han = len(_CJK_PATTERNS["han"].findall(text))
    return han > len(_NOT_ASCII_LETTER.sub("", text))


def language_shares(
    text: str, backend: str = DEFAULT_BACKEND, han_context: str | None = None
) -> dict[str, float]:
    """{language: share of the text's letters (UTF-8 bytes)}, summing to 1; {} without letters."""
    # by regular expressions, not a Python loop over every character (a third of the
    # CPU of a crawl's page on English text): the same counts as char_script's
    if _ANY_CJK.search(text) is None:
        counts, rest = dict.fromkeys(_CJK_PATTERNS, 0), text
    else:
        counts = {script: len(pattern.findall(text)) for script, pattern in _CJK_PATTERNS.items()}
        rest = _ANY_CJK.sub(" ", text)
    other = len(_NOT_ASCII_LETTER.sub("", rest)) + sum(
        len(ch.encode("utf-8")) for ch in _NON_ASCII.findall(rest) if char_script(ch) is not None
    )
    units: dict[str, float] = {}
    if counts["hangul"]:
        units["ko"] = 3.0 * counts["hangul"]
    japanese = counts["kana"] > 0 and counts["kana"] >= KANA_SHARE * (
        counts["kana"] + counts["han"]
    )
    han_lang = "ja" if japanese else normalise_lang(han_context) if han_context else "zh"
    if counts["han"]:
        units[han_lang] = units.get(han_lang, 0.0) + 3.0 * counts["han"]
    if counts["kana"]:
        units["ja"] = units.get("ja", 0.0) + 3.0 * counts["kana"]
    if other:
        found = language_distribution(rest, backend)
        total = sum(p for _, p in found)
        for lang, p in found:  # the undecided part of the rest counts for no language
            units[lang] = units.get(lang, 0.0) + other * p / max(total, 1.0)
    whole = sum(3.0 * n for n in counts.values()) + other
    return (
        {lang: u / whole for lang, u in sorted(units.items(), key=lambda kv: -kv[1])}
        if whole
        else {}
    )


def target_share(shares: Mapping[str, float], targets: frozenset[str]) -> float:
    return min(1.0, sum(p for lang, p in shares.items() if lang in targets))


def target_text_share(
    text: str, targets: frozenset[str], backend: str = DEFAULT_BACKEND, chinese: str | None = None
) -> float:
    """The share of ``text`` in the ``targets`` (:func:`language_shares`,
    :func:`target_share`); in a crawl that wants one Chinese script (``chinese``:
    :func:`~focuscrawl.relevance.scripts.wanted_chinese_script`) text written in the
    other script is no target Chinese."""
    shares = language_shares(text, backend)
    if other_chinese_script(text, chinese):
        shares.pop("zh", None)
    return target_share(shares, targets)
