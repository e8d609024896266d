"""Live numbers of a crawl: what the progress bar, run.json and the summary line show."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

# upper bounds (seconds) of the fetch latency histogram's buckets (Prometheus' "le"),
# from a local replay's milliseconds to a slow host's tens of seconds
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


@dataclass
class LatencyHistogram:
    """The fetches' latency (request sent to body read) in :data:`LATENCY_BUCKETS`.

    >>> h = LatencyHistogram()
    >>> h.observe(0.03); h.observe(0.03); h.observe(99.0)
    >>> h.to_dict()["counts"][:5], h.to_dict()["counts"][-1], h.count
    ([0, 0, 0, 2, 0], 1, 3)
    """

    counts: list[int] = field(default_factory=lambda: [0] * (len(LATENCY_BUCKETS) + 1))
    total: float = 0.0  # seconds, summed

    @property
    def count(self) -> int:
        return sum(self.counts)

    def observe(self, seconds: float) -> None:
        i = 0
        while i < len(LATENCY_BUCKETS) and seconds > LATENCY_BUCKETS[i]:
            i += 1
        self.counts[i] += 1  # the last count: over the last bound (+Inf)
        self.total += seconds

    def to_dict(self) -> dict[str, Any]:
        """Counts per bucket (not cumulative), the last one above every bound."""
        return {"le": list(LATENCY_BUCKETS), "counts": list(self.counts), "sum": round(self.total, 6)}


@dataclass
class CrawlStats:
    """Live numbers of a crawl (what the progress bar and run.json show)."""

    fetched: int = 0  # results counted against max_pages
    # pages parsed: HTML and PDF documents answered 2xx (a sitemap or a feed, read for its
    # links, is none: as the export, the search index, the dashboard and eval count them)
    pages: int = 0
    relevant: int = 0
    judged: int = 0
    errors: int = 0
    queued: int = 0
    layer: int = 0
    started: float = field(default_factory=time.time)
    elapsed_before: float = 0.0  # time spent in earlier runs of a resumed crawl
    # when this run ended: its numbers stand still from there, so that the summary line
    # and run.json (and the dashboard, which reads it) give the same URLs/s
    ended: float | None = None
    counters: Counter[str] = field(default_factory=Counter)
    # of this process only (not restored by a resume): what /metrics reads in run.json
    in_flight: int = 0  # URLs taken and not recorded, at the last write of run.json
    fetch_latency: LatencyHistogram = field(default_factory=LatencyHistogram)

    @property
    def elapsed(self) -> float:
        end = time.time() if self.ended is None else self.ended
        return self.elapsed_before + (end - self.started)

    @property
    def harvest_rate(self) -> float | None:
        return self.relevant / self.judged if self.judged else None

    def restore(self, saved: dict[str, Any]) -> None:
        """Take back the numbers ``to_dict`` saved (a resumed crawl counts on)."""
        self.fetched = int(saved.get("fetched", 0))
        self.pages = int(saved.get("pages", 0))
        self.relevant = int(saved.get("relevant", 0))
        self.judged = int(saved.get("judged", 0))
        self.errors = int(saved.get("errors", 0))
        self.layer = int(saved.get("layer", 0))
        self.elapsed_before = float(saved.get("elapsed", 0.0))
        self.counters.update(saved.get("counters", {}))

    def live(self) -> dict[str, Any]:
        """The numbers of this process that ``focuscrawl serve``'s /metrics shows (run.json's
        ``live``): URLs in flight and the fetch latency histogram."""
        return {"in_flight": self.in_flight, "fetch_latency": self.fetch_latency.to_dict()}

    def to_dict(self) -> dict[str, Any]:
        return {
            "fetched": self.fetched,
            "pages": self.pages,
            "relevant": self.relevant,
            "judged": self.judged,
            "errors": self.errors,
            "queued": self.queued,
            "layer": self.layer,
            "elapsed": round(self.elapsed, 3),
            "harvest_rate": self.harvest_rate,
            "pages_per_second": round(self.fetched / self.elapsed, 3) if self.elapsed else None,
            "counters": dict(sorted(self.counters.items())),
        }
