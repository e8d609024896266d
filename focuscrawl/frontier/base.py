"""The FrontierStore protocol: the crawl DB every strategy's scores go into."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from typing import Protocol

from focuscrawl.types import Merge, QueuedURL, URLState


class FrontierStore(Protocol):
    """Every known URL with its state, score, host, depth, parents, order and layer.

    Scores are mutable in place; higher = sooner. All writes are durable after
    :meth:`commit` (the engine commits after each batch of results together with
    the output files, which is what makes resume exact).
    """

    def add(
        self,
        url: str,
        score: float,
        *,
        depth: int,
        parent: str | None,
        host: str,
        merge: Merge = Merge.MAX,
        layer: int = 0,
    ) -> bool:
        """Add a URL, or merge ``score`` into a known *queued* one with ``merge``.

        Records ``parent`` as one more parent of the URL (sibling updates need
        the set of parents). Returns True if the URL was new.
        """
        ...

    def add_many(
        self,
        items: Iterable[tuple[str, float, int, str | None, str]],
        *,
        merge: Merge = Merge.MAX,
        layer: int = 0,
    ) -> int:
        """Batch form of :meth:`add`: items are ``(url, score, depth, parent, host)``.

        Returns the number of new URLs.
        """
        ...

    def update_scores(self, updates: Iterable[tuple[str, float]], merge: Merge) -> int:
        """Change the scores of known URLs of any state; unknown URLs are ignored.

        Fetched pages keep OTIE/OPIC cash this way (a re-crawl is
        ``mark(url, QUEUED)``). Repeated URLs in one batch are combined first.
        Returns the number of URLs whose score was written.
        """
        ...

    def raise_children(self, parent: str, score: float, *, exclude: str | None = None) -> int:
        """Raise every queued child of ``parent`` to at least ``score`` (sibling update)."""
        ...

    def pop(
        self,
        n: int,
        *,
        exclude_hosts: Collection[str] = (),
        max_per_host: int = 0,
        max_layer: int | None = None,
    ) -> list[QueuedURL]:
        """Take up to ``n`` best queued URLs (highest score, then discovery order).

        Skips hosts in ``exclude_hosts`` and takes at most ``max_per_host`` URLs of
        one host (0 = no limit). ``max_layer`` restricts to URLs discovered in
        layers ``<= max_layer``. Taken URLs move to IN_FLIGHT.
        """
        ...

    def mark(self, url: str, state: URLState, *, score: float | None = None) -> None:
        """Set the state of a URL (FETCHED, FAILED, DROPPED, or back to QUEUED)."""
        ...

    def requeue_in_flight(self) -> int:
        """After a crash: put every IN_FLIGHT URL back to QUEUED. Returns how many."""
        ...

    def get(self, url: str) -> QueuedURL | None:
        """The stored row of a URL, whatever its state."""
        ...

    def state(self, url: str) -> URLState | None: ...

    def parents(self, url: str) -> list[str]: ...

    def children(self, parent: str) -> list[str]: ...

    def count(self, state: URLState | None = None) -> int: ...

    def host_count(self, host: str, states: Collection[URLState] = ()) -> int:
        """URLs of a host (in the given states, or all)."""
        ...

    def iter_urls(self, state: URLState | None = None) -> Iterator[QueuedURL]: ...

    def get_meta(self, key: str) -> str | None:
        """Small key/value store for run state (layer number, strategy state...)."""
        ...

    def set_meta(self, key: str, value: str) -> None: ...

    def commit(self) -> None: ...

    def close(self) -> None: ...
