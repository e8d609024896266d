"""The pop of the Redis frontier: the partitions' queues merged by their best keys.

Every script returns the new best host of each (partition, layer) queue it changed
(its 20-byte pop key and its name); :class:`QueueHeads` keeps them, and their keys
in a heap (entries no longer a head are dropped when met). A pop takes, in the
reference's order, from the (partition, layer) of the best key the URLs better than
the next one's key, and learns that queue's next eligible key: one script per
switch between queues, whatever the number of partitions. A key is a lower bound of
what its queue can give (its host may be excluded, or full): those whose best host
is excluded are asked their first eligible key first, in one pipeline.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from typing import Any

from focuscrawl.frontier.redis_rows import queued, row_of, text
from focuscrawl.types import QueuedURL

__all__ = ["QueueHeads", "Scripts"]

Entry = tuple[bytes, int, int]  # (pop key, partition, layer)
# runs one script per (partition, args), pipelined; returns their results
Scripts = Callable[[Sequence[tuple[int, Sequence[Any]]]], list[Any]]


class QueueHeads:
    """The best host of every (partition, layer) queue with queued URLs."""

    def __init__(self, heads: dict[tuple[int, int], bytes]) -> None:
        self.heads = heads  # (partition, layer) -> pop key (20 bytes) + host
        self._heap: list[Entry] = []
        self._rebuild()

    def _rebuild(self) -> None:
        self._heap = [(head[:20], p, layer) for (p, layer), head in self.heads.items()]
        heapq.heapify(self._heap)

    def update(self, partition: int, layer: int, head: bytes | None) -> None:
        """A script's news: the queue's best host now (None: the queue is empty)."""
        if head:
            self.heads[partition, layer] = head
            heapq.heappush(self._heap, (head[:20], partition, layer))
        else:
            self.heads.pop((partition, layer), None)
        if len(self._heap) > 2 * len(self.heads) + 1024:
            self._rebuild()

    def in_heap(self) -> set[tuple[int, int]]:
        """The queues whose current key is in the heap: every queue, or one would
        never be popped (the tests check it after every operation)."""
        return {
            (p, layer)
            for key, p, layer in self._heap
            if self.heads.get((p, layer), b"")[:20] == key
        }

    def pop(
        self,
        n: int,
        excluded: dict[int, list[str]],
        max_per_host: int,
        max_layer: int | None,
        scripts: Scripts,
    ) -> list[QueuedURL]:
        """Up to ``n`` URLs in the reference's order (``excluded``: each partition's
        excluded hosts), taken by ``scripts``."""
        pulled: list[Entry] = []  # out of the heap while this pop runs
        try:
            return self._pop(n, excluded, max_per_host, max_layer, scripts, pulled)
        finally:
            for entry in pulled:
                heapq.heappush(self._heap, entry)

    def _pop(
        self,
        n: int,
        excluded: dict[int, list[str]],
        max_per_host: int,
        max_layer: int | None,
        scripts: Scripts,
        pulled: list[Entry],
    ) -> list[QueuedURL]:
        seen: set[tuple[int, int]] = set()

        def pull() -> Entry | None:
            """The next best head of a layer <= max_layer (self._heap in order)."""
            while self._heap:
                entry = heapq.heappop(self._heap)
                key, p, layer = entry
                head = self.heads.get((p, layer))
                if head is None or head[:20] != key:
                    continue  # no longer a head: dropped
                if (p, layer) in seen:  # pushed again by this pop's scripts: kept for later
                    pulled.append(entry)
                    continue
                seen.add((p, layer))
                pulled.append(entry)
                if max_layer is None or layer <= max_layer:
                    return entry
            return None

        bounds: list[Entry] = []  # a heap: lower bounds of the pulled
        ahead = pull()
        if ahead is None:
            return []
        tier = 2147483647 - int.from_bytes(ahead[0][:4], "big")  # tiers are strict
        if excluded:
            n_excluded = sum(len(h) for h in excluded.values())
            while ahead is not None and len(bounds) < n + n_excluded:
                heapq.heappush(bounds, ahead)
                ahead = pull()
            bounds = self._peeked(bounds, n, tier, excluded, max_per_host, scripts)
        taken: list[QueuedURL] = []
        per_host: dict[int, dict[str, int]] = {}  # partition -> host -> taken by this pop
        while len(taken) < n:
            # the two best bounds are pulled: the best takes what is better than the next
            while ahead is not None and (len(bounds) < 2 or ahead < min(bounds[1:3])):
                heapq.heappush(bounds, ahead)
                ahead = pull()
            if not bounds:
                break
            _, p, layer = heapq.heappop(bounds)
            bound = bounds[0][0] if bounds else b""
            hosts = per_host.setdefault(p, {})
            flat_taken = [x for host, k in hosts.items() for x in (host, k)]
            ex = excluded.get(p, [])
            args = ("pop", layer, tier, n - len(taken), bound, max_per_host, len(ex))
            got, rest = scripts([(p, (*args, *ex, *flat_taken))])[0]
            for i in range(0, len(got), 2):
                row = queued(text(got[i]), row_of(got[i + 1]))
                hosts[row.host] = hosts.get(row.host, 0) + 1
                taken.append(row)
            if rest:
                heapq.heappush(bounds, (bytes(rest), p, layer))
        return taken

    def _peeked(
        self,
        bounds: list[Entry],
        n: int,
        tier: int,
        excluded: dict[int, list[str]],
        max_per_host: int,
        scripts: Scripts,
    ) -> list[Entry]:
        """``bounds`` (a heap) with the first eligible key of every (partition, layer)
        whose best host is excluded, of those ahead of the ``n``-th one whose best host
        is not (asked in one pipeline): the pop then switches only where it takes."""
        hosts = {h.encode("utf-8") for part in excluded.values() for h in part}
        ask, free = [], 0
        for _, p, layer in heapq.nsmallest(n + len(hosts), bounds):
            if self.heads[p, layer][20:] in hosts:
                ask.append((p, layer))
            else:
                free += 1
                if free >= n:
                    break
        if not ask:
            return bounds
        calls = []
        for p, layer in ask:
            ex = excluded.get(p, [])
            calls.append((p, ("pop", layer, tier, 0, b"", max_per_host, len(ex), *ex)))
        replies = scripts(calls)
        asked = set(ask)
        out = [b for b in bounds if (b[1], b[2]) not in asked]
        out += [
            (bytes(rest), p, lay) for (p, lay), (_, rest) in zip(ask, replies, strict=True) if rest
        ]
        heapq.heapify(out)
        return out
