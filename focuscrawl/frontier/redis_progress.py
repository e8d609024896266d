"""Where the shared crawl stands, as every worker reads it: whether it is over, and a
layered crawl's global rounds (the layer, who picks it, who ends it, the workers'
strategy states to merge at its end; see :mod:`focuscrawl.workers.coordination`)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from focuscrawl.frontier.redis_outbox import journal_key
from focuscrawl.frontier.redis_rows import text
from focuscrawl.types import URLState

__all__ = ["CrawlProgress"]


class CrawlProgress:
    """The shared crawl ``prefix``'s progress, read by worker ``worker``; ``key(p)`` is
    partition p's key prefix."""

    def __init__(
        self, db: Any, *, prefix: str, worker: str, partitions: int, key: Callable[[int], str]
    ) -> None:
        self._db, self.prefix, self.worker = db, prefix, worker
        self.partitions, self._key = partitions, key
        self._mkey = f"{prefix}:{{{prefix}:m}}:"

    def finished(self) -> bool:
        """Nothing queued or in flight in any partition, and no worker's batch undelivered."""
        pipe = self._db.pipeline(transaction=False)
        for p in range(self.partitions):
            pipe.hmget(self._key(p) + "n", str(int(URLState.QUEUED)), str(int(URLState.IN_FLIGHT)))
        pipe.scard(self._mkey + "pending")
        *counts, pending = pipe.execute()
        return not int(pending) and not any(int(x or 0) for pair in counts for x in pair)

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
        for key in self._db.scan_iter(match=journal_key(self.prefix, "*"), count=1000):
            engine = self._db.hget(key, "engine")
            if engine:
                state = json.loads(engine)
                if int((state.get("stats") or {}).get("layer", 0)) == layer:
                    states.append(dict(state.get("strategy") or {}))
        return states
