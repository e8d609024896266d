"""The Scrapy side of ``bench_crawl.py``: a minimal breadth-first spider doing our crawler's work.

    http_proxy=http://127.0.0.1:PORT python benchmarks/scrapy_spider.py \
        --seeds http://www.cs.cornell.edu/ --max-pages 2000 --out /tmp/scrapy-run

Run in its own process (Twisted's reactor cannot be restarted). The proxy is taken
from ``http_proxy`` by Scrapy's HttpProxyMiddleware, so robots.txt requests (which
the robots middleware builds itself, without our meta) go through it too.

Same work as ``focuscrawl crawl --strategy bfs --delay 0 --concurrency 16 --per-host 1``:

* robots.txt obeyed with RFC 9309's reading of the status, like
  ``focuscrawl.fetch.robots``: 5xx = disallow all (the replay server answers 502
  for hosts outside the archive, so those hosts are skipped without a page
  fetch), 4xx = allow all;
* retries only for 429/503 (ours: 429/503/timeouts/resets), 2 of them;
* every response counts as a page whatever its status; links are followed only
  from 2xx HTML pages, from the same tags and attributes as ours (a/area href,
  frame/iframe src) minus our denied extensions;
* breadth-first: ``DEPTH_PRIORITY=1`` with FIFO queues;
* configured as Scrapy's "Broad Crawls" page advises where that is the same work:
  log level WARNING, cookies off (ours keeps none), telnet console off; retries,
  redirects and the concurrency are kept, as ours has them; and, as an expert
  would write the spider, a link already requested is not made into a Request
  again (a set in the spider, before the dupefilter);
* one JSON line per response (url, status, depth, link count) in a JSONL feed;
* exactly ``--max-pages`` responses are counted: the spider closes when the
  last one arrives (requests still in flight are dropped, which only helps Scrapy).

Prints one JSON line: ``{"pages": N, "html": H, "crawl_elapsed": S, ...}`` where
``crawl_elapsed`` runs from the spider's opening to the last counted response.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

from scrapy import Request, Spider, signals
from scrapy.crawler import CrawlerProcess
from scrapy.downloadermiddlewares.robotstxt import RobotsTxtMiddleware
from scrapy.exceptions import CloseSpider
from scrapy.http import Response, TextResponse
from scrapy.linkextractors import LinkExtractor

from focuscrawl.settings import ScopeSettings

_DISALLOW_ALL = b"User-agent: *\nDisallow: /\n"


class Rfc9309RobotsMiddleware(RobotsTxtMiddleware):
    """Scrapy's robots middleware, reading a 5xx answer as "disallow all" (RFC 9309 2.3.1.4)."""

    async def _parse_robots(self, response: Response, netloc: str, request: Request) -> None:
        if response.status >= 500:
            response = response.replace(body=_DISALLOW_ALL)
        elif response.status >= 400:
            response = response.replace(body=b"")
        await super()._parse_robots(response, netloc, request)


