"""URL normalisation: the one canonical form of a URL that is fetched and stored.

Normalisation is conservative (the form that is fetched is the form that is
stored): scheme and host lower-cased, IDNA host, default port and fragment
dropped, dot segments resolved, unsafe characters percent-encoded (w3lib).
Query arguments keep their order: sorting them (as ``canonicalize_url`` does)
merges URLs that some servers treat differently.
"""

from __future__ import annotations

import re
from functools import lru_cache

from ada_url import join_url
from ada_url import normalize_url as ada_normalize_url

_SCHEMES = ("http", "https")


def normalize_url(url: str, base: str | None = None) -> str | None:
    """Absolute, canonical http(s) URL, or None if ``url`` is not one. Never raises.

    ``url`` is parsed as browsers parse it (the WHATWG URL Standard, by ada-url),
    then put in the crawler's canonical form (docs/standards.md lists each rule):
    the fragment is dropped, and an empty query; a trailing dot of the host is
    dropped; percent-escapes are upper-cased and those of unreserved characters
    decoded (RFC 3986 6.2.2); a host DNS cannot look up (empty labels, characters
    outside letters, digits, ``-`` and ``_``) is refused. Query arguments keep
    their order and ``//`` in paths is kept: servers may tell them apart.

    >>> normalize_url("HTTP://Example.COM:80/a/./b/../c?x=1#frag")
    'http://example.com/a/c?x=1'
    >>> normalize_url("../d e.html", "http://h.org/x/y/z.html")
    'http://h.org/x/d%20e.html'
    >>> normalize_url("mailto:someone@example.com") is None
    True
    >>> normalize_url("http://example.com")
    'http://example.com/'
    >>> normalize_url("http://0x7f.1/%7euser/%2e%2E/%c3%a9?q=%7e")
    'http://127.0.0.1/%C3%A9?q=~'

    The fast paths (plain ASCII links, relative or absolute) give what the
    general path gives:

    >>> normalize_url("../../../c/./d.html?q=1#f", "http://h.org/a/b.html")
    'http://h.org/c/d.html?q=1'
    >>> normalize_url("#top", "http://h.org/a/b.html?x=2")
    'http://h.org/a/b.html?x=2'
    >>> normalize_url("e/..", "http://h.org/a//b/")
    'http://h.org/a//b/'
    >>> normalize_url("HTTP://WWW.H.ORG./a//b.html?")
    'http://www.h.org/a//b.html'

    A ``user:pass@`` is dropped (as Heritrix's StripUserinfoRule does): never sent, never stored.

    >>> normalize_url("http://user:pw@h.org/a"), normalize_url("/b", "http://u@h.org:8080/a")
    ('http://h.org/a', 'http://h.org:8080/b')
    """
    try:
        return _normalize(url, base)
    except Exception:  # a bug here must cost one link, never the page that holds it
        return None


def _normalize(url: str, base: str | None) -> str | None:
    url = url.strip(_C0_SPACE)  # WHATWG: leading and trailing C0 controls and spaces
    match = _SIMPLE_URL.match(url)
    if match is not None:
        return _simple(*match.groups())
    if base is not None:
        joined = _join_simple(url, base)
        if joined is not None:
            return joined
    scheme = _SCHEME.match(url)
    if scheme is not None and scheme.group(1).lower() not in _SCHEMES:
        return None  # mailto:, javascript:, ftp:... (no need to parse them)
    try:
        if base is None:
            href = ada_normalize_url(url)
        else:
            try:
                href = join_url(base, url)
            except ValueError:  # a bad base: an absolute URL does without it
                if scheme is None:
                    return None
                href = ada_normalize_url(url)
    except ValueError:
        return None
    return _canonical(href)


def _simple(scheme: str, host: str, path: str | None, query: str | None) -> str | None:
    """The canonical form of a URL that _SIMPLE_URL matched: what WHATWG parsing and
    :func:`_canonical` give, without them."""
    host = host.lower().removesuffix(".")
    if not _VALID_NAME.match(host):
        return None
    out = f"{scheme.lower()}://{host}{_clean_path(path or '/')}"
    return f"{out}?{query}" if query else out


