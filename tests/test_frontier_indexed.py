"""The indexed crawl DB beyond the shared store tests (tests/test_frontier.py).

Fingerprint collisions in its hash index, growth of the arrays and the index,
the journal and its compaction across reopen, the pop buffer and its fallbacks on
larger random workloads against the reference store, and damaged files.
"""

from __future__ import annotations

import hashlib
import random
import sqlite3
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from focuscrawl.exceptions import FrontierError
from focuscrawl.frontier.indexed import IndexedFrontier
from focuscrawl.frontier.memory import MemoryFrontier
from focuscrawl.types import Merge, QueuedURL, URLState
from tests.test_frontier import _apply, _ops

Q, F = URLState.QUEUED, URLState.FETCHED


def add(store: Any, url: str, score: float, **kw: Any) -> bool:
    kw.setdefault("depth", 1)
    kw.setdefault("parent", None)
    kw.setdefault("host", url.split("/")[2])
    return bool(store.add(url, score, **kw))


def _snapshot(store: Any) -> list[QueuedURL]:
    return list(store.iter_urls())


def test_colliding_fingerprints_are_told_apart(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Equal ``h``: linear probing puts the later URLs in the next slots, ``h2`` tells them apart."""
    fake = {f"http://a/{i}": (0, i) for i in range(8)} | {"http://b/x": (1, 99)}
    monkeypatch.setattr("focuscrawl.frontier.indexed.core.url_key", fake.__getitem__)
    for module in ("indexed.adds", "indexed.columns"):
        monkeypatch.setattr(
            f"focuscrawl.frontier.{module}.fingerprints",
            lambda urls: np.array([fake[u] for u in urls], np.int64).reshape(-1, 2),
        )
    monkeypatch.setattr(
        "focuscrawl.frontier.indexed.adds.keys_of", lambda urls: [fake[u] for u in urls]
    )
    # a page's lookup hashes in its own loop: its digest -> halves, before the shift of h
    halves = {
        hashlib.blake2b(u.encode(), digest_size=16).digest(): (2 * h, h2)
        for u, (h, h2) in fake.items()
    }
    monkeypatch.setattr("focuscrawl.frontier.indexed.table.TWO_INT64", halves.__getitem__)
    path = tmp_path / "f.db"
    db = IndexedFrontier(path)
    for i in range(4):
        add(db, f"http://a/{i}", float(i))
    add(db, "http://b/x", 9.0)  # slot 1 is taken by http://a/1: goes to slot 4
    for i in range(4, 7):
        add(db, f"http://a/{i}", float(i))
    assert [db.get(f"http://a/{i}").score for i in range(7)] == [float(i) for i in range(7)]  # type: ignore[union-attr]
    assert db.update_scores([("http://a/2", 0.5), ("http://b/x", 1.0)], Merge.ADD) == 2
    assert db.update_scores([("http://a/7", 1.0)], Merge.ADD) == 0  # unknown: ignored
    assert db.state("http://a/7") is None
    db.mark("http://a/3", F)
    assert [(q.url, q.score) for q in db.pop(3)] == [
        ("http://b/x", 10.0),
        ("http://a/6", 6.0),
        ("http://a/5", 5.0),
    ]
    db.commit()
    db.close()
    db = IndexedFrontier(path)  # the index is rebuilt from the stored fingerprints
    assert db.state("http://a/3") is F
    assert db.get("http://a/2") == QueuedURL("http://a/2", 2.5, 1, "a", None, 0, 3)
    assert add(db, "http://a/7", 7.0) is True  # no probe limit: slot 8
    assert db.get("http://a/7") == QueuedURL("http://a/7", 7.0, 1, "a", None, 0, 9)
    db.close()


def test_growth_beyond_initial_capacity(tmp_path: Path) -> None:
    """5,000 URLs added 700 at a time (the columns and the index grow several times):
    every URL is found again, in this process and after a reopen."""
    path = tmp_path / "f.db"
    db = IndexedFrontier(path)
    rng = random.Random(3)
    scores = [float(rng.randrange(100)) for _ in range(5000)]
    for lo in range(0, 5000, 700):
        items = [
            (f"http://h{i % 13}/{i}", scores[i], 1, None, f"h{i % 13}", 1, 0)
            for i in range(lo, min(lo + 700, 5000))
        ]
        assert db.add_many(items) == len(items)
    db.commit()
    db.close()
    db = IndexedFrontier(path)
    assert db.count() == 5000
    assert db.count(Q) == 5000
    assert db.host_count("h3") == len(range(3, 5000, 13))
    for i in (0, 1023, 1024, 4999):
        assert db.get(f"http://h{i % 13}/{i}") == QueuedURL(
            f"http://h{i % 13}/{i}", scores[i], 1, f"h{i % 13}", None, 0, i + 1
        )
    expected = sorted(range(5000), key=lambda i: (-scores[i], i))[:40]
    assert [q.seq - 1 for q in db.pop(40)] == expected
    db.close()


@pytest.mark.parametrize("part_rows", [7, 1 << 20], ids=["many-parts", "one-part"])
def test_journal_compaction_and_reopen(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, part_rows: int
) -> None:
    """Snapshot, then fresh rows, then journal: every mix reopens to the same state."""
    monkeypatch.setattr("focuscrawl.frontier.indexed.storage.disk.PART_ROWS", part_rows)
    path = tmp_path / "f.db"
    db = IndexedFrontier(path, compact_rows=25)
    memory = MemoryFrontier()
    rng = random.Random(5)
    compactions = 0
    for step in range(12):
        for store in (db, memory):
            store.add_many(
                [
                    (f"http://h{i % 3}/{i}", float(i % 5), 1, None, f"h{i % 3}", 1, 0)
                    for i in range(step * 4, step * 4 + 6)
                ],
                merge=Merge.ADD,
            )
        ups = [(f"http://h{i % 3}/{i}", 0.5) for i in rng.sample(range(step * 4 + 6), 5)]
        assert db.update_scores(ups, Merge.ADD) == memory.update_scores(ups, Merge.ADD)
        assert db.pop(2) == memory.pop(2)
        db.commit()
        with sqlite3.connect(path) as raw:
            journal = raw.execute("SELECT count(*) FROM journal").fetchone()[0]
            snapshot = raw.execute("SELECT count(*) FROM snapshot").fetchone()[0]
        raw.close()
        if journal == 0:  # folded: one BLOB per part of each of the 7 columns
            compactions += 1
            assert snapshot == 7 * -(-db.count() // part_rows)
        if step % 3 == 1:
            db.close()
            db = IndexedFrontier(path, compact_rows=25)
        assert _snapshot(db) == _snapshot(memory)
    assert [db.count(s) for s in URLState] == [memory.count(s) for s in URLState]
    assert compactions >= 3  # ~11 journal rows per commit, folded beyond 25
    db.close()


@pytest.mark.parametrize("tiered", [False, True], ids=["one-tier", "tiers"])
@pytest.mark.parametrize("buffer_size", [1, 8, 4096], ids=["tiny", "small", "default"])
def test_pop_matches_reference_on_a_larger_queue(
    tmp_path: Path, buffer_size: int, tiered: bool
) -> None:
    """600 URLs with tied scores, excluded hosts, caps, layers (and tiers, which a pop
    may not cross): the buffer, its rebuilds and the full scans must all give exactly
    the reference pops."""
    db = IndexedFrontier(tmp_path / "f.db", buffer_size=buffer_size, compact_rows=500)
    memory = MemoryFrontier()
    rng = random.Random(buffer_size + tiered)
    hosts = [f"h{i}" for i in range(12)]  # > 8: the general per-host cap path too
    for layer in range(3):
        items = []
        for i in range(200):
            url = f"http://{rng.choice(hosts)}/{layer}-{i}"
            tier = rng.choice([0, 0, 0, 0, 1]) if tiered else 0
            items.append((url, float(rng.randrange(6)), 1, None, url.split("/")[2], 1, tier))
        assert db.add_many(items, layer=layer) == memory.add_many(items, layer=layer)
    urls = [q.url for q in memory.iter_urls()]
    for round_ in range(60):
        merge = rng.choice(list(Merge))
        ups = [(rng.choice(urls), float(rng.randrange(-2, 8))) for _ in range(rng.randrange(30))]
        assert db.update_scores(ups, merge) == memory.update_scores(ups, merge)
        if tiered:
            tiers = [(url, rng.choice([0, 0, 1, 2])) for url in rng.sample(urls, 6)]
            assert db.set_tier(tiers) == memory.set_tier(tiers)
        kwargs = {
            "exclude_hosts": set(rng.sample(hosts, rng.randrange(4))),
            "max_per_host": rng.randrange(4),
            "max_layer": rng.choice([None, 0, 1, 2]),
        }
        n = rng.randrange(1, 25)
        assert db.pop(n, **kwargs) == memory.pop(n, **kwargs), (round_, kwargs)
        for url in rng.sample(urls, 5):
            state = rng.choice([Q, F, URLState.IN_FLIGHT])
            db.mark(url, state)
            memory.mark(url, state)
        if round_ % 20 == 19:
            assert db.requeue_in_flight() == memory.requeue_in_flight()
            db.commit()
    assert _snapshot(db) == _snapshot(memory)
    assert [db.host_count(h, [Q]) for h in hosts] == [memory.host_count(h, [Q]) for h in hosts]
    db.close()


def test_damaged_journal_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "f.db"
    db = IndexedFrontier(path)
    add(db, "http://a/1", 1.0)
    db.commit()
    db.close()
    with sqlite3.connect(path) as raw:
        raw.execute(
            "INSERT INTO journal(rows, state, score, tier) VALUES (?, ?, ?, ?)",
            (np.array([5], np.int32).tobytes(), b"\x00", np.zeros(1).tobytes(), b"\0" * 4),
        )
    raw.close()
    with pytest.raises(FrontierError, match="journal names an unknown row"):
        IndexedFrontier(path)


def test_a_crawl_db_of_the_removed_sqlite_store_is_refused(tmp_path: Path) -> None:
    """The plain SQLite store wrote schema "3" (it is gone since issue 25)."""
    path = tmp_path / "f.db"
    with sqlite3.connect(path) as raw:
        raw.execute("CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT)")
        raw.execute("INSERT INTO meta VALUES ('_schema', '3')")
    raw.close()
    with pytest.raises(FrontierError, match="has schema 3, not indexed-3"):
        IndexedFrontier(path)


@pytest.mark.parametrize("store", ["indexed", "memory"])
def test_repeated_add_updates_sum_first(tmp_path: Path, store: str) -> None:
    """``ADD`` repeats are summed before they reach the stored score: 0.1 + (0.1 + 1.0),
    which is 1.2000000000000002, where (0.1 + 0.1) + 1.0 would give 1.2."""
    db: Any = IndexedFrontier(tmp_path / "f.db") if store == "indexed" else MemoryFrontier()
    add(db, "http://a/x", 0.1)
    add(db, "http://a/y", 0.1)
    ups = [("http://a/x", 0.1), ("http://a/y", 0.5), ("http://a/x", 1.0)]
    assert db.update_scores(ups, Merge.ADD) == 2
    assert db.get("http://a/x").score == 1.2000000000000002
    assert db.get("http://a/y").score == 0.6
    db.close()


def test_unstorable_url_is_refused_whole(tmp_path: Path) -> None:
    """A lone surrogate cannot be stored: FrontierError, and nothing of the batch is applied."""
    db = IndexedFrontier(tmp_path / "f.db")
    add(db, "http://a/x", 1.0)
    items = [("http://a/x", 5.0, 1, None, "a", 1, 0), ("http://a/\ud800", 1.0, 1, None, "a", 1, 0)]
    with pytest.raises(FrontierError, match="not encodable as UTF-8"):
        db.add_many(items)
    assert db.get("http://a/x").score == 1.0
    assert db.count() == 1
    db.commit()
    db.close()


def test_damaged_hosts_are_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "f.db"
    db = IndexedFrontier(path)
    add(db, "http://a/1", 1.0)
    add(db, "http://b/1", 1.0)
    db.commit()
    db.close()
    with sqlite3.connect(path) as raw:
        raw.execute("DELETE FROM hosts WHERE host = 'b'")
    raw.close()
    with pytest.raises(FrontierError, match="damaged host ids"):
        IndexedFrontier(path)


def test_update_host_through_the_host_grouping(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Tiny chunks: the rows grouped by host are built, scanned past and rebuilt as URLs
    come; every rescore must still match the reference."""
    monkeypatch.setattr("focuscrawl.frontier.indexed.table.CHUNK_ROWS", 4)
    db = IndexedFrontier(tmp_path / "f.db", buffer_size=4)
    memory = MemoryFrontier()
    rng = random.Random(11)
    hosts = [f"h{i}" for i in range(5)]
    for round_ in range(40):
        items = []
        for i in range(rng.randrange(1, 12)):
            host = rng.choice(hosts)
            items.append(
                (f"http://{host}/{round_}-{i}", float(rng.randrange(5)), 1, None, host, 1, 0)
            )
        assert db.add_many(items) == memory.add_many(items)
        popped = db.pop(3, max_per_host=1)
        assert popped == memory.pop(3, max_per_host=1)
        for q in popped[:1]:  # some fetched, some in flight
            db.mark(q.url, F)
            memory.mark(q.url, F)
        states = rng.sample([Q, F, URLState.IN_FLIGHT], rng.randrange(1, 4))
        host, merge = rng.choice([*hosts, "nowhere"]), rng.choice(list(Merge))
        score = float(rng.randrange(-2, 4))
        assert db.update_host(host, score, merge, states=states) == memory.update_host(
            host, score, merge, states=states
        ), round_
    assert _snapshot(db) == _snapshot(memory)
    db.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=st.lists(_ops, max_size=40))
