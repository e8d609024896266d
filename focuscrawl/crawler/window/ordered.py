"""The reproducible schedule's window: results handed over in the order taken."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

from focuscrawl.crawler.window.base import Results, Slot, Window
from focuscrawl.types import FetchResult

__all__ = ["OrderedWindow"]


class OrderedWindow(Window):
    """Results handed over in the order their URLs were taken."""

    ordered = True

    async def wait(self, within: Callable[[], float | None]) -> Results:
        slot = self._slots[0]
        head = slot.task
        assert head is not None, "a URL taken while stopping is never waited for"
        # a finished head (the window's usual state under load) needs no watch for a stop
        if not head.done():
            await _first_of(head, self._stop)
            if not head.done():
                return []
        return [(slot, head.result())]

    async def _finished_after_stop(
        self, refill: Callable[[], None]
    ) -> AsyncIterator[tuple[Slot, FetchResult]]:
        while self._slots and (t := self._slots[0].task) is not None and t.done() and not t.cancelled():
            yield self._slots[0], t.result()
            refill()  # the same pops as an uninterrupted crawl (not fetched)


async def _first_of(task: asyncio.Future[Any], stop: asyncio.Event) -> None:
    """Wait until ``task`` is done or ``stop`` is set."""
    if stop.is_set():
        return
    stopped = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait({task, stopped}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        stopped.cancel()
