"""``focuscrawl refresh`` killed with SIGKILL at random moments and started again: the
round it finishes is the one an uninterrupted refresh of a copy of the crawl makes
(the same lines in the same order, the same WARC records, the same counts)."""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from warcio.archiveiterator import ArchiveIterator

from focuscrawl.api import crawl
from focuscrawl.replay.process import ReplayProcess
from tests.conftest import shared_file

ROOT = Path(__file__).resolve().parents[1]


def _refresh_cmd(run: Path, proxy: str) -> list[str]:
    return [sys.executable, "-m", "focuscrawl", "refresh", str(run), "--proxy", proxy, "--delay", "0.02"]


def _round(run: Path) -> dict[str, Any]:
    """The refresh round committed in the crawl DB ({} before its plan is)."""
    with contextlib.closing(sqlite3.connect(run / "crawl.db")) as db:
        row = db.execute("SELECT value FROM meta WHERE key = 'refresh'").fetchone()
    return json.loads(row[0]) if row else {}


def _went_on(run: Path, before: int | None) -> bool:
    """The round is committed (a first run), or has gone on since ``before`` (a later one)."""
    now = _round(run)
    return bool(now) and (before is None or now.get("done") != before)


def _revisits(run: Path, skip: int) -> list[tuple[str, str, str]]:
    """(type, target, profile) of the response and revisit records after the first ``skip``."""
    with open(run / "corpus.warc.gz", "rb") as fh:
        records = [(r.rec_type, r.rec_headers.get_header("WARC-Target-URI"), r.rec_headers.get_header("WARC-Profile") or "")
                   for r in ArchiveIterator(fh) if r.rec_type in ("response", "revisit")]  # fmt: skip
    return records[skip:]


def _lines(run: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (run / "pages.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.mark.slow  # a crawl of WebKB, a refresh of it, and one killed again and again
def test_a_refresh_killed_at_random_moments_ends_as_an_uninterrupted_one(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    args = ["--change-share", "0.3", "--change-seed", "1"]
    with ReplayProcess([shared_file("webkb.warc.gz")], faults_args=args) as web:
        base = tmp_path / "base"
        crawl(["http://www.cs.cornell.edu/"], base, strategy="bfs", max_pages=3000, proxy=web.proxy_url, delay=0.0)
        crawled, records = _lines(base), len(_revisits(base, 0))
        reference, killed = tmp_path / "reference", tmp_path / "killed"
        shutil.copytree(base, reference)
        shutil.copytree(base, killed)
        began = time.monotonic()
        said = subprocess.run(_refresh_cmd(reference, web.proxy_url), env=env, capture_output=True, text=True, check=True)
        span = time.monotonic() - began  # the kills come within a share of the round's own time
        rng = random.Random(49)
        kills, stops = 0, []
        ended = ""  # the summary of a run that finished the round on its own (a fast machine)
        for _ in range(6):
            proc = subprocess.Popen(_refresh_cmd(killed, web.proxy_url), env=env, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)  # fmt: skip
            before = _round(killed).get("done")
            deadline = time.monotonic() + 120  # the kill comes after the round was committed (or went on)
            while not _went_on(killed, before) and proc.poll() is None:
                assert time.monotonic() < deadline, "the refresh did not start within 120 s"
                time.sleep(0.01)
            time.sleep(rng.uniform(0.05, 0.25) * span)
            if proc.poll() is None:
                proc.send_signal(signal.SIGKILL)
            out, _ = proc.communicate()
            if proc.returncode == 0:  # it ended the round before the kill: a next run would start another
                ended = out
                break
            kills += 1
            stops.append(_round(killed).get("done"))
        done = ended or subprocess.run(_refresh_cmd(killed, web.proxy_url), env=env, capture_output=True, text=True,
                                       check=True).stdout  # fmt: skip
    one, other = _lines(reference)[len(crawled):], _lines(killed)[len(crawled):]
    assert kills >= 2, f"the refresh ended too soon to be killed (stopped at {stops})"
    assert any(0 < (stop or 0) < len(one) for stop in stops), f"no kill came in the round's middle: {stops}"

    assert _lines(killed)[: len(crawled)] == crawled
    assert len({r["url"] for r in other}) == len(other), "a page visited twice in one round"
    key = [(r["url"], r["status"], r["unchanged"]) for r in one]
    assert key == [(r["url"], r["status"], r["unchanged"]) for r in other]
    assert 0 < sum(not unchanged for _, _, unchanged in key) < len(key)  # the web changed some
    assert Counter(_revisits(reference, records)) == Counter(_revisits(killed, records))
    # the whole round's counts, as the uninterrupted one printed them
    assert done.replace(str(killed), "RUN") == said.stdout.replace(str(reference), "RUN")
