"""What tripped a new user at the command line (issue 41 item 6): an unknown option, a
description cut at "eq.", a seed file's bad line, `why` on a page no model judged, a
dashboard port taken, the progress bar at 80 columns."""

from __future__ import annotations

import json
import re
import socket
import time
from pathlib import Path

import pytest

from focuscrawl.cli import main
from focuscrawl.commands.progress import ProgressView
from focuscrawl.commands.why import why
from focuscrawl.replay.sample import SAMPLE_SEEDS
from focuscrawl.stats import CrawlStats
from focuscrawl.urls import read_url_lines

ANSI = re.compile(r"\x1b\[[0-9;?]*[a-zA-Z]")


@pytest.mark.parametrize(
    ("command", "typo", "nearest"),
    [
        pytest.param("crawl", "--max-page", "--max-pages", id="crawl-max-page"),
        pytest.param("simulate", "--dealy", "--delay", id="simulate-dealy"),
        pytest.param("dashboard", "--lables", "--labels", id="dashboard-lables"),
    ],
)
def test_an_unknown_option_gets_the_commands_usage_and_the_nearest_option(
    command: str, typo: str, nearest: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = {"crawl": ["--out", str(tmp_path)], "simulate": ["--out", str(tmp_path), "--archive", "x"],
            "dashboard": [str(tmp_path)]}[command]  # fmt: skip
    with pytest.raises(SystemExit) as exit_:
        main([command, *argv, typo, "5"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith(f"usage: focuscrawl {command} "), err
    assert f"focuscrawl {command}: error: unrecognized arguments: {typo} 5 (did you mean {nearest}?)" in err
    with pytest.raises(SystemExit):  # nothing near: no guess
        main([command, *argv, "--zzzzzz"])
    assert "did you mean" not in capsys.readouterr().err


def test_strategies_are_described_past_an_eq(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["strategies"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert not [line for line in lines if re.search(r"\b(eq|e\.g|cf)\.$", line)]
    otie = next(line for line in lines if line.split()[:2] == ["strategy", "otie"])
    assert "(eq. 8) split by similarity (eq. 6-7), best-N-first." in otie


def test_a_seed_files_bad_line_is_named_by_file_and_line(
    sample_archive: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    seeds = tmp_path / "seeds.txt"
    seeds.write_text(f"# the news\n{SAMPLE_SEEDS[0]}\n\nwww.example.com/page  # no scheme\n", encoding="utf-8")
    argv = ["simulate", "--archive", str(sample_archive), "--seeds", str(seeds), "--out", str(tmp_path / "run")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == f"focuscrawl: {seeds}, line 4: 'www.example.com/page' is not an http(s) URL " \
                  "(a seed file holds one URL a line, # comments)\n"  # fmt: skip
    assert not (tmp_path / "run").exists()


def test_a_url_file_saved_with_a_byte_order_mark(sample_archive: Path, tmp_path: Path) -> None:
    # Notepad's "UTF-8" starts the file with U+FEFF: the seed file was refused
    # ('\ufeffhttp://...' is not an http(s) URL) and a host list's first host never matched
    seeds = tmp_path / "seeds.txt"
    seeds.write_text(f"\ufeff{SAMPLE_SEEDS[0]}\n", encoding="utf-8")
    assert read_url_lines(seeds) == [SAMPLE_SEEDS[0]]
    argv = ["simulate", "--archive", str(sample_archive), "--seeds", str(seeds), "--out", str(tmp_path / "run"),
            "--max-pages", "2", "-q"]  # fmt: skip
    assert main(argv) == 0
    assert json.loads((tmp_path / "run" / "pages.jsonl").read_text(encoding="utf-8").splitlines()[0])["url"] == SAMPLE_SEEDS[0]


@pytest.mark.parametrize("model", [False, True], ids=["no-model", "keyword-model"])
def test_why_shows_a_relevance_only_for_a_judged_page(
    sample_archive: Path, tmp_path: Path, model: bool
) -> None:
    run = tmp_path / "run"
    argv = ["simulate", "--archive", str(sample_archive), "--seeds", *SAMPLE_SEEDS, "--out", str(run),
            "--max-pages", "6", "-q", "--strategy", "best-first" if model else "bfs"]  # fmt: skip
    if model:
        argv += ["--model", "keyword", "--model-param", 'keywords=["cat"]']
    assert main(argv) == 0
    text = why(run, SAMPLE_SEEDS[0])
    fetched = next(line for line in text.splitlines() if "fetched as #1" in line)
    if model:
        [column] = re.findall(r"^  relevance = (\S+)$", text, re.M)
        judged = re.search(r"relevance (\S+), gave", fetched)
        assert judged, text
        assert float(judged[1]) == float(column), text
    else:
        assert "relevance =" not in text, text
        assert "relevance None" not in text
        assert "not judged" in fetched


@pytest.mark.parametrize("url", ["", "ftp://x.example/", "mailto:a@b.example", "not a url"],
                         ids=["empty", "ftp", "mailto", "words"])  # fmt: skip
def test_why_on_a_url_that_is_no_http_url_is_a_one_line_error(
    sample_archive: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], url: str
) -> None:
    # before (b46): an empty explanation ("not in the crawl DB") and exit 0
    run = tmp_path / "run"
    assert main(["simulate", "--archive", str(sample_archive), "--seeds", *SAMPLE_SEEDS,
                 "--out", str(run), "--max-pages", "2", "-q"]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["why", str(run), url]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1
    assert "is not an http(s) URL" in err


def test_the_dashboard_says_its_port_is_taken_and_prints_no_url(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert main(["dashboard", str(tmp_path), "--port", str(port)]) == 2
    out, err = capsys.readouterr()
    assert out == ""  # no URL of a dashboard that is not there
    assert err == f"focuscrawl: dashboard: cannot listen on 127.0.0.1:{port}: Address already in use " \
                  "(another program listens there: --port another)\n"  # fmt: skip


@pytest.mark.parametrize("columns", [80, 100, 160])
def test_the_progress_bar_shows_its_numbers_at_80_columns(
    columns: int, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    stats = CrawlStats()
    stats.fetched, stats.elapsed_before, stats.started = 12345, 10.0, time.time()
    stats.queued, stats.relevant, stats.judged = 1234567, 3, 10
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("COLUMNS", str(columns))
    with ProgressView(enabled=True, max_pages=20000) as view:
        view.update(stats)
    lines = [ANSI.sub("", line) for line in re.split(r"[\r\n]", capsys.readouterr().err)]
    bar = next(line for line in lines if "12345" in line)
    assert len(bar.rstrip()) <= columns
    assert "…" not in bar
    for number in ("12345/20000", "URLs/s", "queue", "1,234,567", "harvest 0.300", "ETA"):
        assert number in bar, bar
