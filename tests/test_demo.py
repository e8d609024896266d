"""The README's demo, in the form it takes on a machine without ../shared/testweb."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from focuscrawl import demo
from focuscrawl.cli import main
from focuscrawl.commands.demo import DEMO_MARK, run_demo
from focuscrawl.replay.archive import load_labels
from tests.conftest import TESTWEB


def test_demo_on_the_generated_web(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(demo, "TESTWEB", tmp_path / "no-testweb")
    monkeypatch.chdir(tmp_path)  # no ../shared/testweb from here either
    out_dir = tmp_path / "demo"
    (out_dir / "bfs").mkdir(parents=True)  # an earlier demo run: replaced
    (out_dir / "bfs" / "stale.txt").write_text("from an earlier run\n", encoding="utf-8")
    (out_dir / DEMO_MARK).write_text("", encoding="utf-8")
    assert run_demo(out_dir, max_pages=25) == 0
    assert not (out_dir / "bfs" / "stale.txt").exists()
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("demo web: generated sample web")
    labels = load_labels(out_dir / "sample.labels.jsonl")
    line = re.compile(
        r" *(\S+): harvest rate (\d\.\d{3}) by labels \((\d+)/(\d+) pages\), (\d\.\d{3}) by the model"
    )
    seen = set()
    for text in out[1:]:
        match = line.match(text)
        assert match is not None, text
        strategy, label_rate, hits, n, model_rate = match.groups()
        seen.add(strategy)
        # the printed numbers, recomputed here from the run's own outputs and the labels
        records = [json.loads(x) for x in (out_dir / strategy / "pages.jsonl").read_text().splitlines()]
        ok = [r for r in records if r["status"] == 200 and not r["error"] and r["url"] in labels]
        relevant = sum(bool(labels[r["url"]]["relevant"]) for r in ok)
        assert (int(hits), int(n)) == (relevant, len(ok))
        assert float(label_rate) == round(relevant / len(ok), 3)
        judged = [r for r in records if r["relevance"] is not None]
        assert float(model_rate) == round(sum(r["relevant"] for r in judged) / len(judged), 3)
        assert len(records) == 25  # the budget, every URL of the generated web answers
    assert seen == {"best-first", "bfs"}


def test_demo_refuses_a_directory_that_is_not_a_demo_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mine = tmp_path / "thesis"
    mine.mkdir()
    (mine / "chapter1.tex").write_text("precious\n", encoding="utf-8")
    assert main(["demo", "--out", str(mine)]) == 2
    err = capsys.readouterr().err
    assert "not empty and not a demo run directory" in err
    assert err.count("\n") == 1
    assert (mine / "chapter1.tex").read_text(encoding="utf-8") == "precious\n"
    (tmp_path / "file").write_text("x", encoding="utf-8")
    assert main(["demo", "--out", str(tmp_path / "file")]) == 2
    assert "is a file" in capsys.readouterr().err


def test_demo_finds_the_testweb_beside_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # as an installed (not editable) package, beside which no ../shared/testweb is: the
    # demo run from a checkout's root used to fall back to the generated sample web
    if not (TESTWEB / "webkb.warc.gz").exists():
        pytest.skip("../shared/testweb is absent")
    monkeypatch.setattr(demo, "TESTWEB", tmp_path / "site-packages" / "shared" / "testweb")
    shared = tmp_path / "shared" / "testweb"
    shared.mkdir(parents=True)
    for name in ("webkb.warc.gz", "webkb.labels.jsonl"):
        (shared / name).symlink_to(TESTWEB / name)
    (tmp_path / "checkout").mkdir()
    monkeypatch.chdir(tmp_path / "checkout")
    assert run_demo(tmp_path / "demo", max_pages=5) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("demo web: WebKB (../shared/testweb), topic: course pages"), out[0]
    assert "www.cs.cornell.edu" in (tmp_path / "demo" / "replay.log").read_text()  # WebKB replayed
