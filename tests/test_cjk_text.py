"""Text in scripts written without spaces (Chinese, Japanese, Thai) in every model's tokens.

Issue 38 item 6a: the keyword 認証 scored 0.0 on a page holding it 11 times, because
the keyword pattern needed word boundaries and CJK text has none; the shared
tokenizer turned a whole Japanese clause into one token, so cosine terms and
classifier features never matched inside it. The expected values are worked out
by hand below, not by the code.
"""

from __future__ import annotations

import re
import unicodedata

import pytest

from focuscrawl.exceptions import ConfigError, ModelError
from focuscrawl.relevance.base import build_model
from focuscrawl.relevance.classifier import ClassifierModel
from focuscrawl.relevance.cosine import CosineModel
from focuscrawl.relevance.keyword import KeywordModel
from focuscrawl.relevance.language import LanguageModel
from focuscrawl.relevance.lm_text import sentence_words
from focuscrawl.relevance.text import split_unsegmented, tokenize
from focuscrawl.strategies.filters import FILTERS
from focuscrawl.strategies.language import LanguageStrategy
from focuscrawl.types import Page

# a real sentence of the Apache httpd manual in Japanese, "認証" (authentication) 11 times
JA_TEXT = "Apache の認証方式を設定する。" + "基本認証とダイジェスト認証。" * 5


def test_cjk_runs_become_character_bigrams() -> None:
    # "認証方式" -> 認証, 証方, 方式 (Lucene's CJKBigramFilter); Latin and Hangul stay words
    assert tokenize("認証方式") == ["認証", "証方", "方式"]
    # Hangul words too: Korean attaches particles to its nouns (see below)
    assert tokenize("mod_rewrite モジュール 한국어 문서") == ["mod", "rewrite", "モジ", "ジュ", "ュー", "ール", "한국", "국어", "문서"]
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
    # Latin accents are optional and go; ガイド (guide) is not カイト (kite); 한국어 keeps its syllables
    assert tokenize("Élève ガイド 한국어", lang="ja") == ["eleve", "ガイ", "イド", "한국", "국어"]


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


# -- Korean: particles and endings attached to nouns ---------------------------------------
# "웹 서버의 인증을 설정합니다": set up the web server's authentication (인증 + object particle 을)
KO_TEXT = "웹 서버의 인증을 설정합니다. 인증서는 따로 관리합니다."


def test_a_korean_keyword_matches_before_a_particle() -> None:
    """A Korean keyword matched only as a whole space-delimited word: 인증 scored 0.0 on a
    page holding 인증을 and 인증서 (and 0.0 on every Korean page about authentication)."""
    assert KeywordModel(["인증"]).score_text(KO_TEXT) == 1.0
    assert KeywordModel(["인증", "암호"]).score_text(KO_TEXT) == 0.5  # 암호 (cipher) is absent
    # a Latin word takes a Korean particle too (API를: API + object particle)
    assert KeywordModel(["api"]).score_text("API를 호출합니다") == 1.0
    assert KeywordModel(["apache"]).score_text("apaches 설정") == 0.0


def test_korean_words_become_syllable_bigrams_for_cosine_terms() -> None:
    assert tokenize("인증을 설정") == ["인증", "증을", "설정"]
    model = CosineModel(content_terms=["인증"], gw=0.0, cw=1.0, gcw=0.0, uw=0.0, lang="ko")
    page = Page(url="http://a.example/x.html", text=KO_TEXT)
    assert model.similarities(page)["content"] == pytest.approx(1.0)
    assert model.similarities(Page(url="http://a.example/y.html", text="전혀 다른 주제"))["content"] == 0.0


# -- combining marks: Thai, Khmer, Indic vowel signs and tone marks ---------------------------
@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("हिन्दी भाषा", ["हिन्दी", "भाषा"]),  # Hindi: before, ह न द and भ ष (the vowel signs cut)
        ("ที่นี่", ["ที่นี่"]),  # Thai "here": two letters with their marks, one bigram; before ท, น
        ("ไปที่นี่", ["ไป", "ปที่", "ที่นี่"]),  # bigrams of letters, each with its marks
        ("العَرَبِيَّة", [unicodedata.normalize("NFC", "العَرَبِيَّة")]),  # Arabic with harakat: one word
    ],
    ids=["hindi", "thai", "thai-run", "arabic-harakat"],
)
def test_a_word_is_not_cut_at_its_combining_marks(text: str, tokens: list[str]) -> None:
    assert tokenize(text, lang="xx") == tokens


