"""A crawl's life end to end: re-crawls, the control channel and `why` while and after
it runs, a crawl that fetched nothing, commits on a timer and off the event loop, a
stop that cancels a hung fetch."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import pytest
from warcio.archiveiterator import ArchiveIterator

from focuscrawl.api import crawl
from focuscrawl.cli import main
from focuscrawl.control import wait_for_ack, write_request
from focuscrawl.evaluation.run import evaluate_run, read_run
from focuscrawl.replay.process import ReplayProcess
from focuscrawl.replay.sample import SAMPLE_SEEDS
from focuscrawl.strategies.base import Strategy, register_strategy
from focuscrawl.types import Decision, LinkScore, Merge, Page, QueuedURL

SEED = SAMPLE_SEEDS[0]


class _Recrawler(Strategy):
    """Breadth-first, and every 4 results the seed is fetched again."""

    name: ClassVar[str] = "test-recrawler"
    merge: ClassVar[Merge] = Merge.KEEP
    recrawls: ClassVar[bool] = True
    tick_every: ClassVar[int] = 4

    def on_page(self, page: Page, relevance: float | None, queued: QueuedURL) -> Decision:
        return Decision(links=[LinkScore(link, 0.0) for link in page.links])

    def on_tick(self, results: int) -> Decision:
        return Decision(recrawl=[SEED], reason=f"tick at {results}")


@dataclass(frozen=True)
class _BoostParams:
    boost: float = 0.0

    def __post_init__(self) -> None:
        if self.boost < 0:
            raise ValueError(f"boost = {self.boost} must be >= 0")


class _Boost(Strategy):
    """Links score ``boost``; a change of ``boost`` rescored the seed's host."""

    name: ClassVar[str] = "test-boost"
    Params: ClassVar[type[Any]] = _BoostParams
    changes: ClassVar[list[float]] = []

    def on_page(self, page: Page, relevance: float | None, queued: QueuedURL) -> Decision:
        return Decision(links=[LinkScore(link, self.p.boost, reason=f"boost {self.p.boost}") for link in page.links])

    def on_params_changed(self) -> Decision:
        _Boost.changes.append(self.p.boost)
        return Decision(host_updates=[("www.daily-news.example", self.p.boost, Merge.SET)], reason="new boost")


register_strategy("test-recrawler")(_Recrawler)
register_strategy("test-boost")(_Boost)


def _pages(run: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (run / "pages.jsonl").read_text().splitlines()]


def test_recrawls_are_marked_and_not_counted(sample_archive: Path, tmp_path: Path) -> None:
    stats = crawl(list(SAMPLE_SEEDS), tmp_path / "run", strategy="test-recrawler", max_pages=10,
                  archives=[sample_archive])  # fmt: skip
    pages = _pages(tmp_path / "run")
    fresh = [p for p in pages if not p["recrawl"]]
    again = [p for p in pages if p["recrawl"]]
    assert stats.fetched == len(fresh) == 10  # the budget counts new pages only
    assert again
    assert {p["url"] for p in again} == {SEED}
    assert len({p["url"] for p in fresh}) == 10
    with open(tmp_path / "run" / "corpus.warc.gz", "rb") as fh:
        types = [(r.rec_type, r.rec_headers.get_header("WARC-Target-URI")) for r in ArchiveIterator(fh)]
    # the seed's payload did not change: each re-crawl is a revisit record, not a second copy
    assert [t for t in types if t[0] == "revisit"] == [("revisit", SEED)] * len(again)
    assert sum(1 for t in types if t == ("response", SEED)) == 1
    assert stats.counters["recrawls_unchanged"] == len(again)
    # each marked unchanged in pages.jsonl (issue 36), and eval's share of changed re-visits is 0
    assert all(p.get("unchanged") is True for p in again)
    assert not any("unchanged" in p for p in fresh)
    run = read_run(tmp_path / "run")
    assert (run.recrawls, run.recrawls_unchanged) == (len(again), len(again))
    assert evaluate_run(run, lambda url: None)["recrawls_changed"] == 0.0


def test_control_channel_changes_parameters_of_a_live_crawl(
    sample_replay: ReplayProcess, tmp_path: Path
) -> None:
    run = tmp_path / "run"
    _Boost.changes.clear()
    done = threading.Event()

    def go() -> None:
        try:
            # 0.5 s between requests: the crawl outlasts the two changes and their answers
            # (polled every 0.2 s), and pages come after them, on a loaded machine too
            crawl(list(SAMPLE_SEEDS), run, strategy="test-boost", max_pages=25, delay=0.5,
                  proxy=sample_replay.proxy_url)  # fmt: skip
        finally:
            done.set()

    thread = threading.Thread(target=go)
    thread.start()
    try:
        deadline = time.monotonic() + 60
        while not (run / "run.json").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        bad = write_request(run, {"boost": -1})
        ack = wait_for_ack(run, bad, timeout=60)
        assert ack is not None
        assert ack["ok"] is False
        assert "boost = -1.0 must be >= 0" in ack["error"]
        good = write_request(run, {"boost": 0.5})
        ack = wait_for_ack(run, good, timeout=60)
        assert ack == {"id": good, "ok": True}
    finally:
        thread.join(120)
    assert done.is_set()
    assert _Boost.changes == [0.5]
    info = json.loads((run / "run.json").read_text())
    assert [c["strategy"] for c in info["control"]] == [{"boost": 0.5}]
    assert info["strategy_params"] == {"boost": 0.5}
    # pages scored after the change carry it; the change is in the decision log too
    scores = [p["score"] for p in _pages(run)]
    assert 0.5 in scores
    events = [json.loads(x)["event"] for x in (run / "decisions.jsonl").read_text().splitlines()]
    assert "control" in events