def test_top_caches_of_two_rows_match_reference(ops: list[tuple[Any, ...]]) -> None:
    """``top`` through caches that keep 2 rows: rebuilt, fed and refused as they must be."""
    memory = MemoryFrontier()
    memory.ensure_columns(["c1"])
    with tempfile.TemporaryDirectory() as tmp, pytest.MonkeyPatch.context() as patch:
        patch.setattr("focuscrawl.frontier.indexed.order.top.KEEP", 2)
        db = IndexedFrontier(Path(tmp) / "f.db", buffer_size=2, compact_rows=6)
        db.ensure_columns(["c1"])
        try:
            for op in [*ops, ("commit",)]:
                if op[0] in ("reopen", "commit"):
                    db.commit()
                    continue
                assert _apply(db, op) == _apply(memory, op), op
                for state in (URLState.FETCHED, URLState.QUEUED, URLState.DROPPED):
                    for column in ("score", "c1"):
                        assert db.top(column, state) == memory.top(column, state)
        finally:
            db.close()


def test_top_answers_a_pending_text_row_without_writing_the_others(tmp_path: Path) -> None:
    """``top`` names a row whose text is not written yet (it waits in memory for the
    next commit), and the same row once written."""
    db = IndexedFrontier(tmp_path / "f.db")
    db.add_many([("http://a/seed", 1.0, 0, None, "a", 1, 0)])
    db.commit()  # the seed's text row is written
    (seed,) = db.pop(1)
    db.mark(seed.url, F)
    assert db.top("score") == ("http://a/seed", 1.0)  # written: read from the DB
    links = [(f"http://a/{i}", float(i), 1, seed.url, "a", 1, 0) for i in range(1, 5)]
    db.add_many(links)
    db.mark("http://a/2", F, score=7.5)  # (a page seen elsewhere, say)
    assert db.top("score") == ("http://a/2", 7.5)
    db.commit()
    assert db.top("score") == ("http://a/2", 7.5)  # the same once written
    db.close()
    db = IndexedFrontier(tmp_path / "f.db")
    assert db.top("score") == ("http://a/2", 7.5)  # and read back after a reopen
    db.close()