def _canonical(href: str) -> str | None:
    """The crawler's canonical form of a WHATWG-serialised URL ``href`` (None if it is
    not an http(s) URL with a host DNS can look up)."""
    parts = _SERIALISED.match(href)
    if parts is None:
        return None
    scheme, _, host, port, path, query = parts.groups()
    if not host.startswith("["):  # IPv6 addresses are serialised canonically already
        host = host.removesuffix(".")  # one: "80.." is not "80" (an IPv4 address)
        if not _VALID_NAME.match(host):
            return None
    netloc = f"{host}:{port}" if port else host  # a userinfo dropped (docs/standards.md)
    if "%" in path:
        path = _ESCAPE.sub(_escape_case, path)
    out = f"{scheme}://{netloc}{path}"
    if query:
        if "%" in query:
            query = _ESCAPE.sub(_escape_case, query)
        return f"{out}?{query}"
    return out


def normalize_escapes(text: str) -> str:
    """``text`` with its percent-escapes as :func:`normalize_url` writes them
    (RFC 3986 6.2.2: upper-cased, those of unreserved characters decoded).

    >>> normalize_escapes("/%7euser/%2f%41")
    '/~user/%2FA'
    """
    return _ESCAPE.sub(_escape_case, text) if "%" in text else text


def _escape_case(match: re.Match[str]) -> str:
    """A percent-escape as RFC 3986 6.2.2 normalises it: unreserved characters
    decoded, the others upper-cased (``%7e`` -> ``~``, ``%c3`` -> ``%C3``); a hex
    digit is not decoded after a stray ``%`` or ``%a``, where it would make a new
    escape (``%a%41`` is not ``%aA``).

    >>> _ESCAPE.sub(_escape_case, "%7e%c3%41/%a%41/%%34")
    '~%C3A/%a%41/%%34'
    """
    char = chr(int(match.group(1), 16))
    if char not in _UNRESERVED:
        return match.group(0).upper()
    if char in _HEX_DIGITS:
        start, text = match.start(), match.string
        if text[start - 1 : start] == "%" or (
            start >= 2 and text[start - 2] == "%" and text[start - 1] in _HEX_DIGITS
        ):
            return match.group(0).upper()
    return char


_UNRESERVED = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")
_HEX_DIGITS = frozenset("0123456789ABCDEFabcdef")
# A URL as the WHATWG serialiser writes an http(s) URL: the parts are where they
# look to be (userinfo, host, port, path, query and fragment are escaped or checked).
_SERIALISED = re.compile(
    r"(https?)://([^@/]*@)?(\[[0-9a-f:.]+\]|[^:/?#\[\]]+)(?::([0-9]+))?(/[^?#]*)(?:\?([^#]*))?(?:#.*)?\Z",
    re.DOTALL,
)


def _join_simple(href: str, base: str) -> str | None:
    """The canonical form of ``href`` on ``base`` for plain relative links (a path,
    a query, a fragment, all of characters WHATWG neither escapes nor strips), or
    None to leave it to the general path."""
    if href.startswith("//"):
        split = _base_parts(base)
        if split is None:
            return None
        match = _SIMPLE_URL.match(f"{split[0].split(':', 1)[0]}:{href}")
        return _simple(*match.groups()) if match is not None else None
    match = _RELATIVE.match(href)
    if match is None:
        return None
    split = _base_parts(base)
    if split is None:
        return None
    origin, directory, base_path, base_query = split
    path, query = match.groups()
    if not path:
        if query is None:  # "" or "#x": the base itself
            return f"{origin}{base_path}?{base_query}" if base_query else f"{origin}{base_path}"
        path = base_path
    elif path.startswith("/"):
        path = _clean_path(path)
    else:
        path = _clean_path(directory + path)
    return f"{origin}{path}?{query}" if query else f"{origin}{path}"


