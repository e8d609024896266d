"""A worker's outbox: its frontier changes kept back until its outputs are durable,
journaled, then delivered exactly once whoever delivers them.

Every change a worker makes to the frontier while recording results (marks, links,
scores) is kept back: at a commit, once the worker's output files are synced, the
batch is written to the worker's journal in Redis in one command together with the
engine's state (the files' lengths), and only then delivered. Every call of a batch
carries a number (the batch's, then the call's place in it) that the frontier script
checks against the last one applied in that partition for that worker
(:data:`~focuscrawl.frontier.redis.script.FRONTIER_LUA`, op ``g``): delivered twice,
it is applied once. A worker killed at any moment loses nothing: restarted, it cuts
its files back to the journal's lengths and delivers the journal's batch again; if
another worker takes its partitions first, that one delivers it.

A SET of a value the worker read becomes an ADD of the difference: OPIC's and OTIE's
"cash = 0" are delivered at the next commit, and cash another worker added meanwhile
must stay (:meth:`Outbox.keep`).
"""

from __future__ import annotations

import json
import secrets
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from focuscrawl.exceptions import FrontierError
from focuscrawl.frontier.redis.decode import decoded, decoded_json, garbage
from focuscrawl.frontier.redis.keys import Keys
from focuscrawl.frontier.redis.rows import float_arg, text
from focuscrawl.frontier.rules import SCORE
from focuscrawl.types import Merge, URLState
from focuscrawl.workers.claims import LeaseLost

__all__ = ["CALLS_PER_BATCH", "Outbox", "kept_back"]

# the scripts' operations kept back in the outbox: every change of a URL's row
_KEPT_BACK = frozenset({"add", "values", "raise", "tier", "host", "mark", "combine"})
CALLS_PER_BATCH = 1 << 20  # a call's number: batch x this + its place in the batch
_DELIVER_CHUNK = 2000  # calls per pipeline when a batch is delivered

# a delivered batch cleared from its journal unless another was journaled since
_CLEAR_BATCH = """#!lua
if redis.call('HGET', KEYS[1], 'seq') ~= ARGV[1] then return 0 end
redis.call('HDEL', KEYS[1], 'batch')
return 1
"""

# a worker's journal written only if it is not fenced: another worker took one of its
# partitions when their leases expired, or retired it, and has delivered its journal
# as it was then. A worker stopped (SIGSTOP, a long pause) after its own look at its
# leases and before this write must commit nothing more: its batch would mark fetched
# the URLs of its that were queued again, and its pages were given back to the budget
_JOURNAL = """#!lua
if redis.call('HEXISTS', KEYS[1], 'fenced') == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
"""

# a worker fenced (by the worker named in ARGV[1]) unless it was started again since
# the fencer found it dead (its run, ARGV[2], is another); returns its journal from then
# on (nil: not fenced)
_FENCE = """#!lua
if (redis.call('HGET', KEYS[1], 'run') or '') ~= ARGV[2] then return false end
redis.call('HSET', KEYS[1], 'fenced', ARGV[1])
return redis.call('HGETALL', KEYS[1])
"""

Send = Callable[[Sequence[tuple[int, Sequence[Any]]]], list[Any]]  # the frontier's scripts


def kept_back(args: Sequence[Any]) -> bool:
    """Whether a frontier call waits in the outbox (a change of a URL's row)."""
    op = args[0].decode("utf-8") if isinstance(args[0], bytes) else str(args[0])
    if op not in _KEPT_BACK:
        return False
    # a URL taken into flight (a re-crawl) is a lease, as a pop is: at once
    return not (op == "mark" and int(args[2]) == URLState.IN_FLIGHT)


