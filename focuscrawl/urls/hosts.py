"""The parts of a normalised URL: host (with its port), host name, registered domain
(the offline public suffix list), path and extension, and host patterns."""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import Any
from urllib.parse import urlsplit


@lru_cache(maxsize=1)
def _psl() -> Any:
    """tldextract over the public suffix list bundled with it, never fetched from the
    network; built at its first use (tldextract and what it imports, requests and
    urllib3 among them, are ~0.1 s of a crawl's start-up, and most crawls never ask)."""
    import tldextract

    return tldextract.TLDExtract(suffix_list_urls=(), cache_dir=None)


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

