"""The pop order of the indexed crawl DB: a buffer of the best queued rows.

Sorting a million queued scores per pop would cost ~100 ms, so :class:`BestQueue`
keeps the top ``size`` queued rows by key (tier desc, score desc, then seq asc) and
the key ``T`` of the worst of them. Invariant: every QUEUED row whose key is ``>= T`` is in
the buffer (or in ``extra``, rows offered since the last pop). A row whose score or
state changes is *offered*: if it is queued and its key is ``>= T`` it joins
``extra`` (offers are only noted, and sorted out all at once before the next pop
or once they pile up: one page's few rows are not worth a numpy call each);
nothing ever has to leave the buffer, because a pop first drops every
buffered row that is no longer queued or fell below ``T``. The rows left are then
exactly the head of the whole queue, in no order (a row offered again may be there
twice until the buffer is tidied); a pop selects the best few of them
(``np.partition``), sorts only those and walks them in order (skipping excluded or
capped hosts): sorting the whole buffer on every pop cost more than the rest of
the pop together. Only when the best few are not enough is the whole buffer
sorted, and only when it runs out before ``n`` URLs are
taken is the buffer rebuilt from all queued rows (``np.argpartition``-style
selection, ~10 ms at a million), and if even a fresh buffer is not enough (many
URLs of excluded hosts or later layers at the top), the pop scans every eligible
row instead: exact in every case.

Tiers are strict: a pop takes only rows of the highest tier among the queued rows
its layer limit allows. The buffer settles that too: its best allowed row has
that tier, and once it also holds an allowed row of a lower tier, every row of the
top tier is in it. While every tier is 0 (``UrlTable.tiered`` False), the tier
column is not even read.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from focuscrawl.frontier.indexed_table import CHUNK_ROWS, Rows, UrlTable, drop_repeats
from focuscrawl.types import URLState

_QUEUED = int(URLState.QUEUED)
_PILE = 1 << 16  # offered rows noted before they are sorted out


def _largest(values: npt.NDArray[Any], rows: Rows, m: int) -> npt.NDArray[np.bool_]:
    """Flags of the ``m`` largest ``values`` (``0 < m <= len``); ties: the lowest ``rows``."""
    kth = np.partition(values, len(values) - m)[len(values) - m]  # the m-th largest
    above: npt.NDArray[np.bool_] = values > kth
    tied = np.flatnonzero(values == kth)
    need = m - int(np.count_nonzero(above))
    if len(tied) > need:
        tied = tied[np.argsort(rows[tied], kind="stable")[:need]]
    above[tied] = True
    return above


def key_order(table: UrlTable, rows: Rows) -> Rows:
    """The permutation that sorts ``rows`` by key (tier desc, score desc, row asc)."""
    if table.tiered:
        return np.lexsort((rows, -table.score[rows], -table.tier[rows]))
    return np.lexsort((rows, -table.score[rows]))


def top_rows(table: UrlTable, rows: Rows, m: int) -> tuple[Rows, bool]:
    """The best ``m`` of ``rows`` (any order), sorted by key; True if all of them.

    Ties at the cut are broken by seq like everywhere else: the selection is exact.
    """
    complete = len(rows) <= m
    if not complete:
        scores = table.score[rows]
        if table.tiered:  # every row of a higher tier than the cut's, the best of the cut's
            tiers = table.tier[rows]
            cut = np.partition(tiers, len(rows) - m)[len(rows) - m]
            keep = tiers > cut
            at = np.flatnonzero(tiers == cut)
            keep[at[_largest(scores[at], rows[at], m - int(np.count_nonzero(keep)))]] = True
        else:
            keep = _largest(scores, rows, m)
        rows = rows[keep]
    return rows[key_order(table, rows)], complete


def head_rows(table: UrlTable, rows: Rows, m: int) -> Rows:
    """The best ``m`` entries of ``rows`` (any order, repeats allowed), sorted by key,
    each row once: exactly the first rows of the queue order over ``rows``."""
    return drop_repeats(top_rows(table, rows, m)[0])


def top_tier(table: UrlTable, layer_limit: int | None) -> int | None:
    """The highest tier of the queued rows (of layers ``<= layer_limit``); None if none."""
    best: int | None = None
    for lo in range(0, table.n, CHUNK_ROWS):
        hi = min(lo + CHUNK_ROWS, table.n)
        ok = table.state[lo:hi] == _QUEUED
        if layer_limit is not None:
            ok &= table.layer[lo:hi] <= layer_limit
        if ok.any():
            tier = int(table.tier[lo:hi][ok].max())
            best = tier if best is None else max(best, tier)
    return best


def best_queued(
    table: UrlTable,
    m: int,
    layer_limit: int | None = None,
    excluded: npt.NDArray[np.bool_] | None = None,
    tier: int | None = None,
) -> tuple[Rows, bool]:
    """The best ``m`` eligible queued rows, sorted by key; True if those are all of them.

    Chunk by chunk, so that the temporaries stay small whatever the table size.
    """
    picks: list[Rows] = []
    held = total = 0
    for lo in range(0, table.n, CHUNK_ROWS):
        hi = min(lo + CHUNK_ROWS, table.n)
        ok = table.state[lo:hi] == _QUEUED
        if layer_limit is not None:
            ok &= table.layer[lo:hi] <= layer_limit
        if excluded is not None:
            ok &= ~excluded[table.host[lo:hi]]
        if tier is not None:
            ok &= table.tier[lo:hi] == tier
        rows = np.flatnonzero(ok).astype(np.int64) + lo
        total += len(rows)
        best, _ = top_rows(table, rows, m)
        picks.append(best)
        held += len(best)
        if held > 4 * m:  # the best of the best so far: top-m of a union is top-m of tops
            picks = [top_rows(table, np.sort(np.concatenate(picks)), m)[0]]
            held = len(picks[0])
    rows = np.sort(np.concatenate(picks)) if picks else np.empty(0, np.int64)
    return top_rows(table, rows, m)[0], total <= m


class BestQueue:
    """Buffer of the best queued rows of a :class:`UrlTable` (see the module docstring)."""

    def __init__(self, table: UrlTable, size: int = 4096) -> None:
        self.table = table
        self.size = max(int(size), 1)
        self._rows: Rows = np.empty(0, np.int64)
        self._extra: list[Rows] = []
        self._offered: list[Rows] = []  # offers not yet sorted out
        self._offered_one: list[int] = []
        self._offered_n = 0
        self._built = False  # False: rebuild before the next pop
        self._sorted = False  # True: _rows is in key order and every row in it >= T
        self._all = True  # the buffer holds every queued row: no threshold
        self._t_tier = 0
        self._t_score = 0.0
        self._t_row = 0

    def invalidate(self) -> None:
        """Forget the buffer (after a change too wide to offer row by row)."""
        self._built = False
        self._rows = np.empty(0, np.int64)
        self._extra = []
        self._forget_offers()

    def _forget_offers(self) -> None:
        self._offered, self._offered_one, self._offered_n = [], [], 0

    def offer(self, rows: Rows) -> None:
        """Rows whose score or state just changed: keep the invariant (see the module)."""
        if not self._built or not rows.size:
            return
        self._offered.append(rows)
        self._offered_n += len(rows)
        if self._offered_n > _PILE:
            self._sort_out()

    def offer_one(self, row: int) -> None:
        """:meth:`offer` of one row."""
        self.offer_list([row])

    def offer_list(self, rows: list[int]) -> None:
        """:meth:`offer` of a few rows, as a list."""
        if self._built:
            self._offered_one += rows
            self._offered_n += len(rows)
            if self._offered_n > _PILE:
                self._sort_out()

    def _sort_out(self) -> None:
        """The offered rows that are queued and ``>= T`` join ``extra``."""
        if not self._offered_n:
            return
        rows = np.concatenate([*self._offered, np.array(self._offered_one, np.int64)])
        self._forget_offers()
        rows = rows[self.table.state[rows] == _QUEUED]
        if not rows.size:  # rows that left the queue are dropped by the state filter
            return
        self._sorted = False  # a buffered score may have moved, even below T
        if not self._all:
            rows = rows[self._above(rows)]
        if rows.size:
            self._extra.append(rows)

    def _above(self, rows: Rows) -> npt.NDArray[np.bool_]:
        scores = self.table.score[rows]
        above: npt.NDArray[np.bool_] = (scores > self._t_score) | (
            (scores == self._t_score) & (rows <= self._t_row)
        )
        if self.table.tiered:
            tiers = self.table.tier[rows]
            above = (tiers > self._t_tier) | ((tiers == self._t_tier) & above)
        return above

    def _rebuild(self) -> None:
        self._rows, self._all = best_queued(self.table, self.size)
        self._extra = []
        self._forget_offers()
        self._built = self._sorted = True
        if not self._all:
            last = int(self._rows[-1])
            self._t_tier, self._t_row = int(self.table.tier[last]), last
            self._t_score = float(self.table.score[last])

    def _candidates(self) -> Rows:
        """The buffer, cleaned: queued rows of key >= T, in no order (a row may repeat)."""
        if not self._built:
            self._rebuild()
        self._sort_out()
        rows = self._rows
        if self._extra:
            rows = np.concatenate([rows, *self._extra])
            self._extra = []
        rows = rows[self.table.state[rows] == _QUEUED]
        if not self._sorted:  # offers came in: a score may have moved, even below T
            if not self._all:
                rows = rows[self._above(rows)]
            if len(rows) > 2 * self.size:  # repeats (rows offered again) pile up: drop them
                rows = np.unique(rows)
                if self._all and len(rows) > 4 * self.size:  # the queue outgrew the buffer
                    self._rebuild()
                    return self._rows
            self._sorted = True
        self._rows = rows
        return rows

    def pop_rows(
        self,
        n: int,
        queued_per_host: npt.NDArray[np.int64],
        excluded: npt.NDArray[np.bool_] | None,
        per_host: int,
        layer_limit: int | None,
    ) -> list[int]:
        """Rows of the ``n`` best eligible queued URLs, in key order (states untouched).

        ``queued_per_host`` counts the QUEUED rows of each host id, ``excluded``
        flags host ids to skip (same length), ``per_host`` caps URLs per host (0: no
        cap), ``layer_limit`` is the highest layer allowed (None: any).
        """
        if per_host:
            # no pop can take more than each host's queued rows, capped: asking for more
            # makes the walk look through the whole buffer for hosts that are not there
            # (one host, a cap of 1: every pop sorted every row)
            room = np.minimum(queued_per_host, per_host)
            if excluded is not None:
                room[excluded] = 0
            n = min(n, int(room.sum()))
            if n <= 0:
                return []
        stale = self._built  # else the first walk is over a buffer built just now
        for attempt in range(2):
            if attempt and not stale:
                break
            if attempt:  # the buffer ran dry: a fresh one
                self._rebuild()
            candidates = self._candidates()
            rows, lower = self._top_tier_rows(candidates, layer_limit)
            taken = self._walk(rows, n, excluded, per_host)
            if len(taken) >= n or self._all or lower:
                return taken
            if layer_limit is None and self._conclusive(
                np.unique(candidates), taken, queued_per_host, excluded, per_host
            ):
                return taken
        return self._scan(n, excluded, per_host, layer_limit)

    def _top_tier_rows(self, rows: Rows, layer_limit: int | None) -> tuple[Rows, bool]:
        """The allowed rows of the buffer's top tier; True if an allowed row of a lower
        tier is there too (then every queued row of the top tier is among them)."""
        table = self.table
        if layer_limit is not None:
            rows = rows[table.layer[rows] <= layer_limit]
        if not table.tiered or not rows.size:
            return rows, False
        tiers = table.tier[rows]
        top = tiers == tiers.max()
        if top.all():
            return rows, False
        return rows[top], True

    def _conclusive(
        self,
        rows: Rows,
        taken: list[int],
        queued_per_host: npt.NDArray[np.int64],
        excluded: npt.NDArray[np.bool_] | None,
        per_host: int,
    ) -> bool:
        """True if no queued row outside the buffer could have been taken.

        Such a row needs a host that is not excluded, not capped, and has queued
        rows beyond those in the buffer: a host-sized test instead of a scan, which
        settles the common short pop (every host with URLs capped or cooling down).
        """
        hosts = len(queued_per_host)
        outside = queued_per_host - np.bincount(self.table.host[rows], minlength=hosts)
        open_hosts = outside > 0
        if excluded is not None:
            open_hosts &= ~excluded
        if per_host:
            took = np.bincount(self.table.host[np.array(taken, np.int64)], minlength=hosts)
            open_hosts &= took < per_host
        return not bool(open_hosts.any())

    def _scan(
        self,
        n: int,
        excluded: npt.NDArray[np.bool_] | None,
        per_host: int,
        layer_limit: int | None,
    ) -> list[int]:
        """Pop over every eligible queued row: the best ``m``, ``m`` growing until enough."""
        tier = top_tier(self.table, layer_limit) if self.table.tiered else None
        m = max(4 * n, 1024)
        while True:
            best, complete = best_queued(self.table, m, layer_limit, excluded, tier)
            taken = self._walk(best, n, None, per_host)
            if len(taken) >= n or complete:
                return taken
            m *= 4

    def _walk(
        self, rows: Rows, n: int, excluded: npt.NDArray[np.bool_] | None, per_host: int
    ) -> list[int]:
        """Greedy over ``rows`` (sorted by key): skip excluded and capped hosts."""
        table = self.table
        if excluded is not None:
            rows = rows[~excluded[table.host[rows]]]
        # most pops are settled by the best few rows: select them, sort only those
        k = 4 * n + 8 if per_host else n
        prefix = head_rows(table, rows, k)
        complete = len(prefix) >= len(rows)
        if not per_host and (len(prefix) >= n or complete):
            best: list[int] = prefix[:n].tolist()
            return best
        if per_host:
            head: list[int] = []
            counts: dict[int, int] = {}
            done = 0  # a longer prefix starts with the shorter one: go on from there
            while True:
                more = prefix[done:]
                for row, host in zip(more.tolist(), table.host[more].tolist(), strict=True):
                    if counts.get(host, 0) < per_host:
                        counts[host] = counts.get(host, 0) + 1
                        head.append(row)
                        if len(head) >= n:
                            return head
                if complete:
                    return head
                k *= 4  # the best k entries (a row may repeat), not k rows
                if 4 * k > len(rows):  # most of the rows: sort them all instead
                    break
                done = len(prefix)
                prefix = head_rows(table, rows, k)
                complete = len(prefix) >= len(rows)
            # the rest needs every row, in order
        rows = drop_repeats(rows[key_order(table, rows)])
        if per_host:
            hosts = table.host[rows]
            distinct = np.unique(hosts).tolist()
            if len(distinct) <= 8:  # few hosts (a site crawl): the first rows of each
                firsts = [np.flatnonzero(hosts == h)[:per_host] for h in distinct]
                head = rows[np.sort(np.concatenate(firsts))][:n].tolist()
                return head
            # rank of each row among the rows of its host, in key order
            order = np.argsort(hosts, kind="stable")
            grouped = hosts[order]
            index = np.arange(len(rows))
            starts = np.maximum.accumulate(
                np.where(np.r_[True, grouped[1:] != grouped[:-1]], index, 0)
            )
            rank = np.empty(len(rows), np.int64)
            rank[order] = index - starts
            rows = rows[rank < per_host]
        taken: list[int] = rows[:n].tolist()
        return taken
