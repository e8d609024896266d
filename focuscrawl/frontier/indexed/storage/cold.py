"""The cold writes of the indexed crawl DB: URL text, first parents and parent edges.

They are written in bulk: each new URL's ``url_text`` row (text, depth, first
parent) and each parent edge ``(parent, child, t)`` wait in a Python list until
the next read of those tables or the next commit (:meth:`ColdWrites.flush`), and
then go in with one ``executemany`` each, inside the open transaction. So a crash,
or a close without commit, still loses exactly the uncommitted work, and every
read sees every write made before it. One ``executemany`` of a hundred rows costs
a fraction of a hundred statements, and the rows of one URL page land together.

Parent edges go in as one ``links`` row per parent and flush
(:mod:`~focuscrawl.frontier.indexed.links`). The first parent of a URL is known when it is added, except for a URL added
without one (a seed, a DROPPED referrer): such a row is an *orphan* (the table's
``orphan`` flag, rebuilt at open from the small table ``orphans``), and the first
edge that names it as a child sets its parent. No SQL is needed to tell the two
cases apart.

Parent edges are kept only in a DB opened for a strategy that reads them
(``keep_edges``, see :attr:`~focuscrawl.strategies.base.Strategy.needs_parents`):
for the others, the ~30 B-tree inserts per page (and their growth, which made the
CPU per page drift up over a crawl) are not made at all.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from functools import cache

from focuscrawl.frontier.indexed.links import Backlinks, write_links
from focuscrawl.frontier.indexed.table import UrlTable

_CHUNK = 256  # rows per INSERT statement (1,024 parameters at most)
_PENDING = 4096  # URL text rows held at most before they are written
_TEXT = "INSERT INTO url_text(seq, url, depth, parent_seq) VALUES "


@cache
def _statement(head: str, width: int, rows: int) -> str:
    """One INSERT of ``rows`` rows of ``width`` values (a few sizes: the statement cache)."""
    row = "(" + ", ".join("?" * width) + ")"
    return head + ", ".join([row] * rows)


def insert_rows(conn: sqlite3.Connection, head: str, width: int, values: list[object]) -> None:
    """Insert the rows of ``values`` (flat, ``width`` per row) in order.

    Many rows per statement (chunks of 256, 128, ... 1): half the CPU of one
    ``executemany`` step per row, which binds and steps each row on its own.
    """
    rows, at, size = len(values) // width, 0, _CHUNK
    while rows:
        while size > rows:
            size //= 2
        conn.execute(_statement(head, width, size), values[at : at + size * width])
        at += size * width
        rows -= size


class ColdWrites:
    """The pending cold rows of one open crawl DB (see the module docstring)."""

    def __init__(self, conn: sqlite3.Connection, table: UrlTable, keep_edges: bool) -> None:
        self.conn = conn
        self.table = table
        self.keep_edges = keep_edges
        self._text: list[object] = []  # seq, url, depth, parent seq; seq, url ...
        self._text_first = 0  # the row of the first pending text row
        self._orphans: list[int] = []  # rows added without a parent
        self._parents: list[tuple[int, int]] = []  # (parent seq, seq) of rows already written
        self._links: list[tuple[int, list[int], list[int]]] = []  # parent, children, t
        self.backlinks: Backlinks | None = None  # built by the first ``parents`` read

    def add_text(
        self, first: int, urls: list[str], depths: list[int], parents: list[int | None]
    ) -> None:
        """``url_text`` rows of the rows ``first, first + 1 ...`` just appended:
        URL, depth and the first parent's seq (None: an orphan)."""
        if not self._text:
            self._text_first = first
        text = self._text
        for seq, url, depth, parent in zip(
            range(first + 1, first + 1 + len(urls)), urls, depths, parents, strict=True
        ):
            text += (seq, url, depth, parent)
            if parent is None:
                self.table.orphan[seq - 1] = True
                self._orphans.append(seq)
        if len(text) > 4 * _PENDING:  # a big batch: its URLs need not wait in memory
            self.flush()

    def pending_text(self, row: int) -> tuple[str, int, int | None] | None:
        """URL, depth and first parent's seq of ``row`` if its text row is still
        pending (current: :meth:`set_parent` amends it), else None (it is written)."""
        at = 4 * (row - self._text_first)
        if at < 0 or at >= len(self._text):
            return None
        text = self._text
        return text[at + 1], text[at + 2], text[at + 3]  # type: ignore[return-value]

    @property
    def parents_pending(self) -> bool:
        """First parents of written rows wait to be written (a read must flush first)."""
        return bool(self._parents)

    def set_parent(self, row: int, parent_row: int) -> None:
        """Record the first parent of the orphan ``row``."""
        self.table.orphan[row] = False
        at = 4 * (row - self._text_first) + 3
        if self._text and at >= 0:  # still pending: amend its row
            self._text[at] = parent_row + 1
            self._orphans.remove(row + 1)
        else:
            self._parents.append((parent_row + 1, row + 1))

    def add_links(self, parent: int, children: list[int], counts: list[int]) -> None:
        """Edges from the row ``parent`` to ``children`` (rows) with their counts t, in
        batch order (a repeated edge: the later t replaces the earlier)."""
        if self.keep_edges and children:
            self._links.append((parent, children, counts))

    def add_edges(self, edges: Iterable[tuple[int, int, int]]) -> None:
        """Edges ``(parent row, child row, t)`` of one batch, in batch order: one
        :meth:`add_links` per parent (in the order parents first appear)."""
        if not self.keep_edges:
            return
        by_parent: dict[int, tuple[list[int], list[int]]] = {}
        for parent, child, count in edges:
            children, counts = by_parent.setdefault(parent, ([], []))
            children.append(child)
            counts.append(count)
        for parent, (children, counts) in by_parent.items():
            self.add_links(parent, children, counts)

    def flush(self) -> None:
        """Write the pending rows (inside the caller's transaction)."""
        conn = self.conn
        if self._text:
            insert_rows(conn, _TEXT, 4, self._text)
            self._text = []
        if self._orphans:
            conn.executemany("INSERT INTO orphans VALUES (?)", ((seq,) for seq in self._orphans))
            self._orphans = []
        if self._parents:
            conn.executemany("UPDATE url_text SET parent_seq = ? WHERE seq = ?", self._parents)
            conn.executemany("DELETE FROM orphans WHERE seq = ?", ((s,) for _, s in self._parents))
            self._parents = []
        if self._links:
            write_links(conn, self._links)
            if self.backlinks is not None:
                for parent, children, _ in self._links:
                    self.backlinks.add(parent, children)
            self._links = []

    @property
    def pending(self) -> bool:
        return bool(self._text or self._orphans or self._parents or self._links)
