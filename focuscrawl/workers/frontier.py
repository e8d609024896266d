"""One worker's view of a shared Redis frontier: a :class:`RedisFrontier` whose
writes go through an outbox, and whose pops come from the partitions it leases.

Several worker processes, on any number of machines, crawl one crawl DB in Redis
(:mod:`focuscrawl.workers` starts and joins them). The lessons are those of the
field (scrapy-redis, Frontera, URLFrontier); each is an object of its own here:

* **One owner per host**: partition leases (:mod:`~focuscrawl.workers.leases`),
  shared evenly among the workers alive (:meth:`WorkerFrontier.balance`). A partition
  given back (a new worker joined) stays free for the politeness delay; a dead
  worker's lease expires after ``lease_seconds``. Each host's next allowed time (its
  Crawl-delay, a Retry-After) goes with its partition to the next owner
  (:mod:`~focuscrawl.workers.politeness`).
* **Acknowledge only after the state is durable**: an outbox of the changes made
  while recording results, journaled with the engine's state and delivered exactly
  once (:mod:`~focuscrawl.workers.outbox`, its calls kept back by the worker's
  namespace, :mod:`~focuscrawl.workers.namespace`). A worker that takes a dead one's
  partitions delivers its journaled batch first, then puts the URLs it had in flight
  back in the queue. Pops (a URL taken moves to IN_FLIGHT) are not kept back: they
  are the lease on a URL in flight.
* **Self-fencing.** A worker commits only while its leases are surely its own; past
  that, the commit fails with a one-line error and the worker stops: what it recorded
  since its last commit is cut back on its restart, never recorded twice.
* **The page budget in claims** (:mod:`~focuscrawl.workers.claims`), a dead
  worker's unused claim taken back once its heartbeat has expired.

What a worker reads is the shared state as delivered: its own changes since its
last commit are not in it yet, nor the other workers' (a link found elsewhere
reaches a partition's queue at its finder's next commit). OTIE's "fetched page
with the most cash" is the best among the partitions the worker holds (a re-crawl
is a fetch, and a host has one owner).
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from focuscrawl.frontier.base import RunJournal, UrlColumns, UrlQueue
from focuscrawl.frontier.redis.columns import best_of_tops
from focuscrawl.frontier.redis.order import QueueHeads
from focuscrawl.frontier.redis.rows import queued, text
from focuscrawl.frontier.redis.store import RedisFrontier
from focuscrawl.frontier.rules import SCORE
from focuscrawl.types import QueuedURL, URLState
from focuscrawl.workers.claims import CrawlGone, LeaseLost, SharedBudget
from focuscrawl.workers.leases import MARGIN, PartitionLeases
from focuscrawl.workers.namespace import WorkerNamespace
from focuscrawl.workers.politeness import HostHandover
from focuscrawl.workers.progress import CrawlProgress

__all__ = ["LeaseLost", "WorkerFrontier"]

_REFRESH_EVERY = 0.25  # seconds: how stale a worker's view of its own queues may be


class WorkerFrontier(RedisFrontier):
    """The frontier of one worker ``worker`` of the shared crawl ``prefix``: its
    :attr:`leases`, :attr:`outbox`, :attr:`budget`, :attr:`handover` and :attr:`progress`.

    Its overrides of the store's methods span roles (the outbox, the leases), so its
    roles (:attr:`queue`, :attr:`columns`, :attr:`journal`) are the worker's store itself."""

    core: WorkerNamespace

    def __init__(
        self,
        url: str,
        *,
        prefix: str,
        worker: str,
        parents: bool = True,
        lease_seconds: float = 30.0,
        expected: int = 1,
        layered: bool = False,
    ) -> None:
        # (the client waits for an answer up to 4/5 of the lease: see redis.connection.TIMEOUT)
        core = WorkerNamespace(url, prefix=prefix, worker=worker, parents=parents, layered=layered,
                               timeout=max(1.0, 0.8 * lease_seconds))  # fmt: skip
        self._open(core)
        self.worker = worker
        # workers started together (crawl --workers N): for one lease time each takes no
        # more than its share of N, whoever is first (then the workers alive decide)
        self._expected, self._born = max(1, expected), time.monotonic()
        self.lease_ms = max(1000, int(lease_seconds * 1000))
        self.owned = core.owned  # (and of these, handback.leaving: freed once settled)
        self.handback = core.handback
        self.counters = core.counters
        self._refreshed, self._alive = -math.inf, 1  # (workers alive at the last renewal)
        # a layered crawl: the layer's URLs are picked by one worker across every partition
        # (in "pk" sets, fetched by each partition's owner), ties broken by a hash of the
        # URL, so that whatever the number of workers a layer holds the same URLs
        self.layered = layered
        db, keys = core.db, core.keys
        self.budget = SharedBudget(db, keys, worker=worker, lease_ms=self.lease_ms)
        self.leases = PartitionLeases(db, keys, worker=worker, partitions=self.partitions,
                                      lease_ms=self.lease_ms)  # fmt: skip
        self.handover = HostHandover(core.part_host)
        self.outbox = core.open_outbox()  # (its journaled batch delivered first, if any)
        self.progress = CrawlProgress(db, keys, worker=worker, partitions=self.partitions)

    # ------------------------------------------------------------ the roles
    @property
    def queue(self) -> UrlQueue:
        return self

    @property
    def columns(self) -> UrlColumns:
        return self

    @property
    def journal(self) -> RunJournal:
        return self

    # ------------------------------------------------------------ the outbox
    def get(self, url: str) -> QueuedURL | None:
        row = super().get(url)
        if row is not None:
            self.outbox.read(url, SCORE, row.score)
        return row

    def value(self, url: str, column: str) -> float | None:
        found = super().value(url, column)
        if found is not None:
            self.outbox.read(url, column, found)
        return found

    def deliver(self, worker: str, batch: int, calls: Sequence[Sequence[Any]]) -> None:
        """Apply ``worker``'s batch number ``batch``, each call at most once (see Outbox)."""
        self.outbox.deliver(worker, batch, calls)

    def partition_of(self, url: str) -> int:
        """The partition that holds ``url`` (that of its host)."""
        return self.core.part(url)

    def get_meta(self, key: str) -> str | None:
        """The engine's state is the worker's own (its journal); the rest is the crawl's.

        The URLs the worker had in flight at its last commit are not taken again by
        the engine: whoever holds their partition now has put them back in the
        queue (the worker itself, when it took its leases again)."""
        if key != "engine":
            return super().get_meta(key)
        if self.outbox.engine is None:
            return None
        state = json.loads(self.outbox.engine)
        state["window"] = []
        return json.dumps(state)

    def set_meta(self, key: str, value: str) -> None:
        if key == "engine":
            self.outbox.engine_next = value  # journaled with the next commit's batch
        else:
            super().set_meta(key, value)

    def commit(self) -> None:
        """Journal the batch with the engine's state, in one command, then deliver it."""
        with self.core.lock:
            if not self.leases.usable():
                raise LeaseLost(
                    f"worker {self.worker}: its partitions' leases may have expired (no renewal"
                    f" for {self.lease_ms / 1000 * (1 - MARGIN):.0f} s): it stops without"
                    " committing; restarted (same --out) it goes on from its last commit"
                )
            self.outbox.commit()
            self.progress.committed()
            self._let_go()  # (their marks delivered)

    def pending(self) -> bool:
        """Changes recorded and not committed yet."""
        return bool(self.outbox.calls)

    # ------------------------------------------------------------ the leases
    def upkeep(self, *, delay: float) -> int:
        """:meth:`renew`, then :meth:`balance`; returns the workers alive."""
        alive = self.renew()
        self.balance(alive, delay=delay)
        return alive

    def renew(self) -> int:
        """Renew the leases held and say this worker is alive (a few milliseconds, never
        behind a commit or a partition being taken: a worker runs it on its own clock),
        with the records of the hosts fetched since (for a next owner if this one dies).
        Returns the workers alive."""
        try:
            alive = self.budget.alive(self.lease_ms)
        except (LeaseLost, CrawlGone):  # retired by another worker (a stall), or no crawl: fenced
            self.leases.lose()
            raise
        owned = sorted(self.owned)
        # (a partition given back meanwhile by balance() is not lost)
        lost = [p for p in self.leases.renew(owned, self.handover.records) if p in self.owned]
        if lost:  # expired and taken by another worker: this one must stop, uncommitted
            self.leases.lose()
            raise LeaseLost(f"worker {self.worker}: lost the leases of {len(lost)} partitions")
        self._alive = alive
        return alive

    def balance(self, alive: int | None = None, *, delay: float) -> None:
        """Take or give back partitions toward an even share among the workers alive.
        ``delay``: seconds a partition given back stays free (the per-host delay)."""
        peers = self._alive if alive is None else alive
        if time.monotonic() - self._born < self.lease_ms / 1000:
            peers = max(peers, self._expected)
        share = math.ceil(self.partitions / max(1, peers))
        if len(self.owned) < share:
            self._take(share - len(self.owned))
        elif len(self.owned) > share:  # they leave, then are freed (workers.handback)
            with self.core.lock:
                busy = [p for p, _ in self.core.heads.heads] + list(self.core.in_flight)
                for p in self.handback.choose(self.owned, share, busy, self.outbox.calls, delay):
                    for layer in self.core.layers:  # nothing more taken from it
                        self.core.heads.update(p, layer, None)
        self._let_go()

    def _let_go(self) -> None:
        with self.core.lock:  # the leaving partitions that are settled (workers.handback)
            self.free(self.handback.settled(self.core.in_flight, self.outbox.calls),
                      delay=self.handback.delay)  # fmt: skip

    def _take(self, want: int) -> None:
        """Take up to ``want`` free partitions: a dead owner's batch is delivered first,
        then its URLs in flight are queued again (picked again, in a layered crawl), and
        its hosts wait for what their last owner's requests left. The round trips run
        without the lock (the crawl's pops go on meanwhile); the partitions join this
        worker's queues at the end, under it."""
        taken = self.leases.take([p for p in self.leases.order() if p not in self.owned], want)
        if not taken:
            return
        at = time.monotonic()
        delivered: set[str] = set()
        for t in taken:
            self.counters["hosts_waiting_on_take"] += self.handover.taken(t, at=at)
            if t.last and t.last != self.worker:
                self.counters["partitions_taken_over"] += 1
                if t.last not in delivered:  # a dead worker's journaled batch, once
                    delivered.add(t.last)
                    if not t.given_back:  # expired: it died or stalls, and commits no more
                        self._fence(t.last)
                    if self.outbox.deliver_journaled(t.last):
                        self.counters["outbox_delivered_for_others"] += 1
        parts = [t.partition for t in taken]
        if self.layered:  # URLs in flight are this layer's: fetched by the new owner
            pipe = self.core.db.pipeline(transaction=False)
            for p in parts:
                pipe.smembers(self.core.keys.partition(p) + "if")
            stranded = pipe.execute()
            pipe = self.core.db.pipeline(transaction=False)
            for p, urls in zip(parts, stranded, strict=True):
                if urls:
                    pipe.sadd(self.core.keys.partition(p) + "pk", *urls)
            pipe.execute()
            self.counters["picked_again_on_take"] += sum(len(u) for u in stranded)
        else:
            requeued = self.core.send([(p, ("requeue",)) for p in parts])
            self.counters["requeued_on_take"] += sum(int(r) for r in requeued)
        heads = self.core.read_heads(parts)
        with self.core.lock:
            self.owned.update(parts)
            for (p, layer), head in heads.items():
                self.core.heads.update(p, layer, head)
        self.counters["partitions_taken"] += len(parts)

    def _fence(self, worker: str) -> None:
        """Fence ``worker``, whose lease on a partition just taken had expired, if its
        heartbeat has expired too: its name may be that of a process started again
        since (alive: it gave up none of its partitions, and goes on)."""
        run = self.outbox.journal_of(worker).get("run", "")  # (read first: a restart changes it)
        if worker in self.budget.dead():
            self.outbox.fence(worker, run)

    def free(self, partitions: Iterable[int], *, delay: float) -> None:
        """Give partitions back (none of their URLs in flight here), with their hosts'
        next allowed times; nobody takes them for ``delay`` seconds."""
        parts = [p for p in partitions if p in self.owned]
        if not parts:
            return
        handover = self.handover
        ms = max(1, int(delay * 1000))
        self.leases.free(parts, ms, lambda p: handover.records(p, every=True))
        self.handback.gone(parts)
        for p in parts:
            self.owned.discard(p)
            handover.given_back(p)
            for layer in self.core.layers:
                self.core.heads.update(p, layer, None)
        self.counters["partitions_freed"] += len(parts)

    def leave(self, *, delay: float, again: bool = False) -> None:
        """This worker stops: what it had in flight queued again (its partitions are still
        its own, and nothing of them is fetched any more), its partitions given back, its
        heartbeat removed (``again``: kept, this worker is opened again at once)."""
        with self.core.lock:
            if self.owned and not self.outbox.calls and self.leases.usable():
                calls = [(p, ("requeue",)) for p in sorted(self.owned)]
                self.counters["requeued_on_leave"] += sum(int(r) for r in self.core.send(calls))
            self.free(sorted(self.owned), delay=delay)
            if not again:
                self.budget.alive(0)

    # ------------------------------------------------------------ the queue
    def _refresh(self, partitions: Iterable[int] | None = None) -> None:
        """The best host of each partition held, read again (other workers' links
        reach its queues at their commits, and news of them comes to them, not here)."""
        parts = sorted(self.owned - self.handback.leaving if partitions is None else partitions)
        for (p, layer), head in self.core.read_heads(parts).items():
            self.core.heads.update(p, layer, head)
        self._refreshed = time.monotonic()

    def pop(
        self,
        n: int,
        *,
        exclude_hosts: Collection[str] = (),
        max_per_host: int = 0,
        max_layer: int | None = None,
    ) -> list[QueuedURL]:
        with self.core.lock:  # (the lease upkeep runs in a thread)
            if not self.leases.usable():  # (a stall: its partitions may be another's now)
                return []
            if time.monotonic() - self._refreshed >= _REFRESH_EVERY:
                self._refresh()
            got = super().pop(n, exclude_hosts=exclude_hosts, max_per_host=max_per_host,
                              max_layer=max_layer)  # fmt: skip
            for q in got:  # (under the lock: no partition of these is freed meanwhile)
                self.core.taken(q.url)
        return got

    def queued_here(self) -> bool:
        """Whether a partition held has queued URLs (read now)."""
        with self.core.lock:
            self._refresh()
            return bool(self.core.heads.heads)

    def requeue_in_flight(self) -> int:
        """Nothing to do at a worker's start: taking a partition's lease queues its URLs
        in flight again (see :meth:`_take`)."""
        return 0

    def top(self, column: str, state: URLState = URLState.FETCHED) -> tuple[str, float] | None:
        """The best URL in ``state`` among the partitions held (see the module)."""
        column = self.core.column(column)
        calls = [(p, ("top", column, int(URLState(state)))) for p in sorted(self.owned)]
        return best_of_tops(self.core.send(calls) if calls else [])

    # ------------------------------------------------------------ layers (shared)
    def pick(self, n: int) -> int:
        """The best ``n`` queued URLs across every partition (tier by tier, as a single
        process's layer is generated), taken into flight and left in their partitions'
        picked sets for their owners; returns how many. Run by one worker at a time."""
        every = self.core.read_heads(range(self.partitions))
        heads = QueueHeads({key: head for key, head in every.items() if head})
        taken: list[QueuedURL] = []
        while len(taken) < n:  # one pop serves one tier
            got = heads.pop(n - len(taken), {}, 0, None, self.core.send)
            if not got:
                break
            taken += got
        pipe = self.core.db.pipeline(transaction=False)
        for q in taken:
            pipe.sadd(self.core.keys.partition(self.core.part(q.url)) + "pk", q.url)
        pipe.execute()
        return len(taken)

    def picked(self) -> list[QueuedURL]:
        """The picked URLs of the partitions this worker holds, taken from their sets
        (they are in flight since they were picked)."""
        with self.core.lock:
            if not self.leases.usable():
                return []
            parts = sorted(self.owned - self.handback.leaving)
            pipe = self.core.db.pipeline(transaction=False)
            for p in parts:
                pipe.spop(self.core.keys.partition(p) + "pk", 1 << 20)
            urls = [text(u) for found in pipe.execute() for u in (found or ())]
            rows = self.core.rows(urls)
            out = [queued(url, rows[url]) for url in sorted(rows, key=lambda u: rows[u][5])]
            for q in out:
                self.core.taken(q.url)
            return out

    def picked_here(self) -> bool:
        """Whether a partition this worker holds has picked URLs waiting."""
        with self.core.lock:
            pipe = self.core.db.pipeline(transaction=False)
            for p in sorted(self.owned - self.handback.leaving):
                pipe.scard(self.core.keys.partition(p) + "pk")
            return any(int(x) for x in pipe.execute())
