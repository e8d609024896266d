"""The embedded crawl DB: a :class:`~focuscrawl.frontier.base.FrontierStore` in SQLite.

Layout: see :mod:`focuscrawl.frontier.sqlite_schema`. What every score update
touches (the ``urls`` table keyed by URL fingerprint, and its per-host queue
index) is kept narrow, ~60 B per URL, so that it fits in the page cache; the page
cache is sized from the number of URLs (``cache_mb=None``) at ~110 B per URL,
which bounds the resident memory. URL text, depth and parents live in cold tables
read only for the URLs handed out or looked at one by one. Nothing per URL is kept
in Python memory.

``pop`` walks hosts in the order of their best queued URL (``hosts.best``,
``best_seq``, indexed) and stops as soon as no remaining host can beat the n-th URL
taken; excluded or capped hosts cost one step each, however many URLs they hold.
``hosts.best`` is kept up to date cheaply: a score that went up (``MAX``, ``ADD`` of
a non-negative amount, a new URL) can only raise its host's best, which is one
conditional write per host; any other change notes the host (in a Python set, at
most one entry per host) for a recomputation before the next ``pop``/``commit``.

Writes form one transaction until :meth:`SqliteFrontier.commit`; a crash (or
:meth:`SqliteFrontier.close` without commit) loses exactly the uncommitted work.
The semantics are those of :mod:`focuscrawl.frontier.memory` (read it first); the
one difference: duplicates inside one ``add_many`` batch are combined before they
reach the DB, so ``Merge.ADD`` sums may round differently from one-by-one adds.
"""

from __future__ import annotations

import heapq
import sqlite3
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from focuscrawl.exceptions import FrontierError
from focuscrawl.frontier.base import FrontierStore
from focuscrawl.frontier.rules import (
    INT32,
    INT64,
    checked_int,
    checked_score,
    host_of,
    merged_pair,
)
from focuscrawl.frontier.sqlite_columns import Key, Pair, SqliteColumns
from focuscrawl.frontier.sqlite_schema import (
    HOST_QUEUE,
    HOST_TOP_TIER,
    INSERT_COLD,
    INSERT_HOT,
    MATCH,
    PROBE,
    RESOLVE,
    TEXT_OF,
    edges_mode,
    open_crawl_db,
    url_key,
)
from focuscrawl.types import Merge, QueuedURL, URLState

_NO_LAYER_LIMIT = 2**62
_HOST_CACHE_MAX = 100_000  # host -> id entries kept in Python; per host, never per URL
_CACHE_BYTES_PER_URL = 110  # hot table + queue index, pages ~70 % full (measured ~85 B)
_CACHE_MIN_KIB = 16 * 1024


