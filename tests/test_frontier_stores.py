"""One property-based suite for every store: random operation sequences give the same
results, pops, states, scores, columns, edges and run state as the in-memory reference,
every role of the protocol (queue, columns, link graph, journal) exercised.

Discovery order (``seq``) is compared as an order, not as numbers: the reference
counts 1, 2, 3 ..., the Redis store takes blocks from a shared counter (gaps).
"""

from __future__ import annotations

import copy
import dataclasses
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from focuscrawl.exceptions import FrontierError
from focuscrawl.frontier.indexed import IndexedFrontier
from focuscrawl.frontier.memory import MemoryFrontier
from focuscrawl.frontier.redis.store import RedisFrontier
from focuscrawl.types import Merge, QueuedURL, URLState
from tests.redis_server import RedisServer, redis_server_fixture  # noqa: F401 (the fixture)

Q = URLState.QUEUED
_URLS = [f"http://h{i % 4}/{i}" for i in range(12)]
_HOSTS = ["h0", "h1", "h2", "h3"]
_url = st.sampled_from(_URLS)
_score = st.integers(-3, 6).map(float) | st.sampled_from([0.5, -0.0, 1e300])  # no inf: inf - inf
_merge = st.sampled_from(list(Merge))
_tier = st.integers(0, 2)
_column = st.sampled_from(["score", "c1", "c2"])  # c2 exists only after an "ensure"
_item = st.tuples(_url, _score, st.integers(0, 3), st.none() | _url, st.integers(1, 3), _tier)
_KEYS = ["layer", "state"]
_ops = st.one_of(
    st.tuples(st.just("add_many"), st.lists(_item, max_size=6), _merge, st.integers(0, 2)),
    st.tuples(st.just("add"), _item, _merge, st.integers(0, 2)),
    st.tuples(st.just("update"), st.lists(st.tuples(_url, _score), max_size=5), _merge),
    st.tuples(st.just("values"), _column, st.lists(st.tuples(_url, _score), max_size=5), _merge),
    st.tuples(st.just("raise"), _url, _score, st.none() | _url),
    st.tuples(
        st.just("pop"),
        st.integers(0, 6),
        st.sets(st.sampled_from(_HOSTS), max_size=2),
        st.integers(0, 2),
        st.none() | st.integers(0, 2),
    ),
    st.tuples(st.just("mark"), _url, st.sampled_from(list(URLState)), st.none() | _score),
    st.tuples(st.just("tier"), st.lists(st.tuples(_url, _tier), max_size=4)),
    st.tuples(
        st.just("host"),
        st.sampled_from([*_HOSTS, "nowhere"]),
        _score,
        _merge,
        st.sets(st.sampled_from(list(URLState)), min_size=1, max_size=3),
    ),
    st.tuples(st.just("top"), _column, st.sampled_from(list(URLState))),
    st.tuples(st.just("value"), _url, _column),
    st.tuples(st.just("ensure"), st.sampled_from([["c2"], ["c1", "c2"], ["score"]])),
    st.tuples(
        st.just("combine"),
        _column,
        st.lists(st.tuples(_column, st.sampled_from([0.5, 1.0, -2.0])), max_size=2),
        st.booleans(),
    ),
    st.tuples(st.just("requeue")),
    st.tuples(st.just("get"), _url),
    st.tuples(st.just("known"), st.lists(_url, max_size=4)),
    st.tuples(st.just("children"), _url),
    st.tuples(st.just("meta"), st.sampled_from(_KEYS), st.text(max_size=3)),
    st.tuples(st.just("commit")),
    st.tuples(st.just("reopen")),
    st.tuples(st.just("rollback")),
)


class _Store:
    """A store under test, reopened on demand over the same data."""

    def __init__(self, open_: Callable[[], Any]) -> None:
        self.open = open_
        self.db = open_()

    def reopen(self) -> None:
        self.db.commit()
        self.db.close()
        self.db = self.open()

    def rollback(self) -> None:
        """Close without a commit (as a crash would) and open again."""
        self.db.close()
        self.db = self.open()


