"""Two crawls started into one run directory (issue 40 item 1): one crawls, the other is
refused with one line, and the refused one removes nothing, however their starts
interleave; a failed start takes back only what it wrote itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from focuscrawl.output.lock import RunLock
from focuscrawl.replay.process import ReplayProcess
from tests.redis_server import RedisServer, redis_server_fixture  # noqa: F401 (the fixture)

ROOT = Path(__file__).resolve().parents[1]
PAGES = 150  # the crawl's budget: long enough to be running while the second starts
SEED_URL = "http://www.site0001.example.com/"  # the largest host of the web below


@pytest.fixture(scope="module")
def generated_web() -> Iterator[ReplayProcess]:
    with ReplayProcess([], faults_args=["--generated", "3000", "--hosts", "30", "--seed", "3"]) as replay:
        yield replay


def _start(out: Path, proxy: str, seed: str, *more: str) -> subprocess.Popen[str]:
    cmd = [sys.executable, "-m", "focuscrawl", "crawl", "--seeds", seed, "--out", str(out), "-q",
           "--max-pages", str(PAGES), "--delay", "0", "--proxy", proxy, *more]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


# the moment of the first crawl's start at which the second one starts
STAGES: dict[str, Callable[[Path], bool]] = {
    "at-once": lambda out: True,
    "dir-made": lambda out: out.is_dir(),
    "locked": lambda out: _size(out / "run.lock") > 0,
    "run-json": lambda out: (out / "run.json").exists(),
    "crawl-db": lambda out: (out / "crawl.db").exists(),
    "pages": lambda out: _size(out / "pages.jsonl") > 0,
}


def _wait_for(stage: Callable[[Path], bool], out: Path, first: subprocess.Popen[str]) -> None:
    """Until the first crawl reached ``stage`` (or ended: the second starts then)."""
    deadline = time.monotonic() + 120
    while not stage(out) and first.poll() is None and time.monotonic() < deadline:
        time.sleep(0.001)


def _pages(out: Path) -> int:
    """Pages recorded in ``out`` (a shared crawl's: in its workers' directories)."""
    files = [out / "pages.jsonl", *out.glob("workers/*/pages.jsonl")]
    return sum(len(f.read_text().splitlines()) for f in files if f.exists())


def _race(out: Path, proxy: str, stage: Callable[[Path], bool], *more: str) -> list[object]:
    """The first crawl started, the second once the first reached ``stage``: what went
    wrong (nothing: one crawled all its pages, its files intact, the other was refused
    with one line)."""
    first = _start(out, proxy, SEED_URL, *more)
    _wait_for(stage, out, first)
    second = _start(out, proxy, SEED_URL, *more)
    outcomes = [(p.wait(timeout=300), *p.communicate()) for p in (first, second)]
    codes = sorted(code for code, _, _ in outcomes)
    refused = [err for code, _, err in outcomes if code == 2]
    ok = (codes == [0, 2] and len(refused) == 1 and refused[0].count("\n") == 1
          and _pages(out) == PAGES and (out / "crawl.db").exists()
          and json.loads((out / "run.json").read_text())["finished"])  # fmt: skip
    return [] if ok else [codes, _pages(out), sorted(p.name for p in out.glob("*")), refused]


@pytest.mark.slow  # twelve pairs of crawls
@pytest.mark.parametrize("premade", [False, True], ids=["new-dir", "empty-dir"])
def test_a_refused_second_crawl_removes_nothing(
    generated_web: ReplayProcess, tmp_path: Path, premade: bool
) -> None:
    lost = []
    for name, stage in STAGES.items():
        out = tmp_path / name
        if premade:
            out.mkdir()
        if wrong := _race(out, generated_web.proxy_url, stage):
            lost.append((name, wrong))
    assert lost == []


@pytest.mark.slow  # five pairs of shared crawls
def test_a_refused_second_shared_crawl_keeps_the_first_ones_marker(
    generated_web: ReplayProcess, redis_server: RedisServer, tmp_path: Path
) -> None:
    lost = []
    for name in ("at-once", "dir-made", "locked", "run-json", "crawl-db"):
        out = tmp_path / name
        shared = ("--frontier", redis_server.url, "--workers", "1")
        if wrong := _race(out, generated_web.proxy_url, STAGES[name], *shared):
            lost.append((name, wrong))
    assert lost == []


def test_a_failed_start_keeps_what_others_wrote_in_the_meantime(tmp_path: Path) -> None:
    """Files made in the run directory while the lock was not held (before this process
    took it) are not this process's to take back, even those of a crawl."""
    out = tmp_path / "run"
    lock = RunLock(out, made_dir=True)
    out.mkdir()
    (out / "crawl.db").write_text("{}\n")  # another crawl's marker, there before the lock
    lock.acquire()
    (out / "run.json").write_text("{}\n")  # this process's
    lock.take_back()
    lock.release()
    assert sorted(p.name for p in out.iterdir()) == ["crawl.db", "run.lock"]


def test_a_failed_start_in_a_directory_of_its_own_takes_the_directory_back(tmp_path: Path) -> None:
    out = tmp_path / "run"
    with RunLock(out, made_dir=True) as lock:
        (out / "run.json").write_text("{}\n")
        (out / "crawl.db").write_text("{}\n")
        lock.take_back()
    assert not out.exists()
    with RunLock(out) as again:  # and the directory can be locked anew
        assert again.held
