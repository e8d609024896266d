"""The parser: links with anchors, context windows and counts; text, title, lang, classes."""

from __future__ import annotations

import pytest

from focuscrawl.fetch.encoding import decode_html, sniff_charset
from focuscrawl.parse.html import page_from_bytes, page_from_fetch, parse_html
from focuscrawl.parse.links import context_window
from focuscrawl.replay.archive import iter_responses
from focuscrawl.types import FetchResult, Page
from tests.conftest import shared_file

PAGE = """<html lang="de-AT"><head><title> Ein  Titel </title>
<meta name="Description" content="Kurz"><meta property="og:type" content="article">
<base href="http://base.example/dir/"><style>.x{color:red}</style><script>var a = "<a href=/no>";</script>
</head><body class="page main"><div id="wrap" class="comment-list  outer">
w1 w2 w3 w4 w5 <a href="one.html">anchor one</a> w6 w7 w8 w9 w10
<a href="/two.html#frag" rel="nofollow external">Two</a> w11 <a href="one.html">anchor one again</a>
<a href="mailto:x@y.z">mail</a> <a href="javascript:void(0)">js</a> <a href="ftp://f.example/">ftp</a>
<a>no href</a> <area href="http://other.example/map" alt="map area">
<iframe src="http://frames.example/f.html"></iframe> end</div></body></html>"""


def test_fields_of_a_handmade_page() -> None:
    page = parse_html("http://page.example/a/b.html", PAGE, context_words=6)
    assert page.title == "Ein Titel"
    assert page.lang == "de-at"
    assert page.meta == {"description": "Kurz", "og:type": "article"}
    assert page.class_names == {"page", "main", "comment-list", "outer"}
    assert page.ids == {"wrap"}
    assert "color" not in page.text
    assert "var a" not in page.text
    assert page.text.startswith("w1 w2 w3 w4 w5 anchor one w6")
    links = {link.url: link for link in page.links}
    assert list(links) == [
        "http://base.example/dir/one.html",
        "http://base.example/two.html",
        "http://other.example/map",
        "http://frames.example/f.html",
    ]
    one = links["http://base.example/dir/one.html"]
    assert (one.anchor, one.count) == ("anchor one", 2)
    # T = 6 words: the 2 anchor words plus 2 on each side
    assert one.context == "w4 w5 anchor one w6 w7"
    two = links["http://base.example/two.html"]
    assert two.nofollow
    assert two.anchor == "Two"
    assert two.context == "w9 w10 Two w11 anchor one"  # 5 left over: 2 before, 3 after
    assert links["http://other.example/map"].anchor == "map area"


@pytest.mark.parametrize(
    ("start", "end", "window", "expected"),
    [
        pytest.param(4, 5, 5, "c d e f g", id="centred"),
        pytest.param(0, 1, 4, "a b c d", id="at-start-gives-right"),
        pytest.param(9, 10, 3, "h i j", id="at-end-gives-left"),
        pytest.param(2, 8, 4, "c d e f", id="anchor-longer-than-window"),
        pytest.param(3, 5, 2, "d e", id="anchor-fills-window"),
    ],
)
def test_context_window(start: int, end: int, window: int, expected: str) -> None:
    assert context_window(["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"], start, end, window) == expected


def test_max_links_keeps_the_first_distinct_targets() -> None:
    html = "".join(f'<a href="/p{i}">p{i}</a><a href="/p0">again</a>' for i in range(10))
    page = parse_html("http://h.example/", html, max_links=3)
    assert [link.url for link in page.links] == [f"http://h.example/p{i}" for i in range(3)]
    assert page.links[0].count == 11  # p0 once plus ten "again": repeats still counted


@pytest.mark.parametrize(
    ("html", "links"),
    [
        pytest.param("", [], id="empty"),
        pytest.param(
            "<html><body><a href='http://[::1'>x</a><a href='ok.html'>ok</a></body>",
            ["http://h.example/x/ok.html"], id="bad-ipv6",
        ),
        pytest.param(
            "<a href='http://h:99999/'>bad port</a><a href='http://h:8080/p'>p</a><div><p>unclosed",
            ["http://h:8080/p"], id="bad-port",
        ),
        pytest.param(
            "\x00\x01<<<>>>&&&;;</a></a><a href=><a href='/g'>g</a>", ["http://h.example/g"],
            id="garbage",
        ),
        pytest.param(
            "<frameset><frame src='f1.html'><frame src='f2.html'></frameset>",
            ["http://h.example/x/f1.html", "http://h.example/x/f2.html"], id="frames",
        ),
    ],
)  # fmt: skip
def test_malformed_html_never_raises(html: str, links: list[str]) -> None:
    # the broken link is dropped, the parse goes on: the good link after it is kept
    page = parse_html("http://h.example/x/", html)
    assert [link.url for link in page.links] == links


def test_real_euc_kr_page_decodes() -> None:
    archive = shared_file("multilingual-dev.warc.gz")
    for rec in iter_responses(archive):
        if "euc-kr" in rec.content_type.lower():
            page = page_from_bytes(rec.url, rec.body, rec.content_type)
            break
    else:
        pytest.fail("no EUC-KR page in multilingual-dev")
    hangul = sum(1 for ch in page.text if "\uac00" <= ch <= "\ud7a3")
    assert hangul > 100
    assert "\ufffd" not in page.text[:2000]
    assert page.lang == "ko"


