"""The open namespace of a Redis frontier: what its roles share.

:class:`RedisCore` holds the connection and the namespace's settings (partitions,
parent edges kept), and the plumbing every role of
:class:`~focuscrawl.frontier.redis_store.RedisFrontier` goes through: the keys of a
partition and the partition of a URL, the frontier's script called on partitions
(pipelined, its changes taken in: the queues' best keys, the counts of this
client), the discovery numbers, the known columns and the rows read by URL.

The frontier *is* its core (a subclass): a
:class:`~focuscrawl.frontier.redis_worker.WorkerFrontier` overrides the plumbing
(its outbox is a ``_calls``, its layers a ``_discovery``), and the roles, given the
frontier, go through the override.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterable, Sequence
from typing import Any

import redis

from focuscrawl.exceptions import FrontierError
from focuscrawl.frontier.base import no_edges_error
from focuscrawl.frontier.redis_heads import QueueHeads
from focuscrawl.frontier.redis_rows import (
    MAX_PARTITIONS,
    SOCKET_TIMEOUT,
    Row,
    connect,
    partition_host,
    row_of,
    server_url,
    text,
)
from focuscrawl.frontier.redis_scripts import FRONTIER_LUA
from focuscrawl.frontier.rules import SCORE, checked_int
from focuscrawl.urls import host_of as url_host

__all__ = ["COUNTS_EVERY", "PARTITIONS", "SEQ_BLOCK", "RedisCore"]

PARTITIONS = 1024  # logical partitions: a few per worker and core, leased whole (next)
COUNTS_EVERY = 1.0  # seconds between two reads of every partition's counts (count())
SEQ_BLOCK = 1 << 16  # discovery numbers taken from the shared counter at once


class RedisCore:
    """The namespace ``prefix`` of the Redis server ``url``, open (see
    :class:`~focuscrawl.frontier.redis_store.RedisFrontier` for the arguments)."""

    def __init__(
        self,
        url: str,
        *,
        prefix: str,
        parents: bool = True,
        partitions: int = PARTITIONS,
        timeout: float = SOCKET_TIMEOUT,
    ) -> None:
        try:
            self._db = connect(url, timeout=timeout)
            conf = self._db.hgetall(f"{prefix}:{{{prefix}:m}}:conf")
        except FrontierError:  # (the client's own line: redis_rows.Client)
            raise
        except (redis.RedisError, ValueError) as exc:
            raise FrontierError(f"frontier {url}: {exc}") from exc
        self.url, self.prefix = url, prefix
        meta = f"{prefix}:{{{prefix}:m}}:"
        self._meta, self._seq = meta + "meta", meta + "seq"
        self._cols_key, self._layers_key = meta + "cols", meta + "layers"
        self._seq_next = self._seq_end = 0  # a block of discovery numbers of this client
        # the partitions' counts summed when last read, and this client's changes since
        self._counts: dict[int, int] = {}
        self._local: dict[int, int] = {}
        self._counted_at = -COUNTS_EVERY
        if conf:
            self.partitions = int(conf[b"partitions"])
            if parents and conf[b"parents"] == b"0":
                raise FrontierError(
                    f"frontier {url} {prefix}: created without parent edges, opened with them"
                )
            self._keep_edges = conf[b"parents"] == b"1"
        else:
            asked = server_url(url)[1]  # ?partitions=N in the URL
            partitions = partitions if asked is None else asked
            self.partitions = checked_int("partitions", partitions, (1, MAX_PARTITIONS))
            self._keep_edges = parents
            self._db.hset(
                meta + "conf",
                mapping={"partitions": self.partitions, "parents": int(parents)},
            )
        self._sha = self._db.script_load(FRONTIER_LUA)
        self._columns = {text(c) for c in self._db.smembers(self._cols_key)}
        self._layers: set[int] = set()
        heads = self._read_heads(range(self.partitions))
        self._heads = QueueHeads({key: head for key, head in heads.items() if head})

    # ------------------------------------------------------------------ plumbing
    def _key(self, partition: int) -> str:
        return f"{self.prefix}:{{{self.prefix}:{partition}}}:"

    def _part(self, url: str) -> int:
        # the engine's own host function: the hosts it passes always match
        return self._part_host(url_host(url))

    def _part_host(self, host: str) -> int:
        return zlib.crc32(partition_host(host).encode("utf-8")) % self.partitions

    def _read_heads(self, partitions: Sequence[int]) -> dict[tuple[int, int], bytes | None]:
        """The best host of each (partition, layer) queue of ``partitions``, read now:
        its pop key (20 bytes) and its name, None for an empty queue. The crawl's
        layers are read again first (another client may have made one)."""
        self._layers |= {int(x) for x in self._db.smembers(self._layers_key)}
        keys = [(p, layer) for layer in sorted(self._layers) for p in partitions]
        pipe = self._db.pipeline(transaction=False)
        for p, layer in keys:
            pipe.zrange(f"{self._key(p)}r:{layer}", 0, 0)
        return {
            key: bytes(best[0]) if best else None
            for key, best in zip(keys, pipe.execute(), strict=True)
        }

    def _changes_from(self, partition: int, changes: Sequence[bytes]) -> None:
        for i in range(0, len(changes), 2):
            what, value = bytes(changes[i]), changes[i + 1]
            if what.startswith(b"s"):  # a change of a state's count
                state = int(what[1:])
                self._local[state] = self._local.get(state, 0) + int(value)
            else:
                self._heads.update(partition, int(what), bytes(value) or None)

    def _call(self, partition: int, *args: Any) -> Any:
        return self._calls([(partition, args)])[0]

    def _calls(self, calls: Sequence[tuple[int, Sequence[Any]]]) -> list[Any]:
        """One script per partition, pipelined (no order between partitions).

        EVALSHA without redis-py's SCRIPT EXISTS round trip; a server that lost its
        script cache (restarted) answers NOSCRIPT to every call of the pipeline, none
        applied: the script is loaded again and the pipeline sent again."""
        for attempt in (0, 1):
            pipe = self._db.pipeline(transaction=False)
            for p, args in calls:
                pipe.execute_command("EVALSHA", self._sha, 1, self._key(p), *args)
            try:
                replies = pipe.execute()
                break
            except redis.exceptions.NoScriptError:
                if attempt:
                    raise
                self._sha = self._db.script_load(FRONTIER_LUA)
        out = []
        for (p, _), (result, changes) in zip(calls, replies, strict=True):
            self._heads.touched(p)
            self._changes_from(p, changes)
            out.append(result)
        return out

    def _seqs(self, k: int) -> int:
        """``k`` consecutive discovery numbers: the first one less 1. Taken from the
        shared counter in blocks (one INCRBY every SEQ_BLOCK numbers, not every batch);
        a block left unused leaves a gap, never an order against discovery."""
        if self._seq_next + k > self._seq_end:
            size = max(k, SEQ_BLOCK)
            self._seq_end = int(self._db.incrby(self._seq, size))
            self._seq_next = self._seq_end - size
        base = self._seq_next
        self._seq_next += k
        return base

    def _discovery(self, number: int, url: str) -> int:
        """The discovery number a new ``url`` gets (ties in the pop order go to the lower):
        ``number``, its place in this client's order (see the module)."""
        return number

    def _column(self, name: str) -> str:
        if name != SCORE and name not in self._columns:
            self._columns = {text(c) for c in self._db.smembers(self._cols_key)}
            if name not in self._columns:
                raise FrontierError(f"unknown column {name!r}")
        return name

    def _edges_kept(self) -> None:
        if not self._keep_edges:
            raise no_edges_error("this frontier")

    def _rows(self, urls: Iterable[str]) -> dict[str, Row]:
        urls = list(dict.fromkeys(urls))
        pipe = self._db.pipeline(transaction=False)
        for url in urls:
            pipe.hget(self._key(self._part(url)) + "u", url)
        return {u: row_of(raw) for u, raw in zip(urls, pipe.execute(), strict=True) if raw}

    def _row(self, url: str) -> Row | None:
        raw = self._db.hget(self._key(self._part(url)) + "u", url)
        return None if raw is None else row_of(raw)
