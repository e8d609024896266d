"""Time, injected: the system's for live crawls, a virtual one for simulations.

Everything that waits or stamps (politeness intervals, Retry-After, back-off,
``fetched_at``) asks a :class:`Clock` instead of calling ``time`` or
``asyncio.sleep`` directly, so an offline simulation runs the same code
without sleeping: :class:`VirtualClock` moves its time forward at once.
"""

from __future__ import annotations

import asyncio
import time
from typing import Protocol

__all__ = ["Clock", "SystemClock", "VirtualClock"]


class Clock(Protocol):
    """A monotonic clock for intervals, a wall clock for stamps, and a sleep."""

    def monotonic(self) -> float: ...

    def time(self) -> float: ...

    async def sleep(self, seconds: float) -> None: ...


class SystemClock:
    """The real clocks and ``asyncio.sleep``.

    >>> clock = SystemClock()
    >>> clock.monotonic() <= clock.monotonic()
    True
    """

    def monotonic(self) -> float:
        return time.monotonic()

    def time(self) -> float:
        return time.time()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(max(0.0, seconds))


class VirtualClock:
    """A clock whose time only moves when someone sleeps, and then at once.

    ``sleep(s)`` moves the time to at least ``now + s`` and only yields to the
    event loop (so other tasks run, as after a real sleep). Time never goes
    back. ``time()`` is ``epoch`` (default: the real wall time when the clock
    was made) plus the virtual seconds elapsed, so stamps stay plausible dates.

    >>> clock = VirtualClock(epoch=1000.0)
    >>> asyncio.run(clock.sleep(2.5)); clock.monotonic(), clock.time()
    (2.5, 1002.5)
    >>> asyncio.run(clock.sleep(-1)); clock.monotonic()
    2.5
    """

    def __init__(self, start: float = 0.0, *, epoch: float | None = None) -> None:
        self._now = float(start)
        self._epoch = time.time() if epoch is None else float(epoch)

    def monotonic(self) -> float:
        return self._now

    def time(self) -> float:
        return self._epoch + self._now

    def advance(self, seconds: float) -> None:
        """Move the time forward by ``seconds`` (negative values do nothing)."""
        if seconds > 0:
            self._now += seconds

    async def sleep(self, seconds: float) -> None:
        self.advance(seconds)
        await asyncio.sleep(0)