def test_one_url_pops_of_written_rows_match_the_reference(tmp_path: Path) -> None:
    """One URL popped at a time from written rows (a polite crawl; a pop reads the texts
    of the next rows ahead): every pop (URL, depth, parent) equals the reference's."""
    db = IndexedFrontier(tmp_path / "f.db")
    memory = MemoryFrontier()
    items = [("http://a/seed", 9.0, 0, None, "a", 1, 0)]
    items += [(f"http://a/{i}", float(i % 7), 1, "http://a/seed", "a", 1, 0) for i in range(60)]
    for store in (db, memory):
        store.add_many(items)
    db.commit()  # every text row written: a pop must read its row's from the DB
    for _ in range(20):
        got = db.pop(1)
        assert got == memory.pop(1)
        assert got[0].parent == (None if got[0].url == "http://a/seed" else "http://a/seed")
        for store in (db, memory):
            store.mark(got[0].url, F)
    db.close()


@pytest.mark.timeout(60)
def test_pop_through_a_buffer_of_repeated_offers(tmp_path: Path) -> None:
    """A few queued rows offered again and again (every page adds cash to them): the
    buffer holds them many times over, and a capped pop still ends, with the best."""
    db = IndexedFrontier(tmp_path / "f.db")
    memory = MemoryFrontier()
    seeds = [(f"http://h{i % 3}/{i}", 1.0, 0, None, f"h{i % 3}", 1, 0) for i in range(9)]
    for store in (db, memory):
        store.add_many(seeds)
        store.pop(1)  # the buffer is built: from now on changed rows are offered
    for rounds in range(40):
        updates = [(f"http://h{i % 3}/{i}", 0.01 * ((i * rounds) % 5)) for i in range(1, 9)]
        for store in (db, memory):
            store.update_scores(updates, Merge.ADD)
    assert db.pop(5, max_per_host=1) == memory.pop(5, max_per_host=1)
    db.close()


