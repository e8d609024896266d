"""Score, column, host and tier writes of the indexed crawl DB, all vectorised.

The part of :class:`~focuscrawl.frontier.indexed.IndexedFrontier` that changes
the hot arrays of known rows: merging ``(tier, score)`` pairs or scores, the extra
float columns (one numpy array each, journaled only for the rows written since the
last commit), rescoring a host and setting tiers. Every changed row is offered to
the pop buffer and noted for the next commit's journal.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Collection, Iterable

import numpy as np
import numpy.typing as npt

from focuscrawl.exceptions import FrontierError
from focuscrawl.frontier.indexed_queue import BestQueue
from focuscrawl.frontier.indexed_reads import IndexedReads
from focuscrawl.frontier.indexed_schema import fingerprints
from focuscrawl.frontier.indexed_table import Rows, repeated_values
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


class IndexedColumns(IndexedReads):
    """The in-place writes of the indexed store (see the module docstring)."""

    _queue: BestQueue
    _changed: list[Rows]  # rows whose state, score or tier changed since the commit
    _changed_one: list[int]  # the same, one row at a time
    _extra_changed: dict[str, list[Rows]]  # extra column -> rows written since the commit

    def _begin(self) -> None:
        if not self._conn.in_transaction:
            self._conn.execute("BEGIN")

    def _set_state(self, rows: Rows, state: int) -> None:
        """Move ``rows`` to ``state``, keeping the per-host counters."""
        table, counts = self._table, self._counts
        if len(rows) <= 32:  # np.add.at costs more than a short loop
            per_host = self._count_cells()
            for host, old in zip(
                table.host[rows].tolist(), table.state[rows].tolist(), strict=True
            ):
                per_host[5 * host + old] -= 1
                per_host[5 * host + state] += 1
        else:
            np.subtract.at(counts, (table.host[rows], table.state[rows]), 1)
            np.add.at(counts, (table.host[rows], np.full(len(rows), state, np.int8)), 1)
        table.state[rows] = state
        self._states.entered(state, rows)
        self._touched(rows)

    def _set_state_one(self, row: int, state: int) -> None:
        """:meth:`_set_state` of one row, without arrays."""
        view = self._table.view
        host, old = view["host"][row], view["state"][row]
        per_host = self._count_cells()
        per_host[5 * host + old] -= 1
        per_host[5 * host + state] += 1
        view["state"][row] = state
        self._states.entered_one(state, row)
        self._touched_one(row)

    def _touched(self, rows: Rows, *, rising: bool = False) -> None:
        """Rows whose state, score or tier changed (``rising``: only scores that rose)."""
        self._changed.append(rows)
        self._queue.offer(rows, rising=rising)

    def _touched_one(self, row: int, *, rising: bool = False) -> None:
        self._changed_one.append(row)
        self._queue.offer_list([row], rising=rising)

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

    def _merge_pairs(
        self, rows: Rows, tiers: npt.NDArray[np.int32], values: Floats, merge: Merge
    ) -> None:
        """Merge one ``(tier, score)`` per (distinct) row (:func:`~.rules.merged_pair`)."""
        table = self._table
        if merge is Merge.KEEP or not rows.size:
            return
        if merge is Merge.MAX:
            old = table.tier[rows]
            up = (tiers > old) | ((tiers == old) & (values > table.score[rows]))
            rows, tiers, values = rows[up], tiers[up], values[up]
        rising = merge is Merge.MAX
        if merge is Merge.ADD:
            rising = bool(values.min() >= 0)  # cash handed out: keys only rise
            values = table.score[rows] + values
            tiers = np.maximum(table.tier[rows], tiers)
        table.score[rows] = values
        table.tier[rows] = tiers
        if not table.tiered and tiers.any():
            table.tiered = True
        self._touched(rows, rising=rising)

    def _known_values(
        self, updates: Iterable[tuple[str, float]], merge: Merge
    ) -> tuple[Rows, Floats]:
        """One value per known URL of ``updates`` (repeats combined with ``merge``)."""
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
        rows = self._table.find(keys)
        known = rows >= 0
        return rows[known], values[known]

    # -- scores and extra columns ---------------------------------------------------

    def update_scores(self, updates: Iterable[tuple[str, float]], merge: Merge) -> int:
        """Merge new scores into known URLs of *any* state; unknown URLs are ignored.

        Repeated URLs are combined first (``ADD`` sums). Returns the number of URLs
        whose score was written (``MAX``: only those that went up; ``KEEP``: none).
        """
        pairs = updates if isinstance(updates, list) else list(updates)
        if len(pairs) == 1:  # a page's own cash: no arrays
            url, score = pairs[0]
            return self._update_one(url, score, merge)
        rows, values = self._known_values(pairs, merge)
        rising = merge is Merge.MAX or (
            merge is Merge.ADD and bool(values.size) and values.min() >= 0
        )
        rows = self._merge_into(self._table.score, rows, values, merge)
        if rows.size:
            self._touched(rows, rising=bool(rising))
        return len(rows)

    def _update_one(self, url: str, score: float, merge: Merge) -> int:
        """:meth:`update_scores` of one URL, in plain Python (the same arithmetic)."""
        value = checked_score(url, score)
        row = self._row(url) if merge is not Merge.KEEP else -1
        if row < 0:
            return 0
        array = self._table.view["score"]
        old = array[row]
        if not written(old, value, merge):
            return 0
        array[row] = merged(old, value, merge)
        self._touched_one(row, rising=array[row] >= old)
        return 1

    def update_values(self, column: str, updates: Iterable[tuple[str, float]], merge: Merge) -> int:
        """:meth:`update_scores` for an extra column (``"score"``: the score itself)."""
        if column == SCORE:
            return self.update_scores(updates, merge)
        array = self._extra_column(column)
        rows, values = self._known_values(updates, merge)
        rows = self._merge_into(array, rows, values, merge)
        if rows.size:
            self._extra_changed.setdefault(column, []).append(rows)
        return len(rows)

    def ensure_columns(self, names: Iterable[str]) -> None:
        """Create the extra columns ``names`` (idempotent; durable with the next commit)."""
        for name in names:
            if name == SCORE or checked_column(name) in self._table.extra:
                continue
            self._begin()
            try:
                self._conn.execute("INSERT INTO columns VALUES (?)", (name,))
            except sqlite3.Error as exc:
                raise FrontierError(f"cannot create column {name!r}: {exc}") from exc
            self._table.add_extra(name)

    def column_names(self) -> list[str]:
        """The extra columns, sorted (``"score"`` is not listed)."""
        return sorted(self._table.extra)

    def combine_columns(
        self, dst: str, terms: Iterable[tuple[str, float]] = (), *, add: bool = True
    ) -> None:
        """For every known URL: ``dst = (dst if add else 0) + Σ factor · src`` (any state).

        One vectorised pass; only the rows whose value changed are journaled.
        """
        n = self._table.n
        target = self._extra_column(dst)
        result = target[:n].copy() if add else np.zeros(n, np.float64)
        for src, factor in terms:
            result += float(checked_score(src, factor)) * self._extra_column(src)[:n]
        rows = np.flatnonzero(result != target[:n]).astype(np.int64)
        if not rows.size:
            return
        target[rows] = result[rows]
        if dst == SCORE:
            self._touched(rows)
        else:
            self._extra_changed.setdefault(dst, []).append(rows)

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
        value = checked_score(host, score)
        host_id = self._host_ids.get(host)
        wanted = sorted({int(URLState(s)) for s in states})
        if host_id is None or merge is Merge.KEEP or not self._counts[host_id, wanted].any():
            return 0
        table = self._table
        rows = table.host_rows(host_id)
        rows = rows[np.isin(table.state[rows], wanted)]
        rows = self._merge_into(table.score, rows, np.full(len(rows), value), merge)
        if rows.size:
            self._touched(rows)
        return len(rows)

    def set_tier(self, updates: Iterable[tuple[str, int]]) -> int:
        """Set the tiers of known URLs (the last of repeats wins); returns how many known URLs."""
        tiers: dict[str, int] = {}
        for url, tier in updates:
            tiers[url] = (
                tier if INT32[0] <= tier <= INT32[1] else checked_int(f"tier of {url!r}", tier)
            )
        if not tiers:
            return 0
        rows = self._table.find(fingerprints(list(tiers)))
        values = np.fromiter(tiers.values(), np.int32, len(tiers))
        known = rows >= 0
        rows, values = rows[known], values[known]
        self._table.tier[rows] = values
        if not self._table.tiered and values.any():
            self._table.tiered = True
        self._touched(rows)
        return len(rows)
