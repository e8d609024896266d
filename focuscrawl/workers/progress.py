"""Where the shared crawl stands, as every worker reads it: whether it is over, and a
layered crawl's global rounds (the layer, who picks it, who ends it, the workers'
strategy states to merge at its end; see :mod:`focuscrawl.workers.coordination`)."""

from __future__ import annotations

from typing import Any

from focuscrawl.exceptions import FrontierError
from focuscrawl.frontier.redis.decode import decoded_json
from focuscrawl.frontier.redis.keys import Keys
from focuscrawl.frontier.redis.rows import text
from focuscrawl.types import URLState

__all__ = ["CrawlProgress"]

# the lead of a layer's pick or end (KEYS[1]): this worker's if nobody holds it, or if it
# holds it already (its process started again after dying at that work: it does it again)
_LEAD = """#!lua
local holder = redis.call('GET', KEYS[1])
if not holder then
  redis.call('SET', KEYS[1], ARGV[1])
  return 1
end
return holder == ARGV[1] and 1 or 0
"""

# the leads of a retired worker (ARGV[1]) given up (KEYS: the current layer's)
_RELEASE = """#!lua
for _, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then redis.call('DEL', key) end
end
return 0
"""


class CrawlProgress:
    """The progress of the shared crawl whose namespace is ``keys``, read by worker
    ``worker``."""

    def __init__(self, db: Any, keys: Keys, *, worker: str, partitions: int) -> None:
        self._db, self._keys, self.worker = db, keys, worker
        self.partitions, self._key = partitions, keys.partition
        self._mkey = keys.meta
        self.seeding = False  # this worker added the seeds and has not committed since
        self.named_now = False  # seeder() named this worker just now (none was named)

    def seeder(self) -> str:
        """The worker that adds the seeds: this one if none was named before (the
        first to ask). A name that is not one of the crawl's workers (a key set by
        hand) is one line: no worker would ever add the seeds, and the crawl would
        end at once with nothing done."""
        key = self._mkey + "seeded"
        pipe = self._db.pipeline(transaction=False)
        pipe.setnx(key, self.worker)
        pipe.get(key)
        pipe.smembers(self._mkey + "workers")
        named, seeder, workers = pipe.execute()
        self.named_now = bool(named)
        if seeder is None or seeder not in workers:
            raise FrontierError(
                f"key {key} names {seeder!r}, not a worker of this crawl (set by hand?): no "
                "worker would add the seeds; delete that key, or start afresh with another --out"
            )
        return text(seeder)

    def published(self, field: str) -> bool:
        """Whether the crawl's meta holds ``field`` (its published run: gone with the
        crawl's state when Redis restarts without its data, or is flushed)."""
        return bool(self._db.hexists(self._mkey + "meta", field))

    def committed(self) -> None:
        """A commit of this worker: if it added the seeds (:attr:`seeding`), they are
        delivered, and from now on a crawl with nothing queued or in flight is over."""
        if self.seeding:
            self._db.set(self._mkey + "seeds-in", self.worker)
            self.seeding = False

    def retired(self, worker: str, *, journaled: bool) -> None:
        """``worker`` died and was retired, its journaled batch delivered: its leads of the
        current layer are given up. If it was the seeder and had not said its seeds were
        delivered: they are if it had journaled a commit (its first holds them); if not,
        they never reached Redis, and the next worker to start (or it, restarted) adds them."""
        # its lead of the current layer's pick or end given up: it died at that work (the
        # crawl waited for it for ever), and whoever asks next does it
        layer = self.round().get("layer", 0)
        leads = [self._mkey + f"lead:{what}:{layer}" for what in ("pick", "end")]
        self._db.eval(_RELEASE, len(leads), *leads, worker)
        key = self._mkey + "seeded"
        pipe = self._db.pipeline(transaction=False)
        pipe.exists(self._mkey + "seeds-in")
        pipe.get(key)
        seeded, seeder = pipe.execute()
        if int(seeded) or seeder is None or text(seeder) != worker:
            return
        if journaled:
            self._db.set(self._mkey + "seeds-in", worker)
        else:
            self._db.delete(key)

    def finished(self) -> bool:
        """The seeds delivered, nothing queued or in flight in any partition, and no
        worker's batch undelivered (before the seeder's first commit the partitions are
        empty: a worker that joins then waits)."""
        pipe = self._db.pipeline(transaction=False)
        for p in range(self.partitions):
            pipe.hmget(self._key(p) + "n", str(int(URLState.QUEUED)), str(int(URLState.IN_FLIGHT)))
        pipe.scard(self._mkey + "pending")
        pipe.exists(self._mkey + "seeds-in")
        *counts, pending, seeded = pipe.execute()
        if not int(seeded) or int(pending):
            return False
        return not any(int(x or 0) for pair in counts for x in pair)

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
        return bool(int(self._db.eval(_LEAD, 1, self._mkey + "lead:" + what, self.worker)))

    def workers_states(self, layer: int) -> list[dict[str, Any]]:
        """The strategy states of the workers, as of their last commits, that were in
        ``layer`` then (a worker that left or died earlier was counted in its own)."""
        states = []
        for key in self._db.scan_iter(match=self._keys.journal("*"), count=1000):
            engine = self._db.hget(key, "engine")
            if engine:
                state = decoded_json(f"{text(key)} (field engine)", engine)
                if int((state.get("stats") or {}).get("layer", 0)) == layer:
                    states.append(dict(state.get("strategy") or {}))
        return states