def _rank(db: Any) -> dict[int, int]:
    """seq -> discovery rank (1, 2, 3 ...), the reference's numbering."""
    return {seq: i for i, seq in enumerate(sorted(q.seq for q in db.iter_urls()), 1)}


def _norm(db: Any, value: Any) -> Any:
    """``value`` with every QueuedURL's seq replaced by its discovery rank."""
    if isinstance(value, list) and value and isinstance(value[0], QueuedURL):
        rank = _rank(db)
        return [dataclasses.replace(q, seq=rank[q.seq]) for q in value]
    if isinstance(value, QueuedURL):
        return dataclasses.replace(value, seq=_rank(db)[value.seq])
    return value


def _apply(db: Any, op: tuple[Any, ...]) -> Any:
    try:
        return _norm(db, _apply_op(db, op))
    except FrontierError as exc:  # an unknown column: refused alike by every store
        return f"error: {exc}"


def _apply_op(db: Any, op: tuple[Any, ...]) -> Any:
    kind = op[0]
    if kind == "add_many":
        items = [(u, s, d, p, u.split("/")[2], c, t) for u, s, d, p, c, t in op[1]]
        return db.add_many(items, merge=op[2], layer=op[3])
    if kind == "add":
        u, s, d, p, c, t = op[1]
        host = u.split("/")[2]
        return db.add(u, s, depth=d, parent=p, host=host, merge=op[2], layer=op[3], count=c, tier=t)
    if kind == "update":
        return db.update_scores(op[1], op[2])
    if kind == "values":
        return db.update_values(op[1], op[2], op[3])
    if kind == "raise":
        return db.raise_children(op[1], op[2], exclude=op[3])
    if kind == "pop":
        return db.pop(op[1], exclude_hosts=op[2], max_per_host=op[3], max_layer=op[4])
    if kind == "mark":
        if db.state(op[1]) is None:
            return None
        return db.mark(op[1], op[2], score=op[3])
    if kind == "tier":
        return db.set_tier(op[1])
    if kind == "host":
        return db.update_host(op[1], op[2], op[3], states=op[4])
    if kind == "top":
        return db.top(op[1], op[2])
    if kind == "value":
        return db.value(op[1], op[2])
    if kind == "ensure":
        return db.ensure_columns(op[1])
    if kind == "combine":
        return db.combine_columns(op[1], op[2], add=op[3])
    if kind == "requeue":
        return db.requeue_in_flight()
    if kind == "get":
        return db.get(op[1])
    if kind == "known":
        return db.known(op[1])
    if kind == "children":
        return db.children(op[1])
    if kind == "meta":
        db.set_meta(op[1], op[2])
        return [db.get_meta(key) for key in _KEYS]
    if kind == "commit":
        return db.commit()
    return None


def _snapshot(db: Any) -> Any:
    edges = {u: (db.parents(u), db.children_counts(u)) for u in _URLS}
    return (
        _norm(db, list(db.iter_urls())),
        [db.count(s) for s in URLState],
        db.count(),
        [db.host_count(h, [Q]) for h in _HOSTS],
        [db.host_count(h) for h in _HOSTS],
        {u: (db.state(u), db.value(u, "c1")) for u in _URLS},
        [_norm(db, db.get(u)) for u in _URLS],
        db.known(_URLS),
        db.host_counts([*_HOSTS, "nowhere"]),
        edges,
        db.column_names(),
        [db.get_meta(key) for key in _KEYS],
    )