class BfsSpider(Spider):
    name = "bfs"

    def __init__(self, seeds: list[str], max_pages: int, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.seeds = seeds
        self.max_pages = max_pages
        self.count = 0
        self.html = 0
        self.opened_at = 0.0
        # URLs already requested: a link seen before is not made into a Request at all
        # (Scrapy's dupefilter would drop it, but only after the Request object, its
        # fingerprint and the spider-middleware chain: most of the CPU on 30 links a page)
        self.requested: set[str] = set(seeds)
        self.last_at = 0.0
        self.links = LinkExtractor(
            tags=("a", "area", "frame", "iframe"),
            attrs=("href", "src"),
            deny_extensions=list(ScopeSettings().deny_extensions),
        )

    @classmethod
    def from_crawler(cls, crawler: Any, *args: Any, **kwargs: Any) -> BfsSpider:
        spider: BfsSpider = super().from_crawler(crawler, *args, **kwargs)
        crawler.signals.connect(spider.on_opened, signal=signals.spider_opened)
        return spider

    def on_opened(self, spider: Spider) -> None:
        self.opened_at = time.perf_counter()

    async def start(self) -> AsyncIterator[Any]:
        for url in self.seeds:
            yield Request(url, callback=self.parse)

    def parse(self, response: Response) -> Iterator[Any]:
        if self.count >= self.max_pages:
            return  # a response that was in flight when the budget ran out
        self.count += 1
        self.last_at = time.perf_counter()
        links = []
        if 200 <= response.status < 300 and isinstance(response, TextResponse):
            self.html += 1
            links = self.links.extract_links(response)
        yield {"url": response.url, "status": response.status,
               "depth": response.meta.get("depth", 0), "out_links": len(links)}  # fmt: skip
        if self.count >= self.max_pages:
            raise CloseSpider("max_pages")
        requested = self.requested
        for link in links:
            url = link.url
            if url not in requested and url.startswith(
                ("http://", "https://")
            ):  # ours: http(s) only
                requested.add(url)
                yield Request(url, callback=self.parse)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--seeds", nargs="+", required=True)
    ap.add_argument("--max-pages", type=int, default=2000)
    ap.add_argument("--out", type=Path, required=True, help="directory for items.jsonl")
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--per-host", type=int, default=1)
    ap.add_argument("--delay", type=float, default=0.0, help="DOWNLOAD_DELAY (not randomised)")
    ap.add_argument("--timeout", type=float, default=180.0, help="DOWNLOAD_TIMEOUT (Scrapy's default 180)")
    ap.add_argument(
        "--pqueue",
        default="scrapy.pqueues.DownloaderAwarePriorityQueue",
        help="SCHEDULER_PRIORITY_QUEUE (Scrapy's advice for crawls limited per domain)",
    )
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    process = CrawlerProcess(
        settings={
            "ROBOTSTXT_OBEY": True,
            "DOWNLOADER_MIDDLEWARES": {
                "scrapy.downloadermiddlewares.robotstxt.RobotsTxtMiddleware": None,
                Rfc9309RobotsMiddleware: 100,
            },
            "CONCURRENT_REQUESTS": args.concurrency,
            "CONCURRENT_REQUESTS_PER_DOMAIN": args.per_host,
            "DOWNLOAD_DELAY": args.delay,
            "RANDOMIZE_DOWNLOAD_DELAY": False,
            "DOWNLOAD_TIMEOUT": args.timeout,
            "DEPTH_PRIORITY": 1,
            "SCHEDULER_DISK_QUEUE": "scrapy.squeues.PickleFifoDiskQueue",
            "SCHEDULER_MEMORY_QUEUE": "scrapy.squeues.FifoMemoryQueue",
            "SCHEDULER_PRIORITY_QUEUE": args.pqueue,
            "HTTPERROR_ALLOW_ALL": True,
            "RETRY_HTTP_CODES": [429, 503],
            "RETRY_TIMES": 2,
            "FEEDS": {str(args.out / "items.jsonl"): {"format": "jsonlines", "overwrite": True}},
            "LOG_LEVEL": "WARNING",
            # only http(s), and only through the proxy: no other scheme's handler may look up a name
            "DOWNLOAD_HANDLERS": {"ftp": None, "s3": None, "file": None, "data": None},
            "TELNETCONSOLE_ENABLED": False,  # not work a crawl does; it only opens a port
            # Scrapy's broad-crawl advice where it is the same work: ours keeps no cookies
            # (DummyCookieJar), so Scrapy's cookie middleware is off too
            "COOKIES_ENABLED": False,
        }
    )
    crawler = process.create_crawler(BfsSpider)
    process.crawl(crawler, seeds=args.seeds, max_pages=args.max_pages)
    process.start()
    spider = crawler.spider
    assert isinstance(spider, BfsSpider)
    stats = crawler.stats.get_stats() if crawler.stats else {}
    print(json.dumps({
        "pages": spider.count,
        "html": spider.html,
        "crawl_elapsed": round(spider.last_at - spider.opened_at, 3),
        "requests": stats.get("downloader/request_count", 0),
        "robots_requests": stats.get("robotstxt/request_count", 0),
        "robots_forbidden": stats.get("robotstxt/forbidden", 0),
    }))  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
