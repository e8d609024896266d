"""Per-host politeness: at most ``per_host`` requests at once, and a minimum
interval between the *starts* of two requests to one host, plus a global cap.

The interval of a host is ``max(delay, Crawl-delay)`` (the robots.txt value
capped by ``max_crawl_delay``); a ``Retry-After`` pushes the host's next start.
Everything waits on deadlines of the injected clock (:mod:`focuscrawl.clock`):
real sleeps in a live crawl, none in a simulation.

The global cap (``fetch.concurrency``) counts the requests that are moving. With
``release_stragglers`` (a live crawl), a request still under way after a
straggler's time (2 x the 95th percentile of the last 256 requests' times, at
least 1 s) gives its global slot back and keeps its host's: a hung request or a
slow body costs its own host, never the crawl's other hosts. (On the real-Web
benchmark, 0.25 s latency with 0.5 % hung and 2 % slow answers, they held up to
100 of the 256 slots, and the cap was reached from the sixth second on.) What
such requests hold is bounded by the scheduler's window of URLs in flight.
"""

from __future__ import annotations

import asyncio
import email.utils
import math
import time
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

from focuscrawl.clock import Clock, SystemClock

__all__ = ["HostPoliteness", "StragglerTime", "parse_retry_after"]

_PRUNE_ABOVE = 4096  # host states kept before idle ones are dropped
_DURATIONS = 256  # recent durations kept, for what a straggler is
_STRAGGLER_FACTOR = 2.0  # a straggler: under way for longer than this x the 95th percentile...
_STRAGGLER_FLOOR = 1.0  # ... and than this many seconds
_STRAGGLER_EVERY = 32  # durations between two takes of the percentile
_MAX_RETRY_AFTER = 60.0  # seconds; a server cannot park a host longer than this per answer


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from a Retry-After header (delta or HTTP date), capped at 60.

    ``now`` is the wall time an HTTP date is counted from (the fetcher's clock).

    >>> parse_retry_after("3"), parse_retry_after("900"), parse_retry_after("soon"), parse_retry_after("²")
    (3.0, 60.0, None, None)
    >>> parse_retry_after("Thu, 01 Jan 1970 00:00:10 GMT", now=4.0)
    6.0
    """
    if not value:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():  # RFC 9110 10.2.3: ASCII digits ("²" is a digit to str)
        seconds = float(value)
    else:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError, IndexError, OverflowError):  # (a year of 11 digits overflows)
            return None
        seconds = when.timestamp() - (time.time() if now is None else now)
    return min(max(seconds, 0.0), _MAX_RETRY_AFTER)


class StragglerTime:
    """How long a request (or a fetch) may be under way before it is a straggler: 2 x
    the 95th percentile of the last 256 durations learnt, at least 1 s and at most
    ``cap``; ``seconds`` is ``first`` until 32 have been learnt, and is taken anew
    every 32nd (a full deque always has 256 entries: counted, not measured by its length)."""

    def __init__(self, first: float = _STRAGGLER_FLOOR, cap: float = math.inf) -> None:
        self.seconds = first
        self._cap = cap
        self._durations: deque[float] = deque(maxlen=_DURATIONS)
        self._learnt = 0

    def learn(self, seconds: float) -> None:
        durations = self._durations
        durations.append(seconds)
        self._learnt += 1
        if self._learnt % _STRAGGLER_EVERY == 0:
            p95 = sorted(durations)[int(0.95 * (len(durations) - 1))]
            self.seconds = min(self._cap, max(_STRAGGLER_FLOOR, _STRAGGLER_FACTOR * p95))


@dataclass
class _HostState:
    interval: float
    slots: asyncio.Semaphore
    gate: asyncio.Lock = field(default_factory=asyncio.Lock)
    last_start: float = float("-inf")
    not_before: float = 0.0  # Retry-After / back-off deadline
    claims: int = 0  # fetch() calls working on this host (see HostPoliteness.claim)
    holders: int = 0  # requests holding a slot or waiting for one

    def ready_at(self) -> float:
        return max(self.last_start + self.interval, self.not_before)


class HostPoliteness:
    """Admission control for requests, keyed by host (``host[:port]``).

    >>> polite = HostPoliteness(concurrency=4, per_host=1, delay=2.0)
    >>> polite.host_ready_at("a.org"), polite.host_busy("a.org")
    (0.0, False)
    """

    def __init__(
        self,
        concurrency: int,
        per_host: int,
        delay: float,
        *,
        clock: Clock | None = None,
        release_stragglers: bool = False,
    ) -> None:
        self.clock: Clock = clock if clock is not None else SystemClock()
        self.per_host = max(1, per_host)
        self.delay = max(0.0, delay)
        self._global = asyncio.Semaphore(max(1, concurrency))
        self._hosts: dict[str, _HostState] = {}
        # (a virtual clock has no timers: a simulation's requests take no real time)
        self._release_stragglers = release_stragglers
        self._straggler = StragglerTime()
        self.stragglers = 0  # requests under way that gave their global slot back

    def _state(self, host: str) -> _HostState:
        state = self._hosts.get(host)
        if state is None:
            if len(self._hosts) > _PRUNE_ABOVE:
                self._prune()
            state = _HostState(interval=self.delay, slots=asyncio.Semaphore(self.per_host))
            self._hosts[host] = state
        return state

    def _prune(self) -> None:
        # A state that is idle and past its deadlines carries nothing worth keeping:
        # the Crawl-delay is re-applied from the robots cache at the next request.
        now = self.clock.monotonic()
        for host in [
            h
            for h, s in self._hosts.items()
            if s.claims == 0 and s.holders == 0 and s.ready_at() <= now
        ]:
            del self._hosts[host]

    def set_crawl_delay(self, host: str, seconds: float | None) -> None:
        """Make the host's interval ``max(delay, seconds)``."""
        self._state(host).interval = max(self.delay, seconds or 0.0)

    def sent(self, host: str) -> None:
        """A request to ``host`` is known to have reached it (its answer began, or it
        failed): the next start counts from now. A start is stamped when the slot
        is taken, but connecting (or a busy event loop) may send the request later;
        counting again from here keeps the gaps the server sees >= the interval."""
        state = self._hosts.get(host)
        if state is not None:
            state.last_start = max(state.last_start, self.clock.monotonic())

    def defer(self, host: str, seconds: float) -> None:
        """Start no request to ``host`` for ``seconds`` from now (Retry-After, back-off)."""
        state = self._state(host)
        state.not_before = max(state.not_before, self.clock.monotonic() + max(0.0, seconds))

    def host_ready_at(self, host: str) -> float:
        """Monotonic time at which ``host`` may be contacted again (0 if now)."""
        state = self._hosts.get(host)
        if state is None:
            return 0.0
        ready = state.ready_at()
        return ready if ready > self.clock.monotonic() else 0.0

    def host_busy(self, host: str) -> bool:
        """True while the host has ``per_host`` fetches (or requests) under way."""
        state = self._hosts.get(host)
        return state is not None and max(state.claims, state.holders) >= self.per_host

    @asynccontextmanager
    async def claim(self, host: str) -> AsyncIterator[None]:
        """Mark a whole fetch() (robots, retries, redirects) as working on ``host``."""
        state = self._state(host)
        state.claims += 1
        try:
            yield
        finally:
            state.claims -= 1

    @asynccontextmanager
    async def slot(self, host: str) -> AsyncIterator[None]:
        """Hold one request to ``host``: a host slot, its start interval, a global slot."""
        state = self._state(host)
        state.holders += 1
        try:
            async with state.slots:
                # The gate serialises the start times of one host; the global slot is
                # taken inside it so the recorded start is the real start.
                async with state.gate:
                    # A deadline, not an event: defer() may move it while we sleep.
                    while (wait := state.ready_at() - self.clock.monotonic()) > 0:
                        await self.clock.sleep(wait)
                    await self._global.acquire()
                    state.last_start = started = self.clock.monotonic()
                timer = None
                released = [False]  # set when it became a straggler
                if self._release_stragglers:
                    timer = asyncio.get_running_loop().call_later(
                        self._straggler.seconds, self._straggling, released
                    )
                try:
                    yield
                finally:
                    if timer is None:
                        self._global.release()
                    else:
                        timer.cancel()
                        if released[0]:
                            self.stragglers -= 1
                        else:
                            self._global.release()
                        self._straggler.learn(self.clock.monotonic() - started)
        finally:
            state.holders -= 1

    def _straggling(self, released: list[bool]) -> None:
        """A request under way for a straggler's time: its global slot goes to another."""
        released[0] = True
        self.stragglers += 1
        self._global.release()
