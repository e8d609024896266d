"""The live dashboard: incremental reading of a run, its figures, the server, a browser."""

from __future__ import annotations

import json
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from focuscrawl.commands.dashboard import build_app, tails_for
from focuscrawl.dashboard import RunTail, render_page
from focuscrawl.exceptions import ConfigError

ROWS: list[dict[str, Any]] = [
    {"url": "http://a.org/", "status": 200, "relevant": True, "relevance": 0.9, "fetched_at": 100.0},
    {"url": "http://a.org/x", "status": 404, "relevant": None, "fetched_at": 100.5},
    {"url": "http://b.org/", "status": 200, "relevant": False, "relevance": 0.1, "fetched_at": 101.0},
    {"url": "http://a.org/y", "status": 0, "error": "timeout", "fetched_at": 101.5},
    {"url": "http://a.org/", "status": 200, "recrawl": True, "relevant": True, "fetched_at": 102.0},
    {"url": "http://b.org/z", "status": 200, "relevant": True, "relevance": 0.7, "fetched_at": 102.5},
]
LABELS = {"http://a.org/": {"type": "course"}, "http://b.org/": {"type": "course"},
          "http://b.org/z": {"type": "other"}}  # fmt: skip


def _run_dir(tmp_path: Path, rows: list[dict[str, Any]], name: str = "run") -> Path:
    run = tmp_path / name
    run.mkdir()
    (run / "pages.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    info = {"strategy": "best-first", "model": "keyword", "finished": True,
            "settings": {"crawl": {"max_pages": 10}}, "summary": {"queued": 7}}  # fmt: skip
    (run / "run.json").write_text(json.dumps(info), encoding="utf-8")
    return run


def _labels(tmp_path: Path) -> Path:
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps({"url": u, **lab}) + "\n" for u, lab in LABELS.items()))
    return path


def test_figures_of_a_run_computed_by_hand(tmp_path: Path) -> None:
    [tail] = tails_for([_run_dir(tmp_path, ROWS)], _labels(tmp_path), ["type=course"])
    tail.update()
    snap = tail.snapshot(now=103.0)
    # 5 URLs of the budget (the re-crawl is not one), 3 of them answered 200
    assert (snap["urls"], snap["pages"], snap["recrawls"]) == (5, 3, 1)
    assert snap["relevant_model"] == 2  # a.org/ and b.org/z
    assert snap["harvest_model"] == round(2 / 3, 4)
    assert snap["relevant_labels"] == 2  # a.org/ and b.org/ are courses, b.org/z is not
    assert snap["statuses"] == {"200": 3, "404": 1, "timeout": 1}
    assert snap["hosts"] == 2
    assert snap["top_hosts"][0] == ("a.org", 3)
    assert snap["urls_per_s"] == round(4 / 2.5, 2)  # 5 URLs between t=100 and t=102.5
    assert snap["queued"] == 7
    assert snap["state"] == "finished"
    assert snap["recent"][0]["url"] == "http://b.org/z"  # the latest first
    # the harvest curve is the evaluation's: relevant pages among the pages of the first x URLs
    xs, ys = tail.curve(by_labels=True)
    assert xs == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert ys == [1.0, 1.0, 1.0, 1.0, 2 / 3]
    xs, ys = tail.curve(by_labels=False)
    assert ys == [1.0, 1.0, 0.5, 0.5, 2 / 3]


def test_reads_only_what_was_added_and_waits_for_a_line_to_end(tmp_path: Path) -> None:
    run = _run_dir(tmp_path, ROWS[:2])
    tail = RunTail(run)
    tail.update()
    assert tail.urls == 2
    pages = run / "pages.jsonl"
    line = json.dumps(ROWS[2]) + "\n"
    with pages.open("a", encoding="utf-8") as fh:
        fh.write(line[:20])  # a line still being written
    tail.update()
    assert tail.urls == 2
    with pages.open("a", encoding="utf-8") as fh:
        fh.write(line[20:] + "{not json\n")
    tail.update()
    assert (tail.urls, tail.pages, tail.bad_lines) == (3, 2, 1)
    # a resumed crawl cuts the file back to its last commit: read again from the start
    pages.write_text(json.dumps(ROWS[0]) + "\n", encoding="utf-8")
    tail.update()
    assert (tail.urls, tail.pages, tail.bad_lines) == (1, 1, 0)


def test_a_file_cut_back_and_written_past_between_two_looks_is_read_again(tmp_path: Path) -> None:
    """A resumed crawl cuts pages.jsonl back to its last commit and may write past where
    the last look left before the next one: the tail read on from there, mid-line (a bad
    line, the cut lines counted twice); the server's /metrics and live page with it."""
    run = _run_dir(tmp_path, ROWS[:4])
    tail = RunTail(run)
    tail.update()
    assert (tail.urls, tail.pages) == (4, 2)
    pages = run / "pages.jsonl"
    again = [ROWS[0], *({"url": f"http://c.org/page-{i}", "status": 404, "fetched_at": 110.0 + i}
                        for i in range(6))]  # fmt: skip
    pages.write_text("".join(json.dumps(r) + "\n" for r in again), encoding="utf-8")  # longer than before
    tail.update()
    assert (tail.urls, tail.pages, tail.bad_lines) == (7, 1, 0)
    assert tail.statuses == {"200": 1, "404": 6}


