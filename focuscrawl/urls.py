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
from urllib.parse import urljoin, urlsplit, urlunsplit

from w3lib.url import safe_url_string

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
    """Absolute, normalised http(s) URL, or None if ``url`` is not one.

    >>> normalize_url("HTTP://Example.COM:80/a/./b/../c?x=1#frag")
    'http://example.com/a/c?x=1'
    >>> normalize_url("../d e.html", "http://h.org/x/y/z.html")
    'http://h.org/x/d%20e.html'
    >>> normalize_url("mailto:someone@example.com") is None
    True
    >>> normalize_url("http://example.com")
    'http://example.com/'

    The fast paths (plain ASCII links, relative or absolute) give what the
    general path gives:

    >>> normalize_url("../../../c/./d.html?q=1#f", "http://h.org/a/b.html")
    'http://h.org/c/d.html?q=1'
    >>> normalize_url("#top", "http://h.org/a/b.html?x=2")
    'http://h.org/a/b.html?x=2'
    >>> normalize_url("e/..", "http://h.org/a//b/")
    'http://h.org/a/b/'
    >>> normalize_url("HTTP://WWW.H.ORG./a//b.html?")
    'http://www.h.org/a//b.html'
    """
    url = url.strip()
    if not url:
        return None
    if "\\" in url:
        url = _backslashes_to_slashes(url)
    scheme_match = _SCHEME.match(url)
    if scheme_match is not None and scheme_match.group(1).lower() not in _SCHEMES:
        return None  # mailto:, javascript:, ftp:... (urljoin keeps them as they are)
    try:
        if base is not None:
            url = _join(base, url)
    except ValueError:  # urljoin on a bad base (e.g. a broken IPv6 literal)
        return None
    match = _SIMPLE_URL.match(url)
    if match is not None:
        # the common case, no escaping or port to deal with: ~10x faster than below
        scheme, host, path, query = match.groups()
        host = host.rstrip(".").lower()
        if host and _VALID_NAME.match(host):
            out = f"{scheme.lower()}://{host}{_clean_path(path or '/')}"
            return f"{out}?{query}" if query else out
    try:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        hostname = parts.hostname
        if scheme not in _SCHEMES or not hostname:
            return None
        host = hostname.rstrip(".").lower()
        port = parts.port
    except ValueError:  # bad port, bad IPv6 literal...
        return None
    if ":" in host:  # IPv6 literal (urlsplit checked it)
        host = f"[{host}]"
    elif not host or (host.isascii() and not _VALID_NAME.match(host)):
        return None  # non-ASCII names are checked after IDNA, below
    netloc = host if port in (None, _DEFAULT_PORTS[scheme]) else f"{host}:{port}"
    if parts.username or parts.password:
        netloc = parts.netloc.rsplit("@", 1)[0] + "@" + netloc
    # w3lib strips spaces and C0 controls at the end of the URL, which is the
    # query's end, or the path's if there is no query: done here first, so that
    # dot segments are resolved on what is really kept ("/a/.. " is "/a/..")
    query = parts.query.rstrip(_C0_SPACE)
    path = _clean_path((parts.path if query else parts.path.rstrip(_C0_SPACE)) or "/")
    out = urlunsplit((scheme, netloc, path, query, ""))
    if _PLAIN.match(out) and host.isascii():
        return out  # nothing to escape: skip w3lib
    try:
        out = safe_url_string(out)
    except ValueError:
        return None
    # w3lib IDNA-encodes a non-ASCII name, or leaves it as it is if it cannot
    if not host.isascii() and not _VALID_NAME.match(urlsplit(out).hostname or ""):
        return None
    return out


def is_plain_url(url: str) -> bool:
    """Whether ``url`` holds only printable ASCII that no escaping would change
    (what :func:`normalize_url` returns mostly): w3lib's ``safe_url_string`` can be skipped.

    >>> is_plain_url("http://h.org/a?b=c&d"), is_plain_url("http://h.org/a b"), is_plain_url("http://h.org/%41")
    (True, False, False)
    """
    return _PLAIN.match(url) is not None


def _backslashes_to_slashes(url: str) -> str:
    r"""``\`` read as ``/`` before the query, as browsers do in http(s) URLs (WHATWG URL).

    >>> _backslashes_to_slashes("..\\..\\x?a\\b")
    '../../x?a\\b'
    """
    cut = min((i for i in (url.find("?"), url.find("#")) if i >= 0), default=len(url))
    return url[:cut].replace("\\", "/") + url[cut:]


