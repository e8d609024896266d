"""normalize_url against WHATWG's own URL tests (WPT ``urltestdata.json``, vendored
under tests/data/standards/wpt/ with its licence), and its properties on random input.

Every case runs. The crawler only keeps http(s) URLs, so a case whose WHATWG result
is a failure or another scheme must give None; an http(s) result must give that
URL in the crawler's canonical form, each of whose rules is a departure listed in
docs/standards.md (the ``_RULES`` below, in the same order).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import urlsplit

import ada_url
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from focuscrawl.urls import hostname_of, normalize_url

DATA = Path(__file__).parent / "data" / "standards" / "wpt" / "urltestdata.json"
CASES = [case for case in json.loads(DATA.read_text(encoding="utf-8")) if isinstance(case, dict)]

_UNRESERVED = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_DNS_NAME = re.compile(r"[a-z0-9_\-]{1,63}(?:\.[a-z0-9_\-]{1,63})*\Z")


def _escapes(text: str) -> str:
    """RFC 3986 6.2.2.1-2: escapes upper-cased, unreserved characters decoded."""

    def one(match: re.Match[str]) -> str:
        char = chr(int(match.group(1), 16))
        return char if char in _UNRESERVED else match.group(0).upper()

    return re.sub(r"%([0-9A-Fa-f]{2})", one, text)


def crawler_form(href: str) -> tuple[str | None, list[str]]:
    """The crawler's form of a WHATWG-serialised URL, and the departures that made it
    differ (names of docs/standards.md's URL rows)."""
    rules: list[str] = []
    parts = urlsplit(href)
    if parts.scheme not in ("http", "https"):
        return None, ["not-http"]
    _, _, hostport = parts.netloc.rpartition("@")
    host, port = (hostport, "")
    if not hostport.startswith("[") and ":" in hostport:
        host, port = hostport.rsplit(":", 1)
    if host.endswith("."):
        rules.append("host-trailing-dot")
        host = host.removesuffix(".")
    if not host.startswith("[") and not _DNS_NAME.match(host):
        return None, [*rules, "host-not-dns"]
    path, query = _escapes(parts.path), _escapes(parts.query)
    if (path, query) != (parts.path, parts.query):
        rules.append("escapes-normalised")
    if parts.fragment or href.endswith("#"):
        rules.append("fragment-dropped")
    if not query and "?" in href.split("#", 1)[0]:
        rules.append("empty-query-dropped")
    if "@" in parts.netloc:
        rules.append("userinfo-dropped")
    netloc = host + (":" + port if port else "")
    return f"{parts.scheme}://{netloc}{path}" + (f"?{query}" if query else ""), rules


def expected(case: dict[str, str | bool | None]) -> str | None:
    if case.get("failure"):
        return None
    return crawler_form(str(case["href"]))[0]


def _id(case: dict[str, str | bool | None]) -> str:
    return f"{CASES.index(case)}:{str(case['input'])[:40]!r}"


@pytest.mark.parametrize("case", CASES, ids=_id)
def test_whatwg_urltestdata(case: dict[str, str | bool | None]) -> None:
    base = case.get("base")
    got = normalize_url(str(case["input"]), str(base) if base is not None else None)
    assert got == expected(case)


def test_whatwg_departures_are_the_listed_ones() -> None:
    """Every way the crawler's form differs from WHATWG's href is a row of docs/standards.md."""
    listed = (Path(__file__).parents[1] / "docs" / "standards.md").read_text(encoding="utf-8")
    seen = {rule for case in CASES if not case.get("failure") for rule in crawler_form(str(case["href"]))[1]}
    assert seen
    assert all(f"`{rule}`" in listed for rule in seen), seen


# --- properties --------------------------------------------------------------------

# pieces that broke URL parsers: brackets and their compatibility forms (U+FE47,
# U+FF3B...), full-width dots, IDNA mappings (U+1D2C), escapes, controls, '@', '\'.
_PIECES = st.sampled_from(
    ["http:", "https:", "//", "/", "\\", "..", ".", "@", ":", "?", "#", "%", "%2e", "%2E",
     "%7e", "%41", "%c3%a9", "%zz", "%a", "%%", "%4", "h.org", "a", "B", "_", "-", " ", "\xa0", "\t", "\n",
     "ü", "日本", "[::1]", "[", "]", "\ufe47", "\ufe48", "\uff3b", "\uff3d", "\u1d2c", "ß",
     "80", "xn--", "xn--nxa", "0x7f", "1", "\u3002", "\uff0e", "\u200b", "&", "=", "'", "\x00",
     ";", "\ufffd", "\U0001f600", "good.com", "][", "%5B"]
)  # fmt: skip
_BASES = st.sampled_from(
    ["http://h.org/a/b/c", "https://H.org:443/x/", "http://h.org", "http://[::1]:8080/a?b",
     "http://good.com/a/b", "http://127.0.0.1/a/", "mailto:x@y", "not a url"]
) | st.none()  # fmt: skip
_URLS = st.lists(_PIECES, max_size=14).map("".join) | st.text(max_size=40)


@pytest.mark.slow  # 10,000 examples
@settings(max_examples=10_000, deadline=None)
@given(_URLS, _BASES)
def test_normalizer_never_raises_is_idempotent_and_keeps_the_host(text: str, base: str | None) -> None:
    out = normalize_url(text, base)
    if out is None:
        return
    assert normalize_url(out) == out
    again = normalize_url(out, "http://elsewhere.org/x/")  # as an absolute link on another page
    assert again == out
    # the host a WHATWG parser (a browser) reads in the output is the crawler's
    assert ada_url.URL(out).hostname == hostname_of(out) or ada_url.URL(out).hostname == f"[{hostname_of(out)}]"
    assert urlsplit(out).hostname == hostname_of(out).lower()


_PLAIN = st.sampled_from(
    ["a", "B", "b.html", "..", ".", "", "/", "//", "x-y", "~u", "q=1", "&", "'", "@", ":",
     "!$()*+,;=", "[", "]", "?", "#", "_", "xn--nxa", "0x7f", "1", "h.org", "H.ORG.", "-"]
)  # fmt: skip


@pytest.mark.slow  # 10,000 examples
@settings(max_examples=10_000, deadline=None)
@given(st.lists(_PLAIN, max_size=8).map("".join), st.sampled_from(["", "http://", "HTTPS://", "//"]))
def test_fast_paths_give_what_the_whatwg_parser_gives(text: str, start: str) -> None:
    """The fast paths (plain ASCII links, relative or absolute) against the WHATWG
    parser itself, put in the crawler's form (:func:`crawler_form`)."""
    href, base = start + text, "http://h.org/d/e/f.html?q"
    try:
        whatwg = crawler_form(ada_url.join_url(base, href))[0]
    except ValueError:
        whatwg = None
    assert normalize_url(href, base) == whatwg


@pytest.mark.parametrize(
    ("url", "base", "expected"),
    [
        # Unicode forms of '[' and ']' in a host: refused, not a ValueError (issue 30)
        pytest.param("http://a\ufe47b.org/", None, None, id="fe47-host"),
        pytest.param("//x\uff3d.org/", "http://h.org/", None, id="ff3d-host"),
        # IDNA maps U+1D2C to 'a': the first pass gives the fixed point
        pytest.param("http://a\u1d2cb.org/", None, "http://aab.org/", id="idna-mapping-once"),
        pytest.param("http://good.com][v1.evil.com/", None, None, id="brackets-host"),
        # tab and newline are removed anywhere, so this is a scheme-relative link
        pytest.param("/\n/evil.com/x", "http://good.com/a/b", "http://evil.com/x", id="newline-slashes"),
        pytest.param("http://0xffffffff/", None, "http://255.255.255.255/", id="ipv4-hex"),
        pytest.param("http://[0:0::1]:80/", None, "http://[::1]/", id="ipv6-compressed"),
        pytest.param("http://h.org/a/%2e%2E/b", None, "http://h.org/b", id="escaped-dot-segment"),
        pytest.param("http:h.org/x", None, "http://h.org/x", id="no-slashes"),
        pytest.param("http://u s:p@h.org/", None, "http://h.org/", id="userinfo-dropped"),
        pytest.param("/b", "http://u:p@h.org:81/a", "http://h.org:81/b", id="userinfo-of-the-base-dropped"),
        pytest.param("http://h.org/%7euser/%41?%7e=%2f", None, "http://h.org/~user/A?~=%2F", id="escape-forms"),
        pytest.param("http://h.org/?a='b'", None, "http://h.org/?a=%27b%27", id="quote-in-query"),
        # decoding %41 after a stray "%a" would make a new escape, which a second pass would change
        pytest.param("http://h.org/%a%41%%34", None, "http://h.org/%a%41%%34", id="no-new-escape"),
        # one trailing dot is dropped; "80.." has an empty label (and "80" would be an IPv4 address)
        pytest.param("http://80../", None, None, id="two-trailing-dots"),
    ],
)
def test_issue_cases(url: str, base: str | None, expected: str | None) -> None:
    assert normalize_url(url, base) == expected


_HREFS = _URLS | st.sampled_from(["http://a\ufe47b/", "http://x\uff3b/", "//[", "http://[::1", "%"])


@pytest.mark.slow  # 10,000 examples, each a page parsed
@settings(max_examples=10_000, deadline=None)
@given(st.lists(_HREFS, min_size=1, max_size=4))
def test_one_bad_link_costs_one_link(hrefs: list[str]) -> None:
    """Whatever the other hrefs hold, the page parses and keeps its good link."""
    from focuscrawl.parse.html import parse_html

    anchors = "".join(f'<a href="{h.replace(chr(34), "")}">x</a>' for h in hrefs)
    page = parse_html("http://h.org/", f"<p>{anchors}<a href='/good'>good</a></p>", links_only=True)
    assert "http://h.org/good" in {link.url for link in page.links}
