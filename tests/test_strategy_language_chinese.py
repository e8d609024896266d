"""zh-Hant against zh-Hans (issue 38 item 4): a crawl for one Chinese script is not fed the
other's pages, anchors or URLs; worked by hand on tiny pages."""

from __future__ import annotations

from pathlib import Path

import pytest

from focuscrawl.relevance.language import LanguageModel
from focuscrawl.relevance.language_links import url_language_for
from focuscrawl.strategies.language_kinds import kind_of
from focuscrawl.types import Page
from tests.test_strategy_language import _crawler, _next, _page, _scores

# the same sentence in each script: 這/这 個/个 設/设 說/说 ... are one-script characters
HANT = "這個設定檔案說明如何設定網頁伺服器，請先閱讀這個說明再開始設定。"
HANS = "这个设定档案说明如何设定网页伺服器，请先阅读这个说明再开始设定。"


def _text_page(text: str) -> Page:
    return Page(url="http://a.org/x", status=200, title="", text=text, links=[])


@pytest.mark.parametrize(
    ("target", "hant", "hans"),
    [(["zh-Hant"], 1.0, 0.0), (["zh-TW"], 1.0, 0.0), (["zh-Hans"], 0.0, 1.0), (["zh"], 1.0, 1.0),
     (["zh-TW", "zh-CN"], 1.0, 1.0)],
    ids=["zh-Hant", "zh-TW", "zh-Hans", "zh", "both"],
)  # fmt: skip
def test_the_language_model_reads_the_script_a_target_names(target: list[str], hant: float, hans: float) -> None:
    """The page score is the target share of the text (all Han here: 1.0), 0 when its
    one-script characters are the other script's; anchors likewise; undecided Han counts."""
    model = LanguageModel(target)
    assert [model.score(_text_page(HANT)), model.score(_text_page(HANS))] == [hant, hans]
    assert [model.score_text("繁體中文"), model.score_text("简体中文")] == [hant, hans]
    assert model.score_text("中文") == 1.0  # no one-script character: undecided, kept
    assert model.score(_text_page("日本語のページです")) == 0.0


def test_the_target_keeps_its_script() -> None:
    model = LanguageModel(["zh-TW"])
    assert model.target == ["zh-Hant"]
    assert LanguageModel(["zh", "ja"]).target == ["ja", "zh"]


def test_urls_naming_the_other_script_are_another_language() -> None:
    urls = ("http://a.org/faq/a.zh-cn.html", "http://a.org/faq/a.zh-tw.html", "http://a.org/zh/a.html")
    assert [url_language_for(u, "zh-Hant") for u in urls] == ["zh-Hans", "zh", "zh"]
    assert [url_language_for(u, None) for u in urls] == ["zh", "zh", "zh"]
    # one directory, two kinds in a zh-Hant crawl (measured apart), one in a zh crawl
    assert kind_of(urls[0], "zh-Hant") != kind_of(urls[1], "zh-Hant")
    assert kind_of(urls[0]) == kind_of(urls[1]) == "http://a.org/faq/ #zh"


def test_a_zh_hant_crawl_scores_the_other_scripts_links_low(tmp_path: Path) -> None:
    """Rule policy, target zh-Hant, seed in traditional Chinese. Scores by hand:
    a.zh-tw.html (English anchor, URL names zh-Hant) 0.75; a.zh-cn.html (URL names zh-Hans)
    0.0; p1 (anchor 繁體中文 passes the rule) 0.9; p2 (anchor 简体中文 fails it; a target
    page) 0.5. Target zh: 0.75, 0.75, 0.9, 0.9. The simplified page that follows is
    counted as zh-Hans, not as a target page: its link without a language scores 0.25."""
    seed, tw, cn = "http://a.org/", "http://a.org/faq/a.zh-tw.html", "http://a.org/faq/a.zh-cn.html"
    p1, p2, p3 = "http://a.org/p1", "http://a.org/p2", "http://a.org/p3"
    body = _page(HANT, (tw, "next"), (cn, "next"), (p1, "繁體中文"), (p2, "简体中文"))
    expected = {"zh-Hant": [0.75, 0.0, 0.9, 0.5], "zh": [0.75, 0.75, 0.9, 0.9]}
    for target, scores in expected.items():
        (tmp_path / target).mkdir()
        proc, store, strategy = _crawler(tmp_path / target, seed, target=[target])
        _next(proc, store, seed, body)
        assert _scores(store, tw, cn, p1, p2) == scores
        if target == "zh-Hant":
            _next(proc, store, p1, _page(HANS, (p3, "next")))
            assert strategy.counters()["pages_lang_zh-Hans"] == 1
            assert strategy.counters()["pages_lang_target"] == 1  # the seed only
            assert _scores(store, p3) == [0.25]
