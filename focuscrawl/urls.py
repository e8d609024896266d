"""URL normalisation, host / domain / TLD helpers, and scope rules.

Normalisation is conservative (the form that is fetched is the form that is
stored): scheme and host lower-cased, IDNA host, default port and fragment
dropped, dot segments resolved, unsafe characters percent-encoded (w3lib).
Query arguments keep their order: sorting them (as ``canonicalize_url`` does)
merges URLs that some servers treat differently.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ada_url import join_url
from ada_url import normalize_url as ada_normalize_url

from focuscrawl.exceptions import ConfigError
from focuscrawl.settings import ScopeSettings, check_regex

_SCHEMES = ("http", "https")
_DEFAULT_PORTS = {"http": 80, "https": 443}


@lru_cache(maxsize=1)
def _psl() -> Any:
    """tldextract over the public suffix list bundled with it, never fetched from the
    network; built at its first use (tldextract and what it imports, requests and
    urllib3 among them, are ~0.1 s of a crawl's start-up, and most crawls never ask)."""
    import tldextract

    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)


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
    scheme, userinfo, host, port, path, query = parts.groups()
    if not host.startswith("["):  # IPv6 addresses are serialised canonically already
        host = host.removesuffix(".")  # one: "80.." is not "80" (an IPv4 address)
        if not _VALID_NAME.match(host):
            return None
    netloc = f"{userinfo or ''}{host}:{port}" if port else f"{userinfo or ''}{host}"
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
    scheme, userinfo, host, port, path, query = parts.groups()
    netloc = f"{userinfo or ''}{host}:{port}" if port else f"{userinfo or ''}{host}"
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


def read_url_lines(path: Path | str) -> list[str]:
    """The URLs of a seed or example file: one a line, blank lines and ``#`` comments skipped."""
    try:
        lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read URL list ({exc.strerror or exc})") from None
    return [s for s in (line.split("#", 1)[0].strip() for line in lines) if s]


def host_of(url: str) -> str:
    """The host (with a non-default port) of a normalised URL.

    >>> host_of("http://www.cs.cornell.edu:8080/x")
    'www.cs.cornell.edu:8080'
    >>> host_of("https://user@[::1]:81/x"), host_of("HTTP://h.org?q")
    ('[::1]:81', 'h.org')
    """
    match = _SIMPLE_NETLOC.match(url)  # the engine asks for every link: skip urlsplit
    if match is not None:
        return match.group(1)
    return urlsplit(url).netloc.rsplit("@", 1)[-1]


# An http(s) URL's netloc and path where urlsplit would find them: no user part, no
# IPv6 brackets, no character that urlsplit removes (tab, CR, LF) or checks (non-ASCII).
_SIMPLE_NETLOC = re.compile(r"https?://([A-Za-z0-9.\-:]*)(?=[/?#]|\Z)", re.IGNORECASE)
_SIMPLE_PATH = re.compile(
    r"https?://[A-Za-z0-9.\-:]*(/[^?#\t\r\n]*)?(?=[?#]|\Z)", re.IGNORECASE | re.DOTALL
)


def hostname_of(url_or_host: str) -> str:
    """The host name without port.

    >>> hostname_of("http://a.b.c:81/")
    'a.b.c'
    >>> hostname_of("a.b.c:81")
    'a.b.c'
    """
    host = host_of(url_or_host) if "://" in url_or_host else url_or_host
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


@lru_cache(maxsize=65536)
def registered_domain(url_or_host: str) -> str:
    """The registered domain (public suffix + one label), offline PSL.

    >>> registered_domain("http://www.cs.cornell.edu/x")
    'cornell.edu'
    >>> registered_domain("news.bbc.co.uk")
    'bbc.co.uk'
    >>> registered_domain("127.0.0.1")
    '127.0.0.1'
    """
    name = hostname_of(url_or_host)
    ext = _psl()(name)
    if ext.domain and ext.suffix:
        return f"{ext.domain}.{ext.suffix}"
    return name


def path_of(url: str) -> str:
    """The path of a URL ('' if it has none).

    >>> path_of("http://h.org/a/b?x=1"), path_of("http://h.org?x"), path_of("http://u@h/c#d")
    ('/a/b', '', '/c')
    """
    match = _SIMPLE_PATH.match(url)
    return (match.group(1) or "") if match is not None else urlsplit(url).path


