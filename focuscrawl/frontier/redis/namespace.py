"""The open namespace of a Redis frontier: what its roles share.

:class:`Namespace` holds the connection (:class:`~focuscrawl.frontier.redis.connection.Connection`),
the namespace's keys (:class:`~focuscrawl.frontier.redis.keys.Keys`) and settings
(partitions, parent edges kept), and the plumbing every role of
:class:`~focuscrawl.frontier.redis.store.RedisFrontier` goes through, by its methods:
the partition of a URL, the frontier's script called on partitions (pipelined, its
news taken in: the queues' best keys, the counts of this client), the discovery
numbers, the known columns and layers, and the rows read by URL.

A worker's namespace (:class:`focuscrawl.workers.frontier.WorkerNamespace`) overrides
three of them: :meth:`Namespace.calls` (its outbox keeps changes back),
:meth:`Namespace.taken_in` (only its own partitions' queues are its) and
:meth:`Namespace.discovery` (a layered crawl's order); the roles, given the
namespace, go through the override.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from focuscrawl.exceptions import FrontierError
from focuscrawl.frontier.base import no_edges_error
from focuscrawl.frontier.redis.connection import (
    MAX_PARTITIONS,
    TIMEOUT,
    Connection,
    lost_script,
    server_url,
)
from focuscrawl.frontier.redis.decode import decoded
from focuscrawl.frontier.redis.keys import Keys, partition_of
from focuscrawl.frontier.redis.order import QueueHeads
from focuscrawl.frontier.redis.rows import Row, row_of, text
from focuscrawl.frontier.redis.script import FRONTIER_LUA
from focuscrawl.frontier.rules import SCORE, checked_int
from focuscrawl.urls import host_of as url_host

__all__ = ["COUNTS_EVERY", "PARTITIONS", "SEQ_BLOCK", "Namespace", "StateCounts"]

PARTITIONS = 1024  # logical partitions: a few per worker and core, leased whole (next)
COUNTS_EVERY = 1.0  # seconds between two reads of every partition's counts (count())
SEQ_BLOCK = 1 << 16  # discovery numbers taken from the shared counter at once


class StateCounts:
    """URLs per state: every partition's counts summed when last read (at
    :attr:`read_at`, monotonic), plus this client's changes since."""

    def __init__(self) -> None:
        self.read_at = -COUNTS_EVERY
        self._read: dict[int, int] = {}
        self._local: dict[int, int] = {}

    def changed(self, state: int, delta: int) -> None:
        self._local[state] = self._local.get(state, 0) + delta

    def reset(self, totals: dict[int, int], at: float) -> None:
        """Every partition's counts, read at ``at``: this client's changes are in them."""
        self._read, self._local, self.read_at = totals, {}, at

    def count(self, state: int | None) -> int:
        if state is None:
            return sum(self._read.values()) + sum(self._local.values())
        return self._read.get(state, 0) + self._local.get(state, 0)


