"""Host names looked up on this machine, in threads, asked again when the DNS is slow.

Through a proxy the fetcher resolves a name here before the proxy is asked for it
(:meth:`~focuscrawl.fetch.addresses.AddressPolicy.name_refused`); this is how. The
lookups run in threads (:class:`LocalResolver`), a query unanswered for a few times
this machine's usual answer time is asked again, and a DNS that loses too many
queries is not asked any more (:class:`LookupsLost`): the names are left to the proxy.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import socket
import threading
import time
from collections.abc import Callable

__all__ = ["LocalResolver", "LookupsLost", "getaddrinfo_here"]

_RETRY_FIRST, _RETRY_MIN, _RETRY_MAX = 0.2, 0.02, 0.5  # a query asked again after (s)
_RETRY_FACTOR, _RETRY_SAMPLE, _RETRY_MIN_SAMPLE = 4.0, 64, 8
_LOST_MIN, _LOST_RATIO = 8, 4  # DNS that loses this many queries, 1 per 4 answers, is left
# lookup threads under way at once (each holds a socket until its answer or the C
# library's timeout): without a bound, a crawl from 2,000 seed hosts had 2,000 at once
_LOOKUP_THREADS = 64


def getaddrinfo_here(hostname: str) -> list[str]:
    """The addresses this machine's resolver gives ``hostname`` (blocking)."""
    infos = socket.getaddrinfo(hostname, None, type=socket.SOCK_STREAM)
    return [str(i[4][0]) for i in infos]


def _lookup_thread(
    lookup: Callable[[str], list[str]],
    hostname: str,
    settle: Callable[[list[str] | None, BaseException | None], None],
) -> None:
    """One ``lookup(hostname)`` in a daemon thread of its own, not the loop's executor:
    a lookup that hangs (and is given up) holds no worker the crawl needs, nor its exit.
    ``settle`` is called in the thread with (addresses, None) or (None, error)."""

    def run() -> None:
        try:
            found: tuple[list[str] | None, BaseException | None] = (lookup(hostname), None)
        except (OSError, UnicodeError, ValueError) as exc:
            found = (None, exc)
        settle(*found)

    threading.Thread(target=run, name="focuscrawl-resolve", daemon=True).start()


class LookupsLost(OSError):
    """This machine's DNS loses too many queries to be asked: names are left to the proxy."""


class LocalResolver:
    """This machine's resolver (the hosts file included), asked again when it is slow.

    A DNS query over UDP that is lost is retried by the C library only after its own
    timeout (glibc: 5 s), which the crawl cannot wait for. So while a lookup is
    unanswered, the same name is asked again (in another thread) after a retry time,
    which doubles each time, and the first answer wins: a stub resolver's retransmission,
    with the retry time adapted to this machine's answers as browsers' resolvers do: 4
    times the 95th percentile of the last 64 answer times, between 20 ms and 0.5 s
    (0.2 s until 8 have come). Measured in this sandbox, whose DNS server drops 3-30 % of
    queries (more when many are under way), most answering in 0.2-2 ms: without the
    retries a dropped query held its fetch for the check's whole second.

    A DNS that loses that many (at least 8 queries asked again, and at least one for
    every 4 lookups answered) is not asked any more: every lookup under way and every
    later one raises :class:`LookupsLost` at once, and the names are left to the proxy,
    as after lookups that time out. The rate limit of this sandbox's DNS drops most of
    the first burst of lookups a crawl through a proxy makes: waiting for two of them to
    time out stalled the crawl of 2,000 WebKB URLs for its first second (of two).
    """

    def __init__(self, lookup: Callable[[str], list[str]] = getaddrinfo_here) -> None:
        self._lookup = lookup  # blocking, run in threads
        self._times: collections.deque[float] = collections.deque(maxlen=_RETRY_SAMPLE)
        self._waiting: set[asyncio.Future[list[str]]] = set()
        self._threads = asyncio.Semaphore(_LOOKUP_THREADS)  # a slot per lookup thread
        self.answered = 0  # lookups answered (an address or an error)
        self.retries = 0  # queries asked again (or due again, with no thread free)
        self.lost = False  # too many queries lost: no more lookups

    def retry_after(self) -> float:
        if len(self._times) < _RETRY_MIN_SAMPLE:
            return _RETRY_FIRST
        ordered = sorted(self._times)
        p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
        return min(_RETRY_MAX, max(_RETRY_MIN, _RETRY_FACTOR * p95))

    async def __call__(self, hostname: str) -> list[str]:
        """The addresses of ``hostname``; a caller that gives up (cancelled) leaves no
        answer behind for nobody: a lookup that fails later is dropped."""
        await self._threads.acquire()  # at most _LOOKUP_THREADS lookups in threads at once
        if self.lost:
            self._threads.release()
            raise LookupsLost(f"DNS here loses queries: {hostname} not looked up")
        loop = asyncio.get_running_loop()
        answer: asyncio.Future[list[str]] = loop.create_future()
        started = time.monotonic()

        def settled(addresses: list[str] | None, error: BaseException | None) -> None:
            self._threads.release()  # (this query's thread has ended)
            if answer.done():
                return  # answered already (another query), or given up
            self._times.append(time.monotonic() - started)
            self.answered += 1
            if error is not None:
                answer.set_exception(error)
            else:
                answer.set_result(addresses or [])

        def settle(addresses: list[str] | None, error: BaseException | None) -> None:
            with contextlib.suppress(RuntimeError):  # the loop closed meanwhile
                loop.call_soon_threadsafe(settled, addresses, error)

        wait = self.retry_after()
        self._waiting.add(answer)
        try:
            _lookup_thread(self._lookup, hostname, settle)
            while True:
                done, _ = await asyncio.wait({answer}, timeout=wait)
                if done:
                    return answer.result()
                self.retries += 1
                if self.retries >= _LOST_MIN and self.retries * _LOST_RATIO >= self.answered:
                    self._give_up()
                elif not self._threads.locked():  # asked again only where a thread is free
                    await self._threads.acquire()  # (free: no wait)
                    _lookup_thread(self._lookup, hostname, settle)
                wait *= 2  # (the caller's deadline ends it)
        finally:
            self._waiting.discard(answer)
            answer.cancel()  # given up (a deadline): an answer that comes later is dropped

    def _give_up(self) -> None:
        self.lost = True
        for waiting in self._waiting:
            if not waiting.done():
                waiting.set_exception(LookupsLost("DNS here loses queries"))
