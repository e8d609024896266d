"""Text preparation for the n-gram language model of P2 (section 3.1).

P2 filters "numbers and punctuation characters and considered only sequences
with a minimum length of five words", and trains on de-duplicated sentences
(section 4). The same normalisation is applied to the pages that are scored, so
that training and test tokens match; only the minimum length differs (a page is
judged on all of its sentences, the model is trained on sentences of >= 5 words).

* Sentences end at ``. ! ? …`` followed by white space, at ``。！？`` (and the closing
  brackets after them) with or without it, and at every line break
  (paragraphs from trafilatura or a text file never continue a sentence). This
  is deliberately simple: an abbreviation such as "z. B." splits a sentence, and
  the short pieces are then usually removed by the length filter.
* A token is a run of letters, possibly joined by inner hyphens or apostrophes
  ("E-Mail", "don't"); tokens holding a digit are dropped (numbers, "B52"), and
  every other punctuation character separates tokens.
* Lower-casing is on by default: German capitalises nouns at the start of a
  sentence and in titles, and lower-casing removes that sparsity.
* Scripts written without spaces between words (Han, kana, Hangul syllables,
  Thai, Lao, Khmer, Myanmar) become one token per character. Without this a
  Japanese paragraph is one or two long "words": a handful of unknown tokens
  among the page's Latin command names, so that a Japanese page looked as
  in-domain to a German model as a German one (AUC 0.66). Per character, its
  weight in the perplexity is its length, and a model trained on such text
  becomes a character n-gram model, the usual choice for these scripts.

>>> sentence_words("Der Wald (lat. silva) hat 3 Schichten, z.B. E-Mail!")
['der', 'wald', 'lat', 'silva', 'hat', 'schichten', 'z', 'b', 'e-mail']
>>> sentence_words("Apache の設定 version 2")
['apache', 'の', '設', '定', 'version']
>>> [" ".join(s) for s in lm_sentences("Eins zwei drei vier fünf. Kurz! Eins zwei drei vier fünf.", min_words=5, dedup=True)]
['eins zwei drei vier fünf']
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from focuscrawl.exceptions import ModelError
from focuscrawl.relevance.text import MARKS, fold_forms

# Chinese and Japanese end a sentence with 。！？ and no space after it (before, a
# paragraph was one sentence: its repeated sentences were never de-duplicated)
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|(?<=[。！？])[」』）]*\s*|\s*[\r\n]+\s*")
# a letter with its combining marks (text.MARKS: no \w to Python, a part of the word)
_WORD_CHAR = f"(?:\\w|[{MARKS}])"
_TOKEN = re.compile(f"{_WORD_CHAR}+(?:['’\\-]{_WORD_CHAR}+)*")
_DIGIT = re.compile(r"\d")
# Han (+ extensions, compatibility), kana, Hangul syllables and jamo, Thai, Lao, Myanmar,
# Khmer: a token per letter, its marks with it (ที่ is one token, not ท and two marks)
_UNSPACED_LETTERS = (
    "\u1100-\u11ff\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af"
    "\uf900-\ufaff\uff66-\uff9f\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\U00020000-\U0002fa1f"
)
_UNSPACED = re.compile(f"((?![{MARKS}])[{_UNSPACED_LETTERS}][{MARKS}]*)")


def split_sentences(text: str) -> list[str]:
    """Cut ``text`` into sentences (see the module docstring for the rule)."""
    return [s for s in _SENTENCE_END.split(text) if s and not s.isspace()]


def sentence_words(sentence: str, *, lowercase: bool = True) -> list[str]:
    """The words of one sentence: punctuation removed, tokens with digits dropped."""
    sentence = fold_forms(sentence)  # ＡＰＩ is API, e + U+0301 is é, as in the training text
    if lowercase:
        sentence = sentence.lower()
    # "_" is a word character for the regex but punctuation for us.
    sentence = _UNSPACED.sub(r" \1 ", sentence.replace("_", " "))
    tokens = _TOKEN.findall(sentence)
    return [t for t in tokens if not _DIGIT.search(t)]


def lm_sentences(
    text: str,
    *,
    lowercase: bool = True,
    min_words: int = 1,
    dedup: bool = False,
    seen: set[str] | None = None,
) -> list[list[str]]:
    """Normalised sentences of ``text`` with at least ``min_words`` words.

    With ``dedup`` a sentence is kept only the first time it occurs; pass the same
    ``seen`` set to de-duplicate across several texts (P2, section 4).
    """
    if seen is None and dedup:
        seen = set()
    out: list[list[str]] = []
    for sentence in split_sentences(text):
        words = sentence_words(sentence, lowercase=lowercase)
        if len(words) < max(min_words, 1):
            continue
        if dedup and seen is not None:
            key = " ".join(words)
            if key in seen:
                continue
            seen.add(key)
        out.append(words)
    return out


def training_sentences(
    texts: Iterable[str], *, lowercase: bool = True, min_words: int = 5, dedup: bool = True
) -> Iterator[list[str]]:
    """The sentences of ``texts`` prepared for training, de-duplicated across all texts."""
    seen: set[str] = set()
    for text in texts:
        yield from lm_sentences(
            text, lowercase=lowercase, min_words=min_words, dedup=dedup, seen=seen
        )


def read_texts(path: Path, *, field: str = "text") -> Iterator[str]:
    """Texts of a file: one per line of a ``.txt`` file, or ``field`` of each ``.jsonl`` record.

    JSON lines that cannot be parsed or lack ``field`` are skipped (they are not text).
    """
    path = Path(path)
    if not path.is_file():
        raise ModelError(f"{path}: no such text file")
    jsonl = path.suffix.lower() in {".jsonl", ".ndjson"}
    with path.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if not jsonl:
                yield line
                continue
            try:
                record = json.loads(line)
            except ValueError:
                continue
            value = record.get(field) if isinstance(record, dict) else None
            if isinstance(value, str):
                yield value
