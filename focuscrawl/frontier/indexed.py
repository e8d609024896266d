"""The default crawl DB: hot columns in numpy arrays, everything durable in SQLite.

A :class:`~focuscrawl.frontier.base.FrontierStore` built for score updates: per
URL, score, tier, state, host, layer and fingerprint live in numpy arrays indexed by
a dense row number (:mod:`~focuscrawl.frontier.indexed_table`: 37 B per URL, 8 B
per extra float column, <= 8 B of hash index), so a batch of score updates is a few
vectorised operations (:mod:`~focuscrawl.frontier.indexed_columns`); the
best queued URLs are kept in a buffer (:mod:`~focuscrawl.frontier.indexed_queue`)
so a pop sorts thousands of rows, not millions. SQLite holds the cold data (URL
text, depth, parents, hosts, meta: written at add time inside the open
transaction) and, at :meth:`IndexedFrontier.commit`, the changed rows of the hot
columns as one journal BLOB (:mod:`~focuscrawl.frontier.indexed_disk`). Opening
the DB loads the arrays from the snapshot and replays the journal.

Measured at a million queued URLs (``benchmarks/bench_frontier.py``): ~170-190k
score updates + pops per CPU-second with a commit every 1,050, 67 B per URL of
resident memory growth (the whole process: ~129 B per URL), 0.5 s to open.

Writes form one transaction until :meth:`IndexedFrontier.commit`; a crash (or
:meth:`IndexedFrontier.close` without commit) loses exactly the uncommitted work.
The semantics are those of :mod:`focuscrawl.frontier.memory` (read it first), with
the same one difference as the SQLite store: duplicates inside one ``add_many``
batch are combined before they are merged, so ``Merge.ADD`` sums may round
differently from one-by-one adds.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from focuscrawl.exceptions import FrontierError
from focuscrawl.frontier.base import FrontierStore
from focuscrawl.frontier.indexed_columns import IndexedColumns
from focuscrawl.frontier.indexed_disk import compact, load_table, write_commit
from focuscrawl.frontier.indexed_queue import BestQueue
from focuscrawl.frontier.indexed_schema import (
    TEXT_MANY,
    checked_text,
    fingerprints,
    open_indexed_db,
)
from focuscrawl.frontier.indexed_table import CHUNK_ROWS, Rows
from focuscrawl.frontier.rules import (
    INT32,
    INT64,
    checked_int,
    checked_score,
    host_of,
    merged_pair,
)
from focuscrawl.types import Merge, QueuedURL, URLState

_COMPACT_MIN = 1 << 20  # journal rows below which a compaction is not worth its writes
_IN_FLIGHT, _QUEUED = int(URLState.IN_FLIGHT), int(URLState.QUEUED)


class IndexedFrontier(IndexedColumns):
    """Crawl DB in one SQLite file with its hot columns in memory (~49 B per URL).

    ``buffer_size`` is the number of best queued URLs kept sorted for ``pop``;
    the journal is folded into the snapshot once it holds more than
    ``compact_rows`` rows (default: twice the URLs, at least 2**20). Semantics: see
    :mod:`focuscrawl.frontier.memory`.
    """

    def __init__(
        self, path: Path | str, *, buffer_size: int = 4096, compact_rows: int | None = None
    ) -> None:
        self.path = Path(path)
        self._compact_rows = compact_rows
        self._conn = open_indexed_db(self.path)
        try:
            self._table, self._journal_rows = load_table(self._conn)
            hosts = self._conn.execute("SELECT id, host FROM hosts ORDER BY id").fetchall()
            self._host_names = [str(host) for _, host in hosts]
            # host ids are dense (given as 0, 1, 2 ... in one transaction with their URLs)
            used = self._table.column("host")
            if [i for i, _ in hosts] != list(range(len(hosts))) or (
                used.size and int(used.max()) >= len(hosts)
            ):
                raise FrontierError(f"crawl DB {self.path} has damaged host ids")
        except (sqlite3.Error, ValueError) as exc:
            self._conn.close()
            raise FrontierError(f"unusable crawl DB {self.path}: {exc}") from exc
        except FrontierError:
            self._conn.close()
            raise
        self._host_ids = {host: i for i, host in enumerate(self._host_names)}
        self._counts = np.zeros((max(len(self._host_names), 64), 5), np.int64)
        table = self._table
        for lo in range(0, table.n, CHUNK_ROWS):
            hi = min(lo + CHUNK_ROWS, table.n)
            np.add.at(self._counts, (table.host[lo:hi], table.state[lo:hi]), 1)
        self._committed = table.n  # rows up to here are on disk
        self._changed: list[Rows] = []  # rows whose state, score or tier changed since the commit
        self._changed_one: list[int] = []
        self._extra_changed: dict[str, list[Rows]] = {}
        self._queue = BestQueue(table, buffer_size)

    # -- helpers --------------------------------------------------------------------

    def _host_id(self, host: str) -> int:
        """Id of ``host``, created (inside the transaction) if new."""
        known = self._host_ids.get(host)
        if known is not None:
            return known
        new = len(self._host_names)
        self._conn.execute("INSERT INTO hosts VALUES (?, ?)", (new, host))
        self._host_names.append(host)
        self._host_ids[host] = new
        if new >= len(self._counts):
            grown = np.zeros((max(2 * len(self._counts), 64), 5), np.int64)
            grown[: len(self._counts)] = self._counts
            self._counts = grown
        return new

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
        """Add a URL, or merge ``(tier, score)`` into it (any state); record the parent edge."""
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
        firsts: dict[str, tuple[str, int, int]] = {}  # url -> host, depth, state (first seen)
        edges: list[tuple[str, str, int]] = []
        for url, score, depth, parent, host, count, tier in items:
            value = checked_score(url, score)
            if not INT32[0] <= tier <= INT32[1]:
                checked_int(f"tier of {url!r}", tier)
            if parent == url:
                parent = None
            if parent is not None:
                if parent not in firsts:
                    firsts[parent] = (host_of(parent), max(depth - 1, 0), int(URLState.DROPPED))
                if not INT64[0] <= count <= INT64[1]:
                    checked_int(f"link count of {url!r}", count, INT64)
                edges.append((url, parent, int(count)))
            old = batch.get(url)
            pair = (int(tier), value)
            batch[url] = pair if old is None else merged_pair(*old, *pair, merge)
            if url not in firsts:
                firsts[url] = (host, depth, _QUEUED)
        if not batch:
            return 0
        urls = list(firsts)
        keys = fingerprints(urls)
        rows = self._table.find(keys)
        self._begin()
        new = np.flatnonzero(rows < 0)
        new_urls = [urls[i] for i in new.tolist()]
        for url in new_urls:  # before any change: a batch is stored whole or not at all
            checked_text(url)
            checked_text(firsts[url][0])
        # merge into URLs known before this batch, whatever their state
        known = [i for i in np.flatnonzero(rows >= 0).tolist() if urls[i] in batch]
        if known and merge is not Merge.KEEP:
            pairs = [batch[urls[i]] for i in known]
            self._merge_pairs(
                rows[known],
                np.array([tier for tier, _ in pairs], np.int32),
                np.array([score for _, score in pairs], np.float64),
                merge,
            )
        if new.size:
            rows[new] = self._append(new_urls, keys[new], batch, firsts, layer, merge)
        if edges:
            row_of = dict(zip(urls, rows.tolist(), strict=True))
            self._conn.executemany(
                "INSERT INTO parents VALUES (?, ?, ?)"
                " ON CONFLICT(parent_seq, child_seq) DO UPDATE SET count = excluded.count",
                ((row_of[p] + 1, row_of[c] + 1, n) for c, p, n in edges),
            )
        return sum(1 for i in new.tolist() if firsts[urls[i]][2] == _QUEUED)

    def _append(
        self,
        urls: list[str],
        keys: npt.NDArray[np.int64],
        batch: dict[str, tuple[int, float]],
        firsts: dict[str, tuple[str, int, int]],
        layer: int,
        merge: Merge,
    ) -> Rows:
        """New rows for ``urls`` (fingerprints ``keys``): hot columns, cold text, counters."""
        hosts = np.array([self._host_id(firsts[u][0]) for u in urls], np.int32)
        states = np.array([firsts[u][2] for u in urls], np.int8)
        # each new queued URL goes in with the batch's combined key; a parent with
        # (0, 0.0), into which its own later items of the batch are merged
        pairs = [
            batch[u]
            if firsts[u][2] == _QUEUED
            else merged_pair(0, 0.0, *batch[u], merge)
            if u in batch
            else (0, 0.0)
            for u in urls
        ]
        tiers = np.array([tier for tier, _ in pairs], np.int32)
        scores = np.array([score for _, score in pairs], np.float64)
        rows = self._table.append(keys, hosts, layer, states, scores, tiers)
        np.add.at(self._counts, (hosts, states), 1)
        self._conn.executemany(
            "INSERT INTO url_text(seq, url, depth) VALUES (?, ?, ?)",
            ((row + 1, u, firsts[u][1]) for row, u in zip(rows.tolist(), urls, strict=True)),
        )
        self._queue.offer(rows)
        return rows

    def raise_children(self, parent: str, score: float, *, exclude: str | None = None) -> int:
        """Raise every QUEUED child of ``parent`` to at least ``score`` (P3 sibling update)."""
        value = checked_score(parent, score)
        parent_row = self._row(parent)
        if parent_row < 0:
            return 0
        children = np.array(
            [
                r[0] - 1
                for r in self._conn.execute(
                    "SELECT child_seq FROM parents WHERE parent_seq = ?", (parent_row + 1,)
                )
            ],
            np.int64,
        )
        if exclude is not None:
            children = children[children != self._row(exclude)]
        table = self._table
        children = children[(table.state[children] == _QUEUED) & (table.score[children] < value)]
        table.score[children] = value
        self._touched(children)
        return len(children)

    def pop(
        self,
        n: int,
        *,
        exclude_hosts: Collection[str] = (),
        max_per_host: int = 0,
        max_layer: int | None = None,
    ) -> list[QueuedURL]:
        """Take up to ``n`` best queued URLs (score desc, then discovery order) -> IN_FLIGHT."""
        if n <= 0:
            return []
        hosts = len(self._host_names)
        ids = [self._host_ids[h] for h in exclude_hosts if h in self._host_ids]
        excluded = None
        if ids:
            excluded = np.zeros(hosts, bool)
            excluded[ids] = True
        limit = None if max_layer is None else min(max(max_layer, INT32[0]), INT32[1])
        queued = self._counts[:hosts, _QUEUED]
        taken = self._queue.pop_rows(n, queued, excluded, max(max_per_host, 0), limit)
        if not taken:
            return []
        self._begin()
        self._set_state(np.array(taken, np.int64), _IN_FLIGHT)
        texts = {
            seq: (url, depth, parent)
            for seq, url, depth, parent in self._conn.execute(
                TEXT_MANY, (json.dumps([row + 1 for row in taken]),)
            )
        }
        return [self._row_of(row, *texts[row + 1]) for row in taken]

    def mark(self, url: str, state: URLState, *, score: float | None = None) -> None:
        """Set the state of a URL (and its score, if given); unknown URL: FrontierError."""
        value = None if score is None else checked_score(url, score)
        new = int(URLState(state))
        row = self._row(url)
        if row < 0:
            raise FrontierError(f"cannot mark unknown URL {url!r}")
        table = self._table
        host, old = int(table.host[row]), int(table.state[row])
        self._counts[host, old] -= 1
        self._counts[host, new] += 1
        table.state[row] = new
        if value is not None:
            table.score[row] = value
        self._begin()
        self._changed_one.append(row)
        if new == _QUEUED:
            self._queue.offer(np.array([row], np.int64))

    def requeue_in_flight(self) -> int:
        """After a crash: put every IN_FLIGHT URL back to QUEUED. Returns how many."""
        rows = np.flatnonzero(self._table.column("state") == _IN_FLIGHT).astype(np.int64)
        if rows.size:
            self._begin()
            self._set_state(rows, _QUEUED)
        return len(rows)

    def drop_queued(self, max_layer: int | None = None) -> int:
        """Mark queued URLs (of layers ``<= max_layer``, or all) DROPPED."""
        table = self._table
        wanted = table.column("state") == _QUEUED
        if max_layer is not None:
            wanted &= table.column("layer") <= min(max(max_layer, INT32[0]), INT32[1])
        rows = np.flatnonzero(wanted).astype(np.int64)
        if rows.size:
            self._begin()
            self._set_state(rows, int(URLState.DROPPED))
        return len(rows)

    def set_meta(self, key: str, value: str) -> None:
        self._begin()
        self._conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    # -- lifetime -------------------------------------------------------------------

    def commit(self) -> None:
        """Make every write so far durable (together, or not at all after a crash)."""
        changed = self._changed
        if self._changed_one:
            changed = [*changed, np.array(self._changed_one, np.int64)]
        extra = self._extra_changed
        if (
            not self._conn.in_transaction
            and not changed
            and not extra
            and self._table.n == self._committed
        ):
            return
        self._begin()
        self._journal_rows += write_commit(self._conn, self._table, self._committed, changed, extra)
        limit = self._compact_rows
        if limit is None:
            limit = max(_COMPACT_MIN, 2 * self._table.n)
        if self._journal_rows > limit:
            compact(self._conn, self._table)
            self._journal_rows = 0
        self._conn.execute("COMMIT")
        self._committed = self._table.n
        self._changed, self._changed_one, self._extra_changed = [], [], {}

    def close(self) -> None:
        """Close the DB. Uncommitted writes are discarded, as a crash would: commit first."""
        if self._conn.in_transaction:
            self._conn.execute("ROLLBACK")
        self._conn.close()


if TYPE_CHECKING:  # mypy proves the protocol is implemented
    _STORE: type[FrontierStore] = IndexedFrontier
