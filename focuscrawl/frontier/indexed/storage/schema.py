"""Schema of the indexed crawl DB (see :mod:`focuscrawl.frontier.indexed`).

The hot columns of every URL (fingerprint, host, layer, state, score, tier, and the
extra float columns a strategy asks for) live in numpy arrays while the DB is open;
on disk they are kept as

* ``snapshot``: each array as BLOB parts of :data:`PART_ROWS` rows, written by a
  compaction (an extra column ``c`` under the name ``x.c``);
* ``fresh``: per commit, the immutable columns (fingerprint, host, layer) of the
  rows added since the previous commit, as one BLOB each;
* ``journal``: per commit, ``(row, state, score, tier)`` of every row changed since
  the previous commit, as four BLOBs: one sequential insert, whatever rows changed;
* ``col_journal``: per commit and extra column, ``(row, value)`` of the rows whose
  value changed (a fresh row reads 0.0 until it has one).

Opening the DB replays them in this order. The cold per-URL data is plain SQL,
appended in bulk (see :mod:`~focuscrawl.frontier.indexed.storage.cold`): ``url_text``
(``seq`` = row + 1 -> URL text, depth, first parent; ``orphans`` lists the
URLs without a parent yet), ``links`` (the parent relation with the link
counts t(i, j), one row per parent and flush, only in a DB that keeps parent
edges: meta ``_parents`` = ``1``) and ``columns`` (the names of the extra columns).
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from focuscrawl.exceptions import FrontierError
from focuscrawl.frontier.indexed.storage.sqlite import TWO_INT64, connect_crawl_db, url_key

__all__ = ["TWO_INT64", "checked_text", "fingerprints", "keys_of", "open_indexed_db", "url_key"]

SCHEMA_VERSION = "indexed-3"  # 3: no trigger, orphans, optional parent edges
PART_ROWS = 1 << 20  # rows per snapshot BLOB: 8 MiB for a float64 column
CACHE_KIB = 4096  # page cache: hot data is in numpy, SQLite only appends and reads cold rows
WAL_LIMIT = 64 << 20  # bytes of WAL file kept after a checkpoint

# name -> dtype of each per-row array; STATE, SCORE and TIER change, the others never do
COLUMNS: dict[str, npt.DTypeLike] = {
    "h": np.int64,
    "h2": np.int64,
    "host": np.int32,
    "layer": np.int32,
    "state": np.int8,
    "score": np.float64,
    "tier": np.int32,
}
EXTRA_PREFIX = "x."  # snapshot name of an extra column
IMMUTABLE = ("h", "h2", "host", "layer")

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS hosts(id INTEGER PRIMARY KEY, host TEXT UNIQUE NOT NULL);
CREATE TABLE IF NOT EXISTS url_text(
    seq INTEGER PRIMARY KEY, url TEXT NOT NULL, depth INTEGER NOT NULL, parent_seq INTEGER);
-- read once at open: the URLs that may still get their first parent (few)
CREATE TABLE IF NOT EXISTS orphans(seq INTEGER PRIMARY KEY);
-- a parent's edges of one flush: child rows (int32) and link counts (int64)
CREATE TABLE IF NOT EXISTS links(
    id INTEGER PRIMARY KEY, parent_seq INTEGER NOT NULL, children BLOB NOT NULL,
    counts BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS links_parent ON links(parent_seq);
CREATE TABLE IF NOT EXISTS snapshot(
    name TEXT NOT NULL, part INTEGER NOT NULL, data BLOB NOT NULL, PRIMARY KEY(name, part));
CREATE TABLE IF NOT EXISTS fresh(
    first INTEGER PRIMARY KEY, h BLOB NOT NULL, h2 BLOB NOT NULL, host BLOB NOT NULL,
    layer BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS journal(
    id INTEGER PRIMARY KEY, rows BLOB NOT NULL, state BLOB NOT NULL, score BLOB NOT NULL,
    tier BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS columns(name TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS col_journal(
    id INTEGER PRIMARY KEY, name TEXT NOT NULL, rows BLOB NOT NULL, vals BLOB NOT NULL);
"""

TEXT_OF = """
SELECT t.url, t.depth, p.url FROM url_text AS t LEFT JOIN url_text AS p ON p.seq = t.parent_seq
WHERE t.seq = ?
"""

TEXT_MANY = """
SELECT t.seq, t.url, t.depth, p.url FROM url_text AS t
LEFT JOIN url_text AS p ON p.seq = t.parent_seq WHERE t.seq IN (SELECT value FROM json_each(?))
"""

TEXT_RANGE = """
SELECT t.seq, t.url, t.depth, p.url FROM url_text AS t
LEFT JOIN url_text AS p ON p.seq = t.parent_seq WHERE t.seq BETWEEN ? AND ? ORDER BY t.seq
"""


def fingerprints(urls: Sequence[str]) -> npt.NDArray[np.int64]:
    """128-bit BLAKE2b fingerprints of ``urls``: an ``(n, 2)`` array of ``(h, h2)``.

    The same values as :func:`focuscrawl.frontier.indexed.storage.sqlite.url_key` (``h``
    keeps 63 bits), computed without a Python int per URL.

    >>> from focuscrawl.frontier.indexed.storage.sqlite import url_key
    >>> tuple(fingerprints(["http://a.org/"])[0].tolist()) == url_key("http://a.org/")
    True
    """
    blake = hashlib.blake2b
    try:  # the strict codec is faster than a named error handler, and the same bytes
        digests = b"".join([blake(u.encode(), digest_size=16).digest() for u in urls])
    except UnicodeEncodeError:  # a lone surrogate: never stored, but it can be looked up
        digests = b"".join(
            [blake(u.encode("utf-8", "surrogatepass"), digest_size=16).digest() for u in urls]
        )
    keys = np.frombuffer(digests, dtype="<i8").reshape(-1, 2).astype(np.int64)
    keys[:, 0] >>= 1
    return keys


def keys_of(urls: Sequence[str]) -> list[tuple[int, int]]:
    """:func:`fingerprints` as Python ints, for a few URLs (no array to build).

    A URL that cannot be stored (a lone surrogate) raises UnicodeEncodeError.

    >>> keys_of(["http://a.org/"]) == [tuple(fingerprints(["http://a.org/"])[0].tolist())]
    True
    """
    blake = hashlib.blake2b
    digests = [blake(u.encode(), digest_size=16).digest() for u in urls]
    return [(h >> 1, h2) for h, h2 in map(TWO_INT64, digests)]


def checked_text(text: str) -> str:
    """``text`` if SQLite can store it (UTF-8: no lone surrogates), else FrontierError.

    >>> checked_text("http://a.org/é")
    'http://a.org/é'
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise FrontierError(f"cannot store {text!r}: not encodable as UTF-8") from exc
    return text


def open_indexed_db(path: Path) -> sqlite3.Connection:
    """The indexed store's connection: its pragmas and schema."""
    return connect_crawl_db(
        path,
        pragmas=(
            "journal_mode=WAL",
            "synchronous=NORMAL",
            f"cache_size=-{CACHE_KIB}",
            # a compaction passes the whole snapshot through the WAL: do not keep it that big
            f"journal_size_limit={WAL_LIMIT}",
        ),
        schema=SCHEMA,
        version=SCHEMA_VERSION,
    )
