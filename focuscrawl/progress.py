"""The live progress bar of a crawl (rich), periodic progress lines, and the one-line summary."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from focuscrawl.stats import CrawlStats

if TYPE_CHECKING:  # rich is imported with the bar (~40 ms a start): a quiet or piped crawl has none
    from rich.progress import Progress, TaskID


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
            )

            self._progress = Progress(
                TextColumn("[bold]crawl"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]:>7.1f} pages/s"),
                TextColumn("queue {task.fields[queue]:>8,}"),
                TextColumn("{task.fields[harvest]}"),
                TimeElapsedColumn(),
                console=Console(stderr=True),
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
        return (
            f"focuscrawl: {stats.fetched}{budget} URLs fetched ({stats.pages} HTML pages, "
            f"{stats.errors} errors), {rate:.1f} pages/s, {stats.queued} queued{harvest}, "
            f"{stats.elapsed:.0f} s"
        )

    @staticmethod
    def summary_line(stats: CrawlStats, out: Path) -> str:
        hr = stats.harvest_rate
        harvest = "" if hr is None else f", harvest rate {hr:.3f} ({stats.relevant}/{stats.judged})"
        rate = stats.fetched / stats.elapsed if stats.elapsed > 0 else 0.0
        return (
            f"crawled {stats.fetched} URLs ({stats.pages} HTML pages, {stats.errors} errors) "
            f"in {stats.elapsed:.1f} s, {rate:.1f} pages/s, {stats.queued} queued{harvest} -> {out}"
        )