class Outbox:
    """The outbox and journal of worker ``worker``; ``send`` applies calls at once."""

    def __init__(
        self, db: Any, keys: Keys, *, worker: str, send: Send, counters: Counter[str]
    ) -> None:
        self._db, self._keys, self.worker, self._send = db, keys, worker, send
        self.counters = counters
        self._pending_key = keys.meta + "pending"
        self.journal = keys.journal(worker)
        self.calls: list[tuple[int, list[Any]]] = []
        # (url, column) -> the value read, as changed since by this worker's own calls
        self._seen: dict[tuple[str, str], float] = {}
        # started again, from its last commit: no longer fenced, and a run of its own (a
        # worker that found it dead before fences it only if that run is the one it saw)
        pipe = db.pipeline(transaction=False)
        pipe.hdel(self.journal, "fenced")
        pipe.hset(self.journal, "run", secrets.token_hex(8))
        pipe.hgetall(self.journal)
        journal = checked_journal(self.journal, pipe.execute()[2])
        self.batch = int(journal.get("seq", 0))
        self.engine: str | None = journal.get("engine")
        self.engine_next: str | None = None
        if journal.get("batch"):  # killed between its journal and the delivery
            self.deliver(worker, self.batch, json.loads(journal["batch"]))
            db.hdel(self.journal, "batch")
            counters["outbox_redelivered"] += 1

    def describe(self, **fields: str) -> None:
        """Where this worker's run is (its machine, its directory): for whoever finds it dead."""
        self._db.hset(self.journal, mapping=fields)

    # ------------------------------------------------------------ keeping back
    def keep(self, partition: int, args: list[Any]) -> None:
        """A kept-back call (see :func:`kept_back`), its SETs of values read made relative."""
        if args[0] == "values":
            self.calls += [(partition, a) for a in self._relative(args)]
        else:
            self._forget(args)
            self.calls.append((partition, args))

    def read(self, url: str, column: str, value: float) -> None:
        """``column`` of ``url`` was read as ``value`` (a SET of it becomes an ADD)."""
        self._seen[url, column] = value

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

    # ------------------------------------------------------------ the commit
    def commit(self) -> None:
        """Journal the batch with the engine's state, in one command, then deliver it."""
        batch, self.calls = self.calls, []
        self._seen.clear()
        if not batch and self.engine_next is None:
            return
        number = self.batch + 1
        record: dict[Any, Any] = {"seq": number}
        engine = self.engine_next
        self.engine_next = None
        if engine is not None:
            record["engine"] = engine
        pipe = self._db.pipeline(transaction=False)
        if batch:
            record["batch"] = json.dumps([[p, a] for p, a in batch], separators=(",", ":"))
            pipe.sadd(self._pending_key, self.worker)
        fields = [x for kv in record.items() for x in kv]  # (a cluster's pipeline: no eval())
        pipe.execute_command("EVAL", _JOURNAL, 1, self.journal, *fields)
        if not int(pipe.execute()[-1]):
            if batch:  # (none of its batches is undelivered: each was, before this commit)
                self._db.srem(self._pending_key, self.worker)
            self.calls[:0] = batch  # (still pending: its claim is not settled with them)
            self.engine_next = engine
            raise LeaseLost(
                f"worker {self.worker}: fenced by another worker (its leases had expired): "
                "it stops without committing; restarted (same --out) it goes on from its "
                "last commit"
            )
        self.batch = number
        if engine is not None:  # (the last commit's state: what the files are cut back to)
            self.engine = engine
        if batch:
            self.deliver(self.worker, number, [[p, a] for p, a in batch])
            pipe = self._db.pipeline(transaction=False)
            pipe.hdel(self.journal, "batch")
            pipe.srem(self._pending_key, self.worker)
            pipe.execute()
            self.counters["outbox_batches"] += 1

    # ------------------------------------------------------------ delivery
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
            self._send(numbered[start : start + _DELIVER_CHUNK])

    def deliver_journaled(self, worker: str, *, settle: bool = False) -> bool:
        """Deliver another worker's journaled batch (that worker died); ``settle``: then
        clear it from its journal, unless that worker journaled another meanwhile (it
        came back), and from the undelivered ones. Returns whether there was one."""
        key = self._keys.journal(worker)
        batch, seq = self._db.hmget(key, "batch", "seq")
        checked_journal(key, {"batch": batch, "seq": seq})
        if not batch:
            return False
        self.deliver(worker, int(seq or 0), json.loads(batch))
        if settle and int(self._db.eval(_CLEAR_BATCH, 1, key, seq)):
            self._db.srem(self._pending_key, worker)
        return True

    def fence(self, worker: str, run: str) -> dict[str, str] | None:
        """Fence ``worker``, found dead (its heartbeat expired: it died, or is stalled)
        in its run ``run`` (its journal's, read before): from now on its journal takes
        no commit. Returns the journal as it is from then on; None if the worker was
        started again meanwhile (another run: not fenced)."""
        key = self._keys.journal(worker)
        flat = self._db.eval(_FENCE, 1, key, self.worker, run)
        if flat is None:
            return None
        return checked_journal(key, dict(zip(flat[::2], flat[1::2], strict=True)))

    def journal_of(self, worker: str) -> dict[str, str]:
        """``worker``'s journal: ``seq``, ``engine`` (its state), ``dir``, ``host``..."""
        key = self._keys.journal(worker)
        return checked_journal(key, self._db.hgetall(key))


def checked_journal(key: str, raw: dict[Any, Any]) -> dict[str, str]:
    """A worker's journal as read from Redis, its fields checked as the worker wrote
    them (``seq`` a number, ``engine`` a JSON object, ``batch`` a JSON list of calls):
    anything else is a one-line error naming the key, not a traceback later."""
    journal = {text(k): text(v) for k, v in raw.items() if v is not None}
    if "seq" in journal:
        decoded(key, journal["seq"])
    if "engine" in journal:
        decoded_json(f"{key} (field engine)", journal["engine"])
    if "batch" in journal:
        try:
            calls = json.loads(journal["batch"])
        except ValueError:
            calls = None
        if not isinstance(calls, list):
            raise garbage(f"{key} (field batch)", journal["batch"], "a JSON list")
    return journal
