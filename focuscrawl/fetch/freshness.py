"""Freshness: the validators a re-fetch sends, and how often a page changes.

A re-fetch of a URL whose earlier answer carried an ``ETag`` or a
``Last-Modified`` asks conditionally (RFC 9110 13.1.2 If-None-Match, 13.1.3
If-Modified-Since); a ``304`` then costs no body. The order of re-visits uses
each URL's change rate, estimated from its visit history by Cho and
Garcia-Molina's estimator ("Estimating frequency of change", ACM TOIT 3(3),
2003).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from focuscrawl.output.warc_scan import Answered

__all__ = ["Earlier", "Validators", "change_rate", "conditional_headers"]


@dataclass(frozen=True, slots=True)
class Earlier:
    """What a conditional re-fetch of a URL needs from its earlier answer: the
    validators it carried, and the archived record a ``304`` refers to."""

    etag: str | None
    last_modified: str | None
    uri: str  # the earlier record's WARC-Target-URI
    date: str  # its WARC-Date (WARC 1.1 section 5.14: WARC-Refers-To-Date)


class Validators:
    """ETag and Last-Modified of the URLs fetched, per URL: what a re-fetch sends.

    Kept in memory by the fetcher that was given one (a crawl that re-visits: OTIE's
    re-crawls, a resumed crawl, ``focuscrawl refresh``), filled from the run's
    WARC at the start (:func:`focuscrawl.output.warc_scan.validators_of`) and by
    every successful answer that carries one. A URL without validators is not kept:
    its re-fetch is unconditional, as before.

    >>> v = Validators()
    >>> v.keep("http://a/", {"ETag": '"1"'}, "http://a/", "2024-05-01T10:00:00Z")
    >>> v.conditional("http://a/"), v.conditional("http://b/")
    ({'If-None-Match': '"1"'}, {})
    >>> v.keep("http://a/", {"Content-Type": "text/html"}, "http://a/", "2024-05-02T10:00:00Z")
    >>> len(v)
    0
    """

    def __init__(self) -> None:
        self._kept: dict[str, Earlier] = {}

    def __len__(self) -> int:
        return len(self._kept)

    def get(self, url: str) -> Earlier | None:
        """The earlier answer of ``url`` (None: none with validators is known)."""
        return self._kept.get(url)

    def conditional(self, url: str) -> dict[str, str]:
        """The headers of a re-fetch of ``url`` (empty: ask unconditionally)."""
        earlier = self._kept.get(url)
        return {} if earlier is None else conditional_headers(earlier.etag, earlier.last_modified)

    def read(self, archived: Iterable[Answered]) -> None:
        """Validators of a crawl's archived answers (a 304's revisit record leaves
        the earlier answer it refers to in place, and so does an answer that is no 2xx,
        as a fetch's does: a 500 or a 404 names no version of the page)."""
        for answer in archived:
            if not answer.not_modified and 200 <= answer.status < 300:
                headers = {"ETag": answer.etag or "", "Last-Modified": answer.last_modified or ""}
                self.keep(answer.uri, headers, answer.uri, answer.date)

    def keep(self, url: str, headers: Mapping[str, str], uri: str, date: str) -> None:
        """An answer for ``url`` archived as ``uri`` at ``date``: its validators kept
        (those of an answer without them forgotten: the next re-fetch asks anew)."""
        etag = last_modified = None
        for name, value in headers.items():
            low = name.lower()
            if low == "etag":
                etag = value.strip() or None
            elif low == "last-modified":
                last_modified = value.strip() or None
        if etag is None and last_modified is None:
            self._kept.pop(url, None)
        else:
            self._kept[url] = Earlier(etag, last_modified, uri, date)


def conditional_headers(etag: str | None, last_modified: str | None) -> dict[str, str]:
    """The request headers of a conditional re-fetch (none without validators).

    If-Modified-Since is sent beside If-None-Match: a server ignores it when it
    evaluates the tag (RFC 9110 13.2.2), and a server that ignores tags still reads it.

    >>> conditional_headers('"a1"', "Wed, 01 May 2024 10:00:00 GMT")
    {'If-None-Match': '"a1"', 'If-Modified-Since': 'Wed, 01 May 2024 10:00:00 GMT'}
    >>> conditional_headers(None, "")
    {}
    """
    headers: dict[str, str] = {}
    if etag:
        headers["If-None-Match"] = etag
    if last_modified:
        headers["If-Modified-Since"] = last_modified
    return headers


def observed(status: int, error: str | None, unchanged: bool) -> bool:
    """Whether a re-visit's answer tells if the page changed: an answer (no transport
    error) that is neither the server failing (5xx, 408, 429: the page was not looked
    at) nor a 304 to no conditional request of the crawler's (an ``unchanged`` 304
    answered one). A 404 or a redirect elsewhere is a change.

    >>> observed(200, None, False), observed(304, None, True), observed(404, None, False)
    (True, True, True)
    >>> observed(503, None, False), observed(429, None, False), observed(304, None, False), observed(0, "reset", False)
    (False, False, False, False)
    """
    if error is not None or status <= 0 or status >= 500 or status in (408, 429):
        return False
    return status != 304 or unchanged


def change_rate(visits: float, changes: float, interval: float = 1.0) -> float:
    """Changes per unit of time of a page visited ``visits`` times, ``interval``
    apart, that was found changed ``changes`` times.

    The bias-reduced estimator of Cho and Garcia-Molina (2003, eq. 6):
    r = -log((n - X + 0.5) / (n + 0.5)) / I, written as log((n + 0.5) / (n - X + 0.5)) / I. Unlike the naive X / (n I), it
    does not take a page found changed at every visit to change once per visit,
    and it stays finite at X = n.

    >>> change_rate(10, 0)
    0.0
    >>> round(change_rate(10, 5), 4)
    0.6466
    >>> round(change_rate(10, 10), 4)
    3.0445
    >>> change_rate(0, 0)
    0.0
    """
    if visits <= 0 or interval <= 0:
        return 0.0
    changes = min(max(changes, 0), visits)
    return math.log((visits + 0.5) / (visits - changes + 0.5)) / interval
