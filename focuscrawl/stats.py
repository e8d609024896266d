"""Live numbers of a crawl: what the progress bar, run.json and the summary line show."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any


@dataclass
class CrawlStats:
    """Live numbers of a crawl (what the progress bar and run.json show)."""

    fetched: int = 0  # results counted against max_pages
    pages: int = 0  # HTML pages parsed
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
