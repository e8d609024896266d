"""The experiment runner end to end on a tiny experiment, topic sets, and the report in a real browser."""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from focuscrawl.cli import main
from focuscrawl.evaluation.topics import TopicSetSpec, build_topics, split_topic
from focuscrawl.exceptions import ConfigError

TESTWEB = Path(__file__).resolve().parents[2] / "shared" / "testweb"
WIKI = TESTWEB / "wikispeedia.warc.gz"
needs_web = pytest.mark.skipif(not WIKI.exists(), reason="shared test web absent")

TINY = f"""
name = "tiny"
title = "tiny experiment"
archives = ["{WIKI}"]
labels = "{TESTWEB / 'wikispeedia.labels.jsonl'}"
budget = 30
checkpoints = 3
compare = ["target_recall", "harvest_rate"]
answer = true
thresholds = [0.3, 0.6]
[crawl]
fetch_list_size = 10
[topics]
include = ["subject.Science.Biology.Mammals", "subject.Science.Biology.Birds"]
n_topics = 2
n_seeds = 3
max_pos = 8
max_neg = 16
min_pages = 12
[[strategy]]
label = "BFS"
strategy = "bfs"
[[strategy]]
label = "best-first"
strategy = "best-first"
model = "topic"
"""


def test_split_topic_is_disjoint_and_seeded() -> None:
    spec = TopicSetSpec(labels="l", archive="a", n_seeds=2, max_pos=3, max_neg=2, min_pages=6)
    members = [f"m{i}" for i in range(8)]
    others = [f"o{i}" for i in range(5)]
    t = split_topic("s.X.Y", members, others, spec, random.Random(1))
    assert (len(t.seeds), len(t.train_pos), len(t.targets), len(t.train_neg)) == (2, 3, 3, 2)
    assert sorted(t.seeds + t.train_pos + t.targets) == sorted(members)
    assert set(t.train_neg) <= set(others)
    assert t.relevant == ["categories^=s.X.Y"]
    assert t.name == "X.Y"
    again = split_topic("s.X.Y", list(reversed(members)), others, spec, random.Random(1))
    assert again == t  # the draw depends on the seed, not on the order of the label file


def test_build_topics_picks_specific_categories() -> None:
    labels = {f"a{i}": {"categories": ["s.A.B"]} for i in range(10)}
    labels |= {f"c{i}": {"categories": ["s.C"]} for i in range(9)}
    labels |= {f"d{i}": {"categories": ["s.D"]} for i in range(3)}
    spec = TopicSetSpec(labels="l", archive="a", n_topics=2, n_seeds=2, max_pos=4, max_neg=3,
                        min_pages=7, max_pages=10)  # fmt: skip
    # s.A (10) is an ancestor of s.A.B (10): the specific one is kept; s.D is too small
    assert [t.category for t in build_topics(spec, labels)] == ["s.A.B", "s.C"]
    with pytest.raises(ConfigError, match="only 2 categories"):
        build_topics(TopicSetSpec(**{**spec.__dict__, "n_topics": 3}), labels)
    with pytest.raises(ConfigError, match="min_pages"):
        TopicSetSpec(labels="l", archive="a", n_seeds=10, max_pos=75, min_pages=50)


def test_experiment_file_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\nbudjet = 3\n')
    assert main(["experiment", str(bad)]) == 2
    assert "unknown keys budjet" in capsys.readouterr().err
    bad.write_text(f'archives = ["{tmp_path / "none.warc.gz"}"]\n[[strategy]]\nstrategy = "bfs"\n')
    assert main(["experiment", str(bad)]) == 2
    assert "not found" in capsys.readouterr().err


