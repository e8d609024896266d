"""What an output file holds against what the crawl DB committed: checked before a
resume cuts the file back to its committed length (:mod:`focuscrawl.output.writers`),
and before a worker takes over another's files.

A file still holds what was committed if it is at least that long and its committed
part ends with a complete record (a JSON line; a gzip member holding a WARC record);
a file that no commit accounts for may hold nothing but a lone warcinfo record.
Otherwise :class:`~focuscrawl.exceptions.ResumeError`, one line, and nothing changed.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import zlib
from pathlib import Path
from typing import Any

from focuscrawl.exceptions import ResumeError

__all__ = ["committed_offsets", "verify_committed", "worker_offsets"]

# How far back from the committed offset the last complete record is looked for:
# a JSONL line is a few KB; a WARC pair holds a body of at most fetch.max_body_size
# (5 MB by default), which compresses to about that at worst.
_JSONL_WINDOW = 1 << 20
_WARC_WINDOW = 16 << 20
_SQLITE = b"SQLite format 3\0"  # the first bytes of an SQLite file
_REDIS_TIMEOUT = 5.0  # seconds: a reader does not wait long for a Redis that is away
_RUN_JSON = "run.json"  # (crawler.run's RUN_NAME: that module imports this one)
_PAGES, _WARC = "pages.jsonl", "corpus.warc.gz"


def verify_committed(
    path: Path, length: int, *, warc: bool = False, committed: bool = False
) -> None:
    """Raise :class:`ResumeError` unless ``path`` holds the ``length`` committed bytes.

    ``length`` > 0: the file is at least that long and its committed part ends with
    a complete record (a JSON object and a newline; a gzip member holding a WARC
    record). ``length`` = 0 and ``committed`` (a commit of the crawl DB says the file
    was empty: a run killed after its start was committed and before its first
    records were): whatever the file holds came later, and is cut. ``length`` = 0
    otherwise (no commit accounts for the file): the file is absent, empty, or (WARC)
    holds only the warcinfo record a run writes before its first commit. Reads at
    most a few MB, whatever the file's size.
    """
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        size = -1
    except OSError as exc:
        raise ResumeError(f"{path}: cannot read ({exc.strerror or exc})") from None
    name = path.name
    if length == 0:
        if committed or size <= 0 or (warc and _lone_warcinfo(path, size)):
            return
        raise ResumeError(
            f"{path}: {size:,} bytes that no crawl DB commit accounts for (crawl.db lost or "
            f"empty?); not touching it: move {name} away or use another --out"
        )
    if size < length:
        what = "is missing" if size < 0 else f"has {size:,} bytes"
        raise ResumeError(
            f"{path} {what} but the crawl DB committed {length:,}; "
            f"restore the file or start the crawl afresh in another --out"
        )
    with open(path, "rb") as fh:
        start = max(0, length - (_WARC_WINDOW if warc else _JSONL_WINDOW))
        fh.seek(start)
        tail = fh.read(length - start)
    intact = _ends_with_gzip_member(tail) if warc else _ends_with_json_line(tail, start == 0)
    if not intact:
        raise ResumeError(
            f"{path}: the committed part (first {length:,} bytes) does not end with a complete "
            f"{'WARC record' if warc else 'JSON line'}: the file was changed since the crawl "
            f"stopped; restore it or start the crawl afresh in another --out"
        )


def _ends_with_json_line(tail: bytes, whole: bool) -> bool:
    """Whether ``tail`` ends with a line holding a JSON object (``whole``: it is the whole file)."""
    if not tail.endswith(b"\n"):
        return False
    cut = tail.rfind(b"\n", 0, len(tail) - 1)
    if cut < 0 and not whole:
        return tail.endswith(b"}\n")  # a line longer than the window: its end must do
    line = tail[cut + 1 :]
    try:
        return isinstance(json.loads(line), dict)
    except ValueError:  # JSONDecodeError and UnicodeDecodeError
        return False


def _ends_with_gzip_member(tail: bytes) -> bool:
    """Whether ``tail`` ends with a complete gzip member holding a WARC record.

    The last member starts at one of the gzip magic numbers before the end: they
    are tried from the end backwards. One inside compressed data fails to
    decompress and is skipped; the first that decompresses decides: the file is
    intact if its member ends exactly at the end (if it ends earlier, what
    follows it was tried before and is no gzip member).
    """
    view = memoryview(tail)
    pos = len(tail)
    while True:
        pos = tail.rfind(b"\x1f\x8b\x08", 0, pos)
        if pos < 0:
            return False
        inflater = zlib.decompressobj(wbits=31)
        try:
            head = inflater.decompress(view[pos:], 5)
            while inflater.unconsumed_tail and not inflater.eof:
                inflater.decompress(inflater.unconsumed_tail, 1 << 16)
        except zlib.error:
            continue
        if inflater.eof:
            return not inflater.unused_data and head.startswith(b"WARC/")


def _lone_warcinfo(path: Path, size: int) -> bool:
    """A file holding one gzip member with a warcinfo record and nothing else."""
    if size > 1 << 16:
        return False  # a warcinfo record is a few hundred bytes
    data = path.read_bytes()
    inflater = zlib.decompressobj(wbits=31)
    try:
        record = inflater.decompress(data)
    except zlib.error:
        return False
    return (
        inflater.eof
        and not inflater.unused_data
        and record.startswith(b"WARC/")
        and b"\r\nWARC-Type: warcinfo\r\n" in record.split(b"\r\n\r\n", 1)[0]
    )


def committed_offsets(run_dir: Path) -> tuple[int, int] | None:
    """(pages.jsonl, corpus.warc.gz) lengths of the crawl's last commit, from its crawl DB
    (read-only), or for a shared crawl's worker from its journal; None without one (not
    started, a shared crawl's own directory, a worker whose Redis is away)."""
    db = run_dir / "crawl.db"
    try:
        with open(db, "rb") as fh:
            head = fh.read(len(_SQLITE))
    except OSError:
        return None
    if head != _SQLITE:
        return worker_offsets(run_dir)
    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10)
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'engine'").fetchone()
        finally:
            conn.close()
        state = json.loads(row[0]) if row else None
    except (sqlite3.Error, ValueError, TypeError):
        return None
    return _offsets(state)


