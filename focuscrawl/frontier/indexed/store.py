"""The default crawl DB: hot columns in numpy arrays, everything durable in SQLite.

A :class:`~focuscrawl.frontier.base.FrontierStore` built for score updates: per
URL, score, tier, state, host, layer and fingerprint live in numpy arrays indexed by
a dense row number (:mod:`~focuscrawl.frontier.indexed.table`: 37 B per URL, 8 B
per extra float column, <= 8 B of hash index), so a batch of score updates is a few
vectorised operations; the best queued URLs are kept in a buffer
(:mod:`~focuscrawl.frontier.indexed.order` and its parts) so a
pop selects from thousands of rows, not millions. SQLite holds the cold data (URL text, depth, first parent, parent
edges if the strategy reads them, hosts, meta), written in bulk inside the open
transaction (:mod:`~focuscrawl.frontier.indexed.storage.cold`), and, at each commit, the
changed rows of the hot columns as one journal BLOB
(:mod:`~focuscrawl.frontier.indexed.storage.disk`). Opening the DB loads the arrays from
the snapshot and replays the journal.

The store is built by composition: one shared core, the open DB
(:class:`~focuscrawl.frontier.indexed.core.IndexedCore`), and one object per role
of the protocol, each given the core:

* the queue (:mod:`~focuscrawl.frontier.indexed.queue`): add (one page's links in
  plain Python, :mod:`~focuscrawl.frontier.indexed.adds`), pop, mark, requeue,
  states and counts;
* the columns (:mod:`~focuscrawl.frontier.indexed.columns`): scores, tiers and the
  extra float columns written in place, ``value`` and ``top``;
* the link graph (:mod:`~focuscrawl.frontier.indexed.graph`): parents, children
  and the sibling raise;
* the journal (:mod:`~focuscrawl.frontier.indexed.storage.journal`): meta, commit, close.

:class:`IndexedFrontier` only builds them and hands out their methods.

Measured at a million queued URLs (``benchmarks/bench_frontier.py --n 1000000
--pages 20000``, a shared 2-core machine at load 0.5-3, 2026-11-27): a page-shaped
OTIE workload (30 out-links, pops of 16, a commit every 50 pages) ~190-210k ops per
CPU-second, parent edges kept or not; score updates + pops ~550-670k per
CPU-second; ~71 B per URL of resident memory growth (the whole process: ~110 B
per URL).

Writes form one transaction until the commit; a crash (or a close without commit)
loses exactly the uncommitted work.
The semantics are those of :mod:`focuscrawl.frontier.memory` (read it first), with
one difference: duplicates inside one ``add_many``
batch are combined before they are merged, so ``Merge.ADD`` sums may round
differently from one-by-one adds.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from focuscrawl.frontier.indexed.columns import IndexedColumns
from focuscrawl.frontier.indexed.core import IndexedCore
from focuscrawl.frontier.indexed.graph import IndexedLinkGraph
from focuscrawl.frontier.indexed.queue import IndexedQueue
from focuscrawl.frontier.indexed.storage.journal import IndexedJournal
from focuscrawl.frontier.roles import RoleStore


class IndexedFrontier(RoleStore):
    """Crawl DB in one SQLite file with its hot columns in memory (~49 B per URL).

    ``buffer_size`` is the number of best queued URLs kept sorted for ``pop``;
    the journal is folded into the snapshot once it holds more than
    ``compact_rows`` rows (default: twice the URLs, at least 2**20). ``parents``:
    the caller reads parent edges (``parents``, ``children``, ``children_counts``,
    ``raise_children``); a new DB keeps them only then (else those raise
    :class:`~focuscrawl.exceptions.FrontierError`), a DB that keeps them goes on
    keeping them, and asking them of one that does not is a FrontierError at open.
    Semantics: see :mod:`focuscrawl.frontier.memory`.

    Each method of the protocol is handed on to its role (:class:`~focuscrawl.frontier.roles.RoleStore`), also given as a property
    (``queue``, ``columns``, ``graph``, ``journal``): :class:`~.queue.IndexedQueue`,
    :class:`~.columns.IndexedColumns`, :class:`~.graph.IndexedLinkGraph`,
    :class:`~.storage.journal.IndexedJournal`.
    """

    _queue: IndexedQueue
    _columns: IndexedColumns
    _graph: IndexedLinkGraph
    _journal: IndexedJournal

    def __init__(
        self,
        path: Path | str,
        *,
        buffer_size: int = 4096,
        compact_rows: int | None = None,
        parents: bool = True,
    ) -> None:
        self.path = Path(path)
        core = IndexedCore(self.path, buffer_size=buffer_size, parents=parents)
        self._queue = IndexedQueue(core)
        self._columns = IndexedColumns(core, self._queue)
        self._graph = IndexedLinkGraph(core)
        self._journal = IndexedJournal(core, compact_rows)

    # -- the roles, for consumers that take only the ones they use ---------------------

    @property
    def queue(self) -> IndexedQueue:
        """The URLs and their queue (:class:`~focuscrawl.frontier.base.UrlQueue`)."""
        return self._queue

    @property
    def columns(self) -> IndexedColumns:
        """Scores, tiers and extra columns (:class:`~focuscrawl.frontier.base.UrlColumns`)."""
        return self._columns

    @property
    def graph(self) -> IndexedLinkGraph:
        """The parent edges (:class:`~focuscrawl.frontier.base.LinkGraph`)."""
        return self._graph

    @property
    def journal(self) -> IndexedJournal:
        """Meta, commit and close (:class:`~focuscrawl.frontier.base.RunJournal`)."""
        return self._journal


if TYPE_CHECKING:  # mypy proves the protocol is implemented, role by role
    from focuscrawl.frontier.base import FrontierStore, LinkGraph, RunJournal, UrlColumns, UrlQueue

    _STORE: type[FrontierStore] = IndexedFrontier
    _QUEUE: type[UrlQueue] = IndexedQueue
    _COLUMNS: type[UrlColumns] = IndexedColumns
    _GRAPH: type[LinkGraph] = IndexedLinkGraph
    _JOURNAL: type[RunJournal] = IndexedJournal
