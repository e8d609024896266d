"""The embedded crawl DB: a :class:`~focuscrawl.frontier.base.FrontierStore` in SQLite.

Layout (nothing per URL is kept in Python memory; the page cache is bounded):

* ``urls``: one row per known URL; ``id`` is the discovery order (``seq``). URLs are
  found through a non-unique index on a 64-bit hash ``h`` of the text and then
  compared in full, which is exact and far smaller than a unique index on the text.
* ``urls_queue``: a partial index ``(host_id, score DESC, id) WHERE state = 0``, i.e.
  one priority queue per host (Heritrix-style, P2). ``hosts.best``/``best_seq`` hold
  the key of each host's best queued URL, indexed, so a pop walks hosts in the order
  of their best URL and stops as soon as no remaining host can beat the n-th URL
  taken. Excluded or capped hosts cost one step each, however many URLs they hold
  (a global score index would have to skip every one of their URLs).
* Per-host and global counts per state are kept by triggers, so ``host_count`` and
  ``count`` never scan.
* ``hosts.best`` is refreshed lazily: every write notes (in a Python set, at most one
  entry per host) the hosts whose queue changed, and ``pop``/``commit`` recompute
  only those. Batches of score updates go through a TEMP table and one
  ``UPDATE ... FROM ... RETURNING``, not one statement per URL.

Writes form one transaction until :meth:`SqliteFrontier.commit`; a crash (or
:meth:`SqliteFrontier.close` without commit) loses exactly the uncommitted work.
The semantics are those of :mod:`focuscrawl.frontier.memory` (read it first); the
one difference: duplicates inside one ``add_many`` batch are combined before they
reach the DB, so ``Merge.ADD`` sums may round differently from one-by-one adds.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import sqlite3
from collections.abc import Collection, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from focuscrawl.exceptions import FrontierError
from focuscrawl.frontier.base import FrontierStore
from focuscrawl.frontier.memory import aggregated, checked_score, host_of, merged
from focuscrawl.types import Merge, QueuedURL, URLState

SCHEMA_VERSION = "1"
_NO_LAYER_LIMIT = 2**62
_HOST_CACHE_MAX = 100_000  # host -> id entries kept in Python; per host, never per URL

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS hosts(
    id INTEGER PRIMARY KEY, host TEXT UNIQUE NOT NULL, best REAL, best_seq INTEGER,
    n0 INTEGER NOT NULL DEFAULT 0, n1 INTEGER NOT NULL DEFAULT 0,
    n2 INTEGER NOT NULL DEFAULT 0, n3 INTEGER NOT NULL DEFAULT 0,
    n4 INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS hosts_best ON hosts(best DESC, best_seq) WHERE best IS NOT NULL;
CREATE TABLE IF NOT EXISTS urls(
    id INTEGER PRIMARY KEY, h INTEGER NOT NULL, url TEXT NOT NULL,
    host_id INTEGER NOT NULL, state INTEGER NOT NULL, score REAL NOT NULL,
    depth INTEGER NOT NULL, parent_id INTEGER, layer INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS urls_h ON urls(h);
CREATE INDEX IF NOT EXISTS urls_queue ON urls(host_id, score DESC, id) WHERE state = 0;
CREATE TABLE IF NOT EXISTS parents(
    parent_id INTEGER NOT NULL, child_id INTEGER NOT NULL,
    PRIMARY KEY(parent_id, child_id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS parents_child ON parents(child_id);
CREATE TABLE IF NOT EXISTS counts(state INTEGER PRIMARY KEY, n INTEGER NOT NULL);
INSERT OR IGNORE INTO counts VALUES (0, 0), (1, 0), (2, 0), (3, 0), (4, 0);
CREATE TRIGGER IF NOT EXISTS urls_counted AFTER INSERT ON urls BEGIN
    UPDATE hosts SET n0 = n0 + (new.state = 0), n1 = n1 + (new.state = 1),
        n2 = n2 + (new.state = 2), n3 = n3 + (new.state = 3), n4 = n4 + (new.state = 4)
        WHERE id = new.host_id;
    UPDATE counts SET n = n + 1 WHERE state = new.state;
END;
CREATE TRIGGER IF NOT EXISTS urls_recounted AFTER UPDATE OF state ON urls
WHEN old.state != new.state BEGIN
    UPDATE hosts SET n0 = n0 + (new.state = 0) - (old.state = 0),
        n1 = n1 + (new.state = 1) - (old.state = 1), n2 = n2 + (new.state = 2) - (old.state = 2),
        n3 = n3 + (new.state = 3) - (old.state = 3), n4 = n4 + (new.state = 4) - (old.state = 4)
        WHERE id = new.host_id;
    UPDATE counts SET n = n + 1 WHERE state = new.state;
    UPDATE counts SET n = n - 1 WHERE state = old.state;
END;
-- the first parent recorded is the one handed out with the URL
CREATE TRIGGER IF NOT EXISTS parents_first AFTER INSERT ON parents BEGIN
    UPDATE urls SET parent_id = new.parent_id WHERE id = new.child_id AND parent_id IS NULL;
END;
"""