def trap_reason(path: str, max_segments: int, max_repeats: int) -> str | None:
    """"too-many-segments", "repeated-segments" or None: the spider-trap rules on a URL path.

    A block of one to three segments repeated ``max_repeats`` + 1 times in a row
    is what relative links on a page that answers any path produce (``a/`` on
    ``/x/a/`` gives ``/x/a/a/``), and calendar or session traps in cycles.

    >>> trap_reason("/trap/a/a/a/", 20, 2), trap_reason("/x/b/c/b/c/b/c", 20, 2)
    ('repeated-segments', 'repeated-segments')
    >>> trap_reason("/a/a/b/a/a", 20, 2), trap_reason("/any/any/menu/any/x.htm", 20, 2)
    (None, None)
    >>> trap_reason("/1/2/3/4", 3, 2), trap_reason("/1/2/3/", 3, 2), trap_reason("/a/a/a", 0, 0)
    ('too-many-segments', None, None)
    """
    slashes = path.count("/")
    if slashes <= max_repeats and slashes <= max_segments:
        return None  # the common short path: nothing to check
    segments = [s for s in path.split("/") if s]  # "/1/2/3/" has 3 segments
    if max_segments and len(segments) > max_segments:
        return "too-many-segments"
    # a block repeated n + 1 times repeats each of its segments n times at least:
    # a path with n or more repeated segments is checked, others (most) need not be
    if (
        max_repeats
        and len(segments) - len(set(segments)) >= max_repeats
        and _repeated_block(max_repeats).search(path[1:] + "/")
    ):
        return "repeated-segments"
    return None


@lru_cache(maxsize=8)
def _repeated_block(repeats: int) -> re.Pattern[str]:
    # whole segments only: the block starts at the path's start or after a '/'
    # and ends with a '/'; it is matched on the path without its leading '/'
    return re.compile(rf"(?:^|/)((?:[^/]+/){{1,3}})\1{{{repeats}}}")


def extension_of(url: str) -> str:
    """File extension of the URL path, lower case, '' if none.

    >>> extension_of("http://h/a/b.PDF?x=1")
    'pdf'
    >>> extension_of("http://h/a.b/c")
    ''
    """
    last = path_of(url).rsplit("/", 1)[-1]
    return last.rsplit(".", 1)[-1].lower() if "." in last else ""


def host_matches(host: str, patterns: Iterable[str]) -> bool:
    """True if the host (or URL) is one of ``patterns`` or below one (``x.org`` and ``*.x.org`` alike).

    >>> host_matches("http://www.x.org/a", ["x.org"]), host_matches("y.org", ["*.x.org"])
    (True, False)
    """
    name = hostname_of(host)
    for pattern in patterns:
        pattern = pattern.lower()
        if pattern.startswith("*."):
            if name == pattern[2:] or name.endswith(pattern[1:]):
                return True
        elif name == pattern or name.endswith("." + pattern):
            return True
    return False


@dataclass
class Scope:
    """Decides whether a URL may enter the frontier; ``reject`` says why not."""

    settings: ScopeSettings
    seed_domains: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        self._allow = [check_regex("scope.allow_regex", p) for p in self.settings.allow_regex]
        self._deny = [check_regex("scope.deny_regex", p) for p in self.settings.deny_regex]
        self._deny_ext = frozenset(e.lower().lstrip(".") for e in self.settings.deny_extensions)

    @classmethod
    def for_seeds(cls, settings: ScopeSettings, seeds: Sequence[str]) -> Scope:
        # the seeds' registered domains are read by same_site_only alone
        domains = frozenset(registered_domain(s) for s in seeds) if settings.same_site_only else frozenset()
        return cls(settings, domains)

    def reject(self, url: str, depth: int = 0) -> str | None:
        """None if ``url`` is in scope, else a short reason (for counters)."""
        s = self.settings
        if len(url) > s.max_url_length:
            return "url-too-long"
        if s.max_depth >= 0 and depth > s.max_depth:
            return "too-deep"
        if s.max_path_segments or s.max_segment_repeats:
            trap = trap_reason(path_of(url), s.max_path_segments, s.max_segment_repeats)
            if trap is not None:
                return trap
        host = host_of(url)
        if s.deny_hosts and host_matches(host, s.deny_hosts):
            return "denied-host"
        if s.allow_hosts and not host_matches(host, s.allow_hosts):
            return "host-not-allowed"
        if s.same_site_only and self.seed_domains and registered_domain(host) not in self.seed_domains:
            return "off-site"
        if self._deny_ext and extension_of(url) in self._deny_ext:
            return "extension"
        if any(p.search(url) for p in self._deny):
            return "denied-regex"
        if self._allow and not any(p.search(url) for p in self._allow):
            return "not-allowed-regex"
        return None
