"""An in-memory :class:`~focuscrawl.frontier.base.FrontierStore`: the reference semantics.

Every rule is spelled out here in plain Python, one URL at a time; the SQLite store
must behave identically (the tests compare the two on random operation sequences).
It keeps everything in dicts, so it suits small crawls and tests, not a million URLs.

Semantics shared by both stores:

* ``add`` merges a new score only into a QUEUED URL; for a URL in any other state it
  just records the extra parent.
* ``update_scores`` changes the score of any *known* URL, whatever its state: OTIE
  and OPIC keep cash on fetched pages, and a re-crawl (``mark(url, QUEUED)``) hands
  that cash on. Repeated URLs of one batch are combined first (``ADD``: summed,
  ``MAX``: the highest, ``SET``: the last). The return value counts URLs whose
  score was written (for ``MAX`` only those that went up; for ``KEEP`` none).
* A parent that is not yet known is recorded as a DROPPED URL (known, never
  fetched: it was seen only as the referrer of a link), so that the parent relation
  and sibling updates still work. A URL is never its own parent.
* ``pop`` orders by score descending, then discovery order; ``seq`` is the
  discovery number (1, 2, 3 ...).
* ``mark`` on an unknown URL raises :class:`~focuscrawl.exceptions.FrontierError`.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from focuscrawl.exceptions import FrontierError
from focuscrawl.frontier.base import FrontierStore
from focuscrawl.types import Merge, QueuedURL, URLState


def host_of(url: str) -> str:
    """Host of a URL as stored for a parent that was never added.

    >>> host_of("http://Example.org:8080/a")
    'example.org'
    >>> host_of("not a url")
    ''
    """
    try:
        return urlsplit(url).hostname or ""
    except ValueError:
        return ""


def checked_score(url: str, score: float) -> float:
    """``score`` as a float; NaN is refused (SQLite would store it as NULL).

    >>> checked_score("http://a/", 2)
    2.0
    """
    value = float(score)
    if math.isnan(value):
        raise FrontierError(f"score of {url!r} is NaN")
    return value


def merged(stored: float, new: float, merge: Merge) -> float:
    """The stored score after merging ``new`` into it.

    >>> [merged(2.0, 3.0, m) for m in (Merge.KEEP, Merge.MAX, Merge.ADD, Merge.SET)]
    [2.0, 3.0, 5.0, 3.0]
    """
    if merge is Merge.KEEP:
        return stored
    if merge is Merge.MAX:
        return max(stored, new)
    if merge is Merge.ADD:
        return stored + new
    return new


def aggregated(updates: Iterable[tuple[str, float]], merge: Merge) -> dict[str, float]:
    """One score per URL of a batch, combined with ``merge`` (all checked first).

    >>> aggregated([("u", 1.0), ("v", 2.0), ("u", 3.0)], Merge.ADD)
    {'u': 4.0, 'v': 2.0}
    """
    combined: dict[str, float] = {}
    for url, score in updates:
        value = checked_score(url, score)
        old = combined.get(url)
        combined[url] = value if old is None else merged(old, value, merge)
    return combined


@dataclass(slots=True)
class _Row:
    url: str
    score: float
    depth: int
    host: str
    state: URLState
    layer: int
    seq: int
    parents: list[str] = field(default_factory=list)  # first parent first


class MemoryFrontier:
    """Dict-backed frontier with the same behaviour as ``SqliteFrontier``.

    ``commit`` and ``close`` do nothing: nothing here is durable.
    """

    def __init__(self) -> None:
        self._rows: dict[str, _Row] = {}
        self._children: dict[str, list[str]] = {}
        self._meta: dict[str, str] = {}

    def _touch_parent(self, parent: str, depth: int, layer: int) -> None:
        if parent not in self._rows:
            seq = len(self._rows) + 1
            self._rows[parent] = _Row(
                parent, 0.0, max(depth - 1, 0), host_of(parent), URLState.DROPPED, layer, seq
            )

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
        """Add a URL or merge ``score`` into it if it is queued; record ``parent``."""
        score = checked_score(url, score)
        if parent == url:
            parent = None
        if parent is not None:
            self._touch_parent(parent, depth, layer)
        row = self._rows.get(url)
        new = row is None
        if row is None:
            row = _Row(url, score, depth, host, URLState.QUEUED, layer, len(self._rows) + 1)
            self._rows[url] = row
        elif row.state is URLState.QUEUED:
            row.score = merged(row.score, score, merge)
        if parent is not None and parent not in row.parents:
            row.parents.append(parent)
            self._children.setdefault(parent, []).append(url)
        return new

    def add_many(
        self,
        items: Iterable[tuple[str, float, int, str | None, str]],
        *,
        merge: Merge = Merge.MAX,
        layer: int = 0,
    ) -> int:
        """Sequential :meth:`add` over ``(url, score, depth, parent, host)`` items."""
        return sum(
            self.add(u, s, depth=d, parent=p, host=h, merge=merge, layer=layer)
            for u, s, d, p, h in items
        )

    def update_scores(self, updates: Iterable[tuple[str, float]], merge: Merge) -> int:
        """Merge scores into known URLs of any state; unknown URLs are ignored."""
        changed = 0
        for url, value in aggregated(updates, merge).items():
            row = self._rows.get(url)
            if row is None or merge is Merge.KEEP:
                continue
            if merge is Merge.MAX and value <= row.score:
                continue
            row.score = merged(row.score, value, merge)
            changed += 1
        return changed

    def raise_children(self, parent: str, score: float, *, exclude: str | None = None) -> int:
        """Raise queued children of ``parent`` below ``score`` to ``score``."""
        score = checked_score(parent, score)
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
        """Greedy over all eligible queued URLs in (score desc, seq asc) order."""
        excluded = set(exclude_hosts)
        eligible = sorted(
            (
                r
                for r in self._rows.values()
                if r.state is URLState.QUEUED
                and r.host not in excluded
                and (max_layer is None or r.layer <= max_layer)
            ),
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

    def drop_queued(self, max_layer: int | None = None) -> int:
        """Mark queued URLs (of layers ``<= max_layer``, or all) DROPPED."""
        rows = [
            r
            for r in self._rows.values()
            if r.state is URLState.QUEUED and (max_layer is None or r.layer <= max_layer)
        ]
        for row in rows:
            row.state = URLState.DROPPED
        return len(rows)

    def _queued(self, row: _Row) -> QueuedURL:
        parent = row.parents[0] if row.parents else None
        return QueuedURL(row.url, row.score, row.depth, row.host, parent, row.layer, row.seq)

    def get(self, url: str) -> QueuedURL | None:
        row = self._rows.get(url)
        return None if row is None else self._queued(row)

    def state(self, url: str) -> URLState | None:
        row = self._rows.get(url)
        return None if row is None else row.state

    def parents(self, url: str) -> list[str]:
        """First parent first, then the others in discovery order."""
        row = self._rows.get(url)
        if row is None or not row.parents:
            return []
        first, *rest = row.parents
        return [first, *sorted(rest, key=lambda p: self._rows[p].seq)]

    def children(self, parent: str) -> list[str]:
        """Children in discovery order."""
        return sorted(self._children.get(parent, []), key=lambda c: self._rows[c].seq)

    def count(self, state: URLState | None = None) -> int:
        if state is None:
            return len(self._rows)
        return sum(1 for r in self._rows.values() if r.state == state)

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