def test_control_waits_for_a_crawl_still_starting(
    sample_replay: ReplayProcess, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # before (b44): `focuscrawl control` given before the crawl had written its run.json
    # (building its model, reading its archives) said "not a run directory (no run.json)"
    run = tmp_path / "run"
    _Boost.changes.clear()
    said: list[int] = []
    asker = threading.Thread(target=lambda: said.append(main(["control", str(run), "boost=0.5", "--timeout", "60"])))
    asker.start()
    time.sleep(0.3)  # the request is given first; the crawl starts after it
    crawl(list(SAMPLE_SEEDS), run, strategy="test-boost", max_pages=25, delay=0.5, proxy=sample_replay.proxy_url)
    asker.join(60)
    assert said == [0]
    assert "request 1 applied" in capsys.readouterr().out
    assert _Boost.changes == [0.5]
    assert [c["strategy"] for c in json.loads((run / "run.json").read_text())["control"]] == [{"boost": 0.5}]


def test_control_with_no_crawl_to_wait_for_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["control", str(tmp_path / "none"), "boost=0.5", "--timeout", "0.2"]) == 2
    err = capsys.readouterr().err
    assert "none is not a run directory (no run.json after 0.2 s: no crawl started there)" in err
    assert err.count("\n") == 1


def test_why_on_a_shared_crawl_names_the_worker_of_each_numbered_result(tmp_path: Path) -> None:
    # before (b44): each worker numbers its own results, and `why` on a shared crawl
    # printed "page #2 ..." for two different pages of two workers, with no way to tell
    # which #2 was meant (its workers' decision logs, as a --workers 2 crawl leaves them)
    from focuscrawl.why import explain_url

    run = tmp_path / "run"
    logs = {
        "00": [{"event": "seeds", "links": [["http://a.example/", 1.0, "seed"]]},
               {"event": "page", "n": 1, "url": "http://a.example/", "score": 1.0, "relevance": 1.0,
                "links": [["http://a.example/x", 0.5, "parent relevance"]]}],
        "01": [{"event": "page", "n": 1, "url": "http://b.example/", "score": 1.0, "relevance": 0.0,
                "links": [["http://a.example/x", 0.0, "parent relevance"]]},
               {"event": "page", "n": 2, "url": "http://a.example/x", "score": 0.5, "relevance": 0.2, "links": []}],
    }  # fmt: skip
    for worker, records in logs.items():
        (run / "workers" / worker).mkdir(parents=True)
        (run / "workers" / worker / "decisions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    text = explain_url(run, "http://a.example/x", need_db=False)["text"]
    assert "<- page #1 (worker 00) http://a.example/ [score 1, relevance 1] link 0.5: parent relevance" in text
    assert "<- page #1 (worker 01) http://b.example/ [score 1, relevance 0] link 0: parent relevance" in text
    assert "fetched as #2 by worker 01 with score 0.5, relevance 0.2" in text


def test_why_names_the_parent_and_the_term(sample_archive: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    crawl(list(SAMPLE_SEEDS), tmp_path / "run", strategy="best-first", max_pages=6,
          archives=[sample_archive], model={"name": "keyword", "keywords": ["cat", "cats"]})  # fmt: skip
    pages = _pages(tmp_path / "run")
    child = next(p for p in pages if p["parent"] == SEED)
    assert main(["why", str(tmp_path / "run"), child["url"]]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == child["url"]
    assert "now: fetched" in out
    seed_score = next(p["relevance"] for p in pages if p["url"] == SEED)
    assert f"<- page #1 {SEED} [score 1, relevance {seed_score:.6g}] link {seed_score:.6g}: parent relevance" in out


def test_nothing_fetched_exits_1_with_the_cause(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # a proxy nobody listens on: every request fails before reaching the origin
    code = main(["crawl", "--seeds", "http://www.example.org/", "--out", str(tmp_path / "run"),
                 "--proxy", "http://127.0.0.1:9", "--quiet", "--max-pages", "5"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 1
    assert "no page could be fetched: proxy (1)" in err or "no page could be fetched: connect (1)" in err


def test_api_keeps_the_config_files_strategy_and_budget(sample_archive: Path, tmp_path: Path) -> None:
    config = tmp_path / "topic.toml"
    config.write_text('[crawl]\nstrategy = "opic"\nmax_pages = 7\n', encoding="utf-8")
    stats = crawl(list(SAMPLE_SEEDS), tmp_path / "run", config=config, archives=[sample_archive])
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert info["strategy"] == "opic"
    assert stats.fetched == 7
    # and a resumed crawl keeps its strategy when the caller names none
    crawl([], tmp_path / "run", resume=True, max_pages=9, archives=[sample_archive])
    info = json.loads((tmp_path / "run" / "run.json").read_text())
    assert (info["strategy"], info["summary"]["fetched"]) == ("opic", 9)


def _committed_results(db: Path) -> int:
    """How many results the last commit of a running crawl accounts for (read-only)."""
    import sqlite3

    try:
        conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5)
        try:
            row = conn.execute("SELECT value FROM meta WHERE key = 'engine'").fetchone()
        finally:
            conn.close()
    except sqlite3.Error:
        return 0
    return int(json.loads(row[0])["results"]) if row else 0


def test_commits_come_on_a_timer_too(sample_replay: ReplayProcess, tmp_path: Path) -> None:
    # issue 9 item 4: with commit_every far above the crawl's size, only the timer commits
    run = tmp_path / "run"
    thread = threading.Thread(target=crawl, args=(list(SAMPLE_SEEDS), run), kwargs={
        "max_pages": 40, "delay": 0.1, "proxy": sample_replay.proxy_url,
        "commit_every": 100_000, "commit_seconds": 0.3,
    })  # fmt: skip
    thread.start()
    seen = 0
    try:
        deadline = time.monotonic() + 120
        while thread.is_alive() and time.monotonic() < deadline and seen < 5:
            if (run / "crawl.db").exists():
                seen = _committed_results(run / "crawl.db")
            time.sleep(0.05)
    finally:
        thread.join(120)
    assert seen >= 5, "no commit while the crawl ran"


@pytest.mark.slow  # waits out the stop's grace period
def test_a_stop_cancels_a_hung_fetch_after_the_grace_period(tmp_path: Path) -> None:
    # issue 9 item 4: a body that never ends does not hold a stop for longer than the grace
    import asyncio

    from aiohttp import web

    from focuscrawl.api import open_crawl
    from tests.sites import html, serve

    hung = asyncio.Event()

    async def hang(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/html"})
        await response.prepare(request)
        await response.write(b"<html>")
        hung.set()
        await asyncio.sleep(3600)
        return response

    async def main_() -> dict[str, Any]:
        async with serve({"/": html('<a href="/slow">s</a>'), "/slow": hang}) as site:
            crawler = open_crawl(tmp_path / "run", [site.url("/")], overrides={
                "fetch": {"delay": 0.0, "allow_private": ("127.0.0.1",), "respect_robots": False},
            })  # fmt: skip
            async with crawler.fetcher:
                task = asyncio.create_task(crawler.run())
                await hung.wait()  # /slow is in flight, its body never ends
                crawler.request_stop()
                await task
            crawler.close()
            return json.loads((tmp_path / "run" / "run.json").read_text())

    info = asyncio.run(main_())
    # cancelled after the grace period, not ended by the fetch's own 120 s deadline (which
    # would have recorded it as a timeout): left in flight for the resume to fetch again
    assert info["finished"] is False
    assert info["summary"]["counters"]["cancelled_in_flight"] == 1
    assert [p["url"] for p in _pages(tmp_path / "run")] == [info["seeds"][0]]


def test_commits_wait_for_the_disk_off_the_event_loop(
    sample_replay: ReplayProcess, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # issue 11: the commits during the crawl fsync the outputs in a worker thread (the
    # fetches in flight go on meanwhile); the lengths committed are the files' own
    from focuscrawl.output import writers

    threads: list[bool] = []  # per fsync: on the event loop's thread?
    original = writers._AppendFile.fsync

    def fsync(self: Any) -> None:
        threads.append(threading.current_thread() is threading.main_thread())
        original(self)

    monkeypatch.setattr(writers._AppendFile, "fsync", fsync)
    run = tmp_path / "run"
    stats = crawl(list(SAMPLE_SEEDS), run, max_pages=30, delay=0, proxy=sample_replay.proxy_url,
                  commit_every=5)  # fmt: skip
    assert stats.fetched == 30
    off_loop = threads.count(False)
    assert off_loop >= 2 * 5  # pages.jsonl and the WARC, at each of the 5-page commits
    assert threads.count(True) >= 2  # the first and the last commit stay on the loop
    import sqlite3

    conn = sqlite3.connect(run / "crawl.db")
    state = json.loads(conn.execute("SELECT value FROM meta WHERE key = 'engine'").fetchone()[0])
    conn.close()
    assert state["pages_offset"] == (run / "pages.jsonl").stat().st_size
    assert state["warc_offset"] == (run / "corpus.warc.gz").stat().st_size
    assert (run / "pages.jsonl").read_bytes().count(b"\n") >= 30