def _check(store: _Store, ops: list[tuple[Any, ...]]) -> None:
    """``ops`` on the store and on the reference give the same results. ``rollback``
    (in a store with transactions) takes the reference back to its last commit."""
    memory = MemoryFrontier()
    memory.ensure_columns(["c1"])
    store.db.ensure_columns(["c1"])
    store.db.commit()
    committed = copy.deepcopy(memory)
    for op in ops:
        if op[0] == "reopen":  # columns, queues and heads come back from the store
            store.reopen()
            committed = copy.deepcopy(memory)
            assert _snapshot(store.db) == _snapshot(memory)
            continue
        if op[0] == "rollback":  # exactly the uncommitted work is lost
            store.rollback()
            memory = copy.deepcopy(committed)
            assert _snapshot(store.db) == _snapshot(memory)
            continue
        if op[0] == "commit":
            committed = copy.deepcopy(memory)
        assert _apply(store.db, op) == _apply(memory, op), op
        if isinstance(store.db, RedisFrontier):
            _check_heads(store.db)
    assert _snapshot(store.db) == _snapshot(memory)
    # what is queued pops in the reference's order, to the last URL
    drain = ("pop", 100, set(), 0, None)
    assert _apply(store.db, drain) == _apply(memory, drain)


def _check_heads(db: RedisFrontier) -> None:
    """The Redis store's view of its queues' heads is Redis's, and every head is in its
    heap (a head missing there would never be popped)."""
    fresh = RedisFrontier(db.url, prefix=db.prefix)
    assert fresh.core.heads.heads == db.core.heads.heads
    assert db.core.heads.in_heap() == set(db.core.heads.heads)
    fresh.close()


_SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
_DURABLE = settings(_SETTINGS, max_examples=200)  # the journal's: a pattern needs a few steps


@_SETTINGS
@given(ops=st.lists(_ops, max_size=30))
def test_memory_store_matches_reference(ops: list[tuple[Any, ...]]) -> None:
    """The reference against a second copy of itself: the suite's own check (no reopen: it
    keeps nothing)."""
    store = _Store(MemoryFrontier)
    _check(store, [op for op in ops if op[0] not in ("reopen", "rollback")])


@_SETTINGS
@given(ops=st.lists(_ops, max_size=30))
def test_indexed_store_matches_reference(ops: list[tuple[Any, ...]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "f.db"
        store = _Store(lambda: IndexedFrontier(path, buffer_size=2, compact_rows=6))
        try:
            _check(store, ops)
        finally:
            store.db.close()


@_DURABLE
@given(ops=st.lists(_ops, max_size=15))
def test_indexed_store_keeps_every_committed_change(ops: list[tuple[Any, ...]]) -> None:
    """Reopened after every operation (a commit first): each change of a row written in
    an earlier commit comes back from the journal."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "f.db"
        store = _Store(lambda: IndexedFrontier(path, buffer_size=2, compact_rows=6))
        try:
            _check(store, [step for op in ops for step in (op, ("reopen",))])
        finally:
            store.db.close()


@_DURABLE
@given(done=st.lists(_ops, max_size=15), lost=st.lists(_ops, min_size=1, max_size=15))
def test_indexed_store_loses_exactly_the_uncommitted_work(
    done: list[tuple[Any, ...]], lost: list[tuple[Any, ...]]
) -> None:
    """A close without commit (as a crash) takes the store back to its last commit: all
    of ``done`` is there, nothing of ``lost``."""
    lost = [op for op in lost if op[0] not in ("commit", "reopen", "rollback")]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "f.db"
        store = _Store(lambda: IndexedFrontier(path, buffer_size=2, compact_rows=6))
        try:
            _check(store, [*done, ("commit",), *lost, ("rollback",)])
        finally:
            store.db.close()


@pytest.mark.parametrize("partitions", [1, 3, 64], ids=["one-partition", "3", "64"])
@_SETTINGS
@given(ops=st.lists(_ops, max_size=30))
def test_redis_store_matches_reference(
    redis_server: RedisServer,
    partitions: int,
    ops: list[tuple[Any, ...]],
) -> None:
    prefix = f"t{uuid.uuid4().hex[:12]}"
    store = _Store(lambda: RedisFrontier(redis_server.url, prefix=prefix, partitions=partitions))
    try:  # (every write is durable at once: no rollback)
        _check(store, [op for op in ops if op[0] != "rollback"])
    finally:
        store.db.drop()
        store.db.close()
