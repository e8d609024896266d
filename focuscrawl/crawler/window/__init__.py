"""The window of fetches: the URLs taken and not yet recorded, and the order in which
their results reach the recorder (``crawl.schedule``).

* :class:`AsCompletedWindow` (a live crawl's default): a result is handed over when
  it arrives, and the slot it freed may be refilled at once. A straggler (a hung
  request, a slow body) costs its own slot, never the crawl: while the whole budget
  is in flight, more URLs than it needs are taken (the end game), and what is not
  needed is put back. The order of the results, and so of ``pages.jsonl``, depends
  on the network.
* :class:`OrderedWindow` (the reproducible schedule; ``focuscrawl simulate`` and
  ``focuscrawl experiment``'s default): results are handed over strictly in the
  order their URLs were taken (a reorder buffer), so the window is refilled only at
  those logical points. With the same settings, seed and web, every crawl takes the
  same URLs in the same order, whatever the network does.

As-completed, a page handed to the renderer (``fetch.render``) gives its slot back to
plain fetches while it renders, within a bounded :mod:`render queue
<focuscrawl.crawler.window.renders>`; ordered, the window stays what the settings say.

The window knows nothing of the frontier: the :mod:`scheduler
<focuscrawl.crawler.scheduler>` takes URLs from it and puts them back.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from focuscrawl.crawler.window.as_completed import AsCompletedWindow
from focuscrawl.crawler.window.base import STOP_GRACE, InFlight, Results, Slot, Window
from focuscrawl.crawler.window.ordered import OrderedWindow
from focuscrawl.crawler.window.renders import render_queue_size
from focuscrawl.fetch.base import Fetcher
from focuscrawl.settings import Settings, window_size
from focuscrawl.stats import CrawlStats

__all__ = ["STOP_GRACE", "AsCompletedWindow", "InFlight", "OrderedWindow", "Results", "Slot", "Window", "make_window"]


def make_window(
    fetcher: Fetcher, stats: CrawlStats, stop: asyncio.Event, settings: Settings, *, ordered: bool,
    scope: Callable[[str], str | None] | None = None,
) -> Window:
    """The window of ``crawl.schedule``: ordered or as-completed (with its render queue);
    ``scope`` says why a redirect's target is out of the crawl's scope (None: in it)."""
    size = window_size(settings, ordered)
    if ordered:
        return OrderedWindow(fetcher, stats, stop, size, scope)
    return AsCompletedWindow(
        fetcher, stats, stop, size, straggler_seconds=settings.crawl.straggler_seconds,
        render_queue=render_queue_size(settings, ordered), scope=scope,
    )  # fmt: skip
