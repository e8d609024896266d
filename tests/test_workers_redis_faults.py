"""A shared crawl on a real redis-server that comes back empty or holds garbage under
the crawl's keys (issue 40, items 8 and 9; a pause, Redis killed and an idle worker's
signals: test_workers_faults.py): Redis emptied under a running crawl is one line and
a non-zero exit, and no resume publishes it again; an idle worker resumed adds the
seeds no journal holds; garbage is one line, never a traceback or a hang."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from focuscrawl.replay.generated import GeneratedWeb
from focuscrawl.replay.process import ReplayProcess
from tests.redis_server import RedisServer, redis_server_fixture  # noqa: F401
from tests.test_workers import _lines, _published, _start_worker

PAGES, HOSTS, SEED = 2000, 40, 13


@pytest.fixture(scope="module")
def web() -> GeneratedWeb:
    return GeneratedWeb(PAGES, HOSTS, SEED)


@pytest.fixture
def replay(tmp_path: Path) -> Iterator[ReplayProcess]:
    args = ["--generated", str(PAGES), "--hosts", str(HOSTS), "--seed", str(SEED)]
    with ReplayProcess([], log_path=tmp_path / "requests.tsv", faults_args=args) as server:
        yield server


def _records(run_dir: Path) -> list[dict[str, Any]]:
    rows = []
    for path in sorted((run_dir / "workers").glob("*/pages.jsonl")):
        rows += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return rows


def _overrides(redis_url: str, replay: ReplayProcess, max_pages: int, delay: float) -> dict[str, Any]:
    return {
        "crawl": {"strategy": "bfs", "max_pages": max_pages, "frontier": "redis",
                  "frontier_url": redis_url},
        "fetch": {"proxy": replay.proxy_url, "delay": delay, "concurrency": 8},
    }  # fmt: skip


def _wait(condition: Any, what: str, seconds: float = 120, every: float = 0.05) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(every)


def _err(proc: subprocess.Popen[bytes]) -> str:
    return proc.stderr.read().decode() if proc.stderr else ""


def _crawl(web: GeneratedWeb, replay: ReplayProcess, url: str, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "focuscrawl", "crawl", "--seeds", *web.home_urls(4),
            "--proxy", replay.proxy_url, "--frontier", url, "--out", str(out), "--delay", "0.1",
            "--strategy", "bfs", "--quiet", *extra]  # fmt: skip


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.getcwd()}


def _meta(prefix: str, name: str) -> str:
    return f"{prefix}:{{{prefix}:m}}:{name}"


def _forget(db: redis.Redis, prefix: str) -> None:
    """The crawl's keys gone at once (one DEL), as from a Redis flushed under it."""
    db.delete(*db.scan_iter(match=f"{prefix}:*", count=1000))


