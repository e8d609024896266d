"""Language identification: scripts, anchors, TLD table, pages of multilingual-dev."""

from __future__ import annotations

from pathlib import Path

import pytest

from focuscrawl.exceptions import ModelError
from focuscrawl.parse.html import page_from_bytes
from focuscrawl.relevance.base import build_model, judge, load_model, save_model
from focuscrawl.relevance.language import (
    BACKENDS,
    LanguageModel,
    anchor_language,
    normalise_lang,
    page_language,
    script_counts,
    script_of,
    text_language,
)
from focuscrawl.relevance.language_links import TLD_LANGUAGES, tld_language, tld_languages
from focuscrawl.relevance.language_share import language_shares
from focuscrawl.relevance.scripts import chinese_script
from focuscrawl.replay.archive import iter_responses, load_labels
from focuscrawl.strategies.filters import FILTERS
from focuscrawl.strategies.language import LanguageStrategy
from focuscrawl.types import Link, Page
from tests.conftest import TESTWEB


@pytest.mark.parametrize(
    ("text", "script"),
    [
        ("한국어", "ko"),
        ("ひらがな", "ja"),
        ("カタカナ", "ja"),
        ("中文", "han"),
        ("漢字と仮名", "ja"),  # one kana is enough
        ("韓國語 한국어", "ko"),  # Hanja with Hangul is Korean
        ("mod_rewrite モジュール", "ja"),
        ("Привет мир", "cyrillic"),
        ("Γειά σου", "greek"),
        ("Straße", "latin"),
        ("李・王", "han"),  # the katakana middle dot alone is no kana
        ("2.4 — ?", None),
    ],
    ids=["hangul", "hiragana", "katakana", "han", "kanji-kana", "hanja", "mixed-ja", "cyrillic",
         "greek", "latin", "middle-dot", "no-letters"],
)  # fmt: skip
def test_script_of(text: str, script: str | None) -> None:
    assert script_of(text) == script


def test_script_counts_by_hand() -> None:
    assert script_counts("ab 中文 ひら") == {"latin": 2, "han": 2, "kana": 2}


@pytest.mark.parametrize(
    ("text", "context", "lang"),
    [
        ("한국어", None, "ko"),
        ("ひらがな", None, "ja"),
        ("中文", None, "zh"),
        ("設定", "ja", "ja"),  # Han only: the context decides
        ("設定", "zh-tw", "zh"),
        ("", None, None),
        ("Der schnelle braune Fuchs", None, "de"),
    ],
    ids=["ko", "ja", "zh", "han-ja-context", "han-zh-context", "empty", "latin"],
)
def test_anchor_language(text: str, context: str | None, lang: str | None) -> None:
    assert anchor_language(text, context=context) == lang


def test_anchor_language_candidates() -> None:
    # alone "Module" is German to py3langid; over {en, fr} it must be one of them
    assert anchor_language("Module", candidates=["en", "fr"]) in ("en", "fr")
    assert anchor_language("Привет мир", candidates=["ru", "en"]) == "ru"


@pytest.mark.parametrize(
    ("host", "lang"),
    [
        ("www.example.cn", "zh"), ("example.com.tw", "zh"), ("www.hku.hk", "zh"),
        ("www.asahi.co.jp", "ja"), ("naver.co.kr", "ko"), ("zeit.de", "de"), ("orf.at", "de"),
        ("admin.ch", "de"), ("lemonde.fr", "fr"), ("http://x.ru:8080/p", "ru"),
        ("example.com", None), ("localhost", None), ("bbc.co.uk", "en"),
    ],
    ids=lambda v: str(v),
)  # fmt: skip
def test_tld_language(host: str, lang: str | None) -> None:
    assert tld_language(host) == lang


def test_tld_table_shape() -> None:
    assert len(TLD_LANGUAGES) >= 60
    assert tld_languages("admin.ch") == ("de", "fr", "it")
    assert tld_languages("x.be") == ("nl", "fr")
    for tld, langs in TLD_LANGUAGES.items():
        assert tld.isalpha(), tld
        assert len(tld) == 2, tld
        assert langs, tld
        assert all(len(lang) in (2, 3) and lang.isalpha() for lang in langs), tld


