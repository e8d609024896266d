"""A shared crawl's faults on a real redis-server (issue 40): its options checked
before any worker starts, a resumed crawl's new budget honoured, Redis lost or back
empty said in one line, garbage under the crawl's keys refused, signals obeyed by an
idle worker, a worker joining early or late adding capacity."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from focuscrawl.cli import main as cli_main
from focuscrawl.exceptions import ConfigError, FrontierError
from focuscrawl.frontier.redis.store import RedisFrontier
from focuscrawl.replay.generated import GeneratedWeb
from focuscrawl.replay.process import ReplayProcess
from focuscrawl.workers import prepare_shared
from tests.redis_server import RedisServer, redis_server_fixture  # noqa: F401
from tests.test_workers import _lines, _published, _start_worker

PAGES, HOSTS, SEED = 2000, 40, 12


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


def _crawl(web: GeneratedWeb, replay: ReplayProcess, url: str, out: Path, *extra: str) -> list[str]:
    return ["crawl", "--seeds", *web.home_urls(4), "--proxy", replay.proxy_url, "--frontier", url,
            "--out", str(out), "--delay", "0.05", "--strategy", "bfs", "--quiet", *extra]  # fmt: skip


@pytest.mark.parametrize(
    ("tail", "says"),
    [("/0?partitions=0", "partitions=0"), ("/0?partitions=-5", "partitions=-5"),
     ("/abc", "'/abc' is not a number")],
    ids=["partitions-0", "partitions-negative", "db-not-a-number"],
)  # fmt: skip
def test_a_bad_frontier_url_is_one_line_before_any_worker(
    tail: str, says: str, redis_server: RedisServer, tmp_path: Path
) -> None:
    url = redis_server.url.rsplit("/", 1)[0] + tail
    with pytest.raises(FrontierError, match=says):
        prepare_shared(tmp_path / "run", ["http://a.example/"], workers=2,
                       overrides={"crawl": {"frontier": "redis", "frontier_url": url}})  # fmt: skip
    with pytest.raises(FrontierError, match=says):
        RedisFrontier(url, prefix=f"t{uuid.uuid4().hex[:10]}")


@pytest.mark.parametrize("workers", ["0", "-1", "100000"], ids=["zero", "negative", "too-many"])
def test_workers_out_of_bounds_is_one_line(
    workers: str, redis_server: RedisServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    args = ["crawl", "--seeds", "http://a.example/", "--frontier", redis_server.url,
            "--out", str(out), "--workers", workers, "--max-pages", "5"]  # fmt: skip
    assert cli_main(args) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert f"--workers {workers}: from 1 to" in err[0]
    assert not (out / "pages.jsonl").exists()  # (no one-process crawl instead)


def test_a_worker_with_no_crawl_to_join_or_no_redis_url_is_told_what_is_wrong(
    redis_server: RedisServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    empty = redis_server.url.rsplit("/", 1)[0] + "/9"  # a database no test publishes in
    assert cli_main(["worker", "--frontier", empty, "--out", str(tmp_path / "a")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"focuscrawl: {empty}: no shared crawl is published there (one starts with "
                   "focuscrawl crawl --frontier URL --workers N ...)"]  # fmt: skip
    # (it said "0 shared crawls (): name one with --crawl")
    assert cli_main(["worker", "--frontier", "http://db.example:6379/0", "--out", str(tmp_path / "b")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["focuscrawl: frontier http://db.example:6379/0: not a Redis URL (redis://, rediss:// "
                   "or unix://)"]  # fmt: skip
    # (it said that a Redis on another machine needs a password)


def test_a_budget_past_what_redis_holds_exactly_is_one_line(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    crawl = {"frontier": "redis", "frontier_url": redis_server.url, "max_pages": 1 << 63}
    with pytest.raises(ConfigError, match=r"--max-pages 9223372036854775808: .* from 0"):
        prepare_shared(tmp_path / "run", ["http://a.example/"], workers=2,
                       overrides={"crawl": crawl})  # fmt: skip


@pytest.mark.slow
def test_a_resumed_shared_crawl_takes_its_new_budget(
    web: GeneratedWeb, replay: ReplayProcess, redis_server: RedisServer, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    out = tmp_path / "run"
    assert cli_main([*_crawl(web, replay, redis_server.url, out), "--workers", "2",
                     "--max-pages", "40"]) == 0  # fmt: skip
    assert len(_records(out)) == 40
    resume = ["crawl", "--out", str(out), "--resume", "--quiet"]
    assert cli_main([*resume, "--max-pages", "90"]) == 0
    rows = _records(out)
    assert len(rows) == 90
    assert max(Counter(row["url"] for row in rows).values()) == 1
    assert json.loads((out / "run.json").read_text())["settings"]["crawl"]["max_pages"] == 90
    capsys.readouterr()
    # below what was handed out, or a limit turned off: one line, nothing changed
    for asked, says in (("50", "90 pages of this shared crawl's budget are handed out"),
                        ("0", "cannot be turned on or off")):  # fmt: skip
        assert cli_main([*resume, "--max-pages", asked]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1
        assert says in err[0]
    assert len(_records(out)) == 90


def _overrides(redis_url: str, replay: ReplayProcess, max_pages: int, delay: float) -> dict[str, Any]:
    return {
        "crawl": {"strategy": "bfs", "max_pages": max_pages, "frontier": "redis",
                  "frontier_url": redis_url},
        "fetch": {"proxy": replay.proxy_url, "delay": delay, "concurrency": 16},
    }  # fmt: skip


def _meta(prefix: str, name: str) -> str:
    return f"{prefix}:{{{prefix}:m}}:{name}"


def _wait(condition: Any, what: str, seconds: float = 120, every: float = 0.05) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(every)


def _err(proc: subprocess.Popen[bytes]) -> str:
    return proc.stderr.read().decode() if proc.stderr else ""


@pytest.mark.slow
@pytest.mark.parametrize("trial", range(3), ids=lambda t: f"trial-{t}")
def test_a_worker_started_before_the_seeders_first_commit_stays_and_works(
    trial: int, web: GeneratedWeb, replay: ReplayProcess, redis_server: RedisServer,
    tmp_path: Path,
) -> None:  # fmt: skip
    """The seeder is stopped (SIGSTOP) as soon as it has named itself, before its first
    commit: a second worker started then finds every partition empty and no batch
    undelivered. It must wait for the seeds, not end the crawl for itself at once."""
    db = redis.Redis.from_url(redis_server.url)
    out = tmp_path / "run"
    prefix = _published(out, web.home_urls(4), _overrides(redis_server.url, replay, 300, 0.1),
                        workers=2)  # fmt: skip
    a_dir, b_dir = out / "workers" / "a", out / "workers" / "b"
    a = _start_worker(redis_server.url, prefix, a_dir)
    # polled closely: the seeder's first commit follows its naming itself soon
    _wait(lambda: db.exists(_meta(prefix, "seeded")), "the seeder never named itself", every=0.001)
    a.send_signal(signal.SIGSTOP)
    try:
        assert not db.exists(_meta(prefix, "seeds-in"))  # (stopped before its first commit)
        b = _start_worker(redis_server.url, prefix, b_dir, "--lease-seconds", "2")
        # b has looked at the crawl's end a few times (its heartbeat renewed twice since
        # it joined: every 1/3 s), or has ended
        beats: list[float] = []

        def looked() -> bool:
            score = db.zscore(_meta(prefix, "alive"), b_name()) if b_name() else None
            if score is not None and score not in beats:
                beats.append(score)
            return b.poll() is not None or len(beats) >= 3

        def b_name() -> str | None:
            marker = b_dir / "crawl.db"
            return str(json.loads(marker.read_bytes())["worker"]) if marker.exists() else None

        _wait(looked, "the second worker neither ended nor renewed its heartbeat")
    finally:
        a.send_signal(signal.SIGCONT)
    assert b.wait(timeout=180) == 0, _err(b)
    assert a.wait(timeout=180) == 0, _err(a)
    assert _lines(b_dir / "pages.jsonl") > 0  # it stayed, and took its share
    rows = _records(out)
    assert len(rows) == 300
    assert max(Counter(row["url"] for row in rows).values()) == 1


@pytest.mark.slow
@pytest.mark.parametrize("trial", range(3), ids=lambda t: f"trial-{t}")
def test_a_worker_joining_a_busy_crawl_takes_a_fair_share(
    trial: int, web: GeneratedWeb, replay: ReplayProcess, redis_server: RedisServer,
    tmp_path: Path,
) -> None:  # fmt: skip
    """A worker alone (its outbox never empty for long) is joined by a second once it has
    recorded 50 pages: the busy one gives half its partitions back at its next upkeep,
    results waiting for their commit or not, and the second records a fair part."""
    out = tmp_path / "run"
    budget = 1200
    prefix = _published(out, web.home_urls(4), _overrides(redis_server.url, replay, budget, 0.4),
                        workers=1)  # fmt: skip
    a_dir, b_dir = out / "workers" / "a", out / "workers" / "b"
    a = _start_worker(redis_server.url, prefix, a_dir)
    _wait(lambda: _lines(a_dir / "pages.jsonl") >= 50 or a.poll() is not None, "a never got going")
    b = _start_worker(redis_server.url, prefix, b_dir)
    assert a.wait(timeout=300) == 0, _err(a)
    assert b.wait(timeout=300) == 0, _err(b)
    rows = _records(out)
    assert len(rows) == budget
    assert max(Counter(row["url"] for row in rows).values()) == 1
    joined = _lines(b_dir / "pages.jsonl")
    print(f"joined worker: {joined} of {budget} pages")
    assert joined >= budget // 5


def test_a_seeder_key_set_by_hand_is_one_line(
    web: GeneratedWeb, redis_server: RedisServer, tmp_path: Path
) -> None:
    """A ``seeded`` key that names no worker of the crawl: no worker would add the seeds
    and the crawl would end at 0 URLs with exit 0; refused in one line instead."""
    out = tmp_path / "run"
    crawl = {"strategy": "bfs", "frontier": "redis", "frontier_url": redis_server.url}
    prefix = _published(out, web.home_urls(2), {"crawl": crawl}, workers=1)
    redis.Redis.from_url(redis_server.url).set(_meta(prefix, "seeded"), "nobody")
    w = _start_worker(redis_server.url, prefix, out / "workers" / "a")
    assert w.wait(timeout=120) == 1
    err = _err(w).strip().splitlines()
    assert len(err) == 1, err
    assert "seeded names b'nobody', not a worker of this crawl" in err[0]


@pytest.mark.slow
def test_a_resume_after_redis_lost_the_crawl_is_one_line_and_publishes_nothing(
    web: GeneratedWeb, replay: ReplayProcess, redis_server: RedisServer, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    """Redis back empty (restarted without its data): a --resume must not publish the
    crawl afresh (its seeds crawled again into workers' files that hold pages)."""
    out = tmp_path / "run"
    assert cli_main([*_crawl(web, replay, redis_server.url, out), "--workers", "1",
                     "--max-pages", "20"]) == 0  # fmt: skip
    prefix = json.loads((out / "run.json").read_text())["crawl"]
    db = redis.Redis.from_url(redis_server.url)
    for key in list(db.scan_iter(match=f"{prefix}:*")):
        db.delete(key)
    capsys.readouterr()
    assert cli_main(["crawl", "--out", str(out), "--resume", "--quiet"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert f"the shared crawl {prefix} is gone from Redis" in err[0]
    assert not list(db.scan_iter(match=f"{prefix}:*"))
    assert len(_records(out)) == 20


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_an_idle_worker_stops_on_a_signal_and_the_crawl_ends_exactly(
    signum: int, web: GeneratedWeb, replay: ReplayProcess, redis_server: RedisServer, tmp_path: Path
) -> None:
    """A worker with nothing to take (here: waiting for the seeds of a seeder stopped
    before its first commit) stops at SIGTERM or SIGINT as a busy one does (it ran on
    through them for 900 s); the seeder, let go, ends the crawl with every URL once."""
    db = redis.Redis.from_url(redis_server.url)
    out = tmp_path / "run"
    prefix = _published(out, web.home_urls(4), _overrides(redis_server.url, replay, 200, 0.05),
                        workers=2)  # fmt: skip
    a_dir, b_dir = out / "workers" / "a", out / "workers" / "b"
    a = _start_worker(redis_server.url, prefix, a_dir)
    _wait(lambda: db.exists(_meta(prefix, "seeded")), "the seeder never named itself", every=0.001)
    a.send_signal(signal.SIGSTOP)
    try:
        b = _start_worker(redis_server.url, prefix, b_dir, "--lease-seconds", "2")
        beats: list[float] = []

        def idle() -> bool:  # b has joined and renewed its heartbeat twice, with nothing to do
            marker = b_dir / "crawl.db"
            name = str(json.loads(marker.read_bytes())["worker"]) if marker.exists() else None
            score = db.zscore(_meta(prefix, "alive"), name) if name else None
            if score is not None and score not in beats:
                beats.append(score)
            return len(beats) >= 3

        _wait(idle, "the second worker never became an idle member of the crawl")
        assert b.poll() is None
        b.send_signal(signum)
        try:
            b.wait(timeout=60)  # (before: it waited on, the seeder being stopped)
        except subprocess.TimeoutExpired:
            b.kill()
            pytest.fail("an idle worker ran on through the signal")
        assert "Traceback" not in _err(b)
    finally:
        a.send_signal(signal.SIGCONT)
    assert a.wait(timeout=300) == 0, _err(a)
    rows = _records(out)
    assert len(rows) == 200
    assert max(Counter(row["url"] for row in rows).values()) == 1


@pytest.mark.slow
def test_redis_lost_mid_crawl_is_one_line_a_worker_and_no_traceback(
    web: GeneratedWeb, replay: ReplayProcess, tmp_path: Path
) -> None:
    """redis-server killed under a running shared crawl: each worker says in one line
    which server it lost, the crawl says how to go on, no traceback (there were 13-15),
    and the exit status says it did not finish."""
    (tmp_path / "redis").mkdir()
    server = RedisServer(tmp_path / "redis")
    out = tmp_path / "run"
    try:
        cmd = [sys.executable, "-m", "focuscrawl", *_crawl(web, replay, server.url, out),
               "--workers", "2", "--max-pages", "2000"]  # fmt: skip
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env={**os.environ, "PYTHONPATH": os.getcwd()})  # fmt: skip
        _wait(lambda: len(_records(out)) >= 50 or proc.poll() is not None, "the crawl never got going")
        server.kill()
        said, err_bytes = proc.communicate(timeout=300)
        assert proc.returncode == 1
    finally:
        server.stop()
    # the crawl's line counts what the workers' files hold (it said "crawled 0 URLs": the
    # workers' run.json summaries were never written when their store failed)
    recorded = len(_records(out))
    assert f"crawled {recorded} URLs " in said.decode(), (said, recorded)
    for d in (out / "workers").iterdir():
        run = json.loads((d / "run.json").read_text())
        assert run["finished"] is False
    assert json.loads((out / "run.json").read_text())["finished"] is False
    err = err_bytes.decode()
    assert "Traceback" not in err, err
    lines = err.strip().splitlines()
    lost = [line for line in lines if f"frontier {server.url}:" in line]
    assert 1 <= len(lost) <= 2, lines  # one per worker that was talking to it
    assert lines[-1].endswith(f"continue with: focuscrawl crawl --out {out} --resume"), lines
    assert len(lines) == len(lost) + 1, lines


@pytest.mark.slow
def test_a_redis_paused_for_less_than_a_lease_stops_no_crawl(
    web: GeneratedWeb, replay: ReplayProcess, tmp_path: Path
) -> None:
    """``CLIENT PAUSE`` of 10 s (a stall shorter than the 30 s lease, longer than the
    Redis client's own 5 s default timeout) under a running shared crawl: the workers
    wait for Redis, and the crawl ends with its budget, every URL once (before: both
    workers stopped at 'Timeout reading from socket')."""
    (tmp_path / "redis").mkdir()
    server = RedisServer(tmp_path / "redis")
    out = tmp_path / "run"
    try:
        cmd = [sys.executable, "-m", "focuscrawl", *_crawl(web, replay, server.url, out),
               "--workers", "2", "--max-pages", "400"]  # fmt: skip
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                env={**os.environ, "PYTHONPATH": os.getcwd()})  # fmt: skip
        _wait(lambda: len(_records(out)) >= 50 or proc.poll() is not None, "the crawl never got going")
        redis.Redis.from_url(server.url).execute_command("CLIENT", "PAUSE", 10_000)
        assert proc.wait(timeout=300) == 0, _err(proc)
    finally:
        server.stop()
    rows = _records(out)
    assert len(rows) == 400
    assert max(Counter(row["url"] for row in rows).values()) == 1


@pytest.mark.slow
def test_a_shared_crawl_stopped_by_ctrl_c_exits_130_and_says_how_to_resume(
    web: GeneratedWeb, replay: ReplayProcess, redis_server: RedisServer, tmp_path: Path
) -> None:
    """Ctrl-C exits 130 for a shared crawl as for one process's (it was 1, a failure's)."""
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "focuscrawl", *_crawl(web, replay, redis_server.url, out),
           "--workers", "2", "--max-pages", "2000"]  # fmt: skip
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONPATH": os.getcwd()})  # fmt: skip
    try:
        _wait(lambda: len(_records(out)) >= 30 or proc.poll() is not None, "the crawl never got going")
        proc.send_signal(signal.SIGINT)  # the coordinator passes it on to its workers
        _, err_bytes = proc.communicate(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    err = err_bytes.decode()
    assert proc.returncode == 130, err
    assert "Traceback" not in err, err
    assert err.strip().splitlines()[-1].endswith(f"continue with: focuscrawl crawl --out {out} --resume"), err
    assert json.loads((out / "run.json").read_text())["finished"] is False


def test_a_refresh_of_a_shared_crawl_or_of_its_worker_says_what_it_is(
    web: GeneratedWeb, replay: ReplayProcess, redis_server: RedisServer, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    # both said "the crawl committed nothing; nothing to refresh" of a crawl of 20 pages
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "focuscrawl", *_crawl(web, replay, redis_server.url, out),
           "--workers", "2", "--max-pages", "20"]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, timeout=300, env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert done.returncode == 0, done.stderr
    assert len(_records(out)) == 20
    assert cli_main(["refresh", str(out), "--max-pages", "5"]) == 2
    err = capsys.readouterr().err
    assert err == (f"focuscrawl: refresh: {out} is a shared crawl's directory (2 workers): refresh "
                   "re-visits the pages of a crawl one process ran, not those of a shared crawl\n")  # fmt: skip
    worker = out / "workers" / "00"
    assert cli_main(["refresh", str(worker), "--max-pages", "5"]) == 2
    assert f"refresh: {worker} is the directory of a shared crawl's worker: " in capsys.readouterr().err
    assert len(_records(out)) == 20  # nothing visited again


def test_a_worker_given_the_runs_directory_writes_beside_the_crawls_own_workers(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """`focuscrawl worker --runs RUNS` (compose's workers, on the server's volume) puts its
    run directory at RUNS/NAME/workers/HOSTNAME, where the coordinator's summary and the
    server's counts, search and export read a shared crawl's workers; before (b46) a
    worker had only --out, and compose's wrote where nothing read them."""
    from focuscrawl.workers import worker_dirs
    from focuscrawl.workers.shared import joining_dir, publish_crawl

    db = f"{redis_server.url.rsplit('/', 1)[0]}/7"  # a database of its own: one crawl published
    redis.Redis.from_url(db).flushdb()
    runs = tmp_path / "runs"
    shared = prepare_shared(runs / "cats", ["http://a.example/"], workers=1,
                            overrides={"crawl": {"frontier": "redis", "frontier_url": db}})  # fmt: skip
    try:
        publish_crawl(db, shared.prefix, shared.run)
        assert joining_dir(runs, db, None, "w1") == runs / "cats" / "workers" / "w1"
        assert joining_dir(runs, db, shared.prefix, "w1") == runs / "cats" / "workers" / "w1"
        (runs / "cats" / "workers" / "w1").mkdir(parents=True)
        (runs / "cats" / "workers" / "w1" / "run.json").write_text("{}")
        assert worker_dirs(runs / "cats") == [runs / "cats" / "workers" / "w1"]
    finally:
        shared.lock.release()
        redis.Redis.from_url(db).flushdb()
