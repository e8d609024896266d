"""Charset sniffing against html5lib-tests ``encoding/`` (tests1.dat, tests2.dat,
test-yahoo-jp.dat, vendored under tests/data/standards/html5lib/ with their
licence) and the WHATWG Encoding Standard's label table; properties of the sniffer
on random bytes.

The one departure (docs/standards.md, ``utf8-autodetect``): a page that declares
nothing and is valid UTF-8 is read as UTF-8, where these tests expect the
fallback windows-1252; the tests' pages are ASCII, so the text is the same.
"""

from __future__ import annotations

import codecs
from pathlib import Path

import pytest
import webencodings
from hypothesis import given, settings
from hypothesis import strategies as st

from focuscrawl.fetch.encoding import charset_label, decode_html, detect_charset, sniff_charset
from focuscrawl.parse.html import page_from_fetch
from focuscrawl.types import FetchResult

DATA = Path(__file__).parent / "data" / "standards" / "html5lib"


def _cases() -> list[tuple[str, bytes, str]]:
    out = []
    for name in ("tests1.dat", "tests2.dat", "test-yahoo-jp.dat"):
        for part in (DATA / name).read_bytes().split(b"#data\n")[1:]:
            data, encoding = part.split(b"\n#encoding\n")
            out.append((name, data, encoding.strip().decode("ascii")))
    return out


CASES = _cases()


@pytest.mark.parametrize(("name", "data", "encoding"), CASES, ids=[f"{n}:{i}" for i, (n, _, _) in enumerate(CASES)])
def test_html5lib_encoding(name: str, data: bytes, encoding: str) -> None:
    expected = charset_label(encoding)
    got = detect_charset("", data)
    if got != expected and got == "utf-8" and expected == "cp1252":  # utf8-autodetect
        assert decode_html(data, got) == data.decode("cp1252")
        return
    assert got == expected


def test_html5lib_cases_all_read() -> None:
    assert len(CASES) == 82


@pytest.mark.parametrize("label", sorted(webencodings.LABELS), ids=str)
def test_every_whatwg_label_is_known(label: str) -> None:
    encoding = webencodings.LABELS[label]
    name = charset_label(label.upper())
    if encoding == "replacement":
        assert name is None  # `replacement-encoding-ignored` in docs/standards.md
        return
    assert name is not None
    sample = bytes(range(0x20, 0x7F)) + bytes(range(0xA0, 0x100))
    if encoding in ("utf-16le", "utf-16be", "iso-2022-jp") or encoding in _MULTI_BYTE:
        return  # not single-byte: the sample means nothing there
    ours = decode_html(sample, name)
    theirs = webencodings.decode(sample, webencodings.lookup(encoding), errors="replace")[0]
    assert ours == theirs


_MULTI_BYTE = {"utf-8", "gbk", "gb18030", "big5", "euc-jp", "shift_jis", "euc-kr"}


@pytest.mark.parametrize(
    "label", ["cp437", "ibm437", "utf-7", "x-bogus", "idna", "base64", "\x0butf-8", "utf-8\xa0", "\u0130so-8859-2"]
)
def test_labels_outside_the_table_are_unknown(label: str) -> None:
    assert charset_label(label) is None


@pytest.mark.parametrize("label", ["utf-16le", "utf-16be", "utf-16", "UTF-16LE"])
def test_utf16_served_without_bom_keeps_its_links(label: str) -> None:
    codec = "utf-16-be" if label.lower() == "utf-16be" else "utf-16-le"
    body = '<html><body><a href="/next.html">next</a> Zażółć</body></html>'.encode(codec)
    content_type = f"text/html; charset={label}"
    charset, _ = sniff_charset(content_type, body)
    result = FetchResult(
        "http://h.org/", "http://h.org/", status=200, body=body, content_type=content_type, charset=charset
    )
    page = page_from_fetch(result)
    assert [link.url for link in page.links] == ["http://h.org/next.html"]
    assert "Zażółć" in page.text