_C0_SPACE = "".join(map(chr, range(0x21)))
# printable ASCII that needs no escaping, and no '%' (whose escapes w3lib checks)
_PLAIN = re.compile(r"[A-Za-z0-9\-._~:/?\[\]@!$&'()*+,;=]*\Z")
# the scheme as urlsplit finds it (of a stripped URL without tabs or newlines before it)
_SCHEME = re.compile(r"([A-Za-z][A-Za-z0-9+.\-]*):")
# A host name as it is fetched: dot-separated labels of letters, digits, '-' and '_'
# (common in real names though not in RFC 952), IPv4 addresses included. Anything
# else (spaces, '%', empty labels) is refused rather than queued in a form that a
# second normalisation would change.
_VALID_NAME = re.compile(r"[a-z0-9_\-]{1,63}(?:\.[a-z0-9_\-]{1,63})*\Z")
# An absolute http(s) URL made only of characters that _PLAIN passes, with a plain
# host name and no port or user: what urlsplit + the general path would give is
# then known without them. Anything else (escapes, non-ASCII, ports, IPv6,
# controls, which urlsplit would strip) takes the general path.
_SIMPLE_URL = re.compile(
    r"(https?)://([A-Za-z0-9\-.]+)"
    r"(/[A-Za-z0-9\-._~!$&'()*+,;=:@/]*)?"
    r"(?:\?([A-Za-z0-9\-._~!$&'()*+,;=:@/?\[\]]*))?"
    r"(?:#.*)?\Z",
    re.IGNORECASE | re.DOTALL,
)


def _clean_path(path: str) -> str:
    """Dot segments removed as RFC 3986 5.2.4 says; empty segments ('//') are kept,
    since servers may tell ``/a//b`` from ``/a/b``. ``path`` starts with '/'.

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


# A relative reference that urljoin would take as a plain path (+ query, fragment):
# no scheme (':'), no params (';'), no network path ('//'), no backslash, and no
# control character or space that urlsplit would strip or remove.
_RELATIVE_PATH = re.compile(
    r"([^\x00-\x20\x7f:;?#/\\][^\x00-\x20\x7f:;?#\\]*)"  # path
    r"(?:\?([^#\x00-\x20\x7f]*))?"  # query
    r"(?:#.*)?\Z",
    re.DOTALL,
)
# A base URL split the way urlsplit would split it: origin, path (no params), query.
_SPLIT_BASE = re.compile(
    r"([A-Za-z][A-Za-z0-9+.\-]*://[^/?#;@\[\]\\\x00-\x20\x7f]+)"
    r"(/[^?#;\\\x00-\x20\x7f]*)?"
    r"(?:\?[^#\x00-\x20\x7f]*)?"
    r"(?:#.*)?\Z",
    re.DOTALL,
)


@lru_cache(maxsize=256)
def _base_parts(base: str) -> tuple[str, tuple[str, ...]] | None:
    """``scheme://netloc`` and the directory segments urljoin merges a relative path with."""
    match = _SPLIT_BASE.match(base)
    if match is None:
        return None
    origin, path = match.groups()
    scheme, netloc = origin.split("://", 1)
    if scheme.lower() not in _SCHEMES:
        return None
    segments = (path or "").split("/")
    if segments[-1] != "":
        del segments[-1]  # the last segment is a file name, not a directory
    return f"{scheme.lower()}://{netloc}", tuple(segments)


def _join(base: str, href: str) -> str:
    """``urljoin(base, href)``, without urlparse for the common cases (absolute, relative path).

    The relative-path case follows urljoin's own merge of RFC 3986 5.2 step by
    step (Python 3.11's urllib.parse.urljoin), on a cached split of ``base``;
    the fragment is left out, as the caller drops it.
    """
    if href.startswith(("http://", "https://")):
        return href
    split = _base_parts(base)
    if href.startswith("/") and not href.startswith("//"):
        if split is not None:
            return f"{split[0]}{href}"
        parts = urlsplit(base)
        return f"{parts.scheme}://{parts.netloc}{href}"
    if href.startswith("#") and split is not None:
        return base.split("#", 1)[0]
    match = _RELATIVE_PATH.match(href)
    if match is None or split is None:
        return urljoin(base, href)
    origin, base_dirs = split
    path, query = match.groups()
    segments = [*base_dirs, *path.split("/")]
    segments[1:-1] = filter(None, segments[1:-1])  # as urljoin: no redundant slashes
    resolved: list[str] = []
    for segment in segments:
        if segment == "..":
            if resolved:
                resolved.pop()
        elif segment != ".":
            resolved.append(segment)
    if segments[-1] in (".", ".."):
        resolved.append("")
    joined = "/".join(resolved) or "/"
    if not joined.startswith("/"):
        joined = "/" + joined
    return f"{origin}{joined}?{query}" if query else f"{origin}{joined}"


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


def tld_of(url_or_host: str) -> str:
    """The last label of the host name: the country or generic TLD.

    >>> tld_of("http://www.asahi.co.jp/")
    'jp'
    """
    return hostname_of(url_or_host).rsplit(".", 1)[-1].lower()


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
