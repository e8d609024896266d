"""A crawl run to the point where it is asked to stop (as by Ctrl-C), for resume tests."""

from __future__ import annotations

import asyncio
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
