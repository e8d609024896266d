"""A shared crawl does not trust what Redis says (issue 40): a forged dead worker's
journal cuts no directory but that worker's own, a stalled worker leaves nothing of
its fenced tail behind and asks no host it lost, a model is loaded only from files the
worker's own command line vouches for, a worker of another protocol is refused, and
the Redis password stays out of argv, files, stderr and the published run."""

from __future__ import annotations

import json
import os
import shutil
import socket
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from focuscrawl.cli import main as cli_main
from focuscrawl.frontier.factory import write_marker
from focuscrawl.frontier.redis_outbox import journal_key
from focuscrawl.frontier.redis_worker import WorkerFrontier
from focuscrawl.replay.generated import GeneratedWeb
from focuscrawl.replay.process import ReplayProcess
from focuscrawl.workers.handover import retire_dead
from tests.redis_server import RedisServer, redis_server_fixture  # noqa: F401

PAGES, HOSTS, SEED = 4000, 40, 11


@pytest.fixture(scope="module")
def web() -> GeneratedWeb:
    return GeneratedWeb(PAGES, HOSTS, SEED)


@pytest.fixture
def replay(tmp_path: Path) -> Iterator[ReplayProcess]:
    args = ["--generated", str(PAGES), "--hosts", str(HOSTS), "--seed", str(SEED)]
    with ReplayProcess([], log_path=tmp_path / "requests.tsv", faults_args=args) as server:
        yield server


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.getcwd()}


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines()) if path.exists() else 0


def _records(run_dir: Path) -> list[dict[str, Any]]:
    rows = []
    for path in sorted((run_dir / "workers").glob("*/pages.jsonl")):
        rows += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return rows


def _tree(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes()
            for p in sorted(directory.rglob("*")) if p.is_file()}  # fmt: skip


def _forge_dead_worker(url: str, prefix: str, name: str, run_dir: Path, state: dict[str, Any]) -> None:
    """What anyone who can write the crawl's keys can make: a worker ``name`` known to
    the crawl, its heartbeat long gone, its journal naming this machine and ``run_dir``."""
    db = redis.Redis.from_url(url)
    try:
        db.sadd(f"{prefix}:{{{prefix}:m}}:workers", name)
        db.hset(journal_key(prefix, name), mapping={
            "seq": 1, "host": socket.gethostname(), "dir": str(run_dir),
            "engine": json.dumps(state),
        })  # fmt: skip
    finally:
        db.close()


@pytest.mark.parametrize(
    "whose",
    ["one-process-crawl", "another-shared-crawl", "another-worker", "that-worker"],
)
def test_a_forged_dead_worker_cuts_back_only_its_own_directory(
    whose: str,
    web: GeneratedWeb,
    replay: ReplayProcess,
    redis_server: RedisServer,
    tmp_path: Path,
) -> None:
    """A dead worker's journal (in Redis) names a directory: the worker that retires it
    cuts that directory's files back only if its marker names this crawl and that
    worker; another crawl's finished directory stays byte for byte as it was."""
    finished = tmp_path / "finished"
    args = ["crawl", "--seeds", *web.home_urls(4), "--proxy", replay.proxy_url,
            "--out", str(finished), "--max-pages", "40", "--delay", "0", "--quiet"]  # fmt: skip
    assert cli_main(args) == 0
    prefix = f"t{uuid.uuid4().hex[:10]}"
    victim = finished
    if whose != "one-process-crawl":
        victim = tmp_path / "victim"
        shutil.copytree(finished, victim, ignore=shutil.ignore_patterns("crawl.db*", "run.lock"))
        crawl, worker = {
            "another-shared-crawl": ("fc:0123456789ab", "ghost"),
            "another-worker": (prefix, "someone-else"),
            "that-worker": (prefix, "ghost"),
        }[whose]
        write_marker(victim / "crawl.db", crawl, worker=worker)
    before = _tree(victim)
    first_line = len((victim / "pages.jsonl").read_bytes().split(b"\n", 1)[0]) + 1
    _forge_dead_worker(redis_server.url, prefix, "ghost", victim, {"pages_offset": first_line})
    live = WorkerFrontier(redis_server.url, prefix=prefix, worker="live", lease_seconds=30)
    try:
        retire_dead(live)
        assert live.counters["workers_retired"] == 1
        if whose == "that-worker":  # its own directory: cut back to its last commit
            assert _lines(victim / "pages.jsonl") == 1
            assert live.counters["dead_workers_cut_back"] == 1
        else:
            assert _tree(victim) == before
            assert live.counters["dead_workers_cut_back"] == 0
    finally:
        live.drop()
        live.close()