_TEMP_SCHEMA = """
CREATE TEMP TABLE IF NOT EXISTS batch(h INTEGER NOT NULL, url TEXT NOT NULL, score REAL NOT NULL);
"""

# recompute the best queued URL of the hosts listed in ?1 (a JSON array of ids)
_REFRESH_HOSTS = """
UPDATE hosts SET (best, best_seq) = (
    SELECT score, id FROM urls WHERE host_id = hosts.id AND state = 0
    ORDER BY score DESC, id LIMIT 1)
WHERE id IN (SELECT value FROM json_each(?1))
"""

_INSERT = """
INSERT INTO urls(h, url, host_id, state, score, depth, layer)
SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7 WHERE NOT EXISTS (SELECT 1 FROM urls WHERE h = ?1 AND url = ?2)
"""

_EDGE = """
INSERT OR IGNORE INTO parents(parent_id, child_id)
SELECT p.id, c.id FROM urls AS c, urls AS p
WHERE c.h = ?1 AND c.url = ?2 AND p.h = ?3 AND p.url = ?4
"""

# SET clause and extra condition of each merge rule, for UPDATE ... FROM temp.batch AS b
_MERGE_SQL = {
    Merge.MAX: ("b.score", "AND urls.score < b.score"),
    Merge.ADD: ("urls.score + b.score", ""),
    Merge.SET: ("b.score", ""),
}

_ROW = """
SELECT u.url, u.score, u.depth, hs.host, p.url, u.layer, u.id, u.state
FROM urls AS u JOIN hosts AS hs ON hs.id = u.host_id LEFT JOIN urls AS p ON p.id = u.parent_id
"""

_HOST_QUEUE = """
SELECT u.score, u.id, u.url, u.depth, u.layer, p.url
FROM urls AS u INDEXED BY urls_queue LEFT JOIN urls AS p ON p.id = u.parent_id
WHERE u.host_id = ? AND u.state = 0 AND u.layer <= ?
ORDER BY u.score DESC, u.id LIMIT ?
"""


def url_hash(url: str) -> int:
    """Signed 64-bit key of a URL (stable across processes, unlike ``hash``).

    >>> url_hash("http://a.org/") == url_hash("http://a.org/")
    True
    >>> -(2**63) <= url_hash("http://a.org/") < 2**63
    True
    """
    digest = hashlib.blake2b(url.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "little", signed=True)


