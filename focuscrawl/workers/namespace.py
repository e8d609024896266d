"""A worker's open namespace: the plumbing of the shared frontier as one worker
sees it (:class:`WorkerNamespace`, the :class:`~focuscrawl.frontier.redis.namespace.Namespace`
of a :class:`~focuscrawl.workers.frontier.WorkerFrontier`).

Three of the namespace's methods are this worker's own, and every role of the store
goes through them: the changes of a URL's row wait in the outbox
(:meth:`WorkerNamespace.calls`, :mod:`focuscrawl.workers.outbox`); the news of a
script changes only the queues of the partitions this worker holds
(:meth:`WorkerNamespace.taken_in`); in a layered crawl a new URL's discovery number is
a hash of it (:meth:`WorkerNamespace.discovery`), so that whatever the number of
workers a layer holds the same URLs.
"""

from __future__ import annotations

import hashlib
import threading
from collections import Counter
from collections.abc import Sequence
from typing import Any

from focuscrawl.frontier.redis.namespace import Namespace
from focuscrawl.frontier.redis.order import QueueHeads
from focuscrawl.types import URLState
from focuscrawl.workers.handback import Handback
from focuscrawl.workers.outbox import Outbox, kept_back

__all__ = ["WorkerNamespace"]


class WorkerNamespace(Namespace):
    """The namespace ``prefix`` as worker ``worker`` sees it: the partitions it holds
    (:attr:`owned`, and of these :attr:`handback` ``.leaving``), its URLs in flight
    per partition, its outbox (:attr:`outbox`, set by its frontier) and its lock (the
    commit thread and the lease upkeep)."""

    def __init__(
        self, url: str, *, prefix: str, worker: str, parents: bool, layered: bool, timeout: float
    ) -> None:
        super().__init__(url, prefix=prefix, parents=parents, timeout=timeout)
        self.worker = worker
        self.layered = layered
        self.heads = QueueHeads({})  # of the partitions held, only
        self.owned: set[int] = set()
        self.handback = Handback()
        self.in_flight: Counter[int] = Counter()  # partition -> URLs popped, not settled
        self.lock = threading.RLock()
        self.counters: Counter[str] = Counter()
        self.outbox: Outbox | None = None

    def open_outbox(self) -> Outbox:
        """This worker's outbox, opened (a batch journaled by its last run delivered):
        from now on the changes of URLs' rows wait in it."""
        self.outbox = Outbox(self.db, self.keys, worker=self.worker, send=self.send,
                             counters=self.counters)  # fmt: skip
        return self.outbox

    def calls(self, calls: Sequence[tuple[int, Sequence[Any]]]) -> list[Any]:
        """The changes of URLs' rows kept back in the outbox (delivered at the next
        commit); the others (pops, a re-crawl taken into flight, reads) sent at once."""
        if self.outbox is None or not calls or not kept_back(calls[0][1]):
            out = self.send([(p, self._leased(args)) for p, args in calls])
            for p, args in calls:  # a re-crawl taken into flight: settled as a pop's URL
                if args[0] == "mark" and int(args[2]) == URLState.IN_FLIGHT:
                    self.in_flight[p] += 1
            return out
        for p, raw in calls:
            args = [a.decode("utf-8") if isinstance(a, bytes) else a for a in raw]
            self.outbox.keep(p, args)
            if args[0] == "mark" and int(args[2]) != URLState.IN_FLIGHT:
                self.settled(p)
        self.counters["outbox_calls"] += len(calls)
        # (the counts of what a kept-back call changed come with its delivery)
        return [0] * len(calls)

    def _leased(self, args: Sequence[Any]) -> Sequence[Any]:
        """A pop, or a re-crawl taken into flight, applied only in a partition this
        worker holds the lease of (the frontier script's ``l``); other calls as they are."""
        op = args[0].decode("utf-8") if isinstance(args[0], bytes) else str(args[0])
        if op == "pop" or (op == "mark" and int(args[2]) == URLState.IN_FLIGHT):
            return ("l", self.worker, *args)
        return args

    def taken(self, url: str) -> None:
        """``url`` was taken into flight by this worker (popped, or picked)."""
        self.in_flight[self.part(url)] += 1

    def settled(self, partition: int) -> None:
        """A URL of ``partition`` popped by this worker is settled (marked)."""
        left = self.in_flight[partition] - 1
        if left > 0:
            self.in_flight[partition] = left
        else:
            self.in_flight.pop(partition, None)

    def taken_in(self, partition: int, changes: Sequence[bytes]) -> None:
        if partition in self.owned and partition not in self.handback.leaving:
            with self.lock:  # (a dead worker's batch is delivered from the lease thread)
                super().taken_in(partition, changes)
            return
        # another worker's partition: its counts change, its queue is that worker's
        counts = [x for i in range(0, len(changes), 2) if bytes(changes[i]).startswith(b"s")
                  for x in changes[i : i + 2]]  # fmt: skip
        super().taken_in(partition, counts)

    def discovery(self, number: int, url: str) -> int:
        if not self.layered:
            return number
        return 1 + int.from_bytes(
            hashlib.blake2b(url.encode("utf-8"), digest_size=6).digest(), "big"
        )
