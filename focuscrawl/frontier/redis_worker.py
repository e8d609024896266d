"""One worker's view of a shared Redis frontier: its partitions' leases and its outbox.

Several worker processes, on any number of machines, crawl one crawl DB in Redis
(:mod:`focuscrawl.workers` starts and joins them). This store is what makes that
exact; the lessons are those of the field (scrapy-redis, Frontera, URLFrontier):

* **One owner per host.** A worker pops only from the partitions it holds a lease
  on (a key per partition, ``lease``, with an expiry, renewed every few seconds),
  and every URL of a host is in one partition: politeness needs no coordination
  (the fetcher's per-host delay holds within the worker). A partition given back
  (a new worker joined) stays free for the politeness delay; a dead worker's lease
  expires after ``lease_seconds``, far longer than any delay.
* **Acknowledge only after the state is durable: an outbox.** Every change a
  worker makes to the frontier while recording results (marks, links, scores) is
  kept back: at a commit, once the worker's output files are synced, the batch is
  written to the worker's journal in Redis in one command together with the
  engine's state (the files' lengths), and only then delivered. Every call of a
  batch carries a number (the batch's, then the call's place in it) that the script
  checks against the last one applied in that partition for that worker
  (:mod:`focuscrawl.frontier.redis_scripts`): delivered twice, it is applied once.
  A worker killed at any moment loses nothing: restarted, it cuts its files back
  to the journal's lengths and delivers the journal's batch again; if another
  worker takes its partitions first, that one delivers the dead worker's batch
  before putting the URLs it had in flight back in the queue. Pops (a URL taken
  moves to IN_FLIGHT) are not kept back: they are the lease on a URL in flight.
* **Self-fencing.** A worker commits only while its leases are surely its own (its
  last renewal plus the lease time, less a margin, on its own monotonic clock,
  which the server's expiry cannot precede); past that, the commit fails with a
  one-line error and the worker stops: what it recorded since its last commit is
  cut back on its restart, never recorded twice.

What a worker reads is the shared state as delivered: its own changes since its
last commit are not in it yet, nor the other workers' (a link found elsewhere
reaches a partition's queue at its finder's next commit). OTIE's "fetched page
with the most cash" is the best among the partitions the worker holds (a re-crawl
is a fetch, and a host has one owner).
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from focuscrawl.exceptions import FrontierError
from focuscrawl.frontier.redis_heads import QueueHeads
from focuscrawl.frontier.redis_rows import float_arg, queued, text
from focuscrawl.frontier.redis_scripts import LEASE_LUA, META_LUA
from focuscrawl.frontier.redis_store import RedisFrontier
from focuscrawl.frontier.rules import SCORE
from focuscrawl.types import Merge, QueuedURL, URLState

__all__ = ["CALLS_PER_BATCH", "LeaseLost", "WorkerFrontier"]

# the scripts' operations kept back in the outbox: every change of a URL's row
_KEPT_BACK = frozenset({"add", "values", "raise", "tier", "host", "mark", "combine"})
CALLS_PER_BATCH = 1 << 20  # a call's number: batch x this + its place in the batch
_DELIVER_CHUNK = 2000  # calls per pipeline when a batch is delivered
_REFRESH_EVERY = 0.25  # seconds: how stale a worker's view of its own queues may be
_MARGIN = 0.25  # of the lease time: a worker stops committing this long before it expires


class LeaseLost(FrontierError):
    """A worker's leases may have expired: it must not commit (it stops; its restart
    cuts its files back to its last commit and goes on)."""


class WorkerFrontier(RedisFrontier):
    """The frontier of one worker ``worker`` of the shared crawl ``prefix``."""

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
        super().__init__(url, prefix=prefix, parents=parents)
        self.worker = worker
        # workers started together (crawl --workers N): for one lease time each takes no
        # more than its share of N, whoever is first (then the workers alive decide)
        self._expected, self._born = max(1, expected), time.monotonic()
        self.lease_ms = max(1000, int(lease_seconds * 1000))
        self._lease_sha = self._db.script_load(LEASE_LUA)
        self._meta_sha = self._db.script_load(META_LUA)
        self._mkey = f"{prefix}:{{{prefix}:m}}:"
        self._journal = f"{prefix}:{{{prefix}:w:{worker}}}:j"
        self.owned: set[int] = set()
        self._heads = QueueHeads({})  # of the partitions held, only
        self._outbox: list[tuple[int, list[Any]]] = []
        self._in_flight: Counter[int] = Counter()  # partition -> URLs popped, not settled
        self._deadline = 0.0  # monotonic: commits stop here (the leases' expiry, less a margin)
        self._lock = threading.RLock()  # the commit thread and the lease upkeep
        self.counters: Counter[str] = Counter()
        self._refreshed = -math.inf
        self._alive = 1  # workers alive at the last renewal
        # a layered crawl: the layer's URLs are picked by one worker across every partition
        # (in "pk" sets, fetched by each partition's owner), ties broken by a hash of the
        # URL, so that whatever the number of workers a layer holds the same URLs
        self.layered = layered
        self._seen: dict[
            tuple[str, str], float
        ] = {}  # (url, column) -> value read, as changed since
        journal = {text(k): text(v) for k, v in self._db.hgetall(self._journal).items()}
        self._batch = int(journal.get("seq", 0))
        self._engine: str | None = journal.get("engine")
        self._engine_next: str | None = None
        self.claimed = int(self._db.hget(self._mkey + "claims", worker) or 0)  # (see claim)
        if journal.get("batch"):  # killed between its journal and the delivery
            self.deliver(worker, self._batch, json.loads(journal["batch"]))
            self._db.hdel(self._journal, "batch")
            self.counters["outbox_redelivered"] += 1

    # ------------------------------------------------------------ the outbox
    def _calls(self, calls: Sequence[tuple[int, Sequence[Any]]]) -> list[Any]:
        if not calls or not _kept_back(calls[0][1]):
            out = super()._calls(calls)
            for p, args in calls:  # a re-crawl taken into flight: settled as a pop's URL
                if args[0] == "mark" and int(args[2]) == URLState.IN_FLIGHT:
                    self._in_flight[p] += 1
            return out
        for p, raw in calls:
            args = [a.decode("utf-8") if isinstance(a, bytes) else a for a in raw]
            if args[0] == "values":
                self._outbox += [(p, a) for a in self._relative(args)]
            else:
                self._forget(args)
                self._outbox.append((p, args))
            if args[0] == "mark" and int(args[2]) != URLState.IN_FLIGHT:
                self._settled(p)
        self.counters["outbox_calls"] += len(calls)
        # (the counts of what a kept-back call changed come with its delivery)
        return [0] * len(calls)

    # -- a SET of a value read becomes an ADD of the difference: OPIC's and OTIE's "cash = 0"
    # are delivered at the next commit, and cash another worker added meanwhile must stay
    def get(self, url: str) -> QueuedURL | None:
        row = super().get(url)
        if row is not None:
            self._seen[url, SCORE] = row.score
        return row

    def value(self, url: str, column: str) -> float | None:
        found = super().value(url, column)
        if found is not None:
            self._seen[url, column] = found
        return found

    def _relative(self, args: list[Any]) -> list[list[Any]]:
        """A kept-back ``values`` call: each SET of a value this worker read (and knows
        the changes of since) as an ADD of the difference; the values known updated."""
        column, merge, pairs = args[1], args[2], args[3:]
        seen = self._seen
        if merge == Merge.ADD.value:
            for i in range(0, len(pairs), 2):
                key = (pairs[i], column)
                if key in seen:
                    seen[key] += float(pairs[i + 1])
            return [args]
        if merge != Merge.SET.value:
            for i in range(0, len(pairs), 2):
                seen.pop((pairs[i], column), None)
            return [args]
        blind: list[Any] = []
        diffs: list[Any] = []
        for i in range(0, len(pairs), 2):
            url, new = pairs[i], float(pairs[i + 1])
            old = seen.get((url, column))
            if old is None:
                blind += [url, pairs[i + 1]]
            else:
                diffs += [url, float_arg(new - old)]
            seen[url, column] = new
        out = []
        if diffs:
            out.append(["values", column, Merge.ADD.value, *diffs])
            self.counters["sets_as_differences"] += len(diffs) // 2
        if blind:
            out.append(["values", column, merge, *blind])
        return out

    def _forget(self, args: list[Any]) -> None:
        """Values a kept-back call changes in ways not followed here: no longer known."""
        op = args[0]
        if op == "add":  # items of 10 fields after (merge, edges); an "a" item is a URL's own
            for i in range(3, len(args), 10):
                if args[i] == "a":
                    self._seen.pop((args[i + 1], SCORE), None)
        elif op == "mark" and args[3] != "":
            self._seen.pop((args[1], SCORE), None)
        elif op in ("raise", "tier", "host", "combine"):
            self._seen.clear()

    def _settled(self, partition: int) -> None:
        left = self._in_flight[partition] - 1
        if left > 0:
            self._in_flight[partition] = left
        else:
            self._in_flight.pop(partition, None)

    def deliver(self, worker: str, batch: int, calls: Sequence[Sequence[Any]]) -> None:
        """Apply ``worker``'s batch number ``batch`` (its calls as journaled), each call
        at most once whoever delivers it and however often."""
        if len(calls) >= CALLS_PER_BATCH:
            raise FrontierError(
                f"an outbox batch of {len(calls)} calls (at most {CALLS_PER_BATCH - 1})"
            )
        base = batch * CALLS_PER_BATCH
        numbered = [(int(p), ("g", worker, base + i, *args)) for i, (p, args) in enumerate(calls)]
        for start in range(0, len(numbered), _DELIVER_CHUNK):
            super()._calls(numbered[start : start + _DELIVER_CHUNK])

    def partition_of(self, url: str) -> int:
        """The partition that holds ``url`` (that of its host)."""
        return self._part(url)

    def _changes_from(self, partition: int, changes: Sequence[bytes]) -> None:
        if partition in self.owned:
            with self._lock:  # (a dead worker's batch is delivered from the lease thread)
                super()._changes_from(partition, changes)
            return
        # another worker's partition: its counts change, its queue is that worker's
        counts = [x for i in range(0, len(changes), 2) if bytes(changes[i]).startswith(b"s")
                  for x in changes[i : i + 2]]  # fmt: skip
        super()._changes_from(partition, counts)

    def get_meta(self, key: str) -> str | None:
        """The engine's state is the worker's own (its journal); the rest is the crawl's.

        The URLs the worker had in flight at its last commit are not taken again by
        the engine: whoever holds their partition now has put them back in the
        queue (the worker itself, when it took its leases again)."""
        if key != "engine":
            return super().get_meta(key)
        if self._engine is None:
            return None
        state = json.loads(self._engine)
        state["window"] = []
        return json.dumps(state)

    def set_meta(self, key: str, value: str) -> None:
        if key == "engine":
            self._engine_next = value  # journaled with the next commit's batch
        else:
            super().set_meta(key, value)

    def commit(self) -> None:
        """Journal the batch with the engine's state, in one command, then deliver it."""
        with self._lock:
            if time.monotonic() >= self._deadline:
                raise LeaseLost(
                    f"worker {self.worker}: its partitions' leases may have expired (no renewal"
                    f" for {self.lease_ms / 1000 * (1 - _MARGIN):.0f} s): it stops without"
                    " committing; restarted (same --out) it goes on from its last commit"
                )
            batch, self._outbox = self._outbox, []
            self._seen.clear()
            if not batch and self._engine_next is None:
                return
            number = self._batch + 1
            record: dict[Any, Any] = {"seq": number}
            if self._engine_next is not None:
                record["engine"] = self._engine = self._engine_next
                self._engine_next = None
            pipe = self._db.pipeline(transaction=False)
            if batch:
                record["batch"] = json.dumps(
                    [[p, args] for p, args in batch], separators=(",", ":")
                )
                pipe.sadd(self._mkey + "pending", self.worker)
            pipe.hset(self._journal, mapping=record)
            pipe.execute()
            self._batch = number
            if batch:
                self.deliver(self.worker, number, [args_of(p, a) for p, a in batch])
                pipe = self._db.pipeline(transaction=False)
                pipe.hdel(self._journal, "batch")
                pipe.srem(self._mkey + "pending", self.worker)
                pipe.execute()
                self.counters["outbox_batches"] += 1

    def pending(self) -> bool:
        """Changes recorded and not committed yet."""
        return bool(self._outbox)

    # ------------------------------------------------------------ the leases
    def _order(self) -> list[int]:
        """The partitions in this worker's order of preference (rendezvous hashing:
        workers prefer different partitions, so few ask for the same one)."""

        def rank(p: int) -> bytes:
            return hashlib.blake2b(f"{self.worker}:{p}".encode(), digest_size=8).digest()

        return sorted(range(self.partitions), key=rank)

    def upkeep(self, *, delay: float) -> int:
        """:meth:`renew`, then :meth:`balance`; returns the workers alive."""
        alive = self.renew()
        self.balance(alive, delay=delay)
        return alive

    def renew(self) -> int:
        """Renew the leases held and say this worker is alive (a few milliseconds, never
        behind a commit or a partition being taken: a worker runs it on its own clock).
        Returns the workers alive."""
        started = time.monotonic()
        alive = int(
            self._db.evalsha(self._meta_sha, 1, self._mkey, "alive", self.worker, self.lease_ms)
        )
        owned = sorted(self.owned)
        pipe = self._db.pipeline(transaction=False)
        for p in owned:
            pipe.execute_command(
                "EVALSHA", self._lease_sha, 1, self._key(p), "renew", self.worker, self.lease_ms
            )
        # (a partition given back meanwhile by balance() is not lost)
        lost = [
            p
            for p, ok in zip(owned, pipe.execute(), strict=True)
            if not int(ok) and p in self.owned
        ]
        if lost:  # expired and taken by another worker: this one must stop, uncommitted
            self._deadline = 0.0
            raise LeaseLost(f"worker {self.worker}: lost the leases of {len(lost)} partitions")
        self._deadline = started + self.lease_ms / 1000 * (1 - _MARGIN)
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
        elif len(self.owned) > share and not self._outbox:
            with self._lock:
                idle = [p for p in sorted(self.owned) if not self._in_flight.get(p)]
                self.free(idle[: len(self.owned) - share], delay=delay)

    def _take(self, want: int) -> None:
        """Take up to ``want`` free partitions: a dead owner's batch is delivered first,
        then its URLs in flight are queued again (picked again, in a layered crawl). The
        round trips run without the lock (the crawl's pops go on meanwhile); the
        partitions join this worker's queues at the end, under it."""
        taken: list[tuple[int, str]] = []
        wanted = [p for p in self._order() if p not in self.owned]
        for start in range(0, len(wanted), 256):
            if len(taken) >= want:
                break
            chunk = wanted[start : start + 256]
            pipe = self._db.pipeline(transaction=False)
            for p in chunk:
                pipe.execute_command(
                    "EVALSHA", self._lease_sha, 1, self._key(p), "take", self.worker, self.lease_ms
                )
            for p, (ok, last) in zip(chunk, pipe.execute(), strict=True):
                if not int(ok):
                    continue
                if len(taken) >= want:  # taken beyond the want (a pipeline's tail): given back
                    self._db.evalsha(self._lease_sha, 1, self._key(p), "free", self.worker, 1)
                    continue
                taken.append((p, text(last)))
        if not taken:
            return
        delivered: set[str] = set()
        for _, last in taken:
            if last and last != self.worker:
                self.counters["partitions_taken_over"] += 1
                if last not in delivered:  # a dead worker's journaled batch, once
                    delivered.add(last)
                    key = f"{self.prefix}:{{{self.prefix}:w:{last}}}:j"
                    batch, seq = self._db.hmget(key, "batch", "seq")
                    if batch:
                        self.deliver(last, int(seq or 0), json.loads(batch))
                        self.counters["outbox_delivered_for_others"] += 1
        parts = [p for p, _ in taken]
        if self.layered:  # URLs in flight are this layer's: fetched by the new owner
            pipe = self._db.pipeline(transaction=False)
            for p in parts:
                pipe.smembers(self._key(p) + "if")
            stranded = pipe.execute()
            pipe = self._db.pipeline(transaction=False)
            for p, urls in zip(parts, stranded, strict=True):
                if urls:
                    pipe.sadd(self._key(p) + "pk", *urls)
            pipe.execute()
            self.counters["picked_again_on_take"] += sum(len(u) for u in stranded)
        else:
            requeued = super()._calls([(p, ("requeue",)) for p in parts])
            self.counters["requeued_on_take"] += sum(int(r) for r in requeued)
        heads = self._read_heads(parts)
        with self._lock:
            self.owned.update(parts)
            for (p, layer), head in heads.items():
                self._heads.update(p, layer, head)
        self.counters["partitions_taken"] += len(parts)

    def free(self, partitions: Iterable[int], *, delay: float) -> None:
        """Give partitions back (none of their URLs in flight here); nobody takes them
        for ``delay`` seconds."""
        ms = max(1, int(delay * 1000))
        parts = [p for p in partitions if p in self.owned]
        if not parts:
            return
        pipe = self._db.pipeline(transaction=False)
        for p in parts:
            pipe.execute_command(
                "EVALSHA", self._lease_sha, 1, self._key(p), "free", self.worker, ms
            )
        pipe.execute()
        for p in parts:
            self.owned.discard(p)
            for layer in self._layers:
                self._heads.update(p, layer, None)
        self.counters["partitions_freed"] += len(parts)

    def leave(self, *, delay: float) -> None:
        """This worker stops: what it had in flight queued again (its partitions are still
        its own, and nothing of them is fetched any more), its partitions given back, its
        heartbeat removed."""
        with self._lock:
            if self.owned and not self._outbox and time.monotonic() < self._deadline:
                calls = [(p, ("requeue",)) for p in sorted(self.owned)]
                self.counters["requeued_on_leave"] += sum(int(r) for r in super()._calls(calls))
            self.free(sorted(self.owned), delay=delay)
            self._db.evalsha(self._meta_sha, 1, self._mkey, "alive", self.worker, 0)

    # ------------------------------------------------------------ the queue
    def _refresh(self, partitions: Iterable[int] | None = None) -> None:
        """The best host of each partition held, read again (other workers' links
        reach its queues at their commits, and news of them comes to them, not here)."""
        parts = sorted(self.owned if partitions is None else partitions)
        for (p, layer), head in self._read_heads(parts).items():
            self._heads.update(p, layer, head)
        self._refreshed = time.monotonic()

    def pop(
        self,
        n: int,
        *,
        exclude_hosts: Collection[str] = (),
        max_per_host: int = 0,
        max_layer: int | None = None,
    ) -> list[QueuedURL]:
        with self._lock:  # (the lease upkeep runs in a thread)
            if time.monotonic() - self._refreshed >= _REFRESH_EVERY:
                self._refresh()
            got = super().pop(n, exclude_hosts=exclude_hosts, max_per_host=max_per_host,
                              max_layer=max_layer)  # fmt: skip
        for q in got:
            self._in_flight[self._part(q.url)] += 1
        return got

    def queued_here(self) -> bool:
        """Whether a partition held has queued URLs (read now)."""
        with self._lock:
            self._refresh()
            return bool(self._heads.heads)

    def requeue_in_flight(self) -> int:
        """Nothing to do at a worker's start: taking a partition's lease queues its URLs
        in flight again (see :meth:`_take`)."""
        return 0

    def top(self, column: str, state: URLState = URLState.FETCHED) -> tuple[str, float] | None:
        """The best URL in ``state`` among the partitions held (see the module)."""
        column = self._column(column)
        calls = [(p, ("top", column, int(URLState(state)))) for p in sorted(self.owned)]
        best: tuple[float, int, str] | None = None
        for result in super()._calls(calls) if calls else []:
            if not result:
                continue
            url, value, seq = text(result[0]), float(result[1]), int(result[2])
            if best is None or value > best[0] or (value == best[0] and seq < best[1]):
                best = (value, seq, url)
        return None if best is None else (best[2], best[0])

    # ------------------------------------------------------------ layers (shared)
    def _discovery(self, number: int, url: str) -> int:
        if not self.layered:
            return number
        return 1 + int.from_bytes(
            hashlib.blake2b(url.encode("utf-8"), digest_size=6).digest(), "big"
        )

    def pick(self, n: int) -> int:
        """The best ``n`` queued URLs across every partition (tier by tier, as a single
        process's layer is generated), taken into flight and left in their partitions'
        picked sets for their owners; returns how many. Run by one worker at a time."""
        every = self._read_heads(range(self.partitions))
        heads = QueueHeads({key: head for key, head in every.items() if head})
        taken: list[QueuedURL] = []
        while len(taken) < n:  # one pop serves one tier
            got = heads.pop(n - len(taken), {}, 0, None, super()._calls)
            if not got:
                break
            taken += got
        pipe = self._db.pipeline(transaction=False)
        for q in taken:
            pipe.sadd(self._key(self._part(q.url)) + "pk", q.url)
        pipe.execute()
        return len(taken)

    def picked(self) -> list[QueuedURL]:
        """The picked URLs of the partitions this worker holds, taken from their sets
        (they are in flight since they were picked)."""
        with self._lock:
            parts = sorted(self.owned)
            pipe = self._db.pipeline(transaction=False)
            for p in parts:
                pipe.spop(self._key(p) + "pk", 1 << 20)
            urls = [text(u) for found in pipe.execute() for u in (found or ())]
            rows = self._rows(urls)
            out = [queued(url, rows[url]) for url in sorted(rows, key=lambda u: rows[u][5])]
            for q in out:
                self._in_flight[self._part(q.url)] += 1
            return out

    def picked_here(self) -> bool:
        """Whether a partition this worker holds has picked URLs waiting."""
        with self._lock:
            pipe = self._db.pipeline(transaction=False)
            for p in sorted(self.owned):
                pipe.scard(self._key(p) + "pk")
            return any(int(x) for x in pipe.execute())

    def layer_open(self) -> bool:
        """Whether URLs of the current layer are still picked or in flight anywhere, or a
        worker's batch undelivered."""
        pipe = self._db.pipeline(transaction=False)
        for p in range(self.partitions):
            pipe.scard(self._key(p) + "pk")
            pipe.hget(self._key(p) + "n", str(int(URLState.IN_FLIGHT)))
        pipe.scard(self._mkey + "pending")
        return any(int(x or 0) for x in pipe.execute())

    def round(self) -> dict[str, int]:
        """The shared crawl's layer: ``layer`` (the current one), ``picked`` (0: not
        generated yet), ``over`` (1: no more layers) and ``selected`` (URLs in all)."""
        raw = self._db.hgetall(self._mkey + "round")
        return {text(k): int(v) for k, v in raw.items()}

    def set_round(self, **values: int) -> None:
        self._db.hset(self._mkey + "round", mapping=values)

    def lead(self, what: str) -> bool:
        """Whether this worker is the one that does ``what`` (a layer's end, its pick)."""
        return bool(self._db.set(self._mkey + "lead:" + what, self.worker, nx=True))

    def workers_states(self, layer: int) -> list[dict[str, Any]]:
        """The strategy states of the workers, as of their last commits, that were in
        ``layer`` then (a worker that left or died earlier was counted in its own)."""
        states = []
        for key in self._db.scan_iter(match=f"{self.prefix}:{{{self.prefix}:w:*}}:j", count=1000):
            engine = self._db.hget(key, "engine")
            if engine:
                state = json.loads(engine)
                if int((state.get("stats") or {}).get("layer", 0)) == layer:
                    states.append(dict(state.get("strategy") or {}))
        return states

    # ------------------------------------------------------------ the crawl's state
    def claim(self, pages: int) -> int:
        """Up to ``pages`` more of the shared page budget for this worker; returns how many."""
        before = self.claimed
        self.claimed = int(
            self._db.evalsha(self._meta_sha, 1, self._mkey, "claim", self.worker, max(0, pages))
        )
        return self.claimed - before

    def give_back(self, pages: int) -> None:
        """Unused budget handed back to the crawl (``pages`` <= claimed, not used)."""
        if pages > 0:
            self.claimed = int(
                self._db.evalsha(self._meta_sha, 1, self._mkey, "claim", self.worker, -pages)
            )

    def budget_left(self) -> int:
        return int(self._db.get(self._mkey + "budget") or 0)

    def finished(self) -> bool:
        """Nothing queued or in flight in any partition, and no worker's batch undelivered."""
        pipe = self._db.pipeline(transaction=False)
        for p in range(self.partitions):
            pipe.hmget(self._key(p) + "n", str(int(URLState.QUEUED)), str(int(URLState.IN_FLIGHT)))
        pipe.scard(self._mkey + "pending")
        *counts, pending = pipe.execute()
        return not int(pending) and not any(int(x or 0) for pair in counts for x in pair)


def _kept_back(args: Sequence[Any]) -> bool:
    op = args[0].decode("utf-8") if isinstance(args[0], bytes) else str(args[0])
    if op not in _KEPT_BACK:
        return False
    # a URL taken into flight (a re-crawl) is a lease, as a pop is: at once
    return not (op == "mark" and int(args[2]) == URLState.IN_FLIGHT)


def args_of(partition: int, args: Sequence[Any]) -> list[Any]:
    """A journaled call: [partition, args]."""
    return [partition, list(args)]
