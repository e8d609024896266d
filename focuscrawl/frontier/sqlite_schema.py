"""Schema and SQL of the SQLite crawl DB (see :mod:`focuscrawl.frontier.sqlite`).

The per-URL data is split by temperature so that what a crawl touches on every
score update stays small enough to live in SQLite's page cache:

* ``urls`` (hot, ~60 B/URL with its index): keyed by the URL's fingerprint ``h``
  (the rowid: the table *is* the hash index, no separate lookup index), with the
  second fingerprint half ``h2``, discovery number ``seq``, host, state, score,
  layer and tier. ``urls_queue`` is the partial index ``(host_id, tier DESC, score
  DESC, seq) WHERE state = 0``: one priority queue per host (Heritrix-style, P2).
* ``url_text`` (cold): ``seq`` -> URL text, depth, first parent, fingerprint. Read
  only for URLs handed out, listed or looked at one by one.
* ``parents`` (cold): the parent relation, by ``seq``, with the link count t(i, j).
* ``hosts``: per-host counters per state and the key of each host's best queued
  URL (``best_tier``, ``best``, ``best_seq``, indexed), which is what ``pop`` walks.
* ``columns`` and ``vals``: the extra per-URL float columns, one row per value
  ever written (a URL without a row reads 0.0).
"""

from __future__ import annotations

import hashlib
import sqlite3
import struct
from collections.abc import Sequence
from pathlib import Path

from focuscrawl.exceptions import FrontierError

