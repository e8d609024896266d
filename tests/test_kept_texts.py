"""The main texts a crawl's model read, kept beside pages.jsonl (texts.jsonl): the
search index and the export read them instead of extracting them again from the WARC,
with the same rows; a crawl killed with SIGKILL and resumed keeps each page's text once."""

from __future__ import annotations

import json
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from focuscrawl.fetch.encoding import decode_html, detect_charset
from focuscrawl.output.corpus import corpus_rows
from focuscrawl.output.writers import TEXTS_NAME
from focuscrawl.parse.guard import guard_html
from focuscrawl.parse.maintext import extracted_text
from focuscrawl.replay.archive import read_response_at
from focuscrawl.replay.process import ReplayProcess
from focuscrawl.service.search import SearchIndex
from tests.conftest import shared_file

ROOT = Path(__file__).resolve().parents[1]
HOST = "www.cs.utexas.edu"


def _config(tmp_path: Path, proxy: str, max_pages: int, *, model: bool = True) -> Path:
    """A bfs crawl of one WebKB host judged by the perplexity model (trafilatura's text),
    or with no model (no text kept: the index takes the pages' visible text)."""
    path = tmp_path / "crawl.toml"
    model_table = f"""[model]
name = "perplexity"
texts = ["{shared_file("cat-en.txt")}"]
""" if model else ""
    path.write_text(f"""
seeds = ["http://{HOST}/"]
[crawl]
strategy = "bfs"
max_pages = {max_pages}
[fetch]
delay = 0.005
proxy = "{proxy}"
allow_private = ["127.0.0.1"]
[scope]
allow_hosts = ["{HOST}"]
{model_table}""", encoding="utf-8")  # fmt: skip
    return path


def _index_rows(run: Path, db: Path, *, extract: bool = False) -> list[tuple[Any, ...]]:
    index = SearchIndex(db, run, extract=extract)
    try:
        index.update()
    finally:
        index.close()
    return _rows(db)


def _rows(db: Path) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute(
            "SELECT p.url, p.final_url, p.title, p.language, p.relevance, p.status, p.fetched_at,"
            " f.title, f.text FROM pages p JOIN fts f ON f.rowid = p.id ORDER BY p.id"
        ).fetchall()
    finally:
        conn.close()


def _indexed(db: Path) -> int:
    """Rows in the index ``db`` as another process writes it (0: none yet, or busy)."""
    try:
        return len(_rows(db)) if db.exists() else 0
    except sqlite3.OperationalError:
        return 0


def _without_texts(run: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "extracted"
    shutil.copytree(run, copy)
    (copy / TEXTS_NAME).unlink()
    return copy


def _texts(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / TEXTS_NAME).read_bytes().splitlines()]


def test_index_and_export_from_kept_texts_equal_extraction(webkb_replay: ReplayProcess, tmp_path: Path) -> None:
    from focuscrawl.api import crawl

    run = tmp_path / "run"
    crawl([], run, config=_config(tmp_path, webkb_replay.proxy_url, 30))
    kept = _texts(run)
    assert len(kept) >= 10
    extracted = _without_texts(run, tmp_path)
    # the model's texts are the index's, the same as extracted again
    assert _index_rows(run, tmp_path / "kept.db") == _index_rows(extracted, tmp_path / "x.db", extract=True)
    rows = [row for batch in corpus_rows(run, jobs=1) for row in batch]
    assert rows == [row for batch in corpus_rows(extracted, jobs=1) for row in batch]
    assert sum(row["text"] is not None for row in rows) >= len(kept)