def _offsets(state: Any) -> tuple[int, int] | None:
    if not isinstance(state, dict) or "pages_offset" not in state:
        return None
    return int(state.get("pages_offset") or 0), int(state.get("warc_offset") or 0)


def worker_offsets(run_dir: Path) -> tuple[int, int] | None:
    """A shared crawl's worker: the lengths its last commit journaled in the crawl's
    Redis (the ``engine`` state of its journal); a worker that finished, whose journal
    is not there (Redis restarted without its data), committed its files whole."""
    try:
        marker = json.loads((run_dir / "crawl.db").read_bytes())
        run = json.loads((run_dir / _RUN_JSON).read_bytes())
        prefix, worker = str(marker["prefix"]), str(marker["worker"])
        url = str(run["settings"]["crawl"]["frontier_url"])
    except (OSError, ValueError, KeyError, TypeError):
        return None  # not a worker's directory, or not written yet
    # the Redis client only for a shared crawl's worker (it imports cryptography: a crawl,
    # an export and the CLI start without it, tests/test_cli.py)
    from focuscrawl.frontier.redis.connection import Connection
    from focuscrawl.frontier.redis.keys import Keys

    state = None
    with contextlib.suppress(Exception):  # Redis away: the finished worker's files, or next time
        db = Connection(url, timeout=_REDIS_TIMEOUT)
        try:
            raw = db.hget(Keys(prefix).journal(worker), "engine")
        finally:
            db.close()
        state = json.loads(raw) if raw else None
    if state is None and run.get("finished"):
        with contextlib.suppress(OSError):
            return (run_dir / _PAGES).stat().st_size, (run_dir / _WARC).stat().st_size
    return _offsets(state)