class SqliteFrontier:
    """Crawl DB in one SQLite file (WAL journal, ``synchronous=NORMAL``).

    ``cache_mb`` bounds SQLite's page cache, and with it the resident memory,
    whatever the number of URLs. Semantics: see :mod:`focuscrawl.frontier.memory`.
    """

    def __init__(self, path: Path | str, *, cache_mb: int = 16) -> None:
        self.path = Path(path)
        self._host_ids: dict[str, int] = {}
        self._dirty: set[int] = set()  # hosts whose queue changed: at most one per host
        try:
            self._conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
        except sqlite3.Error as exc:
            raise FrontierError(f"cannot open crawl DB {self.path}: {exc}") from exc
        try:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute(f"PRAGMA cache_size=-{max(int(cache_mb), 1) * 1024}")
            self._conn.execute("PRAGMA temp_store=MEMORY")
            self._conn.execute("BEGIN IMMEDIATE")
            version = self._schema_version()
            if version is None:
                for statement in _split(_SCHEMA):
                    self._conn.execute(statement)
                self._conn.execute(
                    "INSERT OR REPLACE INTO meta VALUES ('_schema', ?)", (SCHEMA_VERSION,)
                )
            elif version != SCHEMA_VERSION:
                raise FrontierError(
                    f"crawl DB {self.path} has schema {version}, not {SCHEMA_VERSION}"
                )
            self._conn.execute("COMMIT")
            self._conn.execute(_TEMP_SCHEMA)
        except sqlite3.Error as exc:
            self._conn.close()
            raise FrontierError(f"unusable crawl DB {self.path}: {exc}") from exc
        except FrontierError:
            self._conn.close()
            raise

    def _schema_version(self) -> str | None:
        tables = {r[0] for r in self._conn.execute("SELECT name FROM sqlite_master")}
        if not tables:
            return None
        if "meta" not in tables:
            raise FrontierError(f"{self.path} is an SQLite file but not a crawl DB")
        row = self._conn.execute("SELECT value FROM meta WHERE key = '_schema'").fetchone()
        if row is None:
            raise FrontierError(f"{self.path} is an SQLite file but not a crawl DB")
        return str(row[0])

    # -- helpers --------------------------------------------------------------------

    def _begin(self) -> None:
        if not self._conn.in_transaction:
            self._conn.execute("BEGIN")

    def _host_id_map(self, hosts: Iterable[str]) -> dict[str, int]:
        """Ids of ``hosts``, creating the missing ones (inside the transaction)."""
        cache = self._host_ids
        wanted = set(hosts)
        if len(cache) + len(wanted) > _HOST_CACHE_MAX:
            cache.clear()
        missing = wanted - cache.keys()
        if missing:
            self._conn.executemany(
                "INSERT OR IGNORE INTO hosts(host) VALUES (?)", ((h,) for h in missing)
            )
            for host in missing:
                row = self._conn.execute("SELECT id FROM hosts WHERE host = ?", (host,)).fetchone()
                cache[host] = int(row[0])
        return cache

    def _refresh_hosts(self) -> None:
        """Recompute ``hosts.best`` of every host whose queue changed since the last time."""
        if self._dirty:
            self._conn.execute(_REFRESH_HOSTS, (json.dumps(sorted(self._dirty)),))
            self._dirty.clear()

    def _id_of(self, url: str) -> int | None:
        row = self._conn.execute(
            "SELECT id FROM urls WHERE h = ? AND url = ?", (url_hash(url), url)
        ).fetchone()
        return None if row is None else int(row[0])

    def _merge_batch(self, scores: dict[str, float], merge: Merge, condition: str) -> int:
        """Merge one score per URL into the known rows that pass ``condition``."""
        if merge is Merge.KEEP or not scores:
            return 0
        self._conn.executemany(
            "INSERT INTO temp.batch VALUES (?, ?, ?)",
            ((url_hash(url), url, score) for url, score in scores.items()),
        )
        set_expr, merge_condition = _MERGE_SQL[merge]
        # the batch is the outer loop: each row is one lookup in urls_h
        rows = self._conn.execute(
            f"UPDATE urls SET score = {set_expr} FROM temp.batch AS b"
            f" WHERE urls.h = b.h AND urls.url = b.url {condition} {merge_condition}"
            " RETURNING urls.host_id, urls.state"
        ).fetchall()
        self._conn.execute("DELETE FROM temp.batch")
        self._dirty.update(host for host, state in rows if state == URLState.QUEUED)
        return len(rows)

    # -- writes ---------------------------------------------------------------------

    def add(
        self,
        url: str,
        score: float,
        *,
        depth: int,
        parent: str | None,
        host: str,
        merge: Merge = Merge.MAX,
        layer: int = 0,
    ) -> bool:
        """Add a URL, or merge ``score`` into it if it is QUEUED; record ``parent``.

        A URL in any other state keeps its score (use :meth:`update_scores` for that)
        and only gains the parent. Returns True if the URL was new.
        """
        return self.add_many([(url, score, depth, parent, host)], merge=merge, layer=layer) == 1

    def add_many(
        self,
        items: Iterable[tuple[str, float, int, str | None, str]],
        *,
        merge: Merge = Merge.MAX,
        layer: int = 0,
    ) -> int:
        """Batch :meth:`add` of ``(url, score, depth, parent, host)``; returns how many were new.

        Equivalent to adding the items one by one, in order (an unknown parent
        becomes a DROPPED URL just before the item that names it), except that
        repeated URLs are combined first.
        """
        batch: dict[str, float] = {}  # url -> merged score of the batch
        named_parents: set[str] = set()
        inserts: list[tuple[str, str, float, int, URLState]] = []
        edges: list[tuple[str, str]] = []
        for url, score, depth, parent, host in items:
            value = checked_score(url, score)
            if parent == url:
                parent = None
            if parent is not None:
                if parent not in batch and parent not in named_parents:  # else known by now
                    named_parents.add(parent)
                    inserts.append(
                        (parent, host_of(parent), 0.0, max(depth - 1, 0), URLState.DROPPED)
                    )
                edges.append((url, parent))
            old = batch.get(url)
            if old is None:
                batch[url] = value
                inserts.append((url, host, value, depth, URLState.QUEUED))
            else:
                batch[url] = merged(old, value, merge)
        if not batch:
            return 0
        self._begin()
        # merge into URLs queued before this batch (the new ones do not exist yet)
        self._merge_batch(batch, merge, "AND urls.state = 0")
        host_ids = self._host_id_map({row[1] for row in inserts})
        queued_before = self.count(URLState.QUEUED)
        # each URL goes in with the batch's combined score, at its first occurrence
        self._conn.executemany(
            _INSERT,
            (
                (
                    url_hash(url),
                    url,
                    host_ids[host],
                    int(state),
                    batch[url] if state is URLState.QUEUED else score,
                    depth,
                    layer,
                )
                for url, host, score, depth, state in inserts
            ),
        )
        self._dirty.update(host_ids[row[1]] for row in inserts if row[4] is URLState.QUEUED)
        if edges:
            self._conn.executemany(_EDGE, ((url_hash(c), c, url_hash(p), p) for c, p in edges))
        return self.count(URLState.QUEUED) - queued_before

    def update_scores(self, updates: Iterable[tuple[str, float]], merge: Merge) -> int:
        """Merge new scores into known URLs of *any* state; unknown URLs are ignored.

        Unlike :meth:`add`, this also changes FETCHED/FAILED/DROPPED URLs: OTIE and
        OPIC keep cash on fetched pages, handed on when they are re-crawled
        (``mark(url, QUEUED)``). Repeated URLs are combined first (``ADD`` sums).
        Returns the number of URLs whose score was written (``MAX``: only those that
        went up; ``KEEP``: none).
        """
        scores = aggregated(updates, merge)
        if merge is Merge.KEEP or not scores:
            return 0
        self._begin()
        return self._merge_batch(scores, merge, "")

    def raise_children(self, parent: str, score: float, *, exclude: str | None = None) -> int:
        """Raise every QUEUED child of ``parent`` to at least ``score`` (P3 sibling update).

        ``exclude`` (the page that triggered the update) is left alone. Returns how
        many scores went up.
        """
        value = checked_score(parent, score)
        parent_id = self._id_of(parent)
        if parent_id is None:
            return 0
        self._begin()
        rows = self._conn.execute(
            "UPDATE urls SET score = ?1 WHERE state = 0 AND score < ?1 AND url IS NOT ?2"
            " AND id IN (SELECT child_id FROM parents WHERE parent_id = ?3) RETURNING host_id",
            (value, exclude, parent_id),
        ).fetchall()
        self._dirty.update(r[0] for r in rows)
        return len(rows)

    def pop(
        self,
        n: int,
        *,
        exclude_hosts: Collection[str] = (),
        max_per_host: int = 0,
        max_layer: int | None = None,
    ) -> list[QueuedURL]:
        """Take up to ``n`` best queued URLs (score desc, then discovery order) -> IN_FLIGHT.

        Hosts in ``exclude_hosts`` are skipped, at most ``max_per_host`` URLs of one
        host are taken (0 = no limit) and, if ``max_layer`` is given, only URLs of
        layers ``<= max_layer`` (Nutch-style generate for layered crawls, P0).
        """
        if n <= 0:
            return []
        self._begin()
        self._refresh_hosts()
        excluded = set(exclude_hosts)
        per_host = max_per_host if max_per_host > 0 else n
        layer_limit = _NO_LAYER_LIMIT if max_layer is None else max_layer
        # min-heap of the n best so far; key (score, -id): the worst kept is on top
        heap: list[tuple[float, int, str, int, tuple[Any, ...]]] = []
        hosts = self._conn.execute(
            "SELECT id, host, best, best_seq FROM hosts INDEXED BY hosts_best"
            " WHERE best IS NOT NULL ORDER BY best DESC, best_seq"
        )
        try:
            for host_id, host, best, best_seq in hosts:
                if host in excluded:
                    continue
                if len(heap) >= n and (best, -best_seq) < heap[0][:2]:
                    break  # no URL of this or any later host beats the n-th taken
                for row in self._conn.execute(_HOST_QUEUE, (host_id, layer_limit, per_host)):
                    key = (float(row[0]), -int(row[1]), host, host_id, row)
                    if len(heap) < n:
                        heapq.heappush(heap, key)
                    elif key[:2] > heap[0][:2]:
                        heapq.heapreplace(heap, key)
                    else:
                        break
        finally:
            hosts.close()
        taken = sorted(heap, key=lambda k: k[:2], reverse=True)
        self._conn.executemany("UPDATE urls SET state = 1 WHERE id = ?", ((-k[1],) for k in taken))
        self._dirty.update(k[3] for k in taken)
        return [
            QueuedURL(url, score, depth, host, parent, layer, seq)
            for _, _, host, _, (score, seq, url, depth, layer, parent) in taken
        ]

    def mark(self, url: str, state: URLState, *, score: float | None = None) -> None:
        """Set the state of a URL (and its score, if given).

        ``mark(url, QUEUED)`` re-queues a fetched URL (re-crawl). Raises
        :class:`~focuscrawl.exceptions.FrontierError` for an unknown URL.
        """
        value = None if score is None else checked_score(url, score)
        self._begin()
        row = self._conn.execute(
            "UPDATE urls SET state = ?1, score = coalesce(?2, score) WHERE h = ?3 AND url = ?4"
            " RETURNING host_id",
            (int(URLState(state)), value, url_hash(url), url),
        ).fetchone()
        if row is None:
            raise FrontierError(f"cannot mark unknown URL {url!r}")
        self._dirty.add(row[0])

    def requeue_in_flight(self) -> int:
        """After a crash: put every IN_FLIGHT URL back to QUEUED. Returns how many."""
        if self.count(URLState.IN_FLIGHT) == 0:
            return 0
        self._begin()
        rows = self._conn.execute("UPDATE urls SET state = 0 WHERE state = 1 RETURNING host_id")
        hosts = [r[0] for r in rows]
        self._dirty.update(hosts)
        return len(hosts)

    def drop_queued(self, max_layer: int | None = None) -> int:
        """Mark queued URLs (of layers ``<= max_layer``, or all) DROPPED.

        Layered crawls (P0) drop what is left beyond topN at the end of a round.
        """
        self._begin()
        limit = _NO_LAYER_LIMIT if max_layer is None else max_layer
        rows = self._conn.execute(
            "UPDATE urls SET state = 4 WHERE state = 0 AND layer <= ? RETURNING host_id", (limit,)
        )
        dropped = 0
        for (host_id,) in rows:
            self._dirty.add(host_id)
            dropped += 1
        return dropped

    # -- reads ----------------------------------------------------------------------

    @staticmethod
    def _queued(row: tuple[Any, ...]) -> QueuedURL:
        url, score, depth, host, parent, layer, seq = row[:7]
        return QueuedURL(url, float(score), depth, host, parent, layer, seq)

    def get(self, url: str) -> QueuedURL | None:
        """The stored row of a URL, whatever its state (``parent`` = first parent)."""
        row = self._conn.execute(
            _ROW + "WHERE u.h = ? AND u.url = ?", (url_hash(url), url)
        ).fetchone()
        return None if row is None else self._queued(row)

    def state(self, url: str) -> URLState | None:
        row = self._conn.execute(
            "SELECT state FROM urls WHERE h = ? AND url = ?", (url_hash(url), url)
        ).fetchone()
        return None if row is None else URLState(row[0])

    def parents(self, url: str) -> list[str]:
        """Every recorded parent: the first one first, then in discovery order."""
        rows = self._conn.execute(
            "SELECT p.url FROM urls AS c JOIN parents AS x ON x.child_id = c.id"
            " JOIN urls AS p ON p.id = x.parent_id WHERE c.h = ? AND c.url = ?"
            " ORDER BY p.id != c.parent_id, p.id",
            (url_hash(url), url),
        )
        return [r[0] for r in rows]

    def children(self, parent: str) -> list[str]:
        """Every URL that ``parent`` links to, in discovery order."""
        parent_id = self._id_of(parent)
        if parent_id is None:
            return []
        rows = self._conn.execute(
            "SELECT c.url FROM parents AS x JOIN urls AS c ON c.id = x.child_id"
            " WHERE x.parent_id = ? ORDER BY c.id",
            (parent_id,),
        )
        return [r[0] for r in rows]

    def count(self, state: URLState | None = None) -> int:
        if state is None:
            row = self._conn.execute("SELECT sum(n) FROM counts").fetchone()
        else:
            row = self._conn.execute(
                "SELECT n FROM counts WHERE state = ?", (int(state),)
            ).fetchone()
        return int(row[0] or 0)

    def host_count(self, host: str, states: Collection[URLState] = ()) -> int:
        """URLs of a host (in the given states, or all), from counters: no scan."""
        row = self._conn.execute(
            "SELECT n0, n1, n2, n3, n4 FROM hosts WHERE host = ?", (host,)
        ).fetchone()
        if row is None:
            return 0
        wanted = {int(s) for s in states} or set(range(5))
        return sum(int(row[s]) for s in wanted)

    def iter_urls(self, state: URLState | None = None) -> Iterator[QueuedURL]:
        """Every URL (in ``state``), in discovery order; safe to write while iterating."""
        last = 0
        condition = "" if state is None else f"AND u.state = {int(URLState(state))} "
        while True:
            rows = self._conn.execute(
                _ROW + f"WHERE u.id > ? {condition}ORDER BY u.id LIMIT 1000", (last,)
            ).fetchall()
            if not rows:
                return
            for row in rows:
                yield self._queued(row)
            last = rows[-1][6]

    def get_meta(self, key: str) -> str | None:
        row = self._conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self._begin()
        self._conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    # -- lifetime -------------------------------------------------------------------

    def commit(self) -> None:
        """Make every write so far durable (together, or not at all after a crash)."""
        if self._conn.in_transaction:
            self._refresh_hosts()
            self._conn.execute("COMMIT")

    def close(self) -> None:
        """Close the DB. Uncommitted writes are discarded, as a crash would: commit first."""
        if self._conn.in_transaction:
            self._conn.execute("ROLLBACK")
        self._dirty.clear()
        self._conn.close()


def _split(script: str) -> list[str]:
    """Statements of a schema script (``executescript`` would commit on its own)."""
    statements: list[str] = []
    current: list[str] = []
    for line in script.strip().splitlines():
        if line.startswith("--"):
            continue
        current.append(line)
        if sqlite3.complete_statement("\n".join(current)):
            statements.append("\n".join(current))
            current = []
    return statements


if TYPE_CHECKING:  # mypy proves the protocol is implemented
    _STORE: type[FrontierStore] = SqliteFrontier