@lru_cache(maxsize=256)
def _base_parts(base: str) -> tuple[str, str, str, str] | None:
    """``scheme://netloc``, directory (the path to its last '/'), path and query of
    ``base`` once canonical; None if it is not an http(s) URL."""
    canonical = normalize_url(base)
    if canonical is None:
        return None
    parts = _SERIALISED.match(canonical)
    if parts is None:
        return None
    scheme, _, host, port, path, query = parts.groups()
    netloc = f"{host}:{port}" if port else host  # a userinfo dropped (docs/standards.md)
    return f"{scheme}://{netloc}", path[: path.rfind("/") + 1], path, query or ""


_C0_SPACE = "".join(map(chr, range(0x21)))
# the scheme as the WHATWG parser finds it (of a stripped URL without tabs or newlines before it)
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
# A host name as it is fetched: dot-separated labels of letters, digits, '-' and '_'
# (common in real names though not in RFC 952), IPv4 addresses included. Anything
# else that WHATWG lets through (empty labels, '!', '$', '*'...) is refused: DNS
# cannot look it up.
_VALID_NAME = re.compile(r"[a-z0-9_\-]{1,63}(?:\.[a-z0-9_\-]{1,63})*\Z")
# An absolute http(s) URL whose WHATWG parse is known without the parser: a host
# of ASCII letters, digits, '-' and '_' whose last label starts with a letter (a
# last label that is a number makes the host an IPv4 address) and no label
# 'xn--' (punycode is checked by IDNA); no port or userinfo; path and query only of
# characters WHATWG neither escapes nor strips ("'" is escaped in http queries),
# no '%'. Anything else takes the general path.
_SIMPLE_URL = re.compile(
    r"(https?)://((?:(?!xn--)[A-Za-z0-9_\-]+\.)*(?!xn--)[A-Za-z][A-Za-z0-9_\-]*\.?)"
    r"(/[A-Za-z0-9\-._~!$&'()*+,;=:@/]*)?"
    r"(?:\?([A-Za-z0-9\-._~!$&()*+,;=:@/?\[\]]*))?"
    r"(?:#.*)?\Z",
    re.IGNORECASE | re.DOTALL,
)
# A relative reference of a path (not '//'), query and fragment of the characters
# _SIMPLE_URL allows, with no ':' (a scheme) in the path.
_RELATIVE = re.compile(
    r"(/?(?!/)[A-Za-z0-9\-._~!$&'()*+,;=@/]*)"
    r"(?:\?([A-Za-z0-9\-._~!$&()*+,;=:@/?\[\]]*))?"
    r"(?:#.*)?\Z",
    re.DOTALL,
)


def _clean_path(path: str) -> str:
    """Dot segments removed as WHATWG's path parser removes them (RFC 3986 5.2.4);
    empty segments ('//') are kept. ``path`` starts with '/'.

    >>> _clean_path("/a/b/../c/./d"), _clean_path("/a//b.html"), _clean_path("/a/b/..")
    ('/a/c/d', '/a//b.html', '/a/')
    >>> _clean_path("/../../x"), _clean_path("/a//../c")
    ('/x', '/a/c')
    """
    if "/." not in path:
        return path  # no '.' or '..' segment
    segments = path.split("/")[1:]
    if "." not in segments and ".." not in segments:
        return path
    out: list[str] = []
    for segment in segments:
        if segment == "..":
            if out:
                out.pop()
        elif segment != ".":
            out.append(segment)
    if segments[-1] in (".", ".."):
        out.append("")  # "/a/b/.." is the directory "/a/"
    return "/" + "/".join(out)


def is_plain_url(url: str) -> bool:
    """Whether ``url`` holds only printable ASCII that no escaping would change
    (what :func:`normalize_url` returns mostly).

    >>> is_plain_url("http://h.org/a?b=c&d"), is_plain_url("http://h.org/a b"), is_plain_url("http://h.org/%41")
    (True, False, False)
    """
    return _PLAIN.match(url) is not None


# printable ASCII that needs no escaping, and no '%'
_PLAIN = re.compile(r"[A-Za-z0-9\-._~:/?\[\]@!$&'()*+,;=]*\Z")