def test_a_run_not_started_yet_is_waited_for(tmp_path: Path) -> None:
    tail = RunTail(tmp_path / "later")
    tail.update()
    assert tail.snapshot()["state"] == "waiting"
    assert "waiting" in render_page([tail], every=1.0)
    _run_dir(tmp_path, ROWS, "later")  # the crawl starts
    tail.update()
    assert (tail.snapshot()["state"], tail.urls) == ("finished", 5)


def test_a_long_run_is_caught_up_over_several_looks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import focuscrawl.dashboard as dashboard

    rows = [{"url": f"http://a.org/{i}", "status": 200, "relevant": i % 3 == 0} for i in range(300)]
    tail = RunTail(_run_dir(tmp_path, rows))
    monkeypatch.setattr(dashboard, "_READ_CAP", 1000)  # bytes: about 20 lines a look
    tail.update()
    assert 0 < tail.urls < 300
    looks = 1
    while tail.urls < 300:
        tail.update()
        looks += 1
        assert looks < 100
    assert looks > 5
    assert (tail.pages, tail.model_relevant, tail.bad_lines) == (300, 100, 0)


def test_live_rate_and_state(tmp_path: Path) -> None:
    now = time.time()
    rows = [{"url": f"http://a.org/{i}", "status": 200, "fetched_at": now - 5 + i * 0.5} for i in range(9)]
    run = _run_dir(tmp_path, rows)
    (run / "run.json").write_text(json.dumps({"summary": {}}), encoding="utf-8")  # not finished
    tail = RunTail(run)
    tail.update()
    assert tail.state(now) == "running"  # run.json written just now
    assert tail.rate_now(now) == pytest.approx(2.0)  # 8 intervals of 0.5 s
    assert tail.rate_now(now + 60) == 0.0  # nothing fetched for a minute
    assert tail.state(now + 60) == "idle"


def test_wrong_arguments_are_one_line_errors(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    with pytest.raises(ConfigError, match="not a run directory"):
        tails_for([tmp_path / "file"], None, [])
    with pytest.raises(ConfigError, match="go together"):
        tails_for([_run_dir(tmp_path, ROWS)], _labels(tmp_path), [])


def test_the_page_is_self_contained(tmp_path: Path) -> None:
    tails = tails_for([_run_dir(tmp_path, ROWS, "a"), _run_dir(tmp_path, ROWS[:3], "b")], None, [])
    for tail in tails:
        tail.update()
    html = render_page(tails, every=1.0)
    assert html.count("<svg") == 2  # progress and harvest (no labels), both runs in each
    assert html.count("<polyline") == 4
    # nothing is loaded from anywhere: no src or href, no CSS url() or @import
    assert not re.search(r"""\b(src|href)\s*=|url\(|@import""", html)


async def _serve(app: web.Application) -> tuple[web.AppRunner, int]:
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port: int = runner.addresses[0][1]
    return runner, port


async def test_server_follows_a_growing_run(tmp_path: Path) -> None:
    run = _run_dir(tmp_path, ROWS[:2])
    runner, port = await _serve(build_app([RunTail(run)], every=0.5))
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(f"http://127.0.0.1:{port}/api/runs") as resp:
                first = (await resp.json())["runs"][0]
            with (run / "pages.jsonl").open("a", encoding="utf-8") as fh:
                fh.write("".join(json.dumps(r) + "\n" for r in ROWS[2:]))
            async with session.get(f"http://127.0.0.1:{port}/api/runs") as resp:
                second = (await resp.json())["runs"][0]
            async with session.get(f"http://127.0.0.1:{port}/fragment") as resp:
                fragment = await resp.text()
                assert resp.headers["Cache-Control"] == "no-store"
            async with session.get(f"http://127.0.0.1:{port}/") as resp:
                page = await resp.text()
    finally:
        await runner.cleanup()
    assert (first["urls"], second["urls"]) == (2, 5)
    assert "http://b.org/z" in fragment
    assert "setInterval(tick, 500)" in page


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (.ci/run installs it)")
def test_the_page_renews_itself_in_headless_chromium(tmp_path: Path) -> None:
    run = _run_dir(tmp_path, ROWS)
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "focuscrawl", "dashboard", str(run), "--port", str(port), "--every", "0.3"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    try:
        assert server.stdout is not None
        assert b"dashboard of 1 run" in server.stdout.readline()
        proc = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
             "--disable-background-networking", "--disable-component-update", "--disable-sync",
             f"--user-data-dir={tmp_path / 'profile'}", "--virtual-time-budget=3000", "--dump-dom",
             f"http://127.0.0.1:{port}/"],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip
    finally:
        server.terminate()
        server.wait(10)
    dom = proc.stdout
    assert "focuscrawl dashboard" in dom, proc.stderr[-2000:]
    assert "http://b.org/z" in dom
    assert "<svg" in dom
    # the clock says "now" until the page's script has fetched and put in a new fragment
    clock = re.search(r'<span id="clock">([^<]*)</span>', dom)
    assert clock is not None
    assert clock.group(1) not in ("now", "dashboard server gone")
    assert not clock.group(1).startswith("server answered")
