"""Batch merging and the strategy-facing writes of the SQLite crawl DB.

The shared machinery of :class:`~focuscrawl.frontier.sqlite.SqliteFrontier`'s
writes (the ``temp.batch`` join that resolves URLs to rows, the ``(tier, score)``
merge and the upkeep of each host's best key) and the writes strategies use beyond
adding URLs: extra per-URL columns (``vals``: one row per value ever written, so
a column costs nothing for URLs that never get a value), rescoring a host, tiers.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable

from focuscrawl.frontier.rules import (
    SCORE,
    aggregated,
    checked_column,
    checked_int,
    checked_score,
    merged,
    merged_pair,
    written,
)
from focuscrawl.frontier.sqlite_reads import SqliteReads
from focuscrawl.frontier.sqlite_schema import RAISE_HOST, REFRESH_HOSTS, RESOLVE, url_key
from focuscrawl.types import Merge, URLState

Key = tuple[int, int]
Pair = tuple[int | None, float]  # (tier, score); tier None: the score alone is merged


class SqliteColumns(SqliteReads):
    """Batch helpers and the column, host and tier writes of the SQLite store."""

    _dirty: set[int]  # hosts whose best must be recomputed

    def _begin(self) -> None:
        if not self._conn.in_transaction:
            self._conn.execute("BEGIN")

    def _refresh_hosts(self) -> None:
        """Recompute ``hosts.best`` of every host noted since the last time."""
        if self._dirty:
            self._conn.execute(REFRESH_HOSTS, (json.dumps(sorted(self._dirty)),))
            self._dirty.clear()

    def _raise_hosts(self, raised: dict[int, tuple[int, float, int]]) -> None:
        """Offer each host the best key ``(tier, score, -seq)`` of its URLs that went up."""
        if raised:
            self._conn.executemany(
                RAISE_HOST, ((host, *key[:2], -key[2]) for host, key in raised.items())
            )

    def _fill_batch(self, rows: Iterable[tuple[int, int, float | None]]) -> None:
        self._conn.execute("DELETE FROM temp.batch")
        # in key order, the batch visits the pages of urls in order: each one once
        ordered: list[tuple[int, int, float | None]] = sorted(rows, key=lambda r: r[0])
        self._conn.executemany("INSERT INTO temp.batch VALUES (?, ?, ?)", ordered)

    def _merge_batch(self, pairs: dict[str, Pair], keys: dict[str, Key], merge: Merge) -> int:
        """Merge one ``(tier, score)`` per URL into the known rows, whatever their state.

        A tier of None merges the score alone (``update_scores`` rules). The rows
        are read in one join, merged here and written back by rowid in key order:
        cheaper than ``UPDATE ... FROM``, and it tells which keys went up.
        """
        if merge is Merge.KEEP or not pairs:
            return 0
        by_key = {keys[url]: pair for url, pair in pairs.items()}
        self._fill_batch((h, h2, None) for h, h2 in by_key)
        writes: list[tuple[float, int, int]] = []
        raised: dict[int, tuple[int, float, int]] = {}
        for bh, bh2, h, host, state, old, seq, tier in self._conn.execute(RESOLVE):
            new_tier, new = by_key[bh, bh2]
            if new_tier is None:
                if not written(old, new, merge):
                    continue
                key = (tier, merged(old, new, merge))  # the same IEEE double SQLite would compute
            else:
                key = merged_pair(tier, old, new_tier, new, merge)
                if key == (tier, old):
                    continue
            writes.append((key[1], key[0], h))
            if state != URLState.QUEUED:
                continue
            if key < (tier, old):
                self._dirty.add(host)  # its best may have gone down: recompute
            elif host not in raised or (*key, -seq) > raised[host]:
                raised[host] = (*key, -seq)
        self._conn.executemany("UPDATE urls SET score = ?, tier = ? WHERE h = ?", writes)
        self._raise_hosts(raised)
        return len(writes)

    def update_scores(self, updates: Iterable[tuple[str, float]], merge: Merge) -> int:
        """Merge new scores into known URLs of *any* state; unknown URLs are ignored.

        OTIE and OPIC keep cash on fetched pages, handed on when they are
        re-crawled (``mark(url, QUEUED)``). Repeated URLs are combined first
        (``ADD`` sums). Returns the number of URLs whose score was written
        (``MAX``: only those that went up; ``KEEP``: none). Tiers are left alone.
        """
        scores = aggregated(updates, merge)
        if merge is Merge.KEEP or not scores:
            return 0
        self._begin()
        pairs: dict[str, Pair] = {url: (None, score) for url, score in scores.items()}
        return self._merge_batch(pairs, {url: url_key(url) for url in scores}, merge)

    def _resolve(self, urls: Iterable[str]) -> dict[str, tuple[int, int, int, int, int]]:
        """``url -> (h, host_id, state, seq, tier)`` of the known ones among ``urls``."""
        keys = {url: url_key(url) for url in urls}
        by_key = {key: url for url, key in keys.items()}
        self._fill_batch((h, h2, None) for h, h2 in keys.values())
        return {
            by_key[bh, bh2]: (h, host, state, seq, tier)
            for bh, bh2, h, host, state, _, seq, tier in self._conn.execute(RESOLVE)
        }

    # -- extra columns ----------------------------------------------------------------

    def ensure_columns(self, names: Iterable[str]) -> None:
        """Create the extra columns ``names`` (idempotent; durable with the next commit)."""
        wanted = [checked_column(n) for n in names if n != SCORE]
        missing = [n for n in wanted if n not in self._column_ids()]
        if missing:
            self._begin()
            self._conn.executemany(
                "INSERT OR IGNORE INTO columns(name) VALUES (?)", ((n,) for n in missing)
            )

    def update_values(self, column: str, updates: Iterable[tuple[str, float]], merge: Merge) -> int:
        """Merge values of ``column`` into known URLs of any state (``update_scores`` rules).

        ``"score"`` is the score itself. Unknown URLs are ignored; a URL without a
        value reads 0.0. Returns how many values were written.
        """
        if column == SCORE:
            return self.update_scores(updates, merge)
        col = self._column_id(column)
        values = aggregated(updates, merge)
        if merge is Merge.KEEP or not values:
            return 0
        self._begin()
        rows = self._resolve(values)
        seqs = {url: row[3] for url, row in rows.items()}
        stored = dict(
            self._conn.execute(
                "SELECT seq, value FROM vals WHERE col = ? AND seq IN"
                " (SELECT value FROM json_each(?))",
                (col, json.dumps(sorted(seqs.values()))),
            ).fetchall()
        )
        writes = []
        for url, seq in seqs.items():
            old = float(stored.get(seq, 0.0))
            if written(old, values[url], merge):
                writes.append((col, seq, merged(old, values[url], merge)))
        self._conn.executemany(
            "INSERT INTO vals VALUES (?, ?, ?)"
            " ON CONFLICT(col, seq) DO UPDATE SET value = excluded.value",
            sorted(writes),
        )
        return len(writes)

    def column_names(self) -> list[str]:
        """The extra columns, sorted (``"score"`` is not listed)."""
        return sorted(self._column_ids())

    def _column_values(self, column: str) -> dict[int, float]:
        """``seq -> value`` of every URL with a stored value of ``column``."""
        if column == SCORE:
            return dict(self._conn.execute("SELECT seq, score FROM urls"))
        col = self._column_id(column)
        return dict(self._conn.execute("SELECT seq, value FROM vals WHERE col = ?", (col,)))

    def combine_columns(
        self, dst: str, terms: Iterable[tuple[str, float]] = (), *, add: bool = True
    ) -> None:
        """For every known URL: ``dst = (dst if add else 0) + Σ factor · src`` (any state)."""
        old = self._column_values(dst)
        total: dict[int, float] = dict(old) if add else {}
        for src, factor in terms:
            f = checked_score(src, factor)
            for seq, value in self._column_values(src).items():
                total[seq] = total.get(seq, 0.0) + f * value
        changed = {seq: v for seq, v in total.items() if old.get(seq, 0.0) != v}
        changed.update({seq: 0.0 for seq, v in old.items() if seq not in total and v != 0.0})
        if not changed:
            return
        self._begin()
        if dst == SCORE:  # through the merge path, which keeps each host's best key
            urls = dict(self._conn.execute(
                "SELECT seq, url FROM url_text WHERE seq IN (SELECT value FROM json_each(?))",
                (json.dumps(sorted(changed)),),
            ).fetchall())  # fmt: skip
            self.update_scores([(urls[seq], v) for seq, v in changed.items() if seq in urls], Merge.SET)
            return
        col = self._column_id(dst)
        self._conn.executemany(
            "INSERT INTO vals VALUES (?, ?, ?)"
            " ON CONFLICT(col, seq) DO UPDATE SET value = excluded.value",
            sorted((col, seq, v) for seq, v in changed.items()),
        )

    # -- hosts and tiers ----------------------------------------------------------------

    def update_host(
        self,
        host: str,
        score: float,
        merge: Merge,
        *,
        states: Collection[URLState] = (URLState.QUEUED,),
    ) -> int:
        """Merge ``score`` into every URL of ``host`` in ``states`` (``update_scores`` rules).

        QUEUED URLs are found through the host's queue index; other states need a
        scan of the hot table (rare: a strategy's rescore of fetched pages).
        """
        value = checked_score(host, score)
        row = self._conn.execute("SELECT id FROM hosts WHERE host = ?", (host,)).fetchone()
        if row is None or merge is Merge.KEEP:
            return 0
        host_id = int(row[0])
        writes: list[tuple[float, int]] = []
        for state in sorted({int(URLState(s)) for s in states}):
            # the partial queue index needs the literal "state = 0" to be usable
            index = "INDEXED BY urls_queue" if state == URLState.QUEUED else ""
            for h, old in self._conn.execute(
                f"SELECT h, score FROM urls {index} WHERE host_id = ? AND state = {state}",
                (host_id,),
            ):
                if written(old, value, merge):
                    writes.append((merged(old, value, merge), h))
        if writes:
            self._begin()
            self._conn.executemany("UPDATE urls SET score = ? WHERE h = ?", writes)
            self._dirty.add(host_id)
        return len(writes)

    def set_tier(self, updates: Iterable[tuple[str, int]]) -> int:
        """Set the tiers of known URLs (the last of repeats wins); returns how many known URLs."""
        tiers = {url: checked_int(f"tier of {url!r}", tier) for url, tier in updates}
        if not tiers:
            return 0
        self._begin()
        rows = self._resolve(tiers)
        writes = sorted((row[0], tiers[url]) for url, row in rows.items())
        self._conn.executemany("UPDATE urls SET tier = ?2 WHERE h = ?1", writes)
        self._dirty.update(row[1] for row in rows.values() if row[2] == URLState.QUEUED)
        return len(rows)
