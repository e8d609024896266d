"""The frontier as strategies see it: merges into any state, (tier, score) pairs,
tier-strict pops, link counts t(i, j), extra columns, ``top``, rescore by host.

Hand-computed cases, run on every store; the durable stores are also compared
with the reference on random sequences of the same operations (tests/test_frontier.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from focuscrawl.exceptions import ConfigError, FrontierError
from focuscrawl.frontier.factory import open_frontier
from focuscrawl.frontier.indexed import IndexedFrontier
from focuscrawl.frontier.memory import MemoryFrontier
from focuscrawl.settings import CrawlSettings, Settings
from focuscrawl.types import Merge, QueuedURL, URLState

Q, F, X = URLState.QUEUED, URLState.FETCHED, URLState.FAILED


def _open(kind: str, path: Path) -> Any:
    assert kind == "indexed"
    return IndexedFrontier(path, buffer_size=2, compact_rows=6)


@pytest.fixture(params=["indexed", "memory"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    if request.param == "memory":
        yield MemoryFrontier()
        return
    frontier = _open(request.param, tmp_path / "f.db")
    yield frontier
    frontier.close()


def add(store: Any, url: str, score: float, **kw: Any) -> bool:
    kw.setdefault("depth", 1)
    kw.setdefault("parent", None)
    kw.setdefault("host", url.split("/")[2])
    return bool(store.add(url, score, **kw))


def _urls(queued: list[QueuedURL]) -> list[str]:
    return [q.url for q in queued]


# -- merges reach every state; score and tier merge as a pair -----------------------------


def test_cash_added_to_in_flight_and_fetched_urls_is_kept(store: Any) -> None:
    add(store, "http://a/x", 1.0)
    assert _urls(store.pop(1)) == ["http://a/x"]
    add(store, "http://a/x", 0.5, merge=Merge.ADD)  # in flight: 1.0 + 0.5
    assert store.get("http://a/x").score == 1.5
    store.mark("http://a/x", F)
    add(store, "http://a/x", 0.25, merge=Merge.ADD)  # fetched: 1.5 + 0.25
    assert (store.state("http://a/x"), store.get("http://a/x").score) == (F, 1.75)
    store.mark("http://a/x", X)
    add(store, "http://a/x", 0.25, merge=Merge.ADD)  # failed too
    store.mark("http://a/x", Q)  # a re-crawl hands the cash on
    assert [(q.url, q.score) for q in store.pop(5)] == [("http://a/x", 2.0)]


@pytest.mark.parametrize(
    ("merge", "new", "expected"),
    [
        (Merge.KEEP, (2, 0.5), (1, 5.0)),
        (Merge.MAX, (2, 0.5), (2, 0.5)),  # a higher tier wins whatever the score
        (Merge.MAX, (1, 4.0), (1, 5.0)),
        (Merge.MAX, (1, 6.0), (1, 6.0)),
        (Merge.MAX, (0, 9.0), (1, 5.0)),
        (Merge.ADD, (2, 0.5), (2, 5.5)),
        (Merge.ADD, (0, 9.0), (1, 14.0)),  # scores add, the higher tier stays
        (Merge.SET, (0, 9.0), (0, 9.0)),
    ],
    ids=["keep", "max-tier-up", "max-score-down", "max-score-up", "max-tier-down",
         "add-tier-up", "add-tier-down", "set"],
)  # fmt: skip
def test_tier_and_score_merge_as_a_pair(
    store: Any, merge: Merge, new: tuple[int, float], expected: tuple[int, float]
) -> None:
    add(store, "http://a/x", 5.0, tier=1)
    for state in (Q, F):  # the same rule whatever the state
        if state is F:
            store.mark("http://a/x", F, score=5.0)
            store.set_tier([("http://a/x", 1)])
        add(store, "http://a/x", new[1], tier=new[0], merge=merge)
        got = store.get("http://a/x")
        assert (got.tier, got.score) == expected


def test_update_scores_leaves_tiers_alone(store: Any) -> None:
    add(store, "http://a/x", 5.0, tier=2)
    assert store.update_scores([("http://a/x", 1.0)], Merge.SET) == 1
    assert (store.get("http://a/x").tier, store.get("http://a/x").score) == (2, 1.0)


def test_batch_pairs_and_a_parent_added_later_in_its_batch(store: Any) -> None:
    """One by one: p becomes DROPPED (0, 0.0) as c's parent, then (1, 2.0) is added to it."""
    items = [
        ("http://a/c", 1.0, 1, "http://a/p", "a", 3, 0),
        ("http://a/p", 2.0, 0, None, "a", 1, 1),
        ("http://a/c", 0.5, 1, None, "a", 1, 2),
        ("http://a/c", 0.25, 1, None, "a", 1, 0),
    ]
    assert store.add_many(items, merge=Merge.ADD) == 1
    parent, child = store.get("http://a/p"), store.get("http://a/c")
    assert (store.state("http://a/p"), parent.tier, parent.score) == (URLState.DROPPED, 1, 2.0)
    assert (store.state("http://a/c"), child.tier, child.score) == (Q, 2, 1.75)
    assert store.children_counts("http://a/p") == [("http://a/c", 3)]