SCHEMA_VERSION = "3"
PAGE_SIZE = 2048  # measured at 300k URLs: 4096 B 28k ops/CPU-s, 2048 B 32k, 1024 B 27k
CHECKPOINT_PAGES = 16_384  # 32 MiB of WAL; the default (1000 pages) cost +25 % CPU
PROBE = 8  # slots h, h+1 ... h+7: where a URL goes if its h is taken by another URL

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS hosts(
    id INTEGER PRIMARY KEY, host TEXT UNIQUE NOT NULL, best_tier INTEGER, best REAL,
    best_seq INTEGER,
    n0 INTEGER NOT NULL DEFAULT 0, n1 INTEGER NOT NULL DEFAULT 0,
    n2 INTEGER NOT NULL DEFAULT 0, n3 INTEGER NOT NULL DEFAULT 0,
    n4 INTEGER NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS hosts_best ON hosts(best_tier DESC, best DESC, best_seq)
    WHERE best IS NOT NULL;
CREATE TABLE IF NOT EXISTS urls(
    h INTEGER PRIMARY KEY, h2 INTEGER NOT NULL, seq INTEGER NOT NULL,
    host_id INTEGER NOT NULL, state INTEGER NOT NULL, score REAL NOT NULL,
    layer INTEGER NOT NULL, tier INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS urls_queue ON urls(host_id, tier DESC, score DESC, seq)
    WHERE state = 0;
CREATE TABLE IF NOT EXISTS url_text(
    seq INTEGER PRIMARY KEY, h INTEGER NOT NULL, url TEXT NOT NULL,
    depth INTEGER NOT NULL, parent_seq INTEGER);
CREATE TABLE IF NOT EXISTS parents(
    parent_seq INTEGER NOT NULL, child_seq INTEGER NOT NULL, count INTEGER NOT NULL,
    PRIMARY KEY(parent_seq, child_seq)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS parents_child ON parents(child_seq);
CREATE TABLE IF NOT EXISTS columns(id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL);
CREATE TABLE IF NOT EXISTS vals(
    col INTEGER NOT NULL, seq INTEGER NOT NULL, value REAL NOT NULL,
    PRIMARY KEY(col, seq)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS counts(state INTEGER PRIMARY KEY, n INTEGER NOT NULL);
INSERT OR IGNORE INTO counts VALUES (0, 0), (1, 0), (2, 0), (3, 0), (4, 0);
CREATE TRIGGER IF NOT EXISTS urls_counted AFTER INSERT ON urls BEGIN
    UPDATE hosts SET n0 = n0 + (new.state = 0), n1 = n1 + (new.state = 1),
        n2 = n2 + (new.state = 2), n3 = n3 + (new.state = 3), n4 = n4 + (new.state = 4)
        WHERE id = new.host_id;
    UPDATE counts SET n = n + 1 WHERE state = new.state;
END;
-- state changes are rare (pop, mark); score updates, the hot path, fire nothing
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
    UPDATE url_text SET parent_seq = new.parent_seq
    WHERE seq = new.child_seq AND parent_seq IS NULL;
END;
"""

TEMP_SCHEMA = f"""
CREATE TEMP TABLE IF NOT EXISTS batch(h INTEGER NOT NULL, h2 INTEGER NOT NULL, score REAL);
CREATE TEMP TABLE IF NOT EXISTS slots(k INTEGER PRIMARY KEY);
INSERT OR IGNORE INTO temp.slots VALUES {", ".join(f"({k})" for k in range(PROBE))};
"""

# the row of a URL given its fingerprint (?1, ?2): a rowid range of PROBE slots
MATCH = "h BETWEEN ?1 AND ?1 + 7 AND h2 = ?2"

# recompute the best queued URL of the hosts listed in ?1 (a JSON array of ids)
REFRESH_HOSTS = """
UPDATE hosts SET (best_tier, best, best_seq) = (
    SELECT tier, score, seq FROM urls WHERE host_id = hosts.id AND state = 0
    ORDER BY tier DESC, score DESC, seq LIMIT 1)
WHERE id IN (SELECT value FROM json_each(?1))
"""

# keys (tier, score, -seq) only went up: a host's best can only be replaced by a better key
RAISE_HOST = """
UPDATE hosts SET best_tier = ?2, best = ?3, best_seq = ?4
WHERE id = ?1 AND (best IS NULL OR best_tier < ?2 OR (best_tier = ?2 AND (
    best < ?3 OR (best = ?3 AND best_seq > ?4))))
"""

# the first free slot of a new URL (one lookup: slot h is free but for a collision)
INSERT_HOT = """
INSERT INTO urls(h, h2, seq, host_id, state, score, layer, tier)
SELECT ?1 + k, ?2, ?3, ?4, ?5, ?6, ?7, ?8 FROM temp.slots
WHERE NOT EXISTS (SELECT 1 FROM urls WHERE h = ?1 + k) ORDER BY k LIMIT 1
"""

INSERT_COLD = f"""
INSERT INTO url_text(seq, h, url, depth) SELECT ?3, h, ?4, ?5 FROM urls WHERE {MATCH}
"""

# the stored row of every URL of temp.batch: the batch is the outer loop, and each of
# its rows one rowid range lookup (UPDATE ... FROM would materialise the join first)
RESOLVE = """
SELECT b.h, b.h2, u.h, u.host_id, u.state, u.score, u.seq, u.tier FROM temp.batch AS b
CROSS JOIN urls AS u ON u.h BETWEEN b.h AND b.h + 7 AND u.h2 = b.h2
"""

ROW = """
SELECT t.url, u.score, t.depth, hs.host, p.url, u.layer, u.seq, u.tier, u.state
FROM urls AS u JOIN url_text AS t ON t.seq = u.seq JOIN hosts AS hs ON hs.id = u.host_id
LEFT JOIN url_text AS p ON p.seq = t.parent_seq
"""

ROWS_IN_ORDER = """
SELECT t.url, u.score, t.depth, hs.host, p.url, u.layer, t.seq, u.tier, u.state
FROM url_text AS t JOIN urls AS u ON u.h = t.h JOIN hosts AS hs ON hs.id = u.host_id
LEFT JOIN url_text AS p ON p.seq = t.parent_seq
"""

HOST_QUEUE = """
SELECT score, seq, h, layer FROM urls INDEXED BY urls_queue
WHERE host_id = ?1 AND state = 0 AND tier = ?4 AND layer <= ?2
ORDER BY tier DESC, score DESC, seq LIMIT ?3
"""

# the best tier a host has among its queued URLs of layers <= ?2
HOST_TOP_TIER = """
SELECT tier FROM urls INDEXED BY urls_queue
WHERE host_id = ?1 AND state = 0 AND layer <= ?2 ORDER BY tier DESC, score DESC, seq LIMIT 1
"""

TEXT_OF = """
SELECT t.url, t.depth, p.url FROM url_text AS t LEFT JOIN url_text AS p ON p.seq = t.parent_seq
WHERE t.seq = ?
"""


TWO_INT64 = struct.Struct("<qq").unpack  # a 16-byte digest -> two signed 64-bit ints


def url_key(url: str) -> tuple[int, int]:
    """128-bit BLAKE2b fingerprint of a URL as two signed 64-bit ints ``(h, h2)``.

    ``h`` keeps 63 bits so that its probe slots ``h .. h+7`` never overflow. Two
    URLs are the same iff both halves match: a false match needs a 128-bit
    collision (probability ~N²/2¹²⁹, 1e-27 at a million URLs), and saves reading
    the URL text on every lookup.

    >>> url_key("http://a.org/") == url_key("http://a.org/")
    True
    >>> h, h2 = url_key("http://a.org/")
    >>> -(2**62) <= h < 2**62 and -(2**63) <= h2 < 2**63
    True
    """
    digest = hashlib.blake2b(url.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    h, h2 = TWO_INT64(digest)
    return h >> 1, h2


def split_script(script: str) -> list[str]:
    """Statements of a schema script (``executescript`` would commit on its own).

    >>> split_script("CREATE TABLE a(x);\\n-- why\\nCREATE TABLE b(y);")
    ['CREATE TABLE a(x);', 'CREATE TABLE b(y);']
    """
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


def connect_crawl_db(
    path: Path,
    *,
    pragmas: Sequence[str],
    schema: str,
    version: str,
    session_schema: str = "",
) -> sqlite3.Connection:
    """Connect (autocommit mode), apply ``pragmas``, create ``schema`` or check ``version``.

    Shared by the stores: each brings its own pragmas, schema and version, and
    ``session_schema`` (e.g. temporary tables) is created on every connection.
    """
    try:
        # the engine commits in its commit thread while the loop waits for it (one
        # thread at a time uses the connection): not tied to the thread that opened it
        conn = sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise FrontierError(f"cannot open crawl DB {path}: {exc}") from exc
    try:
        for pragma in pragmas:
            conn.execute(f"PRAGMA {pragma}")
        conn.execute("BEGIN IMMEDIATE")
        found = _schema_version(conn, path)
        if found is None:
            for statement in split_script(schema):
                conn.execute(statement)
            conn.execute("INSERT OR REPLACE INTO meta VALUES ('_schema', ?)", (version,))
        elif found != version:
            raise FrontierError(f"crawl DB {path} has schema {found}, not {version}")
        conn.execute("COMMIT")
        for statement in split_script(session_schema):
            conn.execute(statement)
    except sqlite3.Error as exc:
        conn.close()
        raise FrontierError(f"unusable crawl DB {path}: {exc}") from exc
    except FrontierError:
        conn.close()
        raise
    return conn


def edges_mode(conn: sqlite3.Connection, path: Path, wanted: bool, *, old: bool = False) -> bool:
    """Whether the crawl DB keeps parent edges: fixed when it is created (meta
    ``_parents``), to ``wanted`` (or to True for a DB made before the setting:
    ``old``); asking them of a DB that keeps none is a FrontierError."""
    row = conn.execute("SELECT value FROM meta WHERE key = '_parents'").fetchone()
    if row is None:
        keep = wanted or old
        conn.execute("INSERT INTO meta VALUES ('_parents', ?)", ("1" if keep else "0",))
        return keep
    if wanted and row[0] != "1":
        raise FrontierError(
            f"crawl DB {path} keeps no parent edges, and this crawl's strategy"
            " needs them: start it in a new directory"
        )
    return bool(row[0] == "1")


def open_crawl_db(path: Path) -> sqlite3.Connection:
    """The SQLite store's connection: its pragmas, schema and temporary tables."""
    return connect_crawl_db(
        path,
        pragmas=(
            # a random score update dirties a page of urls and one of its index: small
            # pages make the WAL written per commit small (no-op on an existing DB)
            f"page_size={PAGE_SIZE}",
            "journal_mode=WAL",
            "synchronous=NORMAL",
            # checkpoint seldom: a page dirtied by many commits is copied back once
            f"wal_autocheckpoint={CHECKPOINT_PAGES}",
            "temp_store=MEMORY",
            # an automatic index on urls(h2) would be built over every URL per batch
            "automatic_index=OFF",
        ),
        schema=SCHEMA,
        version=SCHEMA_VERSION,
        session_schema=TEMP_SCHEMA,
    )


def _schema_version(conn: sqlite3.Connection, path: Path) -> str | None:
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
    if not tables:
        return None
    if "meta" not in tables:
        raise FrontierError(f"{path} is an SQLite file but not a crawl DB")
    row = conn.execute("SELECT value FROM meta WHERE key = '_schema'").fetchone()
    if row is None:
        raise FrontierError(f"{path} is an SQLite file but not a crawl DB")
    return str(row[0])
