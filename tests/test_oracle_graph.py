"""The oracle of a simulation reads the simulated archives' link graph (issue 38 item 7).

Before, without ``graph`` it silently looked one link ahead only (0.796 instead of 1.000
target recall at 500 URLs on hidden topics). The web, by hand: the seed links to B, then
to A; A links to X, the one relevant page; B links nowhere. With the graph, A is one
link from X: score 1/(1+1) = 0.5, and B, with no path to X, 0; so A comes before B.
Looking one link ahead, A and B both score 1/3 (a link of a page that is not relevant)
and go in discovery order: B first.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

from focuscrawl.api import crawl
from focuscrawl.strategies.oracle import OracleStrategy
from tests.archives import write_archive

PAGES = {
    "http://w.example/": "<a href='/b'>b</a> <a href='/a'>a</a>",
    "http://w.example/a": "<a href='/x'>x</a>",
    "http://w.example/b": "nothing here",
    "http://w.example/x": "the relevant page",
}


def _web(tmp_path: Path) -> tuple[Path, Path]:
    pages = {url: f"<html><body>{text}</body></html>" for url, text in PAGES.items()}
    archive = write_archive(tmp_path / "w.warc.gz", pages, "text/html")
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        "".join(json.dumps({"url": u, "hit": u.endswith("/x")}) + "\n" for u in PAGES)
    )
    return archive, labels


def _order(tmp_path: Path, name: str, params: dict[str, object], archive: Path) -> list[str]:
    out = tmp_path / name
    crawl(["http://w.example/"], out, strategy="oracle", strategy_params=params, archives=[archive],
          max_pages=10, delay=0, window=1, fetch={"respect_robots": False})  # fmt: skip
    return [
        json.loads(line)["url"][len("http://w.example") :] for line in (out / "pages.jsonl").open()
    ]


def test_a_simulated_oracle_reads_the_archives_graph(tmp_path: Path) -> None:
    archive, labels = _web(tmp_path)
    params = {"labels": str(labels), "relevant": ["hit=true"]}
    assert _order(tmp_path, "sim", params, archive)[:3] == ["/", "/a", "/x"]
    run = json.loads((tmp_path / "sim" / "run.json").read_text())
    assert run["settings"]["crawl"]["strategy_params"]["graph"] == str(archive)


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def test_without_a_graph_the_oracle_says_so(tmp_path: Path) -> None:
    _, labels = _web(tmp_path)
    # a handler of its own on the oracle's logger: a command run earlier in this process
    # (-q) may have set the package's loggers to errors only
    logger = logging.getLogger("focuscrawl.strategies.oracle")
    records, level = _Records(), logger.level
    logger.addHandler(records)
    logger.setLevel(logging.WARNING)
    try:
        strategy = OracleStrategy(None, labels=str(labels), relevant=["hit=true"])
    finally:
        logger.removeHandler(records)
        logger.setLevel(level)
    assert strategy.graph is None
    assert any("no link graph" in line for line in records.lines)
