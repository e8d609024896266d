"""The URL queue of the Redis frontier: adds, the merged pop, states and counts.

:class:`RedisQueue` is the :class:`~focuscrawl.frontier.base.UrlQueue` role of
:class:`~focuscrawl.frontier.redis.store.RedisFrontier`: ``add`` / ``add_many`` (one
script per partition touched, a parent known before its link, discovery numbers
from the shared counter), ``mark`` and ``requeue_in_flight``, the pop merged across
the partitions' queues (:mod:`~focuscrawl.frontier.redis.order`), and the reads by
state: ``get``, ``state``, ``known``, the counts (every partition's read at most
every COUNTS_EVERY seconds, plus this client's own changes) and ``iter_urls``.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from typing import Any

from focuscrawl.exceptions import FrontierError
from focuscrawl.frontier.base import popped_in_room
from focuscrawl.frontier.redis.decode import decoded
from focuscrawl.frontier.redis.namespace import COUNTS_EVERY, Namespace
from focuscrawl.frontier.redis.rows import checked_url, float_arg, queued, row_of, text
from focuscrawl.frontier.rules import checked_int, checked_item, checked_score, host_of
from focuscrawl.types import Merge, QueuedURL, URLState

__all__ = ["RedisQueue"]


class RedisQueue:
    """The queue of a Redis frontier (see the module docstring)."""

    def __init__(self, core: Namespace) -> None:
        self._core = core

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
        return (
            self.add_many(
                [(url, score, depth, parent, host, count, tier)], merge=merge, layer=layer
            )
            == 1
        )

    def add_many(
        self,
        items: Iterable[tuple[str, float, int, str | None, str, int, int]],
        *,
        merge: Merge = Merge.MAX,
        layer: int = 0,
    ) -> int:
        """:meth:`add` over ``(url, score, depth, parent, host, count, tier)`` items, one
        script per partition touched; returns the number of new URLs."""
        core = self._core
        checked = []
        layer = checked_int("layer", layer)
        for url, given, depth, named, host, n, t in items:
            score, parent, count, tier = checked_item(url, given, named, n, t)
            checked_url(url)
            if parent is not None:
                checked_url(parent)
            if core.part_host(host) != core.part(url):  # a host's URLs share one partition
                raise FrontierError(f"host {host!r} is not the host of {url!r}")
            checked.append((url, score, int(depth), parent, host, count, tier))
        if not checked:
            return 0
        core.add_layer(layer)
        base = core.seqs(2 * len(checked))
        groups: dict[int, list[Any]] = {}
        edges = core.edges
        touched: set[str] = set()  # without edges a parent is touched once a batch
        for i, (url, score, depth, parent, host, count, tier) in enumerate(checked):
            if parent is not None and (edges or parent not in touched):
                touched.add(parent)  # the referrer first: it is known before its link
                groups.setdefault(core.part(parent), []).extend(
                    (
                        "t",
                        parent,
                        0,
                        0,
                        depth,
                        layer,
                        core.discovery(base + 2 * i + 1, parent),
                        host_of(parent),
                        url,
                        count,
                    )
                )
            groups.setdefault(core.part(url), []).extend(
                (
                    "a",
                    url,
                    float_arg(score),
                    tier,
                    depth,
                    layer,
                    core.discovery(base + 2 * i + 2, url),
                    host,
                    parent or "",
                    0,
                )
            )
        head = (merge.value, int(edges))
        results = core.calls([(p, (b"add", *head, *args)) for p, args in groups.items()])
        return sum(int(r) for r in results)

    def pop_in_room(
        self, n: int, in_flight: Mapping[str, int], per_host: int
    ) -> list[QueuedURL]:
        """Up to ``n`` best queued URLs, each host within its room (:func:`~focuscrawl.frontier.base.popped_in_room`)."""
        return popped_in_room(self, n, in_flight, per_host)

    def mark(self, url: str, state: URLState, *, score: float | None = None) -> None:
        """Set the state of a URL (and its score, if given)."""
        state = URLState(state)
        value = "" if score is None else float_arg(checked_score(url, score))
        if int(self._core.call(self._core.part(url), "mark", url, int(state), value)) < 0:
            raise FrontierError(f"cannot mark unknown URL {url!r}")

    def requeue_in_flight(self) -> int:
        """Every IN_FLIGHT URL back to QUEUED (each partition's in-flight set)."""
        core = self._core
        return sum(int(r) for r in core.calls([(p, ("requeue",)) for p in range(core.partitions)]))

    def pop(
        self,
        n: int,
        *,
        exclude_hosts: Collection[str] = (),
        max_per_host: int = 0,
        max_layer: int | None = None,
    ) -> list[QueuedURL]:
        """The reference's greedy pop, merged across the partitions' queues
        (:mod:`~focuscrawl.frontier.redis.order`)."""
        if n <= 0:
            return []
        excluded: dict[int, list[str]] = {}  # each partition is told of its own hosts
        for host in sorted(set(exclude_hosts)):
            excluded.setdefault(self._core.part_host(host), []).append(host)
        return self._core.heads.pop(n, excluded, max_per_host, max_layer, self._core.calls)

    def get(self, url: str) -> QueuedURL | None:
        row = self._core.row(url)
        return None if row is None else queued(url, row)

    def state(self, url: str) -> URLState | None:
        row = self._core.row(url)
        return None if row is None else URLState(row[0])

    def count(self, state: URLState | None = None) -> int:
        """The partitions' counts, read again at most every COUNTS_EVERY seconds (a
        pipeline over every partition), plus this client's own changes since: exact
        for one writer; with several, the others' changes of the last interval missing
        (OPIC's virtual page reads count() for every page)."""
        core, counts = self._core, self._core.counts
        now = time.monotonic()
        if now - counts.read_at >= COUNTS_EVERY:
            pipe = core.db.pipeline(transaction=False)
            for p in range(core.partitions):
                pipe.hgetall(core.keys.partition(p) + "n")
            totals: dict[int, int] = {}
            for p, found in enumerate(pipe.execute()):
                key = core.keys.partition(p) + "n"
                for k, v in found.items():
                    s = decoded(key, k)
                    totals[s] = totals.get(s, 0) + decoded(key, v)
            counts.reset(totals, now)
        return counts.count(None if state is None else int(URLState(state)))

    def known(self, urls: Sequence[str]) -> dict[str, URLState]:
        """The states of the known URLs of ``urls``: one pipelined read."""
        rows = self._core.rows(urls)
        return {url: URLState(row[0]) for url, row in rows.items()}

    def host_counts(self, hosts: Sequence[str]) -> dict[str, int]:
        """URLs of each host, all states: one pipelined read."""
        hosts = list(dict.fromkeys(hosts))
        keys = [self._core.keys.partition(self._core.part_host(host)) + "hc:" + host for host in hosts]
        pipe = self._core.db.pipeline(transaction=False)
        for key in keys:
            pipe.hvals(key)
        found = zip(hosts, keys, pipe.execute(), strict=True)
        return {h: sum(decoded(key, v) for v in vals) for h, key, vals in found}

    def host_count(self, host: str, states: Collection[URLState] = ()) -> int:
        key = self._core.keys.partition(self._core.part_host(host)) + "hc:" + host
        counts = self._core.db.hgetall(key)
        wanted = {int(URLState(s)) for s in states}
        return sum(decoded(key, v) for k, v in counts.items()
                   if not wanted or decoded(key, k) in wanted)  # fmt: skip

    def iter_urls(self, state: URLState | None = None) -> Iterator[QueuedURL]:
        """Every URL (in ``state``) in discovery order: a scan of every partition."""
        return iter(self._all_rows(state))

    def _all_rows(self, state: URLState | None) -> list[QueuedURL]:
        rows: list[QueuedURL] = []
        for p in range(self._core.partitions):
            for url, raw in self._core.db.hscan_iter(
                self._core.keys.partition(p) + "u", count=1000
            ):
                row = row_of(raw, self._core.keys.partition(p) + "u")
                if state is None or row[0] == state:
                    rows.append(queued(text(url), row))
        rows.sort(key=lambda q: q.seq)
        return rows
