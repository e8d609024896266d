"""The crawl DB's SQLite file, whatever store's schema it holds: URL fingerprints,
the connection with its pragmas and schema version, and whether it keeps parent edges.

The indexed store (:mod:`focuscrawl.frontier.indexed`) keeps its durable copy here.
A crawl DB made by the plain SQLite store of earlier versions (schema "3"; the store
was removed, issue 25: the indexed store is faster and also keeps its data in
SQLite) is refused with one line naming its schema.
"""

from __future__ import annotations

import hashlib
import sqlite3
import struct
from collections.abc import Sequence
from pathlib import Path

from focuscrawl.exceptions import FrontierError

TWO_INT64 = struct.Struct("<qq").unpack  # a 16-byte digest -> two signed 64-bit ints


def url_key(url: str) -> tuple[int, int]:
    """128-bit BLAKE2b fingerprint of a URL as two signed 64-bit ints ``(h, h2)``.

    ``h`` keeps 63 bits (a signed key with room above it). Two URLs are the same iff
    both halves match: a false match needs a 128-bit
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
