"""The shared core of the indexed crawl DB: the open DB that every role works on.

:class:`IndexedCore` holds what more than one role of
:class:`~focuscrawl.frontier.indexed.IndexedFrontier` reads or writes, and nothing
else: the SQLite connection (every write inside one transaction until the commit),
the row table (:mod:`~focuscrawl.frontier.indexed.table`: the hot columns in numpy,
one row per URL), the hosts with their counters by state, the pending cold rows
(:mod:`~focuscrawl.frontier.indexed.storage.cold`), the buffer of the best queued rows
(:mod:`~focuscrawl.frontier.indexed.order`), the rows changed since the commit (the
journal's input, which also feeds ``top``'s caches,
:mod:`~focuscrawl.frontier.indexed.order.top`) and the memo of rows met lately. Its
methods are the steps more than one role takes: find a URL's row, a host's id,
note a changed row (noted for the journal, offered to the buffer).

Opening loads the hot columns (snapshot, then the journal replayed:
:mod:`~focuscrawl.frontier.indexed.storage.disk`), the hosts and the orphans, and counts
the rows of each host by state.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import numpy.typing as npt

from focuscrawl.exceptions import FrontierError
from focuscrawl.frontier.base import no_edges_error
from focuscrawl.frontier.indexed.order import BestQueue
from focuscrawl.frontier.indexed.order.top import StateRows, TopCache
from focuscrawl.frontier.indexed.storage.cold import ColdWrites
from focuscrawl.frontier.indexed.storage.disk import load_table
from focuscrawl.frontier.indexed.storage.schema import open_indexed_db, url_key
from focuscrawl.frontier.indexed.storage.sqlite import edges_mode
from focuscrawl.frontier.indexed.table import CHUNK_ROWS, Rows
from focuscrawl.frontier.rules import SCORE

MEMO_MAX = 1 << 15  # URL -> row entries kept for the pages' repeated links (~5 MB)


class IndexedCore:
    """One open indexed crawl DB (see the module docstring).

    ``counts[host, state]`` counts the rows of each host id by state (5 states per
    host; ``cells`` is the same memory as one flat view, an item a Python int, at
    ``5 * host + state``). ``changed`` and ``changed_one`` are the rows whose state,
    score or tier changed since the commit, ``extra_changed`` those of each extra
    column. ``memo`` maps URLs added or met lately to their rows (a row is a URL's
    for good): a hit spares a fingerprint and a probe. ``journal_rows``: the journal
    rows found at open (the journal role's compaction trigger starts from it).
    """

    def __init__(self, path: Path, *, buffer_size: int, parents: bool) -> None:
        self.path = path
        self.conn = conn = open_indexed_db(path)
        try:
            keep_edges = edges_mode(conn, path, parents)
            self.table, self.journal_rows = load_table(conn)
            orphans = conn.execute("SELECT seq FROM orphans")
            seqs = np.fromiter((seq for (seq,) in orphans), np.int64)
            if seqs.size and not 0 < int(seqs.min()) <= int(seqs.max()) <= self.table.n:
                raise FrontierError(f"crawl DB {path} has damaged URL rows")
            self.table.orphan[seqs - 1] = True
            hosts = conn.execute("SELECT id, host FROM hosts ORDER BY id").fetchall()
            self.host_names = [str(host) for _, host in hosts]
            # host ids are dense (given as 0, 1, 2 ... in one transaction with their URLs)
            used = self.table.column("host")
            if [i for i, _ in hosts] != list(range(len(hosts))) or (
                used.size and int(used.max()) >= len(hosts)
            ):
                raise FrontierError(f"crawl DB {path} has damaged host ids")
        except (sqlite3.Error, ValueError) as exc:
            conn.close()
            raise FrontierError(f"unusable crawl DB {path}: {exc}") from exc
        except FrontierError:
            conn.close()
            raise
        table = self.table
        self.host_ids = {host: i for i, host in enumerate(self.host_names)}
        self.set_counts(np.zeros((max(len(self.host_names), 64), 5), np.int64))
        for lo in range(0, table.n, CHUNK_ROWS):
            hi = min(lo + CHUNK_ROWS, table.n)
            np.add.at(self.counts, (table.host[lo:hi], table.state[lo:hi]), 1)
        self.changed: list[Rows] = []
        self.changed_one: list[int] = []
        self.extra_changed: dict[str, list[Rows]] = {}
        self.best = BestQueue(table, buffer_size)
        self.cold = ColdWrites(conn, table, keep_edges)
        self.states = StateRows(table)
        self.tops = TopCache(table)
        self.memo: dict[str, int] = {}

    def set_counts(self, counts: npt.NDArray[np.int64]) -> None:
        """Make ``counts`` (C-contiguous, 5 states per host) the per-host counters."""
        self.counts = counts
        self.cells = counts.reshape(-1).data

    def begin(self) -> None:
        """Open the transaction of the writes until the next commit, if not yet open."""
        if not self.conn.in_transaction:
            self.conn.execute("BEGIN")

    def row(self, url: str) -> int:
        """The row of ``url``, -1 if unknown."""
        row = self.memo.get(url)
        return self.table.find_one(*url_key(url)) if row is None else row

    def host_id(self, host: str) -> int:
        """Id of ``host``, created (inside the transaction) if new."""
        known = self.host_ids.get(host)
        if known is not None:
            return known
        new = len(self.host_names)
        self.conn.execute("INSERT INTO hosts VALUES (?, ?)", (new, host))
        self.host_names.append(host)
        self.host_ids[host] = new
        if new >= len(self.counts):
            grown = np.zeros((max(2 * len(self.counts), 64), 5), np.int64)
            grown[: len(self.counts)] = self.counts
            self.set_counts(grown)
        return new

    def touched(self, rows: Rows | list[int] | int, *, rising: bool = False) -> None:
        """Rows whose state, score or tier changed (``rising``: only scores that rose):
        noted for the journal, offered to the buffer. One row or a few as a list take
        a fast branch without arrays."""
        if isinstance(rows, np.ndarray):
            self.changed.append(rows)
            self.best.offer(rows, rising=rising)
            return
        few = rows if isinstance(rows, list) else [rows]
        self.changed_one += few
        self.best.offer_list(few, rising=rising)

    def feed_tops(self) -> None:
        """Give the ``top`` caches the rows changed since they last looked."""
        table = self.table
        self.tops.feed(
            self.changed, self.changed_one, self.extra_changed, {SCORE: table.score, **table.extra}
        )

    def column(self, name: str) -> npt.NDArray[np.float64]:
        """The array of an extra column (``"score"``: the scores); FrontierError if unknown."""
        if name == SCORE:
            return self.table.score
        array = self.table.extra.get(name)
        if array is None:
            raise FrontierError(f"unknown column {name!r}")
        return array

    def edges_kept(self) -> None:
        """FrontierError unless this DB keeps parent edges; else flush the pending ones."""
        if not self.cold.keep_edges:
            raise no_edges_error(f"crawl DB {self.path}")
        self.cold.flush()