@pytest.mark.parametrize(
    ("header", "body", "text"),
    [
        pytest.param("text/html; charset=iso-8859-8-i", "<p>עברית</p>".encode("iso-8859-8"), "עברית", id="iso-8859-8-i"),
        pytest.param("text/html; charset=koi8", "<p>Привет</p>".encode("koi8-r"), "Привет", id="koi8"),
        pytest.param("text/html; charset=x-mac-roman", "<p>café</p>".encode("mac-roman"), "café", id="x-mac-roman"),
        pytest.param("text/html; charset=iso88592", "<p>Zażółć</p>".encode("iso8859-2"), "Zażółć", id="iso88592"),
        pytest.param("text/html; charset=x-cp1250", "<p>Zażółć</p>".encode("cp1250"), "Zażółć", id="x-cp1250"),
        pytest.param(
            "text/html",
            b'<!-- <meta charset="iso-8859-2"> --><meta charset="utf-8"><p>' + "Zażółć".encode(),
            "Zażółć",
            id="commented-out-meta",
        ),
        pytest.param(
            "text/html",
            b'<meta content="text/html; charset=iso-8859-2"><p>' + "Zażółć".encode(),
            "Zażółć",
            id="content-without-http-equiv",
        ),
        pytest.param(
            "text/html",
            b'<meta charset="bogus"><meta charset="iso-8859-2"><p>' + "Zażółć".encode("iso8859-2"),
            "Zażółć",
            id="bogus-then-good",
        ),
    ],
)
def test_issue_cases(header: str, body: bytes, text: str) -> None:
    assert text in decode_html(body, detect_charset(header, body))


_KNOWN = {charset_label(label) for label in webencodings.LABELS} - {None}
_PIECES = st.sampled_from(
    [b"<meta", b" charset=", b"charset", b'"', b"'", b"=", b">", b"<", b"<!--", b"-->", b"<!", b"</",
     b"<?xml", b" encoding='", b"http-equiv=content-type", b" content=", b";", b"utf-8", b"utf-16",
     b"iso-8859-2", b"x-user-defined", b"replacement", b"koi8", b" ", b"\t", b"/", b"\xef\xbb\xbf",
     b"\xff\xfe", b"\xfe\xff", b"\xc3\xa9", b"\xe9", b"a"]
)  # fmt: skip


@pytest.mark.slow  # 10,000 examples
@settings(max_examples=10_000, deadline=None)
@given(st.lists(_PIECES, max_size=16).map(b"".join) | st.binary(max_size=64), st.sampled_from(["", "text/html", "text/html; charset=utf-16", "text/html; charset='koi8-r'", "text/html; charset=utf-8"]))
def test_sniffer_never_raises_and_names_a_known_charset(body: bytes, header: str) -> None:
    charset, utf8_checked = sniff_charset(header, body)
    assert charset in _KNOWN
    assert sniff_charset(header, body) == (charset, utf8_checked)
    if utf8_checked:
        assert charset == "utf-8"
        codecs.getincrementaldecoder("utf-8")().decode(body, final=False)
    assert isinstance(decode_html(body, charset), str)


# --- the prescan's "get an attribute" against a plain transcription of the standard ---


class _Abort(Exception):
    pass


def _spec_attribute(head: bytes, pos: int) -> tuple[tuple[bytes, bytes] | None, int]:
    """HTML's "get an attribute", step by step, byte by byte (the regex in
    focuscrawl.fetch.encoding must answer the same)."""
    space = b"\t\n\f\r "

    def at(i: int) -> int:
        if i >= len(head):
            raise _Abort
        return head[i]

    def lower(c: int) -> int:
        return c | 0x20 if 0x41 <= c <= 0x5A else c

    while at(pos) in space + b"/":
        pos += 1
    if at(pos) == 0x3E:
        return None, pos
    name, value = bytearray(), bytearray()
    while True:
        c = at(pos)
        if c == 0x3D and name:
            pos += 1
            break
        if c in space:
            while at(pos) in space:
                pos += 1
            if at(pos) != 0x3D:
                return (bytes(name), b""), pos
            pos += 1
            break
        if c in b"/>":
            return (bytes(name), b""), pos
        name.append(lower(c))
        pos += 1
    while at(pos) in space:
        pos += 1
    c = at(pos)
    if c in b"\"'":
        pos += 1
        while (d := at(pos)) != c:
            value.append(lower(d))
            pos += 1
        return (bytes(name), bytes(value)), pos + 1
    if c == 0x3E:
        return (bytes(name), b""), pos
    while (c := at(pos)) not in space + b">":
        value.append(lower(c))
        pos += 1
    return (bytes(name), bytes(value)), pos


_ATTRIBUTE_PIECES = st.sampled_from(
    [b" ", b"\t", b"/", b"=", b">", b'"', b"'", b"a", b"B", b"charset", b"content", b"-", b"\xe9", b"  = "]
)


@pytest.mark.slow  # 10,000 examples
@settings(max_examples=10_000, deadline=None)
@given(st.lists(_ATTRIBUTE_PIECES, max_size=12).map(b"".join))
def test_get_an_attribute_is_the_standards(head: bytes) -> None:
    from focuscrawl.fetch.encoding import _attribute, _End

    try:
        expected: object = _spec_attribute(head, 0)
    except _Abort:
        expected = "abort"
    try:
        got: object = _attribute(head, 0)
    except _End:
        got = "abort"
    assert got == expected