def test_out_of_range_tier_is_refused(store: Any) -> None:
    with pytest.raises(FrontierError, match="tier of 'http://a/x' is 2147483648"):
        add(store, "http://a/x", 1.0, tier=2**31)
    assert store.count() == 0


# -- link counts t(i, j) ----------------------------------------------------------------


def test_children_counts_replace_not_sum(store: Any) -> None:
    add(store, "http://a/p", 1.0)
    add(store, "http://a/c2", 0.0)
    add(store, "http://a/c1", 0.0, parent="http://a/p", count=3)
    add(store, "http://a/c2", 0.0, parent="http://a/p", count=1)
    add(store, "http://a/c1", 0.0, parent="http://a/p", count=2)  # re-crawl: 2 now
    # discovery order: c2 (seq 2) before c1 (seq 3)
    assert store.children_counts("http://a/p") == [("http://a/c2", 1), ("http://a/c1", 2)]
    assert store.children("http://a/p") == ["http://a/c2", "http://a/c1"]
    assert store.children_counts("http://a/c1") == []
    assert store.children_counts("http://a/unknown") == []


# -- tiers in pop -------------------------------------------------------------------------


def test_pop_is_tier_strict(store: Any) -> None:
    add(store, "http://a/1", 0.1, tier=1)
    add(store, "http://b/1", 9.0)
    add(store, "http://b/2", 8.0)
    got = store.pop(3)
    assert [(q.url, q.tier) for q in got] == [("http://a/1", 1)]  # b waits, though idle
    assert _urls(store.pop(3)) == ["http://b/1", "http://b/2"]
    add(store, "http://a/2", 0.2, tier=2)
    add(store, "http://a/3", 0.3, tier=2)
    add(store, "http://c/1", 5.0, tier=1)
    assert store.pop(5, exclude_hosts={"a"}) == []  # the top tier is all on host a
    assert _urls(store.pop(5, max_per_host=1)) == ["http://a/3"]  # capped: no tier 1
    assert _urls(store.pop(5)) == ["http://a/2"]
    assert _urls(store.pop(5)) == ["http://c/1"]


def test_tier_of_a_later_layer_does_not_block_a_layered_pop(store: Any) -> None:
    add(store, "http://a/0", 1.0, layer=0)
    add(store, "http://a/1", 1.0, layer=1, tier=3)
    assert _urls(store.pop(5, max_layer=0)) == ["http://a/0"]
    add(store, "http://b/0", 2.0, layer=0, tier=1)
    add(store, "http://b/1", 3.0, layer=0)
    assert _urls(store.pop(5, max_layer=0)) == ["http://b/0"]


