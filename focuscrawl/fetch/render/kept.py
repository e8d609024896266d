"""The answers to the scripts and style sheets rendered pages load, kept for the crawl
as a browser's HTTP cache keeps them (RFC 9111, a private cache).

The pages of a site load the same bundles: a kept answer still fresh is given to the
next page with no request (none to wait a host's delay for, none for the server to
answer), one gone stale is asked again conditionally when it has a validator
(``If-None-Match`` / ``If-Modified-Since``: a 304 renews it) and fetched again when it
has none. Only complete 200 answers to GET are kept, never one sent ``no-store`` or
``Vary: *``; ``no-cache`` (and ``max-age=0``) keeps it stale from the start: asked
again, conditionally, each time. Freshness is ``max-age`` (else ``Expires`` less
``Date``) less the answer's ``Age``; an answer with none of them is kept fresh for the
crawl (RFC 9111 section 4.2.2 lets a cache pick a heuristic lifetime; a crawl lasts
less than what browsers pick for a script that has not changed for days). ``Vary`` on
anything else holds: every request of the crawl carries the same headers. Kept for
one crawl only, within :data:`KEPT_BYTES` (the least recently used let go).
"""

from __future__ import annotations

import collections
import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from email.utils import parsedate_to_datetime

from focuscrawl.fetch.freshness import conditional_headers
from focuscrawl.types import FetchResult

KEPT_TYPES = frozenset({"Script", "Stylesheet"})  # the DevTools protocol's resource types kept
KEPT_BYTES = 32 * 1024 * 1024  # at most this much kept, the least recently used let go
_FOR_THE_CRAWL = float("inf")  # the lifetime of an answer with no freshness of its own


def _header(answer: FetchResult, name: str) -> str:
    return next((v for k, v in answer.headers.items() if k.lower() == name), "")


def _directives(answer: FetchResult) -> dict[str, str]:
    """``Cache-Control``'s directives, lower-cased (``max-age`` -> ``"60"``).

    >>> _directives(FetchResult("u", "u", 200, headers={"Cache-Control": 'Max-Age=60, no-cache="x", public'}))
    {'max-age': '60', 'no-cache': 'x', 'public': ''}
    """
    out = {}
    for part in _header(answer, "cache-control").split(","):
        name, _, value = part.strip().partition("=")
        if name:
            out[name.strip().lower()] = value.strip().strip('"')
    return out


def _seconds(value: str) -> float | None:
    try:
        return max(0.0, float(int(value)))
    except ValueError:
        return None


def _date(value: str) -> float | None:
    try:
        return parsedate_to_datetime(value).timestamp() if value else None
    except (TypeError, ValueError, IndexError):
        return None


def lifetime(answer: FetchResult) -> float | None:
    """How long ``answer`` stays fresh from when it came (seconds), None if it may not be
    kept at all.

    >>> lifetime(FetchResult("u", "u", 200, headers={"Cache-Control": "max-age=60", "Age": "10"}))
    50.0
    >>> lifetime(FetchResult("u", "u", 200, headers={"Cache-Control": "no-store"})) is None
    True
    >>> lifetime(FetchResult("u", "u", 200, headers={"Cache-Control": "no-cache"}))
    0.0
    >>> lifetime(FetchResult("u", "u", 200))
    inf
    """
    control = _directives(answer)
    if "no-store" in control or _header(answer, "vary").strip() == "*":
        return None
    if "no-cache" in control:
        return 0.0
    if "max-age" in control:
        fresh = _seconds(control["max-age"])
    elif expires := _header(answer, "expires"):
        at, sent = _date(expires), _date(_header(answer, "date"))
        fresh = 0.0 if at is None else max(0.0, at - (sent if sent is not None else answer.fetched_at or at))
    else:
        return _FOR_THE_CRAWL
    age = _seconds(_header(answer, "age") or "0") or 0.0
    return 0.0 if fresh is None else max(0.0, fresh - age)


def validators(answer: FetchResult) -> dict[str, str]:
    """The headers asking again conditionally for what ``answer`` is (as a re-fetch's)."""
    return conditional_headers(_header(answer, "etag") or None, _header(answer, "last-modified") or None)


@dataclass
class _Kept:
    answer: FetchResult
    fresh_until: float  # on the cache's clock
    ask: dict[str, str]  # the validators' headers


class KeptAnswers:
    """Answers to a crawl's script and style-sheet requests, by URL, within a byte budget."""

    def __init__(self, budget: int = KEPT_BYTES, clock: Callable[[], float] = time.monotonic) -> None:
        self.budget = budget
        self.size = 0
        self.clock = clock
        self._answers: collections.OrderedDict[str, _Kept] = collections.OrderedDict()

    def get(self, url: str) -> tuple[FetchResult | None, dict[str, str]]:
        """The kept answer to ``url`` if still fresh; else the headers to ask for it
        again conditionally (none: asked as if never kept)."""
        kept = self._answers.get(url)
        if kept is None:
            return None, {}
        self._answers.move_to_end(url)
        if self.clock() < kept.fresh_until:
            return kept.answer, {}
        return None, kept.ask

    def keep(self, url: str, answer: FetchResult) -> None:
        """Keep a complete 200 answer that may be stored and used again (fresh, or
        stale with a validator to ask again with)."""
        self._drop(url)
        fresh = lifetime(answer)
        ask = validators(answer)
        if answer.status != 200 or answer.truncated or fresh is None or (not fresh and not ask):
            return
        if len(answer.body) > self.budget // 4:
            return
        self._answers[url] = _Kept(answer, self.clock() + fresh, ask)
        self.size += len(answer.body)
        while self.size > self.budget:
            _, old = self._answers.popitem(last=False)
            self.size -= len(old.answer.body)

    def renewed(self, url: str, not_modified: FetchResult) -> FetchResult | None:
        """A 304 to a conditional request: the kept answer, its headers and freshness
        updated by the 304's (RFC 9111 section 4.3.4); None if it is no longer kept."""
        kept = self._answers.get(url)
        if kept is None:
            return None
        headers = {**kept.answer.headers, **not_modified.headers}
        merged = dataclasses.replace(kept.answer, headers=headers, fetched_at=not_modified.fetched_at)
        self.keep(url, merged)
        return merged

    def _drop(self, url: str) -> None:
        old = self._answers.pop(url, None)
        if old is not None:
            self.size -= len(old.answer.body)
