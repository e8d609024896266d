"""The live progress bar of a crawl (rich), periodic progress lines, and the one-line summary."""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from focuscrawl.stats import CrawlStats

if TYPE_CHECKING:  # rich is imported with the bar (~40 ms a start): a quiet or piped crawl has none
    from rich.progress import Progress, TaskID


_WIDE = 120  # columns from which the bar shows its label, padded numbers and the time elapsed
# columns the narrow bar's numbers take at most: "12345/20000 1234.5 URLs/s queue 1,234,567
# harvest 0.123 ETA 0:00:00" and the spaces between them
_NUMBERS_WIDTH = 72


class ProgressView:
    """A rich progress bar: pages fetched of the budget, pages/s, queue, harvest rate."""

    def __init__(self, *, enabled: bool, max_pages: int, log_every: float = 0.0) -> None:
        """``enabled``: the bar (a terminal); else ``log_every`` > 0: a line on stderr at
        most every that many seconds (a log file or a pipe, where a bar would be noise)."""
        self.enabled = enabled
        self.max_pages = max_pages
        self.log_every = log_every
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._last_line = time.monotonic()

    def __enter__(self) -> ProgressView:
        if self.enabled:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            console = Console(stderr=True)
            # the numbers first: on a narrow terminal (80 columns) the bar gets what they
            # leave (none below 8 columns), and the label, the padding and the elapsed time go
            wide = console.width >= _WIDE
            bar = max(0, min(40, console.width - _NUMBERS_WIDTH))
            self._progress = Progress(
                *((TextColumn("[bold]crawl"),) if wide else ()),
                *((BarColumn(bar_width=bar),) if bar >= 8 else ()),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]:>7.1f} URLs/s" if wide else "{task.fields[rate]:.1f} URLs/s"),
                TextColumn("queue {task.fields[queue]:>8,}" if wide else "queue {task.fields[queue]:,}"),
                TextColumn("{task.fields[harvest]}"),
                *((TimeElapsedColumn(),) if wide else ()),
                TextColumn("ETA"),
                TimeRemainingColumn(),  # against the budget: the crawl may end sooner
                console=console,
                transient=True,
            )
            self._progress.__enter__()
            total = self.max_pages if self.max_pages > 0 else None
            self._task = self._progress.add_task("crawl", total=total, rate=0.0, queue=0, harvest="")
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._progress is not None:
            self._progress.__exit__(exc_type, exc, tb)

    def update(self, stats: CrawlStats) -> None:
        if self._progress is None or self._task is None:
            if self.log_every > 0 and time.monotonic() - self._last_line >= self.log_every:
                self._last_line = time.monotonic()
                print(self.progress_line(stats), file=sys.stderr, flush=True)
            return
        rate = stats.fetched / stats.elapsed if stats.elapsed > 0 else 0.0
        hr = stats.harvest_rate
        self._progress.update(
            self._task,
            completed=stats.fetched,
            rate=rate,
            queue=stats.queued,
            harvest="" if hr is None else f"harvest {hr:.3f}",
        )

    def progress_line(self, stats: CrawlStats) -> str:
        """One progress line, as Scrapy's periodic stats: pages, rate, queue, harvest."""
        rate = stats.fetched / stats.elapsed if stats.elapsed > 0 else 0.0
        budget = f"/{self.max_pages}" if self.max_pages > 0 else ""
        hr = stats.harvest_rate
        harvest = "" if hr is None else f", harvest rate {hr:.3f} ({stats.relevant}/{stats.judged})"
        eta = ""
        if self.max_pages > 0 and rate > 0:
            eta = f", ETA {eta_text(max(0, self.max_pages - stats.fetched) / rate)}"
        return (
            f"focuscrawl: {stats.fetched}{budget} URLs fetched ({stats.pages} pages, "
            f"{stats.errors} errors), {rate:.1f} URLs/s, {stats.queued} queued{harvest}, "
            f"{stats.elapsed:.0f} s{eta}"
        )

    @staticmethod
    def summary_line(stats: CrawlStats, out: Path) -> str:
        return summary_text(stats.to_dict(), out)


def summary_text(summary: Mapping[str, Any], out: Path, workers: int = 0) -> str:
    """The one summary line of a crawl, from its run.json summary (what a one-machine
    crawl and a shared crawl's merged summary both are; ``workers``: how many shared it):
    the URLs/s is run.json's own figure, the one the dashboard shows.

    >>> print(summary_text({"fetched": 12, "pages": 10, "errors": 1, "elapsed": 3.0, "queued": 4,
    ...     "pages_per_second": 4.0, "relevant": 5, "judged": 10, "harvest_rate": 0.5}, Path("r"), 2))
    crawled 12 URLs (10 pages, 1 errors) by 2 workers in 3.0 s, 4.0 URLs/s, 4 queued, harvest rate 0.500 (5/10) -> r
    """
    judged, relevant = int(summary.get("judged") or 0), int(summary.get("relevant") or 0)
    harvest = f", harvest rate {relevant / judged:.3f} ({relevant}/{judged})" if judged else ""
    by = f" by {workers} workers" if workers else ""
    queued = summary.get("queued")
    return (
        f"crawled {summary.get('fetched', 0)} URLs ({summary.get('pages', 0)} pages, "
        f"{summary.get('errors', 0)} errors){by} in {float(summary.get('elapsed') or 0):.1f} s, "
        f"{float(summary.get('pages_per_second') or 0):.1f} URLs/s"
        f"{'' if queued is None else f', {queued} queued'}{harvest}"
        f"{skipped_text(summary.get('counters') or {})} -> {out}"
    )


def skipped_text(counters: Mapping[str, Any], shown: int = 3) -> str:
    """The main reasons URLs were taken and not fetched (robots.txt, proxy errors...),
    which the counts of fetched URLs and errors do not show.

    >>> skipped_text({"skipped_robots": 2259, "skipped_proxy": 612, "status_200": 53})
    '; not fetched: robots 2,259, proxy 612'
    """
    top = sorted(((n, k) for k, n in counters.items() if k.startswith("skipped_") and n), reverse=True)
    return "; not fetched: " + ", ".join(f"{k[8:]} {n:,}" for n, k in top[:shown]) if top else ""


def eta_text(seconds: float) -> str:
    """``1h02m``, ``3m05s``, ``42s``.

    >>> eta_text(3725), eta_text(185), eta_text(41.6)
    ('1h02m', '3m05s', '42s')
    """
    s = round(seconds)
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    return f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"
