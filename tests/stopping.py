"""A crawl run to the point where it is asked to stop (as by Ctrl-C), or killed (as by
``kill -9``), for resume tests."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from focuscrawl.crawler.engine import Crawler
from focuscrawl.stats import CrawlStats


def run_stopped_after(crawler: Crawler, pages: int) -> CrawlStats:
    """Run ``crawler`` to its end, asking it to stop once ``pages`` pages are in; closed after."""

    def progress(stats: Any) -> None:
        if stats.fetched >= pages:
            crawler.request_stop()

    crawler.on_progress = progress

    async def main() -> CrawlStats:
        async with crawler.fetcher:
            return await crawler.run()

    try:
        return asyncio.run(main())
    finally:
        crawler.close()


ROOT = Path(__file__).resolve().parents[1]
#: a crawl that commits its start and nothing more before its end
NO_COMMIT = {"FOCUSCRAWL_CRAWL__COMMIT_EVERY": "100000", "FOCUSCRAWL_CRAWL__COMMIT_SECONDS": "1000"}


def _lines(path: Path) -> int:
    try:
        return sum(1 for line in path.read_bytes().splitlines() if json.loads(line))
    except (OSError, ValueError):
        return 0


def killed_uncommitted(run: Path, proxy: str, seeds: list[str], lines: int = 5) -> dict[str, str]:
    """A 30-URL crawl into ``run`` killed by SIGKILL once ``lines`` lines of pages.jsonl
    are written, none of them committed (the start only was); the environment that
    makes its resume commit nothing either before its end."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), **NO_COMMIT}
    crawl = [sys.executable, "-m", "focuscrawl", "crawl", "--out", str(run), "--quiet", "--strategy", "bfs",
             "--max-pages", "30", "--delay", "0.3", "--proxy", proxy, "--seeds", *seeds]  # fmt: skip
    proc = subprocess.Popen(crawl, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while _lines(run / "pages.jsonl") < lines:
            assert proc.poll() is None, "the crawl ended before it could be killed"
            assert time.monotonic() < deadline, f"fewer than {lines} records within 120 s"
            time.sleep(0.01)
    finally:
        proc.kill()
        proc.wait()
    return env


def resume(run: Path, env: dict[str, str]) -> None:
    """``focuscrawl crawl --resume`` of ``run`` to its end."""
    done = subprocess.run([sys.executable, "-m", "focuscrawl", "crawl", "--out", str(run), "--resume", "--quiet"],
                          env=env, capture_output=True, text=True, timeout=300, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr
