"""``DELETE /api/crawls/NAME``: an ended crawl removed with what the server kept of it,
a running one refused, nothing outside the runs directory touched."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from focuscrawl.replay.process import ReplayProcess
from focuscrawl.replay.sample import SAMPLE_SEEDS
from tests.service_client import Server, wait_for

pytest.importorskip("jinja2")
pytest.importorskip("prometheus_client")


def _slow_crawl(name: str, replay: ReplayProcess) -> dict[str, Any]:
    return {
        "name": name, "seeds": list(SAMPLE_SEEDS),
        "settings": {
            "crawl": {"strategy": "bfs", "max_pages": 40},
            "fetch": {"proxy": replay.proxy_url, "delay": 0.3},  # slow enough to be caught running
        },
    }  # fmt: skip


def _lines(path: Path) -> int:
    try:
        return sum(1 for line in path.read_bytes().splitlines() if json.loads(line))
    except (OSError, ValueError):
        return 0


def test_a_crawl_is_deleted_once_ended_with_its_files_and_nothing_outside(
    tmp_path: Path, sample_replay: ReplayProcess
) -> None:
    # before (c49): no DELETE (405): a crawl and its files stayed until someone removed
    # them by hand, and its name stayed taken
    runs = tmp_path / "runs"
    outside = tmp_path / "keep"
    outside.mkdir()
    (outside / "mine.txt").write_text("not the crawl's")
    with Server(runs) as srv:
        assert srv.call("POST", "/api/crawls", _slow_crawl("slow", sample_replay))[0] == 201
        run = runs / "slow"
        wait_for(lambda: _lines(run / "pages.jsonl") >= 2, what="pages")
        status, said = srv.call("DELETE", "/api/crawls/slow")
        assert status == 409, said
        assert said["error"] == "crawl 'slow' is running: stop it first, then delete it"
        assert (run / "pages.jsonl").is_file()
        assert srv.call("POST", "/api/crawls/slow/stop", {"now": True})[0] == 200
        srv.wait_state("slow", "stopped")
        (run / "link").symlink_to(outside)  # a link out of the runs directory
        status, said = srv.call("DELETE", "/api/crawls/slow")
        assert status == 200, said
        assert said["deleted"] == "slow"
        assert said["removed"] == [".service/slow", "slow"]
        assert said["files"] >= 5
        assert said["bytes"] > 0
        assert not run.exists()
        assert not (runs / ".service" / "slow").exists()
        assert [p.name for p in (runs / ".deleted").iterdir()] == []
        assert (outside / "mine.txt").read_text() == "not the crawl's"
        assert srv.call("GET", "/api/crawls/slow")[0] == 404
        assert srv.call("DELETE", "/api/crawls/slow")[0] == 404
        assert srv.call("GET", "/api/crawls")[1] == {"crawls": []}
        assert srv.call("GET", "/metrics")[0] == 200  # the crawl is in no figure any more
        # the name is free again
        assert srv.call("POST", "/api/crawls", _slow_crawl("slow", sample_replay))[0] == 201
        assert srv.call("POST", "/api/crawls/slow/stop", {"now": True})[0] == 200
        srv.wait_state("slow", "stopped")
