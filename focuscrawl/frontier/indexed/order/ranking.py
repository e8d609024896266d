"""The pop buffer of the indexed store, kept in key order between pops.

:class:`~focuscrawl.frontier.indexed.order.BestQueue` holds the best queued rows
in no order; selecting the best few of them on every pop cost some fifteen numpy
calls over the whole buffer (4,096 rows and more), 0.1–0.2 ms, and a polite crawl
pops a URL or two after every page. :class:`BufferOrder` sorts the buffer once
and walks it from the front in short chunks. Rows that change afterwards are
not moved: every change is offered to the queue, and the rows it lets into the
buffer join here as *late* rows, merged into each chunk by their current key.
An entry whose row left the queue or whose key moved (it rose: the row is among
the late ones at its new key) is skipped; a key that fell makes the queue tidy
the whole buffer and build a new order. Entries before the first valid one are
never looked at again (a row that comes back to the queue is offered again).

Shortcuts for a polite crawl, which pops one URL after each page: a pop of one URL
takes the first valid entry (of a host not excluded) against the best late row in a
few Python steps (:meth:`BufferOrder.best_one`, :meth:`BufferOrder.best_one_excluding`);
a pop with the hosts in flight excluded begins past the front entries it already
found all theirs (the span, :meth:`BufferOrder._span_start`), where every pop looked
through them again; and the late rows are read only when a bound on their best key,
kept as they come in, does not fall below the entry found (breadth-first, it does:
they are new links).
"""

from __future__ import annotations

import math
from collections import defaultdict

import numpy as np
import numpy.typing as npt

from focuscrawl.frontier.indexed.order.select import head_rows, key_order, take_capped
from focuscrawl.frontier.indexed.table import Rows, UrlTable, drop_repeats
from focuscrawl.types import URLState

_QUEUED = int(URLState.QUEUED)
_STEPS = 32  # entries the one-URL pops look at before they leave the pop to walk
_Key = tuple[int, float, int]  # (tier, score, row): higher tier, higher score, lower row first


def _best_key(rows: Rows, scores: npt.NDArray[np.float64]) -> tuple[float, int]:
    """The best key of ``rows`` (not empty) at ``scores``, as ``(score, -row)``: the
    highest score, the lowest row at it (the higher tuple is the better key)."""
    top = scores.max()
    return float(top), -int(rows[scores == top].min())