@pytest.mark.parametrize(
    ("code", "norm"),
    [("zh-CN", "zh"), ("zh-tw", "zh"), ("yue", "zh"), ("pt-br", "pt"), ("EN", "en"), ("un", "und")],
    ids=["zh-cn", "zh-tw", "yue", "pt-br", "upper", "unknown"],
)
def test_normalise_lang(code: str, norm: str) -> None:
    assert normalise_lang(code) == norm


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    ("text", "lang"),
    [
        ("Der schnelle braune Fuchs springt über den faulen Hund und läuft davon.", "de"),
        ("Le renard brun rapide saute par-dessus le chien paresseux et s'enfuit.", "fr"),
        ("これは日本語の文章です。言語を識別するためのテストです。", "ja"),
        ("這是繁體中文的句子，我們用它來測試語言識別的功能。", "zh"),
        ("이것은 언어 식별을 시험하기 위한 한국어 문장입니다.", "ko"),
    ],
    ids=["de", "fr", "ja", "zh-hant", "ko"],
)
def test_text_language(backend: str, text: str, lang: str) -> None:
    found, confidence = text_language(text, backend)
    assert found == lang
    assert 0.5 <= confidence <= 1.0


def test_text_language_empty_and_bad_backend() -> None:
    assert text_language("   ") == ("und", 0.0)
    with pytest.raises(ModelError):
        text_language("hello", backend="nope")


def _page(text: str, url: str = "http://example.org/") -> Page:
    return Page(url=url, title="", text=text)


def test_language_model_scores() -> None:
    ja = _page("これは日本語の文章です。言語を識別するためのテストです。")
    en = _page("This is an English sentence about the web server configuration files.")
    model = LanguageModel(["ja"])
    assert (model.score(ja), model.score(en)) == (1.0, 0.0)
    assert model.han_context == "ja"  # a ja target reads kanji-only anchors as Japanese
    assert model.score_text("設定") == 1.0
    assert model.score_text("설정") == 0.0
    assert model.score_link("http://www.example.co.jp/x", "English words") == 1.0  # P4: .jp queued
    assert model.score_link("http://example.com/x", "日本語のページ") == 1.0  # P4: anchor in ja
    assert model.score_link("http://example.com/x", "home") == 0.0
    prob = LanguageModel(["ja"], backend="py3langid", probability=True, decide="top")
    assert prob.score(ja) > 0.9
    assert prob.score(en) < 0.1
    strict = LanguageModel(["en"], min_confidence=1.01, decide="top")  # none reaches it
    assert strict.score(en) == 0.0
    zh = LanguageModel(["zh-tw"])
    assert (zh.target, zh.han_context, zh.score_text("設定")) == (["zh-Hant"], None, 1.0)  # zh-TW is written in Hant


def test_share_rule_by_hand() -> None:
    # 10 Hangul syllables (30 bytes) + 32 Latin letters: Korean is 30/62 of the text
    mixed = _page("설정 파일 httpd.conf 을 편집합니다 and then restart the server")
    ko = LanguageModel(["ko"])
    assert (ko.decide, ko.threshold) == ("share", 0.25)
    assert ko.score(mixed) == pytest.approx(30 / 62)
    assert judge(ko, mixed) == (pytest.approx(30 / 62), True)
    top = LanguageModel(["ko"], decide="top")  # the best language is English
    assert (top.threshold, top.score(mixed)) == (0.5, 0.0)
    # kana marks Han as Japanese; without kana, Han goes to han_context or zh
    assert language_shares("設定ファイル") == {"ja": 1.0}
    assert language_shares("设置文件") == {"zh": 1.0}
    assert language_shares("設定", han_context="ja") == {"ja": 1.0}
    assert language_shares("1 2 3 !") == {}
    # 4 Han + 1 kana: kana is 20 % >= 5 %, so all 5 characters are Japanese
    assert LanguageModel(["zh"]).score(_page("環境設定の")) == 0.0
    # a ja-only target reads kanji-only *anchors* as Japanese, but not a Chinese page
    assert LanguageModel(["ja"]).han_context == "ja"
    assert LanguageModel(["ja"]).score(_page("设置文件和服务器的配置")) == 0.0
    with pytest.raises(ModelError, match="decide"):
        LanguageModel(["ko"], decide="best")


def test_anchor_candidates_and_page_context() -> None:
    model = LanguageModel(["de"])
    assert model.anchor_candidates == ["de", "en"]
    assert model.score_text("Erste Schritte mit dem Server") == 1.0
    assert model.score_text("Getting started with the server") == 0.0
    ja = LanguageModel(["ja", "zh"])  # both targets: no default Han context
    assert ja.han_context is None
    page = Page(
        url="http://example.org/", lang="ja", text="日本語のページ",
        links=[Link("http://a.test/", "設定"), Link("http://b.test/", "Setup guide")],
    )  # fmt: skip
    only_ja = LanguageModel(["ja"], han_context="ko")  # wrong context by hand: a given one wins
    assert [only_ja.score_link(link.url, link.anchor, page.lang) for link in page.links] == [1.0, 0.0]
    assert only_ja.score_text("設定") == 0.0  # read in the configured context (ko)


