"""Run directories at their edges (issue 26 item 7): each case says what to do, or does
not happen."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from focuscrawl.cli import main
from focuscrawl.replay.sample import SAMPLE_SEEDS


def _simulate(archive: Path, out: Path, *extra: str) -> list[str]:
    return ["simulate", "--archive", str(archive), "--out", str(out), "--max-pages", "6", "-q", *extra]


def test_a_resume_without_run_json_says_to_restore_it(
    sample_archive: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    assert main(_simulate(sample_archive, run, "--seeds", *SAMPLE_SEEDS)) == 0
    (run / "run.json").unlink()
    capsys.readouterr()
    assert main(_simulate(sample_archive, run, "--resume")) == 2
    err = capsys.readouterr().err
    assert "run.json is missing, though crawl.db holds a crawl; restore run.json" in err
    assert err.count("\n") == 1, err


def test_a_failed_start_leaves_nothing_to_resume(
    sample_archive: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / "pages.jsonl").write_text(json.dumps({"url": "http://someone.else/"}) + "\n", encoding="utf-8")
    assert main(_simulate(sample_archive, run, "--seeds", *SAMPLE_SEEDS)) == 2
    assert "pages.jsonl holds records" in capsys.readouterr().err
    assert sorted(p.name for p in run.iterdir() if p.name != "run.lock") == ["pages.jsonl"]
    shutil.move(run / "pages.jsonl", tmp_path / "theirs.jsonl")
    # the next attempt is a new crawl, not "use --resume" for a crawl that never ran
    assert main(_simulate(sample_archive, run, "--seeds", *SAMPLE_SEEDS)) == 0


def test_a_new_crawl_does_not_write_among_other_files(
    sample_archive: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "documents"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine\n", encoding="utf-8")
    assert main(_simulate(sample_archive, folder, "--seeds", *SAMPLE_SEEDS)) == 2
    err = capsys.readouterr().err
    assert "holds files that are not a crawl's (notes.txt); a new crawl needs an empty or new --out" in err
    assert sorted(p.name for p in folder.iterdir()) == ["notes.txt"]


def test_the_api_speaks_to_python_callers_too(sample_archive: Path, tmp_path: Path) -> None:
    from focuscrawl import crawl
    from focuscrawl.exceptions import ConfigError

    run = tmp_path / "run"
    crawl(list(SAMPLE_SEEDS), run, archives=[sample_archive], max_pages=3)
    with pytest.raises(ConfigError, match=r"resume=True in Python"):
        crawl(list(SAMPLE_SEEDS), run, archives=[sample_archive], max_pages=3)
    (run / "run.json").unlink()
    with pytest.raises(ConfigError, match=r"run\.json is missing, though crawl\.db holds a crawl"):
        crawl([], run, archives=[sample_archive], resume=True)


async def test_a_resume_through_another_proxy_retries_what_never_reached_its_host(tmp_path: Path) -> None:
    """The first proxy reaches a.example only: b.example's robots.txt gets 502 and its page
    is skipped ("proxy"); resumed through a proxy that reaches both, b.example is fetched."""
    from focuscrawl.api import crawl_async
    from tests.sites import html, serve, serve_proxy

    routes = {"/": html('<a href="http://b.example/">b</a> <a href="/x">x</a>'), "/x": html("x")}
    run = tmp_path / "run"
    fetch = {"delay": 0.0, "retries": 0}
    async with serve(routes) as origin:
        async with serve_proxy({"a.example": origin}) as narrow:
            first = await crawl_async(run, ["http://a.example/"], overrides={"fetch": {**fetch, "proxy": narrow.url("")}})
        assert first.counters["skipped_proxy"] == 1
        async with serve_proxy({"a.example": origin, "b.example": origin}) as wide:
            await crawl_async(run, [], resume=True, overrides={"fetch": {"proxy": wide.url("")}})
    urls = [json.loads(line)["url"] for line in (run / "pages.jsonl").read_text().splitlines()]
    assert sorted(urls) == ["http://a.example/", "http://a.example/x", "http://b.example/", "http://b.example/x"]
