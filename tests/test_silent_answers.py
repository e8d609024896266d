"""No silent wrong answers (issue 26): a label selector that cannot select anything is a
one-line error naming what exists, in eval, experiment and dashboard; errors while
evaluating are one line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from focuscrawl.cli import main
from focuscrawl.commands.dashboard import tails_for
from focuscrawl.exceptions import ConfigError

LABELS = [
    {"url": "http://a.org/1", "type": "course", "university": "cornell"},
    {"url": "http://a.org/2", "type": "faculty", "university": "texas"},
    {"url": "http://a.org/3", "type": "course", "university": "texas"},
]


@pytest.fixture
def labelled_run(tmp_path: Path) -> tuple[Path, Path]:
    labels = tmp_path / "web.labels.jsonl"
    labels.write_text("".join(json.dumps(x) + "\n" for x in LABELS), encoding="utf-8")
    run = tmp_path / "run"
    run.mkdir()
    rows = [{"url": x["url"], "status": 200, "depth": 0} for x in LABELS]
    (run / "pages.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return run, labels


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        pytest.param("typo=course", "no line of web.labels.jsonl has the key 'typo' (keys: type, university, url)", id="unknown-key"),
        pytest.param("type=Course", "matches no page of web.labels.jsonl (type: course, faculty)", id="wrong-case"),
        pytest.param("type==course", "selector 'type==course' matches no page", id="double-equals"),
    ],
)
def test_eval_refuses_a_selector_that_selects_nothing(
    selector: str, message: str, labelled_run: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    run, labels = labelled_run
    assert main(["eval", str(run), "--labels", str(labels), "--relevant", selector]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert err.count("\n") == 1, err
    # a selector that selects: the harvest rate is not zero
    assert main(["eval", str(run), "--labels", str(labels), "--relevant", "type=course", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["harvest_rate"] == pytest.approx(2 / 3)


@pytest.mark.parametrize("text", [pytest.param("", id="empty"), pytest.param("\n  \n", id="blank-lines")])
def test_eval_refuses_a_label_file_with_no_label_line(
    text: str, labelled_run: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    # an empty (or truncated to nothing) label file judged every page unlabelled: harvest rate 0.000, rc 0
    run, labels = labelled_run
    labels.write_text(text, encoding="utf-8")
    assert main(["eval", str(run), "--labels", str(labels), "--relevant", "type=course"]) == 2
    err = capsys.readouterr().err
    assert "web.labels.jsonl: no label line, so every page would be unlabelled" in err
    assert err.count("\n") == 1, err


def test_the_dashboard_refuses_it_too(labelled_run: tuple[Path, Path]) -> None:
    run, labels = labelled_run
    with pytest.raises(ConfigError, match=r"no line of web\.labels\.jsonl has the key .typo."):
        tails_for([run], labels, ["typo=course"])
    assert tails_for([run], labels, ["type=course", "university=texas"])


def test_an_experiment_topic_with_a_typo_fails_before_any_crawl(
    labelled_run: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, labels = labelled_run
    archive = tmp_path / "web.warc.gz"
    archive.write_bytes(b"")  # never read: the topic is refused first
    exp = tmp_path / "typo.toml"
    exp.write_text(
        f'name = "typo"\narchives = ["{archive}"]\nlabels = "{labels}"\nbudget = 5\n'
        '[[topic]]\nname = "ko"\nrelevant = ["lang_detectd=ko"]\nseeds = ["http://a.org/1"]\n'
        '[[strategy]]\nlabel = "BFS"\nstrategy = "bfs"\n',
        encoding="utf-8",
    )
    out = tmp_path / "out"
    assert main(["experiment", str(exp), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "typo.toml [[topic]] 'ko': selector 'lang_detectd=ko': no line of web.labels.jsonl has the key" in err
    assert err.count("\n") == 1, err
    assert not (out / "runs").exists()


@pytest.mark.parametrize("thresholds", ["0.3,abc", "0.3,1.5", "nan"])
def test_eval_thresholds_that_are_no_numbers(
    thresholds: str, labelled_run: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    run, labels = labelled_run
    argv = ["eval", str(run), "--labels", str(labels), "--relevant", "type=course", "--thresholds", thresholds]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("focuscrawl: --thresholds: ")
    assert err.count("\n") == 1, err


def test_a_seed_on_a_host_the_archive_lacks_is_not_blamed_on_robots(
    sample_archive: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The replay web answers robots.txt of an unknown host with 502: that is the
    gateway's "no such host" (its Proxy-Status says dns_error), not the host's
    robots.txt saying no; before (b46) it was counted as "proxy", as if a proxy had
    failed, in a simulation that has none."""
    argv = ["simulate", "--archive", str(sample_archive), "--seeds", "http://not-in-the-archive.example/",
            "--out", str(tmp_path / "run"), "-q"]  # fmt: skip
    assert main(argv) == 1
    out, err = capsys.readouterr()
    assert "no page could be fetched: dns (1): the host name does not resolve (simulate, replay: the archive holds no page of the host)" in err
    assert "robots" not in err
    assert "proxy" not in err + out
    assert "; not fetched: dns 1 -> " in out
