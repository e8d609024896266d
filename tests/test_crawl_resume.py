"""Kill the crawler with SIGKILL at random moments; the resumed crawl loses nothing
and writes nothing twice, compared with an uninterrupted crawl of the same site."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest
from warcio.archiveiterator import ArchiveIterator

from focuscrawl.replay.process import ReplayProcess
from focuscrawl.replay.sample import SAMPLE_SEEDS

ROOT = Path(__file__).resolve().parents[1]
HOST = "www.cs.utexas.edu"


def _crawl_cmd(out: Path, proxy: str, resume: bool, start: list[str]) -> list[str]:
    cmd = [sys.executable, "-m", "focuscrawl", "crawl", "--out", str(out), "--quiet"]
    if resume:
        return [*cmd, "--resume"]
    return [*cmd, "--strategy", "bfs", "--max-pages", "0", "--proxy", proxy, "--concurrency", "8", *start]


def _engine_wrote_run_json(path: Path, before: int | None) -> bool:
    """run.json rewritten since ``before`` by the engine, once its start or resume was
    committed (the one written before the crawl DB exists has an empty summary)."""
    try:
        if path.stat().st_mtime_ns == before:
            return False
        return bool(json.loads(path.read_text(encoding="utf-8"))["summary"])
    except (FileNotFoundError, ValueError, KeyError):
        return False


def _mtime(path: Path) -> int | None:
    try:
        return path.stat().st_mtime_ns
    except FileNotFoundError:
        return None


def _pages(out: Path) -> list[str]:
    with open(out / "pages.jsonl", encoding="utf-8") as fh:
        return [json.loads(line)["url"] for line in fh]


def _warc_urls(out: Path) -> list[str]:
    with open(out / "corpus.warc.gz", "rb") as fh:
        return [
            r.rec_headers.get_header("WARC-Target-URI")
            for r in ArchiveIterator(fh)
            if r.rec_type == "response"
        ]


def _kill_and_resume(
    proxy: str, tmp_path: Path, start: list[str], extra_env: dict[str, str] | None = None
) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(extra_env or {})}
    reference = tmp_path / "reference"
    subprocess.run(_crawl_cmd(reference, proxy, False, start), check=True, env=env)

    out = tmp_path / "killed"
    rng = random.Random(1234)
    kills = 0
    for attempt in range(5):
        before = _mtime(out / "run.json")
        proc = subprocess.Popen(
            _crawl_cmd(out, proxy, attempt > 0, start), env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )  # fmt: skip
        # the kill comes at a random moment after this run's start (or resume) was
        # committed, not at a fixed time from the process start, which a loaded
        # machine may not even have got through its imports by
        deadline = time.monotonic() + 120
        while not _engine_wrote_run_json(out / "run.json", before) and proc.poll() is None:
            assert time.monotonic() < deadline, "the crawl did not start within 120 s"
            time.sleep(0.01)
        time.sleep(rng.uniform(0.2, 2.0))
        if proc.poll() is None:
            proc.send_signal(signal.SIGKILL)
            kills += 1
        proc.wait()
    assert kills >= 2, "the crawl finished too fast to be killed"
    done = subprocess.run(_crawl_cmd(out, proxy, True, start), env=env,
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr

    ref_pages, pages = _pages(reference), _pages(out)
    assert len(pages) == len(set(pages)), "a URL was written twice to pages.jsonl"
    assert set(pages) == set(ref_pages)
    warc = _warc_urls(out)
    assert len(warc) == len(set(warc)), "a response was written twice to the WARC"
    assert set(warc) == set(_warc_urls(reference))
    summary = json.loads((out / "run.json").read_text())["summary"]
    assert summary["fetched"] == len(pages)
    # attempts 1-4 and the last run resumed, each recorded before it could be killed
    assert summary["counters"]["resumes"] == 5


@pytest.mark.slow  # crawls killed and resumed again and again, and their reference
def test_sigkill_at_random_moments_then_resume(webkb_replay: ReplayProcess, tmp_path: Path) -> None:
    config = tmp_path / "scope.toml"
    config.write_text(f'[scope]\nallow_hosts = ["{HOST}"]\n', encoding="utf-8")
    # 5 ms between requests to the one host: the crawl lasts >= 11 s, long enough to kill
    start = ["--seeds", f"http://{HOST}/", "--delay", "0.005", "--config", str(config)]
    _kill_and_resume(webkb_replay.proxy_url, tmp_path, start)


def test_sigkill_before_the_first_records_were_committed_then_resume(
    webkb_replay: ReplayProcess, tmp_path: Path
) -> None:
    """Killed after its start was committed but before its first records were (no
    commit by count or by time in this crawl): the resume cuts the files back to the
    empty outputs that commit accounts for, and goes on. (It was refused as files "no
    crawl DB commit accounts for", the guard against a lost crawl DB.)"""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "FOCUSCRAWL_CRAWL__COMMIT_EVERY": "100000",
           "FOCUSCRAWL_CRAWL__COMMIT_SECONDS": "1000"}  # fmt: skip
    out = tmp_path / "killed"
    start = ["--seeds", f"http://{HOST}/", "--delay", "0.02", "--max-pages", "40"]
    cmd = [sys.executable, "-m", "focuscrawl", "crawl", "--out", str(out), "--quiet",
           "--strategy", "bfs", "--proxy", webkb_replay.proxy_url, *start]  # fmt: skip
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while (not (out / "pages.jsonl").exists() or len(_pages(out)) < 5) and proc.poll() is None:
        assert time.monotonic() < deadline, "the crawl wrote no records within 120 s"
        time.sleep(0.01)
    assert proc.poll() is None, "the crawl ended before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done = subprocess.run([sys.executable, "-m", "focuscrawl", "crawl", "--out", str(out),
                           "--resume", "--quiet"], env=env, capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    pages = _pages(out)
    assert len(pages) == len(set(pages)) == 40
    warc = _warc_urls(out)
    assert sorted(warc) == sorted(pages)


