"""Shared text normalisation for the relevance models: tokens, stop words, accents, stems.

Every model that compares words (cosine terms, classifiers, link contexts) goes
through :func:`tokenize`, so a term written in a topic file and the same word in
a page end up as the same token. The normalisation is the one of P3 (section
4.1.3): lower case, accents stripped, stop words removed; stemming is optional.

>>> tokenize("Les Élèves and the Teacher's Café, don't")
['les', 'eleves', 'teacher', 'cafe']
>>> tokenize("Über die Universität in São Paulo", lang="de")
['universitat', 'sao', 'paulo']
>>> strip_accents("São Paulo, naïve")
'Sao Paulo, naive'
>>> stem(["running", "courses"], "en")
['run', 'cours']
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from importlib import resources

import snowballstemmer

__all__ = [
    "available_languages",
    "base_language",
    "stem",
    "stopwords",
    "strip_accents",
    "tokenize",
]

# A word is a run of letters/digits, possibly joined by apostrophes ("don't",
# "d'água") so that the contracted forms in the stop-word lists match whole.
_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)*")
_APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'"})

# snowballstemmer algorithm per ISO 639-1 code.
_STEMMERS = {
    "ar": "arabic", "ca": "catalan", "cs": "czech", "da": "danish", "de": "german",
    "el": "greek", "en": "english", "es": "spanish", "eu": "basque", "fi": "finnish",
    "fr": "french", "ga": "irish", "hi": "hindi", "hu": "hungarian", "hy": "armenian",
    "id": "indonesian", "it": "italian", "lt": "lithuanian", "ne": "nepali", "nl": "dutch",
    "no": "norwegian", "nb": "norwegian", "nn": "norwegian", "pl": "polish", "pt": "portuguese",
    "ro": "romanian", "ru": "russian", "sr": "serbian", "sv": "swedish", "ta": "tamil",
    "tr": "turkish",
}  # fmt: skip


def base_language(lang: str) -> str:
    """Primary subtag of a language tag: ``"pt-BR"`` -> ``"pt"``, ``"en_US"`` -> ``"en"``.

    >>> base_language("pt-BR")
    'pt'
    """
    return re.split(r"[-_]", lang.strip().lower(), maxsplit=1)[0]


def strip_accents(text: str) -> str:
    """Remove diacritics (NFKD decomposition, combining marks dropped); ``ß`` stays."""
    if text.isascii():  # nothing to strip: the common case, and NFKD is slow
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def available_languages() -> list[str]:
    """Languages with a bundled stop-word list (``focuscrawl/data/stopwords/<lang>.txt``)."""
    folder = resources.files("focuscrawl") / "data" / "stopwords"
    return sorted(p.name[:-4] for p in folder.iterdir() if p.name.endswith(".txt"))


@lru_cache(maxsize=64)
def stopwords(lang: str) -> frozenset[str]:
    """The bundled stop words of ``lang`` (lower case, as written, with accents).

    An unknown language gives an empty set (nothing removed) rather than an
    error, because page languages come from the web and may be anything.
    """
    code = base_language(lang)
    if not code.isalpha():
        return frozenset()
    path = resources.files("focuscrawl") / "data" / "stopwords" / f"{code}.txt"
    try:
        raw = path.read_text(encoding="utf-8")
    except (FileNotFoundError, OSError):
        return frozenset()
    words = set()
    for line in raw.splitlines():
        word = line.split("#", 1)[0].strip().lower().translate(_APOSTROPHES)
        if word:
            words.add(word)
    return frozenset(words)


@lru_cache(maxsize=64)
def _normalised_stopwords(lang: str, accents: bool) -> frozenset[str]:
    """Stop words passed through the same normalisation as the tokens they are compared to."""
    words = stopwords(lang)
    return frozenset(strip_accents(w) for w in words) if accents else words


@lru_cache(maxsize=32)
def _stemmer(lang: str) -> snowballstemmer.Stemmer | None:
    algorithm = _STEMMERS.get(base_language(lang))
    return snowballstemmer.stemmer(algorithm) if algorithm else None


def stem(words: list[str], lang: str) -> list[str]:
    """Snowball stems of ``words``; unchanged for a language without a stemmer."""
    if _stemmer(lang) is None:
        return list(words)
    return [_stem_word(w, lang) for w in words]


@lru_cache(maxsize=200_000)
def _stem_word(word: str, lang: str) -> str:
    # Snowball costs ~50 µs a word; a crawl sees the same words again and again
    stemmer = _stemmer(lang)
    return str(stemmer.stemWord(word)) if stemmer is not None else word


def tokenize(
    text: str,
    *,
    lang: str = "en",
    lowercase: bool = True,
    strip_accents: bool = True,
    remove_stopwords: bool = True,
    stem: bool = False,
) -> list[str]:
    """Split ``text`` into normalised word tokens, in order (phrases can be matched on them).

    Stop words are compared case-insensitively, after the same accent stripping
    as the tokens, so "Über" and "uber" are both removed as German "über".
    """
    text = text.translate(_APOSTROPHES)
    if lowercase:
        text = text.lower()
    if strip_accents:
        text = _strip(text)
    stops = _normalised_stopwords(lang, strip_accents) if remove_stopwords else frozenset()
    tokens: list[str] = []
    for word in _WORD.findall(text):
        if (word if lowercase else word.lower()) in stops:
            continue  # contractions such as "don't" are stop words as a whole
        if "'" in word:
            # "café's", "l'homme", "d'água": the apostrophe's one-letter clitics carry nothing
            parts = [p for p in word.split("'") if len(p) > 1]
            tokens.extend(p for p in parts if (p if lowercase else p.lower()) not in stops)
        else:
            tokens.append(word)
    if stem:
        tokens = _stem(tokens, lang)
    return tokens


# The keyword arguments of tokenize shadow the module functions of the same name.
_strip = strip_accents
_stem = stem
