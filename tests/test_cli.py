"""The command line: exit codes, one-line errors, graceful stop."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import focuscrawl
from focuscrawl.cli import main
from focuscrawl.replay.process import ReplayProcess
from focuscrawl.replay.requestlog import read_log
from focuscrawl.replay.sample import SAMPLE_SEEDS
from focuscrawl.settings import CrawlSettings, FetchSettings, ScopeSettings

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(["crawl", "--out", "{tmp}/r", "--seeds", "not-a-url-or-file"], "neither a URL", id="bad-seed"),
        pytest.param(["crawl", "--out", "{tmp}/r", "--seeds", "http://a.example/", "--strategy", "nope"], "unknown strategy", id="bad-strategy"),
        pytest.param(["crawl", "--out", "{tmp}/r", "--seeds", "http://a.example/", "--config", "{tmp}/missing.toml"], "no such file", id="missing-config"),
        pytest.param(["crawl", "--out", "{tmp}/r", "--seeds", "http://a.example/", "--config", "{tmp}/bad.toml"], "bad TOML", id="bad-toml"),
        pytest.param(["crawl", "--out", "{tmp}/r", "--seeds", "http://a.example/", "--config", "{tmp}/unknown.toml"], "config: unknown parameter 'fetch.dealy' (known: ", id="unknown-key"),
        pytest.param(["crawl", "--out", "{tmp}/r", "--seeds", "http://a.example/", "--config", "{tmp}/badtype.toml"], "fetch.delay", id="bad-type"),
        pytest.param(["crawl", "--out", "{tmp}/r", "--config", "{tmp}/seedstring.toml"], "seeds must be a list of URLs (seeds = [\"https://...\"]), not 'http://a.example/'", id="seeds-a-string"),
        pytest.param(["crawl", "--out", "{tmp}/r", "--seeds", "http://a.example/", "--strategy", "best-first"], "needs a relevance model", id="needs-model"),
        pytest.param(["crawl", "--out", "{tmp}/r", "--resume"], "nothing to resume", id="nothing-to-resume"),
        pytest.param(["crawl", "--out", "{tmp}/r", "--seeds", "http://a.example/", "--delay", "-1"], "must be >= 0", id="negative-delay"),
        pytest.param(["crawl", "--out", "{tmp}/r", "--seeds", "http://a.example/", "--delay", "inf"], "fetch.delay = inf must be a finite number", id="infinite-delay"),
        pytest.param(["crawl", "--out", "{tmp}/r", "--seeds", "http://a.example/", "--delay", "nan"], "fetch.delay = nan must be a finite number", id="nan-delay"),
        pytest.param(["crawl", "--out", "{tmp}/r", "--seeds", "http://a.example/", "--strategy", "otie", "--model", "keyword", "--model-param", "keywords=[\"cat\"]", "--strategy-param", "d=2"], "x^d an odd function", id="otie-even-d"),
        pytest.param(["crawl", "--out", "{tmp}/r", "--seeds", "http://a.example/", "--strategy", "opic", "--strategy-param", "virtul_page=false"], "unknown parameter 'virtul_page' (known: virtual_page)", id="unknown-strategy-param"),
    ],
)
def test_bad_usage_exits_2_with_one_line(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "bad.toml").write_text("[fetch\ndelay = ", encoding="utf-8")
    (tmp_path / "unknown.toml").write_text("[fetch]\ndealy = 1\n", encoding="utf-8")
    (tmp_path / "badtype.toml").write_text('[fetch]\ndelay = "slow"\n', encoding="utf-8")
    (tmp_path / "seedstring.toml").write_text('seeds = "http://a.example/"\n', encoding="utf-8")  # was seed 'h'
    code = main([a.replace("{tmp}", str(tmp_path)) for a in argv])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err
    assert err.count("\n") == 1, err


@pytest.mark.slow  # a crawl stopped by SIGINT in a fresh interpreter
def test_crawl_command_and_sigint_stops_gracefully(sample_replay: ReplayProcess, tmp_path: Path) -> None:
    out = tmp_path / "run"
    cmd = [
        sys.executable, "-m", "focuscrawl", "crawl", "--seeds", *SAMPLE_SEEDS, "--out", str(out),
        "--proxy", sample_replay.proxy_url, "--delay", "0.5", "--max-pages", "100", "--quiet",
    ]  # fmt: skip
    assert sample_replay.log_path is not None
    logged = len(read_log(sample_replay.log_path))
    proc = subprocess.Popen(cmd, env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE, text=True)
    # SIGINT once the replay server has answered 5 requests of this crawl (robots.txt
    # and pages): an event, not a fixed time that a loaded machine may not have reached
    deadline = time.monotonic() + 120
    while len(read_log(sample_replay.log_path)) < logged + 5:
        assert proc.poll() is None, "the crawl ended before it was interrupted"
        assert time.monotonic() < deadline, "no request reached the replay server in 120 s"
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    stdout, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130  # interrupted: not a finished crawl (issue 9 item 12)
    assert stdout.startswith("crawled ")
    run = json.loads((out / "run.json").read_text())
    assert run["finished"] is False
    assert run["stopped_early"] is True
    pages = [json.loads(line) for line in (out / "pages.jsonl").read_text().splitlines()]
    assert 0 < len(pages) < 100
    assert run["summary"]["fetched"] == len(pages)


def test_strategies_lists_builtins(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["strategies"]) == 0
    out = capsys.readouterr().out
    for name in ("bfs", "best-first", "keyword", "cosine", "perplexity"):
        assert name in out


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out == f"focuscrawl {focuscrawl.__version__}\n"


def test_help_shows_the_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["crawl", "--help"])
    text = " ".join(capsys.readouterr().out.split())  # argparse wraps lines
    text = text.split("options:", 1)[1]  # after the usage lines
    fetch, crawl_settings, scope = FetchSettings(), CrawlSettings(), ScopeSettings()
    for option, value in [
        ("--delay", fetch.delay), ("--concurrency", fetch.concurrency), ("--per-host", fetch.per_host),
        ("--max-pages", crawl_settings.max_pages), ("--strategy", crawl_settings.strategy),
        ("--max-depth", scope.max_depth), ("--log-every", 60.0),
    ]:  # fmt: skip
        help_text = text.split(f"{option} ", 1)[1]
        assert f"(default: {value})" in help_text.split(" --", 1)[0], option


def test_the_bar_follows_the_counts_and_rich_comes_with_it_only(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a terminal the bar (rich, imported with it: a quiet or piped crawl does not
    import it) counts the fetched URLs of the budget; a fresh interpreter that runs a
    command but shows no bar imports neither rich nor the replay server's TLS."""
    from focuscrawl.commands.progress import ProgressView
    from focuscrawl.stats import CrawlStats

    stats = CrawlStats()
    stats.fetched = 7
    monkeypatch.setenv("FORCE_COLOR", "1")  # stderr is taken for a terminal
    monkeypatch.setenv("COLUMNS", "160")
    with ProgressView(enabled=True, max_pages=12) as view:
        view.update(stats)
    assert " 7/12" in capsys.readouterr().err  # the bar's last state, as it was drawn
    probe = (  # the parser of every command is built; the crawl's modules are imported
        "import sys, contextlib; import focuscrawl.api; from focuscrawl.cli import main\n"
        "with contextlib.suppress(SystemExit): main(['--version'])\n"
        "print(sorted(m for m in ('rich', 'cryptography', 'focuscrawl.replay.server') "
        "if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_progress_lines_when_stderr_is_not_a_terminal(
    sample_replay: ReplayProcess, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # under capsys stderr is no terminal, as in a log file: lines instead of a bar
    argv = ["crawl", "--seeds", *SAMPLE_SEEDS, "--out", str(tmp_path / "run"), "--proxy",
            sample_replay.proxy_url, "--delay", "0", "--max-pages", "12", "--log-every", "0.000001"]  # fmt: skip
    assert main(argv) == 0
    lines = [x for x in capsys.readouterr().err.splitlines() if "URLs fetched" in x]
    assert lines
    fetched = [int(re.match(r"focuscrawl: (\d+)/12 URLs fetched \(\d+ pages, \d+ errors\), ", x).group(1))  # type: ignore[union-attr]
               for x in lines]  # fmt: skip
    assert fetched == sorted(fetched)
    assert fetched[-1] <= 12
    # --quiet: none
    assert main([*argv[:4], str(tmp_path / "quiet"), *argv[5:], "--quiet"]) == 0
    assert "URLs fetched" not in capsys.readouterr().err
