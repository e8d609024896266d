"""The shared core of the indexed crawl DB: the open DB that every role works on.

:class:`IndexedCore` holds what more than one role of
:class:`~focuscrawl.frontier.indexed.IndexedFrontier` reads or writes, and nothing
else: the SQLite connection (every write inside one transaction until the commit),
the row table (:mod:`~focuscrawl.frontier.indexed.table`: the hot columns in numpy,
one row per URL), the host names and ids, the pending cold rows
(:mod:`~focuscrawl.frontier.indexed.storage.cold`), the buffer of the best queued rows
(:mod:`~focuscrawl.frontier.indexed.order`), the log of rows changed since the commit
(:mod:`~focuscrawl.frontier.indexed.changes`) and the memo of rows met lately. Its
methods are the steps more than one role takes: find a URL's row, a host's id.
What one role alone keeps is that role's: the per-host counters and the rows of
the small states are the queue's, the ``top`` caches the columns'.

Opening loads the hot columns (snapshot, then the journal replayed:
:mod:`~focuscrawl.frontier.indexed.storage.disk`), the hosts and the orphans.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import numpy.typing as npt

from focuscrawl.exceptions import FrontierError
from focuscrawl.frontier.base import no_edges_error
from focuscrawl.frontier.indexed.changes import ChangeLog
from focuscrawl.frontier.indexed.order import BestQueue
from focuscrawl.frontier.indexed.storage.cold import ColdWrites
from focuscrawl.frontier.indexed.storage.disk import load_table
from focuscrawl.frontier.indexed.storage.schema import open_indexed_db, url_key
from focuscrawl.frontier.indexed.storage.sqlite import edges_mode
from focuscrawl.frontier.rules import SCORE

MEMO_MAX = 1 << 15  # URL -> row entries kept for the pages' repeated links (~5 MB)


class IndexedCore:
    """One open indexed crawl DB (see the module docstring).

    ``log``: the rows changed since the commit. ``memo`` maps URLs added or met
    lately to their rows (a row is a URL's for good): a hit spares a fingerprint and
    a probe. ``journal_rows``: the journal rows found at open (the journal role's
    compaction trigger starts from it).
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
        self.best = BestQueue(table, buffer_size)
        self.log = ChangeLog(self.best)
        self.cold = ColdWrites(conn, table, keep_edges)
        self.memo: dict[str, int] = {}

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
        return new

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
