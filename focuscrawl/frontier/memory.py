"""An in-memory :class:`~focuscrawl.frontier.base.FrontierStore`: the reference semantics.

Every rule is spelled out here in plain Python, one URL at a time; the durable stores
must behave identically (the tests compare them on random operation sequences). It
keeps everything in dicts: it suits small crawls and tests, not a million URLs.

Semantics shared by every store:

* ``add`` merges ``(tier, score)`` into a known URL of *any* state (cash added to
  an in-flight or fetched URL is kept, handed on by a re-crawl) with the pair rules
  of :func:`~focuscrawl.frontier.rules.merged_pair`, and records the parent edge
  with its link count t(parent, url) (the same edge again: the new count replaces
  the old one).
* ``update_scores`` (and ``update_values`` for an extra column, ``update_host`` for
  every URL of a host in some states) changes the score of known URLs, whatever
  their state; tiers are left alone. Repeated URLs of one batch are combined first
  (``ADD``: summed, ``MAX``: the highest, ``SET``: the last). The return value
  counts URLs whose value was written (for ``MAX`` only those that went up; for
  ``KEEP`` none). An extra column reads 0.0 for a known URL never given a value.
* A parent that is not yet known is recorded as a DROPPED URL (known, never
  fetched: it was seen only as the referrer of a link) with score 0 and tier 0, so
  that the parent relation and sibling updates still work. A URL is never its own
  parent.
* ``pop`` orders by tier descending, score descending, then discovery order
  (``seq``: 1, 2, 3 ...), and is tier-strict: of the QUEUED URLs allowed by
  ``max_layer``, only those of the highest tier may be taken, even when politeness
  (``exclude_hosts``, ``max_per_host``) leaves some or all of them out.
* ``top`` ranks the URLs of one state by a column, ties in discovery order.
* ``mark`` on an unknown URL, or a column never created, raises
  :class:`~focuscrawl.exceptions.FrontierError`.
* A store opened with ``parents=False`` (for a strategy that reads no parent
  edges: :attr:`~focuscrawl.strategies.base.Strategy.needs_parents`) keeps only
  each URL's first parent, the one handed out with it; ``parents``, ``children``,
  ``children_counts`` and ``raise_children`` then raise FrontierError.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from focuscrawl.exceptions import FrontierError
from focuscrawl.frontier.base import FrontierStore, no_edges_error, popped_in_room
from focuscrawl.frontier.rules import (
    SCORE,
    aggregated,
    checked_column,
    checked_int,
    checked_item,
    checked_score,
    host_of,
    known_states,
    merged,
    merged_pair,
    written,
)
from focuscrawl.types import Merge, QueuedURL, URLState

__all__ = ["MemoryFrontier", "aggregated", "checked_score", "host_of", "merged"]


@dataclass(slots=True)
class _Row:
    url: str
    score: float
    depth: int
    host: str
    state: URLState
    layer: int
    seq: int
    tier: int = 0
    parents: list[str] = field(default_factory=list)  # first parent first
    values: dict[str, float] = field(default_factory=dict)  # extra columns set so far


class MemoryFrontier:
    """Dict-backed frontier: the reference behaviour of every store.

    ``commit`` and ``close`` do nothing: nothing here is durable. ``parents``: keep the
    parent edges (see the module docstring). Its roles are the store itself.
    """

    def __init__(self, *, parents: bool = True) -> None:
        self._keep_edges = parents
        self._rows: dict[str, _Row] = {}  # in discovery order
        self._children: dict[str, list[str]] = {}
        self._links: dict[tuple[str, str], int] = {}  # (parent, child) -> t(parent, child)
        self._columns: set[str] = set()
        self._meta: dict[str, str] = {}

    @property
    def queue(self) -> MemoryFrontier:
        return self

    @property
    def columns(self) -> MemoryFrontier:
        return self

    @property
    def graph(self) -> MemoryFrontier:
        return self

    @property
    def journal(self) -> MemoryFrontier:
        return self

    def _touch_parent(self, parent: str, depth: int, layer: int) -> None:
        if parent not in self._rows:
            seq = len(self._rows) + 1
            self._rows[parent] = _Row(
                parent, 0.0, max(depth - 1, 0), host_of(parent), URLState.DROPPED, layer, seq
            )

    def _column(self, name: str) -> str:
        if name != SCORE and name not in self._columns:
            raise FrontierError(f"unknown column {name!r}")
        return name

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
        """Add a URL or merge ``(tier, score)`` into it (any state); record the parent edge."""
        score, parent, count, tier = checked_item(url, score, parent, count, tier)
        layer = checked_int("layer", layer)
        if parent is not None:
            self._touch_parent(parent, depth, layer)
        row = self._rows.get(url)
        new = row is None
        if row is None:
            row = _Row(url, score, depth, host, URLState.QUEUED, layer, len(self._rows) + 1, tier)
            self._rows[url] = row
        else:
            row.tier, row.score = merged_pair(row.tier, row.score, tier, score, merge)
        if parent is not None and not self._keep_edges:
            if not row.parents:
                row.parents.append(parent)  # the first parent only
        elif parent is not None:
            if parent not in row.parents:
                row.parents.append(parent)
                self._children.setdefault(parent, []).append(url)
            self._links[parent, url] = count
        return new

    def _edges_kept(self) -> None:
        if not self._keep_edges:
            raise no_edges_error("this frontier")

    def add_many(
        self,
        items: Iterable[tuple[str, float, int, str | None, str, int, int]],
        *,
        merge: Merge = Merge.MAX,
        layer: int = 0,
    ) -> int:
        """Sequential :meth:`add` over ``(url, score, depth, parent, host, count, tier)`` items."""
        return sum(
            self.add(u, s, depth=d, parent=p, host=h, merge=merge, layer=layer, count=c, tier=t)
            for u, s, d, p, h, c, t in items
        )

    def update_scores(self, updates: Iterable[tuple[str, float]], merge: Merge) -> int:
        """Merge scores into known URLs of any state; unknown URLs are ignored."""
        return self.update_values(SCORE, updates, merge)

    def update_values(self, column: str, updates: Iterable[tuple[str, float]], merge: Merge) -> int:
        """Merge values of ``column`` into known URLs of any state; unknown URLs are ignored."""
        column = self._column(column)
        changed = 0
        for url, value in aggregated(updates, merge).items():
            row = self._rows.get(url)
            if row is None:
                continue
            old = row.score if column == SCORE else row.values.get(column, 0.0)
            if not written(old, value, merge):
                continue
            if column == SCORE:
                row.score = merged(old, value, merge)
            else:
                row.values[column] = merged(old, value, merge)
            changed += 1
        return changed

    def ensure_columns(self, names: Iterable[str]) -> None:
        """Create the extra columns ``names`` (``"score"`` always exists)."""
        self._columns.update(checked_column(n) for n in names if n != SCORE)

    def value(self, url: str, column: str) -> float | None:
        """``column`` of ``url``: None if the URL is unknown, 0.0 if never set."""
        column = self._column(column)
        row = self._rows.get(url)
        if row is None:
            return None
        return row.score if column == SCORE else row.values.get(column, 0.0)

    def column_names(self) -> list[str]:
        """The extra columns, sorted (``"score"`` is not listed)."""
        return sorted(self._columns)

    def combine_columns(
        self, dst: str, terms: Iterable[tuple[str, float]] = (), *, add: bool = True
    ) -> None:
        """For every known URL: ``dst = (dst if add else 0) + Σ factor · src`` (any state)."""
        dst = self._column(dst)
        terms = [(self._column(src), checked_score(src, f)) for src, f in terms]
        for row in self._rows.values():
            get = row.values.get
            total = (row.score if dst == SCORE else get(dst, 0.0)) if add else 0.0
            for src, f in terms:
                total += f * (row.score if src == SCORE else get(src, 0.0))
            if dst == SCORE:
                row.score = total
            else:
                row.values[dst] = total

    def top(self, column: str, state: URLState = URLState.FETCHED) -> tuple[str, float] | None:
        """The URL in ``state`` with the highest ``column``; ties: discovery order."""
        column = self._column(column)
        best: tuple[str, float] | None = None
        for row in self._rows.values():  # discovery order: a tie keeps the first
            if row.state == state:
                value = row.score if column == SCORE else row.values.get(column, 0.0)
                if best is None or value > best[1]:
                    best = (row.url, value)
        return best

    def update_host(
        self,
        host: str,
        score: float,
        merge: Merge,
        *,
        states: Collection[URLState] = (URLState.QUEUED,),
    ) -> int:
        """Merge ``score`` into every URL of ``host`` in ``states``; returns how many were written."""
        value = checked_score(host, score)
        wanted = {URLState(s) for s in states}
        changed = 0
        for row in self._rows.values():
            if row.host == host and row.state in wanted and written(row.score, value, merge):
                row.score = merged(row.score, value, merge)
                changed += 1
        return changed

    def set_tier(self, updates: Iterable[tuple[str, int]]) -> int:
        """Set the tiers of known URLs (the last of repeats wins); returns how many known URLs."""
        tiers = {url: checked_int(f"tier of {url!r}", tier) for url, tier in updates}
        known = 0
        for url, tier in tiers.items():
            row = self._rows.get(url)
            if row is not None:
                row.tier = tier
                known += 1
        return known

    def raise_children(self, parent: str, score: float, *, exclude: str | None = None) -> int:
        """Raise queued children of ``parent`` below ``score`` to ``score``."""
        score = checked_score(parent, score)
        self._edges_kept()
        changed = 0
        for child in self._children.get(parent, []):
            row = self._rows[child]
            if child != exclude and row.state is URLState.QUEUED and row.score < score:
                row.score = score
                changed += 1
        return changed

    def pop(
        self,
        n: int,
        *,
        exclude_hosts: Collection[str] = (),
        max_per_host: int = 0,
        max_layer: int | None = None,
    ) -> list[QueuedURL]:
        """Greedy over the queued URLs of the top tier in (score desc, seq asc) order."""
        queued = [
            r
            for r in self._rows.values()
            if r.state is URLState.QUEUED and (max_layer is None or r.layer <= max_layer)
        ]
        if not queued or n <= 0:
            return []
        top_tier = max(r.tier for r in queued)  # excluded hosts count: tiers are strict
        excluded = set(exclude_hosts)
        eligible = sorted(
            (r for r in queued if r.tier == top_tier and r.host not in excluded),
            key=lambda r: (-r.score, r.seq),
        )
        taken: list[QueuedURL] = []
        per_host: dict[str, int] = {}
        for row in eligible:
            if len(taken) >= n:
                break
            if max_per_host and per_host.get(row.host, 0) >= max_per_host:
                continue
            per_host[row.host] = per_host.get(row.host, 0) + 1
            row.state = URLState.IN_FLIGHT
            taken.append(self._queued(row))
        return taken

    def pop_in_room(self, n: int, in_flight: Mapping[str, int], per_host: int) -> list[QueuedURL]:
        return popped_in_room(self, n, in_flight, per_host)  # (see UrlQueue.pop_in_room)

    def mark(self, url: str, state: URLState, *, score: float | None = None) -> None:
        row = self._rows.get(url)
        if row is None:
            raise FrontierError(f"cannot mark unknown URL {url!r}")
        row.state = URLState(state)
        if score is not None:
            row.score = checked_score(url, score)

    def requeue_in_flight(self) -> int:
        rows = [r for r in self._rows.values() if r.state is URLState.IN_FLIGHT]
        for row in rows:
            row.state = URLState.QUEUED
        return len(rows)

    def _queued(self, row: _Row) -> QueuedURL:
        parent = row.parents[0] if row.parents else None
        return QueuedURL(
            row.url, row.score, row.depth, row.host, parent, row.layer, row.seq, row.tier
        )

    def get(self, url: str) -> QueuedURL | None:
        row = self._rows.get(url)
        return None if row is None else self._queued(row)

    def state(self, url: str) -> URLState | None:
        row = self._rows.get(url)
        return None if row is None else row.state

    def parents(self, url: str) -> list[str]:
        """First parent first, then the others in discovery order."""
        self._edges_kept()
        row = self._rows.get(url)
        if row is None or not row.parents:
            return []
        first, *rest = row.parents
        return [first, *sorted(rest, key=lambda p: self._rows[p].seq)]

    def children(self, parent: str) -> list[str]:
        """Children in discovery order."""
        return [child for child, _ in self.children_counts(parent)]

    def children_counts(self, parent: str) -> list[tuple[str, int]]:
        """Children with t(parent, child), in discovery order."""
        self._edges_kept()
        children = sorted(self._children.get(parent, []), key=lambda c: self._rows[c].seq)
        return [(child, self._links[parent, child]) for child in children]

    def count(self, state: URLState | None = None) -> int:
        if state is None:
            return len(self._rows)
        return sum(1 for r in self._rows.values() if r.state == state)

    def known(self, urls: Sequence[str]) -> dict[str, URLState]:
        """The states of the known URLs of ``urls`` (see FrontierStore.known)."""
        return known_states(self.state, urls)

    def host_counts(self, hosts: Sequence[str]) -> dict[str, int]:
        return {host: self.host_count(host) for host in hosts}

    def host_count(self, host: str, states: Collection[URLState] = ()) -> int:
        wanted = set(states)
        return sum(
            1 for r in self._rows.values() if r.host == host and (not wanted or r.state in wanted)
        )

    def iter_urls(self, state: URLState | None = None) -> Iterator[QueuedURL]:
        for row in list(self._rows.values()):
            if state is None or row.state == state:
                yield self._queued(row)

    def get_meta(self, key: str) -> str | None:
        return self._meta.get(key)

    def set_meta(self, key: str, value: str) -> None:
        self._meta[key] = value

    def commit(self) -> None:
        """Nothing to do: the memory store is not durable."""

    def close(self) -> None:
        """Nothing to release."""


if TYPE_CHECKING:  # mypy proves the protocol is implemented
    _STORE: type[FrontierStore] = MemoryFrontier