@pytest.mark.slow  # a crawl killed and resumed
def test_sigkill_then_resume_keeps_each_text_once(webkb_replay: ReplayProcess, tmp_path: Path) -> None:
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "focuscrawl", "crawl", "--out", str(out), "--quiet"]
    config = _config(tmp_path, webkb_replay.proxy_url, 60)
    proc = subprocess.Popen([*cmd, "--config", str(config)], cwd=ROOT)
    deadline = time.monotonic() + 120
    while not ((out / TEXTS_NAME).exists() and (out / TEXTS_NAME).read_bytes().count(b"\n") >= 5) \
            and proc.poll() is None:
        assert time.monotonic() < deadline, "the crawl kept no texts within 120 s"
        time.sleep(0.01)
    assert proc.poll() is None, "the crawl ended before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done = subprocess.run([*cmd, "--resume"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    pages = (out / "pages.jsonl").read_bytes()
    starts, at = {}, 0
    for line in pages.splitlines(keepends=True):
        starts[at] = json.loads(line)
        at += len(line)
    assert len(starts) == 60
    kept = {}
    for line in _texts(out):
        assert line["at"] in starts, "a text for no page"
        assert line["at"] not in kept, "a page's text twice"
        kept[line["at"]] = line["text"]
    # exactly the judged pages that trafilatura reads, each with the text it reads
    rows = [row for batch in corpus_rows(_without_texts(out, tmp_path), jobs=1) for row in batch]
    by_url = {row["url"]: row for row in rows}
    for offset, page in starts.items():
        row = by_url.get(page["url"])
        text = None
        if page.get("relevance") is not None and row is not None and row["warc_file"] is not None:
            record = read_response_at(out / row["warc_file"], row["warc_offset"])
            decoded = decode_html(record.body, detect_charset(record.content_type or "text/html", record.body))
            text = extracted_text(guard_html(decoded).html)
        assert kept.get(offset) == text, page["url"]


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def test_index_of_a_crawl_without_a_model_takes_the_visible_text(
    webkb_replay: ReplayProcess, tmp_path: Path
) -> None:
    from focuscrawl.api import crawl

    run = tmp_path / "run"
    crawl([], run, config=_config(tmp_path, webkb_replay.proxy_url, 30, model=False))
    assert not (run / TEXTS_NAME).exists()
    fast = _index_rows(run, tmp_path / "fast.db")
    old = _index_rows(run, tmp_path / "old.db", extract=True)
    assert len(fast) >= 20
    # the same pages, titles, languages, numbers: only the text differs
    assert [row[:8] for row in fast] == [row[:8] for row in old]
    texts = 0
    for fast_row, old_row in zip(fast, old, strict=True):
        main = _words(old_row[8])
        if not main:
            continue
        seen = set(_words(fast_row[8]))
        # the words trafilatura reads are searchable (the visible text has the menus too)
        assert sum(word in seen for word in main) >= 0.95 * len(main), fast_row[0]
        texts += 1
    assert texts >= 20


@pytest.mark.slow  # a crawl and its index killed and resumed
def test_sigkill_of_crawl_and_index_then_resume_indexes_each_page_once(
    webkb_replay: ReplayProcess, tmp_path: Path
) -> None:
    out, db = tmp_path / "run", tmp_path / "search.db"
    cmd = [sys.executable, "-m", "focuscrawl", "crawl", "--out", str(out), "--quiet"]
    config = _config(tmp_path, webkb_replay.proxy_url, 60, model=False)
    text = config.read_text(encoding="utf-8")  # commits every 5 pages, slow enough to be caught
    config.write_text(text.replace("max_pages = 60", "max_pages = 60\ncommit_every = 5")
                      .replace("delay = 0.005", "delay = 0.25"), encoding="utf-8")  # fmt: skip
    proc = subprocess.Popen([*cmd, "--config", str(config)], cwd=ROOT)
    follow = (
        "import sys, time\nfrom pathlib import Path\nfrom focuscrawl.service.search import SearchIndex\n"
        "index = SearchIndex(Path(sys.argv[1]), Path(sys.argv[2]))\n"
        "while True:\n    index.update()\n    time.sleep(0.01)\n"
    )
    indexer = subprocess.Popen([sys.executable, "-c", follow, str(db), str(out)], cwd=ROOT)
    try:
        deadline = time.monotonic() + 120
        while _indexed(db) < 5 and proc.poll() is None:
            assert time.monotonic() < deadline, "nothing indexed within 120 s"
            time.sleep(0.05)
        assert proc.poll() is None, "the crawl ended before it could be killed"
    finally:
        proc.send_signal(signal.SIGKILL)
        indexer.send_signal(signal.SIGKILL)
        proc.wait()
        indexer.wait()
    done = subprocess.run([*cmd, "--resume"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    resumed = _index_rows(out, db)
    assert len(resumed) == 60
    assert len({row[0] for row in resumed}) == 60  # each page once
    assert resumed == _index_rows(out, tmp_path / "fresh.db")  # as if indexed in one go
