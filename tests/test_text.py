"""Shared text normalisation (relevance/text.py): tokens, accents, stop words, stems."""

from __future__ import annotations

import pytest

from focuscrawl.relevance.text import (
    available_languages,
    base_language,
    stem,
    stopwords,
    strip_accents,
    tokenize,
)


@pytest.mark.parametrize(
    ("text", "lang", "expected"),
    [
        ("The Syllabus of CS-415", "en", ["syllabus", "cs", "415"]),
        ("Às vezes, a Educação é ótima", "pt", ["vezes", "educacao", "otima"]),
        ("Für die Prüfung über Datenbanken", "de", ["prufung", "datenbanken"]),
        ("The Café's menu isn't naïve", "en", ["cafe", "menu", "naive"]),
        ("l'homme d\u2019água", "pt", ["homme", "agua"]),
        ("snake_case and CamelCase", "en", ["snake", "case", "camelcase"]),
        ("", "en", []),
    ],
    ids=["en-basic", "pt-accents-stop", "de-umlaut-stop", "en-contractions", "clitics", "underscore", "empty"],
)  # fmt: skip
def test_tokenize_normalises(text: str, lang: str, expected: list[str]) -> None:
    assert tokenize(text, lang=lang) == expected


def test_tokenize_flags_switch_steps_off() -> None:
    text = "The Élève's Courses"
    assert tokenize(text, lowercase=False, strip_accents=False, remove_stopwords=False) == [
        "The",
        "Élève",
        "Courses",
    ]
    # stop words are found whatever the case: "The" goes although the case is kept
    assert tokenize(text, lowercase=False) == ["Eleve", "Courses"]
    assert tokenize(text, stem=True) == ["elev", "cours"]


def test_stop_words_are_compared_after_accent_stripping() -> None:
    # "über" is in the German list; "uber" (accent stripped) must go too
    assert "über" in stopwords("de")
    assert tokenize("uber Über", lang="de") == []
    assert tokenize("uber Über", lang="de", strip_accents=False) == ["uber"]


def test_bundled_lists() -> None:
    langs = available_languages()
    assert {"en", "de", "pt"} <= set(langs)
    assert {"the", "and", "don't"} <= stopwords("en")
    assert {"und", "der", "nicht"} <= stopwords("de")
    assert {"não", "que", "uma"} <= stopwords("pt")
    assert "course" not in stopwords("en")
    assert stopwords("pt-BR") == stopwords("pt")
    # a language without a list removes nothing instead of failing
    assert stopwords("xx") == frozenset()
    assert stopwords("../en") == frozenset()
    assert tokenize("the cat", lang="xx") == ["the", "cat"]


@pytest.mark.parametrize(
    ("words", "lang", "expected"),
    [
        (["running", "courses"], "en", ["run", "cours"]),
        (["universitäten"], "de", ["universitat"]),
        (["bibliotecas"], "pt-BR", ["bibliotec"]),
        (["words"], "xx", ["words"]),
    ],
    ids=["en", "de", "pt-region", "unknown-unchanged"],
)
def test_stem(words: list[str], lang: str, expected: list[str]) -> None:
    assert stem(words, lang) == expected


def test_strip_accents_and_base_language() -> None:
    assert strip_accents("Ça coûte ½ — ß") == "Ca coute 1⁄2 — ß"
    assert base_language("EN_us") == "en"
