"""Full-text search over a crawl's pages: an SQLite FTS5 index kept beside the run.

The index follows what the crawl has *committed*: the crawl DB's engine state holds
the lengths of ``pages.jsonl`` and ``corpus.warc.gz`` that its last commit accounts
for, and :meth:`SearchIndex.update` reads the pages and WARC records between what
it indexed before and those lengths, extracts each HTML page's main text as the
export does (:func:`focuscrawl.output.corpus.main_text`) and stores the rows and
the new lengths in one SQLite transaction. A record the crawl had not committed is
never indexed (a resume cuts it and writes it again), and an update killed half way
leaves the index as it was: after a ``kill -9`` of either, the next update makes it
exactly the committed pages, each once.
"""

from __future__ import annotations

import json
import sqlite3
import threading
from pathlib import Path
from typing import Any

from warcio.archiveiterator import ArchiveIterator

from focuscrawl.output.corpus import in_corpus, page_row, with_text

MAX_QUERY = 1000  # characters of a search query
_MARK = ("\ue000", "\ue001")  # around matched words in snippets (private-use characters)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS pages (
    id INTEGER PRIMARY KEY, url TEXT NOT NULL, final_url TEXT, title TEXT, language TEXT,
    relevance REAL, status INTEGER, fetched_at TEXT);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(title, text);
CREATE TABLE IF NOT EXISTS progress (id INTEGER PRIMARY KEY CHECK (id = 0),
    pages_offset INTEGER NOT NULL, warc_offset INTEGER NOT NULL);
"""


class SearchError(ValueError):
    """A query the index cannot run (FTS syntax, too long): a one-line message."""


def committed_offsets(run_dir: Path) -> tuple[int, int] | None:
    """(pages.jsonl, corpus.warc.gz) lengths of the crawl's last commit, from its crawl DB
    (read-only); None without one (not started, or a crawl DB on Redis)."""
    db = run_dir / "crawl.db"
    if not db.is_file():
        return None
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'engine'").fetchone()
        finally:
            conn.close()
        state = json.loads(row[0]) if row else None
    except (sqlite3.Error, ValueError, TypeError):
        return None
    if not isinstance(state, dict):
        return None
    return int(state.get("pages_offset") or 0), int(state.get("warc_offset") or 0)


class SearchIndex:
    """The FTS5 index of one run directory, in the SQLite file ``path``."""

    def __init__(self, path: Path, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.conn = sqlite3.connect(path, timeout=30, check_same_thread=False)
        self.conn.executescript(_SCHEMA)
        self.lock = threading.Lock()  # the server updates and searches from threads

    def close(self) -> None:
        self.conn.close()

    def progress(self) -> tuple[int, int]:
        row = self.conn.execute("SELECT pages_offset, warc_offset FROM progress").fetchone()
        return (int(row[0]), int(row[1])) if row else (0, 0)

    def count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM pages").fetchone()[0])

    def update(self) -> int:
        """Index the pages committed since the last update; how many were added."""
        with self.lock:
            return self._update()

    def _update(self) -> int:
        committed = committed_offsets(self.run_dir)
        if committed is None:
            return 0
        pages_end, warc_end = committed
        pages_at, warc_at = self.progress()
        if pages_end < pages_at:  # a crawl DB made anew under the same name: start over
            with self.conn:
                self.conn.execute("DELETE FROM pages")
                self.conn.execute("DELETE FROM fts")
                self.conn.execute("DELETE FROM progress")
            pages_at = warc_at = 0
        if pages_end == pages_at:
            return 0
        offsets = self._records(warc_at, warc_end)
        rows = []
        with open(self.run_dir / "pages.jsonl", "rb") as fh:
            fh.seek(pages_at)
            data = fh.read(pages_end - pages_at)
        for line in data.splitlines():
            try:
                page = json.loads(line)
            except ValueError:
                continue
            if not isinstance(page, dict) or "url" not in page:
                continue
            queue = offsets.get(page.get("final_url") or page["url"]) if page.get("status") else None
            where = queue.pop(0) if queue else None  # taken in order even when the page is left out
            if in_corpus(page):
                rows.append(page_row(page, where))
        rows = with_text(str(self.run_dir), rows)
        with self.conn:
            for row in rows:
                cur = self.conn.execute(
                    "INSERT INTO pages (url, final_url, title, language, relevance, status, fetched_at)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (row["url"], row["final_url"], row["title"], row["language"], row["relevance"],
                     row["status"], row["fetched_at"]),
                )  # fmt: skip
                self.conn.execute("INSERT INTO fts (rowid, title, text) VALUES (?, ?, ?)",
                                  (cur.lastrowid, row["title"] or "", row["text"] or ""))  # fmt: skip
            self.conn.execute("INSERT OR REPLACE INTO progress VALUES (0, ?, ?)", (pages_end, warc_end))
        return len(rows)

    def _records(self, start: int, end: int) -> dict[str, list[tuple[str, int]]]:
        """URL -> offsets of the response records between ``start`` and ``end``."""
        found: dict[str, list[tuple[str, int]]] = {}
        if end <= start:
            return found
        with open(self.run_dir / "corpus.warc.gz", "rb") as fh:
            fh.seek(start)
            iterator = ArchiveIterator(fh)
            for record in iterator:
                offset = start + iterator.get_record_offset()
                if offset >= end:
                    break
                if record.rec_type == "response":
                    url = record.rec_headers.get_header("WARC-Target-URI") or ""
                    found.setdefault(url, []).append(("corpus.warc.gz", offset))
        return found

    def search(self, query: str, limit: int = 20) -> list[dict[str, Any]]:
        """The pages whose title or main text match ``query`` (FTS5 syntax), best first."""
        if len(query) > MAX_QUERY:
            raise SearchError(f"query: {len(query):,} characters; at most {MAX_QUERY:,}")
        if not query.strip():
            raise SearchError("query: empty")
        try:
            with self.lock:
                found = self.conn.execute(
                    "SELECT p.url, p.final_url, p.title, p.language, p.relevance, p.status,"
                    f" p.fetched_at, snippet(fts, -1, '{_MARK[0]}', '{_MARK[1]}', ' … ', 16)"
                    " FROM fts JOIN pages p ON p.id = fts.rowid WHERE fts MATCH ?"
                    " ORDER BY rank LIMIT ?",
                    (query, max(1, min(limit, 200))),
                ).fetchall()  # fmt: skip
        except sqlite3.OperationalError as exc:
            raise SearchError(f"query: {str(exc).splitlines()[0]}") from None
        keys = ("url", "final_url", "title", "language", "relevance", "status", "fetched_at", "snippet")
        return [dict(zip(keys, row, strict=True)) for row in found]


def snippet_parts(snippet: str) -> list[tuple[str, bool]]:
    """A snippet as (text, matched) parts, for a template to escape and mark.

    >>> snippet_parts("a \ue000cat\ue001 sat")
    [('a ', False), ('cat', True), (' sat', False)]
    """
    parts: list[tuple[str, bool]] = []
    rest = snippet
    while rest:
        before, _, after = rest.partition(_MARK[0])
        if before:
            parts.append((before, False))
        if not after:
            break
        hit, _, rest = after.partition(_MARK[1])
        parts.append((hit, True))
    return parts
