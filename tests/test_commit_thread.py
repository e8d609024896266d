"""The engine's commit thread: its work is waited for, even by a cancelled crawl."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from focuscrawl.engine import _in_thread


async def test_a_cancelled_wait_still_waits_for_the_thread() -> None:
    done = threading.Event()

    def work() -> None:
        time.sleep(0.3)  # a commit under way when the crawl is cancelled
        done.set()

    task = asyncio.create_task(_in_thread(work))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # the final commit of the stopped crawl comes after this: the thread is done by then
    assert done.is_set()


async def test_the_threads_error_reaches_the_crawl() -> None:
    def work() -> None:
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        await _in_thread(work)


async def test_the_loop_runs_while_the_thread_works() -> None:
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.01)

    side = asyncio.create_task(ticker())
    await _in_thread(lambda: time.sleep(0.2))
    side.cancel()
    assert ticks >= 5  # the fetches in flight go on meanwhile
