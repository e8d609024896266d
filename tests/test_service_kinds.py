"""``focuscrawl serve`` runs simulations over archives of its runs directory, and shared
crawls on its Redis with local workers (as ``focuscrawl crawl --workers N``)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from focuscrawl.replay.process import ReplayProcess
from focuscrawl.replay.sample import SAMPLE_SEEDS
from tests.redis_server import RedisServer, redis_server_fixture  # noqa: F401
from tests.service_client import Server

pytest.importorskip("jinja2")
pytest.importorskip("prometheus_client")


def test_a_simulation_over_an_archive_of_the_runs_directory(tmp_path: Path, sample_archive: Path) -> None:
    runs = tmp_path / "runs"
    (runs / "archives").mkdir(parents=True)
    shutil.copy(sample_archive, runs / "archives" / "sample.warc.gz")
    with Server(runs) as srv:
        body = {"name": "sim", "kind": "simulate", "seeds": list(SAMPLE_SEEDS),
                "archives": ["archives/sample.warc.gz"],
                "settings": {"crawl": {"strategy": "bfs", "max_pages": 20}}}  # fmt: skip
        status, answer = srv.call("POST", "/api/crawls", body)
        assert status == 201, answer
        srv.wait_state("sim", "finished")
        _, numbers = srv.call("GET", "/api/crawls/sim/numbers")
        assert numbers["urls"] == 20
        _, found = srv.call("GET", "/api/crawls/sim/search?q=cat")
        assert found["results"]


def test_a_shared_crawl_on_the_servers_redis(
    tmp_path: Path, sample_replay: ReplayProcess, redis_server: RedisServer
) -> None:
    runs = tmp_path / "runs"
    with Server(runs, "--redis", redis_server.url) as srv:
        body = {"name": "shared", "seeds": list(SAMPLE_SEEDS), "workers": 2,
                # a request cannot point a shared crawl at another Redis: the server's is used
                "settings": {"crawl": {"strategy": "bfs", "max_pages": 24,
                                       "frontier_url": "redis://10.0.0.1:6379/0"},
                             "fetch": {"proxy": sample_replay.proxy_url, "delay": 0.0}}}  # fmt: skip
        status, answer = srv.call("POST", "/api/crawls", body)
        assert status == 201, answer
        srv.wait_state("shared", "finished", timeout=180)
        _, numbers = srv.call("GET", "/api/crawls/shared/numbers")
        assert numbers["urls"] == 24
        assert len(list((runs / "shared" / "workers").iterdir())) == 2
        _, described = srv.call("GET", "/api/crawls/shared")
        assert described["spec"]["settings"]["crawl"]["frontier_url"] == redis_server.url
    with Server(tmp_path / "runs2") as plain:
        status, answer = plain.call("POST", "/api/crawls", {"name": "w", "seeds": ["http://a.org/"], "workers": 2})
        assert (status, answer["field"]) == (400, "workers")
