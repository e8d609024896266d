"""``top`` of the indexed crawl DB without a pass over the rows of the state.

OTIE asks for the fetched page with the most cash once per few fetch lists; a pass
over every fetched row (a gather scattered over the whole score column) grew with
the crawl. :class:`TopCache` keeps, per ``(column, state)`` asked for, the rows of
that state whose value was ``>= T`` when it was built (the ``KEEP`` best and their
ties; every row if there are no more) and the threshold ``T``. Invariant: every
row of the state whose value is ``>= T`` is among them. The rows whose state or
value changed are exactly those the commit journal notes (the core's ``changed``,
``changed_one``, ``extra_changed``, and the rows appended); before each ``top``
and before each commit empties those lists, the rows noted since the last time
are *fed*: the ones now in the state with a value ``>= T`` join. A ``top`` then
reads only the cached rows: their best is the best of the state if it is still
``>= T``; else (the best ones left the state or lost value) the cache is rebuilt.

A rebuild of a small state's cache (FETCHED, usually) reads only the rows of that
state, which :class:`StateRows` keeps, instead of every row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from focuscrawl.frontier.indexed.table import CHUNK_ROWS, Rows, UrlTable, drop_repeats

KEEP = 256  # rows kept per cache when it is built
_SMALL_STATE = 8  # a state is tracked while it holds at most 1/8 of the rows
Floats = npt.NDArray[np.float64]


@dataclass
class _Cache:
    rows: Rows  # may repeat, and hold rows that left the state: cleaned on read
    threshold: float  # -inf: every row of the state is here


class TopCache:
    """The caches of one open DB (see the module docstring)."""

    def __init__(self, table: UrlTable) -> None:
        self.table = table
        self._caches: dict[tuple[str, int], _Cache] = {}
        self._seen = (0, 0)  # entries of changed and changed_one fed so far
        self._seen_extra: dict[str, int] = {}
        self._seen_n = table.n  # rows appended since are fed too

    def feed(
        self,
        changed: list[Rows],
        changed_one: list[int],
        extra: dict[str, list[Rows]],
        column_of: dict[str, Floats],
    ) -> None:
        """Give every cache the rows noted in the journal lists since the last feed."""
        table = self.table
        if self._caches:
            first, first_one = self._seen
            common = [
                *changed[first:],
                np.array(changed_one[first_one:], np.int64),
                np.arange(self._seen_n, table.n, dtype=np.int64),
            ]
            for (column, state), cache in self._caches.items():
                notes = extra.get(column, [])[self._seen_extra.get(column, 0) :]
                rows = np.concatenate([*common, *notes])
                rows = rows[table.state[rows] == state]
                rows = rows[column_of[column][rows] >= cache.threshold]
                if rows.size:
                    cache.rows = np.concatenate([cache.rows, rows])
        self._seen = (len(changed), len(changed_one))
        self._seen_extra = {name: len(parts) for name, parts in extra.items()}
        self._seen_n = table.n

    def emptied(self) -> None:
        """The journal lists were emptied (a commit) after a :meth:`feed`."""
        self._seen, self._seen_extra = (0, 0), {}

    def best(self, column: str, state: int, values: Floats) -> tuple[int, float] | None:
        """The best row of ``state`` (not empty) by ``values`` (ties: the lowest row) and
        its value; None if the cache cannot tell (then :meth:`build` it)."""
        cache = self._caches.get((column, state))
        if cache is None:
            return None
        rows = drop_repeats(np.sort(cache.rows))
        rows = rows[self.table.state[rows] == state]
        cache.rows = rows
        if not rows.size or len(rows) > 4 * KEEP:
            return None
        found = values[rows]
        best = float(found.max())
        if not best >= cache.threshold:
            return None
        return int(rows[found == best][0]), best

    def build(self, column: str, state: int, rows: Rows, values: Floats) -> None:
        """A new cache from ``rows`` (every row of ``state``, ascending) and their values."""
        if len(rows) <= KEEP:
            self._caches[column, state] = _Cache(rows, -np.inf)
            return
        threshold = float(np.partition(values, len(values) - KEEP)[len(values) - KEEP])
        self._caches[column, state] = _Cache(rows[values >= threshold], threshold)


class StateRows:
    """The rows of the small states asked for by ``top``, so that it need not scan.

    A state is tracked from its first ``top`` (one scan) while it holds at most an
    eighth of the rows. Every row that enters a tracked state is noted; on a read
    the notes are merged into the ascending list (ascending: the gathers of a read
    walk memory in order) and the rows that left the state dropped.
    """

    def __init__(self, table: UrlTable) -> None:
        self.table = table
        self._rows: dict[int, list[Rows]] = {}  # state -> [ascending rows, noted arrays...]
        self._ones: dict[int, list[int]] = {}  # state -> single rows noted since

    def entered(self, state: int, rows: Rows | list[int] | int) -> None:
        """Rows that entered ``state``: noted if that state's rows are kept (one row or
        a few as a list take a fast branch without arrays)."""
        if isinstance(rows, np.ndarray):
            if state in self._rows:
                self._rows[state].append(rows)
            return
        ones = self._ones.get(state)
        if ones is not None:
            ones += rows if isinstance(rows, list) else [rows]

    def rows(self, state: int, count: int) -> Rows | None:
        """The rows now in ``state`` (``count`` of them), ascending; None: scan instead."""
        table = self.table
        if count * _SMALL_STATE > table.n:
            self._rows.pop(state, None)
            self._ones.pop(state, None)
            return None
        parts = self._rows.get(state)
        if parts is None:
            found = [
                np.flatnonzero(table.state[lo : min(lo + CHUNK_ROWS, table.n)] == state) + lo
                for lo in range(0, table.n, CHUNK_ROWS)
            ]
            parts = self._rows[state] = [np.concatenate([np.empty(0, np.int64), *found])]
            self._ones[state] = []
        rows, ones = parts[0], self._ones[state]
        if len(parts) > 1 or ones:
            noted = np.unique(np.concatenate([*parts[1:], np.array(ones, np.int64)]))
            rows = drop_repeats(np.insert(rows, np.searchsorted(rows, noted), noted))
        kept: Rows = rows[table.state[rows] == state]
        parts[:], ones[:] = [kept], []
        return kept
