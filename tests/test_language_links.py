"""The language a link's URL names (issue 38 item 2), the language filter's ``any`` rule
and ``--filter`` on the command line (item 6c)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from focuscrawl.cli import main as cli_main
from focuscrawl.relevance.language_links import url_language
from focuscrawl.strategies.filters import FILTERS, Verdict
from focuscrawl.types import Link, Page
from tests.archives import write_archive


@pytest.mark.parametrize(
    ("url", "lang"),
    [
        ("http://httpd.apache.org/docs/2.4/ja/mod/core.html", "ja"),  # path segment
        ("http://www.debian.org/doc/manuals/debian-reference/index.zh-tw.html", "zh"),  # file name
        ("http://help.gnome.org/users/gnome-help/stable/a11y.html.ko", "ko"),  # after the extension
        ("http://manpages.debian.org/bookworm/manpages-ja/ls.1.ja.html", "ja"),
        ("http://example.com/docs?hl=zh-CN", "zh"),  # query
        ("http://example.com/docs?locale=ko_KR", "ko"),
        ("http://ja.wikipedia.org/wiki/X", "ja"),  # host
        ("http://example.com/zh_TW/guide/", "zh"),  # region, underscore
        ("http://example.com/jp/products/", "ja"),  # a country code used for the language
        ("http://example.com/it/jobs", None),  # /it/ is more often IT than Italian
        ("http://example.com/id/123", None),  # and /id/ an identifier
        ("http://example.com/index.html", None),
        ("http://example.com/ja/page?lang=en", "en"),  # the query is the most specific
        ("http://www.example.com/", None),
        # a script and a region, a numeric region, a locale's modifier (b51 left them: None)
        ("http://example.com/zh-Hant-TW/guide/", "zh"),
        ("http://example.com/sr-Latn-RS/", "sr"),
        ("http://example.com/es-419/ayuda/", "es"),
        ("http://help.gnome.org/users/gnome-help/stable/index.html.sr@latin", "sr"),
        ("http://example.com/docs/ca@valencia/", "ca"),
        ("http://example.com/ab-cdefg-hi/", None),  # no tag: a script has four letters
    ],
)
def test_url_language_by_the_documented_table(url: str, lang: str | None) -> None:
    assert url_language(url) == lang


def test_the_any_rule_keeps_links_whose_url_names_the_target() -> None:
    page = Page(url="http://hub.example/", text="English portal")
    links = [
        Link("http://docs.example/ja/"),
        Link("http://docs.example/de/"),
        Link("http://x.jp/", anchor="Home"),
    ]
    p4 = FILTERS.get("language")(None, target=["ja"])
    anyrule = FILTERS.get("language")(None, target=["ja"], rule="any")
    assert [link.url for link in p4.keep(page, links, Verdict(None))] == ["http://x.jp/"]
    kept = anyrule.keep(page, links, Verdict(None))
    assert [link.url for link in kept] == ["http://docs.example/ja/", "http://x.jp/"]


def _archive(path: Path) -> Path:
    pages = {
        "http://hub.example/": "<a href='/ja/'>Japanese</a> <a href='/de/'>Deutsch</a> <a href='/en/'>English</a>",
        "http://hub.example/ja/": "<p>日本語のページです。</p>",
        "http://hub.example/de/": "<p>Eine deutsche Seite.</p>",
        "http://hub.example/en/": "<p>An English page.</p>",
    }
    return write_archive(
        path, {url: f"<html><body>{text}</body></html>" for url, text in pages.items()}
    )


def test_filter_on_the_command_line(tmp_path: Path) -> None:
    archive = _archive(tmp_path / "w.warc.gz")
    out = tmp_path / "run"
    args = ["simulate", "--archive", str(archive), "--seeds", "http://hub.example/", "--out", str(out),
            "--no-robots", "--delay", "0", "-q", "--filter", "language:target=ja,rule=any"]  # fmt: skip
    assert cli_main(args) == 0
    urls = [json.loads(line)["url"] for line in (out / "pages.jsonl").open()]
    assert urls == ["http://hub.example/", "http://hub.example/ja/"]
    run = json.loads((out / "run.json").read_text())
    assert run["settings"]["filters"] == [{"name": "language", "target": "ja", "rule": "any"}]


@pytest.mark.parametrize(
    ("option", "message"),
    [
        (":target=ja", "give a filter's name"),
        ("langage:target=ja", "langage"),
        ("language:target=jp", "'jp'"),
    ],
)
def test_a_bad_filter_is_one_line(
    tmp_path: Path, option: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    archive = _archive(tmp_path / "w.warc.gz")
    args = ["simulate", "--archive", str(archive), "--seeds", "http://hub.example/", "--out", str(tmp_path / "r"),
            "--filter", option]  # fmt: skip
    assert cli_main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert message in err[0]


def test_a_chinese_urls_script_is_read_past_its_region() -> None:
    from focuscrawl.relevance.language_links import url_language_for

    # zh-Hant-TW names traditional Chinese: a crawl for zh-Hans leaves it; zh-Hans-CN is its own
    assert url_language_for("http://example.com/zh-Hant-TW/a.html", "zh-Hans") == "zh-Hant"
    assert url_language_for("http://example.com/zh-Hans-CN/a.html", "zh-Hans") == "zh"
