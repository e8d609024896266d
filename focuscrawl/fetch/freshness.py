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

__all__ = ["change_rate", "conditional_headers"]


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


def change_rate(visits: int, changes: int, interval: float = 1.0) -> float:
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
