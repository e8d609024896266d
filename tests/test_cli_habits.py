"""The habits people bring from wget, curl and Scrapy (issue 26): -V, -q/-v everywhere,
no abbreviated options, JSON output, progress on stderr with an ETA, one-line errors
where a traceback used to be, and commands that do not silently keep stale state."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

import focuscrawl
from focuscrawl import crawl
from focuscrawl.cli import main
from focuscrawl.commands.progress import ProgressView
from focuscrawl.replay.process import ReplayProcess
from focuscrawl.replay.sample import SAMPLE_SEEDS
from focuscrawl.stats import CrawlStats


def test_dash_capital_v_prints_the_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["-V"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out == f"focuscrawl {focuscrawl.__version__}\n"


def _help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as exit_info:
        main([*argv, "--help"])
    assert exit_info.value.code == 0
    return capsys.readouterr().out


def _subcommands(help_text: str) -> list[str]:
    """The subcommands a --help lists (argparse's ``{a,b,c}``)."""
    match = re.search(r"\{([\w,-]+)\}", help_text)
    assert match is not None, help_text
    return match.group(1).split(",")


def test_every_command_takes_quiet_and_verbose(capsys: pytest.CaptureFixture[str]) -> None:
    commands = [[c] for c in _subcommands(_help([], capsys)) if c != "model"]
    models = _subcommands(_help(["model"], capsys))
    commands += [["model", c] for c in models]
    commands += [["model", "train", c] for c in _subcommands(_help(["model", "train"], capsys))]
    assert len(commands) > 20
    assert ["demo"] in commands
    assert ["model", "train", "keyword"] in commands
    for argv in commands:
        text = _help(argv, capsys)
        assert "-q, --quiet" in text, argv
        assert "-v, --verbose" in text, argv


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        pytest.param(["crawl", "--out", "r", "--seeds", "http://a.example/", "--max-page", "5"], "unrecognized arguments: --max-page", id="abbreviation"),
        pytest.param(["crawl", "--out", "r", "--seed", "http://a.example/"], "(--seed is the random seed; seed URLs go with --seeds)", id="seed-vs-seeds"),
        pytest.param(["model", "train", "keyword", "--keyword", "a", "--out", "m"], "the following arguments are required: --keywords", id="model-abbreviation"),
    ],
)
def test_no_abbreviations_and_a_hint_for_seed(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_strategies_as_json_with_whole_sentences(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["strategies", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    by_name = {(r["kind"], r["name"]): r for r in rows}
    assert by_name["strategy", "otie"]["params"]["a"] == 0.85
    language = by_name["filter", "language"]["description"]
    assert language.endswith("in a target language."), language  # not cut at the line's end
    assert all("``" not in r["description"] for r in rows)


def test_model_help_lists_every_command_in_plain_text(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["model", "--help"])
    text = capsys.readouterr().out
    listing = text.split("positional arguments:", 1)[1]
    for command in ("train", "score", "eval", "generate-terms", "idf", "learn-comment-keywords", "perplexity"):
        line = next(x for x in listing.splitlines() if x.strip().startswith(command))
        assert len(line.split()) > 1 or command == "learn-comment-keywords", command  # a help text
    assert "``" not in text


def test_max_pages_says_it_counts_urls(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["crawl", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--max-pages URLS URLs to fetch, every URL taken counting" in text


def test_crawl_summary_as_json_and_the_python_api_reports_progress(
    sample_archive: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["simulate", "--archive", str(sample_archive), "--seeds", *SAMPLE_SEEDS, "--max-pages", "6"]
    assert main([*argv, "--out", str(tmp_path / "a"), "--json", "-q"]) == 0
    out = capsys.readouterr().out
    summary = json.loads(out)  # one JSON object, nothing else on stdout
    assert (summary["fetched"], summary["interrupted"], summary["out"]) == (6, False, str(tmp_path / "a"))
    seen: list[int] = []
    stats = crawl(list(SAMPLE_SEEDS), tmp_path / "b", archives=[sample_archive], max_pages=6,
                  progress=lambda s: seen.append(s.fetched))  # fmt: skip
    assert stats.fetched == 6
    assert seen
    assert seen[-1] == 6
    assert seen == sorted(seen)


def test_progress_lines_show_an_eta_and_the_summary_why_urls_were_skipped(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    stats = CrawlStats()
    stats.fetched, stats.elapsed_before, stats.started = 50, 10.0, time.time()
    stats.counters.update(skipped_robots=2259, skipped_proxy=612)
    with monkeypatch.context() as patch:  # 10 s exactly: no time passes on a loaded machine
        patch.setattr(CrawlStats, "elapsed", property(lambda _: 10.0))
        line = ProgressView(enabled=False, max_pages=200).progress_line(stats)
    assert line.endswith(", ETA 30s"), line  # 150 URLs left at 5 URLs/s
    summary = ProgressView.summary_line(stats, Path("runs/ja"))
    assert "; not fetched: robots 2,259, proxy 612 -> runs/ja" in summary
    with monkeypatch.context() as patch:  # the bar on a terminal
        patch.setenv("FORCE_COLOR", "1")
        patch.setenv("COLUMNS", "160")
        with ProgressView(enabled=True, max_pages=200) as view:
            view.update(stats)
    bar = capsys.readouterr().err
    assert " 50/200" in bar
    assert re.search(r"ETA \S* ?(-:--:--|\d+:\d\d:\d\d)", bar), bar


def test_model_train_refuses_a_non_empty_out_without_force(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "m"
    out.mkdir()
    (out / "notes.txt").write_text("mine\n", encoding="utf-8")
    train = ["model", "train", "keyword", "--keywords", "cat,dog", "--out", str(out)]
    assert main(train) == 2
    assert "not empty; use --force" in capsys.readouterr().err
    assert main([*train, "--force"]) == 2  # not a saved model: never cleared
    assert (out / "notes.txt").exists()
    (out / "notes.txt").unlink()
    assert main(train) == 0
    (out / "classifier.pkl").write_bytes(b"an older model's")  # left by an earlier training
    assert main(train) == 2
    assert main([*train, "--force"]) == 0
    assert not (out / "classifier.pkl").exists()
    assert json.loads((out / "model.json").read_text())["model"] == "keyword"


@pytest.mark.parametrize(
    ("model_json", "message"),
    [
        pytest.param('{"threshold": 0.5}', 'model.json: no "model"', id="no-model-key"),
        pytest.param(None, "no such directory (a saved model is made with", id="no-such-directory"),
    ],
)
def test_a_bad_model_directory_is_one_line(
    model_json: str | None, message: str, sample_archive: Path, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    model = tmp_path / "models" / "course"
    if model_json is not None:
        model.mkdir(parents=True)
        (model / "model.json").write_text(model_json, encoding="utf-8")
    argv = ["simulate", "--archive", str(sample_archive), "--seeds", *SAMPLE_SEEDS, "--out",
            str(tmp_path / "run"), "--model", str(model), "-q"]  # fmt: skip
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1, err


def test_control_of_a_finished_crawl_and_an_unanswered_request(
    sample_archive: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    argv = ["simulate", "--archive", str(sample_archive), "--seeds", *SAMPLE_SEEDS, "--out", str(run),
            "--max-pages", "4", "-q"]  # fmt: skip
    assert main(argv) == 0
    capsys.readouterr()
    assert main(["control", str(run), "high=80"]) == 2
    assert "has finished" in capsys.readouterr().err
    assert not (run / "control.json").exists()
    # a crawl that is not running: the request is withdrawn, not left for a later --resume
    info = json.loads((run / "run.json").read_text())
    (run / "run.json").write_text(json.dumps({**info, "finished": False}))
    assert main(["control", str(run), "high=80", "--timeout", "0.2"]) == 1
    assert "withdrawn" in capsys.readouterr().err
    assert not (run / "control.json").exists()


@pytest.mark.parametrize(
    "proxy",
    ["http://127.0.0.1:99999", "http://127.0.0.1:port", "http://[::1", "http://127.0.0.1:-1"],
    ids=["port-out-of-range", "port-not-a-number", "bracket-unclosed", "negative-port"],
)
def test_a_malformed_proxy_is_a_config_error(
    proxy: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the port out of range used to end the crawl at 0 URLs with "robots.txt disallows
    # it", the unclosed bracket with a traceback from the transport
    run = tmp_path / "run"
    argv = ["crawl", "--seeds", "http://a.example/", "--out", str(run), "--proxy", proxy, "-q"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("focuscrawl: config: fetch.proxy ")
    assert err.count("\n") == 1, err
    assert not (run / "pages.jsonl").exists()


@pytest.mark.parametrize("variable", ["FOCUSCRAWL_FECTH__DELAY", "FOCUSCRAWL_MODEL__NAME"], ids=["typo", "model"])
def test_an_environment_variable_of_no_section_is_a_config_error(
    variable: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # the config file's unknown section is an error; the environment's was ignored, so a
    # crawl meant to run without delay ran at the default 1 s a host, and said nothing
    monkeypatch.setenv(variable, "0")
    run = tmp_path / "run"
    argv = ["crawl", "--seeds", "http://a.example/", "--out", str(run), "-q"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"focuscrawl: config: environment variable {variable}: no section "), err
    assert "the sections: " in err
    assert err.count("\n") == 1, err
    assert not (run / "pages.jsonl").exists()


@pytest.mark.slow  # two crawls, the first waiting out its failed connections
def test_a_resume_retries_a_crawl_that_reached_no_host(
    sample_replay: ReplayProcess, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A wrong --proxy used up the seeds as failures; --resume with the right one crawls."""
    run = tmp_path / "run"
    argv = ["crawl", "--seeds", *SAMPLE_SEEDS, "--out", str(run), "--delay", "0", "--max-pages", "5", "-q"]
    assert main([*argv, "--proxy", "http://127.0.0.1:9"]) == 1  # nobody listens there
    err = capsys.readouterr().err
    assert "no page could be fetched: connect (1): no connection (is --proxy right?" in err
    assert "--resume tries them again" in err
    assert main(["crawl", "--out", str(run), "--resume", "--proxy", sample_replay.proxy_url, "-q"]) == 0
    assert json.loads((run / "run.json").read_text())["summary"]["fetched"] == 5


def test_experiment_progress_goes_to_stderr(
    sample_archive: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``focuscrawl experiment EXP > results.txt``: the file gets the results only."""
    exp = tmp_path / "cats.toml"
    labels = sample_archive.with_name("sample.labels.jsonl")
    exp.write_text(
        f'name = "cats"\narchives = ["{sample_archive}"]\nlabels = "{labels}"\nbudget = 8\ncheckpoints = 2\n'
        f'[[topic]]\nname = "cats"\nrelevant = ["relevant=true"]\nseeds = {json.dumps(list(SAMPLE_SEEDS))}\n'
        '[[strategy]]\nlabel = "BFS"\nstrategy = "bfs"\n',
        encoding="utf-8",
    )
    assert main(["experiment", str(exp), "--out", str(tmp_path / "out")]) == 0
    out, err = capsys.readouterr()
    assert "cats: BFS / cats / r0" in err  # the bar, where a terminal shows it
    assert "cats: BFS / cats / r0" not in out
    assert "results.json" in out


def test_replay_of_a_generated_web_says_where_to_start() -> None:
    cmd = [sys.executable, "-m", "focuscrawl", "replay", "--generated", "500", "--hosts", "5", "--seed", "1", "--port", "0"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert proc.stdout is not None
        lines = [proc.stdout.readline() for _ in range(3)]
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    seeds = lines[2].rsplit("): ", 1)[1].split()
    assert lines[2].startswith("replay: seed URLs")
    assert len(seeds) == 3
    assert all(s.startswith("http://") and s.endswith("/") for s in seeds)


@pytest.mark.parametrize(
    ("command", "message"),
    [
        pytest.param(["eval", "{run}", "--labels", "{bin}", "--relevant", "a=b"], "not a label file (not UTF-8 text)", id="eval-labels"),
        pytest.param(["dashboard", "{run}", "--labels", "{bin}", "--relevant", "a=b"], "not a label file (not UTF-8 text)", id="dashboard-labels"),
        pytest.param(["experiment", "{bin}"], "not an experiment file (not UTF-8 text)", id="experiment-file"),
    ],
)
def test_binary_files_are_one_line(
    command: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    binary = tmp_path / "random.bin"
    binary.write_bytes(bytes(range(128, 256)) * 8)
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "pages.jsonl").write_text("", encoding="utf-8")
    argv = [a.replace("{run}", str(tmp_path / "run")).replace("{bin}", str(binary)) for a in command]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1, err


def test_a_crawl_db_error_anywhere_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """sqlite3 errors the crawl DB's own checks do not turn into a message (a disk that
    is still full on --resume, a page of the file damaged) end as one line, exit 1."""
    import sqlite3

    import focuscrawl.api

    def full(*args: object, **kwargs: object) -> None:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(focuscrawl.api, "open_crawl", full)
    run = tmp_path / "run"
    assert main(["crawl", "--out", str(run), "--seeds", "http://a.example/", "-q"]) == 1
    err = capsys.readouterr().err
    assert err == f"focuscrawl: the crawl DB failed in {run / 'crawl.db'}: database or disk is full\n"
