"""Adding URLs to the indexed crawl DB: one page's out-links without a numpy call each.

:class:`UrlAdds` is ``add`` and ``add_many`` of the queue role
(:class:`~focuscrawl.frontier.indexed.queue.IndexedQueue`), on the shared core
(:class:`~focuscrawl.frontier.indexed.core.IndexedCore`): new rows are appended to
the table, counted in the queue's per-host counters, noted in the queue's rows of
the small states, offered to the buffer of the best rows; known ones get their
``(tier, score)`` merged.

The common batch is one page's links: a few dozen distinct URLs with known
parents. For it, numpy's cost per call (a few µs, some forty calls) outweighed
the work, so :meth:`UrlAdds._add_page` runs in plain Python over memoryviews
of the columns (an item of one is a plain int or float): one loop for the links'
memo lookups, fingerprints (Python ints) and probes, the known links' ``(tier,
score)`` merged item by item with the arithmetic of
:func:`~focuscrawl.frontier.rules.merged_pair`, the new ones appended, their text
rows and parent edges left for the next flush
(:mod:`~focuscrawl.frontier.indexed.storage.cold`). Any other batch (repeated URLs, an
unknown parent, a link to itself or to another link of the batch, a value to
refuse, or more than ``_PAGE`` items, where arrays pay) goes through
:meth:`UrlAdds._add_items`, the general rules written item by item over
arrays; both give the results of :mod:`focuscrawl.frontier.memory`.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from focuscrawl.frontier.indexed.core import MEMO_MAX, IndexedCore
from focuscrawl.frontier.indexed.counts import HostCounts
from focuscrawl.frontier.indexed.order.top import StateRows
from focuscrawl.frontier.indexed.storage.schema import checked_text, fingerprints, keys_of
from focuscrawl.frontier.indexed.table import Rows
from focuscrawl.frontier.rules import (
    INT32,
    INT64,
    checked_int,
    checked_item,
    host_of,
    merged_pair,
)
from focuscrawl.types import Merge, URLState

_QUEUED, _DROPPED = int(URLState.QUEUED), int(URLState.DROPPED)
_PAGE = 1024  # links of one page at most; a bigger batch is worth its numpy calls
Item = tuple[str, float, int, str | None, str, int, int]
Floats = npt.NDArray[np.float64]


class UrlAdds:
    """``add`` and ``add_many`` of the indexed store (see the module docstring)."""

    def __init__(self, core: IndexedCore, counts: HostCounts, states: StateRows) -> None:
        self._core = core
        self._counts = counts  # the queue's: new rows enter a state
        self._states = states

    def add(
        self,
        url: str,
        score: float,
        *,
        depth: int,
        parent: str | None,
        host: str,
        merge: Merge = Merge.MAX,
        layer: int = 0,
        count: int = 1,
        tier: int = 0,
    ) -> bool:
        """Add a URL, or merge ``(tier, score)`` into it (any state); record the parent edge."""
        item = (url, score, depth, parent, host, count, tier)
        return self.add_many([item], merge=merge, layer=layer) == 1

    def add_many(self, items: Iterable[Item], *, merge: Merge = Merge.MAX, layer: int = 0) -> int:
        """Batch :meth:`add` of ``(url, score, depth, parent, host, count, tier)``.

        Equivalent to adding the items one by one, in order (an unknown parent
        becomes a DROPPED URL just before the item that names it), except that
        repeated URLs are combined first. Returns how many URLs were new.
        """
        checked_int("layer", layer)
        batch = items if isinstance(items, list) else list(items)
        if not batch:
            return 0
        new = self._add_page(batch, merge, layer) if len(batch) <= _PAGE else None
        return self._add_items(batch, merge, layer) if new is None else new

    # -- one page's links -----------------------------------------------------------

    def _add_page(self, items: list[Item], merge: Merge, layer: int) -> int | None:
        """The common batch, in plain Python over memoryviews; None (nothing done) if it
        is not one (see the module docstring)."""
        core = self._core
        urls, scores, depths, parents, hosts, counts, tiers = zip(*items, strict=True)
        named = set(parents)
        named.discard(None)
        if len(set(urls)) != len(urls) or not named.isdisjoint(urls):
            return None
        others = list(named)
        memo = core.memo
        try:  # the same refusals as _add_items, which then words them (a memo URL passed them)
            # rows of URLs met lately (a row is a URL's for good): no fingerprint, no probe
            rows, missed, keys = core.table.lookup(urls, memo)
            found = {p: memo.get(p, -2) for p in others}
            unknown = [p for p, row in found.items() if row == -2]
            parent_keys = keys_of(unknown)
            values = list(map(float, scores))
            total = sum(values)  # NaN, or inf - inf: let _add_items decide
            linked = (
                counts
                if None not in parents
                else [c for c, p in zip(counts, parents, strict=True) if p is not None]
            )
            if (
                total != total
                or min(tiers) < INT32[0]
                or max(tiers) > INT32[1]
                or (linked and (min(linked) < INT64[0] or max(linked) > INT64[1]))
            ):
                return None
            levels = list(map(int, tiers))
        except (TypeError, ValueError, OverflowError):  # UnicodeEncodeError included
            return None
        found.update(zip(unknown, core.table.find_few(parent_keys), strict=True))
        seq_of: dict[str | None, int | None] = {None: None}
        for parent, row in found.items():
            if row < 0:  # an unknown parent: a DROPPED row first
                return None
            seq_of[parent] = row + 1
        new = list(keys)  # the unknown URLs' indexes, in order
        for i in new:  # a new host is written: refuse the batch before any change
            if hosts[i] not in core.host_ids:
                checked_text(hosts[i])
        core.begin()
        if len(new) < len(rows) and merge is not Merge.KEEP:
            self._merge_few(rows, values, levels, merge)
        if new:
            host_ids = [core.host_id(hosts[i]) for i in new]
            self._counts.fit(max(host_ids))
            first = core.table.append_few(
                list(keys.values()),
                host_ids,
                layer,
                _QUEUED,
                [values[i] for i in new],
                [levels[i] for i in new],
            )
            added = list(range(first, first + len(new)))
            per_host = self._counts.cells
            for host in host_ids:
                per_host[5 * host + _QUEUED] += 1
            self._states.entered(_QUEUED, added)
            core.best.offer_list(added, rising=True)
            core.cold.add_text(
                first,
                [urls[i] for i in new],
                [depths[i] for i in new],
                [seq_of[parents[i]] for i in new],
            )
            for i, row in zip(new, added, strict=True):
                rows[i] = row
        if len(memo) > MEMO_MAX:
            memo.clear()
        for i in missed:
            memo[urls[i]] = rows[i]
        for parent in unknown:
            memo[parent] = found[parent]
        if named:
            self._link_few(rows, parents, counts, seq_of)
        return len(new)

    def _merge_few(
        self, rows: list[int], values: list[float], tiers: list[int], merge: Merge
    ) -> None:
        """:meth:`_merge_pairs` into the known ``rows`` (-1: skipped), item by item."""
        core = self._core
        table = core.table
        score_of, tier_of = table.view["score"], table.view["tier"]
        touched = [row for row in rows if row >= 0]
        flat = not table.tiered and not any(tiers)  # every tier 0 stays 0: only scores
        if merge is Merge.ADD and flat:
            for row, value in zip(rows, values, strict=True):
                if row >= 0:
                    score_of[row] += value
        elif merge is Merge.ADD:
            for row, value, tier in zip(rows, values, tiers, strict=True):
                if row >= 0:
                    score_of[row] += value
                    if tier > tier_of[row]:
                        tier_of[row] = tier
        elif merge is Merge.MAX:
            touched = []
            for row, value, tier in zip(rows, values, tiers, strict=True):
                if row >= 0 and (tier, value) > (tier_of[row], score_of[row]):
                    score_of[row], tier_of[row] = value, tier
                    touched.append(row)
        else:
            for row, value, tier in zip(rows, values, tiers, strict=True):
                if row >= 0:
                    score_of[row], tier_of[row] = value, tier
        if not flat and not table.tiered and any(tier_of[row] for row in touched):
            table.tiered = True
        # MAX only raises, ADD of amounts >= 0 too (OPIC's cash): no buffered row fell
        rising = merge is Merge.MAX or (merge is Merge.ADD and min(values, default=0.0) >= 0)
        core.log.touched(touched, rising=rising)

    def _link_few(
        self,
        rows: list[int],
        parents: tuple[str | None, ...],
        counts: tuple[int, ...],
        seq_of: dict[str | None, int | None],
    ) -> None:
        """The parent edges of a page's links (and the first parent of orphans)."""
        core = self._core
        cold, orphan = core.cold, core.table.view["orphan"]
        if any(map(orphan.__getitem__, rows)):  # rare: a seed or a referrer met again
            for row, parent in zip(rows, parents, strict=True):
                if orphan[row] and parent is not None:
                    cold.set_parent(row, (seq_of[parent] or 0) - 1)
        if not cold.keep_edges:  # only first parents (no strategy reads the edges)
            return
        cold.add_edges(
            ((seq_of[parent] or 0) - 1, row, int(count))
            for row, count, parent in zip(rows, counts, parents, strict=True)
            if parent is not None
        )

    def _new_rows(self, rows: Rows, host_ids: npt.NDArray[np.int32], state: int) -> None:
        """Count, track and offer new rows of one ``state``."""
        counts = self._counts.counts
        if len(rows) <= 32:  # np.add.at costs more than a short loop
            for host in host_ids.tolist():
                counts[host, state] += 1
        else:
            np.add.at(counts[:, state], host_ids, 1)
        self._states.entered(state, rows)
        self._core.best.offer(rows, rising=True)

    def _merge_pairs(
        self, rows: Rows, tiers: npt.NDArray[np.int32], values: Floats, merge: Merge
    ) -> None:
        """Merge one ``(tier, score)`` per (distinct) row (:func:`~.rules.merged_pair`)."""
        table = self._core.table
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
        self._core.log.touched(rows, rising=rising)

    # -- any batch --------------------------------------------------------------------

    def _add_items(self, items: list[Item], merge: Merge, layer: int) -> int:
        """Any batch, item by item (see :meth:`add_many`)."""
        core = self._core
        batch: dict[str, tuple[int, float]] = {}  # url -> merged (tier, score) of the batch
        firsts: dict[str, tuple[str, int, int]] = {}  # url -> host, depth, state (first seen)
        edges: list[tuple[str, str, int]] = []
        for url, score, depth, named, host, n, t in items:
            value, parent, count, tier = checked_item(url, score, named, n, t)
            if parent is not None:
                if parent not in firsts:
                    firsts[parent] = (host_of(parent), max(depth - 1, 0), _DROPPED)
                edges.append((url, parent, count))
            old = batch.get(url)
            pair = (tier, value)
            batch[url] = pair if old is None else merged_pair(*old, *pair, merge)
            if url not in firsts:
                firsts[url] = (host, depth, _QUEUED)
        urls = list(firsts)
        keys = fingerprints(urls)
        rows = core.table.find(keys)
        core.begin()
        new = np.flatnonzero(rows < 0)
        new_urls = [urls[i] for i in new.tolist()]
        for url in new_urls:  # before any change: a batch is stored whole or not at all
            checked_text(url)
            checked_text(firsts[url][0])
        # merge into URLs known before this batch, whatever their state
        known = [i for i in np.flatnonzero(rows >= 0).tolist() if urls[i] in batch]
        if known and merge is not Merge.KEEP:
            pairs = [batch[urls[i]] for i in known]
            self._merge_pairs(
                rows[known],
                np.array([tier for tier, _ in pairs], np.int32),
                np.array([score for _, score in pairs], np.float64),
                merge,
            )
        if new.size:
            rows[new] = self._append(new_urls, keys[new], batch, firsts, layer, merge)
        if edges:
            row_of = dict(zip(urls, rows.tolist(), strict=True))
            cold, orphan = core.cold, core.table.view["orphan"]
            for child, parent, _ in edges:  # the first edge naming an orphan: its parent
                if orphan[row_of[child]]:
                    cold.set_parent(row_of[child], row_of[parent])
            # one links row per parent, its edges in batch order
            cold.add_edges((row_of[parent], row_of[child], count) for child, parent, count in edges)
        return sum(1 for i in new.tolist() if firsts[urls[i]][2] == _QUEUED)

    def _append(
        self,
        urls: list[str],
        keys: npt.NDArray[np.int64],
        batch: dict[str, tuple[int, float]],
        firsts: dict[str, tuple[str, int, int]],
        layer: int,
        merge: Merge,
    ) -> Rows:
        """New rows (orphans for now) for ``urls`` of :meth:`_add_items`."""
        core = self._core
        hosts = np.array([core.host_id(firsts[u][0]) for u in urls], np.int32)
        if hosts.size:
            self._counts.fit(int(hosts.max()))
        states = np.array([firsts[u][2] for u in urls], np.int8)
        # each new queued URL goes in with the batch's combined key; a parent with
        # (0, 0.0), into which its own later items of the batch are merged
        pairs = [
            batch[u]
            if firsts[u][2] == _QUEUED
            else merged_pair(0, 0.0, *batch[u], merge)
            if u in batch
            else (0, 0.0)
            for u in urls
        ]
        tiers = np.array([tier for tier, _ in pairs], np.int32)
        scores = np.array([score for _, score in pairs], np.float64)
        rows = core.table.append(keys, hosts, layer, states, scores, tiers)
        for state in (_QUEUED, _DROPPED):
            mine = states == state
            if mine.any():
                self._new_rows(rows[mine], hosts[mine], state)
        core.cold.add_text(int(rows[0]), urls, [firsts[u][1] for u in urls], [None] * len(urls))
        return rows
