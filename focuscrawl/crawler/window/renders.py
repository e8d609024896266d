"""The as-completed window's render queue (issue 37): a page handed to the renderer
(its HTML fetched, only a headless browser's rendering left: :mod:`focuscrawl.fetch.render`)
gives its window slot back to plain fetches, so that the shells queueing for the
browser's contexts and the quiet window of each render do not take the crawl's slots.
It keeps its host's room (``fetch.per_host``): no more pages of a host are in flight
than before, and the render's own requests to its host (its scripts, each after the
host's delay) are not queued behind more of them. At most :attr:`RenderQueue.size`
pages give their slot back at once (``fetch.render_contexts`` rendering, and as many
waiting for a context): beyond that a page waits for the renderer in its own slot,
the window fills and the crawl waits, so what a crawl holds stays bounded (the
window's size plus this queue).

The ordered schedule has none: its window is part of the order it reproduces.
The pages stay in the window (in flight, in the resume state, on the page budget):
only the room they hold changes.
"""

from __future__ import annotations

from focuscrawl.crawler.window.base import Slot
from focuscrawl.settings import Settings

__all__ = ["RenderQueue", "render_queue_size"]


def render_queue_size(settings: Settings, ordered: bool) -> int:
    """The render queue's size: ``fetch.render_contexts`` renders and as many waiting for
    a context, as-completed with ``fetch.render`` on; none otherwise."""
    if ordered or settings.fetch.render == "never":
        return 0
    return 2 * max(1, settings.fetch.render_contexts)


class RenderQueue:
    """The pages handed to the renderer: those whose slot is given back (at most
    :attr:`size`) and those waiting in their slot for room here, in the order handed."""

    def __init__(self, size: int) -> None:
        self.size = size
        self.given_back: set[Slot] = set()  # handed, their slot given back, not done
        self._waiting: dict[Slot, None] = {}  # handed, holding their slot (oldest first)

    def __len__(self) -> int:
        """Slots given back now."""
        return len(self.given_back)

    def handed(self, slot: Slot) -> bool:
        """``slot``'s page waits for the renderer: True if its slot is given back now."""
        if len(self.given_back) < self.size:
            self.given_back.add(slot)
            return True
        self._waiting[slot] = None
        return False

    def done(self, slot: Slot) -> Slot | None:
        """``slot``'s fetch is over: the page whose slot is given back in its place, if any."""
        if slot not in self.given_back:
            self._waiting.pop(slot, None)
            return None
        self.given_back.discard(slot)
        if not self._waiting:
            return None
        nxt = next(iter(self._waiting))
        del self._waiting[nxt]
        self.given_back.add(nxt)
        return nxt

    def clear(self) -> None:
        self.given_back.clear()
        self._waiting.clear()