def test_the_language_models_words_keep_their_marks() -> None:
    """P2's LM read Thai letter by letter without their vowels and tone marks, so ที่
    (at) and ที (a classifier) and ท were one token; Hindi words fell apart."""
    assert sentence_words("ที่นี่ ทีนี") == ["ที่", "นี่", "ที", "นี"]
    assert sentence_words("हिन्दी भाषा") == ["हिन्दी", "भाषा"]


# -- one form for the same text: widths, composition, invisible characters -----------------
@pytest.mark.parametrize(
    ("keyword", "text"),
    [
        ("API", "ＡＰＩの説明"),  # full-width Latin, as Japanese text often writes it
        ("ガイド", "ﾕｰｻﾞｰｶﾞｲﾄﾞ"),  # half-width katakana
        ("café", "un cafe\u0301 noir"),  # decomposed é (NFD)
        ("ภาษาไทย", "เรียนภาษา\u200bไทย"),  # Thai with a zero width space between its words
        ("software", "soft\u00adware"),  # a soft hyphen
        ("ＡＰＩ", "APIの説明"),  # and the other way round: the keyword in another form
        ("ｶﾞｲﾄﾞ", "ユーザーガイド"),
        ("cafe\u0301", "un café noir"),
    ],
    ids=["full-width", "half-width-kana", "nfd", "zero-width-space", "soft-hyphen",
         "full-width-keyword", "half-width-keyword", "nfd-keyword"],
)  # fmt: skip
def test_a_keyword_matches_the_same_text_in_another_form(keyword: str, text: str) -> None:
    assert KeywordModel([keyword]).score_text(text) == 1.0


def test_tokens_and_lm_words_are_the_same_in_either_form() -> None:
    assert tokenize("認\u200b証方式") == tokenize("認証方式") == ["認証", "証方", "方式"]
    assert sentence_words("ＡＰＩ の設定") == sentence_words("API の設定") == ["api", "の", "設", "定"]
    assert sentence_words("cafe\u0301") == sentence_words("café") == ["café"]


# -- the language of stop words and stemmers -----------------------------------------------
def test_a_models_words_language_is_read_in_any_form() -> None:
    """The cosine model refused lang=DE, de-DE and ja (no stop-word list by that exact
    name), while the classifier took lang=english or jpn and meant nothing by it."""
    model = build_model({"name": "cosine", "content_terms": ["die Katze und der Hund"], "lang": "de-DE"})
    assert isinstance(model, CosineModel)
    assert model.terms("content") == ["katze hund"]  # German stop words removed
    assert build_model({"name": "cosine", "content_terms": ["認証"], "lang": "ja"}).terms("content") == ["認証"]
    with pytest.raises(ConfigError, match=r"cosine model: lang: unknown language code 'english'.*nearest: en \(English\)"):
        build_model({"name": "cosine", "content_terms": ["x"], "lang": "english"})
    with pytest.raises(ConfigError, match=r"classifier: lang: unknown language code 'english'"):
        ClassifierModel(lang="english")
    assert ClassifierModel(lang="EN").lang == "en"



def test_a_one_letter_chinese_or_korean_term_is_counted_inside_a_run() -> None:
    """A cosine term of one Han letter (猫, cat) never matched: runs are cut into
    bigrams, and no bigram is 猫. Each 猫 of the page counts once, by hand: 3 here."""
    page = Page(url="http://a.example/x.html", text="这是关于猫的页面。我爱猫。猫")
    model = CosineModel(content_terms=["猫", "页面"], gw=0.0, cw=1.0, gcw=0.0, uw=0.0, lang="zh")
    # counts (3, 1) against weights (1, 1): cosine = (3 + 1) / (sqrt(10) * sqrt(2))
    assert model.similarities(page)["content"] == pytest.approx(4 / (10**0.5 * 2**0.5))
    # a Korean one-syllable noun with its particle: 책을 (book + object particle)
    korean = CosineModel(content_terms=["책"], gw=0.0, cw=1.0, gcw=0.0, uw=0.0, lang="ko")
    assert korean.similarities(Page(url="http://a.example/k.html", text="책을 읽습니다"))["content"] == pytest.approx(1.0)