def test_language_model_config_and_save(tmp_path: Path) -> None:
    model = build_model({"name": "language", "target": "ja,ko", "backend": "py3langid"})
    assert isinstance(model, LanguageModel)
    save_model(model, tmp_path / "m")
    loaded = load_model(tmp_path / "m")
    assert isinstance(loaded, LanguageModel)
    assert (loaded.target, loaded.backend) == (["ja", "ko"], "py3langid")
    with pytest.raises(ModelError):
        LanguageModel(["ja"], backend="nope")
    with pytest.raises(ModelError):
        LanguageModel([])
    with pytest.raises(ModelError):
        LanguageModel.load(tmp_path)


@pytest.fixture(scope="module")
def multilingual() -> tuple[dict[str, Page], dict[str, dict[str, object]]]:
    """Every real translation of multilingual-dev whose URL hash falls in a 1-in-3 sample."""
    if not TESTWEB.is_dir():
        pytest.skip("shared test web not found")
    labels = load_labels(TESTWEB / "multilingual-dev.labels.jsonl")
    pages: dict[str, Page] = {}
    for record in iter_responses(TESTWEB / "multilingual-dev.warc.gz"):
        label = labels[record.url]
        if "alias_of" in label or (sum(record.url.encode()) % 3 and "/bind.html" not in record.url):
            continue
        page = page_from_bytes(record.url, record.body, record.content_type)
        if normalise_lang(page.lang) == normalise_lang(str(label["lang_dir"])):
            pages[record.url] = page
    return pages, labels


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    ("path", "lang", "charset"),
    [
        ("ko/bind.html", "ko", "euc-kr"),
        ("ja/bind.html", "ja", "utf-8"),
        ("fr/bind.html", "fr", "utf-8"),
    ],
    ids=["ko-euc-kr", "ja", "fr"],
)
def test_real_pages(
    multilingual: tuple[dict[str, Page], dict[str, dict[str, object]]],
    backend: str,
    path: str,
    lang: str,
    charset: str,
) -> None:
    page = multilingual[0]["https://httpd.apache.org/docs/2.4/" + path]
    assert page.charset == charset
    found, confidence = page_language(page, backend)
    assert found == lang
    assert confidence > 0.5


@pytest.mark.parametrize("backend", BACKENDS)
def test_page_accuracy_on_a_sample(
    multilingual: tuple[dict[str, Page], dict[str, dict[str, object]]], backend: str
) -> None:
    pages, labels = multilingual
    assert len(pages) >= 200
    hits = [
        page_language(p, backend)[0] == normalise_lang(str(labels[u]["lang_dir"]))
        for u, p in pages.items()
    ]
    # full set (bench_language.py): 0.978 (cld2), 0.977 (py3langid) on 821 real translations
    assert sum(hits) / len(hits) >= 0.95


def test_cjk_anchor_accuracy_on_a_sample(
    multilingual: tuple[dict[str, Page], dict[str, dict[str, object]]],
) -> None:
    scripts = {"ja": ("kana", "han"), "zh": ("han",), "ko": ("hangul",)}
    items = set()
    for page in multilingual[0].values():
        lang = normalise_lang(page.lang)
        for link in page.links:
            if lang in scripts and any(s in script_counts(link.anchor) for s in scripts[lang]):
                items.add((link.anchor, lang))
    assert len(items) >= 100
    assert {lang for _, lang in items} == {"ja", "ko", "zh"}
    with_context = sum(anchor_language(a, context=lang) == lang for a, lang in items) / len(items)
    without = sum(anchor_language(a) == lang for a, lang in items) / len(items)
    assert with_context == 1.0  # full set: 1.000 for ja, zh and ko
    assert without < with_context  # kanji-only Japanese anchors read as zh without context