def _refused_in_one_line(bad: Path, said: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The experiment file ``bad`` ends with exit 2 and one line holding ``said``, before
    anything is written to its output folder (``out`` beside it)."""
    out = bad.parent / "out"
    assert main(["experiment", str(bad), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert said in err
    assert err.count("\n") == 1, err
    assert not out.exists()


@pytest.mark.parametrize(
    ("top", "topic", "said"),
    [
        pytest.param('repetitions = "two"', "", "repetitions must be a whole number, not 'two'", id="repetitions-a-string"),
        pytest.param("budget = 0", "", "budget = 0 must be >= 1", id="budget-zero"),
        pytest.param('thresholds = ["high"]', "", "thresholds must be numbers, not ['high']", id="thresholds-strings"),
        pytest.param("", 'seeds = "http://a.example/"', "[[topic]] #1: seeds must be a list (seeds = [...]), not 'http://a.example/'", id="seeds-a-string"),
        pytest.param("", 'relevant = "type=course"', "[[topic]] #1: relevant must be a list", id="relevant-a-string"),
        # before (b44): a TypeError traceback ('int' object is not iterable), a string read
        # as true, or a label or topic name that leads out of the output folder
        pytest.param('topics = 3', "", "topics must be a table (topics = {...} or [topics]), not 3", id="topics-not-a-table"),
        pytest.param('web = 3', "", "web must be a table", id="web-not-a-table"),
        pytest.param('perplexity = 3', "", "perplexity must be a table", id="perplexity-not-a-table"),
        pytest.param('answer = "no"', "", "answer must be true or false, not 'no'", id="answer-a-string"),
        pytest.param('output = 3', "", "output must be a string, not 3", id="output-a-number"),
        pytest.param('compare = ["harvest_ratee"]', "", "compare: no metric 'harvest_ratee' (metrics: ", id="compare-unknown-metric"),
        pytest.param("", "strategy_params = { bfs = 3 }", "[[topic]] #1: strategy_params must be tables by strategy", id="topic-params-not-tables"),
        pytest.param("", 'targets_file = "none.txt"', "[[topic]] #1: targets_file 'none.txt': No such file or directory", id="targets-file-absent"),
        pytest.param("", 'name = "../../elsewhere"', "[[topic]] #1: name must be a name (the folder of its runs), not '../../elsewhere'", id="topic-name-a-path"),
    ],
)
def test_experiment_values_of_the_wrong_type_are_one_line(
    top: str, topic: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # before: a traceback (int('two')), or seeds read letter by letter ("seed 'h' is not an
    # http(s) URL") once the crawls had started
    (tmp_path / "a.warc.gz").write_bytes(b"")
    fields = {"name": '"t"', "seeds": '["http://a.example/"]', "relevant": '["type=course"]'}
    for line in filter(None, [topic]):
        key, _, value = line.partition(" = ")
        fields[key] = value
    bad = tmp_path / "bad.toml"
    bad.write_text(
        f'archives = ["a.warc.gz"]\n{top}\n[[topic]]\n'
        + "".join(f"{k} = {v}\n" for k, v in fields.items())
        + '[[strategy]]\nstrategy = "bfs"\n'
    )
    _refused_in_one_line(bad, said, capsys)


@pytest.mark.parametrize(
    ("strategy", "said"),
    [
        pytest.param('strategy = "bestfirst"\nmodel = "keyword"', "[[strategy]] #2: unknown strategy 'bestfirst' (known: ", id="strategy-name"),
        pytest.param('strategy = "opic"\nparams = { virtul_page = false }', "[[strategy]] #2: strategy 'opic': unknown parameter 'virtul_page' (known: virtual_page)", id="strategy-parameter"),
        pytest.param('strategy = "best-first"\nmodel = "keywrd"', "[[strategy]] #2: unknown model 'keywrd' (known: ", id="model-name"),
        # before (b44): the model's table, the [crawl] settings and the filters of a
        # strategy were checked only at its turn, after the crawls listed before it
        pytest.param('strategy = "best-first"\nmodel = { name = "keyword", keywords = ["a"], treshold = 0.3 }', "[[strategy]] #2: keyword model: unknown parameter 'treshold' (known: keywords, threshold)", id="model-parameter"),
        pytest.param('strategy = "best-first"\nmodel = { name = "keyword", keywords = ["a"], threshold = "high" }', "[[strategy]] #2: keyword model: threshold must be a number, not 'high'", id="model-parameter-type"),
        pytest.param('strategy = "best-first"\nmodel = { path = "no-model" }', "[[strategy]] #2: ", id="saved-model-absent"),
        pytest.param('strategy = "best-first"\nmodel = { name = "keyword", topic = "no-topic.toml" }', "[[strategy]] #2: ", id="topic-file-absent"),
        pytest.param('strategy = "bfs"\ncrawl = { max_pagez = 3 }', "[[strategy]] #2: config: unknown parameter 'crawl.max_pagez'", id="crawl-setting"),
        pytest.param('strategy = "bfs"\ncrawl = { concurrency = "many" }', "[[strategy]] #2: config: fetch.concurrency must be an integer, not 'many'", id="crawl-setting-type"),
        pytest.param('strategy = "bfs"\ncrawl = { delay = 0.5 }', "[[strategy]] #2: crawl: delay is not a [crawl] setting here ([fetch] delay)", id="crawl-delay"),
        pytest.param('strategy = "bfs"\ncrawl = { strategy_params = { x = 1 } }', "[[strategy]] #2: strategy 'bfs': unknown parameter 'x'", id="crawl-strategy-params"),
        pytest.param('strategy = "bfs"\nfilters = [{ name = "language", targt = "ja" }]', "[[strategy]] #2: filter 'language': unknown parameter 'targt' (known: rule, target)", id="filter-parameter"),
    ],
)
def test_a_typo_in_a_later_strategy_fails_before_any_crawl(
    strategy: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # before: the crawls of the strategies listed first ran (hours, in a real experiment),
    # then the experiment ended at the typo's turn
    (tmp_path / "a.warc.gz").write_bytes(b"")
    bad = tmp_path / "bad.toml"
    bad.write_text(
        'archives = ["a.warc.gz"]\n[[topic]]\nname = "t"\nseeds = ["http://a.example/"]\n'
        f'relevant = ["type=course"]\n[[strategy]]\nstrategy = "bfs"\n[[strategy]]\nlabel = "b"\n{strategy}\n'
    )
    _refused_in_one_line(bad, said, capsys)


@pytest.mark.parametrize(
    ("line", "said"),
    [
        pytest.param("include = 3", "[topics]: include must be a list (tuple[str, ...]), not 3", id="include-a-number"),
        pytest.param('seed = "x"', "[topics]: seed must be an integer, not 'x'", id="seed-a-string"),
        pytest.param('n_topics = "ten"', "[topics]: n_topics must be an integer, not 'ten'", id="n-topics-a-string"),
        pytest.param("model = 5", "[topics]: model must be a string, not 5", id="model-a-number"),
        pytest.param("nosuch = 1", "[topics]: unknown parameter 'nosuch' (known: ", id="unknown-key"),
        pytest.param('labels = "other.jsonl"', "[topics]: labels is the experiment's own", id="labels-overridden-silently"),
    ],
)
def test_a_topics_table_of_the_wrong_shape_is_one_line(
    line: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # before (b44): TypeError tracebacks (include = 3, seed = "x"), "'<' not supported
    # between instances of 'str' and 'int'", a model = 5 taken as the algorithm "5", and
    # a labels key silently replaced by the experiment's
    (tmp_path / "a.warc.gz").write_bytes(b"")
    (tmp_path / "l.jsonl").write_text("")
    bad = tmp_path / "bad.toml"
    bad.write_text(f'archives = ["a.warc.gz"]\nlabels = "l.jsonl"\n[topics]\n{line}\n[[strategy]]\nstrategy = "bfs"\n')
    _refused_in_one_line(bad, said, capsys)


def test_a_topics_include_of_one_category_is_that_category(tmp_path: Path) -> None:
    # before (b44): include = "s.A.B" was read letter by letter ("no page has categories s, ., A")
    from focuscrawl.evaluation.experiment_file import load_experiment

    (tmp_path / "a.warc.gz").write_bytes(b"")
    path = tmp_path / "e.toml"
    path.write_text('archives = ["a.warc.gz"]\nlabels = "l.jsonl"\n[topics]\ninclude = "s.A.B"\n'
                    '[[strategy]]\nstrategy = "bfs"\n')  # fmt: skip
    spec = load_experiment(path).topic_spec
    assert spec is not None
    assert spec.include == ("s.A.B",)


@pytest.mark.parametrize(
    ("strategies", "said"),
    [
        pytest.param("strategy = []", "no strategy to run (give at least one [[strategy]])", id="none"),
        pytest.param('[[strategy]]\nlabel = "a/b"\nstrategy = "bfs"', "[[strategy]] #1: label must be a name (the folder of its runs), not 'a/b'", id="label-a-path"),
        pytest.param('[[strategy]]\nstrategy = "bfs"\ntopics = ["cuorse"]', "strategy 'bfs': no topic 'cuorse' (topics: course)", id="unknown-topic"),
    ],
)
def test_an_experiment_that_would_crawl_nothing_or_elsewhere_is_refused(
    strategies: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # before (b44): no strategy, or a strategy limited to a misspelt topic, ran nothing and
    # reported empty tables with exit 0; a label "a/b" put its runs in a folder of label "a"
    (tmp_path / "a.warc.gz").write_bytes(b"")
    bad = tmp_path / "bad.toml"
    bad.write_text(f'archives = ["a.warc.gz"]\n{strategies.split(chr(10))[0] if strategies.startswith("strategy") else ""}\n'
                   '[[topic]]\nname = "course"\nseeds = ["http://a.example/"]\nrelevant = ["type=course"]\n'
                   + ("" if strategies.startswith("strategy") else strategies + "\n"))  # fmt: skip
    _refused_in_one_line(bad, said, capsys)


def test_a_model_table_reads_its_files_from_the_experiment_folder(
    sample_archive: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # before (b44): a model's topic file (and cosine's idf, perplexity's held_out) was read
    # from the working directory: "config: .../topics/t.toml: no such file", after the
    # crawls of the strategies before it
    folder = tmp_path / "exp"
    (folder / "topics").mkdir(parents=True)
    (folder / "topics" / "t.toml").write_text('[model]\nname = "keyword"\nkeywords = ["cat", "cats"]\n')
    labels = folder / "labels.jsonl"
    labels.write_text(json.dumps({"url": "http://cats.example/", "topic": "cats"}) + "\n")
    (folder / "e.toml").write_text(
        f'archives = ["{sample_archive}"]\nlabels = "labels.jsonl"\nbudget = 5\ncheckpoints = 1\n'
        '[[topic]]\nname = "cats"\nseeds = ["http://cats.example/"]\nrelevant = ["topic=cats"]\n'
        '[[strategy]]\nlabel = "bf"\nstrategy = "best-first"\nmodel = { name = "keyword", topic = "topics/t.toml" }\n'
    )  # fmt: skip
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert main(["experiment", str(folder / "e.toml"), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    run = json.loads((tmp_path / "out" / "runs" / "bf" / "cats" / "r0" / "run.json").read_text())
    assert run["summary"]["fetched"] == 5
    assert run["settings"]["model"]["topic"] == str((folder / "topics" / "t.toml").resolve())


def test_a_filter_file_is_read_from_the_experiment_folder(
    sample_archive: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # before (b44): host-blacklist's file = "blocked.txt" was read from the working
    # directory at the strategy's turn ("cannot read blocked.txt"), or another file there
    folder = tmp_path / "exp"
    folder.mkdir()
    (folder / "blocked.txt").write_text("shop.example\n")
    (folder / "labels.jsonl").write_text(json.dumps({"url": "http://cats.example/", "topic": "cats"}) + "\n")
    (folder / "e.toml").write_text(
        f'archives = ["{sample_archive}"]\nlabels = "labels.jsonl"\nbudget = 5\ncheckpoints = 1\n'
        '[[topic]]\nname = "cats"\nseeds = ["http://cats.example/"]\nrelevant = ["topic=cats"]\n'
        '[[strategy]]\nlabel = "b"\nstrategy = "bfs"\nfilters = [{ name = "host-blacklist", file = "blocked.txt" }]\n'
    )  # fmt: skip
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert main(["experiment", str(folder / "e.toml"), "--out", str(tmp_path / "out"), "--quiet"]) == 0
    run = json.loads((tmp_path / "out" / "runs" / "b" / "cats" / "r0" / "run.json").read_text())
    assert run["settings"]["filters"] == [{"name": "host-blacklist", "file": str((folder / "blocked.txt").resolve())}]


def test_report_only_leaves_out_a_crawl_killed_mid_way_and_a_rerun_completes_it(
    sample_archive: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # before (b44): --report-only evaluated a crawl killed mid-way (104 of its 400 URLs, by
    # hand) as if it were whole, averaged with the others, and said nothing
    labels = tmp_path / "labels.jsonl"
    labels.write_text(json.dumps({"url": "http://cats.example/", "topic": "cats"}) + "\n")
    exp = tmp_path / "e.toml"
    exp.write_text(
        f'archives = ["{sample_archive}"]\nlabels = "labels.jsonl"\nbudget = 8\ncheckpoints = 2\nrepetitions = 2\n'
        '[[topic]]\nname = "cats"\nseeds = ["http://cats.example/"]\nrelevant = ["topic=cats"]\n'
        '[[strategy]]\nlabel = "bfs"\nstrategy = "bfs"\n'
    )  # fmt: skip
    out = tmp_path / "out"
    assert main(["experiment", str(exp), "--out", str(out), "--quiet"]) == 0
    whole = json.loads((out / "results.json").read_text())
    assert [r["fetched"] for r in whole["runs"]] == [8, 8]
    assert not whole.get("left_out")
    # r1 as a kill -9 after its last commit leaves it: run.json not (yet) finished
    killed = out / "runs" / "bfs" / "cats" / "r1"
    info = json.loads((killed / "run.json").read_text())
    (killed / "run.json").write_text(json.dumps({**info, "finished": False}))
    capsys.readouterr()
    assert main(["experiment", str(exp), "--out", str(out), "--quiet", "--report-only"]) == 0
    partial = json.loads((out / "results.json").read_text())
    assert [r["rep"] for r in partial["runs"]] == [0]
    assert "1 of 2 runs left out: not crawled, or not to the end" in capsys.readouterr().out
    assert partial["left_out"] == [str(killed)]
    # the experiment run again resumes r1, to the same pages as the whole run
    assert main(["experiment", str(exp), "--out", str(out), "--quiet"]) == 0
    again = json.loads((out / "results.json").read_text())
    same = ("fetched", "pages", "relevant", "harvest_rate", "curves")
    assert [{k: r[k] for k in same} for r in again["runs"]] == [{k: r[k] for k in same} for r in whole["runs"]]
    assert again["left_out"] == []


@pytest.mark.slow  # three crawls of 400 URLs, one killed
@pytest.mark.skipif(not (TESTWEB / "webkb.warc.gz").exists(), reason="shared test web absent")
def test_an_experiment_killed_mid_crawl_resumes_that_crawl_and_ends_as_an_uninterrupted_one(tmp_path: Path) -> None:
    # before (b44): the crawl that kill -9 interrupted was thrown away and crawled again
    # from its first URL; now it is resumed: its recorded pages stay as they were
    import os
    import signal
    import sys
    import time

    exp = tmp_path / "e.toml"
    exp.write_text(
        f'archives = ["{TESTWEB / "webkb.warc.gz"}"]\nlabels = "{TESTWEB / "webkb.labels.jsonl"}"\n'
        'budget = 400\ncheckpoints = 4\n[crawl]\ncommit_every = 50\n[[topic]]\nname = "course"\nseeds = ["http://www.cs.cornell.edu/"]\n'
        'relevant = ["type=course"]\n[[strategy]]\nlabel = "bfs"\nstrategy = "bfs"\n'
        '[[strategy]]\nlabel = "opic"\nstrategy = "opic"\nmodel = { name = "keyword", keywords = ["course"] }\n'
    )  # fmt: skip
    out, whole = tmp_path / "out", tmp_path / "whole"
    pages = out / "runs" / "opic" / "course" / "r0" / "pages.jsonl"
    child = subprocess.Popen([sys.executable, "-m", "focuscrawl", "experiment", "-q", str(exp), "--out", str(out)],
                             env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])},
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        while child.poll() is None and time.monotonic() < deadline:
            if pages.is_file() and len(pages.read_bytes().splitlines()) >= 150:
                break
            time.sleep(0.01)
        child.send_signal(signal.SIGKILL)
    finally:
        child.wait(60)
    kept = pages.read_bytes().splitlines()[:50]  # committed (every 50 results): kept on resume
    if len(kept) < 50 or json.loads((pages.parent / "run.json").read_text())["finished"]:
        pytest.skip("the crawl ended before it could be killed mid-way")
    assert main(["experiment", str(exp), "--out", str(out), "--quiet"]) == 0
    assert pages.read_bytes().splitlines()[:50] == kept  # (their fetched_at too: not fetched again)
    assert main(["experiment", str(exp), "--out", str(whole), "--quiet"]) == 0
    same = ("fetched", "pages", "relevant", "harvest_rate", "curves")
    resumed, uninterrupted = (json.loads((d / "results.json").read_text())["runs"] for d in (out, whole))
    assert [{k: r[k] for k in same} for r in resumed] == [{k: r[k] for k in same} for r in uninterrupted]
    drop = re.compile(rb'"fetched_at":[0-9.e+-]+')
    assert drop.sub(b"", pages.read_bytes()) == drop.sub(b"", (whole / pages.relative_to(out)).read_bytes())


@pytest.mark.slow  # a whole experiment
@needs_web
def test_tiny_experiment_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    exp = tmp_path / "tiny.toml"
    exp.write_text(TINY)
    out = tmp_path / "out"
    assert main(["experiment", str(exp), "--out", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "| BFS |" in printed
    assert "| best-first |" in printed
    results = json.loads((out / "results.json").read_text())
    assert [t["name"] for t in results["topics"]] == ["Biology.Mammals", "Biology.Birds"]
    assert len(results["runs"]) == 4
    for run in results["runs"]:
        rows = (Path(run["run"]) / "pages.jsonl").read_text().splitlines()
        assert run["fetched"] == len(rows) == 30
    # the summary is the mean of the per-topic values
    bfs = [r["harvest_rate"] for r in results["runs"] if r["label"] == "BFS"]
    assert results["summary"]["BFS"]["harvest_rate"]["mean"] == pytest.approx(sum(bfs) / 2)
    assert results["curves"]["BFS"]["target_recall"]["x"] == [10, 20, 30]
    assert {t["metric"] for t in results["tests"]} == {"target_recall", "harvest_rate"}
    assert "f1_by_threshold" in results["curves"]["best-first"]
    # the topic models are cached, and a second run crawls nothing again
    assert (out / "topics" / "Biology.Mammals" / "model-svm-linear" / "model.json").is_file()
    first = (out / "runs" / "BFS" / "Biology.Birds" / "r0" / "run.json").stat().st_mtime_ns
    assert main(["experiment", str(exp), "--out", str(out), "--quiet"]) == 0
    assert (out / "runs" / "BFS" / "Biology.Birds" / "r0" / "run.json").stat().st_mtime_ns == first
    html = (out / "report.html").read_text()
    assert html.count("<svg") >= 3
    assert "<link" not in html
    assert "src=" not in html
    assert "f1" not in results["summary"]["BFS"]  # no model, no pages marked relevant: no P3 scores


@pytest.mark.slow  # a whole experiment with the oracle
def test_oracle_ceiling_share_of_the_way_and_second_judge(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    exp = tmp_path / "tiny.toml"
    exp.write_text(TINY.replace('compare = ["target_recall", "harvest_rate"]', 'harvest_judge = "majority"')
                   + '[[strategy]]\nlabel = "oracle"\nstrategy = "oracle"\n')  # fmt: skip
    out = tmp_path / "out"
    assert main(["experiment", str(exp), "--out", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    assert "share of the way from BFS (0) to oracle (1), target recall" in printed
    results = json.loads((out / "results.json").read_text())
    assert (results["share"]["floor"], results["share"]["ceiling"]) == ("BFS", "oracle")
    recall = {lab: results["curves"][lab]["target_recall"]["mean"] for lab in ("BFS", "oracle", "best-first")}
    # the oracle reads the labels: never behind breadth-first here, and ahead at the budget
    assert all(o >= b for o, b in zip(recall["oracle"], recall["BFS"], strict=True))
    assert recall["oracle"][-1] > recall["BFS"][-1]
    share = results["share"]["labels"]
    lo, hi, bf = recall["BFS"][-1], recall["oracle"][-1], recall["best-first"][-1]
    assert share["BFS"]["target_recall"][-1] == 0.0
    assert share["oracle"]["target_recall"][-1] == 1.0
    assert share["best-first"]["target_recall"][-1] == pytest.approx((bf - lo) / (hi - lo))
    # its graph is built once per experiment, from the archives
    assert (out / "oracle" / "graph.json").is_file()
    # the second harvest judge (2 of 3 classifiers per topic) and the threshold F1s
    assert 0.0 <= results["summary"]["BFS"]["harvest_rate_classifiers"]["mean"] <= 1.0
    assert "harvest_rate_classifiers" in results["curves"]["oracle"]
    best = results["summary"]["best-first"]
    assert best["f1_best"]["mean"] >= best["f1_heldout"]["mean"]
    html = (out / "report.html").read_text()
    assert "Share of the way BFS → oracle, target recall" in html


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="chromium not installed (.ci/run installs it)")
def test_report_renders_in_headless_chromium(tmp_path: Path) -> None:
    from focuscrawl.evaluation.report import render

    runs = [
        {"label": lab, "topic": t, "rep": 0, "run": "x", "harvest_rate": h, "target_recall": h / 2,
         "curves": {}, "perplexity": [{"tokens": 0, "perplexity": 900.0, "perplexity_no_oov": 400.0},
                                      {"tokens": 500, "perplexity": 700.0, "perplexity_no_oov": 380.0}]}
        for lab, t, h in (("A", "t1", 0.5), ("B", "t1", 0.3))
    ]  # fmt: skip
    curve = {"x": [10, 20], "mean": [0.2, 0.4], "se": [0.05, 0.02]}
    results = {
        "title": "render check", "mode": "simulate", "budget": 20, "repetitions": 1, "notes": "n",
        "strategies": [{"label": "A", "strategy": "a", "model": None, "params": {}},
                       {"label": "B", "strategy": "b", "model": "topic", "params": {"x": 1}}],
        "topics": [{"name": "t1", "seeds": 3, "targets": 9}],
        "summary": {lab: {"harvest_rate": {"mean": 0.4, "se": 0.1, "n": 1},
                          "harvest_by_layer": {"0": 0.5, "1": 0.25}, "languages": {"en": 0.7, "de": 0.3}}
                    for lab in ("A", "B")},
        "curves": {lab: {"harvest_rate": curve, "target_recall": curve} for lab in ("A", "B")},
        "tests": [{"metric": "harvest_rate", "better": "A", "worse": "B", "n": 1, "t": None, "p": 1.0,
                   "significant": False}],
        "overlap": [{"a": "A", "b": "B", "page_jaccard": 0.1, "domain_jaccard": 0.5}], "runs": runs,
    }  # fmt: skip
    page = tmp_path / "report.html"
    page.write_text(render(results))
    proc = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr", "--v=0",
         "--virtual-time-budget=3000", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    dom = proc.stdout
    # 2 curve plots, 2 bar plots (layers, languages), 2 perplexity plots: all drawn by the browser
    assert 'data-plots-drawn="6"' in dom, proc.stderr[-2000:]
    console = [line for line in proc.stderr.splitlines() if "CONSOLE" in line]
    assert console == []


def test_hub_web_marks_what_it_generates(tmp_path: Path) -> None:
    from warcio.archiveiterator import ArchiveIterator

    from focuscrawl.evaluation.hubweb import HUB_HOST, MARK, build_hub_web
    from focuscrawl.replay.archive import iter_responses, load_labels
    from focuscrawl.replay.sample import build_sample_archive, labels_path_for

    source = build_sample_archive(tmp_path / "sample.warc.gz")
    web, labels_path = build_hub_web(
        source, labels_path_for(source), tmp_path / "web" / "w.warc.gz", label_key="relevant",
        out_links=2, hubs=3, hub_size=2, locality=1.0,
    )  # fmt: skip
    original = {r.url: r.body for r in iter_responses(source) if r.status == 200 and "html" in r.content_type}
    marks: dict[str, str] = {}
    with web.open("rb") as fh:
        for rec in ArchiveIterator(fh):
            if rec.rec_type == "response":
                marks[rec.rec_headers.get_header("WARC-Target-URI")] = rec.rec_headers.get_header(MARK)
    hubs = {u for u, m in marks.items() if m == "hub"}
    assert hubs == {f"{HUB_HOST}/", *(f"{HUB_HOST}/hub/{i}.html" for i in range(3))}
    assert {u for u, m in marks.items() if m == "appended-links"} == set(original)
    labels = load_labels(labels_path)
    assert all(labels[h]["generated"] is True for h in hubs)
    for rec in iter_responses(web):
        if rec.url in original:
            head, _, tail = rec.body.partition(b'<div data-focuscrawl="generated">')
            # the original bytes are all there, the block inserted before </body>
            assert head + tail.split(b"</div>", 1)[1] == original[rec.url]
            assert int(rec.header("Content-Length")) == len(rec.body)
            links = tail.split(b"</div>", 1)[0].count(b"<a href=")
            assert links == 3  # 2 pages + 1 hub


def test_live_experiment_through_the_replay_server(tmp_path: Path) -> None:
    from focuscrawl.replay.sample import SAMPLE_SEEDS, build_sample_archive, labels_path_for

    source = build_sample_archive(tmp_path / "sample.warc.gz")
    exp = tmp_path / "live.toml"
    exp.write_text(f"""
archives = ["{source}"]
labels = "{labels_path_for(source)}"
budget = 8
checkpoints = 2
mode = "live"
[[topic]]
name = "cats"
relevant = ["relevant=true"]
seeds = {json.dumps(list(SAMPLE_SEEDS))}
[[strategy]]
strategy = "bfs"
""")
    out = tmp_path / "out"
    assert main(["experiment", str(exp), "--out", str(out), "--quiet"]) == 0
    results = json.loads((out / "results.json").read_text())
    assert results["runs"][0]["fetched"] == 8
    # every fetch went through the replay server on 127.0.0.1, which logged it
    assert len((out / "replay.log").read_text().splitlines()) >= 8
    # another budget is another crawl: the finished one is not reused
    exp.write_text(exp.read_text().replace("budget = 8", "budget = 5"))
    assert main(["experiment", str(exp), "--out", str(out), "--quiet"]) == 0
    assert json.loads((out / "results.json").read_text())["runs"][0]["fetched"] == 5


def test_crawl_strategy_params_are_merged_with_a_strategys_and_a_topics_the_specific_on_top(
    tmp_path: Path,
) -> None:
    # before (b46): [crawl] strategy_params was dropped whole, unsaid, as soon as a strategy
    # or a topic gave params (the crawl ran with a = 0.85's default, not the file's 0.5)
    from focuscrawl.evaluation.experiment_file import job_settings, load_experiment

    (tmp_path / "a.warc.gz").write_bytes(b"")
    path = tmp_path / "e.toml"
    path.write_text(
        'archives = ["a.warc.gz"]\n[crawl]\nstrategy_params = { a = 0.5, d = 1, recrawl_every = 7 }\n'
        '[[topic]]\nname = "t"\nseeds = ["http://a.example/"]\nrelevant = ["type=course"]\n'
        'strategy_params = { otie = { d = 5 } }\n'
        '[[strategy]]\nlabel = "plain"\nstrategy = "otie"\n'
        '[[strategy]]\nlabel = "own"\nstrategy = "otie"\nparams = { a = 0.7, d = 3 }\n'
        '[[strategy]]\nlabel = "crawl"\nstrategy = "otie"\ncrawl = { strategy_params = { recrawl_every = 9 } }\n'
    )  # fmt: skip
    exp = load_experiment(path)
    [topic] = exp.hand_topics
    got = {s.label: job_settings(exp, s, topic, 0)["strategy_params"] for s in exp.strategies}
    assert got == {
        "plain": {"a": 0.5, "d": 5, "recrawl_every": 7},  # the topic's d over [crawl]'s
        "own": {"a": 0.7, "d": 5, "recrawl_every": 7},  # params' a over [crawl]'s, the topic's d over both
        "crawl": {"a": 0.5, "d": 5, "recrawl_every": 9},  # the strategy's crawl table over [crawl]'s
    }


@pytest.mark.parametrize("named", [True, False], ids=["name-given", "name-from-file"])
def test_an_experiments_name_and_output_folder_are_its_own_not_its_last_topics(tmp_path: Path, named: bool) -> None:
    # before (b48): the [[topic]] loop reused the variable of the experiment's name, so
    # `focuscrawl experiment experiments/p4.toml` wrote to experiments-out/zh (its last
    # topic), its progress lines and results.json said "zh", not "p4"
    from focuscrawl.evaluation.experiment_file import load_experiment

    (tmp_path / "a.warc.gz").write_bytes(b"")
    path = tmp_path / "p4.toml"
    path.write_text(
        ('name = "p4"\n' if named else "") + 'archives = ["a.warc.gz"]\n[[strategy]]\nstrategy = "bfs"\n'
        + "".join(f'[[topic]]\nname = "{t}"\nseeds = ["http://a.example/"]\nrelevant = ["lang=ja"]\n' for t in ("ja", "zh"))
    )  # fmt: skip
    exp = load_experiment(path)
    assert (exp.name, exp.title, exp.out) == ("p4", "p4", Path("experiments-out") / "p4")
    assert [t.name for t in exp.hand_topics] == ["ja", "zh"]
