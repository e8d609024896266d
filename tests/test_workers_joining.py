"""Which shared crawl a worker joins when none is named (brief b50): the only one
published, or of several the only one being crawled; a standby worker (``--wait``, as
compose.yaml's) waits for one, saying so once, instead of exiting 2 to be restarted
in a loop."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis

from focuscrawl.cli import main as cli_main
from focuscrawl.exceptions import ConfigError
from focuscrawl.workers import prepare_shared, publish_crawl
from focuscrawl.workers.frontier import WorkerFrontier
from focuscrawl.workers.shared import NoCrawlToJoin, chosen_crawl
from tests.redis_server import RedisServer, redis_server_fixture  # noqa: F401


def _database(redis_server: RedisServer) -> str:
    """A database of the session's server that no other test publishes in, emptied."""
    url = redis_server.url.rsplit("/", 1)[0] + "/7"
    redis.Redis.from_url(url).flushdb()
    return url


def _published(url: str, out: Path) -> str:
    overrides = {"crawl": {"strategy": "bfs", "frontier": "redis", "frontier_url": url}}
    shared = prepare_shared(out, ["http://a.invalid/"], workers=1, overrides=overrides)
    shared.lock.release()
    publish_crawl(shared.frontier_url, shared.prefix, shared.run)
    return shared.prefix


def test_a_worker_joins_the_only_crawl_being_crawled_or_says_why_not(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    url = _database(redis_server)
    with pytest.raises(NoCrawlToJoin, match="no shared crawl is published there"):
        chosen_crawl(url, None)
    ended = _published(url, tmp_path / "ended")
    assert chosen_crawl(url, None) == ended  # the only one published
    with pytest.raises(
        NoCrawlToJoin, match=r"no shared crawl is being crawled there \(1 published"
    ):
        chosen_crawl(url, None, running=True)  # a standby worker does not join an ended one
    running = _published(url, tmp_path / "running")
    with pytest.raises(ConfigError, match=r"2 shared crawls .*, none being crawled: name one"):
        chosen_crawl(url, None)
    worker = WorkerFrontier(url, prefix=running, worker="w1", lease_seconds=30)  # (alive)
    try:
        assert chosen_crawl(url, None) == running  # it said '2 shared crawls: name one'
        assert chosen_crawl(url, None, running=True) == running
        with pytest.raises(NoCrawlToJoin, match=r"being crawled there \(2 published"):
            chosen_crawl(url, None, running=True, skip={running})  # joined already
        assert chosen_crawl(url, ended) == ended  # named: that one
    finally:
        worker.budget.alive(0)
        worker.close()


def test_a_worker_given_runs_and_no_crawl_published_says_so(
    redis_server: RedisServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = _database(redis_server)
    assert cli_main(["worker", "--frontier", url, "--runs", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"focuscrawl: {url}: no shared crawl is published there (one starts with "
                   "focuscrawl crawl --frontier URL --workers N ...)"]  # fmt: skip
    # (it said "0 shared crawls (): name one with --crawl", and compose restarted it)


def test_a_standby_worker_waits_for_a_crawl_says_so_once_and_joins_it(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    url = _database(redis_server)
    runs = tmp_path / "runs"
    cmd = [sys.executable, "-m", "focuscrawl", "worker", "--frontier", url, "--runs", str(runs),
           "--wait", "--lease-seconds", "5"]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    standby = subprocess.Popen(cmd, stderr=subprocess.PIPE, env=env)
    assert standby.stderr is not None
    try:
        line = standby.stderr.readline().decode()
        assert "no shared crawl is published there" in line
        assert line.rstrip().endswith("waiting for one (Ctrl-C to stop)")
        assert standby.poll() is None  # waiting, not exited (compose restarted it)
        prefix = _published(url, runs / "shared")
        seeder = WorkerFrontier(url, prefix=prefix, worker="seeder", lease_seconds=30)
        try:  # (the crawl is being crawled: a worker of it alive)
            marker = runs / "shared" / "workers" / socket.gethostname() / "crawl.db"
            deadline = time.monotonic() + 120  # only a hang's bound
            while not marker.exists():
                assert standby.poll() is None, standby.stderr.read().decode()
                assert time.monotonic() < deadline, "the standby worker never joined"
                time.sleep(0.05)
            assert prefix in marker.read_text()
        finally:
            seeder.budget.alive(0)
            seeder.close()
    finally:
        standby.send_signal(signal.SIGTERM)
        standby.wait(timeout=60)
    rest = standby.stderr.read().decode()
    assert "waiting for one" not in rest  # said once
    assert "Traceback" not in rest


def test_a_worker_whose_directory_another_took_meanwhile_leaves_it_as_it_is(
    redis_server: RedisServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two workers started on one new ``--out``: the first takes the directory's lock,
    writes its marker, crawls and ends between the second's look at the directory and
    its lock. The second must not take the directory for a new worker of its own (its
    marker over the first's, a fresh start over the first's files), but say so."""
    from focuscrawl.frontier.factory import write_marker
    from focuscrawl.output.lock import RunLock
    from focuscrawl.workers.worker import open_worker

    url = _database(redis_server)
    crawl = _published(url, tmp_path / "run")
    out = tmp_path / "w"
    out.mkdir()
    marker = out / "crawl.db"
    acquire = RunLock.acquire

    def the_other_worker_ran_first(self: RunLock) -> RunLock:  # its whole run, lock released
        if not marker.exists():
            write_marker(marker, crawl, worker="first")
            (out / "pages.jsonl").write_text('{"url": "http://a.invalid/"}\n')
        return acquire(self)

    monkeypatch.setattr(RunLock, "acquire", the_other_worker_ran_first)
    with pytest.raises(ConfigError, match="another worker started in it meanwhile"):
        open_worker(url, out, crawl=crawl)
    assert '"worker": "first"' in marker.read_text()
    assert (out / "pages.jsonl").read_text() == '{"url": "http://a.invalid/"}\n'