class BufferOrder:
    """The rows of a buffer sorted by the keys they had then, plus the late rows."""

    def __init__(self, table: UrlTable, rows: Rows) -> None:
        """``rows``: the buffer's queued rows, in any order, repeats allowed."""
        self.table = table
        self.tiered = table.tiered
        self.rows = drop_repeats(rows[key_order(table, rows)])
        self.score = table.score[self.rows]
        self.tier = table.tier[self.rows] if self.tiered else None
        self.cursor = 0  # entries before it are no longer valid
        self._rows_view = self.rows.data  # item access as Python values
        self._score_view = self.score.data
        # the span [cursor, _span_end): entries looked at by walks that found there no
        # row of a host not excluded; per host, the positions of its entries that were
        # valid then, and how many of them are known stale (see _span_start)
        self._span_end = 0
        self._span: defaultdict[int, list[int]] = defaultdict(list)
        self._span_done: dict[int, int] = {}
        self._late: list[Rows] = []
        self.late_n = 0
        self._next = 0  # the entry a one-URL pop took last: the next pops go on from it
        # a bound from above on the late rows' best key (see _best_key): the best read
        # as they came in. A score that rises is offered again and comes in again, with
        # the new one; one that falls leaves the bound above it.
        self._late_best: tuple[float, int] = (-math.inf, 0)

    def add_late(self, rows: Rows) -> None:
        """Rows let into the buffer since it was sorted (their keys are read when used)."""
        if not len(rows):
            return
        self._late.append(rows)
        self.late_n += len(rows)
        self._late_best = max(self._late_best, _best_key(rows, self.table.score[rows]))

    def upcoming(self, k: int) -> list[int]:
        """The rows of the ``k`` entries from the one a one-URL pop took last (from the
        cursor if a walk came since) that are still valid.

        With hosts excluded, the entries from the cursor are those of the hosts in
        flight, read long before their turn; the next pops go on past the last one.
        """
        state_of, score_of = self.table.view["state"], self.table.view["score"]
        lo = max(self.cursor, self._next)
        rows, scores = self.rows[lo : lo + k].tolist(), self.score[lo : lo + k].tolist()
        return [
            row
            for row, score in zip(rows, scores, strict=True)
            if state_of[row] == _QUEUED and score_of[row] == score
        ]

    def _late_rows(self) -> Rows:
        """The late rows still queued (the list is compacted to them)."""
        if not self._late:
            return np.empty(0, np.int64)
        late: Rows = np.concatenate(self._late) if len(self._late) > 1 else self._late[0]
        late = late[self.table.state[late] == _QUEUED]
        self._late = [late]
        return late

    def _at_least(self, rows: Rows, key: _Key) -> npt.NDArray[np.bool_]:
        """Flags of the ``rows`` whose current key is at least ``key``."""
        tier, score, row = key
        scores = self.table.score[rows]
        above: npt.NDArray[np.bool_] = (scores > score) | ((scores == score) & (rows <= row))
        if self.tiered:
            tiers = self.table.tier[rows]
            above = (tiers > tier) | ((tiers == tier) & above)
        return above

    def best_one(self) -> int | None:
        """``walk(1, None, cap)`` for a single tier, in a few Python steps: the first valid
        entry from the cursor against the best late row. None when it cannot say at
        once (the first ``_STEPS`` entries are stale, or the order ran out): walk then.

        A polite crawl of one site pops one URL after every page (its host has one slot
        free); the chunked walk cost some twenty numpy calls for it.
        """
        table = self.table
        state_of, score_of = table.view["state"], table.view["score"]
        rows, scores = self._rows_view, self._score_view
        k, end = self.cursor, min(len(rows), self.cursor + _STEPS)
        while k < end:
            row = rows[k]
            if state_of[row] == _QUEUED and score_of[row] == scores[k]:
                break
            k += 1
        else:
            return None
        self.cursor = self._next = k  # the entries before it are stale (as the walk's lead)
        return self._against_late(row, scores[k], None)

    def best_one_excluding(self, excluded: npt.NDArray[np.bool_]) -> int | None:
        """``walk(1, excluded, cap)`` for a single tier, in Python steps: the first valid
        entry of a host not excluded (from the span, else looked for past it, the span
        growing over what is passed) against the best late row of such a host. None
        when it cannot say at once (``_STEPS`` entries past the span hold none): walk then.

        A polite crawl of many hosts pops one URL after each page with the hosts in
        flight excluded; the chunked walk spent some twenty numpy calls on it.
        """
        table = self.table
        state_of, score_of, host_of = table.view["state"], table.view["score"], table.view["host"]
        rows, scores = self._rows_view, self._score_view
        k = self._span_start(excluded)
        if k >= self._span_end:  # none in the span: look past it, growing it
            span, lead = self._span, k == self.cursor
            end = min(len(rows), k + _STEPS)
            while k < end:
                row = rows[k]
                if state_of[row] == _QUEUED and score_of[row] == scores[k]:
                    if lead:  # the entries before the first valid one are stale
                        self.cursor, lead = k, False
                    host = host_of[row]
                    if not excluded[host]:
                        break
                    span[host].append(k)
                k += 1
            else:
                self._span_end = k
                if lead:
                    self.cursor = k
                return None
            self._span_end = k
        self._next = k
        return self._against_late(rows[k], scores[k], excluded)

    def _against_late(self, row: int, score: float, excluded: npt.NDArray[np.bool_] | None) -> int:
        """``row`` (a valid entry, at ``score``), or the best late row of a host not
        ``excluded`` if that comes first."""
        front = (score, -row)
        if self._late_best <= front:  # (breadth-first: the late rows are new links, at or
            return int(row)  # below the front; each pop read them all, 3 numpy calls)
        late = self._late_rows()
        if not late.size:
            self._late_best = (-math.inf, 0)
            return int(row)
        table = self.table
        best = self._late_best = _best_key(late, table.score[late])
        if excluded is not None and best > front:  # the host mask only when a late row wins
            late = late[~excluded[table.host[late]]]
            if not late.size:
                return int(row)
            best = _best_key(late, table.score[late])
        return -best[1] if best > front else int(row)

    def _span_start(self, excluded: npt.NDArray[np.bool_]) -> int:
        """Where a walk with ``excluded`` hosts may begin: at the first valid entry in the
        span of a host not excluded now, else at the span's end.

        A polite crawl of a few big sites pops with their hosts in flight excluded, and
        the front of the order is all theirs: each pop looked through the same entries
        again (two chunks, some twenty-five numpy calls, for one URL). Every valid entry
        before the start is an excluded host's, which the walk would skip. An entry only
        turns stale (a row that comes back to the queue is offered again, a late row,
        and the walk's first chunk takes every late row ranked before its end).
        """
        if self._span_end <= self.cursor:
            self._span_end, self._span, self._span_done = self.cursor, defaultdict(list), {}
            return self.cursor
        state_of, score_of = self.table.view["state"], self.table.view["score"]
        rows, scores = self._rows_view, self._score_view
        start = self._span_end
        for host, places in self._span.items():
            if excluded[host]:
                continue
            j = self._span_done.get(host, 0)
            while j < len(places):
                k = places[j]
                row = rows[k]
                if state_of[row] == _QUEUED and score_of[row] == scores[k]:
                    start = min(start, k)
                    break
                j += 1
            self._span_done[host] = j
        return start

    def _extend_span(
        self, i: int, chunk: Rows, valid: npt.NDArray[np.bool_], excluded: npt.NDArray[np.bool_]
    ) -> bool:
        """Grow the span over ``chunk`` (its entries from ``i``, where the span ends) up to
        its first valid entry of a host not excluded; True if it took the whole chunk."""
        hosts = self.table.host[chunk]
        open_ = valid & ~excluded[hosts]
        stop = int(np.argmax(open_)) if open_.any() else len(chunk)
        at = np.flatnonzero(valid[:stop])
        span = self._span
        for host, k in zip(hosts[at].tolist(), (at + i).tolist(), strict=True):
            span[host].append(k)
        self._span_end = i + stop
        return stop == len(chunk)

    def walk(
        self, n: int, excluded: npt.NDArray[np.bool_] | None, per_host: int
    ) -> list[int] | None:
        """The ``n`` best rows of the buffer in key order, skipping excluded hosts and
        hosts at ``per_host`` (0: no cap); None if the buffer ran out first.

        Tiers are strict: the walk ends at the first row of a lower tier than the
        buffer's best row, with what it took (all of the top tier in the buffer)."""
        table = self.table
        state, score, host = table.state, table.score, table.host
        late = self._late_rows()
        size = max(256, 4 * n)
        i, first = self.cursor, True
        spanning = excluded is not None and self.tier is None
        if spanning:
            assert excluded is not None
            i = self._span_start(excluded)
            first = i == self.cursor  # the cursor moves over entries looked at only
            spanning = i == self._span_end  # a walk from inside the span leaves it as it is
        prev: _Key | None = None  # the key that ended the last chunk
        taken: list[int] = []
        counts: dict[int, int] = {}
        top: int | None = None  # the tier of the best row
        while True:
            chunk = self.rows[i : i + size]
            valid = (state[chunk] == _QUEUED) & (score[chunk] == self.score[i : i + size])
            if self.tier is not None:
                valid &= table.tier[chunk] == self.tier[i : i + size]
            if first:
                lead = int(np.argmax(valid)) if valid.any() else len(chunk)
                self.cursor = i + lead
                first = False
            if spanning:
                assert excluded is not None
                spanning = self._extend_span(i, chunk, valid, excluded)
            end: _Key | None = None
            if len(chunk):
                last = i + len(chunk) - 1
                tier = int(self.tier[last]) if self.tier is not None else 0
                end = (tier, float(self.score[last]), int(self.rows[last]))
            rows = chunk[valid]
            merge = False
            if late.size:  # the late rows of this chunk's range of keys
                sel = self._at_least(late, end) if end is not None else np.ones(len(late), bool)
                if prev is not None:
                    sel &= ~self._at_least(late, prev)
                if sel.any():
                    rows = np.concatenate([rows, late[sel]])
                    merge = True
            lower = False
            if self.tier is not None and rows.size:  # (in no order yet: a mask, no sort)
                tiers = table.tier[rows]
                top = int(tiers.max()) if top is None else top
                same = tiers == top
                lower = not same.all()
                rows = rows[same]
            # the excluded hosts first, then sort what is left: the front of the order is
            # often all rows of hosts in flight (OPIC's cash gathers there)
            if excluded is not None and rows.size:
                rows = rows[~excluded[host[rows]]]
            parts = [rows]
            if merge and len(rows) > 1:
                # the best few first (a selection, then a sort of those), all only if need be
                head = head_rows(table, rows, 4 * n + 8)
                parts = [head, np.empty(0, np.int64)]
                if len(head) < len(rows):
                    parts[1] = rows  # sorted below, if reached; begins with head
            done = 0
            for k, part in enumerate(parts):
                if k == 1 and part.size:
                    part = drop_repeats(part[key_order(table, part)])[done:]
                done += len(part)
                if take_capped(part, host[part], counts, per_host, taken, n):
                    return taken
            if lower:
                return taken
            if end is None:
                return None
            prev, i = end, i + size
            size *= 4  # the front may be all excluded hosts' rows (OPIC): few steps over them