class SqliteFrontier(SqliteColumns):
    """Crawl DB in one SQLite file (WAL journal, ``synchronous=NORMAL``).

    ``cache_mb`` bounds SQLite's page cache, and with it the resident memory; by
    default (None) it follows the number of URLs (~110 B each, at least 16 MiB),
    enough to keep every page a score update touches in memory. ``parents``: the
    caller reads parent edges; as in :class:`~focuscrawl.frontier.indexed.IndexedFrontier`,
    a new DB keeps them only then (meta ``_parents``; a DB of an earlier version,
    without it, keeps them). Semantics: see :mod:`focuscrawl.frontier.memory`.
    """

    def __init__(
        self, path: Path | str, *, cache_mb: int | None = None, parents: bool = True
    ) -> None:
        self.path = Path(path)
        self._cache_mb = cache_mb
        self._cache_kib = 0
        self._host_ids: dict[str, int] = {}
        self._dirty: set[int] = set()  # hosts whose best must be recomputed
        self._conn = open_crawl_db(self.path)
        try:
            # a DB made before the setting (no meta row, some URLs) kept its edges
            made = self._conn.execute("SELECT 1 FROM urls LIMIT 1").fetchone() is not None
            self._keep_edges = edges_mode(self._conn, self.path, parents, old=made)
            self._size_cache()
        except sqlite3.Error as exc:
            self._conn.close()
            raise FrontierError(f"unusable crawl DB {self.path}: {exc}") from exc
        except FrontierError:
            self._conn.close()
            raise

    # -- helpers --------------------------------------------------------------------

    def _size_cache(self) -> None:
        """Page cache for the hot pages of every known URL (or ``cache_mb``)."""
        if self._cache_mb is not None:
            kib = max(int(self._cache_mb), 1) * 1024
        else:
            kib = max(_CACHE_MIN_KIB, self.count() * _CACHE_BYTES_PER_URL // 1024)
        if kib != self._cache_kib:
            self._conn.execute(f"PRAGMA cache_size=-{kib}")
            self._cache_kib = kib

    def _host_id_map(self, hosts: Iterable[str]) -> dict[str, int]:
        """Ids of ``hosts``, creating the missing ones (inside the transaction)."""
        cache = self._host_ids
        wanted = set(hosts)
        if len(cache) + len(wanted) > _HOST_CACHE_MAX:
            cache.clear()
        missing = wanted - cache.keys()
        if missing:
            self._conn.executemany(
                "INSERT OR IGNORE INTO hosts(host) VALUES (?)", ((h,) for h in missing)
            )
            for host in missing:
                row = self._conn.execute("SELECT id FROM hosts WHERE host = ?", (host,)).fetchone()
                cache[host] = int(row[0])
        return cache

    # -- writes ---------------------------------------------------------------------

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
        """Add a URL, or merge ``(tier, score)`` into it (any state); record the parent edge.

        Returns True if the URL was new.
        """
        item = (url, score, depth, parent, host, count, tier)
        return self.add_many([item], merge=merge, layer=layer) == 1

    def add_many(
        self,
        items: Iterable[tuple[str, float, int, str | None, str, int, int]],
        *,
        merge: Merge = Merge.MAX,
        layer: int = 0,
    ) -> int:
        """Batch :meth:`add` of ``(url, score, depth, parent, host, count, tier)``.

        Equivalent to adding the items one by one, in order (an unknown parent
        becomes a DROPPED URL just before the item that names it), except that
        repeated URLs are combined first. Returns how many URLs were new.
        """
        checked_int("layer", layer)
        batch: dict[str, tuple[int, float]] = {}  # url -> merged (tier, score) of the batch
        named_parents: set[str] = set()
        inserts: list[tuple[str, str, int, URLState]] = []
        edges: list[tuple[str, str, int]] = []
        for url, score, depth, parent, host, count, tier in items:
            value = checked_score(url, score)
            if not INT32[0] <= tier <= INT32[1]:
                checked_int(f"tier of {url!r}", tier)
            if parent == url:
                parent = None
            if parent is not None:
                if parent not in batch and parent not in named_parents:  # else known by now
                    named_parents.add(parent)
                    inserts.append((parent, host_of(parent), max(depth - 1, 0), URLState.DROPPED))
                if not INT64[0] <= count <= INT64[1]:
                    checked_int(f"link count of {url!r}", count, INT64)
                edges.append((url, parent, int(count)))
            old = batch.get(url)
            if old is None:
                batch[url] = (int(tier), value)
                inserts.append((url, host, depth, URLState.QUEUED))
            else:
                batch[url] = merged_pair(*old, int(tier), value, merge)
        if not batch:
            return 0
        keys = {row[0]: url_key(row[0]) for row in inserts}
        self._begin()
        # merge into URLs known before this batch (the new ones do not exist yet)
        pairs: dict[str, Pair] = dict(batch.items())
        self._merge_batch(pairs, keys, merge)
        self._fill_batch((*key, None) for key in keys.values())
        seqs: dict[Key, int] = {(row[0], row[1]): row[6] for row in self._conn.execute(RESOLVE)}
        host_ids = self._host_id_map({row[1] for row in inserts})
        last = self._conn.execute("SELECT max(seq) FROM url_text").fetchone()[0] or 0
        hot: list[tuple[int, int, int, int, int, float, int, int]] = []
        cold: list[tuple[int, int, int, str, int]] = []
        raised: dict[int, tuple[int, float, int]] = {}
        for url, host, depth, state in inserts:
            key = keys[url]
            if key in seqs:
                continue
            last += 1
            seqs[key] = last
            host_id = host_ids[host]
            pair = batch.get(url, (0, 0.0))  # each URL goes in with the batch's combined key
            if state is URLState.QUEUED:
                best = (*pair, -last)
                if host_id not in raised or best > raised[host_id]:
                    raised[host_id] = best
            elif url in batch:  # a parent added later in the batch: merged into (0, 0.0)
                pair = merged_pair(0, 0.0, *pair, merge)
            else:
                pair = (0, 0.0)
            hot.append((*key, last, host_id, int(state), pair[1], layer, pair[0]))
            cold.append((*key, last, url, depth))
        if self._conn.executemany(INSERT_HOT, hot).rowcount != len(hot):
            raise FrontierError(f"no free slot among {PROBE} for a URL fingerprint in {self.path}")
        self._conn.executemany(INSERT_COLD, cold)
        self._raise_hosts(raised)
        if edges and self._keep_edges:
            self._conn.executemany(
                "INSERT INTO parents VALUES (?, ?, ?)"
                " ON CONFLICT(parent_seq, child_seq) DO UPDATE SET count = excluded.count",
                ((seqs[keys[p]], seqs[keys[c]], n) for c, p, n in edges),
            )
        elif edges:  # the first parent only (what the trigger on parents does)
            self._conn.executemany(
                "UPDATE url_text SET parent_seq = ? WHERE seq = ? AND parent_seq IS NULL",
                ((seqs[keys[p]], seqs[keys[c]]) for c, p, _ in edges),
            )
        return sum(1 for row in hot if row[4] == URLState.QUEUED)

    def raise_children(self, parent: str, score: float, *, exclude: str | None = None) -> int:
        """Raise every QUEUED child of ``parent`` to at least ``score`` (P3 sibling update).

        ``exclude`` (the page that triggered the update) is left alone. Returns how
        many scores went up.
        """
        value = checked_score(parent, score)
        self._edges_kept()
        parent_seq = self._seq_of(parent)
        if parent_seq is None:
            return 0
        excluded = None if exclude is None else self._seq_of(exclude)
        self._begin()
        rows = self._conn.execute(
            "UPDATE urls SET score = ?1 WHERE state = 0 AND score < ?1 AND h IN ("
            " SELECT t.h FROM parents AS x JOIN url_text AS t ON t.seq = x.child_seq"
            " WHERE x.parent_seq = ?3 AND x.child_seq IS NOT ?2) RETURNING host_id",
            (value, excluded, parent_seq),
        ).fetchall()
        self._dirty.update(r[0] for r in rows)
        return len(rows)

    def _top_tier(self, layer_limit: int | None) -> int | None:
        """The highest tier of the QUEUED URLs (of layers ``<= layer_limit``), None if none.

        Without a layer limit it is the best host's tier; with one, hosts are
        walked in tier order until none can hold a higher eligible tier.
        """
        hosts = self._conn.execute(
            "SELECT id, best_tier FROM hosts INDEXED BY hosts_best"
            " WHERE best IS NOT NULL ORDER BY best_tier DESC, best DESC, best_seq"
        )
        found: int | None = None
        try:
            for host_id, best_tier in hosts:
                if layer_limit is None:
                    return int(best_tier)
                if found is not None and best_tier <= found:
                    break
                row = self._conn.execute(HOST_TOP_TIER, (host_id, layer_limit)).fetchone()
                if row is not None:
                    found = int(row[0]) if found is None else max(found, int(row[0]))
        finally:
            hosts.close()
        return found

    def pop(
        self,
        n: int,
        *,
        exclude_hosts: Collection[str] = (),
        max_per_host: int = 0,
        max_layer: int | None = None,
    ) -> list[QueuedURL]:
        """Take up to ``n`` best queued URLs of the top tier (score desc, then discovery
        order) -> IN_FLIGHT.

        Hosts in ``exclude_hosts`` are skipped, at most ``max_per_host`` URLs of one
        host are taken (0 = no limit) and, if ``max_layer`` is given, only URLs of
        layers ``<= max_layer`` (Nutch-style generate for layered crawls, P0). Only
        URLs of the highest tier among the queued ones (of those layers) are taken.
        """
        if n <= 0:
            return []
        self._begin()
        self._refresh_hosts()
        top = self._top_tier(max_layer)
        if top is None:
            return []
        excluded = set(exclude_hosts)
        per_host = max_per_host if max_per_host > 0 else n
        layer_limit = _NO_LAYER_LIMIT if max_layer is None else max_layer
        # min-heap of the n best so far; key (score, -seq): the worst kept is on top
        heap: list[tuple[float, int, str, int, int, int]] = []
        hosts = self._conn.execute(
            "SELECT id, host, best_tier, best, best_seq FROM hosts INDEXED BY hosts_best"
            " WHERE best IS NOT NULL ORDER BY best_tier DESC, best DESC, best_seq"
        )
        try:
            for host_id, host, best_tier, best, best_seq in hosts:
                if best_tier < top:
                    break  # tiers are strict: nothing below the top tier
                if host in excluded:
                    continue
                if best_tier == top and len(heap) >= n and (best, -best_seq) < heap[0][:2]:
                    break  # no URL of this or any later host beats the n-th taken
                for score, seq, h, layer in self._conn.execute(
                    HOST_QUEUE, (host_id, layer_limit, per_host, top)
                ):
                    key = (float(score), -int(seq), host, host_id, h, layer)
                    if len(heap) < n:
                        heapq.heappush(heap, key)
                    elif key[:2] > heap[0][:2]:
                        heapq.heapreplace(heap, key)
                    else:
                        break
        finally:
            hosts.close()
        taken = sorted(heap, key=lambda k: k[:2], reverse=True)
        self._conn.executemany("UPDATE urls SET state = 1 WHERE h = ?", ((k[4],) for k in taken))
        self._dirty.update(k[3] for k in taken)
        result = []
        for score, neg_seq, host, _, _, layer in taken:
            url, depth, parent = self._conn.execute(TEXT_OF, (-neg_seq,)).fetchone()
            result.append(QueuedURL(url, score, depth, host, parent, layer, -neg_seq, top))
        return result

    def mark(self, url: str, state: URLState, *, score: float | None = None) -> None:
        """Set the state of a URL (and its score, if given).

        ``mark(url, QUEUED)`` re-queues a fetched URL (re-crawl). Raises
        :class:`~focuscrawl.exceptions.FrontierError` for an unknown URL.
        """
        value = None if score is None else checked_score(url, score)
        self._begin()
        row = self._conn.execute(
            f"UPDATE urls SET state = ?3, score = coalesce(?4, score) WHERE {MATCH}"
            " RETURNING host_id",
            (*url_key(url), int(URLState(state)), value),
        ).fetchone()
        if row is None:
            raise FrontierError(f"cannot mark unknown URL {url!r}")
        self._dirty.add(row[0])

    def requeue_in_flight(self) -> int:
        """After a crash: put every IN_FLIGHT URL back to QUEUED. Returns how many."""
        if self.count(URLState.IN_FLIGHT) == 0:
            return 0
        self._begin()
        rows = self._conn.execute("UPDATE urls SET state = 0 WHERE state = 1 RETURNING host_id")
        hosts = [r[0] for r in rows]
        self._dirty.update(hosts)
        return len(hosts)

    def set_meta(self, key: str, value: str) -> None:
        self._begin()
        self._conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    # -- lifetime -------------------------------------------------------------------

    def commit(self) -> None:
        """Make every write so far durable (together, or not at all after a crash)."""
        if self._conn.in_transaction:
            self._refresh_hosts()
            self._conn.execute("COMMIT")
        self._size_cache()

    def close(self) -> None:
        """Close the DB. Uncommitted writes are discarded, as a crash would: commit first."""
        if self._conn.in_transaction:
            self._conn.execute("ROLLBACK")
        self._dirty.clear()
        self._conn.close()


if TYPE_CHECKING:  # mypy proves the protocol is implemented
    _STORE: type[FrontierStore] = SqliteFrontier