def test_chinese_script_counts_the_one_script_characters() -> None:
    # 繁體中文說明: 體 and 說 traditional only, 繁 中 文 明 in both scripts; 2 vs 0
    assert chinese_script("繁體中文說明") == "zh-Hant"
    # 简体中文说明: 体 and 说 simplified only; 0 vs 2
    assert chinese_script("简体中文说明") == "zh-Hans"
    # 資料庫设置: 資, 庫 traditional (2), 设 simplified (1) -> traditional
    assert chinese_script("資料庫设置") == "zh-Hant"
    # 網页: one of each -> undecided; 中文文件: none -> undecided
    assert chinese_script("網页") is None
    assert chinese_script("中文文件") is None
    # Latin and kana letters count for neither
    assert chinese_script("Apache 設定 モジュール") == "zh-Hant"
    assert chinese_script("mod_rewrite") is None


# a sentence each in scripts the script table did not hold: their letters were no letters,
# so a page in them was in no language (share 0.0 for its own language's crawl)
KHMER = "ខ្ញុំចូលចិត្តអានសៀវភៅនៅក្នុងបណ្ណាល័យរៀងរាល់ថ្ងៃ ហើយខ្ញុំរៀនភាសាខ្មែរជាមួយមិត្តភក្តិរបស់ខ្ញុំ"
BENGALI = "আমি প্রতিদিন সকালে বই পড়তে ভালোবাসি এবং আমার বন্ধুদের সাথে বাংলা ভাষায় কথা বলি"
GEORGIAN = "მე ყოველ დილით ვკითხულობ წიგნებს და ჩემს მეგობრებთან ერთად ქართულად ვლაპარაკობ"


@pytest.mark.parametrize(
    ("text", "script", "lang"),
    [(KHMER, "khmer", "km"), (BENGALI, "bengali", "bn"), (GEORGIAN, "georgian", "ka")],
    ids=["khmer", "bengali", "georgian"],
)
def test_a_page_in_a_script_beyond_cjk_is_in_its_language(text: str, script: str, lang: str) -> None:
    assert script_of(text) == script
    page = Page(url="http://a.example/", text=text)
    assert LanguageModel([lang]).score(page) > 0.9  # 0.0 before: no letters
    assert LanguageModel(["en"]).score(page) < 0.1
    # with as many English letters beside it, about half of the page is in its language
    mixed = Page(url="http://a.example/", text=text + " " + "I like reading books in the library every day " * 3)
    assert 0.3 < LanguageModel([lang]).score(mixed) < 0.9


@pytest.mark.parametrize(
    "params",
    [{"han_context": "jp"}, {"anchor_candidates": ["ja", "english"]}],
    ids=["han-context", "anchor-candidates"],
)
def test_every_language_code_of_the_model_is_checked(params: dict[str, object]) -> None:
    """han_context=jp was taken and meant nothing: kanji-only anchors were read as
    Chinese in a crawl that asked for them to be read as Japanese."""
    with pytest.raises(ModelError, match=r"language model: unknown language code '(jp|english)'.*nearest"):
        build_model({"name": "language", "target": ["zh", "ja"], **params})
    # a tag in another form is the language: 設定 read as Japanese in a Japanese crawl
    model = build_model({"name": "language", "target": ["ja"], "han_context": "JA-jp"})
    assert isinstance(model, LanguageModel)
    assert model.score_text("設定") == 1.0
    assert model.han_context == "ja"


@pytest.mark.parametrize(
    ("code", "lang"),
    [("jpn", "ja"), ("JPN", "ja"), ("kor", "ko"), ("zho", "zh"), ("chi", "zh"), ("deu", "de"),
     ("ger", "de"), ("tha", "th"), ("khm", "km"), ("fil", "tl"), ("nob", "no")],
)  # fmt: skip
def test_a_three_letter_iso_639_code_is_its_language(code: str, lang: str) -> None:
    """target=jpn was refused as an unknown code whose nearest was not ja."""
    assert LanguageModel([code]).target == [lang]
    assert LanguageStrategy(None, target=[code]).targets == {lang}
    assert FILTERS.get("language")(None, target=[code]).targets == {lang}


@pytest.mark.parametrize(("code", "meaning"), [("zxx", "no linguistic content"), ("und", "undetermined"),
                                               ("MUL", "multiple languages")])  # fmt: skip
def test_a_code_that_names_no_language_is_refused_as_such(code: str, meaning: str) -> None:
    """target=zxx was taken (a backend knows the code) and crawled for pages of no
    language; und was refused as a typo of Rundi ("nearest: rn")."""
    with pytest.raises(ModelError, match=rf"'{code}' \({meaning}\) names no language to crawl for"):
        build_model({"name": "language", "target": [code]})
    with pytest.raises(ModelError, match="names no language to crawl for"):
        build_model({"name": "language", "target": ["ja"], "han_context": code})
