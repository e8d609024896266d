"""Language codes and the identification backends: which languages a text is in.

cld2 (pycld2) reports each language's share of the text, py3langid its
probabilities; codes are normalised to the primary ISO 639-1 subtag with the
Chinese variants folded into ``zh``. Used by the language model
(:mod:`focuscrawl.relevance.language`) and the per-language shares of a page
(:mod:`focuscrawl.relevance.language_share`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

import pycld2

from focuscrawl.exceptions import ModelError

BACKENDS = ("cld2", "py3langid")
DEFAULT_BACKEND = "cld2"
UNKNOWN = "und"

# Chinese varieties and scripts fold into zh: a crawl for Chinese wants them all,
# and detectors split them unreliably (py3langid calls some Traditional pages yue)
_CHINESE = "yue wuu gan hak nan cmn hsn cjy cdo cpx czh mnp lzh zh-yue zh-min-nan"
_ALIASES = {
    **dict.fromkeys(_CHINESE.split(), "zh"),
    "zh-hant": "zh", "zh-hans": "zh", "zh-cn": "zh", "zh-tw": "zh", "zh-hk": "zh", "zh-sg": "zh",
    "iw": "he", "in": "id", "jw": "jv", "nb": "no", "nn": "no", "un": UNKNOWN, "": UNKNOWN,
}  # fmt: skip
# ISO 639-2 codes (bibliographic/terminology where they differ) of the languages with a
# two-letter code, which BCP 47 uses instead (target=jpn was an unknown code, and no
# nearest named it ja): the languages the identification backends know
_ISO_639_2 = """
afr af | sqi alb sq | amh am | ara ar | hye arm hy | aze az | eus baq eu | bel be | ben bn
bos bs | bul bg | mya bur my | cat ca | zho chi zh | hrv hr | ces cze cs | dan da
nld dut nl | eng en | epo eo | est et | fin fi | fra fre fr | fry fy | glg gl | kat geo ka
deu ger de | ell gre el | guj gu | hau ha | heb he | hin hi | hun hu | isl ice is | ind id
gle ga | ita it | jpn ja | kan kn | kaz kk | khm km | kor ko | kur ku | lao lo | lat la
lav lv | lit lt | ltz lb | mkd mac mk | msa may ms | mal ml | mlt mt | mar mr | mon mn
nep ne | nor nob nno no | fas per fa | pol pl | por pt | pan pa | pus ps | ron rum ro
rus ru | srp sr | sin si | slk slo sk | slv sl | som so | spa es | swa sw | swe sv
tgl fil tl | tam ta | tat tt | tel te | tha th | bod tib bo | tur tr | ukr uk | urd ur
uzb uz | vie vi | cym wel cy | yid yi | yor yo | xho xh | zul zu
"""


def _two_letter_codes(spec: str) -> dict[str, str]:
    """ISO 639-2 code -> ISO 639-1 code, from ``"CODE [CODE] TWO | ..."`` entries.

    >>> _two_letter_codes("deu ger de | jpn ja")
    {'deu': 'de', 'ger': 'de', 'jpn': 'ja'}
    """
    out: dict[str, str] = {}
    for entry in spec.replace("\n", " | ").split("|"):
        *codes, two = entry.split() or [""]
        out.update(dict.fromkeys(codes, two))
    return out


_ALIASES.update(_two_letter_codes(_ISO_639_2))


@lru_cache(maxsize=4096)
def normalise_lang(code: str) -> str:
    """Primary language subtag, lower-cased, Chinese variants folded into ``zh``.

    >>> [normalise_lang(c) for c in ("zh-TW", "yue", "wuu", "pt_BR", "EN-us", "zh-Hant", "un", "jpn", "ger")]
    ['zh', 'zh', 'zh', 'pt', 'en', 'zh', 'und', 'ja', 'de']
    """
    low = code.strip().lower().replace("_", "-")
    if low in _ALIASES:
        return _ALIASES[low]
    primary = low.split("-", 1)[0]
    return _ALIASES.get(primary, primary)


@lru_cache(maxsize=1)
def _py3langid() -> Any:
    """py3langid with normalised probabilities (loaded once, ~0.5 s)."""
    from py3langid import langid

    return langid.LanguageIdentifier.from_modelpath(
        langid.MODEL_DIR / langid.MODEL_FILE, norm_probs=True
    )


def py3langid_codes() -> list[str]:
    """The languages py3langid's model knows."""
    return [str(c) for c in _py3langid().nb_classes]


_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


def cld2_languages(text: str) -> list[tuple[str, float]]:
    """cld2's languages with their share of the text (0-1), best first."""
    return list(_cld2_answer(text))


@lru_cache(maxsize=2)
def _cld2_answer(text: str) -> tuple[tuple[str, float], ...]:
    """cld2 on ``text``, the last two answers kept: a page's language and its language
    shares ask about the same text (all of it when it has no CJK letters)."""
    clean = _CONTROL.sub(" ", text)
    try:
        _, _, details = pycld2.detect(clean)
    except pycld2.error:  # still invalid somewhere: drop what does not encode
        _, _, details = pycld2.detect(clean.encode("utf-8", "ignore").decode("utf-8"))
    return tuple(
        (normalise_lang(code), percent / 100) for _, code, percent, _ in details if code != "un"
    )


def py3langid_languages(text: str, candidates: Iterable[str] | None) -> list[tuple[str, float]]:
    ranked = [(normalise_lang(lang), p) for lang, p in _py3langid().rank(text)]
    if candidates is not None:
        wanted = {normalise_lang(c) for c in candidates}
        ranked = [(lang, p) for lang, p in ranked if lang in wanted]
        total = sum(p for _, p in ranked)  # renormalise over the candidate set
        ranked = [(lang, p / total) for lang, p in ranked] if total > 0 else []
    merged: dict[str, float] = {}
    for lang, p in ranked:  # yue and zh both become zh: add their probabilities
        merged[lang] = merged.get(lang, 0.0) + p
    return sorted(merged.items(), key=lambda item: -item[1])


def language_distribution(
    text: str, backend: str = DEFAULT_BACKEND, candidates: Iterable[str] | None = None
) -> list[tuple[str, float]]:
    """(language, probability or share of text) pairs, best first; empty if undecided.

    With ``backend="cld2"`` and no usable answer from cld2 (short or odd text),
    py3langid answers instead.
    """
    if backend not in BACKENDS:
        raise ModelError(
            f"language: unknown backend {backend!r} (use one of {', '.join(BACKENDS)})"
        )
    if not text.strip():
        return []
    if backend == "cld2" and candidates is None:
        found = cld2_languages(text)
        if found:
            return found
    return py3langid_languages(text, candidates)
