"""Text in scripts written without spaces (Chinese, Japanese, Thai) in every model's tokens.

Issue 38 item 6a: the keyword 認証 scored 0.0 on a page holding it 11 times, because
the keyword pattern needed word boundaries and CJK text has none; the shared
tokenizer turned a whole Japanese clause into one token, so cosine terms and
classifier features never matched inside it. The expected values are worked out
by hand below, not by the code.
"""

from __future__ import annotations

import re

import pytest

from focuscrawl.exceptions import ConfigError, ModelError
from focuscrawl.relevance.cosine import CosineModel
from focuscrawl.relevance.keyword import KeywordModel
from focuscrawl.relevance.language import LanguageModel
from focuscrawl.relevance.text import split_unsegmented, tokenize
from focuscrawl.strategies.filters import FILTERS
from focuscrawl.strategies.language import LanguageStrategy
from focuscrawl.types import Page

# a real sentence of the Apache httpd manual in Japanese, "認証" (authentication) 11 times
JA_TEXT = "Apache の認証方式を設定する。" + "基本認証とダイジェスト認証。" * 5


def test_cjk_runs_become_character_bigrams() -> None:
    # "認証方式" -> 認証, 証方, 方式 (Lucene's CJKBigramFilter); Latin and Hangul stay words
    assert tokenize("認証方式") == ["認証", "証方", "方式"]
    assert tokenize("mod_rewrite モジュール 한국어 문서") == ["mod", "rewrite", "モジ", "ジュ", "ュー", "ール", "한국어", "문서"]
    assert split_unsegmented("字") == ["字"]
    assert tokenize("ภาษา") == ["ภา", "าษ", "ษา"]


def test_japanese_keyword_matches_inside_unspaced_text() -> None:
    assert JA_TEXT.count("認証") == 11
    model = KeywordModel(["認証"])
    assert model.score(Page(url="http://a.example/", title="", text=JA_TEXT)) == 1.0
    # one of two keywords present -> 1/2; an absent one adds nothing
    assert KeywordModel(["認証", "暗号"]).score_text(JA_TEXT) == 0.5


def test_latin_keywords_keep_their_word_boundaries_beside_cjk() -> None:
    # "apache" is a word here although the next letter (の) is a \w character
    assert KeywordModel(["apache"]).score_text("apacheの設定") == 1.0
    # but still not a part of a longer Latin word
    assert KeywordModel(["pache"]).score_text("apacheの設定") == 0.0
    assert KeywordModel(["apache"]).score_text("apaches") == 0.0


def test_cosine_term_in_japanese_matches_a_page() -> None:
    # one content term against one page: a single dimension, so the cosine is 1 when present
    model = CosineModel(content_terms=["認証"], gw=0.0, cw=1.0, gcw=0.0, uw=0.0, lang="ja")
    page = Page(url="http://a.example/x.html", text=JA_TEXT)
    assert model.similarities(page)["content"] == pytest.approx(1.0)
    other = Page(url="http://a.example/y.html", text="全く別の話題です。")
    assert model.similarities(other)["content"] == 0.0


def test_accent_stripping_keeps_kana_voicing_and_hangul() -> None:
    # Latin accents are optional and go; ガイド (guide) is not カイト (kite); 한국어 stays whole
    assert tokenize("Élève ガイド 한국어", lang="ja") == ["eleve", "ガイ", "イド", "한국어"]


@pytest.mark.parametrize(
    ("code", "nearest"),
    [("jp", "ja (Japanese)"), ("japanese", "ja (Japanese)"), ("kr", "ko (Korean)"), ("chinese", "zh (Chinese)")],
)
def test_unknown_language_codes_are_refused_with_the_nearest(code: str, nearest: str) -> None:
    """Issue 38 item 6b: target=jp crawled 300 URLs at harvest 0.000 with exit 0."""
    with pytest.raises(ModelError, match=rf"unknown language code '{code}'.*nearest: {re.escape(nearest)}"):
        LanguageModel([code])
    with pytest.raises(ConfigError, match=rf"unknown language code '{code}'"):
        LanguageStrategy(None, target=[code])
    with pytest.raises(ConfigError, match=rf"unknown language code '{code}'"):
        FILTERS.get("language")(None, target=[code])
    # the tags themselves, in any case and with a region, are taken
    assert LanguageModel(["JA", "zh-TW", "ko-KR"]).target == ["ja", "ko", "zh-Hant"]  # zh-TW: the script kept
