"""Durable form of the hot columns: load at open, journal at commit, compaction.

See :mod:`focuscrawl.frontier.indexed.storage.schema` for the tables. A commit writes two
or three sequential BLOB rows whatever the number of rows changed (~17 B per
changed row), instead of one random B-tree page per changed row; a compaction
rewrites the snapshot once the journal holds more rows than it is worth
replaying, so the replay at open stays a few numpy assignments.
"""

from __future__ import annotations

import sqlite3

import numpy as np

from focuscrawl.exceptions import FrontierError
from focuscrawl.frontier.indexed.storage.schema import COLUMNS, EXTRA_PREFIX, IMMUTABLE, PART_ROWS
from focuscrawl.frontier.indexed.table import Rows, UrlTable, drop_repeats

_SNAPSHOT_ROWS = "_snapshot_rows"


def _meta_int(conn: sqlite3.Connection, key: str) -> int:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return 0 if row is None else int(row[0])


def load_table(conn: sqlite3.Connection) -> tuple[UrlTable, int]:
    """The committed hot columns: snapshot, then fresh rows, then the journal replayed.

    Every BLOB is copied straight into the final arrays, one at a time. Returns the
    table and the number of journal rows (the compaction trigger).
    """
    snapshot_rows = _meta_int(conn, _SNAPSHOT_ROWS)
    fresh = conn.execute("SELECT coalesce(sum(length(h)), 0) FROM fresh").fetchone()[0]
    rows = snapshot_rows + int(fresh) // 8
    table = UrlTable(rows)
    extras = [str(name) for (name,) in conn.execute("SELECT name FROM columns ORDER BY name")]
    for name in extras:
        table.add_extra(name)
    stored = [(name, name, COLUMNS[name]) for name in COLUMNS]
    stored += [(EXTRA_PREFIX + name, name, np.float64) for name in extras]
    for key, name, dtype in stored:
        column, end = table.extra.get(name), 0
        if column is None:
            column = table.column_buffer(name)
        for (blob,) in conn.execute(
            "SELECT data FROM snapshot WHERE name = ? ORDER BY part", (key,)
        ):
            part = np.frombuffer(blob, dtype)
            column[end : end + len(part)] = part
            end += len(part)
        # an extra column created since the last compaction has no snapshot: all 0.0
        if end != snapshot_rows and not (end == 0 and name in table.extra):
            raise FrontierError(f"crawl DB snapshot column {name} is incomplete")
    end = snapshot_rows
    for first, *blobs in conn.execute("SELECT first, h, h2, host, layer FROM fresh ORDER BY first"):
        if first != end:
            raise FrontierError(f"crawl DB rows {end}..{first} are missing")
        for name, blob in zip(IMMUTABLE, blobs, strict=True):
            part = np.frombuffer(blob, COLUMNS[name])
            table.column_buffer(name)[end : end + len(part)] = part
        end += len(blobs[0]) // 8
    journal_rows = 0
    for rows_blob, state_blob, score_blob, tier_blob in conn.execute(
        "SELECT rows, state, score, tier FROM journal ORDER BY id"
    ):
        changed = _journal_rows(rows_blob, rows)
        table.state[changed] = np.frombuffer(state_blob, COLUMNS["state"])
        table.score[changed] = np.frombuffer(score_blob, COLUMNS["score"])
        table.tier[changed] = np.frombuffer(tier_blob, COLUMNS["tier"])
        journal_rows += len(changed)
    for name, rows_blob, vals_blob in conn.execute(
        "SELECT name, rows, vals FROM col_journal ORDER BY id"
    ):
        if name not in table.extra:
            raise FrontierError(f"crawl DB journal names an unknown column {name!r}")
        changed = _journal_rows(rows_blob, rows)
        table.extra[name][changed] = np.frombuffer(vals_blob, np.float64)
        journal_rows += len(changed)
    table.n = rows
    table.tiered = bool(table.tier[:rows].any())
    table.reindex()
    return table, journal_rows


def _journal_rows(blob: bytes, rows: int) -> Rows:
    changed = np.frombuffer(blob, np.int32)
    if len(changed) and not 0 <= int(changed.min()) <= int(changed.max()) < rows:
        raise FrontierError("crawl DB journal names an unknown row")
    return changed.astype(np.int64)


def write_commit(
    conn: sqlite3.Connection,
    table: UrlTable,
    committed: int,
    changed: list[Rows],
    extra_changed: dict[str, list[Rows]],
) -> int:
    """Append the rows added since row ``committed``, the ``changed`` rows' state, score
    and tier, and the values of the ``extra_changed`` rows of each extra column.

    Runs inside the caller's transaction. Returns the number of journal rows written.
    """
    written = 0
    for name, parts in extra_changed.items():
        if parts:
            rows = drop_repeats(np.sort(np.concatenate(parts)))
            conn.execute(
                "INSERT INTO col_journal(name, rows, vals) VALUES (?, ?, ?)",
                (name, rows.astype(np.int32).tobytes(), table.extra[name][rows].tobytes()),
            )
            written += len(rows)
    end = table.n
    if end > committed:
        conn.execute(
            "INSERT INTO fresh VALUES (?, ?, ?, ?, ?)",
            (committed, *(table.column(name)[committed:end].data for name in IMMUTABLE)),
        )
        changed = [*changed, np.arange(committed, end, dtype=np.int64)]
    if not changed:
        return written
    rows = drop_repeats(np.sort(np.concatenate(changed)))
    conn.execute(
        "INSERT INTO journal(rows, state, score, tier) VALUES (?, ?, ?, ?)",
        (
            rows.astype(np.int32).tobytes(),
            table.state[rows].tobytes(),
            table.score[rows].tobytes(),
            table.tier[rows].tobytes(),
        ),
    )
    return written + len(rows)


def compact(conn: sqlite3.Connection, table: UrlTable) -> None:
    """Fold fresh rows and journal into the snapshot (inside the caller's transaction).

    The immutable columns are rewritten only from the part holding the first row
    not yet in the snapshot; state, score, tier and the extra columns, which change
    anywhere, entirely.
    """
    snapshot_rows = _meta_int(conn, _SNAPSHOT_ROWS)
    parts = -(-table.n // PART_ROWS)
    stored = [(name, table.column(name)) for name in COLUMNS]
    stored += [(EXTRA_PREFIX + name, array[: table.n]) for name, array in table.extra.items()]
    for name, column in stored:
        first = snapshot_rows // PART_ROWS if name in IMMUTABLE else 0
        conn.executemany(
            "INSERT OR REPLACE INTO snapshot VALUES (?, ?, ?)",
            (
                (name, part, column[part * PART_ROWS : (part + 1) * PART_ROWS].data)
                for part in range(first, parts)
            ),
        )
    conn.execute("DELETE FROM fresh")
    conn.execute("DELETE FROM journal")
    conn.execute("DELETE FROM col_journal")
    conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (_SNAPSHOT_ROWS, str(table.n)))
