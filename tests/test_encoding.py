"""Declared charsets that Python knows but that cannot decode HTML (issue 9, item 19)."""

from __future__ import annotations

import pytest

from focuscrawl.fetch.encoding import charset_label, decode_html, detect_charset
from focuscrawl.parse.html import page_from_fetch
from focuscrawl.types import FetchResult

_PAGE = b'<html><body><p>caf\xe9</p><a href="/next.html">next page</a></body></html>'


@pytest.mark.parametrize("label", ["idna", "punycode", "unicode-escape", "raw-unicode-escape", "hz"])
def test_unusable_declared_charset_falls_back(label: str) -> None:
    # the body is not valid UTF-8 (\xe9): the fallback is windows-1252, as for any bad label
    assert charset_label(label) is None
    assert detect_charset(f"text/html; charset={label}", _PAGE) == "cp1252"
    meta = b'<meta charset="' + label.encode() + b'">' + _PAGE
    assert detect_charset("text/html", meta) == "cp1252"
    assert decode_html(_PAGE, label) == _PAGE.decode("cp1252")


@pytest.mark.parametrize("label", ["idna", "punycode"])
def test_page_with_unusable_charset_keeps_its_links(label: str) -> None:
    # what a fetcher that trusts the header would hand over: the charset as declared
    result = FetchResult(
        "http://h.org/a/", "http://h.org/a/", status=200, body=_PAGE,
        content_type="text/html", charset=label,
    )  # fmt: skip
    page = page_from_fetch(result)
    assert [link.url for link in page.links] == ["http://h.org/next.html"]
    assert page.links[0].anchor == "next page"
    assert page.text == "café next page"


def test_usable_charsets_still_decode() -> None:
    assert charset_label("koi8-r") == "koi8-r"
    assert charset_label("ISO-2022-JP") == "iso2022_jp"
    assert decode_html("Привет".encode("koi8-r"), "koi8-r") == "Привет"
