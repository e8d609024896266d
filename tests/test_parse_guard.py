"""Hostile markup cannot stall the parser (issue 9, item 5): nesting is capped at
MAX_DEPTH before lexbor sees it, the tags read per page at MAX_TAGS and the link
elements at MAX_LINK_ELEMENTS; real pages are left exactly as they are."""

from __future__ import annotations

import random
import re
import sys
from pathlib import Path

import hypothesis
import pytest
from hypothesis import strategies as st
from selectolax.lexbor import LexborHTMLParser

from focuscrawl.parse import guard
from focuscrawl.parse.guard import MAX_DEPTH, bound_nesting, guard_html
from focuscrawl.parse.html import parse_html
from focuscrawl.parse.links import MAX_LINK_ELEMENTS
from focuscrawl.replay.archive import iter_responses


def _depth(html: str, selector: str) -> int:
    node = LexborHTMLParser(html).css_first(selector)
    assert node is not None
    depth = 0
    while node.parent is not None:
        node = node.parent
        depth += 1
    return depth


def test_deep_nesting_is_capped_and_the_deepest_link_kept() -> None:
    levels = 5000  # 10,000 open elements: lexbor alone needs about a second for them
    html = "<div><span>" * levels + '<a href="/deep">deep link</a> last words'
    page = parse_html("http://h.org/", html)
    assert [link.url for link in page.links] == ["http://h.org/deep"]
    assert page.text == "deep link last words"
    # the link's ancestors in the tree the parser built: MAX_DEPTH elements, body,
    # html and the document node (10,001 without the cap)
    assert _depth(page.html, "a") == MAX_DEPTH + 3


def test_cut_counts_by_hand() -> None:
    inner = '<p>x <a href="/a">a</a>'
    html = "<div>" * 300 + inner + "</div>" * 300
    guarded = guard_html(html)
    # 44 start tags over the cap, and their 44 end tags
    assert guarded.cut_tags == 2 * (300 - MAX_DEPTH)
    assert guarded.html == "<div>" * MAX_DEPTH + inner + "</div>" * MAX_DEPTH
    assert guarded.truncated_at is None
    # stray end tags before the nesting are cut too; a lone page of them is let be
    assert guard_html("</em>" * 500 + "<em>" * 300 + "x").cut_tags == 500 + 300 - MAX_DEPTH
    assert guard_html("</em>" * 500 + "x").cut_tags == 0


def test_the_cheap_bound_never_spares_a_page_that_needs_a_cut(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The flat openings are counted until the bound is met, commonest first: on pages
    of flat tags (either case) around nesting just under and over the cap, the result
    is the full scan's (the scan forced by counting no opening at all)."""
    rng = random.Random(7)
    flat = ["<p>", "<P>", "<li>", "<LI>", '<a href="x">', "<BR>", "<!-- c -->", "<td>", "<img src=y>"]
    pages = []
    for _ in range(60):
        depth = rng.choice([MAX_DEPTH - 1, MAX_DEPTH, MAX_DEPTH + 1, MAX_DEPTH + 40])
        noise = "".join(rng.choice(flat) for _ in range(rng.randrange(0, 600)))
        nest = rng.choice(["<div>", "<DIV>", "<b>", "<span>"])
        pages.append(noise[: len(noise) // 2] + nest * depth + noise[len(noise) // 2 :] + "x")
    cheap = [bound_nesting(page) for page in pages]
    monkeypatch.setattr(guard, "_COMMON_FLAT", ())
    assert cheap == [bound_nesting(page) for page in pages]
    assert sum(cut > 0 for _, cut in cheap) >= 10  # both kinds of page were met
    assert sum(cut == 0 for _, cut in cheap) >= 10


def test_raw_text_and_comments_are_not_markup() -> None:
    script = "<script>" + "document.write('<div>');" * 400 + "</script>"
    comment = "<!--" + "<div>" * 400 + "-->"
    html = "<div>" * 10 + script + comment + "<p>text"
    assert guard_html(html).html == html


def test_links_read_per_page_are_bounded() -> None:
    html = "".join(f'<a href="/p{i}">p{i}</a> ' for i in range(MAX_LINK_ELEMENTS + 500))
    page = parse_html("http://h.org/", html)
    assert len(page.links) == MAX_LINK_ELEMENTS
    assert page.links[-1].url == f"http://h.org/p{MAX_LINK_ELEMENTS - 1}"


def test_real_pages_are_left_unchanged(sample_archive: Path) -> None:
    pages = 0
    for record in iter_responses(sample_archive):
        text = record.body.decode("utf-8", "replace")
        assert guard_html(text).html == text, record.url
        pages += 1
    assert pages > 50


# pieces of markup whose counts decide needs_no_guard: flat openings in both cases,
# nesting tags, end tags, and text whose lower case differs between str and bytes
# (the Kelvin sign lowers to "k", dotted I to "i" + a combining dot)
_PIECES = ["<a ", "<A ", "<p>", "<P>", "<li>", "<LI>", "<br>", "<td>", "<div>", "<DIV>",
           "<span>", "</div>", "</span>", "<!-- x -->", "é", "\u212a", "\u0130", "<\u0130MG ", "x",
           "<\u017fPAN>", "<\u0131>", "<\u212a>", "<x@y.org>", "< ", "<Ä>"]  # fmt: skip


@hypothesis.given(
    st.lists(st.sampled_from(_PIECES), max_size=400),
    st.integers(min_value=1, max_value=40),
    st.integers(min_value=1, max_value=300),
)
@hypothesis.settings(max_examples=300, deadline=None)
def test_needs_no_guard_only_where_the_text_is_left_as_it_is(
    pieces: list[str], max_depth: int, max_tags: int
) -> None:
    """True from the UTF-8 bytes means the guard of the decoded text changes nothing."""
    text = "".join(pieces)
    if guard.needs_no_guard(text.encode(), max_depth, max_tags):
        assert guard_html(text, max_depth, max_tags) == (text, 0, None)


def test_every_letter_of_the_guards_pattern_counts_as_a_possible_tag() -> None:
    # the bytes' bound counts a '<' before any character the scan's case-insensitive
    # [A-Za-z] matches (four outside ASCII), by the first byte of its UTF-8 form
    letter = re.compile(r"[A-Za-z]", re.IGNORECASE)
    leads = {chr(c).encode("utf-8", "surrogatepass")[:1] for c in range(sys.maxunicode + 1)
             if letter.match(chr(c))}  # fmt: skip
    assert {lead.translate(guard._LETTERS_AS_A) for lead in leads} == {b"a"}
    assert len(leads) == 52 + 3  # (C4 leads two of the four)


def test_a_page_of_markup_declarations_needs_no_scan() -> None:
    # WebKB's directory pages carry some 57,000 "<!WA4>" marks among 1,200 tags: the
    # bound from the '<' before letters needs no count of "<!" and no scan
    entry = "".join(f"<!WA{i % 9}>" for i in range(20))
    page = "<UL>" + "".join(f"{entry}<LI><A HREF=/p{i}>P{i}</A>" for i in range(600)) + "</UL>"
    body = page.encode()
    assert body.count(b"<") > 12_000
    assert guard.needs_no_guard(body)
    assert guard_html(page) == (page, 0, None)
    deep = "<div>" * (MAX_DEPTH + 1) + page
    assert not guard.needs_no_guard(deep.encode())
