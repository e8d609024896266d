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
"""

from __future__ import annotations

import functools
import time
import zlib
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import redis

from focuscrawl.exceptions import FrontierError
from focuscrawl.frontier.base import FrontierStore, no_edges_error
from focuscrawl.frontier.redis_heads import QueueHeads
from focuscrawl.frontier.redis_rows import (
    Row,
    checked_url,
    connect,
    float_arg,
    partition_host,
    queued,
    row_of,
    server_url,
    text,
)
from focuscrawl.frontier.redis_scripts import FRONTIER_LUA
from focuscrawl.frontier.rules import (
    INT64,
    SCORE,
    aggregated,
    checked_column,
    checked_int,
    checked_score,
    host_of,
)
from focuscrawl.types import Merge, QueuedURL, URLState
from focuscrawl.urls import host_of as url_host

__all__ = ["PARTITIONS", "RedisFrontier", "partition_host"]

PARTITIONS = 1024  # logical partitions: a few per worker and core, leased whole (next)
COUNTS_EVERY = 1.0  # seconds between two reads of every partition's counts (count())
SEQ_BLOCK = 1 << 16  # discovery numbers taken from the shared counter at once


class RedisFrontier:
    """The crawl DB in Redis under the key prefix ``prefix`` (one crawl's namespace).

    ``url``: ``redis://HOST:PORT/DB``; ``parents``: keep every parent edge (else the
    first parent only; a namespace created with edges keeps them). ``partitions``
    applies to a new namespace; an existing one keeps its own.
    """

    def __init__(
        self,
        url: str,
        *,
        prefix: str,
        parents: bool = True,
        partitions: int = PARTITIONS,
    ) -> None:
        try:
            self._db = connect(url)
            conf = self._db.hgetall(f"{prefix}:{{{prefix}:m}}:conf")
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
            partitions = server_url(url)[1] or partitions  # ?partitions=N in the URL
            self.partitions = checked_int("partitions", partitions, (1, 1 << 20))
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

    # ------------------------------------------------------------------ writes
    def add(
        self,
        url: str,
        score: float,
        *,
        depth: int,
        parent: str | None,
        host: str,
        merge: Merge = Merge.MAX,
        layer: int = 0,
        count: int = 1,
        tier: int = 0,
    ) -> bool:
        """Add a URL or merge ``(tier, score)`` into it (any state); record the parent edge."""
        return (
            self.add_many(
                [(url, score, depth, parent, host, count, tier)], merge=merge, layer=layer
            )
            == 1
        )

    def add_many(
        self,
        items: Iterable[tuple[str, float, int, str | None, str, int, int]],
        *,
        merge: Merge = Merge.MAX,
        layer: int = 0,
    ) -> int:
        """:meth:`add` over ``(url, score, depth, parent, host, count, tier)`` items, one
        script per partition touched; returns the number of new URLs."""
        checked = []
        layer = checked_int("layer", layer)
        for url, score, depth, parent, host, count, tier in items:
            score = checked_score(url, score)
            tier = checked_int(f"tier of {url!r}", tier)
            count = checked_int(f"link count of {url!r}", count, INT64)
            checked_url(url)
            if parent == url:
                parent = None
            if parent is not None:
                checked_url(parent)
            if self._part_host(host) != self._part(url):  # a host's URLs share one partition
                raise FrontierError(f"host {host!r} is not the host of {url!r}")
            checked.append((url, score, int(depth), parent, host, count, tier))
        if not checked:
            return 0
        if layer not in self._layers:
            self._db.sadd(self._layers_key, layer)
            self._layers.add(layer)
        base = self._seqs(2 * len(checked))
        groups: dict[int, list[Any]] = {}
        edges = self._keep_edges
        touched: set[str] = set()  # without edges a parent is touched once a batch
        for i, (url, score, depth, parent, host, count, tier) in enumerate(checked):
            if parent is not None and (edges or parent not in touched):
                touched.add(parent)  # the referrer first: it is known before its link
                groups.setdefault(self._part(parent), []).extend(
                    (
                        "t",
                        parent,
                        0,
                        0,
                        depth,
                        layer,
                        self._discovery(base + 2 * i + 1, parent),
                        host_of(parent),
                        url,
                        count,
                    )
                )
            groups.setdefault(self._part(url), []).extend(
                (
                    "a",
                    url,
                    float_arg(score),
                    tier,
                    depth,
                    layer,
                    self._discovery(base + 2 * i + 2, url),
                    host,
                    parent or "",
                    0,
                )
            )
        head = (merge.value, int(edges))
        results = self._calls([(p, (b"add", *head, *args)) for p, args in groups.items()])
        return sum(int(r) for r in results)

    def update_scores(self, updates: Iterable[tuple[str, float]], merge: Merge) -> int:
        """Merge scores into known URLs of any state; unknown URLs are ignored."""
        return self.update_values(SCORE, updates, merge)

    def update_values(self, column: str, updates: Iterable[tuple[str, float]], merge: Merge) -> int:
        """Merge values of ``column`` into known URLs (repeats combined first, as the reference)."""
        column = self._column(column)
        groups: dict[int, list[Any]] = {}
        for url, value in aggregated(updates, merge).items():
            groups.setdefault(self._part(url), []).extend((url, float_arg(value)))
        if not groups:
            return 0
        calls = [(p, ("values", column, merge.value, *args)) for p, args in groups.items()]
        return sum(int(r) for r in self._calls(calls))

    def ensure_columns(self, names: Iterable[str]) -> None:
        """Create the extra columns ``names`` (``"score"`` always exists)."""
        new = {checked_column(n) for n in names if n != SCORE} - self._columns
        if new:
            self._db.sadd(self._cols_key, *sorted(new))
            self._columns |= new

    def combine_columns(
        self, dst: str, terms: Iterable[tuple[str, float]] = (), *, add: bool = True
    ) -> None:
        """For every known URL: ``dst = (dst if add else 0) + Σ factor · src`` (one scan per partition)."""
        dst = self._column(dst)
        flat: list[Any] = []
        for src, factor in terms:
            flat += [self._column(src), float_arg(checked_score(src, factor))]
        self._calls([(p, ("combine", dst, int(add), *flat)) for p in range(self.partitions)])

    def update_host(
        self,
        host: str,
        score: float,
        merge: Merge,
        *,
        states: Collection[URLState] = (URLState.QUEUED,),
    ) -> int:
        """Merge ``score`` into every URL of ``host`` in ``states`` (a scan of its partition)."""
        value = checked_score(host, score)
        wanted = sorted({int(URLState(s)) for s in states})
        args = ("host", host, float_arg(value), merge.value, *wanted)
        return int(self._call(self._part_host(host), *args))

    def set_tier(self, updates: Iterable[tuple[str, int]]) -> int:
        """Set the tiers of known URLs (the last of repeats wins); returns how many known URLs."""
        tiers = {url: checked_int(f"tier of {url!r}", tier) for url, tier in updates}
        groups: dict[int, list[Any]] = {}
        for url, tier in tiers.items():
            groups.setdefault(self._part(url), []).extend((url, tier))
        if not groups:
            return 0
        return sum(int(r) for r in self._calls([(p, ("tier", *a)) for p, a in groups.items()]))

    def raise_children(self, parent: str, score: float, *, exclude: str | None = None) -> int:
        """Raise queued children of ``parent`` below ``score`` to ``score``."""
        score = checked_score(parent, score)
        self._edges_kept()
        groups: dict[int, list[str]] = {}
        for child in self._db.hkeys(self._key(self._part(parent)) + "ch:" + parent):
            url = text(child)
            groups.setdefault(self._part(url), []).append(url)
        if not groups:
            return 0
        calls = [
            (p, ("raise", float_arg(score), exclude or "", *urls)) for p, urls in groups.items()
        ]
        return sum(int(r) for r in self._calls(calls))

    def mark(self, url: str, state: URLState, *, score: float | None = None) -> None:
        """Set the state of a URL (and its score, if given)."""
        state = URLState(state)
        value = "" if score is None else float_arg(checked_score(url, score))
        if int(self._call(self._part(url), "mark", url, int(state), value)) < 0:
            raise FrontierError(f"cannot mark unknown URL {url!r}")

    def requeue_in_flight(self) -> int:
        """Every IN_FLIGHT URL back to QUEUED (each partition's in-flight set)."""
        return sum(int(r) for r in self._calls([(p, ("requeue",)) for p in range(self.partitions)]))

    # ------------------------------------------------------------------ pop
    def pop(
        self,
        n: int,
        *,
        exclude_hosts: Collection[str] = (),
        max_per_host: int = 0,
        max_layer: int | None = None,
    ) -> list[QueuedURL]:
        """The reference's greedy pop, merged across the partitions' queues
        (:mod:`focuscrawl.frontier.redis_heads`)."""
        if n <= 0:
            return []
        excluded: dict[int, list[str]] = {}  # each partition is told of its own hosts
        for host in sorted(set(exclude_hosts)):
            excluded.setdefault(self._part_host(host), []).append(host)
        return self._heads.pop(n, excluded, max_per_host, max_layer, self._calls)

    # ------------------------------------------------------------------ reads
    def get(self, url: str) -> QueuedURL | None:
        row = self._row(url)
        return None if row is None else queued(url, row)

    def state(self, url: str) -> URLState | None:
        row = self._row(url)
        return None if row is None else URLState(row[0])

    def value(self, url: str, column: str) -> float | None:
        """``column`` of ``url``: None if the URL is unknown, 0.0 if never set."""
        column = self._column(column)
        key = self._key(self._part(url))
        pipe = self._db.pipeline(transaction=False)
        pipe.hget(key + "u", url)
        pipe.hget(key + "c:" + column, url)
        raw, value = pipe.execute()
        if raw is None:
            return None
        if column == SCORE:
            return row_of(raw)[2]
        return 0.0 if value is None else float(value)

    def column_names(self) -> list[str]:
        self._columns = {text(c) for c in self._db.smembers(self._cols_key)}
        return sorted(self._columns)

    def top(self, column: str, state: URLState = URLState.FETCHED) -> tuple[str, float] | None:
        """The URL in ``state`` with the highest ``column``; ties: discovery order.

        The score of FETCHED URLs (OTIE's re-crawl) is indexed: each partition's best,
        one pipelined read; anything else is a scan of every partition."""
        column = self._column(column)
        if column == SCORE and state == URLState.FETCHED:
            pipe = self._db.pipeline(transaction=False)
            for p in range(self.partitions):
                pipe.zrange(self._key(p) + "fs", 0, 0)
            firsts = [bytes(m[0]) for m in pipe.execute() if m]
            if not firsts:
                return None
            url = text(min(firsts)[20:])
            row = self._row(url)
            return None if row is None else (url, row[2])
        calls = [(p, ("top", column, int(URLState(state)))) for p in range(self.partitions)]
        best: tuple[float, int, str] | None = None
        for result in self._calls(calls):
            if not result:
                continue
            url, value, seq = text(result[0]), float(result[1]), int(result[2])
            if best is None or value > best[0] or (value == best[0] and seq < best[1]):
                best = (value, seq, url)
        return None if best is None else (best[2], best[0])

    def parents(self, url: str) -> list[str]:
        """First parent first, then the others in discovery order."""
        self._edges_kept()
        row = self._row(url)
        if row is None or not row[7]:
            return []
        first = row[7]
        others = [text(p) for p in self._db.smembers(self._key(self._part(url)) + "par:" + url)]
        rows = self._rows(o for o in others if o != first)
        return [first, *sorted(rows, key=lambda p: rows[p][5])]

    def children(self, parent: str) -> list[str]:
        """Children in discovery order."""
        return [child for child, _ in self.children_counts(parent)]

    def children_counts(self, parent: str) -> list[tuple[str, int]]:
        """Children with t(parent, child), in discovery order."""
        self._edges_kept()
        raw = self._db.hgetall(self._key(self._part(parent)) + "ch:" + parent)
        counts = {text(c): int(k) for c, k in raw.items()}
        rows = self._rows(counts)
        return [(c, counts[c]) for c in sorted(counts, key=lambda c: rows[c][5])]

    def count(self, state: URLState | None = None) -> int:
        """The partitions' counts, read again at most every COUNTS_EVERY seconds (a
        pipeline over every partition), plus this client's own changes since: exact
        for one writer; with several, the others' changes of the last interval missing
        (OPIC's virtual page reads count() for every page)."""
        now = time.monotonic()
        if now - self._counted_at >= COUNTS_EVERY:
            pipe = self._db.pipeline(transaction=False)
            for p in range(self.partitions):
                pipe.hgetall(self._key(p) + "n")
            totals: dict[int, int] = {}
            for counts in pipe.execute():
                for k, v in counts.items():
                    totals[int(k)] = totals.get(int(k), 0) + int(v)
            self._counts, self._local, self._counted_at = totals, {}, now
        if state is None:
            return sum(self._counts.values()) + sum(self._local.values())
        state = URLState(state)
        return self._counts.get(state, 0) + self._local.get(state, 0)

    def known(self, urls: Sequence[str]) -> dict[str, URLState]:
        """The states of the known URLs of ``urls``: one pipelined read."""
        rows = self._rows(urls)
        return {url: URLState(row[0]) for url, row in rows.items()}

    def host_counts(self, hosts: Sequence[str]) -> dict[str, int]:
        """URLs of each host, all states: one pipelined read."""
        hosts = list(dict.fromkeys(hosts))
        pipe = self._db.pipeline(transaction=False)
        for host in hosts:
            pipe.hvals(self._key(self._part_host(host)) + "hc:" + host)
        return {h: sum(int(v) for v in vals) for h, vals in zip(hosts, pipe.execute(), strict=True)}

    def host_count(self, host: str, states: Collection[URLState] = ()) -> int:
        counts = self._db.hgetall(self._key(self._part_host(host)) + "hc:" + host)
        wanted = {int(URLState(s)) for s in states}
        return sum(int(v) for k, v in counts.items() if not wanted or int(k) in wanted)

    def iter_urls(self, state: URLState | None = None) -> Iterator[QueuedURL]:
        """Every URL (in ``state``) in discovery order: a scan of every partition."""
        return iter(self._all_rows(state))

    def _all_rows(self, state: URLState | None) -> list[QueuedURL]:
        rows: list[QueuedURL] = []
        for p in range(self.partitions):
            for url, raw in self._db.hscan_iter(self._key(p) + "u", count=1000):
                row = row_of(raw)
                if state is None or row[0] == state:
                    rows.append(queued(text(url), row))
        rows.sort(key=lambda q: q.seq)
        return rows

    # ------------------------------------------------------------------ run state
    def get_meta(self, key: str) -> str | None:
        raw = self._db.hget(self._meta, key)
        return None if raw is None else text(raw)

    def set_meta(self, key: str, value: str) -> None:
        self._db.hset(self._meta, key, value)

    def commit(self) -> None:
        """Nothing to do: every call's scripts are applied when it returns (see the module)."""

    def close(self) -> None:
        self._db.close()

    def drop(self) -> int:
        """Delete the whole namespace (every key under the prefix); returns how many keys."""
        removed = 0
        for key in self._db.scan_iter(match=f"{self.prefix}:*", count=1000):
            removed += int(self._db.delete(key))
        self._heads = QueueHeads({})
        return removed


def _one_line(method: Callable[..., Any]) -> Callable[..., Any]:
    """``method`` with a Redis error (the server gone, out of memory...) turned into
    one line naming the server: the CLI prints it and exits, no traceback."""

    @functools.wraps(method)
    def guarded(self: RedisFrontier, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except redis.RedisError as exc:
            raise FrontierError(f"frontier {self.url}: {exc}") from exc

    return guarded


for _name in [n for n in vars(RedisFrontier) if not n.startswith("_")]:
    if callable(vars(RedisFrontier)[_name]):
        setattr(RedisFrontier, _name, _one_line(vars(RedisFrontier)[_name]))


if TYPE_CHECKING:  # mypy proves the protocol is implemented
    _STORE: type[FrontierStore] = RedisFrontier
