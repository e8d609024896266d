"""The queue of the indexed crawl DB: pop the best URLs, states, counts, reading rows.

:class:`IndexedQueue` is the :class:`~focuscrawl.frontier.base.UrlQueue` role of
:class:`~focuscrawl.frontier.indexed.IndexedFrontier`. A pop asks the buffer of the
best queued rows (:class:`~focuscrawl.frontier.indexed.order.BestQueue`) for the rows
to take, moves them to IN_FLIGHT (the per-host counters kept) and reads their texts;
adding URLs is :class:`~focuscrawl.frontier.indexed.adds.UrlAdds`. The queue owns the
URL states: it alone moves rows between states, and it keeps what follows them, the
per-host counters (:class:`~focuscrawl.frontier.indexed.counts.HostCounts`) and the rows
of the small states (:class:`~focuscrawl.frontier.indexed.order.top.StateRows`). Counts
come from the counters, states from the state column: no scan.

Hot values (score, state, host, layer, tier) come from the arrays; URL text, depth
and first parent from SQLite's ``url_text``, except on the per-page path (pop,
get): there the texts of rows read lately and of pending rows answer from memory
(:meth:`IndexedQueue._texts`), and a URL's row may come from the core's memo of
rows met lately before a fingerprint.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence

import numpy as np

from focuscrawl.exceptions import FrontierError
from focuscrawl.frontier.base import popped_in_room
from focuscrawl.frontier.indexed.adds import UrlAdds
from focuscrawl.frontier.indexed.core import MEMO_MAX, IndexedCore
from focuscrawl.frontier.indexed.counts import HostCounts
from focuscrawl.frontier.indexed.order.top import StateRows
from focuscrawl.frontier.indexed.storage.schema import TEXT_MANY, TEXT_OF, TEXT_RANGE
from focuscrawl.frontier.indexed.table import CHUNK_ROWS, Rows
from focuscrawl.frontier.rules import INT32, checked_score, known_states
from focuscrawl.types import QueuedURL, URLState

_IN_FLIGHT, _QUEUED = int(URLState.IN_FLIGHT), int(URLState.QUEUED)
_FEW_EXCLUDED = 8  # hosts excluded from a pop at most for its "all excluded?" check
_LIST_CHUNK = 1000
_RECENT_MAX = 4096  # texts of recently read rows kept (a window is a few dozen)
_AHEAD = 32  # rows the next pops will take whose texts a pop's query reads too
Text = tuple[str, int, str | None]  # URL, depth, first parent's URL


class IndexedQueue:
    """The URLs of the indexed store and their queue (see the module docstring)."""

    def __init__(self, core: IndexedCore) -> None:
        self._core = core
        self._counts = HostCounts(core.table, len(core.host_names))
        self._states = StateRows(core.table)
        adds = UrlAdds(core, self._counts, self._states)
        self.add, self.add_many = adds.add, adds.add_many
        self._recent: dict[int, Text] = {}  # texts of rows read lately (see _texts)
        # the excluded host ids of the last pop that named some, and their flags, kept
        # set: a polite crawl's next pop excludes nearly the same hosts (the one whose
        # page came back is out, the one just taken is in), two flags to change, not 60
        self._excluded = np.zeros(64, bool)
        self._excluded_ids: set[int] = set()

    # -- the queue --------------------------------------------------------------------

    def pop(
        self,
        n: int,
        *,
        exclude_hosts: Collection[str] = (),
        max_per_host: int = 0,
        max_layer: int | None = None,
    ) -> list[QueuedURL]:
        """Take up to ``n`` best queued URLs (score desc, then discovery order) -> IN_FLIGHT."""
        if n <= 0:
            return []
        core = self._core
        hosts = len(core.host_names)
        known = core.host_ids
        ids = {known[h] for h in exclude_hosts if h in known}  # (a host named twice: once)
        counters = self._counts
        counters.fit(hosts - 1)
        queued = counters.counts[:hosts, _QUEUED]
        excluded = None
        if ids:
            # every queued URL is an excluded host's: nothing to pop (a polite crawl of a
            # site or a few asks this after most pages, the hosts in flight all full;
            # with many hosts in flight, others nearly always have URLs: not asked then)
            if len(ids) <= _FEW_EXCLUDED:
                per_host = counters.cells
                if sum(per_host[5 * host + _QUEUED] for host in ids) >= int(queued.sum()):
                    return []
            if len(self._excluded) < hosts:
                grown = np.zeros(2 * hosts, bool)
                grown[: len(self._excluded)] = self._excluded
                self._excluded = grown
            flags, last = self._excluded.data, self._excluded_ids
            for host in last - ids:
                flags[host] = False
            for host in ids - last:
                flags[host] = True
            self._excluded_ids = ids
            excluded = self._excluded[:hosts]
        limit = None if max_layer is None else min(max(max_layer, INT32[0]), INT32[1])
        taken = core.best.pop_rows(n, queued, excluded, max(max_per_host, 0), limit)
        if not taken:
            return []
        core.begin()
        if len(taken) == 1:  # a polite crawl's usual pop: no arrays for one row
            self._set_state_one(taken[0], _IN_FLIGHT)
        else:
            self._set_state(np.array(taken, np.int64), _IN_FLIGHT)
        texts = self._texts(taken, core.best.upcoming)
        # the caller marks, gets and scores these URLs next, and names them as the parent
        # of their pages' links: each would cost a fingerprint and a probe
        memo = core.memo
        if len(memo) > MEMO_MAX:
            memo.clear()
        for row, text in zip(taken, texts, strict=True):
            memo[text[0]] = row
        return [self._row_of(row, *text) for row, text in zip(taken, texts, strict=True)]

    def pop_in_room(
        self, n: int, in_flight: Mapping[str, int], per_host: int
    ) -> list[QueuedURL]:
        """Up to ``n`` best queued URLs, each host within its room (:func:`~focuscrawl.frontier.base.popped_in_room`)."""
        return popped_in_room(self, n, in_flight, per_host)

    def mark(self, url: str, state: URLState, *, score: float | None = None) -> None:
        """Set the state of a URL (and its score, if given); unknown URL: FrontierError."""
        value = None if score is None else checked_score(url, score)
        new = int(URLState(state))
        core = self._core
        row = core.row(url)
        if row < 0:
            raise FrontierError(f"cannot mark unknown URL {url!r}")
        if value is not None:
            core.table.view["score"][row] = value
        core.begin()
        self._set_state_one(row, new)

    def requeue_in_flight(self) -> int:
        """After a crash: put every IN_FLIGHT URL back to QUEUED. Returns how many."""
        core = self._core
        rows = np.flatnonzero(core.table.column("state") == _IN_FLIGHT).astype(np.int64)
        if rows.size:
            core.begin()
            self._set_state(rows, _QUEUED)
        return len(rows)

    def _set_state(self, rows: Rows, state: int) -> None:
        """Move ``rows`` to ``state``, keeping the per-host counters."""
        table, counts = self._core.table, self._counts.counts
        if len(rows) <= 32:  # np.add.at costs more than a short loop
            per_host = self._counts.cells
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
        self._core.log.touched(rows)

    def _set_state_one(self, row: int, state: int) -> None:
        """:meth:`_set_state` of one row, without arrays."""
        view = self._core.table.view
        host, old = view["host"][row], view["state"][row]
        per_host = self._counts.cells
        per_host[5 * host + old] -= 1
        per_host[5 * host + state] += 1
        view["state"][row] = state
        self._states.entered(state, row)
        self._core.log.touched(row)

    # -- reads ------------------------------------------------------------------------

    def get(self, url: str) -> QueuedURL | None:
        """The stored row of a URL, whatever its state (``parent`` = first parent)."""
        row = self._core.row(url)
        return None if row < 0 else self._row_of(row, *self._texts([row])[0])

    def state(self, url: str) -> URLState | None:
        row = self._core.row(url)
        return None if row < 0 else URLState(int(self._core.table.state[row]))

    def known(self, urls: Sequence[str]) -> dict[str, URLState]:
        """The states of the known URLs of ``urls`` (see FrontierStore.known)."""
        return known_states(self.state, urls)

    def count(self, state: URLState | None = None) -> int:
        if state is None:
            return self._core.table.n
        return int(self._counts.counts[:, int(state)].sum())

    def rows_in(self, state: URLState) -> Rows:
        """The rows now in ``state``, ascending: from the rows kept of a small state
        (:class:`~focuscrawl.frontier.indexed.order.top.StateRows`), or one pass."""
        wanted = int(state)
        rows = self._states.rows(wanted, self.count(state))
        if rows is None:
            table = self._core.table
            parts = [
                np.flatnonzero(table.state[lo : min(lo + CHUNK_ROWS, table.n)] == wanted) + lo
                for lo in range(0, table.n, CHUNK_ROWS)
            ]
            rows = np.concatenate([np.empty(0, np.int64), *parts])
        return rows

    def host_counts(self, hosts: Sequence[str]) -> dict[str, int]:
        return {host: self.host_count(host) for host in hosts}

    def host_count(self, host: str, states: Collection[URLState] = ()) -> int:
        """URLs of a host (in the given states, or all), from counters: no scan."""
        host_id = self._core.host_ids.get(host)
        if host_id is None:
            return 0
        # Python ints of one host's row: the scope check asks this of every new link,
        # and a fancy index and a sum cost some 5 us
        counts = self._counts.counts[host_id].tolist()
        if not states:
            return sum(counts)
        return sum(counts[s] for s in {int(s) for s in states})

    def iter_urls(self, state: URLState | None = None) -> Iterator[QueuedURL]:
        """Every URL (in ``state``), in discovery order; safe to write while iterating."""
        core = self._core
        lo = 0
        while lo < core.table.n:
            hi = min(lo + _LIST_CHUNK, core.table.n)
            states = core.table.state[lo:hi]
            wanted = np.ones(hi - lo, bool) if state is None else states == int(state)
            if wanted.any():
                core.cold.flush()
                texts = core.conn.execute(TEXT_RANGE, (lo + 1, hi)).fetchall()
                for seq, url, depth, parent in texts:
                    if wanted[seq - 1 - lo]:
                        yield self._row_of(seq - 1, url, depth, parent)
            lo = hi

    def _row_of(self, row: int, url: str, depth: int, parent: str | None) -> QueuedURL:
        view = self._core.table.view  # items of a memoryview: plain Python values
        host = self._core.host_names[view["host"][row]]
        score, layer, tier = view["score"][row], view["layer"][row], view["tier"][row]
        return QueuedURL(url, score, depth, host, parent, layer, row + 1, tier)

    def _texts(
        self, rows: list[int], ahead: Callable[[int], list[int]] | None = None
    ) -> list[Text]:
        """(URL, depth, first parent's URL) of ``rows``, from memory where it can.

        A popped row is read again when its result is recorded, and the parent of
        a new row is a page just popped: rows read lately (with a parent: only an
        orphan's first parent may still change) and pending text rows answer
        without SQL, and without the flush of the pending rows that a query needs
        (a flush per pop wrote a page's few new rows in several statements, where
        the commit writes fifty pages' rows in a few). The rest: one query, which
        also reads the written texts of the rows ``ahead`` names (a pop: those the
        next pops will take), one query for a few dozen pops instead of one each.
        """
        cold, recent = self._core.cold, self._recent
        if cold.parents_pending:
            cold.flush()  # an orphan's first parent, recorded after its text row was written
        found: dict[int, Text] = {}
        asked: list[int] = []
        flush = False
        for row in rows:
            text = recent.get(row)
            if text is None:
                pending = cold.pending_text(row)
                if pending is None:  # written, and so is its parent's (an older row)
                    asked.append(row)
                    continue
                url, depth, parent_seq = pending
                parent = None
                if parent_seq is not None:
                    known = recent.get(parent_seq - 1) or cold.pending_text(parent_seq - 1)
                    if known is None:  # a parent read long ago: the query needs this row written
                        flush = True
                        asked.append(row)
                        continue
                    parent = known[0]
                text = (url, depth, parent)
            found[row] = text
        if flush:
            cold.flush()
        if asked and ahead is not None:
            chosen = set(asked)
            for row in ahead(_AHEAD):  # written: so is its parent's (an older row)
                if row not in recent and row not in chosen and cold.pending_text(row) is None:
                    chosen.add(row)
                    asked.append(row)
        conn = self._core.conn
        if len(asked) == 1:
            found[asked[0]] = conn.execute(TEXT_OF, (asked[0] + 1,)).fetchone()
        elif asked:
            query = conn.execute(TEXT_MANY, (json.dumps([row + 1 for row in asked]),))
            for seq, url, depth, parent in query:
                found[seq - 1] = (url, depth, parent)
        if len(recent) > _RECENT_MAX:
            recent.clear()
        for row, text in found.items():
            if text[2] is not None:
                recent[row] = text
        return [found[row] for row in rows]
