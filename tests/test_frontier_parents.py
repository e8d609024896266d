"""Parent edges only for the strategies that read them (``Strategy.needs_parents``).

A store opened with ``parents=False`` keeps each URL's first parent (handed out
with the URL by ``pop`` and ``get``) and refuses ``parents``, ``children``,
``children_counts`` and ``raise_children`` with a one-line FrontierError; the
mode of a DB is fixed when it is created. Each store is checked by hand, the
durable ones against the reference on random operations, and a crawl through the
API with a strategy without and with ``needs_parents``.
"""

from __future__ import annotations

import json
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from focuscrawl.api import crawl
from focuscrawl.exceptions import FrontierError
from focuscrawl.frontier.factory import open_frontier
from focuscrawl.frontier.indexed import IndexedFrontier
from focuscrawl.frontier.memory import MemoryFrontier
from focuscrawl.replay.process import ReplayProcess
from focuscrawl.replay.sample import SAMPLE_SEEDS
from focuscrawl.settings import CrawlSettings, Settings
from focuscrawl.strategies.base import STRATEGIES, Strategy, register_strategy
from focuscrawl.strategies.bfs import BreadthFirstStrategy
from focuscrawl.strategies.genre import GenreStrategy, GenreSvmStrategy
from focuscrawl.types import Decision, LinkScore, Page, QueuedURL, URLState
from tests.test_frontier import _apply, _ops

DURABLE: dict[str, Any] = {"indexed": IndexedFrontier}
NO_EDGES = "keeps no parent edges"


