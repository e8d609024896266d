"""The engine's commit thread: its work is waited for, even by a cancelled crawl."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from focuscrawl.crawler.run import CommitThread


async def test_a_cancelled_wait_still_waits_for_the_thread() -> None:
    done = threading.Event()
    commits = CommitThread()

    def work() -> None:
        time.sleep(0.3)  # a commit under way when the crawl is cancelled
        done.set()

    task = asyncio.create_task(commits.run(work))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # the final commit of the stopped crawl comes after this: the thread is done by then
    assert done.is_set()
    commits.close()


async def test_the_threads_error_reaches_the_crawl() -> None:
    commits = CommitThread()

    def work() -> None:
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space left"):
        await commits.run(work)
    commits.close()


async def test_the_loop_runs_while_the_thread_works() -> None:
    """The thread's work waits for something only the event loop does: it can end only
    if the loop runs meanwhile (as the fetches in flight must)."""
    commits = CommitThread()
    loop_ran = threading.Event()

    def work() -> None:
        if not loop_ran.wait(timeout=30):
            raise AssertionError("the event loop did not run while the thread worked")

    async def other_task() -> None:
        await asyncio.sleep(0)
        loop_ran.set()

    side = asyncio.create_task(other_task())
    await commits.run(work)
    await side
    commits.close()


def test_each_crawl_has_its_own_thread_and_closes_it() -> None:
    names: list[str] = []

    async def main() -> None:
        commits = CommitThread()
        await commits.run(lambda: names.append(threading.current_thread().name))
        commits.close()

    asyncio.run(main())
    assert names
    assert names[0].startswith("focuscrawl-commit")
    assert not any(t.name.startswith("focuscrawl-commit") for t in threading.enumerate())
