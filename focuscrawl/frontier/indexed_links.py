"""The link graph of the indexed crawl DB: parent edges, one row per page's links.

:class:`IndexedLinkGraph` is the :class:`~focuscrawl.frontier.base.LinkGraph` role of
:class:`~focuscrawl.frontier.indexed.IndexedFrontier`: ``parents``, ``children``
and the sibling raise read the edges written here (pending edges are flushed
first: :mod:`~focuscrawl.frontier.indexed_cold` holds them until then). A DB
opened for a strategy that reads no edges keeps none, and these raise
:class:`~focuscrawl.exceptions.FrontierError`.

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

import json
import sqlite3
from array import array
from typing import TYPE_CHECKING

import numpy as np

from focuscrawl.frontier.indexed_table import CHUNK_ROWS, Rows
from focuscrawl.frontier.rules import checked_score
from focuscrawl.types import URLState

if TYPE_CHECKING:  # the core imports the cold writes, which import Backlinks from here
    from focuscrawl.frontier.indexed_core import IndexedCore

_INSERT = "INSERT INTO links(parent_seq, children, counts) VALUES (?, ?, ?)"
_QUEUED = int(URLState.QUEUED)


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


class IndexedLinkGraph:
    """The parent edges of the indexed store (see the module docstring)."""

    def __init__(self, core: IndexedCore) -> None:
        self._core = core

    def parents(self, url: str) -> list[str]:
        """Every recorded parent: the first one first, then in discovery order."""
        core = self._core
        core.edges_kept()
        row = core.row(url)
        if row < 0:
            return []
        cold = core.cold
        if cold.backlinks is None:
            cold.backlinks = Backlinks(core.conn)
        rows = cold.backlinks.parents_of(row)
        (first,) = core.conn.execute(
            "SELECT parent_seq FROM url_text WHERE seq = ?", (row + 1,)
        ).fetchone()
        if first is not None and first - 1 in rows:
            rows.remove(first - 1)
            rows.insert(0, first - 1)
        texts = self._texts(rows)
        return [texts[r] for r in rows]

    def children(self, parent: str) -> list[str]:
        """Every URL that ``parent`` links to, in discovery order."""
        return [url for url, _ in self.children_counts(parent)]

    def children_counts(self, parent: str) -> list[tuple[str, int]]:
        """Every URL that ``parent`` links to with t(parent, url), in discovery order."""
        core = self._core
        core.edges_kept()
        row = core.row(parent)
        if row < 0:
            return []
        counts = children_of(core.conn, row)
        rows = sorted(counts)
        texts = self._texts(rows)
        return [(texts[r], counts[r]) for r in rows]

    def raise_children(self, parent: str, score: float, *, exclude: str | None = None) -> int:
        """Raise every QUEUED child of ``parent`` to at least ``score`` (P3 sibling update)."""
        value = checked_score(parent, score)
        core = self._core
        core.edges_kept()
        parent_row = core.row(parent)
        if parent_row < 0:
            return 0
        children = np.array(sorted(children_of(core.conn, parent_row)), np.int64)
        if exclude is not None:
            children = children[children != core.row(exclude)]
        table = core.table
        children = children[(table.state[children] == _QUEUED) & (table.score[children] < value)]
        table.score[children] = value
        core.touched(children)
        return len(children)

    def _texts(self, rows: list[int]) -> dict[int, str]:
        """Row -> URL text of ``rows`` (flushed)."""
        found = self._core.conn.execute(
            "SELECT seq, url FROM url_text WHERE seq IN (SELECT value FROM json_each(?))",
            (json.dumps([row + 1 for row in rows]),),
        )
        return {seq - 1: url for seq, url in found}
