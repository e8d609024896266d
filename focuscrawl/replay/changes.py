"""Pages of the replay web that change between visits (``focuscrawl replay
--change-share S --change-seed N``), so that a re-visit schedule can be tested.

A deterministic share of the archived pages (chosen from a hash of the seed and the
URL) are *changing*: each GET that one of them answers moves it to its next version,
so the next visit finds another body, ETag and Last-Modified. Version 0 is the
archived page itself (a first crawl sees the archive as it is). A conditional request
names the version it saw in its If-None-Match (``"vN-..."``; the archived tag is
version 0): it is answered with a later one, so that a server started anew between a
crawl and its ``refresh`` still shows the change.
"""

from __future__ import annotations

import hashlib
import re
import zlib
from collections.abc import Mapping
from dataclasses import replace
from datetime import datetime, timedelta

from focuscrawl.exceptions import ConfigError
from focuscrawl.replay.archive import ArchivedResponse

__all__ = ["ChangePlan"]

_ASKED = re.compile(r'"v(\d+)-')
_VALIDATORS = frozenset({"etag", "last-modified"})


class ChangePlan:
    """Which pages change, and the version of each that the next visit gets.

    >>> plan = ChangePlan(1.0, seed=3)
    >>> first = ArchivedResponse("http://a.org/", 200, "OK", [("ETag", '"x"')], b"<p>hi</p>",
    ...                          warc_date="2024-05-01T10:00:00Z")
    >>> plan.visit(first, {}).body == first.body
    True
    >>> second = plan.visit(first, {})
    >>> second.body, second.warc_date
    (b'<p>hi</p>\\n<!-- focuscrawl replay: version 1 -->\\n', '2024-05-01T11:00:00Z')
    >>> second.headers
    [('Etag', '"v1-30-4f4ca883"')]
    >>> plan.version_of("http://b.org/", {"if-none-match": '"v4-9-1a"'})  # a new server: later than asked
    5
    >>> ChangePlan(0.0).changing("http://a.org/")
    False
    """

    def __init__(self, share: float, seed: int = 0) -> None:
        if not 0.0 <= share <= 1.0:
            raise ConfigError(f"replay: --change-share {share}: must be in 0..1")
        self.share = share
        self.seed = seed
        self._visits: dict[str, int] = {}  # URL -> GETs answered so far

    def changing(self, url: str) -> bool:
        """Whether ``url`` is one of the pages that change (the same for a seed, always)."""
        if self.share <= 0.0:
            return False
        digest = hashlib.sha256(f"{self.seed}\0{url}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2**64 < self.share

    def version_of(self, url: str, conditional: Mapping[str, str] | None) -> int:
        """The version the next GET of ``url`` gets (its visits so far, and at least
        one more than the version a conditional request names)."""
        version = self._visits.get(url, 0)
        if conditional:
            found = _ASKED.search(conditional.get("if-none-match", ""))
            version = max(version, int(found.group(1)) + 1 if found else 1)
        return version

    def visit(self, response: ArchivedResponse, conditional: Mapping[str, str] | None) -> ArchivedResponse:
        """A GET of a changing page: the response of its current version (its
        validators those of that version), and the page moved to the next one."""
        version = self.version_of(response.url, conditional)
        self._visits[response.url] = version + 1
        if version == 0:
            return response
        body = response.body + f"\n<!-- focuscrawl replay: version {version} -->\n".encode()
        tag = f'"v{version}-{len(body):x}-{zlib.crc32(body):08x}"'  # (spelt as aiohttp spells it)
        headers = [*(f for f in response.headers if f[0].lower() not in _VALIDATORS), ("Etag", tag)]
        return replace(response, body=body, headers=headers, warc_date=_later(response.warc_date, version))


def _later(warc_date: str, hours: int) -> str:
    try:
        moment = datetime.fromisoformat(warc_date.replace("Z", "+00:00"))
    except ValueError:
        return warc_date
    return (moment + timedelta(hours=hours)).isoformat().replace("+00:00", "Z")
