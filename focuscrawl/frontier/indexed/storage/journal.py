"""The run journal of the indexed crawl DB: the commit that makes every write durable.

:class:`IndexedJournal` is the :class:`~focuscrawl.frontier.base.RunJournal` role of
:class:`~focuscrawl.frontier.indexed.IndexedFrontier`. Every write of the other
roles goes into one SQLite transaction (opened by the first write after a commit);
the cold rows waiting in memory are flushed into it, and :meth:`IndexedJournal.commit`
adds the rows changed since the last commit as one journal BLOB
(:mod:`~focuscrawl.frontier.indexed.storage.disk`), folding the journal into the snapshot
once it is worth it, and commits. A crash, or a close without commit, loses exactly
the uncommitted work. The small run state (``get_meta``/``set_meta``) is a plain
table, written in the same transaction.
"""

from __future__ import annotations

from focuscrawl.frontier.indexed.core import IndexedCore
from focuscrawl.frontier.indexed.storage.disk import compact, write_commit

_COMPACT_MIN = 1 << 20  # journal rows below which a compaction is not worth its writes


class IndexedJournal:
    """The commit of the indexed store (see the module docstring).

    The journal is folded into the snapshot once it holds more than
    ``compact_rows`` rows (None: twice the URLs, at least 2**20).
    """

    def __init__(self, core: IndexedCore, compact_rows: int | None) -> None:
        self._core = core
        self._compact_rows = compact_rows
        self._journal_rows = core.journal_rows  # journal rows on disk (the compaction trigger)
        self._committed = core.table.n  # rows up to here are on disk

    def get_meta(self, key: str) -> str | None:
        row = self._core.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self._core.begin()
        self._core.conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def commit(self) -> None:
        """Make every write so far durable (together, or not at all after a crash)."""
        core = self._core
        conn, table = core.conn, core.table
        changed, extra = core.log.pending()
        if (
            not conn.in_transaction
            and not core.cold.pending
            and not changed
            and not extra
            and table.n == self._committed
        ):
            return
        core.begin()
        core.cold.flush()
        self._journal_rows += write_commit(conn, table, self._committed, changed, extra)
        limit = self._compact_rows
        if limit is None:
            limit = max(_COMPACT_MIN, 2 * table.n)
        if self._journal_rows > limit:
            compact(conn, table)
            self._journal_rows = 0
        conn.execute("COMMIT")
        self._committed = table.n
        core.log.clear()

    def close(self) -> None:
        """Close the DB. Uncommitted writes are discarded, as a crash would: commit first."""
        conn = self._core.conn
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        conn.close()
