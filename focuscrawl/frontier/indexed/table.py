"""The hot half of the indexed crawl DB: one numpy array per column, one row per URL.

Row ``r`` is the URL with discovery number ``seq = r + 1``; rows are only ever
appended. A URL is found by its 128-bit fingerprint ``(h, h2)`` through an
open-addressing hash index (linear probing from ``h mod capacity``) holding row
numbers as int32: 4 B per slot at a load factor <= 1/2, i.e. <= 8 B per URL, where
a Python dict would cost > 100 B per URL. Per URL the table costs 37 B of columns
(their growth headroom is reserved, not resident, until written), 8 B per extra
float column, 4-8 B of index and 1 B of flag (``orphan``: no parent recorded yet,
not stored: rebuilt at open from ``url_text``).
"""

from __future__ import annotations

import hashlib
import mmap
from typing import Any

import numpy as np
import numpy.typing as npt

from focuscrawl.exceptions import FrontierError
from focuscrawl.frontier.indexed.storage.schema import COLUMNS, TWO_INT64

Rows = npt.NDArray[np.int64]
_EMPTY = -1
_MIN_CAPACITY = 1024
_GROWTH = 1.25  # headroom of the columns when they grow: memory over copies
_MAX_ROWS = 2**31 - 1  # row numbers are int32 in the index
_MMAP_BYTES = 1 << 16
CHUNK_ROWS = 1 << 16  # whole-table passes go chunk by chunk: small temporaries
SMALL = 48  # up to this many keys, probing in plain Python beats numpy's per-call cost
FEW = 512  # up to this many keys, a vectorised first probe and Python for the rest


def zeros(count: int, dtype: npt.DTypeLike) -> npt.NDArray[Any]:
    """A zeroed array; a large one in its own anonymous memory map.

    Its pages become resident only once written (the growth headroom costs
    nothing until used) and go back to the OS as soon as the array is freed: the
    C heap, where glibc would keep freed blocks of old columns, is not involved.
    """
    kind = np.dtype(dtype)
    size = count * kind.itemsize
    if size < _MMAP_BYTES:
        return np.zeros(count, kind)
    return np.frombuffer(mmap.mmap(-1, size), kind, count)


def drop_repeats(rows: Rows) -> Rows:
    """``rows`` (sorted so that repeats are adjacent) with each row once.

    >>> drop_repeats(np.array([3, 3, 1, 2, 2], np.int64)).tolist()
    [3, 1, 2]
    """
    if len(rows) < 2:
        return rows
    return rows[np.r_[True, rows[1:] != rows[:-1]]]


