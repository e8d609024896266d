"""``/metrics``: the crawls' figures in the Prometheus text format (prometheus-client).

The figures are read at each scrape from what the crawls wrote (the dashboard's
reading of ``pages.jsonl`` and the live numbers of ``run.json``), per crawl: URLs,
pages, statuses, bytes, the queue, the harvest rate by the model, and the state.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from focuscrawl.service.crawls import CrawlManager
from focuscrawl.service.reading import RunReaders

STATES = ("running", "stopping", "finished", "paused", "stopped", "failed", "interrupted")


class CrawlCollector:
    """A prometheus-client collector over the server's crawls (read at each scrape)."""

    def __init__(self, manager: CrawlManager, readers: RunReaders) -> None:
        self.manager = manager
        self.readers = readers

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        urls = CounterMetricFamily("focuscrawl_urls", "URLs of the budget recorded", labels=["crawl"])
        pages = CounterMetricFamily("focuscrawl_pages", "pages answered 200 without error", labels=["crawl"])
        statuses = CounterMetricFamily("focuscrawl_responses", "URLs recorded by status or error",
                                       labels=["crawl", "status"])  # fmt: skip
        size = CounterMetricFamily("focuscrawl_bytes", "bytes of the bodies fetched", labels=["crawl"])
        queued = GaugeMetricFamily("focuscrawl_queue_urls", "URLs in the frontier (run.json's last figure)",
                                   labels=["crawl"])  # fmt: skip
        harvest = GaugeMetricFamily("focuscrawl_harvest_rate", "relevant pages per page, by the model",
                                    labels=["crawl"])  # fmt: skip
        state = GaugeMetricFamily("focuscrawl_crawl_state", "1 for the crawl's state", labels=["crawl", "state"])
        for name in self.manager.names():
            tail = self.readers.tail(name)
            urls.add_metric([name], tail.urls)
            pages.add_metric([name], tail.pages)
            size.add_metric([name], tail.bytes)
            for status, n in sorted(tail.statuses.items()):
                statuses.add_metric([name, status], n)
            summary = tail.info.get("summary") or {}
            if isinstance(summary.get("queued"), int):
                queued.add_metric([name], summary["queued"])
            if tail.pages:
                harvest.add_metric([name], tail.model_relevant / tail.pages)
            now = self.manager.state(name)
            for s in STATES:
                state.add_metric([name, s], 1.0 if s == now else 0.0)
        yield from (urls, pages, statuses, size, queued, harvest, state)


def render_metrics(manager: CrawlManager, readers: RunReaders) -> tuple[bytes, str]:
    """(the exposition text, its content type)."""
    from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

    registry = CollectorRegistry(auto_describe=False)
    registry.register(CrawlCollector(manager, readers))
    return generate_latest(registry), CONTENT_TYPE_LATEST
