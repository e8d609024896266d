"""The stores made of roles: each method of the store protocol handed on to its role.

:class:`RoleStore` is the base of :class:`~focuscrawl.frontier.indexed.store.IndexedFrontier`
and :class:`~focuscrawl.frontier.redis.store.RedisFrontier`: a store builds its four
roles (``_queue``, ``_columns``, ``_graph``, ``_journal``: :class:`~.base.UrlQueue`,
:class:`~.base.UrlColumns`, :class:`~.base.LinkGraph`, :class:`~.base.RunJournal`) and
this class hands each method of :class:`~.base.FrontierStore` on to the role that owns
it, once for every store (each store used to spell the 34 methods itself). Consumers
that use one role take it (``store.queue`` ...); the whole store is for those that use all.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence

from focuscrawl.frontier.base import LinkGraph, RunJournal, UrlColumns, UrlQueue, popped_in_room
from focuscrawl.types import Merge, QueuedURL, URLState

__all__ = ["RoleStore"]


class RoleStore:
    """The store protocol over the roles a subclass builds (see the module docstring)."""

    _queue: UrlQueue
    _columns: UrlColumns
    _graph: LinkGraph
    _journal: RunJournal

    # -- UrlQueue ---------------------------------------------------------------------

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
        count: int = 1,
        tier: int = 0,
    ) -> bool:
        return self._queue.add(
            url, score, depth=depth, parent=parent, host=host, merge=merge, layer=layer,
            count=count, tier=tier,
        )  # fmt: skip

    def add_many(
        self,
        items: Iterable[tuple[str, float, int, str | None, str, int, int]],
        *,
        merge: Merge = Merge.MAX,
        layer: int = 0,
    ) -> int:
        return self._queue.add_many(items, merge=merge, layer=layer)

    def pop(
        self,
        n: int,
        *,
        exclude_hosts: Collection[str] = (),
        max_per_host: int = 0,
        max_layer: int | None = None,
    ) -> list[QueuedURL]:
        return self._queue.pop(
            n, exclude_hosts=exclude_hosts, max_per_host=max_per_host, max_layer=max_layer
        )

    def pop_in_room(
        self, n: int, in_flight: Mapping[str, int], per_host: int
    ) -> list[QueuedURL]:
        """Up to ``n`` best queued URLs, each host within its room (:func:`~focuscrawl.frontier.base.popped_in_room`)."""
        return popped_in_room(self, n, in_flight, per_host)

    def mark(self, url: str, state: URLState, *, score: float | None = None) -> None:
        self._queue.mark(url, state, score=score)

    def requeue_in_flight(self) -> int:
        return self._queue.requeue_in_flight()

    def get(self, url: str) -> QueuedURL | None:
        return self._queue.get(url)

    def state(self, url: str) -> URLState | None:
        return self._queue.state(url)

    def known(self, urls: Sequence[str]) -> dict[str, URLState]:
        return self._queue.known(urls)

    def count(self, state: URLState | None = None) -> int:
        return self._queue.count(state)

    def host_count(self, host: str, states: Collection[URLState] = ()) -> int:
        return self._queue.host_count(host, states)

    def host_counts(self, hosts: Sequence[str]) -> dict[str, int]:
        return self._queue.host_counts(hosts)

    def iter_urls(self, state: URLState | None = None) -> Iterator[QueuedURL]:
        return self._queue.iter_urls(state)

    # -- UrlColumns -------------------------------------------------------------------

    def update_scores(self, updates: Iterable[tuple[str, float]], merge: Merge) -> int:
        return self._columns.update_scores(updates, merge)

    def update_host(
        self,
        host: str,
        score: float,
        merge: Merge,
        *,
        states: Collection[URLState] = (URLState.QUEUED,),
    ) -> int:
        return self._columns.update_host(host, score, merge, states=states)

    def set_tier(self, updates: Iterable[tuple[str, int]]) -> int:
        return self._columns.set_tier(updates)

    def update_values(self, column: str, updates: Iterable[tuple[str, float]], merge: Merge) -> int:
        return self._columns.update_values(column, updates, merge)

    def ensure_columns(self, names: Iterable[str]) -> None:
        self._columns.ensure_columns(names)

    def value(self, url: str, column: str) -> float | None:
        return self._columns.value(url, column)

    def column_names(self) -> list[str]:
        return self._columns.column_names()

    def combine_columns(
        self, dst: str, terms: Iterable[tuple[str, float]] = (), *, add: bool = True
    ) -> None:
        self._columns.combine_columns(dst, terms, add=add)

    def top(self, column: str, state: URLState = URLState.FETCHED) -> tuple[str, float] | None:
        return self._columns.top(column, state)

    # -- LinkGraph --------------------------------------------------------------------

    def parents(self, url: str) -> list[str]:
        return self._graph.parents(url)

    def children(self, parent: str) -> list[str]:
        return self._graph.children(parent)

    def children_counts(self, parent: str) -> list[tuple[str, int]]:
        return self._graph.children_counts(parent)

    def raise_children(self, parent: str, score: float, *, exclude: str | None = None) -> int:
        return self._graph.raise_children(parent, score, exclude=exclude)

    # -- RunJournal -------------------------------------------------------------------

    def get_meta(self, key: str) -> str | None:
        return self._journal.get_meta(key)

    def set_meta(self, key: str, value: str) -> None:
        self._journal.set_meta(key, value)

    def commit(self) -> None:
        self._journal.commit()

    def close(self) -> None:
        self._journal.close()
