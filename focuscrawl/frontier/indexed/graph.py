"""The link graph of the indexed crawl DB: parents, children and the sibling raise.

:class:`IndexedLinkGraph` is the :class:`~focuscrawl.frontier.base.LinkGraph` role of
:class:`~focuscrawl.frontier.indexed.IndexedFrontier`. It reads the parent edges as
:mod:`~focuscrawl.frontier.indexed.links` stores them (one row per page's links;
the reverse direction built in memory on the first ``parents``), after the pending
ones are flushed (:mod:`~focuscrawl.frontier.indexed.storage.cold` holds them until then),
and a URL's first parent from ``url_text``. A DB opened for a strategy that reads
no edges keeps none, and every call here raises
:class:`~focuscrawl.exceptions.FrontierError`.
"""

from __future__ import annotations

import json

import numpy as np

from focuscrawl.frontier.indexed.core import IndexedCore
from focuscrawl.frontier.indexed.links import Backlinks, children_of
from focuscrawl.frontier.rules import checked_score
from focuscrawl.types import URLState

_QUEUED = int(URLState.QUEUED)


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
        core.log.touched(children)
        return len(children)

    def _texts(self, rows: list[int]) -> dict[int, str]:
        """Row -> URL text of ``rows`` (flushed)."""
        found = self._core.conn.execute(
            "SELECT seq, url FROM url_text WHERE seq IN (SELECT value FROM json_each(?))",
            (json.dumps([row + 1 for row in rows]),),
        )
        return {seq - 1: url for seq, url in found}
