"""``focuscrawl serve`` runs simulations over archives of its runs directory, and shared
crawls on its Redis with local workers (as ``focuscrawl crawl --workers N``)."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from focuscrawl.frontier.redis.namespace import PARTITIONS
from focuscrawl.replay.process import ReplayProcess
from focuscrawl.replay.sample import SAMPLE_SEEDS
from tests.redis_server import RedisServer, redis_server_fixture  # noqa: F401
from tests.service_client import Server, wait_for

pytest.importorskip("jinja2")
pytest.importorskip("prometheus_client")


def _samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    from prometheus_client.parser import text_string_to_metric_families

    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) for s in family.samples}  # fmt: skip


def _worker_page_urls(run: Path) -> list[str]:
    return [json.loads(line)["url"] for path in sorted(run.glob("workers/*/pages.jsonl"))
            for line in path.read_text(encoding="utf-8").splitlines()]  # fmt: skip


def _indexed(runs: Path, name: str) -> list[str]:
    conn = sqlite3.connect(runs / ".service" / name / "search.db")
    try:
        return [row[0] for row in conn.execute("SELECT url FROM pages ORDER BY id")]
    finally:
        conn.close()


def _leases(srv: Server) -> dict[str, float] | None:
    """Worker -> partitions it leases in crawl ``shared``, once two workers hold some."""
    found = {dict(labels)["worker"]: value
             for (name, labels), value in _samples(srv.call("GET", "/metrics")[1]).items()
             if name == "focuscrawl_worker_leases" and dict(labels)["crawl"] == "shared"}  # fmt: skip
    return found if len(found) == 2 and all(found.values()) else None


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
                             # slow enough to be scraped while its workers hold leases
                             "fetch": {"proxy": sample_replay.proxy_url, "delay": 0.3}}}  # fmt: skip
        status, answer = srv.call("POST", "/api/crawls", body)
        assert status == 201, answer
        leases = wait_for(lambda: _leases(srv), timeout=180, what="two workers holding leases")
        assert len(leases) == 2
        assert all(n > 0 for n in leases.values())
        assert sum(leases.values()) <= PARTITIONS
        srv.wait_state("shared", "finished", timeout=180)
        metrics = _samples(srv.call("GET", "/metrics")[1])
        # the workers' fetches in one histogram: every URL of the budget was asked
        assert metrics[("focuscrawl_fetch_latency_seconds_count", (("crawl", "shared"),))] == 24
        assert metrics[("focuscrawl_in_flight_urls", (("crawl", "shared"),))] == 0
        # search over the workers' pages: one index over every worker's directory
        urls = _worker_page_urls(runs / "shared")
        assert len(urls) == 24
        _, found = srv.call("GET", "/api/crawls/shared/search?q=the%20OR%20news%20OR%20cat&limit=200")
        assert found["results"], found
        assert {r["url"] for r in found["results"]} <= set(urls)
        assert sorted(_indexed(runs, "shared")) == sorted(urls)  # each page once
        _, numbers = srv.call("GET", "/api/crawls/shared/numbers")
        assert numbers["urls"] == 24
        assert len(list((runs / "shared" / "workers").iterdir())) == 2
        _, described = srv.call("GET", "/api/crawls/shared")
        assert described["spec"]["settings"]["crawl"]["frontier_url"] == redis_server.url
    with Server(tmp_path / "runs2") as plain:
        status, answer = plain.call("POST", "/api/crawls", {"name": "w", "seeds": ["http://a.org/"], "workers": 2})
        assert (status, answer["field"]) == (400, "workers")


def _experiment(archive: str, **more: Any) -> dict[str, Any]:
    return {"name": "exp", "kind": "experiment", "experiment": {
        "archives": [archive], "labels": "archives/sample.labels.jsonl", "budget": 8, "checkpoints": 2,
        "topic": [{"name": "cats", "relevant": ["relevant=true"], "seeds": list(SAMPLE_SEEDS)}],
        "strategy": [{"strategy": "bfs"}, {"label": "best", "strategy": "best-first",
                                           "model": {"name": "keyword", "keywords": ["cat"]}}],
        **more}}  # fmt: skip


BAD_EXPERIMENTS = [
    ("archive-outside", {"archives": ["../../etc/passwd"]}, 403, "experiment.archives[0]"),
    ("labels-outside", {"labels": "/etc/passwd"}, 403, "experiment.labels"),
    ("output", {"output": "/tmp/elsewhere"}, 400, "experiment.output"),
    ("strategy", {"strategy": [{"strategy": "nope"}]}, 400, "experiment.strategy[0].strategy"),
    ("no-topic", {"topic": []}, 400, "experiment"),
    ("unknown-key", {"colour": "red"}, 400, "experiment"),
    ("budget", {"budget": -1}, 400, "experiment.budget"),
    ("setting", {"crawl": {"fetch_list_size": -5}}, 400, "experiment.crawl.fetch_list_size"),
    ("unknown-setting", {"fetch": {"speed": 1}}, 400, "experiment.fetch.speed"),
]  # fmt: skip


def test_an_experiment_from_the_server(tmp_path: Path, sample_archive: Path) -> None:
    from focuscrawl.replay.sample import labels_path_for

    runs = tmp_path / "runs"
    (runs / "archives").mkdir(parents=True)
    shutil.copy(sample_archive, runs / "archives" / "sample.warc.gz")
    shutil.copy(labels_path_for(sample_archive), runs / "archives" / "sample.labels.jsonl")
    with Server(runs) as srv:
        for case, change, status, field in BAD_EXPERIMENTS:
            body = _experiment("archives/sample.warc.gz")
            body["experiment"].update(change)
            got, answer = srv.call("POST", "/api/crawls", body)
            assert (got, answer.get("field")) == (status, field), (case, answer)
            assert "\n" not in answer["error"]
        got, answer = srv.call("POST", "/api/crawls", {**_experiment("archives/sample.warc.gz"), "seeds": ["http://a.org/"]})
        assert (got, answer["field"]) == (400, "seeds")
        assert sorted(p.name for p in runs.iterdir()) == [".service", "archives"]  # nothing started
        status, answer = srv.call("POST", "/api/crawls", _experiment("archives/sample.warc.gz"))
        assert status == 201, answer
        assert answer["kind"] == "experiment"
        srv.wait_state("exp", "finished", timeout=300)
        results = json.loads((runs / "exp" / "results.json").read_text())
        assert sorted(r["label"] for r in results["runs"]) == ["best", "bfs"]
        assert all(r["fetched"] == 8 for r in results["runs"])
        assert (runs / "exp" / "report.html").is_file()
        status, answer = srv.call("POST", "/api/crawls/exp/stop", {})
        assert status == 409


def test_an_experiment_outlives_a_server_killed_and_is_found_again(tmp_path: Path, sample_archive: Path) -> None:
    """The server follows an experiment by the PID it started it as: a server started
    again finds it still running (and starts no second one), then sees it finish."""
    from focuscrawl.replay.sample import labels_path_for

    runs = tmp_path / "runs"
    (runs / "archives").mkdir(parents=True)
    shutil.copy(sample_archive, runs / "archives" / "sample.warc.gz")
    shutil.copy(labels_path_for(sample_archive), runs / "archives" / "sample.labels.jsonl")
    body = _experiment("archives/sample.warc.gz", budget=20, mode="live", fetch={"delay": 0.3})
    srv = Server(runs).start()
    try:
        assert srv.call("POST", "/api/crawls", body)[0] == 201
        pid = srv.call("GET", "/api/crawls/exp")[1]["pid"]
        assert srv.state("exp") == "running"
    finally:
        srv.stop("kill")
    with Server(runs) as again:
        described = again.call("GET", "/api/crawls/exp")[1]
        assert (described["state"], described["pid"]) == ("running", pid)  # found, not started again
        again.wait_state("exp", "finished", timeout=300)
    results = json.loads((runs / "exp" / "results.json").read_text())
    assert all(r["fetched"] == 20 for r in results["runs"])
    assert (runs / ".service" / "exp" / "crawl.log").read_text().count("--- start") == 1