def test_links_only_of_the_handmade_page() -> None:
    page = parse_html("http://page.example/a/b.html", PAGE, links_only=True)
    assert (page.title, page.lang) == ("Ein Titel", "de-at")
    # the links of the full parse, in its order (frames last), with counts and nofollow
    assert [(link.url, link.count, link.nofollow) for link in page.links] == [
        ("http://base.example/dir/one.html", 2, False),
        ("http://base.example/two.html", 1, True),
        ("http://other.example/map", 1, False),
        ("http://frames.example/f.html", 1, False),
    ]
    assert all(link.anchor == link.context == "" for link in page.links)
    assert (page.text, page.meta, page.class_names, page.ids) == ("", {}, frozenset(), frozenset())
    two = parse_html("http://page.example/a/b.html", PAGE, links_only=True, max_links=2)
    assert [link.url for link in two.links] == ["http://base.example/dir/one.html", "http://base.example/two.html"]


@pytest.mark.parametrize("archive", [  # webkb in the quick run; 400 pages of each in the full one
    pytest.param("wikispeedia.warc.gz", marks=pytest.mark.slow), "webkb.warc.gz",
    pytest.param("multilingual-dev.warc.gz", marks=pytest.mark.slow),
])  # fmt: skip
def test_links_only_finds_what_the_full_parse_finds_on_real_pages(archive: str) -> None:
    pages = 0
    for rec in iter_responses(shared_file(archive)):
        if "html" not in rec.content_type.lower():
            continue
        full = page_from_bytes(rec.url, rec.body, rec.content_type)
        lean = parse_html(rec.url, full.html, links_only=True)
        assert [(k.url, k.count, k.nofollow) for k in lean.links] == [
            (k.url, k.count, k.nofollow) for k in full.links
        ], rec.url
        assert (lean.title, lean.lang) == (full.title, full.lang), rec.url
        pages += 1
        if pages == 400:
            break
    assert pages == 400


def _fetched(url: str, body: bytes, content_type: str) -> FetchResult:
    """A 200 answer as the fetcher fills it (the charset sniffed from header and body)."""
    charset, checked = sniff_charset(content_type, body)
    mime = content_type.split(";", 1)[0].strip().lower()
    return FetchResult(
        url, url, status=200, body=body, content_type=mime, charset=charset, utf8_checked=checked
    )


def _link_fields(page: Page) -> tuple[object, ...]:
    return page.title, page.lang, [(k.url, k.count, k.nofollow) for k in page.links]


@pytest.mark.parametrize("archive", [  # webkb in the quick run; 400 pages of each in the full one
    pytest.param("wikispeedia.warc.gz", marks=pytest.mark.slow), "webkb.warc.gz",
    pytest.param("multilingual-dev.warc.gz", marks=pytest.mark.slow),
])  # fmt: skip
def test_links_of_the_undecoded_bytes_are_those_of_the_decoded_text(archive: str) -> None:
    """A links-only parse of a fetched UTF-8 page reads its bytes as they are where that
    gives the decoded text's tree: the same title, language and links on real pages."""
    pages = 0
    for rec in iter_responses(shared_file(archive)):
        content_type = rec.header("Content-Type")
        if rec.status != 200 or "html" not in content_type.lower():
            continue
        result = _fetched(rec.url, rec.body, content_type)
        lean = page_from_fetch(result, links_only=True)
        text = parse_html(rec.url, decode_html(rec.body, result.charset), links_only=True)
        assert _link_fields(lean) == _link_fields(text), rec.url
        assert lean.html == text.html == ""
        pages += 1
        if pages == 400:
            break
    assert pages == 400


_EDGE_PAGES = [  # (body, Content-Type): each must give the decoded text's links
    pytest.param("<p>ü<a href='/ä'>x</a>".encode(), "text/html; charset=utf-8", id="checked-utf8"),
    pytest.param("\ufeff<title>T</title><a href=/b>b</a>".encode(), "text/html", id="bom"),
    pytest.param("<a href=/é>x</a>é".encode()[:-1], "text/html; charset=utf-8", id="cut-sequence"),
    pytest.param(b'<meta charset="utf-8"><a href="/\xe9">x</a>', "text/html", id="declared-not-utf8"),
    pytest.param(("<div>" * 300 + "<a href=/deep>d</a>").encode(), "text/html", id="nesting-guarded"),
    pytest.param(("<P>" * 300 + "<A HREF=/up>u</A>").encode(), "text/html", id="upper-case-flat"),
    pytest.param(b"<title>x</title>" + b"<b>" * 101 + b"<a href=/t>t</a>", "text/html", id="ascii"),
]


@pytest.mark.parametrize(("body", "content_type"), _EDGE_PAGES)
def test_links_of_odd_utf8_pages_match_the_decoded_text(body: bytes, content_type: str) -> None:
    url = "http://h.example/dir/page.html"
    result = _fetched(url, body, content_type)
    text = parse_html(url, decode_html(body, result.charset), links_only=True)
    assert text.links  # every page has a link to compare
    assert _link_fields(page_from_fetch(result, links_only=True)) == _link_fields(text)



@pytest.mark.parametrize(
    ("attribute", "lang"),
    [(' lang=" JA-jp "', "ja-jp"), (' lang="zh_CN"', "zh_cn"), (' xml:lang="ko"', "ko"), ("", ""),
     (' lang="x' + "y" * 100_000 + '"', ""), (' lang="en, ja"', ""), (' lang="<script>"', "")],
)  # fmt: skip
def test_a_pages_lang_is_a_language_tag_or_nothing(attribute: str, lang: str) -> None:
    """A hostile or broken ``lang`` (100 KB, a list, markup) is no language: "" as if
    absent, never stored whole in pages.jsonl nor read as the page's language."""
    assert parse_html("http://h.org/", f"<html{attribute}><body><p>x</p></body></html>").lang == lang
