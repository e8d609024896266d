"""The pop of the Redis frontier: the partitions' queues merged by their best keys.

Every script returns the new best host of each (partition, layer) queue it changed
(its 20-byte pop key and its name); :class:`QueueHeads` keeps them, and their keys
in a heap (entries no longer a head are dropped when met). A pop takes, in the
reference's order, from the (partition, layer) of the best key the URLs better than
the next one's key, and learns that queue's next eligible key: one script per
switch between queues, whatever the number of partitions. A key is a lower bound of
what its queue can give (its host may be excluded, or full): those whose best host
is excluded are asked their first eligible key first, in one pipeline, and the
answer is kept while no script runs on that partition and the exclusions stay (the
hosts a crawl excludes, those waiting out their delay, stay excluded for many pops).
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Sequence
from typing import Any

from focuscrawl.frontier.redis.rows import queued, row_of, text
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
        self._versions: dict[int, int] = {}  # partition -> scripts run on it so far
        # (partition, layer) -> (version, excluded, max_per_host, tier, first eligible key):
        # a queue whose best host is excluded, asked once while nothing changes there
        self._peeks: dict[tuple[int, int], tuple[int, tuple[str, ...], int, int, bytes]] = {}

    def _rebuild(self) -> None:
        self._heap = [(head[:20], p, layer) for (p, layer), head in self.heads.items()]
        heapq.heapify(self._heap)

    def touched(self, partition: int) -> None:
        """A script ran on ``partition``: what was asked of it may have changed."""
        self._versions[partition] = self._versions.get(partition, 0) + 1

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
                row = queued(text(got[i]), row_of(got[i + 1], f"partition {p}'s u"))
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
        is not (asked in one pipeline, unless asked already with the same exclusions
        and no script run there since): the pop then switches only where it takes."""
        hosts = {h.encode("utf-8") for part in excluded.values() for h in part}
        ask: list[tuple[int, int]] = []
        known: dict[tuple[int, int], bytes] = {}
        free = 0
        for _, p, layer in heapq.nsmallest(n + len(hosts), bounds):
            if self.heads[p, layer][20:] in hosts:
                question = (tuple(excluded.get(p, ())), max_per_host, tier)
                peek = self._peeks.get((p, layer))
                if peek is not None and peek[:4] == (self._versions.get(p, 0), *question):
                    known[p, layer] = peek[4]
                else:
                    ask.append((p, layer))
            else:
                free += 1
                if free >= n:
                    break
        if ask:
            calls = []
            for p, layer in ask:
                ex = excluded.get(p, [])
                calls.append((p, ("pop", layer, tier, 0, b"", max_per_host, len(ex), *ex)))
            for (p, layer), (_, rest) in zip(ask, scripts(calls), strict=True):
                known[p, layer] = bytes(rest)
                ex_p = tuple(excluded.get(p, ()))
                self._peeks[p, layer] = (
                    self._versions.get(p, 0),
                    ex_p,
                    max_per_host,
                    tier,
                    bytes(rest),
                )
        if not known:
            return bounds
        out = [b for b in bounds if (b[1], b[2]) not in known]
        out += [(rest, p, layer) for (p, layer), rest in known.items() if rest]
        heapq.heapify(out)
        return out
