"""``/metrics``: the crawls' figures in the Prometheus text format (prometheus-client).

The figures are read at each scrape from what the crawls wrote (the dashboard's
reading of ``pages.jsonl`` and the live numbers of ``run.json``), per crawl: URLs,
pages, statuses, bytes, the queue, the harvest rate by the model, and the state;
from the ``live`` numbers each crawl process writes in its run.json (every worker's,
for a shared crawl) the URLs in flight and the fetch latency histogram; and for a
shared crawl on the server's Redis, the partitions each worker holds a lease on.

The in-flight count and the histogram are those of the crawl's current process, as
of its last write of run.json (every few seconds): a resumed crawl starts them again
from zero, which Prometheus reads as a counter reset. The crawl's totals (URLs, pages,
responses, bytes) are not: they count the pages its last commit accounts for, as
run.json's summary and the dashboard do, so a crawl killed with ``kill -9`` and
resumed counts on from its last commit, never back.
"""

from __future__ import annotations

import contextlib
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from focuscrawl.crawler.run import RUN_NAME
from focuscrawl.frontier.redis.connection import Connection
from focuscrawl.frontier.redis.keys import Keys
from focuscrawl.frontier.redis.rows import text
from focuscrawl.output.layout import run_files
from focuscrawl.service.crawls import CrawlManager
from focuscrawl.service.reading import RunReaders
from focuscrawl.stats import LATENCY_BUCKETS

_REDIS_TIMEOUT = 2.0  # seconds: a scrape does not wait long for a Redis that is away
_PIPELINE = 1024  # lease keys read in one round trip


def live_numbers(run_dir: Path) -> tuple[int, list[int], float] | None:
    """(URLs in flight, latency counts per bucket, latency sum) of the crawl processes of
    ``run_dir`` (its own, or its workers'), summed; None if none wrote them yet."""
    in_flight, counts, total, found = 0, [0] * (len(LATENCY_BUCKETS) + 1), 0.0, False
    for path in run_files(run_dir, RUN_NAME):
        try:
            live = json.loads(path.read_text(encoding="utf-8")).get("live")
            hist = live["fetch_latency"]
            if list(hist["le"]) != list(LATENCY_BUCKETS) or len(hist["counts"]) != len(counts):
                continue  # (another version's buckets)
            in_flight += int(live["in_flight"])
            counts = [a + int(b) for a, b in zip(counts, hist["counts"], strict=True)]
            total += float(hist["sum"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue  # not written yet, or being replaced
        found = True
    return (in_flight, counts, total) if found else None


def lease_holders(db: Any, prefix: str) -> Counter[str]:
    """Worker name -> partitions whose lease it holds now, in the shared crawl ``prefix``
    (a lease given back, ``~worker``, is nobody's)."""
    keys = Keys(prefix)
    conf = db.hget(keys.meta + "conf", "partitions")
    held: Counter[str] = Counter()
    if conf is None:
        return held
    partitions = int(conf)
    for start in range(0, partitions, _PIPELINE):
        pipe = db.pipeline(transaction=False)
        for p in range(start, min(partitions, start + _PIPELINE)):
            pipe.get(keys.partition(p) + "lease")
        held.update(name for name in (text(v) for v in pipe.execute() if v) if not name.startswith("~"))
    return held

STATES = ("running", "stopping", "finished", "paused", "stopped", "failed", "interrupted")


class CrawlCollector:
    """A prometheus-client collector over the server's crawls (read at each scrape)."""

    def __init__(self, manager: CrawlManager, readers: RunReaders, redis_url: str | None = None) -> None:
        self.manager = manager
        self.readers = readers
        self.redis_url = redis_url

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import (
            CounterMetricFamily,
            GaugeMetricFamily,
            HistogramMetricFamily,
        )

        urls = CounterMetricFamily("focuscrawl_urls", "URLs of the budget recorded", labels=["crawl"])
        pages = CounterMetricFamily("focuscrawl_pages", "pages answered 200 without error (sitemaps and feeds aside)", labels=["crawl"])
        statuses = CounterMetricFamily("focuscrawl_responses", "URLs recorded by status or error",
                                       labels=["crawl", "status"])  # fmt: skip
        size = CounterMetricFamily("focuscrawl_bytes", "bytes of the bodies fetched", labels=["crawl"])
        queued = GaugeMetricFamily("focuscrawl_queue_urls", "URLs in the frontier (run.json's last figure)",
                                   labels=["crawl"])  # fmt: skip
        harvest = GaugeMetricFamily("focuscrawl_harvest_rate", "relevant pages per page, by the model",
                                    labels=["crawl"])  # fmt: skip
        state = GaugeMetricFamily("focuscrawl_crawl_state", "1 for the crawl's state", labels=["crawl", "state"])
        in_flight = GaugeMetricFamily("focuscrawl_in_flight_urls", "URLs taken and not recorded yet "
                                      "(run.json's last figure)", labels=["crawl"])  # fmt: skip
        latency = HistogramMetricFamily("focuscrawl_fetch_latency_seconds", "seconds from a request "
                                        "sent to its body read, by the crawl's current process",
                                        labels=["crawl"])  # fmt: skip
        leases = GaugeMetricFamily("focuscrawl_worker_leases", "partitions of a shared crawl whose "
                                   "lease the worker holds", labels=["crawl", "worker"])  # fmt: skip
        shared: list[tuple[str, str]] = []
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
            live = live_numbers(self.manager.run_dir(name))
            if live is not None:
                flying, counts, total = live
                in_flight.add_metric([name], flying)
                bounds = [repr(b) for b in LATENCY_BUCKETS] + ["+Inf"]
                cumulative = [sum(counts[: i + 1]) for i in range(len(counts))]
                latency.add_metric([name], list(zip(bounds, cumulative, strict=True)), total)
            if "workers" in tail.info and isinstance(tail.info.get("crawl"), str):
                shared.append((name, tail.info["crawl"]))
        self._leases(leases, shared)
        yield from (urls, pages, statuses, size, queued, harvest, state, in_flight, latency, leases)

    def _leases(self, family: Any, shared: list[tuple[str, str]]) -> None:
        """The leases of the shared crawls on the server's Redis (none if it is away)."""
        if not shared or self.redis_url is None:
            return
        try:
            db = Connection(self.redis_url, timeout=_REDIS_TIMEOUT)
        except Exception:  # (a URL the client refuses: no figure either)
            return
        try:
            for name, prefix in shared:
                with contextlib.suppress(Exception):  # Redis away or emptied: no figure
                    for worker, n in sorted(lease_holders(db, prefix).items()):
                        family.add_metric([name, worker], n)
        finally:
            with contextlib.suppress(Exception):
                db.close()


def render_metrics(
    manager: CrawlManager, readers: RunReaders, redis_url: str | None = None
) -> tuple[bytes, str]:
    """(the exposition text, its content type)."""
    from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, generate_latest

    registry = CollectorRegistry(auto_describe=False)
    registry.register(CrawlCollector(manager, readers, redis_url))
    return generate_latest(registry), CONTENT_TYPE_LATEST
