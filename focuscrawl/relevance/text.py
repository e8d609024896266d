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

from focuscrawl.exceptions import ConfigError
from focuscrawl.relevance.language import checked_language

__all__ = [
    "available_languages",
    "base_language",
    "bigram_letters",
    "checked_words_language",
    "fold_forms",
    "split_unsegmented",
    "stem",
    "stopwords",
    "strip_accents",
    "tokenize",
]

# A word is a run of letters/digits, possibly joined by apostrophes ("don't",
# "d'água") so that the contracted forms in the stop-word lists match whole.
_WORD_PATTERN = "{0}+(?:'{0}+)*"  # filled in with a letter's class below
_QUOTES = {"\u2019": "'", "\u2018": "'", "\u02bc": "'", "`": "'"}
_APOSTROPHES = str.maketrans(_QUOTES)
_APOSTROPHES_AND_UNDERSCORE = str.maketrans({**_QUOTES, "_": " "})  # "_" no word character
# Scripts written without spaces between words: Han, kana, Thai, Lao, Myanmar, Khmer.
# A run of them is one regex "word" (a whole clause); it is cut into overlapping
# character bigrams instead, as Lucene's CJKBigramFilter does, so that a two-
# character term such as 認証 matches inside 認証方式を設定する. Hangul too (below).
UNSEGMENTED = (
    "\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf"
    "\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0002fa1f"
)
# Hangul: Korean puts spaces between its phrases, but attaches particles and endings to
# its nouns (인증을, 인증서: authentication + object particle, + certificate), so a
# space-delimited Korean "word" is no term either: it is cut into bigrams too (as
# Lucene's CJKBigramFilter does by default), and a keyword in it has no word boundary.
HANGUL = "\u1100-\u11ff\u3130-\u318f\ua960-\ua97f\uac00-\ud7af\uffa0-\uffdc"
_UNSEGMENTED_RUN = re.compile(f"([{UNSEGMENTED}{HANGUL}]+)")
_WHOLE_RUN = re.compile(f"[{UNSEGMENTED}{HANGUL}]+")


def _mark_ranges() -> str:
    """The combining marks of the BMP (Mn, Mc, Me) as a regex class body."""
    ranges: list[list[int]] = []
    for code in range(0x0300, 0x10000):
        if unicodedata.category(chr(code)) in ("Mn", "Mc", "Me"):
            if ranges and ranges[-1][1] == code - 1:
                ranges[-1][1] = code
            else:
                ranges.append([code, code])
    return "".join(f"{chr(a)}-{chr(b)}" if b > a else chr(a) for a, b in ranges)


# Combining marks are no word characters to Python's ``\w``, but a part of the letter
# before them: Thai vowels and tone marks (ที่), Khmer and Indic vowel signs and viramas
# (हिन्दी), Arabic harakat. A word is cut at none of them (before: हिन्दी was three
# "words" ह, न, द, and ที่นี่ the two consonants ท and น), and a bigram of an unsegmented
# run is one of letters with their marks (ที่นี่: one bigram, not ที ี่ ่น นี ี่).
MARKS = _mark_ranges()
# one character class, the fastest: "_" is made a space before (tokenize), no word character
_WORD = re.compile(_WORD_PATTERN.format(f"[\\w{MARKS}]"))
_CLUSTER = re.compile(f"[^{MARKS}][{MARKS}]*|[{MARKS}]+")

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


# what a reader does not see: soft hyphen, zero width space, non-joiner and joiner, word
# joiner, byte order mark (Thai text puts zero width spaces between its words)
_INVISIBLE = re.compile("[\u00ad\u200b-\u200d\u2060\ufeff]")
# the ideographic space and the half- and full-width forms (ＡＰＩ, ｶﾀｶﾅ): the same letters
_WIDTH_FORMS = re.compile("[\u3000\uff01-\uffef]+")
# looked for first, one at a time: a third of the time of a search for a run of them
_WIDTH_FORM = re.compile("[\u3000\uff01-\uffef]")


def _ordinary_width(match: re.Match[str]) -> str:
    return unicodedata.normalize("NFKC", match.group())