@pytest.mark.slow
@pytest.mark.parametrize("how", ["flushed", "restarted-empty"])
def test_redis_back_empty_mid_crawl_is_one_line_and_resume_does_not_republish(
    how: str, web: GeneratedWeb, replay: ReplayProcess, tmp_path: Path
) -> None:
    """The crawl's keys gone under its two workers (deleted, or redis-server restarted
    without persistence): the crawl exits non-zero with no traceback, each worker in one
    line; then each --resume (twice) is one line that the shared state is gone and what
    can be done, and publishes nothing (it used to publish the crawl afresh and loop)."""
    (tmp_path / "redis").mkdir()
    server = RedisServer(tmp_path / "redis")
    try:
        db = redis.Redis.from_url(server.url)
        out = tmp_path / "run"
        crawl = subprocess.Popen([*_crawl(web, replay, server.url, out), "--workers", "2",
                                  "--max-pages", "1500"], stderr=subprocess.PIPE, env=_env())  # fmt: skip
        dirs = [out / "workers" / f"{i:02d}" for i in range(2)]
        _wait(lambda: sum(_lines(d / "pages.jsonl") for d in dirs) >= 30 or crawl.poll() is not None,
              "the workers never got going")  # fmt: skip
        assert crawl.poll() is None
        prefix = json.loads((out / "run.json").read_text())["crawl"]
        if how == "flushed":
            _forget(db, prefix)
        else:
            server.kill()
            server.start()
        code = crawl.wait(timeout=300)
        err = _err(crawl)
        print(err)
        assert code not in (0, None)
        assert "Traceback" not in err
        lines = err.strip().splitlines()
        said = [line for line in lines if server.url in line]
        assert len(said) == 2, lines  # one line for each worker
        if how == "flushed":
            assert all(f"the shared crawl {prefix} is gone from Redis" in line for line in said)
        pages = len(_records(out))
        for _ in range(2):
            again = subprocess.run([sys.executable, "-m", "focuscrawl", "crawl", "--out", str(out),
                                    "--resume", "--quiet"], stderr=subprocess.PIPE, env=_env(),
                                   timeout=300)  # fmt: skip
            assert again.returncode == 1
            lines = again.stderr.decode().strip().splitlines()
            assert len(lines) == 1, lines
            assert f"the shared crawl {prefix} is gone from Redis" in lines[0]
            assert "restore Redis's data" in lines[0]
            assert not db.hexists(_meta(prefix, "meta"), "crawl")  # not published afresh
        # a worker resumed by hand: the same line
        worker = subprocess.run([sys.executable, "-m", "focuscrawl", "worker", "--frontier",
                                 server.url, "--out", str(dirs[0]), "--quiet"],
                                stderr=subprocess.PIPE, env=_env(), timeout=300)  # fmt: skip
        assert worker.returncode == 1
        lines = worker.stderr.decode().strip().splitlines()
        assert len(lines) == 1, lines
        assert f"the shared crawl {prefix} is gone from Redis" in lines[0]
        assert len(_records(out)) == pages  # nothing crawled again, nothing cut
    finally:
        server.stop()


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_an_idle_worker_stopped_by_a_signal_then_resumed_adds_the_seeds(
    signum: int, web: GeneratedWeb, replay: ReplayProcess, redis_server: RedisServer,
    tmp_path: Path,
) -> None:  # fmt: skip
    """A worker waiting for the seeds (their seeder died before its first commit: it
    is retired, and the next worker to start adds them) stops at SIGTERM or SIGINT
    (it ran 900 s through them), interrupted and resumable; restarted, it adds the
    seeds, and with one more worker the crawl ends with its budget, no URL twice."""
    budget = 120
    db = redis.Redis.from_url(redis_server.url)
    out = tmp_path / "run"
    prefix = _published(out, web.home_urls(4), _overrides(redis_server.url, replay, budget, 0.05),
                        workers=2)  # fmt: skip
    db.sadd(_meta(prefix, "workers"), "ghost")  # a seeder dead before its first commit
    db.set(_meta(prefix, "seeded"), "ghost")
    b_dir = out / "workers" / "b"
    b = _start_worker(redis_server.url, prefix, b_dir, "--lease-seconds", "3")
    try:
        # the ghost retired by b from its idle loop: b waits for a worker to add the seeds
        _wait(lambda: not db.exists(_meta(prefix, "seeded")) or b.poll() is not None,
              "the idle worker never retired the dead seeder")  # fmt: skip
        assert b.poll() is None, _err(b)
        b.send_signal(signum)
        code = b.wait(timeout=60)  # (a bound on a hang: it exits in well under a second)
    finally:
        if b.poll() is None:
            b.kill()
    err = _err(b)
    assert code == 130, err
    assert "Traceback" not in err
    assert _lines(b_dir / "pages.jsonl") == 0
    run = json.loads((b_dir / "run.json").read_text())
    assert run["finished"] is False  # (interrupted: its summary written, resumable)
    assert run["summary"]["fetched"] == 0
    # b resumed names itself the seeder (none is named now): its journal holds no seeds,
    # so it adds them (it ended the crawl at 0 URLs with exit 0); c joins; the crawl ends
    # (leases of 10 s from here: nobody dies now, and on a machine at load 27 a worker
    # with 3 s ones found no renewal for 2 s and stopped, as it must: CI, 2026-11-29)
    b = _start_worker(redis_server.url, prefix, b_dir, "--lease-seconds", "10")
    _wait(lambda: db.exists(_meta(prefix, "seeded")) or b.poll() is not None,
          "the resumed worker never named itself the seeder")  # fmt: skip
    assert db.get(_meta(prefix, "seeded")) == json.loads((b_dir / "crawl.db").read_bytes())[
        "worker"].encode()  # fmt: skip
    c = _start_worker(redis_server.url, prefix, out / "workers" / "c", "--lease-seconds", "10")
    assert c.wait(timeout=300) == 0, _err(c)
    assert b.wait(timeout=300) == 0, _err(b)
    rows = _records(out)
    assert len(rows) == budget
    assert max(Counter(row["url"] for row in rows).values()) == 1


@pytest.mark.parametrize(
    ("suffix", "what"),
    [(":n", "not a number"), (":nt", "not two numbers (next time, interval)"),
     (":u", "not a URL row"), (":j", "not a number"), (":claims", "is not a number")],
    ids=["state-counts", "host-next-times", "url-rows", "worker-journal", "budget-claims"],
)  # fmt: skip
def test_numbers_spoiled_under_a_crawls_keys_are_one_line_naming_the_key(
    suffix: str, what: str, web: GeneratedWeb, replay: ReplayProcess,
    redis_server: RedisServer, tmp_path: Path,
) -> None:  # fmt: skip
    """Every field of one kind of hash (the counts by state, the hosts' next times, the
    URL rows of each partition; a worker's journal; the budget's claims) overwritten with text that is no number: the resumed
    crawl's worker says so in one line naming the key, exits non-zero with no
    traceback and no hang, and its pages are all still there (before: a ValueError's
    traceback from deep in the loop, 3 of 30 kinds of garbage)."""
    out = tmp_path / "run"
    first = subprocess.run([*_crawl(web, replay, redis_server.url, out), "--workers", "1",
                            "--max-pages", "30"], stderr=subprocess.PIPE, env=_env(), timeout=300)  # fmt: skip
    assert first.returncode == 0, first.stderr.decode()
    pages = _records(out)
    assert len(pages) == 30
    prefix = json.loads((out / "run.json").read_text())["crawl"]
    db = redis.Redis.from_url(redis_server.url)
    spoiled = [k for k in db.scan_iter(match=f"{prefix}:*{suffix}") if db.type(k) == b"hash"]
    assert spoiled, f"no {suffix} hash to spoil"
    for key in spoiled:
        db.hset(key, mapping=dict.fromkeys(db.hkeys(key), "not-a-number{"))
    again = subprocess.run([sys.executable, "-m", "focuscrawl", "crawl", "--out", str(out),
                            "--resume", "--max-pages", "60", "--quiet"],
                           stderr=subprocess.PIPE, env=_env(), timeout=300)  # fmt: skip
    err = again.stderr.decode()
    assert again.returncode not in (0, None), err
    assert "Traceback" not in err, err
    said = [line for line in err.splitlines() if "changed from outside focuscrawl" in line]
    assert len(said) == 1, err
    # read in Python: the key and the value; read by a script: the key, or the partition's keys
    assert prefix in said[0], said[0]
    assert (f"holds 'not-a-number{{', {what}" in said[0] or what in said[0]
            or f"keys under {prefix}:{{{prefix}:" in said[0]), said[0]  # fmt: skip
    assert _records(out) == pages  # nothing cut, nothing written twice
