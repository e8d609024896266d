"""The dashboard's numbers agree with the crawl's (issue 26): one rate, URLs per second of
crawling, labelled as such; the time before a resume is not crawling; the budget is
marked on the progress plot and every axis says what it counts."""

from __future__ import annotations

import json
from pathlib import Path

from focuscrawl.commands.dashboard import tails_for
from focuscrawl.dashboard import render_fragment

# 6 URLs a second, stopped for 10 minutes, resumed: 6 more at the same rate
ROWS = [{"url": f"http://a.org/{i}", "status": 200, "fetched_at": 100.0 + i / 6} for i in range(6)]
ROWS += [{"url": f"http://a.org/r{i}", "status": 200, "fetched_at": 700.0 + i / 6} for i in range(6)]


def _run(tmp_path: Path) -> Path:
    run = tmp_path / "run"
    run.mkdir()
    (run / "pages.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS), encoding="utf-8")
    info = {"strategy": "best-first", "model": "keyword", "finished": True,
            "settings": {"crawl": {"max_pages": 20}}, "summary": {}}  # fmt: skip
    (run / "run.json").write_text(json.dumps(info), encoding="utf-8")
    return run


def test_the_pause_before_a_resume_is_no_crawling(tmp_path: Path) -> None:
    [tail] = tails_for([_run(tmp_path)], None, [])
    tail.update()
    snap = tail.snapshot(now=800.0)
    # 11 gaps of 1/6 s between 12 URLs, the 10-minute pause left out: 6 URLs/s, not 0.02
    assert snap["crawl_seconds"] == round(10 / 6, 1)
    assert snap["urls_per_s"] == round(11 / (10 / 6), 2)
    assert "pages_per_s" not in snap  # one definition, named for what it counts


def test_the_page_labels_its_rates_and_marks_the_budget(tmp_path: Path) -> None:
    [tail] = tails_for([_run(tmp_path)], None, [])
    tail.update()
    page = render_fragment([tail], now=800.0)
    assert "<th" in page
    assert ">URLs/s now</th>" in page
    assert ">URLs/s</th>" in page
    assert "pages/s" not in page
    assert "URLs crawled over time" in page
    assert "seconds of crawling (pauses left out)" in page
    assert 'class="mark"' in page
    assert "budget: 20 URLs" in page
    assert "harvest rate (relevant pages / pages)" in page