def test_set_tier_reorders_the_queue(store: Any) -> None:
    for i, score in enumerate([3.0, 2.0, 1.0]):
        add(store, f"http://h{i}/x", score)
    updates = [("http://h2/x", 5), ("http://unknown/x", 1), ("http://h1/x", 1), ("http://h2/x", 1)]
    assert store.set_tier(updates) == 2  # the last of repeats wins: h2 gets tier 1
    assert [(q.url, q.tier) for q in store.pop(5)] == [("http://h1/x", 1), ("http://h2/x", 1)]
    assert store.set_tier([("http://h1/x", -1)]) == 1  # in flight: set, not popped
    store.mark("http://h1/x", Q)
    assert _urls(store.pop(5)) == ["http://h0/x"]
    assert [(q.url, q.tier) for q in store.pop(5)] == [("http://h1/x", -1)]
    assert store.set_tier([]) == 0


# -- rescore by host ----------------------------------------------------------------------


def test_update_host(store: Any) -> None:
    add(store, "http://a/1", 1.0)
    add(store, "http://a/2", 2.0)
    add(store, "http://a/3", 3.0)
    add(store, "http://b/1", 1.0)
    assert _urls(store.pop(1)) == ["http://a/3"]
    store.mark("http://a/3", F)
    assert store.update_host("a", 1.5, Merge.MAX) == 1  # only a/1 goes up; fetched a/3 untouched
    assert store.update_host("a", 0.5, Merge.ADD, states=(Q, F)) == 3
    assert [store.get(f"http://a/{i}").score for i in (1, 2, 3)] == [2.0, 2.5, 3.5]
    assert store.update_host("a", 9.0, Merge.KEEP) == 0
    assert store.update_host("nowhere", 9.0, Merge.SET) == 0
    assert store.update_host("a", 0.0, Merge.SET, states=[URLState.IN_FLIGHT]) == 0
    assert store.update_host("a", 0.0, Merge.SET) == 2
    assert _urls(store.pop(1)) == ["http://b/1"]
    assert store.get("http://b/1").score == 1.0


# -- extra columns and top ----------------------------------------------------------------


def test_extra_columns(store: Any) -> None:
    store.ensure_columns(["rel", "cash"])
    store.ensure_columns(["cash", "score"])  # idempotent; "score" always exists
    add(store, "http://a/x", 2.0)
    add(store, "http://a/y", 1.0)
    assert store.value("http://a/x", "rel") == 0.0
    assert store.value("http://a/unknown", "rel") is None
    assert store.value("http://a/x", "score") == 2.0
    updates = [("http://a/x", 0.5), ("http://a/unknown", 1.0), ("http://a/x", 0.25)]
    assert store.update_values("rel", updates, Merge.ADD) == 1
    assert store.value("http://a/x", "rel") == 0.75
    assert store.update_values("rel", [("http://a/x", 0.5), ("http://a/y", -1.0)], Merge.MAX) == 0
    assert store.update_values("rel", [("http://a/y", -1.0)], Merge.SET) == 1
    assert store.update_values("rel", [("http://a/y", 9.0)], Merge.KEEP) == 0
    assert store.update_values("score", [("http://a/y", 4.0)], Merge.ADD) == 1
    assert (store.value("http://a/y", "rel"), store.get("http://a/y").score) == (-1.0, 5.0)
    assert store.value("http://a/x", "cash") == 0.0
    for call in (
        lambda: store.value("http://a/x", "nope"),
        lambda: store.update_values("nope", [("http://a/x", 1.0)], Merge.ADD),
        lambda: store.top("nope"),
    ):
        with pytest.raises(FrontierError, match="unknown column 'nope'"):
            call()
    with pytest.raises(FrontierError, match="bad column name"):
        store.ensure_columns(["no spaces"])
    with pytest.raises(FrontierError, match="NaN"):
        store.update_values("rel", [("http://a/x", float("nan"))], Merge.ADD)


