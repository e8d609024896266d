"""The numbers a crawl prints are the ones the dashboard shows (issue 41 item 5): the
URLs/s of the summary line (run.json's own figure, not one the dashboard derives from
pages.jsonl), "no model" for a crawl without one (not a harvest rate of 0.000), and one
summary line for a one-machine crawl and a crawl shared by workers."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from focuscrawl.cli import main
from focuscrawl.commands.dashboard import tails_for
from focuscrawl.dashboard import RunTail, render_fragment
from focuscrawl.replay.process import ReplayProcess
from focuscrawl.replay.sample import SAMPLE_SEEDS
from tests.redis_server import RedisServer, redis_server_fixture  # noqa: F401
from tests.stopping import killed_uncommitted, resume

# the one summary line: ".. by N workers" for a shared crawl
LINE = re.compile(
    r"^crawled \d+ URLs \(\d+ pages, \d+ errors\)( by \d+ workers)? in \d+\.\d s, "
    r"(?P<rate>\d+\.\d) URLs/s, \d+ queued(, harvest rate \d\.\d{3} \(\d+/\d+\))?"
    r"(; not fetched: [^>]+)? -> \S+$"
)


def _crawl(argv: list[str], capsys: pytest.CaptureFixture[str]) -> re.Match[str]:
    capsys.readouterr()
    assert main(argv) == 0
    line = capsys.readouterr().out.strip()
    match = LINE.match(line)
    assert match, line
    return match


def _dashboard(run: Path) -> tuple[dict[str, object], str]:
    [tail] = tails_for([run], None, [])
    tail.update()
    return tail.snapshot(), render_fragment([tail])


@pytest.mark.parametrize("model", [True, False], ids=["keyword-model", "no-model"])
def test_the_dashboard_shows_the_crawls_own_rate_and_no_model_as_such(
    sample_archive: Path, tmp_path: Path, model: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    argv = ["simulate", "--archive", str(sample_archive), "--seeds", *SAMPLE_SEEDS, "--out", str(run),
            "--max-pages", "30", "--strategy", "best-first" if model else "bfs", "-q"]  # fmt: skip
    if model:
        argv += ["--model", "keyword", "--model-param", 'keywords=["cat"]']
    printed = _crawl(argv, capsys)["rate"]
    snap, page = _dashboard(run)
    assert f"{snap['urls_per_s']:.1f}" == printed
    assert snap["urls_per_s_from"] == "run.json"
    assert f"<td>{printed}</td>" in page
    if model:
        assert snap["harvest_model"] is not None
        assert "no model" not in page
    else:
        assert snap["harvest_model"] is None
        assert '<td class="muted">no model</td>' in page
        assert "0.000" not in page
        assert "Harvest rate by the crawl's model" not in page


@pytest.mark.slow
def test_a_shared_crawl_ends_with_the_one_machine_crawls_line(
    sample_replay: ReplayProcess, redis_server: RedisServer, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    base = ["crawl", "--seeds", *SAMPLE_SEEDS, "--proxy", sample_replay.proxy_url, "--delay", "0",
            "--max-pages", "20", "--strategy", "bfs", "-q"]  # fmt: skip
    alone = _crawl([*base, "--out", str(tmp_path / "alone")], capsys)
    assert alone.group(1) is None
    shared = _crawl([*base, "--out", str(tmp_path / "shared"), "--frontier", redis_server.url,
                     "--workers", "2"], capsys)  # fmt: skip
    assert shared.group(1) == " by 2 workers"
    snap, _ = _dashboard(tmp_path / "shared")
    assert f"{snap['urls_per_s']:.1f}" == shared["rate"]


def test_a_killed_crawls_totals_are_its_last_commits_and_never_fall_back(
    sample_replay: ReplayProcess, tmp_path: Path
) -> None:
    # before (c49): the dashboard (and /metrics, which reads it) counted the lines a crawl
    # killed with SIGKILL wrote after its last commit: ahead of run.json's summary, then
    # back (to Prometheus a counter reset) when its resume cut them and fetched again
    run = tmp_path / "killed"
    env = killed_uncommitted(run, sample_replay.proxy_url, list(SAMPLE_SEEDS))
    tail = RunTail(run)
    tail.update()
    summary = json.loads((run / "run.json").read_text())["summary"]
    snap = tail.snapshot()
    assert (snap["urls"], snap["pages"]) == (summary["fetched"], summary["pages"]) == (0, 0)
    resume(run, env)
    tail.update()
    summary = json.loads((run / "run.json").read_text())["summary"]
    snap = tail.snapshot()
    assert (snap["urls"], snap["pages"]) == (summary["fetched"], summary["pages"])
    assert snap["urls"] == 30
