"""The as-completed schedule and the run directory's lock (issue 24).

Stragglers are replay-server faults; every assertion is on counts and contents,
none on timing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web
from warcio.archiveiterator import ArchiveIterator

from focuscrawl.api import crawl, crawl_async
from focuscrawl.crawler.run import ResumeState
from focuscrawl.demo import WEBKB_SEEDS
from focuscrawl.exceptions import ConfigError
from focuscrawl.output.lock import RunDirLocked, RunLock
from focuscrawl.replay.process import ReplayProcess
from focuscrawl.replay.requestlog import min_host_interval, read_log
from focuscrawl.replay.sample import SAMPLE_SEEDS
from focuscrawl.stats import CrawlStats

from .conftest import shared_file
from .sites import html, serve

ROOT = Path(__file__).resolve().parents[1]
HUNG = "http://www.cs.cornell.edu/"  # the first seed: the head of the first fetch list


@pytest.fixture(scope="module")
def hung_replay(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReplayProcess]:
    """WebKB, where the Cornell home page never answers (the client gives up)."""
    log = tmp_path_factory.mktemp("hung") / "requests.tsv"
    faults = ["--fault", "www.cs.cornell.edu/$=timeout"]
    with ReplayProcess([shared_file("webkb.warc.gz")], log_path=log, faults_args=faults) as replay:
        yield replay


def _pages(run: Path) -> list[dict[str, Any]]:
    with open(run / "pages.jsonl", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def test_a_straggler_at_the_head_does_not_stop_the_crawl(
    hung_replay: ReplayProcess, tmp_path: Path
) -> None:
    """The first URL taken hangs for the whole fetch timeout; the other results are
    recorded meanwhile, and the crawl ends at its budget without it: it is put back."""
    run = tmp_path / "run"
    stats = crawl(
        WEBKB_SEEDS, run, strategy="bfs", max_pages=60, delay=0.0, proxy=hung_replay.proxy_url,
        fetch={"read_timeout": 3600.0, "fetch_timeout": 3600.0, "retries": 0},  # > any crawl
    )  # fmt: skip
    pages = _pages(run)
    assert len(pages) == 60 == stats.fetched
    assert HUNG not in {p["url"] for p in pages}  # never recorded: still in flight at the end
    state = json.loads((run / "run.json").read_text())
    assert state["schedule"] == "as-completed"
    assert stats.counters["cancelled_in_flight"] >= 1
    # put back: a resume with a larger budget takes it again first (it hangs again, and
    # the end game ends the crawl without it once more), and records nothing twice
    stats = crawl(
        [], run, resume=True, max_pages=70, fetch={"read_timeout": 1.0, "fetch_timeout": 1.0}
    )
    urls = [p["url"] for p in _pages(run)]
    assert len(urls) == len(set(urls)) == 70
    assert stats.counters["resume_reissued"] >= 1


def test_the_ordered_schedule_records_in_the_order_taken(
    hung_replay: ReplayProcess, tmp_path: Path
) -> None:
    """The same hung head in the ordered schedule: nothing after it is recorded before it."""
    run = tmp_path / "run"
    crawl(
        WEBKB_SEEDS, run, strategy="bfs", max_pages=30, delay=0.0, proxy=hung_replay.proxy_url,
        schedule="ordered", fetch={"read_timeout": 1.0, "fetch_timeout": 1.0, "retries": 0},
    )  # fmt: skip
    pages = _pages(run)
    assert pages[0]["url"] == HUNG
    assert pages[0]["error"] == "timeout"


@pytest.mark.slow
async def test_best_n_lists_do_not_wait_for_their_stragglers(tmp_path: Path) -> None:
    """A list whose head hangs: the next lists are generated without it, and the
    straggler is recorded when it comes. Here it comes once 12 pages are recorded: an
    event that lists waiting for their stragglers never reach (the 120 s only bound
    that hang), where a time would race the crawl on a loaded machine."""
    enough = asyncio.Event()

    def progress(stats: CrawlStats) -> None:
        if stats.fetched >= 12:
            enough.set()

    async def hung(request: web.Request) -> web.StreamResponse:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(enough.wait(), 120)
        return await html("late")(request)

    pages = {f"/p{i}": html(f"page {i}") for i in range(30)}
    home = html(" ".join(f'<a href="{path}">{path}</a>' for path in pages))
    async with serve({"/": hung}) as slow_site, serve({"/": home, **pages}) as fast_site:
        straggler = slow_site.url("/")  # the first seed: the head of the first fetch list
        stats = await crawl_async(
            tmp_path / "run", [straggler, fast_site.url("/")], progress=progress,
            overrides={
                "crawl": {"strategy": "bfs", "fetch_list_size": 10, "max_pages": 100,
                          "straggler_seconds": 0.2},
                "fetch": {"delay": 0.0, "allow_private": ("127.0.0.1",), "retries": 0,
                          "read_timeout": 300.0, "fetch_timeout": 300.0},
            },
        )  # fmt: skip
    urls = [p["url"] for p in _pages(tmp_path / "run")]
    assert stats.counters["fetch_list_stragglers"] >= 1
    assert urls.index(straggler) >= 12  # after pages of later lists
    assert _pages(tmp_path / "run")[urls.index(straggler)]["status"] == 200
    assert len(urls) == len(set(urls)) == 32


@pytest.fixture(scope="module")
def slow_replay(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReplayProcess]:
    """WebKB, where three of the four home pages send their bodies 10 bytes a minute."""
    log = tmp_path_factory.mktemp("slow") / "requests.tsv"
    faults = [
        arg
        for host in ("www.cs.cornell.edu", "www.cs.utexas.edu", "www.cs.washington.edu")
        for arg in ("--fault", f"{host}/$=slow:chunk=10:pause=60")
    ]
    with ReplayProcess([shared_file("webkb.warc.gz")], log_path=log, faults_args=faults) as replay:
        yield replay


def test_the_end_game_does_not_wait_for_slow_bodies(
    slow_replay: ReplayProcess, tmp_path: Path
) -> None:
    """A budget of 3 from four seeds: the first three taken, then one more (the end game),
    and at least two of the four are slow bodies. The crawl ends with three fast results;
    the slow ones, under way past the fetcher's straggler time (1 s) but young for the
    scheduler's own (an hour here), are cancelled and put back, never waited for."""
    run = tmp_path / "run"
    stats = crawl(
        WEBKB_SEEDS, run, strategy="bfs", max_pages=3, delay=0.0, proxy=slow_replay.proxy_url,
        straggler_seconds=3600.0,
        fetch={"read_timeout": 3600.0, "fetch_timeout": 3600.0, "retries": 0},  # > any crawl
    )  # fmt: skip
    pages = _pages(run)
    assert len(pages) == 3 == stats.fetched
    slow = set(WEBKB_SEEDS) - {"http://www.cs.wisc.edu/"}
    assert not slow & {p["url"] for p in pages}
    assert all(p["error"] is None or p["error"] == "proxy" for p in pages), pages
    assert stats.counters["cancelled_in_flight"] >= 2
    window = json.loads((run / "run.json").read_text())
    assert window["finished"]


