"""A resume keeps what makes the crawl the crawl it was (issue 41 item 3): another
strategy, model, schedule or live/simulated is refused with one line naming what
differs, and nothing is touched; ``--force`` goes on and run.json records the crawl as
two segments; the budget, the delay and the concurrency may change. And a resume of a
finished crawl says so, and how to crawl more (item 4), instead of the old summary."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from focuscrawl.cli import main
from focuscrawl.exceptions import ConfigError
from focuscrawl.replay.sample import SAMPLE_SEEDS
from focuscrawl.workers import prepare_shared
from tests.redis_server import RedisServer, redis_server_fixture  # noqa: F401

FILES = ("run.json", "pages.jsonl", "corpus.warc.gz", "crawl.db")
MODEL = ["--model", "keyword", "--model-param", 'keywords=["cat"]']


def _simulate(archive: Path, run: Path, *extra: str) -> list[str]:
    return ["simulate", "--archive", str(archive), "--out", str(run), "-q", *extra]


def _digests(run: Path) -> dict[str, str]:
    return {name: hashlib.sha256((run / name).read_bytes()).hexdigest() for name in FILES}


def _run_json(run: Path) -> dict[str, object]:
    loaded: dict[str, object] = json.loads((run / "run.json").read_text(encoding="utf-8"))
    return loaded


@pytest.fixture
def best_first_run(sample_archive: Path, tmp_path: Path) -> Path:
    run = tmp_path / "run"
    argv = _simulate(sample_archive, run, "--seeds", *SAMPLE_SEEDS, "--strategy", "best-first", *MODEL,
                     "--max-pages", "6")  # fmt: skip
    assert main(argv) == 0
    return run


@pytest.mark.parametrize(
    ("command", "extra", "message"),
    [
        pytest.param("simulate", ["--strategy", "bfs"], "strategy (best-first -> bfs)", id="strategy"),
        pytest.param("simulate", ["--model", "keyword", "--model-param", 'keywords=["dog"]'],
                     'model ({"keywords": ["cat"], "name": "keyword"} -> {"keywords": ["dog"], "name": "keyword"})',
                     id="model"),
        pytest.param("simulate", ["--schedule", "as-completed"], "schedule (ordered -> as-completed)", id="schedule"),
        pytest.param("crawl", [], "schedule (ordered -> as-completed), live/simulated (simulated -> live)",
                     id="live"),
    ],
)
def test_a_resume_that_would_change_the_crawl_is_refused_in_one_line(
    best_first_run: Path, sample_archive: Path, command: str, extra: list[str], message: str,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    before = _digests(best_first_run)
    capsys.readouterr()
    head = _simulate(sample_archive, best_first_run) if command == "simulate" else \
        ["crawl", "--out", str(best_first_run), "-q"]  # fmt: skip
    assert main([*head, "--resume", "--max-pages", "12", *extra]) == 2
    err = capsys.readouterr().err
    assert f"--resume would change the crawl's {message}; " in err, err
    assert "--force" in err
    assert err.count("\n") == 1, err
    assert _digests(best_first_run) == before


def test_the_budget_delay_and_concurrency_may_change(
    best_first_run: Path, sample_archive: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _simulate(sample_archive, best_first_run, "--resume", "--max-pages", "12", "--delay", "0.5",
                     "--concurrency", "3", "--strategy", "best-first", "--schedule", "ordered")  # fmt: skip
    assert main(argv) == 0, capsys.readouterr().err
    run = _run_json(best_first_run)
    assert run["summary"]["fetched"] == 12  # type: ignore[index]
    assert run["settings"]["fetch"]["concurrency"] == 3  # type: ignore[index]
    assert "segments" not in run


def test_force_goes_on_as_a_second_segment(
    best_first_run: Path, sample_archive: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = _simulate(sample_archive, best_first_run, "--resume", "--max-pages", "12", "--strategy", "bfs")
    assert main([*argv, "--force"]) == 0, capsys.readouterr().err
    run = _run_json(best_first_run)
    assert run["strategy"] == "bfs"
    model = {"name": "keyword", "keywords": ["cat"]}
    assert run["segments"] == [
        {"from_urls": 0, "strategy": "best-first", "model": model, "schedule": "ordered",
         "live/simulated": "simulated"},
        {"from_urls": 6, "strategy": "bfs", "model": model, "schedule": "ordered",
         "live/simulated": "simulated", "forced": ["strategy (best-first -> bfs)"]},
    ]  # fmt: skip
    # the forced settings are the crawl's from now on: a plain resume keeps them and the segments
    assert main(_simulate(sample_archive, best_first_run, "--resume", "--max-pages", "18")) == 0
    again = _run_json(best_first_run)
    assert again["segments"] == run["segments"]
    assert again["summary"]["fetched"] == 18  # type: ignore[index]


def test_the_api_refuses_too_unless_forced(best_first_run: Path, sample_archive: Path) -> None:
    from focuscrawl import ConfigError, crawl

    with pytest.raises(ConfigError, match=r"strategy \(best-first -> opic\).*force=True in Python"):
        crawl([], best_first_run, resume=True, strategy="opic", max_pages=9, archives=[sample_archive])
    stats = crawl([], best_first_run, resume=True, strategy="opic", max_pages=9,
                  archives=[sample_archive], force=True)  # fmt: skip
    assert stats.fetched == 9


def test_resuming_a_finished_crawl_says_so_and_how_to_crawl_more(
    best_first_run: Path, sample_archive: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(_simulate(sample_archive, best_first_run, "--resume")) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1, out
    assert not out.startswith("crawled"), out  # not the old summary, as if it had crawled
    assert "the crawl was finished already (6 URLs fetched, " in out
    assert "its budget of 6 URLs was spent; nothing crawled now" in out
    assert f"--out {best_first_run} --resume --max-pages 12" in out
    # as it says: a budget above 6 crawls more
    assert main(_simulate(sample_archive, best_first_run, "--resume", "--max-pages", "12")) == 0
    assert capsys.readouterr().out.startswith("crawled 12 URLs")


def test_resuming_a_crawl_that_took_every_url_says_nothing_is_left(
    sample_archive: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    assert main(_simulate(sample_archive, run, "--seeds", *SAMPLE_SEEDS, "--max-pages", "0")) == 0
    capsys.readouterr()
    assert main(_simulate(sample_archive, run, "--resume", "--max-pages", "0", "--json")) == 0
    assert json.loads(capsys.readouterr().out)["finished_before"] is True
    assert main(_simulate(sample_archive, run, "--resume")) == 0
    out = capsys.readouterr().out
    assert "the crawl was finished already" in out
    assert "nothing was left in its queue" in out


def test_a_shared_crawls_resume_refuses_another_strategy_too(redis_server: RedisServer, tmp_path: Path) -> None:
    """A shared crawl's workers read the settings it published: another strategy given on
    its resume was silently ignored; it is refused in one line."""
    out = tmp_path / "shared"
    overrides = {"crawl": {"frontier": "redis", "frontier_url": redis_server.url, "strategy": "bfs"}}
    prepare_shared(out, list(SAMPLE_SEEDS), workers=2, overrides=overrides).lock.release()
    with pytest.raises(ConfigError, match=r"would change the shared crawl's strategy \(bfs -> opic\)"):
        prepare_shared(out, [], workers=None, resume=True, overrides={"crawl": {"strategy": "opic"}})
    again = prepare_shared(out, [], workers=None, resume=True, overrides={"crawl": {"max_pages": 50}})
    again.lock.release()


def test_force_without_resume_is_refused(sample_archive: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = _simulate(sample_archive, tmp_path / "run", "--seeds", *SAMPLE_SEEDS, "--force")
    assert main(argv) == 2
    assert capsys.readouterr().err.startswith("focuscrawl: --force goes with --resume")
    assert not (tmp_path / "run").exists()
