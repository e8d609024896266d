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

The buffer is shared among hosts, at most ``cap`` rows of a host (the cap is chosen
at each rebuild: see :meth:`BestQueue._set_cap`). Without it, the hosts a polite
crawl has in flight, which every pop excludes, filled it: OPIC's cash gathers on the
pages of the sites being crawled, so the best 4,096 rows were all theirs, and nearly
every pop rebuilt the buffer and then scanned the whole queue (a long crawl got
slower page by page). A host with more rows than the cap is *truncated*: its
threshold ``T_h`` is the key of its last buffered row, and the invariant becomes:
every queued row of a host whose key is at least ``max(T, T_h)`` is buffered. A pop
is exact as long as no row it takes lies below the threshold of a truncated host
that could still take a URL (not excluded, under its per-host cap): such a host may
hold a better row outside the buffer. That is checked alongside the walk; the
hosts in the way get their next ``cap`` rows let in (their thresholds lowered: one
pass over the host column, not a rebuild) and the pop walks again. Offers that pile
up beyond twice the buffer's size are cut back to it (T raised, more hosts
truncated) over the buffer alone.

Most pops do not select from the whole buffer: :mod:`indexed_order` keeps it sorted
between pops (changed rows merged in as late rows) and walks it from the front;
the selection above serves the pops it cannot settle (a layer limit, a score that
fell, a buffer that ran out, a truncated host in the way).

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

from focuscrawl.frontier.indexed_order import (
    BufferOrder,
    head_rows,
    key_order,
    select_rows,
    take_capped,
    top_rows,
)
from focuscrawl.frontier.indexed_table import CHUNK_ROWS, Rows, UrlTable, drop_repeats
from focuscrawl.types import URLState

_QUEUED = int(URLState.QUEUED)
_PILE = 1 << 16  # offered rows noted before they are sorted out
_FEW_OFFERS = 64  # offered one by one, at most: sorted out in Python, not numpy


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
        best, _ = select_rows(table, rows, m)  # sorted once, at the end
        picks.append(best)
        held += len(best)
        if held > 4 * m:  # the best of the best so far: top-m of a union is top-m of tops
            picks = [select_rows(table, np.concatenate(picks), m)[0]]
            held = len(picks[0])
    rows = np.sort(np.concatenate(picks)) if picks else np.empty(0, np.int64)
    return top_rows(table, rows, m)[0], total <= m


def host_ranks(hosts: npt.NDArray[Any]) -> Rows:
    """The rank of each entry among the entries of its host, in the given order.

    >>> host_ranks(np.array([7, 3, 7, 7, 3])).tolist()
    [0, 0, 1, 2, 1]
    """
    order = np.argsort(hosts, kind="stable")
    grouped = hosts[order]
    index = np.arange(len(hosts))
    starts = np.maximum.accumulate(np.where(np.r_[True, grouped[1:] != grouped[:-1]], index, 0))
    rank = np.empty(len(hosts), np.int64)
    rank[order] = index - starts
    return rank


