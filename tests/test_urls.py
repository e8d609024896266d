"""URL normalisation, hosts and domains, scope rules."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from focuscrawl.settings import ScopeSettings
from focuscrawl.urls import Scope, normalize_url, registered_domain


@pytest.mark.parametrize(
    ("url", "base", "expected"),
    [
        pytest.param("HTTP://WWW.Example.COM:80/a", None, "http://www.example.com/a", id="case-port"),
        pytest.param("https://h.org:443/x#f", None, "https://h.org/x", id="https-port-fragment"),
        pytest.param("http://h.org:8080", None, "http://h.org:8080/", id="other-port-root"),
        pytest.param("../../x/./y.html", "http://h.org/a/b/c/d.html", "http://h.org/a/x/y.html", id="dots"),
        pytest.param("/../../x", "http://h.org/a/", "http://h.org/x", id="dots-above-root"),
        pytest.param("dir/", "http://h.org/a/b", "http://h.org/a/dir/", id="trailing-slash"),
        pytest.param("?q=1&b=2", "http://h.org/p", "http://h.org/p?q=1&b=2", id="query-order-kept"),
        pytest.param("//cdn.h.org/z", "https://h.org/", "https://cdn.h.org/z", id="scheme-relative"),
        pytest.param("http://bücher.de/ä ö", None, "http://xn--bcher-kva.de/%C3%A4%20%C3%B6", id="idna-escape"),
        pytest.param("javascript:alert(1)", None, None, id="javascript"),
        pytest.param("ftp://h.org/file", None, None, id="ftp"),
        pytest.param("http://", None, None, id="no-host"),
        pytest.param("http://h.org:99999/", None, None, id="bad-port"),
        pytest.param("   ", None, None, id="blank"),
    ],
)
def test_normalize(url: str, base: str | None, expected: str | None) -> None:
    assert normalize_url(url, base) == expected


@given(st.text(max_size=60))
def test_normalize_never_raises_and_is_idempotent(text: str) -> None:
    out = normalize_url(text, "http://h.org/a/b.html")
    if out is not None:
        assert normalize_url(out) == out


@pytest.mark.parametrize(
    ("url", "base", "expected"),
    [
        pytest.param("..\\..\\x", "http://h.org/a/b/c", "http://h.org/x", id="backslash-dots"),
        # WHATWG: a backslash is '/' in the path, and left as it is in the query (no escape)
        pytest.param("http://h.org\\a\\b?q=\\", None, "http://h.org/a/b?q=\\", id="backslash-path-not-query"),
        pytest.param("//\xa0l", "http://h.org/a", None, id="nbsp-host"),
        # WHATWG: a backslash after '//' is one more slash, '@' ends an empty userinfo: host '_'
        pytest.param("http://\\@_", None, "http://_/", id="backslash-userinfo"),
        pytest.param("http://a..b/", None, None, id="empty-label"),
        pytest.param("//%", "http://h.org/", None, id="percent-host"),
        # WHATWG: the space is inside the URL (before '#'), so ".. " is a segment, not '..'
        pytest.param(".. #x", "http://h.org/a/b/c", "http://h.org/a/b/..%20", id="dots-space-fragment"),
    ],
)
def test_normalize_hostile_inputs(url: str, base: str | None, expected: str | None) -> None:
    assert normalize_url(url, base) == expected


# A host as it may be fetched: dot-separated non-empty labels of [a-z0-9_-] (IPv4
# included), or a bracketed IPv6 literal; an optional port after it.
_FETCHABLE_HOST = re.compile(r"(?:[a-z0-9_\-]{1,63}\.)*[a-z0-9_\-]{1,63}(?::\d+)?\Z|\[[0-9a-f:.]+\](?::\d+)?\Z")
# URL pieces that broke normalisation once: backslashes, dot segments, spaces and
# controls at the ends, non-ASCII and full-width dots in hosts, percent signs, '@'.
_PIECES = st.sampled_from(
    ["http:", "https:", "//", "/", "\\", "..", ".", "@", ":", "?", "#", "%", "%2e", "%20",
     "h.org", "a", "B", "_", "-", " ", "\xa0", "\t", "ü", "日本", "[::1]", "80", "xn--",
     "\u3002", "\uff0e", "\u200b", "&", "=", "\x00", ";", "[", "]"]
)  # fmt: skip
_BASES = st.sampled_from(
    ["http://h.org/a/b/c", "https://H.org:443/x/", "http://h.org", "http://[::1]:8080/a?b"]
)


@settings(max_examples=1000)
@given(st.lists(_PIECES, max_size=12).map("".join) | st.text(max_size=40), _BASES | st.none())
def test_normalized_url_is_a_fixed_point_with_a_fetchable_host(text: str, base: str | None) -> None:
    out = normalize_url(text, base)
    if out is None:
        return
    assert normalize_url(out) == out
    netloc = urlsplit(out).netloc.rsplit("@", 1)[-1]
    assert _FETCHABLE_HOST.match(netloc), out


def test_registered_domain_uses_the_public_suffix_list_offline() -> None:
    assert registered_domain("http://a.b.example.co.uk/") == "example.co.uk"
    assert registered_domain("www.cs.wisc.edu:8080") == "wisc.edu"


@pytest.mark.parametrize(
    ("settings", "url", "depth", "reason"),
    [
        pytest.param(ScopeSettings(), "http://h.org/a.html", 3, None, id="default-ok"),
        pytest.param(ScopeSettings(), "http://h.org/paper.PPT", 0, "extension", id="extension"),
        pytest.param(ScopeSettings(), "http://h.org/paper.PDF", 0, None, id="pdf-read-by-parse.pdf"),
        pytest.param(ScopeSettings(max_url_length=20), "http://h.org/" + "x" * 10, 0, "url-too-long", id="long"),
        pytest.param(ScopeSettings(max_depth=2), "http://h.org/", 3, "too-deep", id="deep"),
        pytest.param(ScopeSettings(deny_hosts=("ebay.com",)), "http://www.ebay.com/", 0, "denied-host", id="deny-subdomain"),
        pytest.param(ScopeSettings(deny_hosts=("ebay.com",)), "http://notebay.com/", 0, None, id="deny-not-suffix"),
        pytest.param(ScopeSettings(allow_hosts=("*.wisc.edu",)), "http://www.cs.wisc.edu/", 0, None, id="allow-wildcard"),
        pytest.param(ScopeSettings(allow_hosts=("*.wisc.edu",)), "http://www.cs.utexas.edu/", 0, "host-not-allowed", id="allow-miss"),
        pytest.param(ScopeSettings(deny_regex=(r"/calendar/",)), "http://h.org/calendar/2020", 0, "denied-regex", id="deny-regex"),
        pytest.param(ScopeSettings(allow_regex=(r"\.edu/",)), "http://h.org/", 0, "not-allowed-regex", id="allow-regex"),
    ],
)
def test_scope(settings: ScopeSettings, url: str, depth: int, reason: str | None) -> None:
    assert Scope(settings).reject(url, depth) == reason


def test_same_site_only_keeps_seed_domains() -> None:
    scope = Scope.for_seeds(ScopeSettings(same_site_only=True), ["http://www.cs.wisc.edu/"])
    assert scope.reject("http://www.engr.wisc.edu/x") is None
    assert scope.reject("http://www.utexas.edu/") == "off-site"
