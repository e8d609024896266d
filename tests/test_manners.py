"""A page's own manners (issue 36, item 1): noindex / nofollow / none of
``<meta name="robots">``, ``<meta name="focuscrawl">`` and ``X-Robots-Tag`` (its
``useragent:`` form too), and links with ``rel`` nofollow, ugc or sponsored;
obeyed by default, each with its setting (docs/standards.md, "Page manners")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from focuscrawl.api import crawl_async
from focuscrawl.parse.html import parse_html
from focuscrawl.parse.manners import directives, header_directives, page_manners
from tests.sites import html, respond, serve


def _page(head: str, child: str) -> str:
    return f'<html><head>{head}</head><body><p>cat page</p><a href="{child}">next</a></body></html>'


ROUTES = {
    "/": html(
        "<p>cat home</p>"
        '<a href="/noindex.html">a</a> <a href="/nofollow.html">b</a> <a href="/none.html">c</a>'
        '<a href="/header-none.html">d</a> <a href="/other-bot.html">e</a> <a href="/our-bot.html">f</a>'
        '<a href="/own-meta.html">g</a> <a href="/unknown.html">h</a>'
        '<a href="/rel-nofollow.html" rel="nofollow">i</a> <a href="/rel-ugc.html" rel="UGC external">j</a>'
        '<a href="/rel-sponsored.html" rel="sponsored">k</a> <a href="/rel-other.html" rel="noopener">l</a>'
    ),
    "/noindex.html": html(_page('<meta name="robots" content="NOINDEX, follow">', "/noindex-child.html")),
    "/nofollow.html": html(_page('<meta name="robots" content="nofollow">', "/nofollow-child.html")),
    "/none.html": html(_page('<meta name="Robots" content="none">', "/none-child.html")),
    "/header-none.html": respond(_page("", "/header-child.html"), headers={"X-Robots-Tag": "none"}),
    "/other-bot.html": respond(_page("", "/other-bot-child.html"), headers={"X-Robots-Tag": "otherbot: noindex, nofollow"}),
    "/our-bot.html": respond(_page("", "/our-bot-child.html"), headers={"X-Robots-Tag": "FocusCrawl: nofollow"}),
    "/own-meta.html": html(_page('<meta name="focuscrawl" content="noindex, nofollow">', "/own-child.html")),
    "/unknown.html": respond(_page("", "/unknown-child.html"), headers={"X-Robots-Tag": "noai, noimageai"}),
}  # fmt: skip
CHILDREN = ["/noindex-child.html", "/nofollow-child.html", "/none-child.html", "/header-child.html",
            "/other-bot-child.html", "/our-bot-child.html", "/own-child.html", "/unknown-child.html"]  # fmt: skip
REL = ["/rel-nofollow.html", "/rel-ugc.html", "/rel-sponsored.html"]
NOINDEX = {"/noindex.html", "/none.html", "/header-none.html", "/own-meta.html"}
NOFOLLOWED = {"/nofollow-child.html", "/none-child.html", "/header-child.html", "/our-bot-child.html",
              "/own-child.html"}  # fmt: skip


async def _crawl(tmp_path: Path, fetch: dict[str, Any], model: bool) -> tuple[list[str], dict[str, Any], Any]:
    async with serve(dict(ROUTES), fallback=html("<p>cat leaf</p>")) as site:
        stats = await crawl_async(
            tmp_path / "run", [site.url("/")],
            overrides={"crawl": {"max_pages": 100}, "fetch": {"delay": 0, "allow_private": ("127.0.0.1",), **fetch}},
            model={"name": "keyword", "keywords": ["cat"]} if model else None,
        )  # fmt: skip
        paths = site.paths()
    rows = [json.loads(line) for line in (tmp_path / "run" / "pages.jsonl").read_text().splitlines()]
    marked = {row["url"].split("/", 3)[3] for row in rows if row.get("noindex")}
    counters = json.loads((tmp_path / "run" / "run.json").read_text())["summary"]["counters"]
    return paths, {"noindex": {"/" + m for m in marked}, "counters": counters}, stats


@pytest.mark.parametrize("model", [False, True], ids=["links-only-parse", "full-parse"])
async def test_manners_are_obeyed_by_default(tmp_path: Path, model: bool) -> None:
    paths, out, stats = await _crawl(tmp_path, {}, model)
    fetched = set(paths)
    # every page is fetched and archived, noindex ones too; nofollow pages' links and
    # rel nofollow / ugc / sponsored links are not followed
    assert set(ROUTES) <= fetched
    assert fetched & (NOFOLLOWED | set(REL)) == set()
    assert set(CHILDREN) - NOFOLLOWED <= fetched
    assert "/rel-other.html" in fetched
    assert out["noindex"] == NOINDEX
    counters = out["counters"]
    assert counters["manners_noindex"] == 4
    assert counters["manners_nofollow"] == 5
    assert counters["link_rejected_nofollow"] == 3
    assert counters["manners_unknown_directive"] == 2
    if model:  # every page holds "cat": the noindex ones are left out of the counts
        assert stats.judged == stats.relevant == stats.pages - len(NOINDEX)


async def test_manners_settings_turn_each_rule_off(tmp_path: Path) -> None:
    fetch = {"obey_noindex": False, "obey_nofollow": False, "follow_nofollow_links": True}
    paths, out, _ = await _crawl(tmp_path, fetch, False)
    assert set(ROUTES) | set(CHILDREN) | set(REL) <= set(paths)
    assert out["noindex"] == set()


@pytest.mark.parametrize(
    ("head", "header", "expected"),
    [
        ('<meta name="robots" content="noindex">', "", (True, False)),
        ('<meta name="ROBOTS" content="NoFollow">', "", (False, True)),
        ('<meta name="robots" content="none">', "", (True, True)),
        ('<meta name="robots" content="all"><meta name="focuscrawl" content="nofollow">', "", (False, True)),
        ('<meta name="googlebot" content="none">', "", (False, False)),
        ("", "noindex", (True, False)),
        ("", "googlebot: none", (False, False)),
        ("", "focuscrawl: noindex", (True, False)),
        ("", "googlebot: nofollow, focuscrawl: noindex", (True, False)),
        ("", "unavailable_after: 25 Jun 2010 15:00:00 PST", (False, False)),
        ('<meta name="robots" content="noindex">', "nofollow", (True, True)),
    ],
    ids=["meta-noindex", "meta-nofollow-case", "meta-none", "own-token", "other-bot-meta", "header",
         "header-other-bot", "header-our-bot", "header-two-bots", "header-valued", "strictest"],
)
@pytest.mark.parametrize("links_only", [False, True], ids=["full", "links-only"])
def test_page_manners(head: str, header: str, expected: tuple[bool, bool], links_only: bool) -> None:
    page = parse_html("http://a.org/", f"<html><head>{head}</head><body>x</body></html>", links_only=links_only)
    manners = page_manners(page.meta, {"x-robots-tag": header} if header else {}, "focuscrawl")
    assert (manners.noindex, manners.nofollow) == expected


def test_unknown_directives_are_listed() -> None:
    assert directives("noindex, NoAI, , max-snippet:-1").unknown == ("noai",)
    assert header_directives("otherbot: weird, focuscrawl: odd", "focuscrawl").unknown == ("odd",)


def test_rel_values_that_are_not_followed() -> None:
    body = ('<a href="/a" rel="nofollow">a</a><a href="/b" rel="ugc">b</a><a href="/c" rel="Sponsored">c</a>'
            '<a href="/d" rel="noopener noreferrer">d</a><a href="/e">e</a>')  # fmt: skip
    for links_only in (False, True):
        page = parse_html("http://a.org/", body, links_only=links_only)
        assert [(k.url[-1], k.nofollow) for k in page.links] == [
            ("a", True), ("b", True), ("c", True), ("d", False), ("e", False)
        ]
