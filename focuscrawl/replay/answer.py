"""What the replay web answers to a request for a URL: one function for everyone.

:meth:`ArchiveWeb.answer` is used by the replay server (which writes the
answer on a socket) and by the archive transport of a simulation (which hands
it to the fetcher without one), so the two cannot drift apart:

* an archived URL: its archived status, reason and headers (framing headers
  replaced, the body is stored decoded) and its body byte for byte;
* an unknown URL on a host that has records (``/robots.txt`` included): 404;
* an unknown host: 502, as a DNS failure seen through a proxy would be;
* a record that cannot be read: 500.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from http import HTTPStatus
from urllib.parse import urlsplit

from focuscrawl.replay.archive import ArchivedResponse, ArchiveIndex
from focuscrawl.replay.changes import ChangePlan
from focuscrawl.replay.validators import not_modified, validators
from focuscrawl.replay.wire import UNKNOWN_HOST, canonical_url, encode_head, head_fields, host_table

__all__ = ["ArchiveWeb", "ReplayAnswer"]

_CACHE_ENTRIES = 64
_CACHE_MAX_BODY = 4 << 20
# a 304 carries the validators and caching fields, none that describe a body
_NOT_IN_304 = frozenset({"content-type", "content-length", "content-encoding", "content-language"})


@dataclass(frozen=True, slots=True)
class ReplayAnswer:
    """One answer as sent: status line, header fields (framing included), body."""

    status: int
    reason: str  # may be empty: the standard phrase is sent then
    headers: tuple[tuple[str, str], ...]
    body: bytes
    archived: bool = False  # from a record (else the replay web's own short answer)

    def head(self) -> bytes:
        return encode_head(self.status, self.reason, self.headers)


def own_answer(
    status: int,
    text: str,
    *,
    keep: bool = True,
    head: bool = False,
    extra: tuple[tuple[str, str], ...] = (),
) -> ReplayAnswer:
    """A short text/plain answer of the replay web itself (404, 502, 500...).

    >>> own_answer(404, "not in the archive").body
    b'404 Not Found: not in the archive\\n'
    """
    body = f"{status} {HTTPStatus(status).phrase}: {text}\n".encode()
    fields = head_fields([("Content-Type", "text/plain; charset=utf-8"), *extra], len(body), keep)
    return ReplayAnswer(status, "", tuple(fields), b"" if head else body)


class ArchiveWeb:
    """The hosts and URLs of an :class:`ArchiveIndex`, answering GET and HEAD;
    ``changes``: pages that change between visits (:mod:`~focuscrawl.replay.changes`)."""

    def __init__(self, index: ArchiveIndex, changes: ChangePlan | None = None) -> None:
        self.index = index
        self.changes = changes
        self.hosts, self._aliases = host_table(index.entries)
        self._cache: OrderedDict[str, ArchivedResponse] = OrderedDict()

    def __len__(self) -> int:
        """The URLs it serves."""
        return len(self.index)

    def find(self, url: str) -> str | None:
        """The archived URL that answers a request for ``url``, if any."""
        if url in self.index.entries:
            return url
        canon = canonical_url(url)
        if canon in self.index.entries:
            return canon
        return self._aliases.get(canon)

    def knows_host(self, host: str) -> bool:
        return host.lower() in self.hosts

    async def _record(self, url: str, in_thread: bool) -> ArchivedResponse | None:
        cached = self._cache.get(url)
        if cached is not None:
            self._cache.move_to_end(url)
            return cached
        # a server reads in a thread, not to stall its other connections; a
        # simulation reads inline: nothing else waits, and no thread hop costs
        response = (
            await asyncio.to_thread(self.index.get, url) if in_thread else self.index.get(url)
        )
        if response is not None and len(response.body) <= _CACHE_MAX_BODY:
            self._cache[url] = response
            if len(self._cache) > _CACHE_ENTRIES:
                self._cache.popitem(last=False)
        return response

    async def answer(
        self, url: str, *, method: str = "GET", keep: bool = True, in_thread: bool = True,
        conditional: Mapping[str, str] | None = None,
    ) -> ReplayAnswer:
        """The answer to ``method url`` (an absolute URL as the request named it);
        ``conditional``: the request's lower-cased headers, for If-None-Match and
        If-Modified-Since (:mod:`~focuscrawl.replay.validators`)."""
        head = method == "HEAD"
        try:
            host = (urlsplit(url).hostname or "").lower()
        except ValueError:
            host = ""
        if not self.knows_host(host):
            return own_answer(502, f"unknown host {host}", keep=keep, head=head, extra=(UNKNOWN_HOST,))
        found = self.find(url)
        try:
            response = await self._record(found, in_thread) if found is not None else None
        except Exception as exc:  # a damaged or vanished archive: say so, keep serving
            return own_answer(500, f"archive unreadable: {exc}"[:200], keep=keep, head=head)
        if response is None:
            return own_answer(404, "not in the archive", keep=keep, head=head)
        body = response.body
        if response.status < 200 or response.status in (204, 304):
            body = b""
        headers = response.headers
        if response.status == 200 and not head and self.changes is not None and self.changes.changing(response.url):
            response = self.changes.visit(response, conditional)
            body = response.body
        if response.status == 200:  # every archived page has validators, and answers 304s
            etag, last_modified = validators(response)
            # spelt as aiohttp spells the names it knows, so live and simulated crawls see one head
            headers = [*headers, *(f for f in (("Etag", etag), ("Last-Modified", last_modified))
                                   if f[1] and not response.header(f[0]))]  # fmt: skip
            if conditional and not_modified(conditional, etag, last_modified):
                kept = [f for f in headers if f[0].lower() not in _NOT_IN_304]
                return ReplayAnswer(304, "", tuple(head_fields(kept, None, keep)), b"", archived=True)
        fields = head_fields(headers, len(body), keep)
        return ReplayAnswer(
            response.status, response.reason, tuple(fields), b"" if head else body, archived=True
        )
