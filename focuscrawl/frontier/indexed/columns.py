"""The per-URL values of the indexed crawl DB: score, tier and extra columns, vectorised.

:class:`IndexedColumns` is the :class:`~focuscrawl.frontier.base.UrlColumns` role of
:class:`~focuscrawl.frontier.indexed.IndexedFrontier`: it changes the hot arrays of
known rows (merging scores, the extra float columns, one numpy array each,
journaled only for the rows written since the last commit, rescoring a host,
setting tiers) and reads them (``value``, and ``top``, which answers from its own
caches of a state's best rows: :mod:`~focuscrawl.frontier.indexed.order.top`, fed from the
change log). Every row whose score or tier changed is offered to the pop buffer and
noted for the next commit's journal
(:meth:`~focuscrawl.frontier.indexed.changes.ChangeLog.touched`). Counts and the rows
of a state are the queue's (:class:`~focuscrawl.frontier.indexed.queue.IndexedQueue`),
asked, never written.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterable

import numpy as np
import numpy.typing as npt

from focuscrawl.exceptions import FrontierError
from focuscrawl.frontier.indexed.core import IndexedCore
from focuscrawl.frontier.indexed.order.top import TopCache
from focuscrawl.frontier.indexed.queue import IndexedQueue
from focuscrawl.frontier.indexed.storage.schema import fingerprints
from focuscrawl.frontier.indexed.table import Rows, repeated_values
from focuscrawl.frontier.rules import (
    INT32,
    SCORE,
    aggregated,
    checked_column,
    checked_int,
    checked_score,
    merged,
    written,
)
from focuscrawl.types import Merge, URLState

Floats = npt.NDArray[np.float64]


class IndexedColumns:
    """The per-URL values of the indexed store (see the module docstring)."""

    def __init__(self, core: IndexedCore, queue: IndexedQueue) -> None:
        self._core = core
        self._queue = queue
        self._tops = TopCache(core.table)
        core.log.watch(self._feed_tops, self._tops.emptied)

    def _feed_tops(self) -> None:
        """Give the ``top`` caches the rows changed since they last looked."""
        core, log = self._core, self._core.log
        values = {SCORE: core.table.score, **core.table.extra}
        self._tops.feed(log.arrays, log.ones, log.extra, values)

    def _merge_into(self, array: Floats, rows: Rows, values: Floats, merge: Merge) -> Rows:
        """Merge one value per (distinct) row into ``array``; returns the rows written."""
        if merge is Merge.KEEP or not rows.size:
            return rows[:0]
        if merge is Merge.MAX:
            up = values > array[rows]
            rows, values = rows[up], values[up]
        elif merge is Merge.ADD:
            values = array[rows] + values  # the same IEEE double as merged()
        array[rows] = values
        return rows

    def _known_values(
        self, updates: Iterable[tuple[str, float]], merge: Merge
    ) -> tuple[Rows, Floats]:
        """One value per known URL of ``updates`` (repeats combined with ``merge``)."""
        core = self._core
        pairs = list(updates)
        urls = [url for url, _ in pairs]
        values = np.array([score for _, score in pairs], np.float64)
        nan = np.isnan(values)
        if nan.any():
            raise FrontierError(f"score of {urls[int(np.argmax(nan))]!r} is NaN")
        if merge is Merge.KEEP or not pairs:
            return np.empty(0, np.int64), values[:0]
        keys = fingerprints(urls)
        repeated = repeated_values(keys[:, 0])
        if repeated.any():  # combined in batch order, like memory, in Python: a few URLs
            scores = aggregated([pairs[i] for i in np.flatnonzero(repeated).tolist()], merge)
            keys = np.concatenate([keys[~repeated], fingerprints(list(scores))])
            values = np.concatenate(
                [values[~repeated], np.fromiter(scores.values(), np.float64, len(scores))]
            )
        rows = core.table.find(keys)
        known = rows >= 0
        return rows[known], values[known]

    # -- scores and extra columns ---------------------------------------------------

    def update_scores(self, updates: Iterable[tuple[str, float]], merge: Merge) -> int:
        """Merge new scores into known URLs of *any* state; unknown URLs are ignored.

        Repeated URLs are combined first (``ADD`` sums). Returns the number of URLs
        whose score was written (``MAX``: only those that went up; ``KEEP``: none).
        """
        core = self._core
        pairs = updates if isinstance(updates, list) else list(updates)
        if len(pairs) == 1:  # a page's own cash: no arrays
            url, score = pairs[0]
            return self._update_one(url, score, merge)
        rows, values = self._known_values(pairs, merge)
        rising = merge is Merge.MAX or (
            merge is Merge.ADD and bool(values.size) and values.min() >= 0
        )
        rows = self._merge_into(core.table.score, rows, values, merge)
        if rows.size:
            core.log.touched(rows, rising=bool(rising))
        return len(rows)

    def _update_one(self, url: str, score: float, merge: Merge) -> int:
        """:meth:`update_scores` of one URL, in plain Python (the same arithmetic)."""
        core = self._core
        value = checked_score(url, score)
        row = core.row(url) if merge is not Merge.KEEP else -1
        if row < 0:
            return 0
        array = core.table.view["score"]
        old = array[row]
        if not written(old, value, merge):
            return 0
        array[row] = merged(old, value, merge)
        core.log.touched(row, rising=array[row] >= old)
        return 1

    def update_values(self, column: str, updates: Iterable[tuple[str, float]], merge: Merge) -> int:
        """:meth:`update_scores` for an extra column (``"score"``: the score itself)."""
        core = self._core
        if column == SCORE:
            return self.update_scores(updates, merge)
        array = core.column(column)
        rows, values = self._known_values(updates, merge)
        rows = self._merge_into(array, rows, values, merge)
        if rows.size:
            core.log.noted(column, rows)
        return len(rows)

    def ensure_columns(self, names: Iterable[str]) -> None:
        """Create the extra columns ``names`` (idempotent; durable with the next commit)."""
        core = self._core
        for name in names:
            if name == SCORE or checked_column(name) in core.table.extra:
                continue
            core.begin()
            try:
                core.conn.execute("INSERT INTO columns VALUES (?)", (name,))
            except sqlite3.Error as exc:
                raise FrontierError(f"cannot create column {name!r}: {exc}") from exc
            core.table.add_extra(name)

    def column_names(self) -> list[str]:
        """The extra columns, sorted (``"score"`` is not listed)."""
        core = self._core
        return sorted(core.table.extra)

    def value(self, url: str, column: str) -> float | None:
        """``column`` of ``url``: None if the URL is unknown, 0.0 if never set."""
        core = self._core
        array = core.column(column)
        row = core.row(url)
        return None if row < 0 else float(array[row])

    def top(self, column: str, state: URLState = URLState.FETCHED) -> tuple[str, float] | None:
        """The URL in ``state`` with the highest ``column`` (ties: discovery order).

        Read from a cache of the state's best rows (:mod:`~focuscrawl.frontier.indexed.order.top`),
        built from the rows of the state (:class:`~.order.top.StateRows`, or one pass).
        """
        core, tops = self._core, self._tops
        array = core.column(column)
        wanted = int(state)
        if not self._queue.count(state):
            return None
        self._feed_tops()
        found = tops.best(column, wanted, array)
        if found is None:  # (re)build the cache from every row of the state
            rows = self._queue.rows_in(state)
            tops.build(column, wanted, rows, array[rows])
            found = tops.best(column, wanted, array)
        if found is None:  # NaN values: no order to keep
            raise FrontierError(f"no largest value of column {column!r}")
        best_row, best = found
        if best_row < 0:
            return None
        pending = core.cold.pending_text(best_row)  # a row's text is pending or written:
        if pending is not None:  # no flush of the others for the one asked
            return pending[0], best
        (url,) = core.conn.execute(
            "SELECT url FROM url_text WHERE seq = ?", (best_row + 1,)
        ).fetchone()
        return str(url), best

    def combine_columns(
        self, dst: str, terms: Iterable[tuple[str, float]] = (), *, add: bool = True
    ) -> None:
        """For every known URL: ``dst = (dst if add else 0) + Σ factor · src`` (any state).

        One vectorised pass; only the rows whose value changed are journaled.
        """
        core = self._core
        n = core.table.n
        target = core.column(dst)
        result = target[:n].copy() if add else np.zeros(n, np.float64)
        for src, factor in terms:
            result += float(checked_score(src, factor)) * core.column(src)[:n]
        rows = np.flatnonzero(result != target[:n]).astype(np.int64)
        if not rows.size:
            return
        target[rows] = result[rows]
        if dst == SCORE:
            core.log.touched(rows)
        else:
            core.log.noted(dst, rows)

    # -- hosts and tiers --------------------------------------------------------------

    def update_host(
        self,
        host: str,
        score: float,
        merge: Merge,
        *,
        states: Collection[URLState] = (URLState.QUEUED,),
    ) -> int:
        """Merge ``score`` into every URL of ``host`` in ``states`` (``update_scores`` rules).

        The host's rows come from the table's grouping by host (skipped when the
        per-host counters say there is nothing to find).
        """
        core = self._core
        value = checked_score(host, score)
        host_id = core.host_ids.get(host)
        wanted = sorted({int(URLState(s)) for s in states})
        if (
            host_id is None
            or merge is Merge.KEEP
            or not wanted
            or not self._queue.host_count(host, states)
        ):
            return 0
        table = core.table
        rows = table.host_rows(host_id)
        rows = rows[np.isin(table.state[rows], wanted)]
        rows = self._merge_into(table.score, rows, np.full(len(rows), value), merge)
        if rows.size:
            core.log.touched(rows)
        return len(rows)

    def set_tier(self, updates: Iterable[tuple[str, int]]) -> int:
        """Set the tiers of known URLs (the last of repeats wins); returns how many known URLs."""
        core = self._core
        tiers: dict[str, int] = {}
        for url, tier in updates:
            tiers[url] = (
                tier if INT32[0] <= tier <= INT32[1] else checked_int(f"tier of {url!r}", tier)
            )
        if not tiers:
            return 0
        rows = core.table.find(fingerprints(list(tiers)))
        values = np.fromiter(tiers.values(), np.int32, len(tiers))
        known = rows >= 0
        rows, values = rows[known], values[known]
        core.table.tier[rows] = values
        if not core.table.tiered and values.any():
            core.table.tiered = True
        core.log.touched(rows)
        return len(rows)
