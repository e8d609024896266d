"""The hosts truncated in the buffer of the best queued rows, and their thresholds.

The buffer (:class:`~focuscrawl.frontier.indexed.order.BestQueue`) is shared among
hosts, at most ``cap`` rows of a host (the cap is chosen at each rebuild: see
:meth:`~focuscrawl.frontier.indexed.order.BestQueue._set_cap`). Without it, the
hosts a polite crawl has in flight, which every pop excludes, filled it: OPIC's
cash gathers on the pages of the sites being crawled, so the best 4,096 rows were
all theirs, and nearly every pop rebuilt the buffer and then scanned the whole
queue (a long crawl got slower page by page). A host with more rows than the cap
is *truncated*: its threshold ``T_h`` is the key of its last buffered row, and the
buffer's invariant becomes: every queued row of a host whose key is at least
``max(T, T_h)`` is buffered. A pop is exact as long as no row it takes lies below
the threshold of a truncated host that could still take a URL (not excluded,
under its per-host cap): such a host may hold a better row outside the buffer.
That is checked alongside the walk (:meth:`TruncatedHosts.blocking`); the hosts in
the way get their next ``cap`` rows let in (:meth:`TruncatedHosts.refill`: their
thresholds lowered, one pass over the host column, not a rebuild) and the pop walks
again.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from focuscrawl.frontier.indexed.order.select import top_rows
from focuscrawl.frontier.indexed.table import CHUNK_ROWS, Rows, UrlTable
from focuscrawl.types import URLState

_QUEUED = int(URLState.QUEUED)


def at_least(table: UrlTable, rows: Rows, tier: Any, score: Any, row: Any) -> npt.NDArray[np.bool_]:
    """Flags of the ``rows`` whose key is at least (tier, score, row) (each a value, or
    an array of one per row)."""
    scores = table.score[rows]
    above: npt.NDArray[np.bool_] = (scores > score) | ((scores == score) & (rows <= row))
    if table.tiered:
        tiers = table.tier[rows]
        above = (tiers > tier) | ((tiers == tier) & above)
    return above


class TruncatedHosts:
    """The truncated hosts of one buffer (see the module docstring).

    For each, the key of its last buffered row, as flags and arrays by host id, and
    as ``marks``, a list of ``((tier, score, -row), host)``, best first (empty: no
    host is truncated).
    """

    def __init__(self, table: UrlTable) -> None:
        self.table = table
        self.clear()

    def clear(self) -> None:
        """No host truncated (a rebuild starts from here)."""
        self._flag: npt.NDArray[np.bool_] = np.zeros(0, bool)
        self._tier: npt.NDArray[Any] = np.zeros(0, np.int64)
        self._score: npt.NDArray[Any] = np.zeros(0, np.float64)
        self._row: Rows = np.zeros(0, np.int64)
        self.marks: list[tuple[tuple[int, float, int], int]] = []

    def truncate(self, marks: Rows) -> None:
        """Hosts truncated at these rows (one per host), and the list of marks anew."""
        table = self.table
        hosts = table.host[marks]
        width = int(hosts.max()) + 1 if hosts.size else 0
        if width > len(self._flag):
            grow = width - len(self._flag)
            self._flag = np.r_[self._flag, np.zeros(grow, bool)]
            self._tier = np.r_[self._tier, np.zeros(grow, np.int64)]
            self._score = np.r_[self._score, np.zeros(grow, np.float64)]
            self._row = np.r_[self._row, np.zeros(grow, np.int64)]
        self._flag[hosts] = True
        self._tier[hosts] = table.tier[marks]
        self._score[hosts] = table.score[marks]
        self._row[hosts] = marks
        flagged = np.flatnonzero(self._flag)
        at = self._row[flagged]
        self.marks = sorted(
            zip(
                zip(self._tier[flagged].tolist(), self._score[flagged].tolist(),
                    (-at).tolist(), strict=True),
                flagged.tolist(),
                strict=True,
            ),
            reverse=True,
        )  # fmt: skip

    def above(self, rows: Rows, flags: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
        """``flags`` of ``rows`` (at or above T), cleared where a row lies below its
        truncated host's threshold."""
        hosts = self.table.host[rows]
        inside = np.flatnonzero(hosts < len(self._flag))
        at = inside[self._flag[hosts[inside]]]
        if at.size:
            h = hosts[at]
            flags[at] &= at_least(self.table, rows[at], self._tier[h], self._score[h], self._row[h])
        return flags

    def blocking(
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
        marks = self.marks
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

    def refill(self, hosts: list[int], cap: int) -> Rows:
        """The next ``cap`` queued rows of each of these truncated hosts, to let into the
        buffer (their thresholds lowered; untruncated if that was all): one pass over
        the host column instead of a rebuild over every queued row."""
        table = self.table
        wanted = np.zeros(len(self._flag), bool)
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
            below = mine[~at_least(table, mine, self._tier[h], self._score[h], self._row[h])]
            best, complete = top_rows(table, below, cap)
            let_in.append(best)
            if complete:
                self._flag[h] = False
            elif best.size:
                marks.append(best[-1:])
        self.truncate(np.concatenate(marks) if marks else np.empty(0, np.int64))
        return np.concatenate(let_in)