def test_politeness_holds_as_completed(hung_replay: ReplayProcess, tmp_path: Path) -> None:
    """No two requests to one host closer than the delay, in the server's own log."""
    since = time.time()
    crawl(WEBKB_SEEDS, tmp_path / "run", strategy="bfs", max_pages=40, delay=0.25,
          proxy=hung_replay.proxy_url, concurrency=64)  # fmt: skip
    assert hung_replay.log_path is not None
    entries = [e for e in read_log(hung_replay.log_path) if e.time >= since]
    gaps = min_host_interval(entries)
    assert len(gaps) >= 3
    assert min(gaps.values()) >= 0.25


def test_the_resume_state_round_trips_through_json() -> None:
    state = ResumeState(
        warc_offset=10, pages_offset=20, decisions_offset=None, stats={"fetched": 3},
        strategy={"k": [1, 2]}, rng=[3, [1, 2, 3], None], results=4,
        window=(("http://a.org/", False), ("http://b.org/", True)), layer_listed=True,
        recrawl_pending=("http://b.org/",), control=({"id": 1, "strategy": {}, "at": 2},),
        control_id=1,
    )  # fmt: skip
    assert ResumeState.from_json(state.to_json()) == state
    # a state written before this class (the same keys, lists for tuples) reads back too
    old = json.loads(state.to_json())
    assert ResumeState.from_json(json.dumps(old)).window == state.window
    with pytest.raises(ConfigError, match="corrupt"):
        ResumeState.from_json('{"window": 5}')


# ------------------------------------------------------------------------ the lock


def test_a_second_lock_names_the_holder(tmp_path: Path) -> None:
    with RunLock(tmp_path), pytest.raises(RunDirLocked, match=f"process {os.getpid()}"):
        RunLock(tmp_path).acquire()
    with RunLock(tmp_path) as again:  # given back
        assert again.held


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.mark.slow
def test_resume_on_a_running_crawl_is_refused_and_touches_nothing(
    sample_replay: ReplayProcess, tmp_path: Path
) -> None:
    """The first crawl is stopped by the test (SIGINT), not by its end: with 3 s between
    requests its dozens of pages outlast the two refused commands started meanwhile,
    however slowly a loaded machine starts them."""
    out = tmp_path / "run"
    first = subprocess.Popen(
        [sys.executable, "-m", "focuscrawl", "crawl", "--out", str(out), "--quiet", "--seeds",
         *SAMPLE_SEEDS, "--delay", "3", "--max-pages", "0", "--proxy", sample_replay.proxy_url],
        env=_env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not (out / "pages.jsonl").exists() or (out / "pages.jsonl").stat().st_size == 0:
            assert first.poll() is None, "the first crawl ended before it could be disturbed"
            assert time.monotonic() < deadline, "the first crawl did not start within 120 s"
            time.sleep(0.05)
        for extra in (["--resume"], ["--seeds", *SAMPLE_SEEDS]):
            size = (out / "pages.jsonl").stat().st_size
            second = subprocess.run(
                [sys.executable, "-m", "focuscrawl", "crawl", "--out", str(out), "--quiet", *extra],
                env=_env(), capture_output=True, text=True, timeout=120,
            )  # fmt: skip
            assert second.returncode == 2, second.stderr
            lines = second.stderr.strip().splitlines()
            assert len(lines) == 1, second.stderr
            if extra == ["--resume"]:
                assert f"process {first.pid}" in lines[0]
            assert (out / "pages.jsonl").stat().st_size >= size  # not cut back
        assert first.poll() is None, "the first crawl ended before the test stopped it"
        first.send_signal(signal.SIGINT)
        assert first.wait(timeout=120) == 130, first.stderr.read().decode() if first.stderr else ""
    finally:
        if first.poll() is None:
            first.send_signal(signal.SIGKILL)
            first.wait()
    pages = [p["url"] for p in _pages(out)]
    assert len(pages) == len(set(pages))
    with open(out / "corpus.warc.gz", "rb") as fh:
        responses = [r.rec_headers.get_header("WARC-Target-URI") for r in ArchiveIterator(fh)
                     if r.rec_type == "response"]  # fmt: skip
    assert len(responses) == len(set(responses))
    summary = json.loads((out / "run.json").read_text())["summary"]
    assert summary["fetched"] == len(pages)
    assert set(responses) <= set(pages)
