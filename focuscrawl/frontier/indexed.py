"""The default crawl DB: hot columns in numpy arrays, everything durable in SQLite.

A :class:`~focuscrawl.frontier.base.FrontierStore` built for score updates: per
URL, score, tier, state, host, layer and fingerprint live in numpy arrays indexed by
a dense row number (:mod:`~focuscrawl.frontier.indexed_table`: 37 B per URL, 8 B
per extra float column, <= 8 B of hash index), so a batch of score updates is a few
vectorised operations (:mod:`~focuscrawl.frontier.indexed_columns`); the
best queued URLs are kept in a buffer (:mod:`~focuscrawl.frontier.indexed_queue`)
so a pop selects from thousands of rows, not millions. A page's links are added
in plain Python (:mod:`~focuscrawl.frontier.indexed_adds`). SQLite holds the cold
data (URL text, depth, first parent, parent edges if the strategy reads them,
hosts, meta), written in bulk inside the open transaction
(:mod:`~focuscrawl.frontier.indexed_cold`, :mod:`~focuscrawl.frontier.indexed_links`),
and, at :meth:`IndexedFrontier.commit`, the changed rows of the hot columns as
one journal BLOB (:mod:`~focuscrawl.frontier.indexed_disk`). Opening the DB
loads the arrays from the snapshot and replays the journal.

Measured at a million queued URLs (``benchmarks/bench_frontier.py``, a shared
2-core machine at load ~3): a page-shaped OTIE workload (30 out-links, pops of
16, a commit every 50 pages) ~95-100k ops per CPU-second without parent edges
(170-185k on a quiet, faster machine in 2026-11), ~50k with them (before: ~20k);
score updates + pops ~170-240k per CPU-second;
~70 B per URL of resident memory growth (the whole process: ~135 B per URL).

Writes form one transaction until :meth:`IndexedFrontier.commit`; a crash (or
:meth:`IndexedFrontier.close` without commit) loses exactly the uncommitted work.
The semantics are those of :mod:`focuscrawl.frontier.memory` (read it first), with
one difference: duplicates inside one ``add_many``
batch are combined before they are merged, so ``Merge.ADD`` sums may round
differently from one-by-one adds.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from focuscrawl.exceptions import FrontierError
from focuscrawl.frontier.base import FrontierStore
from focuscrawl.frontier.indexed_adds import MEMO_MAX, IndexedAdds
from focuscrawl.frontier.indexed_cold import ColdWrites
from focuscrawl.frontier.indexed_disk import compact, load_table, write_commit
from focuscrawl.frontier.indexed_links import children_of
from focuscrawl.frontier.indexed_queue import BestQueue
from focuscrawl.frontier.indexed_reads import StateRows, Text
from focuscrawl.frontier.indexed_schema import open_indexed_db
from focuscrawl.frontier.indexed_table import CHUNK_ROWS, Rows
from focuscrawl.frontier.indexed_top import TopCache
from focuscrawl.frontier.rules import INT32, checked_score
from focuscrawl.frontier.sqlite_schema import edges_mode
from focuscrawl.types import QueuedURL, URLState

_COMPACT_MIN = 1 << 20  # journal rows below which a compaction is not worth its writes
_IN_FLIGHT, _QUEUED = int(URLState.IN_FLIGHT), int(URLState.QUEUED)
_FEW_EXCLUDED = 8  # hosts excluded from a pop at most for its "all excluded?" check


class IndexedFrontier(IndexedAdds):
    """Crawl DB in one SQLite file with its hot columns in memory (~49 B per URL).

    ``buffer_size`` is the number of best queued URLs kept sorted for ``pop``;
    the journal is folded into the snapshot once it holds more than
    ``compact_rows`` rows (default: twice the URLs, at least 2**20). ``parents``:
    the caller reads parent edges (``parents``, ``children``, ``children_counts``,
    ``raise_children``); a new DB keeps them only then (else those raise
    :class:`~focuscrawl.exceptions.FrontierError`), a DB that keeps them goes on
    keeping them, and asking them of one that does not is a FrontierError at open.
    Semantics: see :mod:`focuscrawl.frontier.memory`.
    """

    def __init__(
        self,
        path: Path | str,
        *,
        buffer_size: int = 4096,
        compact_rows: int | None = None,
        parents: bool = True,
    ) -> None:
        self.path = Path(path)
        self._compact_rows = compact_rows
        self._conn = open_indexed_db(self.path)
        try:
            keep_edges = edges_mode(self._conn, self.path, parents)
            self._table, self._journal_rows = load_table(self._conn)
            orphans = self._conn.execute("SELECT seq FROM orphans")
            seqs = np.fromiter((seq for (seq,) in orphans), np.int64)
            if seqs.size and not 0 < int(seqs.min()) <= int(seqs.max()) <= self._table.n:
                raise FrontierError(f"crawl DB {self.path} has damaged URL rows")
            self._table.orphan[seqs - 1] = True
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
        self._set_counts(np.zeros((max(len(self._host_names), 64), 5), np.int64))
        table = self._table
        for lo in range(0, table.n, CHUNK_ROWS):
            hi = min(lo + CHUNK_ROWS, table.n)
            np.add.at(self._counts, (table.host[lo:hi], table.state[lo:hi]), 1)
        self._committed = table.n  # rows up to here are on disk
        self._changed: list[Rows] = []  # rows whose state, score or tier changed since the commit
        self._changed_one: list[int] = []
        self._extra_changed: dict[str, list[Rows]] = {}
        self._queue = BestQueue(table, buffer_size)
        self._cold = ColdWrites(self._conn, table, keep_edges)
        self._states = StateRows(table)
        self._tops = TopCache(table)
        self._recent: dict[int, Text] = {}  # texts of rows read lately (see _cold_texts)
        self._row_memo: dict[str, int] = {}  # rows of a page's links met lately (see _add_page)
        # the excluded host ids of the last pop that named some, and their flags, kept
        # set: a polite crawl's next pop excludes nearly the same hosts (the one whose
        # page came back is out, the one just taken is in), two flags to change, not 60
        self._excluded = np.zeros(64, bool)
        self._excluded_ids: set[int] = set()

    # -- writes ---------------------------------------------------------------------

    def raise_children(self, parent: str, score: float, *, exclude: str | None = None) -> int:
        """Raise every QUEUED child of ``parent`` to at least ``score`` (P3 sibling update)."""
        value = checked_score(parent, score)
        self._edges_kept()
        parent_row = self._row(parent)
        if parent_row < 0:
            return 0
        children = np.array(sorted(children_of(self._conn, parent_row)), np.int64)
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
        known = self._host_ids
        ids = {known[h] for h in exclude_hosts if h in known}  # (a host named twice: once)
        queued = self._counts[:hosts, _QUEUED]
        excluded = None
        if ids:
            # every queued URL is an excluded host's: nothing to pop (a polite crawl of a
            # site or a few asks this after most pages, the hosts in flight all full;
            # with many hosts in flight, others nearly always have URLs: not asked then)
            if len(ids) <= _FEW_EXCLUDED:
                per_host = self._count_cells()
                if sum(per_host[5 * host + _QUEUED] for host in ids) >= int(queued.sum()):
                    return []
            if len(self._excluded) < hosts:
                grown = np.zeros(2 * hosts, bool)
                grown[: len(self._excluded)] = self._excluded
                self._excluded = grown
            flags, last = self._excluded.data, self._excluded_ids
            for host in last - ids:
                flags[host] = False
            for host in ids - last:
                flags[host] = True
            self._excluded_ids = ids
            excluded = self._excluded[:hosts]
        limit = None if max_layer is None else min(max(max_layer, INT32[0]), INT32[1])
        taken = self._queue.pop_rows(n, queued, excluded, max(max_per_host, 0), limit)
        if not taken:
            return []
        self._begin()
        if len(taken) == 1:  # a polite crawl's usual pop: no arrays for one row
            self._set_state_one(taken[0], _IN_FLIGHT)
        else:
            self._set_state(np.array(taken, np.int64), _IN_FLIGHT)
        texts = self._cold_texts(taken, self._queue.upcoming)
        # the caller marks, gets and scores these URLs next, and names them as the parent
        # of their pages' links: each would cost a fingerprint and a probe
        memo = self._row_memo
        if len(memo) > MEMO_MAX:
            memo.clear()
        for row, text in zip(taken, texts, strict=True):
            memo[text[0]] = row
        return [self._row_of(row, *text) for row, text in zip(taken, texts, strict=True)]

    def mark(self, url: str, state: URLState, *, score: float | None = None) -> None:
        """Set the state of a URL (and its score, if given); unknown URL: FrontierError."""
        value = None if score is None else checked_score(url, score)
        new = int(URLState(state))
        row = self._row(url)
        if row < 0:
            raise FrontierError(f"cannot mark unknown URL {url!r}")
        if value is not None:
            self._table.view["score"][row] = value
        self._begin()
        self._set_state_one(row, new)

    def requeue_in_flight(self) -> int:
        """After a crash: put every IN_FLIGHT URL back to QUEUED. Returns how many."""
        rows = np.flatnonzero(self._table.column("state") == _IN_FLIGHT).astype(np.int64)
        if rows.size:
            self._begin()
            self._set_state(rows, _QUEUED)
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
            and not self._cold.pending
            and not changed
            and not extra
            and self._table.n == self._committed
        ):
            return
        self._begin()
        self._cold.flush()
        self._feed_tops()  # before the lists it reads are emptied
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
        self._tops.emptied()

    def close(self) -> None:
        """Close the DB. Uncommitted writes are discarded, as a crash would: commit first."""
        if self._conn.in_transaction:
            self._conn.execute("ROLLBACK")
        self._conn.close()


if TYPE_CHECKING:  # mypy proves the protocol is implemented
    _STORE: type[FrontierStore] = IndexedFrontier