@pytest.fixture(params=["indexed", "memory"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "memory":
        yield MemoryFrontier(parents=False)
        return
    frontier = DURABLE[request.param](tmp_path / "f.db", parents=False)
    yield frontier
    frontier.close()


def _item(
    url: str, parent: str | None, count: int = 1
) -> tuple[str, float, int, str | None, str, int, int]:
    return (url, 1.0, 1, parent, url.split("/")[2], count, 0)


def test_first_parents_without_edges(store: Any) -> None:
    store.add_many([_item("http://a/seed", None)])
    # a page's links (the common batch) and an unknown referrer (a DROPPED row)
    store.add_many([_item("http://a/x", "http://a/seed", 2), _item("http://b/y", "http://a/seed")])
    store.add_many([_item("http://a/x", "http://z/p"), _item("http://a/seed", "http://z/p")])
    assert store.get("http://a/x").parent == "http://a/seed"  # the first one stays
    assert store.get("http://a/seed").parent == "http://z/p"  # a seed gets its first parent
    assert store.get("http://z/p") == QueuedURL("http://z/p", 0.0, 0, "z", None, 0, 4)
    assert store.state("http://z/p") is URLState.DROPPED
    popped = {q.url: q.parent for q in store.pop(5)}
    assert popped == {
        "http://a/seed": "http://z/p",
        "http://a/x": "http://a/seed",
        "http://b/y": "http://a/seed",
    }
    for read in (store.parents, store.children, store.children_counts):
        with pytest.raises(FrontierError, match=NO_EDGES):
            read("http://a/seed")
    with pytest.raises(FrontierError, match=f"{NO_EDGES}: a strategy .* sets needs_parents = True"):
        store.raise_children("http://a/seed", 5.0)


@pytest.mark.parametrize("kind", ["indexed"])
def test_the_mode_of_a_db_is_fixed_when_it_is_created(tmp_path: Path, kind: str) -> None:
    bare, full = tmp_path / "bare.db", tmp_path / "full.db"
    for path, parents in ((bare, False), (full, True)):
        db = DURABLE[kind](path, parents=parents)
        db.add_many([_item("http://a/s", None), _item("http://a/c", "http://a/s", 3)])
        db.commit()
        db.close()
    with pytest.raises(
        FrontierError, match=f"crawl DB .*bare.db {NO_EDGES}, and this crawl's strategy needs them"
    ):
        DURABLE[kind](bare, parents=True)
    db = DURABLE[kind](bare, parents=False)
    assert db.get("http://a/c").parent == "http://a/s"
    db.close()
    db = DURABLE[kind](full, parents=False)  # a DB with edges goes on keeping them
    db.add_many([_item("http://a/d", "http://a/s")])
    assert db.children_counts("http://a/s") == [("http://a/c", 3), ("http://a/d", 1)]
    db.close()
    with sqlite3.connect(bare) as raw:
        edges = "links"
        assert raw.execute(f"SELECT count(*) FROM {edges}").fetchone() == (0,)
        assert raw.execute("SELECT value FROM meta WHERE key = '_parents'").fetchone() == ("0",)
    raw.close()


def test_factory_opens_without_edges_unless_asked(tmp_path: Path) -> None:
    settings_ = Settings(crawl=CrawlSettings(frontier="indexed"))
    db = open_frontier(settings_, tmp_path / "a.db")
    db.add("http://a/c", 1.0, depth=1, parent="http://a/p", host="a")
    with pytest.raises(FrontierError, match=NO_EDGES):
        db.parents("http://a/c")
    db.close()
    db = open_frontier(settings_, tmp_path / "b.db", parents=True)
    db.add("http://a/c", 1.0, depth=1, parent="http://a/p", host="a")
    assert db.parents("http://a/c") == ["http://a/p"]
    db.close()


def test_an_orphan_gets_its_first_parent_durably(tmp_path: Path) -> None:
    """The first parent of a committed orphan is an UPDATE; uncommitted, it is lost."""
    path = tmp_path / "f.db"
    db = IndexedFrontier(path, parents=False)
    db.add_many([_item("http://a/s", None), _item("http://a/t", None)])
    db.commit()
    db.add_many([_item("http://a/s", "http://a/t")])  # committed orphan s: parent t
    db.commit()
    db.add_many([_item("http://a/t", "http://a/s")])  # lost: never committed
    db.close()
    db = IndexedFrontier(path, parents=False)
    assert (db.get("http://a/s").parent, db.get("http://a/t").parent) == ("http://a/t", None)
    db.add_many([_item("http://a/t", "http://a/u"), _item("http://a/t", "http://a/s")])
    assert db.get("http://a/t").parent == "http://a/u"  # the first edge of the batch
    db.commit()
    db.close()
    with sqlite3.connect(path) as raw:
        assert raw.execute("SELECT seq FROM orphans ORDER BY seq").fetchall() == [(3,)]  # u
    raw.close()


def test_strategies_that_read_edges_say_so() -> None:
    assert GenreStrategy.needs_parents
    assert GenreSvmStrategy.needs_parents
    assert not BreadthFirstStrategy.needs_parents
    readers = {name for name in STRATEGIES.names() if STRATEGIES.get(name).needs_parents}
    assert {"genre", "genre-svm"} <= readers


# -- the same random operations as tests/test_frontier.py, without edges -----------------------


def _apply_bare(store: Any, op: tuple[Any, ...]) -> Any:
    result = _apply(store, op)
    if isinstance(result, str) and NO_EDGES in result:
        return "no edges"  # the stores word it with their path
    return result


@pytest.mark.slow  # 60 random sequences per store
@pytest.mark.parametrize("kind", ["indexed"])
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(_ops, max_size=30))
def test_durable_store_without_edges_matches_reference(
    kind: str, ops: list[tuple[Any, ...]]
) -> None:
    memory = MemoryFrontier(parents=False)
    memory.ensure_columns(["c1"])
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "f.db"
        db = DURABLE[kind](path, parents=False)
        db.ensure_columns(["c1"])
        try:
            for op in ops:
                if op[0] == "reopen":
                    db.commit()
                    db.close()
                    db = DURABLE[kind](path, parents=False)
                else:
                    assert _apply_bare(db, op) == _apply_bare(memory, op), op
                assert list(db.iter_urls()) == list(memory.iter_urls())
        finally:
            db.close()


# -- a crawl opens its DB for its strategy ------------------------------------------------------


class _Parents(Strategy):
    """Reads the parents of every page it is given (only a DB with edges can answer)."""

    name: ClassVar[str] = "test-parents"
    needs_parents: ClassVar[bool] = True
    seen: ClassVar[list[list[str]]] = []

    def on_page(self, page: Page, relevance: float | None, queued: QueuedURL) -> Decision:
        self.seen.append(self.view.parents(queued.url))
        return Decision(links=[LinkScore(link, 0.1) for link in page.links])


register_strategy("test-parents")(_Parents)


def test_a_crawl_keeps_edges_only_for_a_strategy_that_reads_them(
    sample_replay: ReplayProcess, tmp_path: Path
) -> None:
    for strategy in ("bfs", "test-parents"):
        run = tmp_path / strategy
        crawl(list(SAMPLE_SEEDS), run, strategy=strategy, max_pages=6, proxy=sample_replay.proxy_url,
              delay=0.0)  # fmt: skip
        pages = [json.loads(x) for x in (run / "pages.jsonl").read_text().splitlines()]
        assert len(pages) == 6
        with sqlite3.connect(run / "crawl.db") as raw:
            edges = raw.execute("SELECT count(*) FROM links").fetchone()[0]
            mode = raw.execute("SELECT value FROM meta WHERE key = '_parents'").fetchone()[0]
        raw.close()
        assert (mode, edges > 0) == (("1", True) if strategy == "test-parents" else ("0", False))
        # the first parent is handed out either way: every page but the seeds has one
        assert all(p["parent"] for p in pages if p["url"] not in SAMPLE_SEEDS)
    assert _Parents.seen[0] == []  # the seed
    assert all(len(parents) >= 1 for parents in _Parents.seen[1:])


def test_backlinks_fold_the_edges_added_since(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``parents`` after the reverse index was built, across its rebuilds (every 2 edges)."""
    monkeypatch.setattr("focuscrawl.frontier.indexed.links.CHUNK_ROWS", 2)
    db = IndexedFrontier(tmp_path / "f.db")
    memory = MemoryFrontier()
    for store in (db, memory):
        store.add_many([_item("http://a/c", "http://a/p1"), _item("http://a/d", "http://a/p1")])
    assert db.parents("http://a/c") == memory.parents("http://a/c") == ["http://a/p1"]
    for i in range(2, 7):  # p2 .. p6 link to c and d; c also gets an edge from each again
        for store in (db, memory):
            store.add_many(
                [_item("http://a/d", f"http://a/p{i}"), _item("http://a/c", f"http://a/p{i}")]
            )
            store.add_many([_item("http://a/c", f"http://a/p{i}", 5)])
        assert db.parents("http://a/c") == memory.parents("http://a/c")
    assert db.parents("http://a/d") == [f"http://a/p{i}" for i in range(1, 7)]
    # c (seq 2) was found before d (seq 3); c's count from p4: the later 5
    assert db.children_counts("http://a/p4") == [("http://a/c", 5), ("http://a/d", 1)]
    assert memory.children_counts("http://a/p4") == db.children_counts("http://a/p4")
    db.commit()
    db.close()
    db = IndexedFrontier(tmp_path / "f.db")  # built again from the links rows
    assert db.parents("http://a/c") == memory.parents("http://a/c")
    db.close()