@pytest.mark.slow  # crawls killed and resumed again and again, and their reference
def test_sigkill_with_the_warc_builder_then_resume(webkb_replay: ReplayProcess, tmp_path: Path) -> None:
    # the WARC records built by a child process from the first page on: killed with the
    # crawl, it loses nothing and leaves no process behind
    config = tmp_path / "scope.toml"
    config.write_text(f'[scope]\nallow_hosts = ["{HOST}"]\n', encoding="utf-8")
    start = ["--seeds", f"http://{HOST}/", "--delay", "0.005", "--config", str(config)]
    env = {"FOCUSCRAWL_CRAWL__WARC_BUILDER": "true", "FOCUSCRAWL_CRAWL__WARC_BUILDER_AFTER": "0"}
    _kill_and_resume(webkb_replay.proxy_url, tmp_path, start, env)
    summary = json.loads((tmp_path / "killed" / "run.json").read_text())["summary"]
    if (os.cpu_count() or 1) > 1:
        assert summary["counters"]["warc_builder_records"] > 0
    deadline = time.monotonic() + 60
    while _builders_left():
        assert time.monotonic() < deadline, "a killed crawl left its WARC builder running"
        time.sleep(0.1)


def _builders_left() -> list[int]:
    """WARC builder processes whose crawl is gone (adopted by init)."""
    return [
        proc.pid
        for proc in psutil.process_iter(["cmdline", "ppid"])
        if proc.info["ppid"] == 1
        and any("focuscrawl.output.warc_builder" in part for part in proc.info["cmdline"] or [])
    ]


@pytest.mark.slow  # crawls killed and resumed again and again, and their reference
@pytest.mark.parametrize("schedule", ["as-completed", "ordered"])
def test_sigkill_then_resume_on_the_generated_web(
    sample_replay: ReplayProcess, tmp_path: Path, schedule: str
) -> None:
    # the same on the web the project generates (runs without ../shared): 54 URLs, 32
    # of them on one host, at 0.4 s per host make a crawl of 13 s, long enough to kill;
    # in both schedules (the ordered one re-issues its window in its order)
    start = ["--seeds", *SAMPLE_SEEDS, "--delay", "0.4", "--schedule", schedule]
    _kill_and_resume(sample_replay.proxy_url, tmp_path, start)


@pytest.mark.slow  # crawls killed and resumed, and their reference
def test_killed_in_its_first_moments_then_resumed(sample_replay: ReplayProcess, tmp_path: Path) -> None:
    # issue 9 item 9: killed as soon as run.json is on disk (it comes first, written
    # atomically), the run directory still resumes, and the resumed crawl is the whole crawl
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    start = ["--seeds", *SAMPLE_SEEDS, "--delay", "0"]
    reference, out = tmp_path / "reference", tmp_path / "killed"
    subprocess.run(_crawl_cmd(reference, sample_replay.proxy_url, False, start), check=True, env=env)
    proc = subprocess.Popen(_crawl_cmd(out, sample_replay.proxy_url, False, start), env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    while not (out / "run.json").exists():
        assert proc.poll() is None, "the crawl ended before it could be killed"
        time.sleep(0.001)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done = subprocess.run(_crawl_cmd(out, sample_replay.proxy_url, True, start), env=env,
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert sorted(_pages(out)) == sorted(_pages(reference))
