"""The default crawl DB: hot columns in numpy arrays, everything durable in SQLite.

A :class:`~focuscrawl.frontier.base.FrontierStore` built for score updates: per
URL, score, state, host, layer and fingerprint live in numpy arrays indexed by a
dense row number (:mod:`~focuscrawl.frontier.indexed_table`: 33 B per URL, and
<= 8 B of hash index), so a batch of score updates is a few vectorised operations; the
best queued URLs are kept in a buffer (:mod:`~focuscrawl.frontier.indexed_queue`)
so a pop sorts thousands of rows, not millions. SQLite holds the cold data (URL
text, depth, parents, hosts, meta: written at add time inside the open
transaction) and, at :meth:`IndexedFrontier.commit`, the changed rows of the hot
columns as one journal BLOB (:mod:`~focuscrawl.frontier.indexed_disk`). Opening
the DB loads the arrays from the snapshot and replays the journal.

Measured at a million queued URLs (``benchmarks/bench_frontier.py``): ~170k score
updates + pops per second with a commit every 1,050, 62 B per URL of resident
memory growth (the whole process: ~125 B per URL), 0.4 s to open.

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
from focuscrawl.frontier.indexed_disk import compact, load_table, write_commit
from focuscrawl.frontier.indexed_queue import BestQueue
from focuscrawl.frontier.indexed_reads import IndexedReads
from focuscrawl.frontier.indexed_schema import (
    TEXT_MANY,
    checked_text,
    fingerprints,
    open_indexed_db,
)
from focuscrawl.frontier.indexed_table import CHUNK_ROWS, Rows, repeated_values
from focuscrawl.frontier.memory import aggregated, checked_score, host_of, merged
from focuscrawl.types import Merge, QueuedURL, URLState

_INT32 = (-(2**31), 2**31 - 1)
_COMPACT_MIN = 1 << 20  # journal rows below which a compaction is not worth its writes
_IN_FLIGHT, _QUEUED = int(URLState.IN_FLIGHT), int(URLState.QUEUED)


class IndexedFrontier(IndexedReads):
    """Crawl DB in one SQLite file with its hot columns in memory (~45 B per URL).

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
        self._changed: list[Rows] = []  # rows whose state or score changed since the commit
        self._changed_one: list[int] = []
        self._queue = BestQueue(table, buffer_size)

    # -- helpers --------------------------------------------------------------------

    def _begin(self) -> None:
        if not self._conn.in_transaction:
            self._conn.execute("BEGIN")

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

    def _set_state(self, rows: Rows, state: int) -> None:
        """Move ``rows`` to ``state``, keeping the per-host counters."""
        table, counts = self._table, self._counts
        if len(rows) <= 32:  # np.add.at costs more than a short loop
            for host, old in zip(
                table.host[rows].tolist(), table.state[rows].tolist(), strict=True
            ):
                counts[host, old] -= 1
                counts[host, state] += 1
        else:
            np.subtract.at(counts, (table.host[rows], table.state[rows]), 1)
            np.add.at(counts, (table.host[rows], np.full(len(rows), state, np.int8)), 1)
        table.state[rows] = state
        self._touched(rows)

    def _touched(self, rows: Rows) -> None:
        self._changed.append(rows)
        self._queue.offer(rows)

    def _merge_rows(self, rows: Rows, values: npt.NDArray[np.float64], merge: Merge) -> int:
        """Merge one value per (distinct) row into the scores; returns how many were written."""
        if merge is Merge.KEEP or not rows.size:
            return 0
        scores = self._table.score
        if merge is Merge.MAX:
            up = values > scores[rows]
            rows, values = rows[up], values[up]
        elif merge is Merge.ADD:
            values = scores[rows] + values  # the same IEEE double as merged()
        scores[rows] = values
        self._touched(rows)
        return len(rows)

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
    ) -> bool:
        """Add a URL, or merge ``score`` into it if it is QUEUED; record ``parent``."""
        return self.add_many([(url, score, depth, parent, host)], merge=merge, layer=layer) == 1

    def add_many(
        self,
        items: Iterable[tuple[str, float, int, str | None, str]],
        *,
        merge: Merge = Merge.MAX,
        layer: int = 0,
    ) -> int:
        """Batch :meth:`add` of ``(url, score, depth, parent, host)``; returns how many were new.

        Equivalent to adding the items one by one, in order (an unknown parent
        becomes a DROPPED URL just before the item that names it), except that
        repeated URLs are combined first.
        """
        if not _INT32[0] <= layer <= _INT32[1]:
            raise FrontierError(f"layer {layer} out of range")
        batch: dict[str, float] = {}  # url -> merged score of the batch
        firsts: dict[str, tuple[str, int, int]] = {}  # url -> host, depth, state (first seen)
        edges: list[tuple[str, str]] = []
        for url, score, depth, parent, host in items:
            value = checked_score(url, score)
            if parent == url:
                parent = None
            if parent is not None:
                if parent not in firsts:
                    firsts[parent] = (host_of(parent), max(depth - 1, 0), int(URLState.DROPPED))
                edges.append((url, parent))
            old = batch.get(url)
            batch[url] = value if old is None else merged(old, value, merge)
            if url not in firsts:
                firsts[url] = (host, depth, _QUEUED)
        if not batch:
            return 0
        urls = list(firsts)
        rows = self._table.find(fingerprints(urls))
        self._begin()
        # merge into URLs queued before this batch (the new ones do not exist yet)
        new = np.flatnonzero(rows < 0)
        new_urls = [urls[i] for i in new.tolist()]
        for url in new_urls:  # before any change: a batch is stored whole or not at all
            checked_text(url)
            checked_text(firsts[url][0])
        known = [i for i in np.flatnonzero(rows >= 0).tolist() if urls[i] in batch]
        if known and merge is not Merge.KEEP:
            known_rows = rows[known]
            values = np.array([batch[urls[i]] for i in known], np.float64)
            queued = self._table.state[known_rows] == _QUEUED
            self._merge_rows(known_rows[queued], values[queued], merge)
        if new.size:
            rows[new] = self._append(new_urls, batch, firsts, layer)
        if edges:
            row_of = dict(zip(urls, rows.tolist(), strict=True))
            self._conn.executemany(
                "INSERT OR IGNORE INTO parents VALUES (?, ?)",
                ((row_of[p] + 1, row_of[c] + 1) for c, p in edges),
            )
        return sum(1 for i in new.tolist() if firsts[urls[i]][2] == _QUEUED)

    def _append(
        self,
        urls: list[str],
        batch: dict[str, float],
        firsts: dict[str, tuple[str, int, int]],
        layer: int,
    ) -> Rows:
        """New rows for ``urls``: hot columns, cold text, counters; returns their rows."""
        hosts = np.array([self._host_id(firsts[u][0]) for u in urls], np.int32)
        states = np.array([firsts[u][2] for u in urls], np.int8)
        # each new queued URL goes in with the batch's combined score; parents with 0
        scores = np.array([batch[u] if firsts[u][2] == _QUEUED else 0.0 for u in urls], np.float64)
        rows = self._table.append(fingerprints(urls), hosts, layer, states, scores)
        np.add.at(self._counts, (hosts, states), 1)
        self._conn.executemany(
            "INSERT INTO url_text(seq, url, depth) VALUES (?, ?, ?)",
            ((row + 1, u, firsts[u][1]) for row, u in zip(rows.tolist(), urls, strict=True)),
        )
        self._queue.offer(rows)
        return rows

    def update_scores(self, updates: Iterable[tuple[str, float]], merge: Merge) -> int:
        """Merge new scores into known URLs of *any* state; unknown URLs are ignored.

        Repeated URLs are combined first (``ADD`` sums). Returns the number of URLs
        whose score was written (``MAX``: only those that went up; ``KEEP``: none).
        """
        pairs = list(updates)
        urls = [url for url, _ in pairs]
        values = np.array([score for _, score in pairs], np.float64)
        nan = np.isnan(values)
        if nan.any():
            raise FrontierError(f"score of {urls[int(np.argmax(nan))]!r} is NaN")
        if merge is Merge.KEEP or not pairs:
            return 0
        keys = fingerprints(urls)
        repeated = repeated_values(keys[:, 0])
        if repeated.any():  # combined in batch order, like memory, in Python: a few URLs
            scores = aggregated([pairs[i] for i in np.flatnonzero(repeated).tolist()], merge)
            keys = np.concatenate([keys[~repeated], fingerprints(list(scores))])
            values = np.concatenate(
                [values[~repeated], np.fromiter(scores.values(), np.float64, len(scores))]
            )
        rows = self._table.find(keys)
        known = rows >= 0
        return self._merge_rows(rows[known], values[known], merge)

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
        limit = None if max_layer is None else min(max(max_layer, _INT32[0]), _INT32[1])
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
            wanted &= table.column("layer") <= min(max(max_layer, _INT32[0]), _INT32[1])
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
        if not self._conn.in_transaction and not changed and self._table.n == self._committed:
            return
        self._begin()
        self._journal_rows += write_commit(self._conn, self._table, self._committed, changed)
        limit = self._compact_rows
        if limit is None:
            limit = max(_COMPACT_MIN, 2 * self._table.n)
        if self._journal_rows > limit:
            compact(self._conn, self._table)
            self._journal_rows = 0
        self._conn.execute("COMMIT")
        self._committed = self._table.n
        self._changed, self._changed_one = [], []

    def close(self) -> None:
        """Close the DB. Uncommitted writes are discarded, as a crash would: commit first."""
        if self._conn.in_transaction:
            self._conn.execute("ROLLBACK")
        self._conn.close()


if TYPE_CHECKING:  # mypy proves the protocol is implemented
    _STORE: type[FrontierStore] = IndexedFrontier
