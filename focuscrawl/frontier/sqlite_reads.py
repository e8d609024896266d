"""Reads of the SQLite crawl DB: rows, states, parents, counts, listing, meta.

Separate from the writes in :mod:`focuscrawl.frontier.sqlite` because none of them
touches the hot path; most read the cold ``url_text`` table.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path
from typing import Any

from focuscrawl.exceptions import FrontierError
from focuscrawl.frontier.base import no_edges_error
from focuscrawl.frontier.rules import SCORE
from focuscrawl.frontier.sqlite_schema import MATCH, ROW, ROWS_IN_ORDER, url_key
from focuscrawl.types import QueuedURL, URLState


class SqliteReads:
    """The read half of :class:`~focuscrawl.frontier.sqlite.SqliteFrontier`."""

    path: Path
    _conn: sqlite3.Connection
    _keep_edges: bool

    def _edges_kept(self) -> None:
        """FrontierError unless this DB keeps parent edges."""
        if not self._keep_edges:
            raise no_edges_error(f"crawl DB {self.path}")

    def _seq_of(self, url: str) -> int | None:
        row = self._conn.execute(f"SELECT seq FROM urls WHERE {MATCH}", url_key(url)).fetchone()
        return None if row is None else int(row[0])

    @staticmethod
    def _queued(row: tuple[Any, ...]) -> QueuedURL:
        url, score, depth, host, parent, layer, seq, tier = row[:8]
        return QueuedURL(url, float(score), depth, host, parent, layer, seq, tier)

    def get(self, url: str) -> QueuedURL | None:
        """The stored row of a URL, whatever its state (``parent`` = first parent)."""
        row = self._conn.execute(
            ROW + "WHERE u.h BETWEEN ?1 AND ?1 + 7 AND u.h2 = ?2", url_key(url)
        ).fetchone()
        return None if row is None else self._queued(row)

    def state(self, url: str) -> URLState | None:
        row = self._conn.execute(f"SELECT state FROM urls WHERE {MATCH}", url_key(url)).fetchone()
        return None if row is None else URLState(row[0])

    def parents(self, url: str) -> list[str]:
        """Every recorded parent: the first one first, then in discovery order."""
        self._edges_kept()
        rows = self._conn.execute(
            "SELECT p.url FROM urls AS c JOIN url_text AS t ON t.seq = c.seq"
            " JOIN parents AS x ON x.child_seq = c.seq JOIN url_text AS p ON p.seq = x.parent_seq"
            " WHERE c.h BETWEEN ?1 AND ?1 + 7 AND c.h2 = ?2"
            " ORDER BY p.seq != t.parent_seq, p.seq",
            url_key(url),
        )
        return [r[0] for r in rows]

    def children(self, parent: str) -> list[str]:
        """Every URL that ``parent`` links to, in discovery order."""
        self._edges_kept()
        parent_seq = self._seq_of(parent)
        if parent_seq is None:
            return []
        rows = self._conn.execute(
            "SELECT c.url FROM parents AS x JOIN url_text AS c ON c.seq = x.child_seq"
            " WHERE x.parent_seq = ? ORDER BY c.seq",
            (parent_seq,),
        )
        return [r[0] for r in rows]

    def children_counts(self, parent: str) -> list[tuple[str, int]]:
        """Every URL that ``parent`` links to with t(parent, url), in discovery order."""
        self._edges_kept()
        parent_seq = self._seq_of(parent)
        if parent_seq is None:
            return []
        rows = self._conn.execute(
            "SELECT c.url, x.count FROM parents AS x JOIN url_text AS c ON c.seq = x.child_seq"
            " WHERE x.parent_seq = ? ORDER BY c.seq",
            (parent_seq,),
        )
        return [(url, int(count)) for url, count in rows]

    # -- extra columns --------------------------------------------------------------

    def _column_ids(self) -> dict[str, int]:
        return {str(name): int(i) for name, i in self._conn.execute("SELECT name, id FROM columns")}

    def _column_id(self, name: str) -> int:
        """Id of an extra column; FrontierError if it was never created."""
        col = self._column_ids().get(name)
        if col is None:
            raise FrontierError(f"unknown column {name!r}")
        return col

    def value(self, url: str, column: str) -> float | None:
        """``column`` of ``url``: None if the URL is unknown, 0.0 if never set."""
        col = None if column == SCORE else self._column_id(column)
        row = self._conn.execute(
            f"SELECT seq, score FROM urls WHERE {MATCH}", url_key(url)
        ).fetchone()
        if row is None or col is None:
            return None if row is None else float(row[1])
        found = self._conn.execute(
            "SELECT value FROM vals WHERE col = ? AND seq = ?", (col, row[0])
        ).fetchone()
        return 0.0 if found is None else float(found[0])

    def top(self, column: str, state: URLState = URLState.FETCHED) -> tuple[str, float] | None:
        """The URL in ``state`` with the highest ``column`` (ties: discovery order).

        A scan of the URLs in ``state``: no index is kept for it, so that score
        updates stay as cheap as they are.
        """
        if column == SCORE:
            row = self._conn.execute(
                "SELECT t.url, u.score FROM urls AS u JOIN url_text AS t ON t.seq = u.seq"
                " WHERE u.state = ? ORDER BY u.score DESC, u.seq LIMIT 1",
                (int(state),),
            ).fetchone()
        else:
            row = self._conn.execute(
                "SELECT t.url, coalesce(v.value, 0.0) AS x FROM urls AS u"
                " JOIN url_text AS t ON t.seq = u.seq"
                " LEFT JOIN vals AS v ON v.col = ? AND v.seq = u.seq"
                " WHERE u.state = ? ORDER BY x DESC, u.seq LIMIT 1",
                (self._column_id(column), int(state)),
            ).fetchone()
        return None if row is None else (str(row[0]), float(row[1]))

    def count(self, state: URLState | None = None) -> int:
        if state is None:
            row = self._conn.execute("SELECT sum(n) FROM counts").fetchone()
        else:
            row = self._conn.execute(
                "SELECT n FROM counts WHERE state = ?", (int(state),)
            ).fetchone()
        return int(row[0] or 0)

    def known(self, urls: Sequence[str]) -> dict[str, URLState]:
        """The states of the known URLs of ``urls`` (see FrontierStore.known)."""
        out = {}
        for url in urls:
            state = self.state(url)
            if state is not None:
                out[url] = state
        return out

    def host_counts(self, hosts: Sequence[str]) -> dict[str, int]:
        return {host: self.host_count(host) for host in hosts}

    def host_count(self, host: str, states: Collection[URLState] = ()) -> int:
        """URLs of a host (in the given states, or all), from counters: no scan."""
        row = self._conn.execute(
            "SELECT n0, n1, n2, n3, n4 FROM hosts WHERE host = ?", (host,)
        ).fetchone()
        if row is None:
            return 0
        wanted = {int(s) for s in states} or set(range(5))
        return sum(int(row[s]) for s in wanted)

    def iter_urls(self, state: URLState | None = None) -> Iterator[QueuedURL]:
        """Every URL (in ``state``), in discovery order; safe to write while iterating."""
        last = 0
        condition = "" if state is None else f"AND u.state = {int(URLState(state))} "
        while True:
            rows = self._conn.execute(
                ROWS_IN_ORDER + f"WHERE t.seq > ? {condition}ORDER BY t.seq LIMIT 1000", (last,)
            ).fetchall()
            if not rows:
                return
            for row in rows:
                yield self._queued(row)
            last = rows[-1][6]

    def get_meta(self, key: str) -> str | None:
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])
