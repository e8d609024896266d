"""Reads of the indexed crawl DB: rows, states, parents, counts, listing, meta.

Hot values (score, state, host, layer, tier, extra columns) come from the arrays;
URL text, depth and parents from SQLite's cold tables, one indexed lookup per URL,
after the pending cold rows are flushed (:mod:`~focuscrawl.frontier.indexed_cold`),
except on the per-page path (pop, get): there the texts of rows read lately and of
pending rows answer from memory (:meth:`IndexedReads._cold_texts`), and a URL's
row may come from the memo of rows met lately (``_row_memo``) before a fingerprint.
``top`` of a small state (FETCHED, usually) reads only the rows of that state,
which :class:`StateRows` keeps, instead of every row.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Collection, Iterator, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from focuscrawl.exceptions import FrontierError
from focuscrawl.frontier.base import no_edges_error
from focuscrawl.frontier.indexed_cold import ColdWrites
from focuscrawl.frontier.indexed_links import Backlinks, children_of
from focuscrawl.frontier.indexed_schema import TEXT_MANY, TEXT_OF, TEXT_RANGE, url_key
from focuscrawl.frontier.indexed_table import CHUNK_ROWS, Rows, UrlTable, drop_repeats
from focuscrawl.frontier.indexed_top import TopCache
from focuscrawl.frontier.rules import SCORE, known_states
from focuscrawl.types import QueuedURL, URLState

_LIST_CHUNK = 1000
_RECENT_MAX = 4096  # texts of recently read rows kept (a window is a few dozen)
_AHEAD = 32  # rows the next pops will take whose texts a pop's query reads too
Text = tuple[str, int, str | None]  # URL, depth, first parent's URL
_SMALL_STATE = 8  # a state is tracked while it holds at most 1/8 of the rows


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

    def entered(self, state: int, rows: Rows) -> None:
        if state in self._rows:
            self._rows[state].append(rows)

    def entered_one(self, state: int, row: int) -> None:
        ones = self._ones.get(state)
        if ones is not None:
            ones.append(row)

    def entered_list(self, state: int, rows: list[int]) -> None:
        ones = self._ones.get(state)
        if ones is not None:
            ones += rows

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


class IndexedReads:
    """The read half of :class:`~focuscrawl.frontier.indexed.IndexedFrontier`."""

    path: Path
    _conn: sqlite3.Connection
    _table: UrlTable
    _cold: ColdWrites
    _states: StateRows
    _tops: TopCache
    _changed: list[Rows]
    _changed_one: list[int]
    _extra_changed: dict[str, list[Rows]]
    _host_names: list[str]
    _host_ids: dict[str, int]
    _counts: npt.NDArray[np.int64]
    _cells: memoryview
    _recent: dict[int, Text]
    _row_memo: dict[str, int]  # URL -> row of URLs added or met lately (rows never change)

    def _count_cells(self) -> memoryview:
        """The per-host counters as one flat view, an item a Python int: (host, state)
        at ``5 * host + state`` (kept with the array: see :meth:`_set_counts`)."""
        return self._cells

    def _set_counts(self, counts: npt.NDArray[np.int64]) -> None:
        """Make ``counts`` (C-contiguous, 5 states per host) the per-host counters."""
        self._counts = counts
        self._cells = counts.reshape(-1).data

    def _row(self, url: str) -> int:
        row = self._row_memo.get(url)
        return self._table.find_one(*url_key(url)) if row is None else row

    def _edges_kept(self) -> None:
        """FrontierError unless this DB keeps parent edges; else flush the pending ones."""
        if not self._cold.keep_edges:
            raise no_edges_error(f"crawl DB {self.path}")
        self._cold.flush()

    def _feed_tops(self) -> None:
        """Give the ``top`` caches the rows changed since they last looked."""
        table = self._table
        self._tops.feed(
            self._changed,
            self._changed_one,
            self._extra_changed,
            {SCORE: table.score, **table.extra},
        )

    def _queued(self, row: int) -> QueuedURL:
        return self._row_of(row, *self._cold_texts([row])[0])

    def _cold_texts(
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
        cold, recent = self._cold, self._recent
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
        if len(asked) == 1:
            found[asked[0]] = self._conn.execute(TEXT_OF, (asked[0] + 1,)).fetchone()
        elif asked:
            query = self._conn.execute(TEXT_MANY, (json.dumps([row + 1 for row in asked]),))
            for seq, url, depth, parent in query:
                found[seq - 1] = (url, depth, parent)
        if len(recent) > _RECENT_MAX:
            recent.clear()
        for row, text in found.items():
            if text[2] is not None:
                recent[row] = text
        return [found[row] for row in rows]

    def _row_of(self, row: int, url: str, depth: int, parent: str | None) -> QueuedURL:
        view = self._table.view  # items of a memoryview: plain Python values, no numpy scalar
        host = self._host_names[view["host"][row]]
        score, layer, tier = view["score"][row], view["layer"][row], view["tier"][row]
        return QueuedURL(url, score, depth, host, parent, layer, row + 1, tier)

    def get(self, url: str) -> QueuedURL | None:
        """The stored row of a URL, whatever its state (``parent`` = first parent)."""
        row = self._row(url)
        return None if row < 0 else self._queued(row)

    def state(self, url: str) -> URLState | None:
        row = self._row(url)
        return None if row < 0 else URLState(int(self._table.state[row]))

    def _texts(self, rows: list[int]) -> dict[int, str]:
        """Row -> URL text of ``rows`` (flushed)."""
        found = self._conn.execute(
            "SELECT seq, url FROM url_text WHERE seq IN (SELECT value FROM json_each(?))",
            (json.dumps([row + 1 for row in rows]),),
        )
        return {seq - 1: url for seq, url in found}

    def parents(self, url: str) -> list[str]:
        """Every recorded parent: the first one first, then in discovery order."""
        self._edges_kept()
        row = self._row(url)
        if row < 0:
            return []
        cold = self._cold
        if cold.backlinks is None:
            cold.backlinks = Backlinks(self._conn)
        rows = cold.backlinks.parents_of(row)
        (first,) = self._conn.execute(
            "SELECT parent_seq FROM url_text WHERE seq = ?", (row + 1,)
        ).fetchone()
        if first is not None and first - 1 in rows:
            rows.remove(first - 1)
            rows.insert(0, first - 1)
        texts = self._texts(rows)
        return [texts[r] for r in rows]

    def children(self, parent: str) -> list[str]:
        """Every URL that ``parent`` links to, in discovery order."""
        return [url for url, _ in self.children_counts(parent)]

    def children_counts(self, parent: str) -> list[tuple[str, int]]:
        """Every URL that ``parent`` links to with t(parent, url), in discovery order."""
        self._edges_kept()
        row = self._row(parent)
        if row < 0:
            return []
        counts = children_of(self._conn, row)
        rows = sorted(counts)
        texts = self._texts(rows)
        return [(texts[r], counts[r]) for r in rows]

    def _extra_column(self, name: str) -> npt.NDArray[np.float64]:
        """The array of an extra column (``"score"``: the scores); FrontierError if unknown."""
        if name == SCORE:
            return self._table.score
        array = self._table.extra.get(name)
        if array is None:
            raise FrontierError(f"unknown column {name!r}")
        return array

    def value(self, url: str, column: str) -> float | None:
        """``column`` of ``url``: None if the URL is unknown, 0.0 if never set."""
        array = self._extra_column(column)
        row = self._row(url)
        return None if row < 0 else float(array[row])

    def top(self, column: str, state: URLState = URLState.FETCHED) -> tuple[str, float] | None:
        """The URL in ``state`` with the highest ``column`` (ties: discovery order).

        Read from a cache of the state's best rows (:mod:`~focuscrawl.frontier.indexed_top`),
        built from the rows of the state (:class:`StateRows`, or one pass).
        """
        array, table = self._extra_column(column), self._table
        wanted = int(state)
        count = int(self._counts[:, wanted].sum())
        if not count:
            return None
        self._feed_tops()
        found = self._tops.best(column, wanted, array)
        if found is None:  # (re)build the cache from every row of the state
            rows = self._states.rows(wanted, count)
            if rows is None:
                parts = [
                    np.flatnonzero(table.state[lo : min(lo + CHUNK_ROWS, table.n)] == wanted) + lo
                    for lo in range(0, table.n, CHUNK_ROWS)
                ]
                rows = np.concatenate([np.empty(0, np.int64), *parts])
            self._tops.build(column, wanted, rows, array[rows])
            found = self._tops.best(column, wanted, array)
        if found is None:  # NaN values: no order to keep
            raise FrontierError(f"no largest value of column {column!r}")
        best_row, best = found
        if best_row < 0:
            return None
        pending = self._cold.pending_text(best_row)  # a row's text is pending or written:
        if pending is not None:  # no flush of the others for the one asked
            return pending[0], best
        (url,) = self._conn.execute(
            "SELECT url FROM url_text WHERE seq = ?", (best_row + 1,)
        ).fetchone()
        return str(url), best

    def count(self, state: URLState | None = None) -> int:
        if state is None:
            return self._table.n
        return int(self._counts[:, int(state)].sum())

    def known(self, urls: Sequence[str]) -> dict[str, URLState]:
        """The states of the known URLs of ``urls`` (see FrontierStore.known)."""
        return known_states(self.state, urls)

    def host_counts(self, hosts: Sequence[str]) -> dict[str, int]:
        return {host: self.host_count(host) for host in hosts}

    def host_count(self, host: str, states: Collection[URLState] = ()) -> int:
        """URLs of a host (in the given states, or all), from counters: no scan."""
        host_id = self._host_ids.get(host)
        if host_id is None:
            return 0
        # Python ints of one host's row: the scope check asks this of every new link,
        # and a fancy index and a sum cost some 5 us
        counts = self._counts[host_id].tolist()
        if not states:
            return sum(counts)
        return sum(counts[s] for s in {int(s) for s in states})

    def iter_urls(self, state: URLState | None = None) -> Iterator[QueuedURL]:
        """Every URL (in ``state``), in discovery order; safe to write while iterating."""
        lo = 0
        while lo < self._table.n:
            hi = min(lo + _LIST_CHUNK, self._table.n)
            states = self._table.state[lo:hi]
            wanted = np.ones(hi - lo, bool) if state is None else states == int(state)
            if wanted.any():
                self._cold.flush()
                texts = self._conn.execute(TEXT_RANGE, (lo + 1, hi)).fetchall()
                for seq, url, depth, parent in texts:
                    if wanted[seq - 1 - lo]:
                        yield self._row_of(seq - 1, url, depth, parent)
            lo = hi

    def get_meta(self, key: str) -> str | None:
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])
