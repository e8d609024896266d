"""Parent edges of the indexed crawl DB, stored as one row per page's links.

A page's out-links share their parent, and they are recorded together: so the
table ``links`` holds, per parent and flush, the child rows (int32) and their link
counts t(parent, child) (int64) as two BLOBs. A page costs one row and one entry
of the ``links_parent`` index, where a row per edge cost ~30 B-tree inserts at
random places of a child index that outgrew the page cache (the CPU per page
then rose over a crawl). ``children`` reads the rows of one parent (the same edge
again: the later count replaces the earlier one).

``parents`` needs the other direction; it is asked for rarely (genre's
``siblings_of = "all-parents"``, sibling raises), so :class:`Backlinks` builds it in
memory on the first call (8 B per edge: child and parent rows, sorted by child)
and then only adds the edges written since, a rebuild folding them in once they
are an eighth of it.
"""

from __future__ import annotations

import sqlite3
from array import array

import numpy as np

from focuscrawl.frontier.indexed.table import CHUNK_ROWS, Rows

_INSERT = "INSERT INTO links(parent_seq, children, counts) VALUES (?, ?, ?)"


class Backlinks:
    """Child row -> parent rows, for every edge of ``links`` (see the module docstring)."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        children: list[Rows] = []
        parents: list[Rows] = []
        for parent_seq, blob in conn.execute("SELECT parent_seq, children FROM links"):
            rows = np.frombuffer(blob, np.int32).astype(np.int64)
            children.append(rows)
            parents.append(np.full(len(rows), parent_seq - 1, np.int64))
        self._fold(children, parents)

    def _fold(self, children: list[Rows], parents: list[Rows]) -> None:
        child = np.concatenate([np.empty(0, np.int64), *children])
        parent = np.concatenate([np.empty(0, np.int64), *parents])
        order = np.lexsort((parent, child))
        self._child = child[order].astype(np.int32)
        self._parent = parent[order].astype(np.int32)
        self._tail: dict[int, list[int]] = {}
        self._tail_n = 0

    def add(self, parent: int, children: list[int]) -> None:
        """Edges from ``parent`` to ``children`` (rows), just written."""
        tail = self._tail
        for child in children:
            tail.setdefault(child, []).append(parent)
        self._tail_n += len(children)
        if self._tail_n > max(CHUNK_ROWS, len(self._child) // 8):
            pairs = [(c, p) for c, ps in tail.items() for p in ps]
            self._fold(
                [self._child.astype(np.int64), np.array([c for c, _ in pairs], np.int64)],
                [self._parent.astype(np.int64), np.array([p for _, p in pairs], np.int64)],
            )

    def parents_of(self, row: int) -> list[int]:
        """The distinct parent rows of ``row``, ascending."""
        lo, hi = np.searchsorted(self._child, [row, row + 1])
        found = set(self._parent[lo:hi].tolist())
        found.update(self._tail.get(row, ()))
        return sorted(found)


def write_links(conn: sqlite3.Connection, pending: list[tuple[int, list[int], list[int]]]) -> None:
    """Insert ``(parent row, child rows, counts)`` groups, one ``links`` row each."""
    conn.executemany(
        _INSERT,
        (
            (parent + 1, array("i", children).tobytes(), array("q", counts).tobytes())
            for parent, children, counts in pending
        ),
    )


def children_of(conn: sqlite3.Connection, parent: int) -> dict[int, int]:
    """Child row -> t(parent, child) of every edge from ``parent`` (the last count wins)."""
    counts: dict[int, int] = {}
    for children, values in conn.execute(
        "SELECT children, counts FROM links WHERE parent_seq = ? ORDER BY id", (parent + 1,)
    ):
        counts.update(zip(array("i", children), array("q", values), strict=True))
    return counts
