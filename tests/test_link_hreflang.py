"""A link's own language evidence for the link-context score (issue 38 item 2):
``<a hreflang>`` parsed into ``Link.hreflang``; the language model reads a link by
the language its hreflang names, a language named in its own script (日本語, 简体中文)
as that language, and Han-only text on a page of Chinese as Chinese; P4's rule (the
language filter and strategy) reads links the same way."""

from __future__ import annotations

from focuscrawl.parse.html import parse_html
from focuscrawl.relevance.language import LanguageModel
from focuscrawl.strategies.filters import LanguageLinkFilter, Verdict
from focuscrawl.strategies.language import OTHER_PAGE, PASSED, LanguageStrategy
from focuscrawl.strategies.scoring import context_scores
from focuscrawl.types import Link, Page, QueuedURL


def test_a_hreflang_is_parsed_into_the_link() -> None:
    page = parse_html(
        "http://h.org/",
        '<body><p>Languages:</p><a hreflang="JA" href="/ja/">日本語</a> <a href="/x">x</a> '
        '<a hreflang=" zh-TW " href="/tw/">繁體中文</a> <a href="/ja/">again</a></body>',
    )
    assert [(k.url, k.hreflang, k.count) for k in page.links] == [
        ("http://h.org/ja/", "ja", 2),  # the first occurrence's, counted twice
        ("http://h.org/x", "", 1),
        ("http://h.org/tw/", "zh-tw", 1),
    ]


def _page(text: str, *links: Link) -> Page:
    return Page(url="http://h.org/", title="", text=text, links=list(links))


def _link(anchor: str, hreflang: str = "") -> Link:
    return Link(f"http://h.org/{len(anchor)}{hreflang}", anchor, anchor, hreflang=hreflang)


def test_the_language_model_reads_a_link_by_its_own_evidence() -> None:
    ja = LanguageModel(["ja"])
    chooser = _page(
        "Choose your language",
        _link("日本語", "ja"),  # hreflang: 1
        _link("繁體中文", "zh-tw"),  # hreflang zh: 0 (read as Japanese kanji before)
        _link("简体中文"),  # no hreflang, a language named in its own script: Chinese, 0
        _link("設定"),  # Han-only, on an English page: a Japanese crawl reads kanji as Japanese, 1
        _link("English", "x-default"),  # no language named: the text decides, 0
        _link("日本語", "fr"),  # the hreflang wins over the text: 0
    )
    assert context_scores(ja, chooser) == [1.0, 0.0, 0.0, 1.0, 0.0, 0.0]
    # the same kanji-only anchor on a page of Chinese (Han, no kana): Chinese, 0; on a
    # Japanese page (kana): Japanese, 1; a chooser's 日本語 on the Chinese page: 1
    chinese = _page("这是一个关于软件包的说明页面", _link("設定"), _link("日本語"))
    japanese = _page("これはパッケージの説明ページです", _link("設定"))
    assert (context_scores(ja, chinese), context_scores(ja, japanese)) == ([0.0, 1.0], [1.0])


def test_an_hreflang_names_one_chinese_script() -> None:
    hant = LanguageModel(["zh-Hant"])
    page = _page("Choose", _link("a", "zh-cn"), _link("b", "zh-tw"), _link("c", "zh"), _link("d", "zh-hant"),
                 _link("简体中文"), _link("繁體中文"))  # fmt: skip
    assert context_scores(hant, page) == [0.0, 1.0, 1.0, 1.0, 0.0, 1.0]


def test_p4_rule_reads_a_link_as_the_link_context_score_does() -> None:
    """P4's rule (the language filter, and so the ``language`` strategy) reads a link's
    hreflang, a language its anchor names and a Han-only anchor by the page's script,
    as eq. 9's link-context score does: one reading of a link's language."""
    rule = LanguageLinkFilter(target=["ja"])
    chooser = _page("Choose your language", _link("Nihongo", "ja"), _link("繁體中文", "zh-tw"), _link("設定"))
    chinese = _page("这是一个关于软件包的说明页面", _link("設定"), _link("日本語"), _link("Deutsch", "ja"))
    japanese = _page("これはパッケージの説明ページです", _link("設定"))
    for page in (chooser, chinese, japanese):
        kept = [k.anchor for k in rule.keep(page, page.links, Verdict(None))]
        assert kept == [k.anchor for k, s in zip(page.links, context_scores(LanguageModel(["ja"]), page), strict=True) if s]
    assert [k.anchor for k in rule.keep(chinese, chinese.links, Verdict(None))] == ["日本語", "Deutsch"]
    assert [k.anchor for k in rule.keep(chooser, chooser.links, Verdict(None))] == ["Nihongo", "設定"]


def test_the_language_strategy_queues_a_chinese_pages_kanji_links_after_the_rule() -> None:
    """On a page of Chinese a Japanese crawl's P4 rule no longer passes kanji-only
    anchors (before: read as Japanese, 0.9 like a Japanese anchor); they go to the soft
    fallback, scored as links of a foreign page."""
    strategy = LanguageStrategy(None, target=["ja"], prior_pages=0)  # the rule alone
    page = _page("这是一个关于软件包的说明页面", _link("設定"), _link("日本語"))
    scores = {ls.link.anchor: ls.score for ls in strategy.on_page(page, None, QueuedURL(page.url, 1.0, 0, "h.org")).links}
    assert scores == {"日本語": PASSED, "設定": OTHER_PAGE}


def test_link_text_anchor_reads_a_links_own_words_first() -> None:
    """``link_text = "anchor"``: eq. 9's language score reads a link's anchor when it has
    letters (an untranslated page's English title among Japanese ones), its context
    window when it has none; the default reads the window (its neighbours' words too)."""
    page = _page("これはパッケージの説明ページです",
                 Link("http://h.org/a", "Fog", "装飾フィルター 12.4. コーヒーの染み... 12.5. Fog"),
                 Link("http://h.org/b", "ぼかし", "Blur ぼかし"), Link("http://h.org/c", "", "装飾フィルター"))  # fmt: skip
    assert context_scores(LanguageModel(["ja"]), page) == [1.0, 1.0, 1.0]
    assert context_scores(LanguageModel(["ja"], link_text="anchor"), page) == [0.0, 1.0, 1.0]