def test_top(store: Any) -> None:
    store.ensure_columns(["cash"])
    for i in range(4):
        add(store, f"http://a/{i}", float(i))
    assert store.top("score") is None  # nothing fetched yet
    assert store.top("score", Q) == ("http://a/3", 3.0)
    store.pop(3)  # a/3, a/2, a/1
    for url in ("http://a/1", "http://a/2", "http://a/3"):
        store.mark(url, F)
    assert store.top("score") == ("http://a/3", 3.0)
    store.update_values("cash", [("http://a/2", -1.0), ("http://a/3", -2.0)], Merge.SET)
    assert store.top("cash") == ("http://a/1", 0.0)  # never set: 0.0 beats -1.0
    store.update_values("cash", [("http://a/1", -1.0)], Merge.SET)
    assert store.top("cash") == ("http://a/1", -1.0)  # tied with a/2: discovery order
    store.update_scores([("http://a/2", 3.0)], Merge.SET)
    assert store.top("score") == ("http://a/2", 3.0)  # tied with a/3: discovery order
    assert store.top("cash", Q) == ("http://a/0", 0.0)
    assert store.top("score", URLState.DROPPED) is None


# -- durability of the new state ------------------------------------------------------------


@pytest.mark.parametrize("kind", ["indexed"])
def test_columns_tiers_and_counts_persist_committed_only(tmp_path: Path, kind: str) -> None:
    path = tmp_path / "f.db"
    db = _open(kind, path)
    db.ensure_columns(["cash"])
    add(db, "http://a/p", 1.0, tier=1)
    add(db, "http://a/c", 1.0, parent="http://a/p", count=4)
    db.update_values("cash", [("http://a/c", 2.5)], Merge.SET)
    db.commit()
    db.ensure_columns(["lost"])
    db.update_values("cash", [("http://a/c", 7.0)], Merge.SET)
    db.set_tier([("http://a/c", 5)])
    add(db, "http://a/c", 0.0, parent="http://a/p", count=9)
    db.close()  # without commit: discarded, like a crash
    db = _open(kind, path)
    assert db.value("http://a/c", "cash") == 2.5
    assert db.get("http://a/c").tier == 0
    assert db.children_counts("http://a/p") == [("http://a/c", 4)]
    with pytest.raises(FrontierError, match="unknown column 'lost'"):
        db.value("http://a/c", "lost")
    assert [(q.url, q.tier) for q in db.pop(5)] == [("http://a/p", 1)]
    db.close()


# -- the factory ----------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "kind"), [("indexed", IndexedFrontier)])
def test_open_frontier_by_settings(tmp_path: Path, name: str, kind: type) -> None:
    settings = Settings(crawl=CrawlSettings(frontier=name))
    db = open_frontier(settings, tmp_path / "f.db")
    try:
        assert isinstance(db, kind)
        add(db, "http://a/x", 1.0)
        db.commit()
    finally:
        db.close()
    db = open_frontier(settings, tmp_path / "f.db")
    assert db.count() == 1
    db.close()


def test_open_frontier_unknown_store_is_one_config_line(tmp_path: Path) -> None:
    settings = Settings(crawl=CrawlSettings(frontier="cassandra"))
    with pytest.raises(ConfigError) as info:
        open_frontier(settings, tmp_path / "f.db")
    assert str(info.value) == "config: crawl.frontier = 'cassandra' (one of: indexed, redis)"
    assert not (tmp_path / "f.db").exists()


def test_the_removed_sqlite_store_is_one_config_line(tmp_path: Path) -> None:
    settings = Settings(crawl=CrawlSettings(frontier="sqlite"))
    with pytest.raises(ConfigError, match='"sqlite": the plain SQLite store is gone'):
        open_frontier(settings, tmp_path / "f.db")
    assert not (tmp_path / "f.db").exists()
