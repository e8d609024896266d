"""A :class:`~focuscrawl.frontier.base.FrontierStore` on Redis: the crawl DB shared
past one machine (issue 25, the store; the workers that share it come next).

Layout. The URLs are spread over ``partitions`` logical partitions by a hash of
their host (every URL of a host in one partition: one owner per host). Every key
of a partition carries the partition's hash tag, and every change is one Lua
script on one partition (:mod:`~focuscrawl.frontier.redis.script`), so the store
runs unchanged on a Redis Cluster and a change is atomic where its data lives.
Per host and layer a sorted set holds the queued URLs in pop order (tier desc,
score desc, discovery order asc, as :class:`~focuscrawl.frontier.memory.MemoryFrontier`),
per partition and layer a sorted set the hosts by their best URL. Global keys
(meta, the discovery counter, the column names, the layers) carry their own tag.

Merge rules. ADD / MAX / KEEP / SET are applied inside the scripts, on the stored
value, so updates from several writers commute where the rule does (ADD, MAX, KEEP)
and a link's score when new vs when known is decided atomically.

Pop. The client keeps each (partition, layer)'s best key, returned by every
script that changed it; a pop takes, in order, from the best (partition, layer) the
URLs better than the next one's best key, then moves on: exactly the reference's
greedy order with its per-host caps and tier strictness, in one script per switch
(:mod:`~focuscrawl.frontier.redis.order`). The keys it knows are those its own
scripts returned: one writer per partition (the next step's leases) keeps them true.

Discovery order. ``seq`` comes from one shared counter, taken in blocks of
SEQ_BLOCK (the parent of a batch's item i gets ``base + 2i + 1``, the URL
``base + 2i + 2``), so one client's order is the reference's; the numbers have gaps
(the reference counts 1, 2, 3 ...); several clients interleave by blocks.

Durability. Each script is atomic and applied when the call returns; Redis has no
transaction spanning the engine's batch, so :meth:`commit` is a no-op. With
``appendonly yes`` (``appendfsync always`` for power loss) the AOF holds a prefix
of the scripts, and the engine writes its ``meta`` (output offsets) last. A crash of
the *crawler* between two commits leaves Redis ahead of the outputs: URLs marked
FETCHED after the last commit lose their records on resume (IN_FLIGHT ones are
queued again). The workers' outbox (frontier updates delivered only after the
outputs are synced, each batch with a sequence number the script checks) closes
that gap; until then a resume after a crash is at-most-once for the last batch.
The script declares ``#!lua`` (Redis 7 flags): refused, not half applied, when the
server is past ``maxmemory``, and refused on a Cluster if it ever touched two slots.

Costs. add/update/mark/pop/get/state/value are O(log n) per URL (one round trip
per call, one pipelined script per partition touched); count reads every
partition's counts at most once a second (COUNTS_EVERY) and adds this client's own
changes, which the scripts return; top of the FETCHED URLs' score (OTIE) reads each
partition's best; iter_urls, top of anything else, combine_columns, update_host and
requeue scan (per partition, O(n / partitions) each).

The store is built by composition, as :class:`~focuscrawl.frontier.indexed.IndexedFrontier`:
one open namespace (:class:`~focuscrawl.frontier.redis.namespace.Namespace`: the
connection, whose errors are one line naming the server, the keys, the script's
calls, the discovery numbers), and one object per role of the protocol, each given
the namespace and each a property of the store, for a consumer that needs one role:

* :attr:`RedisFrontier.queue` (:mod:`~focuscrawl.frontier.redis.queue`): add, pop,
  mark, requeue, states and counts;
* :attr:`RedisFrontier.columns` (:mod:`~focuscrawl.frontier.redis.columns`): scores,
  tiers and the extra columns, ``value`` and ``top``;
* :attr:`RedisFrontier.graph` (:mod:`~focuscrawl.frontier.redis.graph`): parents,
  children and the sibling raise;
* :attr:`RedisFrontier.journal` (:mod:`~focuscrawl.frontier.redis.journal`): meta,
  commit, close, drop.

A worker's store (:class:`focuscrawl.workers.frontier.WorkerFrontier`) is opened on
its own namespace, whose overrides of the plumbing reach every role.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from focuscrawl.frontier.base import FrontierStore, LinkGraph, RunJournal, UrlColumns, UrlQueue
from focuscrawl.frontier.redis.columns import RedisColumns
from focuscrawl.frontier.redis.graph import RedisLinkGraph
from focuscrawl.frontier.redis.journal import RedisJournal
from focuscrawl.frontier.redis.namespace import PARTITIONS, Namespace
from focuscrawl.frontier.redis.queue import RedisQueue
from focuscrawl.frontier.roles import RoleStore

__all__ = ["PARTITIONS", "RedisFrontier"]


class RedisFrontier(RoleStore):
    """The crawl DB in Redis under the key prefix ``prefix`` (one crawl's namespace).

    ``url``: ``redis://HOST:PORT/DB``; ``parents``: keep every parent edge (else the
    first parent only; a namespace created with edges keeps them). ``partitions``
    applies to a new namespace; an existing one keeps its own.

    Each method of the protocol is its role's own, handed on
    (:class:`~focuscrawl.frontier.roles.RoleStore`); a Redis error of any of them is one
    line naming the server (the connection's).
    """

    _queue: RedisQueue
    _columns: RedisColumns
    _graph: RedisLinkGraph
    _journal: RedisJournal

    def __init__(
        self,
        url: str,
        *,
        prefix: str,
        parents: bool = True,
        partitions: int = PARTITIONS,
    ) -> None:
        self._open(Namespace(url, prefix=prefix, parents=parents, partitions=partitions))

    def _open(self, core: Namespace) -> None:
        """The roles over the open namespace ``core``."""
        self.core = core
        self.url, self.prefix, self.partitions = core.url, core.prefix, core.partitions
        self._queue = RedisQueue(core)
        self._columns = RedisColumns(core)
        self._graph = RedisLinkGraph(core)
        self._journal = RedisJournal(core)

    # ------------------------------------------------------------ the roles
    @property
    def queue(self) -> UrlQueue:
        return self._queue

    @property
    def columns(self) -> UrlColumns:
        return self._columns

    @property
    def graph(self) -> LinkGraph:
        return self._graph

    @property
    def journal(self) -> RunJournal:
        return self._journal

    def drop(self) -> int:
        """:meth:`.RedisJournal.drop`."""
        return self._journal.drop()


if TYPE_CHECKING:  # mypy proves the protocol is implemented, role by role
    _STORE: type[FrontierStore] = RedisFrontier
    _QUEUE: type[UrlQueue] = RedisQueue
    _COLUMNS: type[UrlColumns] = RedisColumns
    _GRAPH: type[LinkGraph] = RedisLinkGraph
    _JOURNAL: type[RunJournal] = RedisJournal