def repeated_values(h: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
    """Flags the entries whose value occurs more than once.

    >>> repeated_values(np.array([5, 1, 5, 2], np.int64)).tolist()
    [True, False, True, False]
    """
    order = np.argsort(h, kind="stable")
    same = h[order][1:] == h[order][:-1]
    flags = np.zeros(len(h), bool)
    flags[order[1:][same]] = True
    flags[order[:-1][same]] = True
    return flags


class UrlTable:
    """Columns ``h, h2, host, layer, state, score, tier`` (see ``COLUMNS``), the extra
    float columns (``extra``) and the index.

    ``tiered`` is False while every tier is 0 (the pop order then ignores tiers).
    """

    def __init__(self, capacity: int = 0) -> None:
        """An empty table with room for ``capacity`` rows (fill, set ``n``, :meth:`reindex`)."""
        self.n = 0
        capacity = max(_MIN_CAPACITY, capacity)
        self.h: npt.NDArray[np.int64] = zeros(capacity, np.int64)
        self.h2: npt.NDArray[np.int64] = zeros(capacity, np.int64)
        self.host: npt.NDArray[np.int32] = zeros(capacity, np.int32)
        self.layer: npt.NDArray[np.int32] = zeros(capacity, np.int32)
        self.state: npt.NDArray[np.int8] = zeros(capacity, np.int8)
        self.score: npt.NDArray[np.float64] = zeros(capacity, np.float64)
        self.tier: npt.NDArray[np.int32] = zeros(capacity, np.int32)
        self.orphan: npt.NDArray[np.bool_] = zeros(capacity, np.bool_)
        self.extra: dict[str, npt.NDArray[np.float64]] = {}
        self.tiered = False
        self._slots: npt.NDArray[np.int32] = np.empty(0, np.int32)
        # rows grouped by host, built on first use (rescore by host): rows < _by_host_n
        self._by_host: npt.NDArray[np.int32] = np.empty(0, np.int32)
        self._host_starts: npt.NDArray[np.int64] = np.zeros(1, np.int64)
        self._by_host_n = 0
        self.reindex()

    @staticmethod
    def _sized(array: npt.NDArray[Any], capacity: int) -> npt.NDArray[Any]:
        out = zeros(capacity, array.dtype)
        out[: len(array)] = array
        return out

    def column_buffer(self, name: str) -> npt.NDArray[Any]:
        """A whole column, capacity included (for filling before ``n`` is set)."""
        array: npt.NDArray[Any] = getattr(self, name)
        return array

    def column(self, name: str) -> npt.NDArray[Any]:
        """The first ``n`` values of a column (a view)."""
        array: npt.NDArray[Any] = getattr(self, name)
        return array[: self.n]

    def add_extra(self, name: str) -> npt.NDArray[np.float64]:
        """A new extra float column, 0.0 for every row (capacity included)."""
        array: npt.NDArray[np.float64] = zeros(len(self.h), np.float64)
        self.extra[name] = array
        return array

    # -- the index ------------------------------------------------------------------

    def reindex(self) -> None:
        """A fresh index of rows ``0 .. n-1`` at load factor <= 1/2."""
        size = 2 * _MIN_CAPACITY
        while size < 2 * self.n:
            size *= 2
        self._slots = zeros(0, np.int32)  # the old index goes before the new one comes
        self._views()
        self._slots = zeros(size, np.int32)
        self._slots.fill(_EMPTY)
        self._views()
        for lo in range(0, self.n, CHUNK_ROWS):
            self._index(np.arange(lo, min(lo + CHUNK_ROWS, self.n), dtype=np.int64))

    def _views(self) -> None:
        """Memoryviews of the index and the columns: an item of one is a plain int or
        float, read or written several times faster than a numpy scalar (renewed
        with the arrays). ``view`` holds the columns' by name."""
        self._slots_view = self._slots.data
        self._h_view = self.h.data
        self._h2_view = self.h2.data
        self.view = {name: getattr(self, name).data for name in (*COLUMNS, "orphan")}

    def _index(self, rows: Rows) -> None:
        """Put ``rows`` (new, distinct fingerprints) into free slots, in row order."""
        mask = len(self._slots) - 1
        if len(rows) <= SMALL:  # one page's new links: one at a time (any free slot
            table = self._slots_view  # along the probe chain keeps the lookups right)
            for row, h in zip(rows.tolist(), self.h[rows].tolist(), strict=True):
                slot = h & mask
                while table[slot] != _EMPTY:
                    slot = (slot + 1) & mask
                table[slot] = row
            return
        slots = self.h[rows] & mask
        pending = rows
        while pending.size:
            free = np.flatnonzero(self._slots[slots] == _EMPTY)
            # of the rows aiming at one free slot, the first takes it
            _, first = np.unique(slots[free], return_index=True)
            winners = free[first]
            self._slots[slots[winners]] = pending[winners].astype(np.int32)
            keep = np.ones(len(pending), dtype=bool)
            keep[winners] = False
            pending = pending[keep]
            slots = (slots[keep] + 1) & mask  # every loser's slot is taken now: next one

    def find(self, keys: npt.NDArray[np.int64]) -> Rows:
        """Row of each fingerprint ``(h, h2)`` of ``keys`` (shape ``(m, 2)``), -1 if unknown."""
        mask = len(self._slots) - 1
        hq, h2q = keys[:, 0], keys[:, 1]
        if len(keys) <= FEW:  # the first slot of every key at once, the rest in Python
            start = hq & mask
            rows = self._slots[start].astype(np.int64)
            hit = (self.h[rows] == hq) & (self.h2[rows] == h2q)  # an empty slot reads row -1
            found = np.where(hit, rows, _EMPTY)
            more = np.flatnonzero(~hit & (rows != _EMPTY))
            if more.size:
                table, h_of, h2_of = self._slots_view, self._h_view, self._h2_view
                for i, h, h2, slot in zip(
                    more.tolist(),
                    hq[more].tolist(),
                    h2q[more].tolist(),
                    start[more].tolist(),
                    strict=True,
                ):
                    while True:
                        slot = (slot + 1) & mask
                        row = table[slot]
                        if row == _EMPTY:
                            break
                        if h_of[row] == h and h2_of[row] == h2:
                            found[i] = row
                            break
            return found
        result = np.full(len(keys), _EMPTY, np.int64)
        slots = hq & mask
        active = np.arange(len(keys))
        while active.size:
            rows = self._slots[slots].astype(np.int64)
            empty = rows == _EMPTY
            # an empty slot reads row -1 here: masked out by ~empty
            hit = ~empty & (self.h[rows] == hq[active]) & (self.h2[rows] == h2q[active])
            result[active[hit]] = rows[hit]
            go = ~empty & ~hit
            active = active[go]
            slots = (slots[go] + 1) & mask
        return result

    def find_few(self, keys: list[tuple[int, int]]) -> list[int]:
        """:meth:`find_one` of each key of a short list (one call, local lookups)."""
        slots, h_of, h2_of = self._slots_view, self._h_view, self._h2_view
        mask = len(slots) - 1
        found: list[int] = []
        for h, h2 in keys:
            slot = h & mask
            while True:
                row = slots[slot]
                if row == _EMPTY or (h_of[row] == h and h2_of[row] == h2):
                    break
                slot = (slot + 1) & mask
            found.append(row)
        return found

    def lookup(
        self, urls: tuple[str, ...], memo: dict[str, int]
    ) -> tuple[list[int], list[int], dict[int, tuple[int, int]]]:
        """Rows of one page's ``urls`` (-1: unknown), a row from ``memo`` where it has
        one, else by fingerprint; also the indexes of the URLs ``memo`` lacked, and
        index -> fingerprint of the unknown URLs, in order.

        :func:`~focuscrawl.frontier.indexed.storage.schema.keys_of` and :meth:`find_few` in
        one loop: some 30 links a page, and a pass over them costs a few µs each. A
        URL that cannot be stored (a lone surrogate) raises UnicodeEncodeError.
        """
        slots, h_of, h2_of = self._slots_view, self._h_view, self._h2_view
        mask = len(slots) - 1
        blake, halves, get = hashlib.blake2b, TWO_INT64, memo.get
        rows: list[int] = []
        missed: list[int] = []
        unknown: dict[int, tuple[int, int]] = {}
        for i, url in enumerate(urls):
            row = get(url, -2)
            if row == -2:
                missed.append(i)
                h, h2 = halves(blake(url.encode(), digest_size=16).digest())
                h >>= 1  # as keys_of
                slot = h & mask
                while True:
                    row = slots[slot]
                    if row == _EMPTY:
                        unknown[i] = (h, h2)
                        break
                    if h_of[row] == h and h2_of[row] == h2:
                        break
                    slot = (slot + 1) & mask
            rows.append(row)
        return rows, missed, unknown

    def find_one(self, h: int, h2: int) -> int:
        """Row of one fingerprint, -1 if unknown (scalar probing: no array overhead)."""
        slots, h_of, h2_of = self._slots_view, self._h_view, self._h2_view
        mask = len(slots) - 1
        slot = h & mask
        while True:
            row = slots[slot]
            if row == _EMPTY:
                return _EMPTY
            if h_of[row] == h and h2_of[row] == h2:
                return int(row)
            slot = (slot + 1) & mask

    # -- appending ------------------------------------------------------------------

    def _reserve(self, rows: int) -> None:
        if rows > _MAX_ROWS:
            raise FrontierError(f"more than {_MAX_ROWS} URLs in one crawl DB")
        if rows > len(self.h):
            capacity = max(rows, int(len(self.h) * _GROWTH))
            # the views would keep every old column alive until all are copied
            self.view, self._h_view, self._h2_view = {}, memoryview(b""), memoryview(b"")
            for name in (*COLUMNS, "orphan"):
                setattr(self, name, self._sized(self.column(name), capacity))
            for name, array in self.extra.items():
                self.extra[name] = self._sized(array[: self.n], capacity)
            self._views()

    def append(
        self,
        keys: npt.NDArray[np.int64],
        host: npt.NDArray[np.int32],
        layer: int,
        state: npt.NDArray[np.int8],
        score: npt.NDArray[np.float64],
        tier: npt.NDArray[np.int32],
    ) -> Rows:
        """Append rows for fingerprints not yet known; returns their row numbers.

        The new rows are not orphans: the caller flags those without a parent.
        """
        count = len(keys)
        first = self.n
        self._reserve(first + count)
        end = first + count
        self.h[first:end] = keys[:, 0]
        self.h2[first:end] = keys[:, 1]
        self.host[first:end] = host
        self.layer[first:end] = layer
        self.state[first:end] = state
        self.score[first:end] = score
        self.tier[first:end] = tier
        self.orphan[first:end] = False
        if not self.tiered and tier.any():
            self.tiered = True
        self.n = end
        rows = np.arange(first, end, dtype=np.int64)
        if 2 * end > len(self._slots):
            self.reindex()
        else:
            self._index(rows)
        return rows

    def append_few(
        self,
        keys: list[tuple[int, int]],
        hosts: list[int],
        layer: int,
        state: int,
        scores: list[float],
        tiers: list[int],
    ) -> int:
        """:meth:`append` of a few rows, given as Python values; returns the first row."""
        count = len(keys)
        first = self.n
        self._reserve(first + count)
        end = first + count
        view = self.view
        h_of, h2_of, host_of, layer_of = view["h"], view["h2"], view["host"], view["layer"]
        state_of, score_of, tier_of = view["state"], view["score"], view["tier"]
        for row, (h, h2), host, score, tier in zip(
            range(first, end), keys, hosts, scores, tiers, strict=True
        ):
            h_of[row], h2_of[row], host_of[row], layer_of[row] = h, h2, host, layer
            state_of[row], score_of[row], tier_of[row] = state, score, tier
        if not self.tiered and any(tiers):
            self.tiered = True
        self.n = end
        if 2 * end > len(self._slots):
            self.reindex()
            return first
        table, mask = self._slots_view, len(self._slots) - 1
        for row, (h, _) in zip(range(first, end), keys, strict=True):
            slot = h & mask
            while table[slot] != _EMPTY:
                slot = (slot + 1) & mask
            table[slot] = row
        return first

    def host_rows(self, host: int) -> Rows:
        """Rows of one host id, ascending.

        Hosts never change and rows are only appended, so the rows are kept grouped
        by host (4 B per URL, built on first use) and only the rows appended since
        are scanned; the grouping is rebuilt once those exceed an eighth of it.
        """
        if self.n - self._by_host_n > max(CHUNK_ROWS, self._by_host_n // 8):
            hosts = self.host[: self.n]
            self._by_host = zeros(0, np.int32)  # the old grouping goes first
            self._by_host = np.argsort(hosts, kind="stable").astype(np.int32)
            top = int(hosts.max()) + 1 if self.n else 0
            self._host_starts = np.searchsorted(hosts[self._by_host], np.arange(top + 1))
            self._by_host_n = self.n
        known: Rows = np.empty(0, np.int64)
        if host + 1 < len(self._host_starts):
            lo, hi = self._host_starts[host], self._host_starts[host + 1]
            known = self._by_host[lo:hi].astype(np.int64)
        tail = np.flatnonzero(self.host[self._by_host_n : self.n] == host) + self._by_host_n
        return np.concatenate([known, tail.astype(np.int64)])

    def nbytes(self) -> int:
        """Bytes held by the columns and the index (capacity, not just ``n``)."""
        columns: int = sum(getattr(self, name).nbytes for name in (*COLUMNS, "orphan"))
        extra = sum(array.nbytes for array in self.extra.values())
        return columns + extra + self._slots.nbytes + self._by_host.nbytes