class Namespace:
    """The namespace ``prefix`` of the Redis server ``url``, open (see
    :class:`~focuscrawl.frontier.redis.store.RedisFrontier` for the arguments)."""

    def __init__(
        self,
        url: str,
        *,
        prefix: str,
        parents: bool = True,
        partitions: int = PARTITIONS,
        timeout: float = TIMEOUT,
    ) -> None:
        self.db = Connection(url, timeout=timeout)
        self.url, self.prefix = url, prefix
        self.keys = keys = Keys(prefix)
        conf = self.db.hgetall(keys.meta + "conf")
        self._seq_next = self._seq_end = 0  # a block of discovery numbers of this client
        self.counts = StateCounts()
        if conf:
            self.partitions = decoded(keys.meta + "conf", conf.get(b"partitions"))
            if parents and conf[b"parents"] == b"0":
                raise FrontierError(
                    f"frontier {url} {prefix}: created without parent edges, opened with them"
                )
            self.edges = conf[b"parents"] == b"1"
        else:
            asked = server_url(url)[1]  # ?partitions=N in the URL
            partitions = partitions if asked is None else asked
            self.partitions = checked_int("partitions", partitions, (1, MAX_PARTITIONS))
            self.edges = parents
            self.db.hset(
                keys.meta + "conf",
                mapping={"partitions": self.partitions, "parents": int(parents)},
            )
        self._sha = self.db.script_load(FRONTIER_LUA)
        self.columns = {text(c) for c in self.db.smembers(keys.meta + "cols")}
        self.layers: set[int] = set()
        heads = self.read_heads(range(self.partitions))
        self.heads = QueueHeads({key: head for key, head in heads.items() if head})

    # ------------------------------------------------------------ partitions
    def part(self, url: str) -> int:
        """The partition of ``url`` (the engine's own host function: the hosts it
        passes always match)."""
        return self.part_host(url_host(url))

    def part_host(self, host: str) -> int:
        return partition_of(host, self.partitions)

    def read_heads(self, partitions: Iterable[int]) -> dict[tuple[int, int], bytes | None]:
        """The best host of each (partition, layer) queue of ``partitions``, read now:
        its pop key (20 bytes) and its name, None for an empty queue. The crawl's
        layers are read again first (another client may have made one)."""
        key = self.keys.meta + "layers"
        self.layers |= {decoded(key, x) for x in self.db.smembers(key)}
        keys = [(p, layer) for layer in sorted(self.layers) for p in partitions]
        pipe = self.db.pipeline(transaction=False)
        for p, layer in keys:
            pipe.zrange(f"{self.keys.partition(p)}r:{layer}", 0, 0)
        return {
            key: bytes(best[0]) if best else None
            for key, best in zip(keys, pipe.execute(), strict=True)
        }

    def add_layer(self, layer: int) -> None:
        if layer not in self.layers:
            self.db.sadd(self.keys.meta + "layers", layer)
            self.layers.add(layer)

    # ------------------------------------------------------------ the script
    def call(self, partition: int, *args: Any) -> Any:
        return self.calls([(partition, args)])[0]

    def calls(self, calls: Sequence[tuple[int, Sequence[Any]]]) -> list[Any]:
        """The roles' calls of the script: :meth:`send` (a worker keeps changes back)."""
        return self.send(calls)

    def send(self, calls: Sequence[tuple[int, Sequence[Any]]]) -> list[Any]:
        """One script per partition, pipelined (no order between partitions), applied
        now; their news taken in (:meth:`taken_in`).

        EVALSHA without redis-py's SCRIPT EXISTS round trip; a server that lost its
        script cache (restarted) answers NOSCRIPT to every call of the pipeline, none
        applied: the script is loaded again and the pipeline sent again."""
        for attempt in (0, 1):
            pipe = self.db.pipeline(transaction=False)
            for p, args in calls:
                pipe.execute_command("EVALSHA", self._sha, 1, self.keys.partition(p), *args)
            try:
                replies = pipe.execute()
                break
            except FrontierError as exc:
                if attempt or not lost_script(exc):
                    raise
                self._sha = self.db.script_load(FRONTIER_LUA)
        out = []
        for (p, _), (result, changes) in zip(calls, replies, strict=True):
            self.heads.touched(p)
            self.taken_in(p, changes)
            out.append(result)
        return out

    def taken_in(self, partition: int, changes: Sequence[bytes]) -> None:
        """A script's news (see :mod:`~focuscrawl.frontier.redis.script`): the changes
        of the counts by state, and the new best keys of the partition's queues."""
        for i in range(0, len(changes), 2):
            what, value = bytes(changes[i]), changes[i + 1]
            if what.startswith(b"s"):  # a change of a state's count
                self.counts.changed(int(what[1:]), int(value))
            else:
                self.heads.update(partition, int(what), bytes(value) or None)

    def seqs(self, k: int) -> int:
        """``k`` consecutive discovery numbers: the first one less 1. Taken from the
        shared counter in blocks (one INCRBY every SEQ_BLOCK numbers, not every batch);
        a block left unused leaves a gap, never an order against discovery."""
        if self._seq_next + k > self._seq_end:
            size = max(k, SEQ_BLOCK)
            self._seq_end = int(self.db.incrby(self.keys.meta + "seq", size))
            self._seq_next = self._seq_end - size
        base = self._seq_next
        self._seq_next += k
        return base

    def discovery(self, number: int, url: str) -> int:
        """The discovery number a new ``url`` gets (ties in the pop order go to the lower):
        ``number``, its place in this client's order."""
        return number

    # ------------------------------------------------------------ columns, edges, rows
    def column(self, name: str) -> str:
        """``name`` if it is a column (the known ones read again if it is not known)."""
        if name != SCORE and name not in self.columns:
            self.read_columns()
            if name not in self.columns:
                raise FrontierError(f"unknown column {name!r}")
        return name

    def read_columns(self) -> set[str]:
        self.columns = {text(c) for c in self.db.smembers(self.keys.meta + "cols")}
        return self.columns

    def add_columns(self, names: set[str]) -> None:
        new = names - self.columns
        if new:
            self.db.sadd(self.keys.meta + "cols", *sorted(new))
            self.columns |= new

    def check_edges(self) -> None:
        """One line if this namespace keeps no parent edges."""
        if not self.edges:
            raise no_edges_error("this frontier")

    def rows(self, urls: Iterable[str]) -> dict[str, Row]:
        """The rows of the known URLs of ``urls``: one pipelined read."""
        urls = list(dict.fromkeys(urls))
        pipe = self.db.pipeline(transaction=False)
        keys = [self.keys.partition(self.part(url)) + "u" for url in urls]
        for url, key in zip(urls, keys, strict=True):
            pipe.hget(key, url)
        found = zip(urls, keys, pipe.execute(), strict=True)
        return {u: row_of(raw, key) for u, key, raw in found if raw}

    def row(self, url: str) -> Row | None:
        key = self.keys.partition(self.part(url)) + "u"
        raw = self.db.hget(key, url)
        return None if raw is None else row_of(raw, key)

    def drop(self) -> int:
        """Delete the whole namespace (every key under the prefix); returns how many keys."""
        removed = 0
        for key in self.db.scan_iter(match=self.keys.every(), count=1000):
            removed += int(self.db.delete(key))
        self.heads = QueueHeads({})
        return removed
