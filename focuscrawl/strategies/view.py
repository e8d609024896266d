"""A read-only view of the crawl DB for strategy hooks.

Strategies return scores and never write the queue (frontera's split), but many
of the papers' algorithms need to *read* it: OPIC and OTIE read the cash a page
has gathered while it waited, P0 reads the link counts t(i, j), OTIE re-crawls
the fetched page with the most cash. The engine hands every strategy one
:class:`FrontierView` before the first hook is called.
"""

from __future__ import annotations

from collections.abc import Iterator

from focuscrawl.frontier.base import FrontierStore
from focuscrawl.types import QueuedURL, URLState


class FrontierView:
    """What a hook may ask of the frontier; every answer is current, none is a copy."""

    __slots__ = ("_store",)

    def __init__(self, store: FrontierStore) -> None:
        self._store = store

    def get(self, url: str) -> QueuedURL | None:
        """The URL's row (current score, tier, depth, host, first parent), or None."""
        return self._store.get(url)

    def score(self, url: str) -> float | None:
        """The URL's current priority (cash for OPIC/OTIE), or None if unknown."""
        row = self._store.get(url)
        return None if row is None else row.score

    def state(self, url: str) -> URLState | None:
        """QUEUED, IN_FLIGHT, FETCHED, FAILED or DROPPED; None if unknown."""
        return self._store.state(url)

    def value(self, url: str, column: str) -> float | None:
        """A per-URL column the strategy declared (``Strategy.columns``), or ``"score"``."""
        return self._store.value(url, column)

    def children(self, url: str) -> list[tuple[str, int]]:
        """The out-links recorded for ``url`` with their link counts t(i, j)."""
        return self._store.children_counts(url)

    def parents(self, url: str) -> list[str]:
        """Every page known to link to ``url``, first parent first."""
        return self._store.parents(url)

    def top(self, column: str = "score", state: URLState = URLState.FETCHED) -> tuple[str, float] | None:
        """The URL in ``state`` with the highest ``column`` (ties: discovery order)."""
        return self._store.top(column, state)

    def urls(self, state: URLState | None = None) -> Iterator[QueuedURL]:
        """Every known URL (in ``state``) with its current row, in discovery order.

        A whole-frontier pass (O(N)): for rare events such as P2's re-tiering
        after its bucket bounds change, never for every page.
        """
        return self._store.iter_urls(state)

    def count(self, state: URLState | None = None) -> int:
        """How many URLs are known (in ``state``, or in all states)."""
        return self._store.count(state)