def fold_forms(text: str) -> str:
    """``text`` with one form for what a reader sees as the same text: composed (NFC:
    ``e`` + U+0301 is ``é``), full- and half-width forms as the ordinary ones (ＡＰＩ is
    API, ｶﾞｲﾄﾞ is ガイド), invisible characters removed (soft hyphen, zero width
    space and joiners, BOM). Other compatibility forms stay (``²``, ``ﬁ``): only the
    width forms, which CJK text mixes with the ordinary ones at will.

    >>> fold_forms("ＡＰＩ ｶﾞｲﾄﾞ") == "API ガイド", fold_forms("認\u200b証") == "認証"
    (True, True)
    >>> fold_forms("cafe\u0301 km²") == "café km²"
    True
    """
    if text.isascii():
        return text
    text = _INVISIBLE.sub("", text)
    if _WIDTH_FORM.search(text):
        text = _WIDTH_FORMS.sub(_ordinary_width, text)
    return text if unicodedata.is_normalized("NFC", text) else unicodedata.normalize("NFC", text)


def strip_accents(text: str) -> str:
    """Remove the diacritics of Latin, Greek and Cyrillic letters (NFKD, their combining marks
    dropped, NFC again); ``ß`` stays, and so do the marks of other scripts.

    Only those scripts' accents are optional: a kana's voicing mark (ガ is カ plus
    U+3099) or a Devanagari vowel sign changes the word, and NFKD splits a Hangul
    syllable into letters that NFC joins back.

    >>> strip_accents("Élève ガイド 한국어")
    'Eleve ガイド 한국어'
    """
    if text.isascii():  # nothing to strip: the common case, and NFKD is slow
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    kept: list[str] = []
    base = 0  # code point of the last letter that is not a combining mark
    for ch in decomposed:
        if unicodedata.combining(ch):
            if base < 0x0530 or 0x1D00 <= base <= 0x1FFF:  # Latin, Greek, Cyrillic (+ extended)
                continue
        else:
            base = ord(ch)
        kept.append(ch)
    return unicodedata.normalize("NFC", "".join(kept))


def checked_words_language(lang: str, owner: str) -> str:
    """``lang``, the language of a model's stop words and stemmer, as they read it (its
    primary subtag, lower case: ``DE`` and ``de-DE`` are ``de``), or a one-line
    :class:`ConfigError` naming the nearest codes when it is no language code at all
    (``english``, ``jpn``: before, taken and meaning nothing, no stop words and no stemmer).
    A language without a bundled list (``ja``) has no stop words, as a page's may not.

    >>> checked_words_language("de-DE", "cosine model"), checked_words_language("ja", "cosine model")
    ('de', 'ja')
    """
    try:
        return checked_language(lang)
    except ValueError as exc:
        raise ConfigError(f"{owner}: lang: {exc}") from None


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
    text = fold_forms(text).translate(_APOSTROPHES_AND_UNDERSCORE)
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
        elif word.isascii() or not _UNSEGMENTED_RUN.search(word):
            tokens.append(word)
        else:
            tokens.extend(split_unsegmented(word))
    if stem:
        tokens = _stem(tokens, lang)
    return tokens


def split_unsegmented(word: str) -> list[str]:
    """A word's runs of unsegmented script as character bigrams, its other runs whole.

    >>> split_unsegmented("認証方式")
    ['認証', '証方', '方式']
    >>> split_unsegmented("apacheの設定")
    ['apache', 'の設', '設定']
    >>> split_unsegmented("字")
    ['字']
    >>> split_unsegmented("ที่นี่")
    ['ที่นี่']
    """
    out: list[str] = []
    for i, part in enumerate(_UNSEGMENTED_RUN.split(word)):
        if not part:
            continue
        letters = _CLUSTER.findall(part) if i % 2 else [part]  # a letter with its marks
        if len(letters) == 1:  # split() puts the captured (unsegmented) runs at odd places
            out.append(part)
        else:
            out.extend(letters[j] + letters[j + 1] for j in range(len(letters) - 1))
    return out


def bigram_letters(token: str) -> tuple[str, str] | None:
    """The two letters (each with its marks) of a token :func:`split_unsegmented` made
    of a run of unsegmented script, None for any other token.

    >>> bigram_letters("猫的"), bigram_letters("猫"), bigram_letters("ab"), bigram_letters("ที่นี่")
    (('猫', '的'), None, None, ('ที่', 'นี่'))
    """
    if token.isascii() or not _WHOLE_RUN.fullmatch(token):
        return None
    letters = _CLUSTER.findall(token)
    return (letters[0], letters[1]) if len(letters) == 2 else None


# The keyword arguments of tokenize shadow the module functions of the same name.
_strip = strip_accents
_stem = stem
