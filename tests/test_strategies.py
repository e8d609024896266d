"""Strategy hooks: hand-checked scores, and the engine applying every kind of Decision."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

import pytest

from focuscrawl.api import crawl
from focuscrawl.frontier.indexed import IndexedFrontier
from focuscrawl.replay.process import ReplayProcess
from focuscrawl.replay.sample import SAMPLE_SEEDS
from focuscrawl.strategies.base import STRATEGIES, Strategy, register_strategy
from focuscrawl.types import (
    Decision,
    LinkScore,
    Merge,
    Page,
    QueuedURL,
    ScoreUpdate,
    URLState,
)
from tests.test_strategy_cash import Harness, TableModel, U


def test_bfs_serves_urls_in_discovery_order(tmp_path: Path) -> None:
    # s1 links a, b; a links c and b again: b keeps its first place, so a, b, c
    h = Harness(tmp_path, "bfs")
    h.seeds("s1")
    assert [q.url for q in h.store.pop(1)] == [U["s1"]]
    h.fetch("s1", ("a", "x"), ("b", "x"))
    (a,) = h.store.pop(1)
    h.fetch("a", ("c", "x"), ("b", "x"))
    assert [a.url, *(q.url for q in h.store.pop(3))] == [U["a"], U["b"], U["c"]]


def test_best_first_serves_the_best_parent_first(tmp_path: Path) -> None:
    # s1 (0.9) links a, b; a (0.2) links c; b (0.8) links d and c again: c keeps the
    # better parent's 0.8 (MAX), d gets 0.8; c was found first, so c then d
    model = TableModel({U["s1"]: 0.9, U["a"]: 0.2, U["b"]: 0.8})
    h = Harness(tmp_path, "best-first", model)
    h.seeds("s1")
    h.store.pop(1)
    h.fetch("s1", ("a", "x"), ("b", "x"))
    assert [h.score("a"), h.score("b")] == pytest.approx([0.9, 0.9])
    h.store.pop(2)
    h.fetch("a", ("c", "x"))
    assert h.score("c") == pytest.approx(0.2)
    h.fetch("b", ("d", "x"), ("c", "x"))
    assert [h.score("c"), h.score("d")] == pytest.approx([0.8, 0.8])
    assert [q.url for q in h.store.pop(2)] == [U["c"], U["d"]]


class _Recorder(Strategy):
    """Layered test strategy: scores links by their order on the page, records the hooks."""

    name: ClassVar[str] = "test-layered"
    layered: ClassVar[bool] = True
    calls: ClassVar[list[Any]] = []

    def on_page(self, page: Page, relevance: float | None, queued: QueuedURL) -> Decision:
        self.calls.append(("page", queued.layer, queued.url))
        return Decision(links=[LinkScore(link, 1.0 / (i + 1)) for i, link in enumerate(page.links)])

    def on_layer_end(self, layer: int) -> Decision:
        self.calls.append(("layer_end", layer))
        return Decision()


class _Siblings(Strategy):
    """Raises the siblings of the sports section page (the other sections) to 0.9."""

    name: ClassVar[str] = "test-siblings"
    needs_parents: ClassVar[bool] = True

    def on_page(self, page: Page, relevance: float | None, queued: QueuedURL) -> Decision:
        raise_to = 0.9 if page.url.endswith("/sections/sports.html") else None
        updates = [ScoreUpdate("http://never-seen.example/", 5.0, Merge.ADD)]
        return Decision(links=[LinkScore(link, 0.1) for link in page.links], raise_siblings=raise_to, updates=updates)


register_strategy("test-layered")(_Recorder)
register_strategy("test-siblings")(_Siblings)


def test_layered_rounds_take_top_n_per_layer(sample_replay: ReplayProcess, tmp_path: Path) -> None:
    _Recorder.calls.clear()
    stats = crawl(
        list(SAMPLE_SEEDS), tmp_path / "run", strategy="test-layered", max_pages=0,
        top_n=3, depth=3, proxy=sample_replay.proxy_url, delay=0.0,
    )  # fmt: skip
    pages = [json.loads(line) for line in (tmp_path / "run" / "pages.jsonl").read_text().splitlines()]
    # layer 0 = the one seed; then at most top_n URLs per layer
    assert len(pages) == stats.fetched == 1 + 3 + 3
    ends = [c for c in _Recorder.calls if c[0] == "layer_end"]
    assert ends == [("layer_end", 0), ("layer_end", 1), ("layer_end", 2)]
    # the URLs of layer k were discovered in layer k (the round that fetched their parents)
    layers = [c[1] for c in _Recorder.calls if c[0] == "page"]
    assert layers == sorted(layers)
    assert layers[0] == 0
    # within a round the best-scored URLs were generated: first links of their page
    assert [p["score"] for p in pages[1:4]] == pytest.approx([1.0, 1 / 2, 1 / 3])


def test_sibling_raise_and_unknown_updates(sample_replay: ReplayProcess, tmp_path: Path) -> None:
    # fetch order: the home page, then sports.html (siblings raised), then one raised section
    crawl(list(SAMPLE_SEEDS), tmp_path / "run", strategy="test-siblings", max_pages=3,
          proxy=sample_replay.proxy_url, delay=0.0, fetch_list_size=1)  # fmt: skip
    frontier = IndexedFrontier(tmp_path / "run" / "crawl.db")  # the store api.py uses
    try:
        assert frontier.state("http://never-seen.example/") is None  # updates never invent URLs
        queued = {q.url: q.score for q in frontier.iter_urls(URLState.QUEUED)}
        sections = {u: s for u, s in queued.items() if "/sections/" in u}
        assert len(sections) == 6  # 8 sections + pets, minus sports and the one fetched third
        assert sorted(sections.values()) == pytest.approx([0.9] * 6)
        stories = {u: s for u, s in queued.items() if "/sports/story" in u}
        assert stories
        assert sorted(stories.values()) == pytest.approx([0.1] * len(stories))  # children, not siblings
    finally:
        frontier.close()


BUILTIN_STRATEGIES = [
    "best-first", "bfs", "commd", "genre", "genre-svm", "language", "learning", "link-context",
    "opic", "opic-commd", "oracle", "otie", "perplexity",
]  # fmt: skip


def test_registry_knows_builtins_and_rejects_unknown() -> None:
    # the package's own (test modules register test-... strategies too, in the suite's order)
    own = [n for n in STRATEGIES.names() if STRATEGIES.get(n).__module__.startswith("focuscrawl.")]
    assert own == BUILTIN_STRATEGIES
    assert [STRATEGIES.get(n).name for n in own] == own  # each under its class's own name
    with pytest.raises(Exception, match="unknown strategy 'nope'"):
        STRATEGIES.get("nope")
