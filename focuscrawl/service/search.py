"""Full-text search over a crawl's pages: an SQLite FTS5 index kept beside the run.

The index follows what the crawl has *committed*: the crawl DB's engine state holds
the lengths of ``pages.jsonl`` and ``corpus.warc.gz`` that its last commit accounts
for, and :meth:`SearchIndex.update` reads the pages and WARC records between what
it indexed before and those lengths, takes each HTML page's text: the main text
the crawl's model read, from ``texts.jsonl`` (see :class:`~focuscrawl.output.writers.PagesOutput`),
else the page's visible text without its frame (:func:`focuscrawl.output.corpus.visible_text`,
a twentieth of trafilatura's CPU; the export's column stays trafilatura's), and stores
the rows and the new lengths in one SQLite transaction. A record the crawl had not committed is
never indexed (a resume cuts it and writes it again), and an update killed half way
leaves the index as it was: after a ``kill -9`` of either, the next update makes it
exactly the committed pages, each once.

A shared crawl's pages are in its workers' run directories (``workers/NN``): the
index follows each of them, a worker's commits read from its journal in the crawl's
Redis (a worker's crawl DB is a marker naming its crawl and itself), or, for a
worker that finished, from the files themselves (its last commit was their end).
"""

from __future__ import annotations

import re
import sqlite3
import threading
from pathlib import Path
from typing import Any

from focuscrawl.exceptions import ArchiveError
from focuscrawl.output.committed import committed_offsets
from focuscrawl.output.corpus import (
    PAGES_NAME,
    WARC_NAME,
    PendingRow,
    Where,
    in_corpus,
    page_record,
    pending_row,
    with_text,
    with_visible_text,
)
from focuscrawl.output.layout import WORKERS_DIR
from focuscrawl.output.warc_scan import page_offsets
from focuscrawl.output.writers import TEXTS_NAME, read_texts
from focuscrawl.relevance.text import MARKS

MAX_QUERY = 1000  # characters of a search query
# FTS5's tokenizer (unicode61) ends a word at a space or a punctuation mark, so a run of
# Han, kana or Hangul, written without spaces, was one token ("这是关于猫的页面"): no search
# found 猫 or 可爱 inside it. Each such character is made a word of its own by a zero
# width space (a separator to unicode61) in what is indexed and in the query, where a
# run of them is then a phrase of its characters (小猫 finds 小猫, not 小...猫).
# Thai, Lao, Myanmar and Khmer are written without spaces too (ภาษาไทย was one word:
# no search found ไทย in it); their letters are split with their combining marks (ที่
# is one letter to search, not ท and two marks).
_CJK_CHAR = ("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
             "\uff66-\uff9f\U00020000-\U0002fa1f\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff]")  # fmt: skip
_CJK_PAIR = re.compile(f"({_CJK_CHAR})(?=(?![{MARKS}]){_CJK_CHAR})")
_SPLIT = "\u200b"
_VERSION = 2  # of the index's text (PRAGMA user_version): 1, CJK characters split; 2, Thai too
_MARK = ("\ue000", "\ue001")  # around matched words in snippets (private-use characters)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS pages (
    id INTEGER PRIMARY KEY, url TEXT NOT NULL, final_url TEXT, title TEXT, language TEXT,
    relevance REAL, status INTEGER, fetched_at TEXT);
CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(title, text);
CREATE TABLE IF NOT EXISTS sources (dir TEXT PRIMARY KEY,
    pages_offset INTEGER NOT NULL, warc_offset INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS texts (dir TEXT PRIMARY KEY, texts_offset INTEGER NOT NULL);
"""


class SearchError(ValueError):
    """A query the index cannot run (FTS syntax, too long): a one-line message."""


def source_dirs(run_dir: Path) -> list[Path]:
    """The directories whose pages a run's index holds: the run directory, then its
    workers' (a shared crawl's), in their order."""
    return [run_dir, *sorted(p for p in (run_dir / WORKERS_DIR).glob("*") if p.is_dir())]


class SearchIndex:
    """The FTS5 index of one run directory, in the SQLite file ``path``."""

    def __init__(self, path: Path, run_dir: Path, *, extract: bool = False) -> None:
        self.run_dir = run_dir
        # the text of a page whose text the crawl did not keep: its visible text (the
        # server's), or with ``extract`` trafilatura's as the export has it (20 times the CPU)
        self._with_text = with_text if extract else with_visible_text
        self.conn = sqlite3.connect(path, timeout=30, check_same_thread=False)
        self.conn.executescript(_SCHEMA)
        with self.conn:  # an index of an earlier server: its one source, the run directory
            if self.conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'progress'").fetchone():
                self.conn.execute("INSERT OR IGNORE INTO sources SELECT '', pages_offset, warc_offset"
                                  " FROM progress")  # fmt: skip
                self.conn.execute("DROP TABLE progress")
        if self.conn.execute("PRAGMA user_version").fetchone()[0] < _VERSION:
            with self.conn:  # an index of an earlier server, its text split otherwise: anew
                self._clear()
                self.conn.execute(f"PRAGMA user_version = {_VERSION}")
        self.lock = threading.Lock()  # the server updates and searches from threads

    def close(self) -> None:
        self.conn.close()

    def progress(self, source: str = "") -> tuple[int, int]:
        """(pages.jsonl, WARC) lengths indexed of ``source`` (a directory relative to the
        run directory: '' itself, ``workers/NN`` a worker's)."""
        row = self.conn.execute("SELECT pages_offset, warc_offset FROM sources WHERE dir = ?",
                                (source,)).fetchone()  # fmt: skip
        return (int(row[0]), int(row[1])) if row else (0, 0)

    def count(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM pages").fetchone()[0])

    def update(self) -> int:
        """Index the pages committed since the last update; how many were added."""
        with self.lock:
            added = 0
            for directory in source_dirs(self.run_dir):
                added += self._update(directory)
            return added

    def update_or_why(self) -> str | None:
        """:meth:`update`, or why the run could not be read (a damaged WARC, a file gone):
        the index stays as it was and is searched as it is, behind the crawl."""
        try:
            self.update()
        except (ArchiveError, OSError, sqlite3.Error) as exc:
            return f"the index is behind the crawl: {str(exc).splitlines()[0][:300]}"
        return None

    def _update(self, directory: Path) -> int:
        committed = committed_offsets(directory)
        if committed is None:
            return 0
        source = directory.relative_to(self.run_dir).as_posix()
        source = "" if source == "." else source
        pages_end, warc_end = committed
        pages_at, warc_at = self.progress(source)
        if pages_end < pages_at:  # a crawl DB made anew under the same name: start over
            with self.conn:
                self._clear()
            return self._update(directory)  # (the other sources again at their next update)
        if pages_end == pages_at:
            return 0
        offsets = self._records(directory, warc_at, warc_end)
        row = self.conn.execute("SELECT texts_offset FROM texts WHERE dir = ?", (source,)).fetchone()
        texts, texts_end = read_texts(directory / TEXTS_NAME, int(row[0]) if row else 0, pages_end)
        pending: list[PendingRow] = []
        with open(directory / PAGES_NAME, "rb") as fh:
            fh.seek(pages_at)
            data = fh.read(pages_end - pages_at)
        end = pages_at
        for line in data.splitlines(keepends=True):
            at, end = end, end + len(line)
            page = page_record(line)
            if page is None:
                continue
            queue = offsets.get(page.get("final_url") or page["url"]) if page.get("status") else None
            where = queue.pop(0) if queue else None  # taken in order even when the page is left out
            if in_corpus(page):
                pending.append(pending_row(page, where, texts.get(at)))
        rows = self._with_text(str(self.run_dir), pending)
        with self.conn:
            last = self.conn.execute("SELECT max(id) FROM pages").fetchone()[0] or 0
            ids = range(last + 1, last + 1 + len(rows))
            self.conn.executemany(
                "INSERT INTO pages (id, url, final_url, title, language, relevance, status, fetched_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [(i, row["url"], row["final_url"], row["title"], row["language"], row["relevance"],
                  row["status"], row["fetched_at"]) for i, row in zip(ids, rows, strict=True)],
            )  # fmt: skip
            self.conn.executemany("INSERT INTO fts (rowid, title, text) VALUES (?, ?, ?)",
                                  [(i, split_cjk(row["title"] or ""), split_cjk(row["text"] or ""))
                                   for i, row in zip(ids, rows, strict=True)])  # fmt: skip
            self.conn.execute("INSERT OR REPLACE INTO sources VALUES (?, ?, ?)", (source, pages_end, warc_end))
            self.conn.execute("INSERT OR REPLACE INTO texts VALUES (?, ?)", (source, texts_end))
        return len(rows)

    def _clear(self) -> None:
        for table in ("pages", "fts", "sources", "texts"):
            self.conn.execute(f"DELETE FROM {table}")

    def _records(self, directory: Path, start: int, end: int) -> dict[str, list[Where]]:
        """URL -> (WARC file relative to the run directory, offset, offset of the rendered
        DOM or None) of the response records of ``directory``'s WARC between ``start`` and ``end``."""
        found: dict[str, list[Where]] = {}
        if end <= start:
            return found
        name = (directory / WARC_NAME).relative_to(self.run_dir).as_posix()
        for url, offset, dom in page_offsets(directory / WARC_NAME, start, end):
            found.setdefault(url, []).append((name, offset, dom))
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
                    (split_cjk(query), max(1, min(limit, 200))),
                ).fetchall()  # fmt: skip
        except sqlite3.OperationalError as exc:
            raise SearchError(f"query: {str(exc).splitlines()[0]}") from None
        keys = ("url", "final_url", "title", "language", "relevance", "status", "fetched_at", "snippet")
        # (LIMIT 1 at least: SQLite checks no FTS5 syntax for LIMIT 0; limit=0 gave 1 result)
        return [{**dict(zip(keys, row, strict=True)), "snippet": (row[-1] or "").replace(_SPLIT, "")}
                for row in found[:max(0, limit)]]  # fmt: skip


def split_cjk(text: str) -> str:
    """``text`` with a zero width space between two Han, kana, Hangul, Thai, Lao, Myanmar
    or Khmer letters (a letter with its combining marks): each one a word to FTS5.

    >>> split_cjk("cat 小猫很可爱") == "cat 小\u200b猫\u200b很\u200b可\u200b爱"
    True
    >>> split_cjk("ที่นี่") == "ที่\u200bนี่"
    True
    """
    return _CJK_PAIR.sub(f"\\1{_SPLIT}", text)


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
