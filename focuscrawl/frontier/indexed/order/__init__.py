"""The pop order of the indexed crawl DB: a buffer of the best queued rows.

This module is the buffer, :class:`BestQueue`; ``order.ranking`` keeps it in
key order between pops, ``order.hosts`` the hosts it truncates, and
``order.select`` the exact selections it falls back on. A pop of the queue
role (:mod:`~focuscrawl.frontier.indexed.queue`) asks it for rows
(:meth:`BestQueue.pop_rows`) and takes them.

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

The buffer is shared among hosts, at most ``cap`` rows of a host: a host with more
is *truncated* at a threshold of its own, which a pop then checks
(:mod:`~focuscrawl.frontier.indexed.order.hosts`). Offers that pile up beyond twice
the buffer's size are cut back to it (T raised, more hosts truncated) over the
buffer alone.

Most pops do not select from the whole buffer: :mod:`~focuscrawl.frontier.indexed.order.ranking`
keeps it sorted between pops (changed rows merged in as late rows) and walks it
from the front; the selection above (:mod:`~focuscrawl.frontier.indexed.order.select`)
serves the pops it cannot settle (a layer limit, a score that fell, a buffer that
ran out, a truncated host in the way).

Tiers are strict: a pop takes only rows of the highest tier among the queued rows
its layer limit allows. The buffer settles that too: its best allowed row has
that tier, and once it also holds an allowed row of a lower tier, every row of the
top tier is in it. While every tier is 0 (``UrlTable.tiered`` False), the tier
column is not even read.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from focuscrawl.frontier.indexed.order.hosts import TruncatedHosts, at_least
from focuscrawl.frontier.indexed.order.ranking import BufferOrder
from focuscrawl.frontier.indexed.order.select import (
    best_capped,
    conclusive,
    host_ranks,
    key_order,
    scan,
    top_tier_rows,
    walk_rows,
)
from focuscrawl.frontier.indexed.table import Rows, UrlTable
from focuscrawl.types import URLState

_QUEUED = int(URLState.QUEUED)
_PILE = 1 << 16  # offered rows noted before they are sorted out
_FEW_OFFERS = 64  # offered one by one, at most: sorted out in Python, not numpy


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
        self._rose: list[Rows] = []  # offers of new rows, or of rows whose scores rose
        self._rose_one: list[int] = []
        self._built = False  # False: rebuild before the next pop
        self._sorted = False  # True: _rows is in key order and every row in it >= T
        self._all = True  # the buffer holds every queued row: no threshold
        self._t_tier = 0
        self._t_score = 0.0
        self._t_row = 0
        # per-host truncation (order.hosts): the cap of the last rebuild,
        # the one the next rebuild uses, and the truncated hosts with their thresholds
        self._cap = self.size
        self._next_cap = self.size
        self._hosts = TruncatedHosts(table)
        self._fell = False  # an offered row fell below its threshold: tidy before the pop
        self._view: BufferOrder | None = None  # the buffer in key order, between pops

    def invalidate(self) -> None:
        """Forget the buffer (after a change too wide to offer row by row)."""
        self._built = False
        self._rows = np.empty(0, np.int64)
        self._extra = []
        self._view = None
        self._forget_offers()

    def _forget_offers(self) -> None:
        self._offered, self._offered_one, self._offered_n = [], [], 0
        self._rose, self._rose_one = [], []

    def offer(self, rows: Rows, *, rising: bool = False) -> None:
        """Rows whose score or state just changed: keep the invariant (see the module).

        ``rising``: the rows are new, or their scores only rose; such a row below its
        threshold was not in the buffer before either, so it asks for no tidying.
        """
        if not self._built or not rows.size:
            return
        (self._rose if rising else self._offered).append(rows)
        self._offered_n += len(rows)
        if self._offered_n > _PILE:
            self._sort_out()

    def offer_list(self, rows: list[int], *, rising: bool = False) -> None:
        """:meth:`offer` of a few rows, as a list."""
        if self._built:
            if rising:
                if not self._all and not self.table.tiered:
                    # a key that rose to below T was below T before: not in the buffer,
                    # and _sort_out would drop it (a gather per row); T only rises until
                    # a rebuild, which forgets the offers. OPIC's cash: most rows of a page
                    score_of, bar = self.table.view["score"], self._t_score
                    rows = [row for row in rows if score_of[row] >= bar]
                self._rose_one += rows
            else:
                self._offered_one += rows
            self._offered_n += len(rows)
            if self._offered_n > _PILE:
                self._sort_out()

    def _sort_out(self) -> None:
        """The offered rows that are queued and ``>= T`` join ``extra``."""
        if not self._offered_n:
            return
        one_by_one = not self._offered and not self._rose  # (a page's links and cash)
        few = len(self._offered_one) + len(self._rose_one) <= _FEW_OFFERS
        if one_by_one and few and self._all and not self._hosts.marks:
            # every queued row joins: their states read in Python, no array for the rows
            # that are not queued (most, in a polite crawl)
            state_of = self.table.view["state"]
            ones = self._offered_one + self._rose_one
            self._forget_offers()
            queued_ones = [row for row in ones if state_of[row] == _QUEUED]
            if queued_ones:
                self._join(np.array(queued_ones, np.int64))
            return
        moved = sum(map(len, self._offered)) + len(self._offered_one)  # the offered rows
        if one_by_one:  # come first, the risen after: one array, not four calls
            rows = np.array(self._offered_one + self._rose_one, np.int64)
        else:
            offered_one = np.array(self._offered_one, np.int64)
            rose_one = np.array(self._rose_one, np.int64)
            rows = np.concatenate([*self._offered, offered_one, *self._rose, rose_one])
        self._forget_offers()
        queued = self.table.state[rows] == _QUEUED
        if not self._all or self._hosts.marks:
            above = self._above(rows)
            # a queued row that may have been in the buffer is now below its threshold:
            # tidy the whole buffer before the pop
            if not above[:moved][queued[:moved]].all():
                self._fell = True
            queued &= above
        rows = rows[queued]
        if rows.size:
            self._join(rows)

    def upcoming(self, k: int) -> list[int]:
        """Queued rows of the ordered buffer's next ``k`` entries (none if unordered):
        what the next pops will likely take."""
        return [] if self._view is None else self._view.upcoming(k)

    def _join(self, rows: Rows) -> None:
        """Queued offered rows at or above their threshold join ``extra`` (late rows)."""
        self._sorted = False  # repeats may pile up
        self._extra.append(rows)
        if self._view is not None:
            self._view.add_late(rows)

    def _above(self, rows: Rows) -> npt.NDArray[np.bool_]:
        """Flags of the ``rows`` at or above the threshold: T, and their host's if truncated."""
        if self._all:
            above = np.ones(len(rows), bool)
        else:
            above = at_least(self.table, rows, self._t_tier, self._t_score, self._t_row)
        if self._hosts.marks:
            above = self._hosts.above(rows, above)
        return above

    def _rebuild(self) -> None:
        table = self.table
        self._cap = self._next_cap
        self._view = None
        self._rows, self._all, marks = best_capped(table, self.size, self._cap)
        self._extra = []
        self._forget_offers()
        self._built = self._sorted = True
        self._fell = False
        if not self._all:
            last = int(self._rows[-1])
            self._t_tier, self._t_row = int(table.tier[last]), last
            self._t_score = float(table.score[last])
        self._hosts.clear()
        if marks.size:
            self._hosts.truncate(marks)

    def _candidates(self) -> Rows:
        """The buffer, cleaned: queued rows of key >= T, in no order (a row may repeat)."""
        if not self._built:
            self._rebuild()
        self._sort_out()
        self._view = None  # the buffer is tidied: sorted again when next walked in order
        rows = self._rows
        if self._extra:
            rows = np.concatenate([rows, *self._extra])
            self._extra = []
        rows = rows[self.table.state[rows] == _QUEUED]
        if self._fell:  # an offered row fell below its threshold (only offered rows move)
            rows = rows[self._above(rows)]
            self._fell = False
        if not self._sorted:
            if len(rows) > 2 * self.size:  # repeats (rows offered again) pile up: drop them
                rows = np.unique(rows)
                if len(rows) > 2 * self.size:  # offers outgrew the buffer: raise T
                    rows = self._trim(rows)
            self._sorted = True
        self._rows = rows
        return rows

    def _trim(self, rows: Rows) -> Rows:
        """The buffer cut back to its best ``size`` rows (capped by host), T raised to the
        last of them, hosts beyond the cap truncated: a rebuild over the buffer alone,
        which holds every queued row at or above the thresholds. ``rows`` are distinct."""
        table = self.table
        rows = rows[key_order(table, rows)]
        hosts = table.host[rows]
        rank = host_ranks(hosts)
        kept = np.flatnonzero(rank < self._cap)
        end = len(rows)
        if len(kept) > self.size:  # T rises to the last row kept
            end = int(kept[self.size - 1]) + 1
            last = int(rows[end - 1])
            self._all = False
            self._t_tier, self._t_row = int(table.tier[last]), last
            self._t_score = float(table.score[last])
        # else the cap alone cuts (a host holds most rows): T stays
        over = hosts[:end][rank[:end] >= self._cap]
        if over.size:
            self._hosts.truncate(
                rows[:end][(rank[:end] == self._cap - 1) & np.isin(hosts[:end], over)]
            )
        return rows[kept[: self.size]]

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
        # A pop of one URL tries the quick path first: a row found proves there is room.
        quick = n == 1 and layer_limit is None
        if quick and (one := self._one(per_host, excluded, queued_per_host)) is not None:
            return [one]
        if per_host:
            # no pop can take more than each host's queued rows, capped: asking for more
            # makes the walk look through the whole buffer for hosts that are not there
            # (one host, a cap of 1: every pop sorted every row; and a one-site crawl's
            # pops come down to one URL here, which the quick path answers)
            room = np.minimum(queued_per_host, per_host)
            if excluded is not None:
                room[excluded] = 0
            n = min(n, int(room.sum()))
            if n <= 0:
                return []
        if not quick:
            if n == 1 and layer_limit is None:
                one = self._one(per_host, excluded, queued_per_host)
                if one is not None:
                    return [one]
            else:
                self._set_cap(per_host, queued_per_host)
        refills = 0
        if layer_limit is None and self._built:
            for _ in range(2):
                taken = self._ordered_walk(n, excluded, per_host)
                if taken is None:
                    break
                blocking = self._hosts.blocking(taken, n, excluded, per_host)
                if not blocking:
                    return taken
                self._refill(blocking)  # the hosts in the way: their next rows, then again
                refills += 1
        fresh = not self._built  # a walk over a buffer built just now
        while True:
            candidates = self._candidates()
            rows, lower = top_tier_rows(self.table, candidates, layer_limit)
            taken = walk_rows(self.table, rows, n, excluded, per_host)
            blocking = self._hosts.blocking(taken, n, excluded, per_host)
            if not blocking:
                if len(taken) >= n or self._all or lower:
                    return taken
                if layer_limit is None and conclusive(
                    self.table, np.unique(candidates), taken, queued_per_host, excluded, per_host
                ):
                    return taken
            if blocking and refills < 4:
                self._refill(blocking)
                refills += 1
            elif not fresh:  # the buffer ran dry: a fresh one
                self._rebuild()
                fresh = True
            else:
                return scan(self.table, n, excluded, per_host, layer_limit)

    def _one(
        self,
        per_host: int,
        excluded: npt.NDArray[np.bool_] | None,
        queued_per_host: npt.NDArray[np.int64],
    ) -> int | None:
        """The pop of one URL of a host not ``excluded``, when the ordered buffer answers
        it at once, in one tier (:meth:`BufferOrder.best_one`,
        :meth:`BufferOrder.best_one_excluding`), and no truncated host's rows below its
        threshold may come before it (:meth:`.TruncatedHosts.blocking`); None: pop the general way.
        Any cap admits one URL. The per-host cap of the buffer is chosen first, once."""
        self._set_cap(per_host, queued_per_host)
        if not self._built or self.table.tiered:
            return None
        view = self._order()
        if view is None:
            return None
        row = view.best_one() if excluded is None else view.best_one_excluding(excluded)
        if row is None or (
            self._hosts.marks and self._hosts.blocking([row], 1, excluded, per_host)
        ):
            return None
        return row

    def _order(self) -> BufferOrder | None:
        """The buffer in key order, sorted again if need be; None if an offered row fell
        below its threshold (the buffer must be tidied first)."""
        self._sort_out()
        if self._fell:
            return None
        view = self._view
        if view is None or view.late_n > self.size // 16 or view.tiered != self.table.tiered:
            rows = self._candidates()
            view = self._view = BufferOrder(self.table, rows)
        return view

    def _ordered_walk(
        self, n: int, excluded: npt.NDArray[np.bool_] | None, per_host: int
    ) -> list[int] | None:
        """The pop over the buffer kept in key order (:mod:`~.order.ranking`); None when it
        cannot say: an offered row fell below its threshold, or the buffer ran out."""
        view = self._order()
        return None if view is None else view.walk(n, excluded, per_host)

    def _set_cap(self, per_host: int, queued_per_host: npt.NDArray[np.int64]) -> None:
        """Choose the per-host cap of the next rebuild; rebuild now if the buffer's is unfit.

        A pop with no per-host cap walks the best rows whatever their hosts, and a
        truncated host would stop it at its threshold: no truncation then. A capped pop
        needs at least its cap of a host's rows (4 times, so that a host serves a few
        pops before it runs dry), and the buffer is shared among the hosts with queued
        rows: a crawl of one site keeps the whole buffer for it. The cap stays under the
        buffer's size so that the URLs of the hosts in flight (excluded from the pop,
        and where OPIC's cash gathers) never fill it.
        """
        if not per_host:
            cap = self.size
        else:
            hosts = max(int(np.count_nonzero(queued_per_host)), 1)
            cap = max(4 * per_host, self.size // 64, self.size // hosts)
        self._next_cap = cap
        # from truncated to not (or back), or a cap under the pop's: rebuild
        unfit = (cap == self.size) != (self._cap == self.size) or per_host > self._cap
        if self._built and unfit:
            self.invalidate()

    def _refill(self, hosts: list[int]) -> None:
        """Let the next ``cap`` rows of each of these truncated hosts into the buffer."""
        self.offer(self._hosts.refill(hosts, self._cap), rising=True)
