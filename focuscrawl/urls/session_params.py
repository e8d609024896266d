"""Session-ID-like query parameters, learned per host from duplicate pages.

Heritrix and Nutch strip known session parameters (``jsessionid``, ``PHPSESSID``,
``sid``...) by fixed rules; a site's own names (``s=``, ``token=``, ``visit=``) are
not on any list. Here a parameter is learned from what the crawl sees: when a page is
a duplicate of another page of the same host and path whose URL differs only in one
or two query parameters, each of those parameters is a session-ID candidate of that
host; after ``after`` such pairs (two by default) it is learned, and from then on the
host's links have it removed before they reach the frontier, so URLs that differ
only by it are one URL.
"""

from __future__ import annotations

from collections import Counter
from urllib.parse import parse_qsl, unquote_plus, urlsplit, urlunsplit

_MAX_DIFFERENT = 2  # more parameters differing than this: not a session-ID variant


def differing_params(a: str, b: str) -> tuple[str, frozenset[str]] | None:
    """The host and the query parameters by which two URLs of one host and path differ
    (None: another host or path, no difference, or more than two differ).

    >>> differing_params("http://h.org/a?id=1&s=x9", "http://h.org/a?id=1&s=y7")
    ('h.org', frozenset({'s'}))
    >>> differing_params("http://h.org/a?s=x9", "http://h.org/a") == ("h.org", frozenset({"s"}))
    True
    >>> differing_params("http://h.org/a?id=1", "http://h.org/b?id=2") is None
    True
    """
    pa, pb = urlsplit(a), urlsplit(b)
    if (pa.scheme, pa.netloc, pa.path) != (pb.scheme, pb.netloc, pb.path) or pa.query == pb.query:
        return None
    qa, qb = dict(parse_qsl(pa.query, keep_blank_values=True)), dict(parse_qsl(pb.query, keep_blank_values=True))
    names = frozenset(k for k in qa.keys() | qb.keys() if qa.get(k) != qb.get(k))
    if not names or len(names) > _MAX_DIFFERENT:
        return None
    return pa.netloc, names


class SessionParams:
    """The parameters learned per host, and the URLs rewritten without them."""

    def __init__(self, after: int = 2) -> None:
        self.after = after
        self.learned: dict[str, frozenset[str]] = {}  # host -> parameter names
        self._seen: Counter[tuple[str, str]] = Counter()  # (host, name) -> duplicate pairs

    def observe(self, url: str, original: str) -> list[str]:
        """``url`` duplicates ``original``: the parameters learned by this pair (usually none)."""
        found = differing_params(url, original)
        if found is None:
            return []
        host, names = found
        new: list[str] = []
        for name in sorted(names):
            self._seen[host, name] += 1
            if self._seen[host, name] >= self.after and name not in self.learned.get(host, ()):
                self.learned[host] = self.learned.get(host, frozenset()) | {name}
                new.append(name)
        return new

    def clean(self, url: str) -> str:
        """``url`` without its host's learned parameters.

        >>> s = SessionParams(after=1); s.observe("http://h.org/p?a=1&sid=x", "http://h.org/p?a=1&sid=y")
        ['sid']
        >>> s.clean("http://h.org/q?sid=z&b=2"), s.clean("http://h.org/q?sid=z"), s.clean("http://o.org/q?sid=z")
        ('http://h.org/q?b=2', 'http://h.org/q', 'http://o.org/q?sid=z')
        """
        if "?" not in url:
            return url
        parts = urlsplit(url)
        names = self.learned.get(parts.netloc)
        if not names:
            return url
        pairs = parts.query.split("&")  # the others kept byte for byte
        kept = [pair for pair in pairs if unquote_plus(pair.partition("=")[0]) not in names]
        if len(kept) == len(pairs):
            return url
        return urlunsplit((parts.scheme, parts.netloc, parts.path, "&".join(kept), ""))
