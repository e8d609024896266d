"""Conditional requests on the replay web (RFC 9110 13): every archived page has
an ``ETag`` and a ``Last-Modified`` (its own, or the replay web's: a tag of its
body's length and CRC-32, and the record's WARC-Date), and a request whose
``If-None-Match`` matches the tag, or, without one, whose ``If-Modified-Since``
is not older than the page, gets ``304 Not Modified`` and no body.
"""

from __future__ import annotations

import email.utils
import zlib
from collections.abc import Mapping
from datetime import datetime

from focuscrawl.replay.archive import ArchivedResponse

__all__ = ["not_modified", "validators"]


def _http_date(warc_date: str) -> str:
    """A WARC-Date (ISO 8601) as an HTTP date ("" if unreadable).

    >>> _http_date("2024-05-01T10:00:00Z")
    'Wed, 01 May 2024 10:00:00 GMT'
    """
    try:
        moment = datetime.fromisoformat(warc_date.replace("Z", "+00:00"))
    except ValueError:
        return ""
    return email.utils.format_datetime(moment, usegmt=True) if moment.tzinfo else ""


def validators(response: ArchivedResponse) -> tuple[str, str]:
    """(ETag, Last-Modified) of an archived response: its own where it has them.

    >>> validators(ArchivedResponse("http://a.org/", 200, "OK", [], b"abc", warc_date="2024-05-01T10:00:00Z"))
    ('"3-352441c2"', 'Wed, 01 May 2024 10:00:00 GMT')
    """
    etag = response.header("ETag") or f'"{len(response.body):x}-{zlib.crc32(response.body):08x}"'
    return etag, response.header("Last-Modified") or _http_date(response.warc_date)


def _date(value: str) -> float | None:
    try:
        return email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError):
        return None


def not_modified(request: Mapping[str, str], etag: str, last_modified: str) -> bool:
    """Whether a GET with the (lower-cased) ``request`` headers gets a 304 (RFC 9110
    13.1.2 and 13.1.3: If-None-Match, weak comparison; else If-Modified-Since).

    >>> not_modified({"if-none-match": 'W/"x", "3-1"'}, '"3-1"', ""), not_modified({"if-none-match": '"y"'}, '"x"', "")
    (True, False)
    >>> lm = "Wed, 01 May 2024 10:00:00 GMT"
    >>> not_modified({"if-modified-since": lm}, '"x"', lm), not_modified({"if-modified-since": "Tue, 30 Apr 2024 10:00:00 GMT"}, '"x"', lm)
    (True, False)
    """
    asked = request.get("if-none-match")
    if asked is not None:
        if asked.strip() == "*":
            return True
        ours = etag.removeprefix("W/")
        return any(tag.strip().removeprefix("W/") == ours for tag in asked.split(","))
    since = request.get("if-modified-since")
    if since is None or not last_modified:
        return False
    asked_time, ours_time = _date(since), _date(last_modified)
    return asked_time is not None and ours_time is not None and ours_time <= asked_time
