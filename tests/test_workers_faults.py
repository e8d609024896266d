"""A shared crawl's faults on a real redis-server (issue 40): its options checked
before any worker starts, a resumed crawl's new budget honoured, Redis lost or back
empty said in one line, garbage under the crawl's keys refused, signals obeyed by an
idle worker, a worker joining early or late adding capacity."""

from __future__ import annotations

import json
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from focuscrawl.cli import main as cli_main
from focuscrawl.exceptions import ConfigError, FrontierError
from focuscrawl.frontier.redis_store import RedisFrontier
from focuscrawl.replay.generated import GeneratedWeb
from focuscrawl.replay.process import ReplayProcess
from focuscrawl.workers import prepare_shared
from tests.redis_server import RedisServer, redis_server_fixture  # noqa: F401

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
