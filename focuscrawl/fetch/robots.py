"""robots.txt rules per origin (scheme, host, port), parsed with protego.

What an answer means (RFC 9309 section 2.3.1):

* 2xx: the file's rules apply.
* 4xx (401/403 included), or more than 5 redirects: "unavailable", everything
  is allowed.
* 5xx, 429 after retries, or a network error: the file is "unreachable" and the
  RFC says to assume a complete disallow. We keep that for the whole crawl: a
  focused crawl is short, and a host that cannot serve robots.txt rarely serves
  pages well. This is a choice; crawlers that revisit hosts usually retry later.

Each origin is fetched once; concurrent lookups of one origin wait for the same
download. At most ``size`` origins are kept (least recently used dropped).
"""

from __future__ import annotations

import asyncio
import re
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from protego import Protego

__all__ = ["RobotsCache", "RobotsRules", "robots_url", "user_agent_token"]

# (status, body, error): status 0 and an error code when no HTTP response came back.
Download = Callable[[str], Awaitable[tuple[int, bytes, str | None]]]

_MAX_ROBOTS_BYTES = 512 * 1024  # RFC 9309: parse at least 500 KiB


def user_agent_token(user_agent: str) -> str:
    """The product token robots.txt groups are matched against.

    >>> user_agent_token("focuscrawl/0.1 (+https://x.org; research crawler)")
    'focuscrawl'
    """
    first = user_agent.strip().split(None, 1)[0] if user_agent.strip() else "*"
    return first.split("/", 1)[0] or "*"


def robots_url(url: str) -> str:
    """The robots.txt URL of the origin of ``url``.

    >>> robots_url("https://Example.org:8443/a/b?c")
    'https://example.org:8443/robots.txt'
    """
    match = _PLAIN_ORIGIN.match(url)  # asked on every fetch: urlsplit only for the rest
    if match is not None:
        return f"{match.group(1).lower()}://{match.group(2).lower()}/robots.txt"
    parts = urlsplit(url)
    netloc = parts.netloc.rsplit("@", 1)[-1].lower()
    return f"{parts.scheme.lower()}://{netloc}/robots.txt"


# scheme and netloc of an http(s) URL whose netloc urlsplit would take as it is
_PLAIN_ORIGIN = re.compile(r"(https?)://([A-Za-z0-9.\-:]+)(?=[/?#]|\Z)", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class RobotsRules:
    """The rules of one origin. ``error`` says why everything is disallowed, if so."""

    parser: Protego | None = None
    allow_all: bool = False
    error: str | None = None

    def allowed(self, url: str, token: str) -> bool:
        if self.allow_all:
            return True
        if self.parser is None:
            return False
        return bool(self.parser.can_fetch(url, token))

    def crawl_delay(self, token: str) -> float | None:
        if self.parser is None:
            return None
        delay = self.parser.crawl_delay(token)
        return float(delay) if delay is not None else None


ALLOW_ALL = RobotsRules(allow_all=True)


def rules_from_response(status: int, body: bytes, error: str | None) -> RobotsRules:
    """Turn one robots.txt download into rules (see the module docstring).

    >>> rules_from_response(404, b"", None).allowed("http://a.org/x", "bot")
    True
    >>> rules_from_response(503, b"", None).allowed("http://a.org/x", "bot")
    False
    >>> rules = rules_from_response(200, b"User-agent: *\\nDisallow: /private", None)
    >>> rules.allowed("http://a.org/private/1", "bot"), rules.allowed("http://a.org/pub", "bot")
    (False, True)
    """
    if error == "too-many-redirects":  # RFC 9309 2.3.1.2: may be taken as unavailable (4xx)
        return ALLOW_ALL
    if error is not None or status == 0:
        return RobotsRules(error=error or "robots")
    if 200 <= status < 300:
        try:
            return RobotsRules(
                parser=Protego.parse(body[:_MAX_ROBOTS_BYTES].decode("utf-8", "replace"))
            )
        except Exception:  # a robots.txt protego cannot read is treated as absent
            return ALLOW_ALL
    if 400 <= status < 500 and status != 429:
        return ALLOW_ALL
    return RobotsRules(error="robots")


class RobotsCache:
    """Rules per origin, downloaded once with ``download(robots_url)``."""

    def __init__(self, download: Download, size: int = 10_000) -> None:
        self._download = download
        self._size = max(1, size)
        self._rules: OrderedDict[str, RobotsRules] = OrderedDict()
        self._pending: dict[str, asyncio.Future[RobotsRules]] = {}
        self.downloads = 0

    def __len__(self) -> int:
        return len(self._rules)

    def cached(self, url: str) -> RobotsRules | None:
        """The rules of the origin of ``url`` if they are here now (no download), as
        :meth:`rules_for` would return them (and marked as used, as it marks them)."""
        key = robots_url(url)
        rules = self._rules.get(key)
        if rules is not None:
            self._rules.move_to_end(key)
        return rules

    async def rules_for(self, url: str) -> RobotsRules:
        """The rules of the origin of ``url`` (downloading them at most once)."""
        key = robots_url(url)
        while True:
            rules = self._rules.get(key)
            if rules is not None:
                self._rules.move_to_end(key)
                return rules
            pending = self._pending.get(key)
            if pending is None:
                break
            try:
                return await asyncio.shield(pending)
            except asyncio.CancelledError:
                if not pending.cancelled():
                    raise  # we were cancelled ourselves
                # the task downloading it was cancelled: download it here
        future: asyncio.Future[RobotsRules] = asyncio.get_running_loop().create_future()
        self._pending[key] = future
        try:
            self.downloads += 1
            rules = rules_from_response(*await self._download(key))
        except BaseException as exc:
            del self._pending[key]
            if isinstance(exc, asyncio.CancelledError):
                future.cancel()
            else:
                future.set_exception(exc)
                future.exception()  # mark retrieved: there may be no waiter
            raise
        del self._pending[key]
        self._rules[key] = rules
        while len(self._rules) > self._size:
            self._rules.popitem(last=False)
        future.set_result(rules)
        return rules