@pytest.mark.parametrize("commit_every", [1, 3, 1000], ids=["each-page", "every-3", "never"])
def test_crawl_shaped_pops_and_gets_match_reference(tmp_path: Path, commit_every: int) -> None:
    """Pop one URL, get it, mark it, add its links (a few new, most known; a seed met
    again as a link): the URL text, depth and first parent of every pop and get come
    from memory (rows read lately, pending text rows) or from SQLite, and must be the
    reference's, with or without commits (flushed rows) between the pages."""
    db = IndexedFrontier(tmp_path / "f.db", parents=False)
    memory = MemoryFrontier(parents=False)
    rng = random.Random(commit_every)
    seeds = ["http://a.org/", "http://b.org/"]
    for store in (db, memory):
        for seed in seeds:
            store.add(seed, 1.0, depth=0, parent=None, host=seed.split("/")[2])
    known = list(seeds)
    for page in range(150):
        got, want = db.pop(1), memory.pop(1)
        assert got == want, page
        if not want:
            break
        url = want[0].url
        assert db.get(url) == memory.get(url), page
        db.mark(url, F)
        memory.mark(url, F)
        links = rng.sample(known, min(len(known), 6)) + [f"{url}{page}-{i}" for i in range(3)]
        if page == 40:
            assert db.get(seeds[1]) == memory.get(seeds[1])  # read while an orphan
            links.append(seeds[1])  # an orphan (a seed) named as a child: its first parent
        items = [(u, 0.0, want[0].depth + 1, url, u.split("/")[2], 1, 0)
                 for u in dict.fromkeys(links) if u != url]  # fmt: skip
        assert db.add_many(items, merge=Merge.KEEP) == memory.add_many(items, merge=Merge.KEEP)
        known += [u for u, *_ in items if u not in known]
        for u in rng.sample(known, 3):  # rows met lately and long ago, by URL
            assert db.get(u) == memory.get(u), (page, u)
            assert db.state(u) == memory.state(u)
        if page % commit_every == commit_every - 1:
            db.commit()
        if page == 40:
            assert db.get(seeds[1]) == memory.get(seeds[1])  # its parent, as added just now
    assert _snapshot(db) == _snapshot(memory)
    db.close()


def test_pop_of_a_pending_row_whose_parent_was_written_long_ago(tmp_path: Path) -> None:
    """A seed (no parent, so never kept in memory) written by a commit, popped, and its
    link popped at once: the link's text row is pending and its parent's URL is only in
    SQLite, so the pop writes the pending rows before it asks."""
    db = IndexedFrontier(tmp_path / "f.db", parents=False)
    db.add("http://a.org/", 1.0, depth=0, parent=None, host="a.org")
    db.commit()
    (seed,) = db.pop(1)
    db.add("http://a.org/x", 0.5, depth=1, parent=seed.url, host="a.org")
    (child,) = db.pop(1)
    assert (child.url, child.depth, child.parent) == ("http://a.org/x", 1, "http://a.org/")
    assert db.get("http://a.org/x") == child
    db.close()