def best_capped(table: UrlTable, size: int, cap: int) -> tuple[Rows, bool, Rows]:
    """The best ``size`` queued rows with at most ``cap`` of a host, sorted by key.

    Returns them, whether they hold every queued row of a host they do not truncate
    (no threshold below them), and the rows at which hosts were truncated: the
    ``cap``-th best row of each host that has more queued rows above the last row
    taken. The best rows are selected without a cap, ``m`` of them, ``m`` growing
    until the capped selection is full or holds every queued row.
    """
    m = size
    while True:
        rows, complete = best_queued(table, m)
        hosts = table.host[rows]
        rank = host_ranks(hosts)
        kept = np.flatnonzero(rank < cap)
        if len(kept) >= size or complete:
            break
        m *= 4
    full = len(kept) > size or (len(kept) == size and not complete)
    end = int(kept[size - 1]) + 1 if full else len(rows)  # the rows at or above the last taken
    over = hosts[:end][rank[:end] >= cap]
    marks = rows[:end][(rank[:end] == cap - 1) & np.isin(hosts[:end], over)]
    return rows[kept[:size]], not full, marks


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
        # per-host truncation (see the module docstring): the cap of the last rebuild,
        # the one the next rebuild uses, and for each truncated host the key of its
        # last buffered row, as flags/arrays by host id and as a list, best first
        self._cap = self.size
        self._next_cap = self.size
        self._h_flag: npt.NDArray[np.bool_] = np.zeros(0, bool)
        self._h_tier: npt.NDArray[Any] = np.zeros(0, np.int64)
        self._h_score: npt.NDArray[Any] = np.zeros(0, np.float64)
        self._h_row: Rows = np.zeros(0, np.int64)
        self._marks: list[tuple[tuple[int, float, int], int]] = []
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
        if one_by_one and few and self._all and not self._marks:
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
        if not self._all or self._marks:
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

    def _at_least(self, rows: Rows, tier: Any, score: Any, row: Any) -> npt.NDArray[np.bool_]:
        """Flags of the ``rows`` whose key is at least (tier, score, row)."""
        scores = self.table.score[rows]
        above: npt.NDArray[np.bool_] = (scores > score) | ((scores == score) & (rows <= row))
        if self.table.tiered:
            tiers = self.table.tier[rows]
            above = (tiers > tier) | ((tiers == tier) & above)
        return above

    def _above(self, rows: Rows) -> npt.NDArray[np.bool_]:
        """Flags of the ``rows`` at or above the threshold: T, and their host's if truncated."""
        if self._all:
            above = np.ones(len(rows), bool)
        else:
            above = self._at_least(rows, self._t_tier, self._t_score, self._t_row)
        if self._marks:
            hosts = self.table.host[rows]
            inside = np.flatnonzero(hosts < len(self._h_flag))
            at = inside[self._h_flag[hosts[inside]]]
            if at.size:
                h = hosts[at]
                above[at] &= self._at_least(
                    rows[at], self._h_tier[h], self._h_score[h], self._h_row[h]
                )
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
        self._h_flag = np.zeros(0, bool)
        self._h_tier = np.zeros(0, np.int64)
        self._h_score = np.zeros(0, np.float64)
        self._h_row = np.zeros(0, np.int64)
        self._marks = []
        if marks.size:
            self._truncate(marks)

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
            self._truncate(rows[:end][(rank[:end] == self._cap - 1) & np.isin(hosts[:end], over)])
        return rows[kept[: self.size]]

    def _truncate(self, marks: Rows) -> None:
        """Hosts truncated at these rows (one per host), and the list of marks anew."""
        table = self.table
        hosts = table.host[marks]
        width = int(hosts.max()) + 1 if hosts.size else 0
        if width > len(self._h_flag):
            grow = width - len(self._h_flag)
            self._h_flag = np.r_[self._h_flag, np.zeros(grow, bool)]
            self._h_tier = np.r_[self._h_tier, np.zeros(grow, np.int64)]
            self._h_score = np.r_[self._h_score, np.zeros(grow, np.float64)]
            self._h_row = np.r_[self._h_row, np.zeros(grow, np.int64)]
        self._h_flag[hosts] = True
        self._h_tier[hosts] = table.tier[marks]
        self._h_score[hosts] = table.score[marks]
        self._h_row[hosts] = marks
        flagged = np.flatnonzero(self._h_flag)
        at = self._h_row[flagged]
        self._marks = sorted(
            zip(
                zip(self._h_tier[flagged].tolist(), self._h_score[flagged].tolist(),
                    (-at).tolist(), strict=True),
                flagged.tolist(),
                strict=True,
            ),
            reverse=True,
        )  # fmt: skip

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
                blocking = self._blocking(taken, n, excluded, per_host)
                if not blocking:
                    return taken
                self._refill(blocking)  # the hosts in the way: their next rows, then again
                refills += 1
        fresh = not self._built  # a walk over a buffer built just now
        while True:
            candidates = self._candidates()
            rows, lower = self._top_tier_rows(candidates, layer_limit)
            taken = self._walk(rows, n, excluded, per_host)
            blocking = self._blocking(taken, n, excluded, per_host)
            if not blocking:
                if len(taken) >= n or self._all or lower:
                    return taken
                if layer_limit is None and self._conclusive(
                    np.unique(candidates), taken, queued_per_host, excluded, per_host
                ):
                    return taken
            if blocking and refills < 4:
                self._refill(blocking)
                refills += 1
            elif not fresh:  # the buffer ran dry: a fresh one
                self._rebuild()
                fresh = True
            else:
                return self._scan(n, excluded, per_host, layer_limit)

    def _one(
        self,
        per_host: int,
        excluded: npt.NDArray[np.bool_] | None,
        queued_per_host: npt.NDArray[np.int64],
    ) -> int | None:
        """The pop of one URL of a host not ``excluded``, when the ordered buffer answers
        it at once, in one tier (:meth:`BufferOrder.best_one`,
        :meth:`BufferOrder.best_one_excluding`), and no truncated host's rows below its
        threshold may come before it (:meth:`_blocking`); None: pop the general way.
        Any cap admits one URL. The per-host cap of the buffer is chosen first, once."""
        self._set_cap(per_host, queued_per_host)
        if not self._built or self.table.tiered:
            return None
        view = self._order()
        if view is None:
            return None
        row = view.best_one() if excluded is None else view.best_one_excluding(excluded)
        if row is None or (self._marks and self._blocking([row], 1, excluded, per_host)):
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
        """The pop over the buffer kept in key order (:mod:`indexed_order`); None when it
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

    def _blocking(
        self, taken: list[int], n: int, excluded: npt.NDArray[np.bool_] | None, per_host: int
    ) -> list[int]:
        """Truncated hosts that may hold a row that should come before one taken (empty:
        the pop is exact).

        A truncated host's rows below its threshold are not in the buffer. Any of them
        would come before a taken row below that threshold, unless the host is excluded
        or had reached its cap by then (its buffered rows are all above its threshold,
        so it takes no more after); and if fewer than ``n`` rows were taken, before the
        end. The thresholds are walked alongside the taken rows, both best first; at
        the first row passed wrongly, every open host whose threshold is above it.
        """
        marks = self._marks
        if not marks:
            return []
        table = self.table
        counts: dict[int, int] = {}

        def open_host(host: int) -> bool:
            if excluded is not None and host < len(excluded) and excluded[host]:
                return False
            return not per_host or counts.get(host, 0) < per_host

        j = 0
        if taken:
            picked = np.array(taken, np.int64)
            keys = zip(
                table.tier[picked].tolist(), table.score[picked].tolist(), taken,
                table.host[picked].tolist(), strict=True,
            )  # fmt: skip
            for tier, score, row, host in keys:
                key = (tier, score, -row)
                while j < len(marks) and marks[j][0] > key:
                    if open_host(marks[j][1]):
                        return [h for mark, h in marks[j:] if mark > key and open_host(h)]
                    j += 1
                counts[host] = counts.get(host, 0) + 1
        if len(taken) < n:
            return [h for _, h in marks[j:] if open_host(h)]
        return []

    def _refill(self, hosts: list[int]) -> None:
        """Let the next ``cap`` rows of each of these truncated hosts into the buffer (their
        thresholds lowered; untruncated if that was all): one pass over the host column
        instead of a rebuild over every queued row."""
        table = self.table
        wanted = np.zeros(len(self._h_flag), bool)
        wanted[hosts] = True
        found: list[Rows] = []
        for lo in range(0, table.n, CHUNK_ROWS):
            hi = min(lo + CHUNK_ROWS, table.n)
            ids = table.host[lo:hi]
            ok = ids < len(wanted)
            ok[ok] = wanted[ids[ok]]
            ok &= table.state[lo:hi] == _QUEUED
            found.append(np.flatnonzero(ok).astype(np.int64) + lo)
        rows = np.concatenate(found)
        hosts_of = table.host[rows]
        marks: list[Rows] = []
        let_in: list[Rows] = []
        for host in hosts:
            mine = rows[hosts_of == host]
            h = int(host)
            below = mine[~self._at_least(mine, self._h_tier[h], self._h_score[h], self._h_row[h])]
            best, complete = top_rows(table, below, self._cap)
            let_in.append(best)
            if complete:
                self._h_flag[h] = False
            elif best.size:
                marks.append(best[-1:])
        self._truncate(np.concatenate(marks) if marks else np.empty(0, np.int64))
        self.offer(np.concatenate(let_in), rising=True)

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
                if take_capped(more, table.host[more], counts, per_host, head, n):
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
            rows = rows[host_ranks(hosts) < per_host]
        taken: list[int] = rows[:n].tolist()
        return taken
