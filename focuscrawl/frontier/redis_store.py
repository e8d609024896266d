"""A :class:`~focuscrawl.frontier.base.FrontierStore` on Redis: the crawl DB shared
past one machine (issue 25, the store; the workers that share it come next).

Layout. The URLs are spread over ``partitions`` logical partitions by a hash of
their host (every URL of a host in one partition: one owner per host). Every key
of a partition carries the partition's hash tag, and every change is one Lua
script on one partition (:mod:`focuscrawl.frontier.redis_scripts`), so the store
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
(:mod:`focuscrawl.frontier.redis_heads`). The keys it knows are those its own
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
one core, the open namespace (:class:`~focuscrawl.frontier.redis_core.RedisCore`: the
connection, the partitions' keys, the script's calls, the discovery numbers), and one
object per role of the protocol, each given the core:

* the queue (:mod:`~focuscrawl.frontier.redis_queue`): add, pop, mark, requeue,
  states and counts;
* the columns (:mod:`~focuscrawl.frontier.redis_columns`): scores, tiers and the
  extra columns, ``value`` and ``top``;
* the link graph (:mod:`~focuscrawl.frontier.redis_graph`): parents, children and
  the sibling raise;
* the journal (:mod:`~focuscrawl.frontier.redis_journal`): meta, commit, close, drop.

The core is the frontier itself (a subclass), so that a
:class:`~focuscrawl.frontier.redis_worker.WorkerFrontier`'s overrides of the
plumbing reach every role; the Lua script is :mod:`~focuscrawl.frontier.redis_scripts`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

import redis

from focuscrawl.exceptions import FrontierError
from focuscrawl.frontier.redis_columns import RedisColumns
from focuscrawl.frontier.redis_core import PARTITIONS, RedisCore
from focuscrawl.frontier.redis_graph import RedisLinkGraph
from focuscrawl.frontier.redis_journal import RedisJournal
from focuscrawl.frontier.redis_queue import RedisQueue
from focuscrawl.frontier.redis_rows import SOCKET_TIMEOUT, partition_host
from focuscrawl.types import QueuedURL, URLState

__all__ = ["PARTITIONS", "RedisFrontier", "partition_host"]

_P = ParamSpec("_P")
_T = TypeVar("_T")


class RedisFrontier(RedisCore):
    """The crawl DB in Redis under the key prefix ``prefix`` (one crawl's namespace).

    ``url``: ``redis://HOST:PORT/DB``; ``parents``: keep every parent edge (else the
    first parent only; a namespace created with edges keeps them). ``partitions``
    applies to a new namespace; an existing one keeps its own. ``timeout``: the
    seconds a reply may take.

    Each method of the protocol is its role's own, bound here (a call goes straight
    to it): :class:`~.redis_queue.RedisQueue`, :class:`~.redis_columns.RedisColumns`,
    :class:`~.redis_graph.RedisLinkGraph`, :class:`~.redis_journal.RedisJournal`;
    but those a :class:`~focuscrawl.frontier.redis_worker.WorkerFrontier` overrides
    stay methods of the class (an attribute set here would hide the override), which
    hand the call on. A Redis error of any of them is one line naming the server.
    """

    def __init__(
        self,
        url: str,
        *,
        prefix: str,
        parents: bool = True,
        partitions: int = PARTITIONS,
        timeout: float = SOCKET_TIMEOUT,
    ) -> None:
        super().__init__(
            url, prefix=prefix, parents=parents, partitions=partitions, timeout=timeout
        )
        queue = self._url_queue = RedisQueue(self)
        self.add = self._guarded(queue.add)
        self.add_many = self._guarded(queue.add_many)
        self.mark = self._guarded(queue.mark)
        self.state = self._guarded(queue.state)
        self.known = self._guarded(queue.known)
        self.count = self._guarded(queue.count)
        self.host_count = self._guarded(queue.host_count)
        self.host_counts = self._guarded(queue.host_counts)
        self.iter_urls = self._guarded(queue.iter_urls)
        columns = self._url_columns = RedisColumns(self)
        self.update_scores = self._guarded(columns.update_scores)
        self.update_host = self._guarded(columns.update_host)
        self.set_tier = self._guarded(columns.set_tier)
        self.update_values = self._guarded(columns.update_values)
        self.ensure_columns = self._guarded(columns.ensure_columns)
        self.column_names = self._guarded(columns.column_names)
        self.combine_columns = self._guarded(columns.combine_columns)
        graph = RedisLinkGraph(self)
        self.parents = self._guarded(graph.parents)
        self.children = self._guarded(graph.children)
        self.children_counts = self._guarded(graph.children_counts)
        self.raise_children = self._guarded(graph.raise_children)
        journal = self._run_journal = RedisJournal(self)
        self.close = self._guarded(journal.close)
        self.drop = self._guarded(journal.drop)

    def _guarded(self, method: Callable[_P, _T]) -> Callable[_P, _T]:
        """``method`` with a Redis error (the server gone, out of memory...) turned into
        one line naming the server: the CLI prints it and exits, no traceback."""
        url = self.url

        @functools.wraps(method)
        def guarded(*args: _P.args, **kwargs: _P.kwargs) -> _T:
            try:
                return method(*args, **kwargs)
            except FrontierError:  # (the client's own line: redis_rows.Client)
                raise
            except redis.RedisError as exc:
                raise FrontierError(f"frontier {url}: {exc}") from exc

        return guarded

    # ------------------------------------------------------------ overridden by a worker
    def pop(
        self,
        n: int,
        *,
        exclude_hosts: Collection[str] = (),
        max_per_host: int = 0,
        max_layer: int | None = None,
    ) -> list[QueuedURL]:
        """:meth:`.RedisQueue.pop`."""
        return self._url_queue.pop(
            n, exclude_hosts=exclude_hosts, max_per_host=max_per_host, max_layer=max_layer
        )

    def requeue_in_flight(self) -> int:
        """:meth:`.RedisQueue.requeue_in_flight`."""
        return self._url_queue.requeue_in_flight()

    def get(self, url: str) -> QueuedURL | None:
        """:meth:`.RedisQueue.get`."""
        return self._url_queue.get(url)

    def value(self, url: str, column: str) -> float | None:
        """:meth:`.RedisColumns.value`."""
        return self._url_columns.value(url, column)

    def top(self, column: str, state: URLState = URLState.FETCHED) -> tuple[str, float] | None:
        """:meth:`.RedisColumns.top`."""
        return self._url_columns.top(column, state)

    def get_meta(self, key: str) -> str | None:
        """:meth:`.RedisJournal.get_meta`."""
        return self._run_journal.get_meta(key)

    def set_meta(self, key: str, value: str) -> None:
        """:meth:`.RedisJournal.set_meta`."""
        self._run_journal.set_meta(key, value)

    def commit(self) -> None:
        """:meth:`.RedisJournal.commit`."""
        self._run_journal.commit()


def _one_line(method: Callable[..., Any]) -> Callable[..., Any]:
    """The class's ``method`` with a Redis error turned into one line naming the server
    (as :meth:`RedisFrontier._guarded` for the roles' methods)."""

    @functools.wraps(method)
    def guarded(self: RedisFrontier, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except FrontierError:
            raise
        except redis.RedisError as exc:
            raise FrontierError(f"frontier {self.url}: {exc}") from exc

    return guarded


for _name in [n for n in vars(RedisFrontier) if not n.startswith("_")]:
    if callable(vars(RedisFrontier)[_name]):
        setattr(RedisFrontier, _name, _one_line(vars(RedisFrontier)[_name]))


if TYPE_CHECKING:  # mypy proves the protocol is implemented, role by role
    from focuscrawl.frontier.base import FrontierStore, LinkGraph, RunJournal, UrlColumns, UrlQueue

    _STORE: type[FrontierStore] = RedisFrontier
    _QUEUE: type[UrlQueue] = RedisQueue
    _COLUMNS: type[UrlColumns] = RedisColumns
    _GRAPH: type[LinkGraph] = RedisLinkGraph
    _JOURNAL: type[RunJournal] = RedisJournal
