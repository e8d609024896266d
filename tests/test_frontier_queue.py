"""The indexed store's pop buffer with hosts truncated at a per-host cap (issue 11).

The buffer keeps at most ``cap`` rows of a host; a pop that reaches below a truncated
host's threshold while that host could still take a URL must let its next rows in.
Each test builds a queue shaped to take one of the buffer's paths (truncated hosts,
trimmed offers, late rows, the one-URL pop, busy hosts skipped) and checks what a
caller sees: every pop equals the in-memory reference store's.
"""

from __future__ import annotations

import random
from collections import Counter, deque
from pathlib import Path
from typing import Any

from focuscrawl.frontier.indexed import IndexedFrontier
from focuscrawl.frontier.memory import MemoryFrontier
from focuscrawl.types import Merge, QueuedURL, URLState

Q, F = URLState.QUEUED, URLState.FETCHED


def test_a_host_beyond_the_cap_is_truncated_and_refilled(tmp_path: Path) -> None:
    """Buffer of 8, three hosts with queued rows: cap = max(4 * 1, 8 // 64, 8 // 3) = 4.

    By key: a1 10, b1 9.5, a2 9, a3 8, a4 7, a5 6, a6 5, b2 3, b3 2, c1 1. Host a keeps
    a1..a4 in the buffer (a5 and a6 are its 5th and 6th). Four pops of a (b and c
    excluded) take a1..a4; the fifth finds no row of a buffered while a is open: a's
    next rows must be let in, and a5 comes, then a6, as from the reference.
    """
    db = IndexedFrontier(tmp_path / "f.db", buffer_size=8)
    memory = MemoryFrontier()
    scores = {"a1": 10, "b1": 9.5, "a2": 9, "a3": 8, "a4": 7, "a5": 6, "a6": 5}
    scores |= {"b2": 3, "b3": 2, "c1": 1}
    for store in (db, memory):
        store.add_many([(f"http://{k[0]}/{k}", float(v), 0, None, k[0], 1, 0) for k, v in scores.items()])
    pops = [db.pop(1, max_per_host=1)]
    assert pops[0] == memory.pop(1, max_per_host=1)
    for store in (db, memory):
        store.mark("http://a/a1", F)
    for _ in range(5):
        got = db.pop(1, exclude_hosts={"b", "c"}, max_per_host=1)
        assert got == memory.pop(1, exclude_hosts={"b", "c"}, max_per_host=1)
        pops.append(got)
        for store in (db, memory):
            store.mark(got[0].url, F)
    assert [q.url for got in pops for q in got] == [f"http://a/a{i}" for i in range(1, 7)]
    assert db.pop(2, exclude_hosts={"b", "c"}, max_per_host=2) == []  # a is done
    assert [q.url for q in db.pop(3, max_per_host=3)] == ["http://b/b1", "http://b/b2", "http://b/b3"]
    db.close()


def _cash_crawl(db: IndexedFrontier | MemoryFrontier, steps: int, seed: int) -> list[list[str]]:
    """A polite OPIC-like crawl: 6 in flight, 1 per host, results in order; each fetched
    page's cash goes to 12 links (most on its own host, as on the Web), its own to 0."""
    rng = random.Random(seed)
    sizes = [80, 60, 40, 30, 20] + [6] * 20  # a few big hosts where the cash gathers
    urls = [f"http://h{h}/{i}" for h, n in enumerate(sizes) for i in range(n)]
    db.add_many([(u, 1.0 / 5, 0, None, u.split("/")[2], 1, 0) for u in urls[::80][:5]])
    window: deque[QueuedURL] = deque()
    inflight: Counter[str] = Counter()
    pops: list[list[str]] = []
    for _ in range(steps):
        got = db.pop(6 - len(window), exclude_hosts=set(inflight), max_per_host=1)
        pops.append([q.url for q in got])
        for q in got:
            window.append(q)
            inflight[q.host] += 1
        if not window:
            break
        q = window.popleft()
        inflight[q.host] -= 1
        if not inflight[q.host]:
            del inflight[q.host]
        host = int(q.host[1:])
        start = sum(sizes[:host])
        links = [
            urls[start + rng.randrange(sizes[host])] if rng.random() < 0.8 else rng.choice(urls)
            for _ in range(12)
        ]
        links = list(dict.fromkeys(u for u in links if u != q.url))
        share = q.score / (len(links) + 1)
        db.mark(q.url, F)
        db.add_many([(u, share, 1, q.url, u.split("/")[2], 1, 0) for u in links], merge=Merge.ADD)
        db.update_scores([(q.url, 0.0)], Merge.SET)
    return pops


def test_polite_cash_crawl_pops_as_the_reference(tmp_path: Path) -> None:
    """Cash gathers on the hosts in flight: with a buffer of 32 (a host's cap: 32 // the
    hosts with queued URLs, at least 4), hosts are truncated and offers trimmed, and
    400 steps still pop what the reference pops."""
    db = IndexedFrontier(tmp_path / "f.db", buffer_size=32)
    pops_db = _cash_crawl(db, 400, seed=5)
    assert pops_db == _cash_crawl(MemoryFrontier(), 400, seed=5)
    assert sum(map(len, pops_db)) >= 300  # the crawl went on to the end
    db.close()


def test_pops_walk_the_sorted_buffer_with_late_rows(tmp_path: Path) -> None:
    """One host, 16 per host, ties everywhere (breadth-first scores) and cash that lifts
    old rows over new ones (late rows the buffer's order must take in): each pop equals
    the reference's."""
    db = IndexedFrontier(tmp_path / "f.db", buffer_size=64)
    memory = MemoryFrontier()
    rng = random.Random(3)
    for store in (db, memory):
        store.add_many([(f"http://a/{i}", 1.0, 0, None, "a", 1, 0) for i in range(40)])
    pops = 0
    for step in range(300):
        n = rng.randrange(1, 4)
        got = db.pop(n, max_per_host=16)
        assert got == memory.pop(n, max_per_host=16), step
        pops += 1
        for q in got:
            links = [(f"http://a/{step}-{j}", 0.5, 1, q.url, "a", 1, 0) for j in range(5)]
            lifted = [(f"http://a/{rng.randrange(40)}", 0.25 * rng.randrange(3))]
            for store in (db, memory):
                store.mark(q.url, F)
                store.add_many(links, merge=Merge.MAX)
                store.update_scores(lifted, Merge.ADD)
    assert pops == 300
    db.close()


def test_rising_offers_below_the_threshold_are_dropped_with_the_same_pops(
    tmp_path: Path,
) -> None:
    """OPIC's cash on a queue much larger than the buffer: every page adds small amounts
    to known rows (most stay below the buffer's threshold T and are never offered) and a
    few large ones (which cross T and must be), and brings new rows on both sides of T.
    Every pop is the reference's, and so are the scores of every queued row."""
    db = IndexedFrontier(tmp_path / "f.db", buffer_size=16)
    memory = MemoryFrontier()
    rng = random.Random(11)
    hosts = [f"h{i}" for i in range(20)]
    urls = [f"http://{rng.choice(hosts)}/{i}" for i in range(600)]
    seeds = [(u, rng.random(), 0, None, u.split("/")[2], 1, 0) for u in urls]
    for store in (db, memory):
        store.add_many(seeds)
        store.pop(1, max_per_host=2)  # the buffer is built, with a threshold
    for page in range(120):
        got, want = db.pop(4, max_per_host=2), memory.pop(4, max_per_host=2)
        assert got == want, page
        for q in want:
            links = rng.sample(urls, 8) + [f"{q.url}/{page}-{i}" for i in range(3)]
            items = [
                (u, rng.choice([0.001, 0.002, 0.9]) if j % 4 else 0.0005, 1, q.url,
                 u.split("/")[2], 1, 0)
                for j, u in enumerate(links) if u != q.url
            ]  # fmt: skip
            for store in (db, memory):
                store.mark(q.url, F)
            assert db.add_many(items, merge=Merge.ADD) == memory.add_many(items, merge=Merge.ADD)
            for store in (db, memory):
                store.update_scores([(q.url, 0.0)], Merge.SET)
        assert db.count(Q) > 16 * 20  # the queue stays far larger than the buffer
    assert _snapshot_scores(db) == _snapshot_scores(memory)
    db.close()


def _snapshot_scores(store: Any) -> list[tuple[str, float, int]]:
    return [(q.url, q.score, q.seq) for q in store.iter_urls(Q)]


def test_single_url_pops_of_one_site_match_the_reference(tmp_path: Path) -> None:
    """A polite crawl of one site pops one URL after each page (16 per host, 15 in
    flight): breadth-first scores with ties, links that come back (MAX), cash added to
    known rows (ADD), rows put back to the queue and rows whose score falls. Every pop
    equals the reference's (most take the one-URL path, ``BufferOrder.best_one``)."""
    db = IndexedFrontier(tmp_path / "f.db", buffer_size=64)
    memory = MemoryFrontier()
    rng = random.Random(17)
    urls = [f"http://a/{i}" for i in range(30)]
    for store in (db, memory):
        store.add_many([(u, 1.0, 0, None, "a", 1, 0) for u in urls])
    flying: list[str] = []
    for step in range(500):
        got = db.pop(1, max_per_host=rng.choice([1, 16]))
        assert got == memory.pop(1, max_per_host=1), step
        flying += [q.url for q in got]
        if len(flying) > 3 or not got:
            done = flying.pop(0) if flying else None
            if done is not None:
                depth = 1 + step // 40
                links = [(f"http://a/{step}-{j}", 1.0 / (depth + 1), depth, done, "a", 1, 0)
                         for j in range(rng.randrange(4))]  # fmt: skip
                links += [(rng.choice(urls), 1.0 / (depth + 1), depth, done, "a", 1, 0)]
                urls += [u for u, *_ in links if u not in urls]
                cash = [(rng.choice(urls), 0.05 * rng.randrange(4))]
                for store in (db, memory):
                    store.mark(done, F)
                    store.add_many(links, merge=Merge.MAX)
                    store.update_scores(cash, Merge.ADD)
        if step % 37 == 5 and flying:  # a URL put back (the engine's refill does so)
            back = flying.pop()
            for store in (db, memory):
                store.mark(back, Q)
        if step % 53 == 7:  # a score that falls: the buffer is tidied
            fall = [(rng.choice(urls), 0.001)]
            assert db.update_scores(fall, Merge.SET) == memory.update_scores(fall, Merge.SET)
        if step % 100 == 99:
            db.commit()
    db.close()


def test_a_single_url_pop_waits_for_a_truncated_host(tmp_path: Path) -> None:
    """Buffer of 8, two hosts: a keeps its 4 best rows (a1..a4, cap 8 // 2), b its one.
    Four pops of one URL take a1..a4; the fifth finds only b1 in the buffer, but a5
    (below a's threshold, not buffered) is better: the one-URL path must not answer
    b1, and the pop lets a's next rows in and takes a5."""
    db = IndexedFrontier(tmp_path / "f.db", buffer_size=8)
    memory = MemoryFrontier()
    items = [(f"http://a/{i}", 100.0 - i, 0, None, "a", 1, 0) for i in range(1, 9)]
    items.append(("http://b/1", 1.0, 0, None, "b", 1, 0))
    for store in (db, memory):
        store.add_many(items)
    pops = [db.pop(1, max_per_host=1) for _ in range(5)]
    assert pops == [memory.pop(1, max_per_host=1) for _ in range(5)]
    assert [q.url for got in pops for q in got] == [f"http://a/{i}" for i in range(1, 6)]
    db.close()


def test_pops_with_busy_sites_excluded_skip_their_entries_and_match_the_reference(
    tmp_path: Path,
) -> None:
    """WebKB's shape: four big sites at the front of the order (breadth-first scores),
    many one-page hosts behind, 1 per host and 8 in flight, each pop excluding the
    hosts in flight (the walks skip the big sites' entries they looked through before).
    Every pop equals the reference's."""
    db = IndexedFrontier(tmp_path / "f.db", buffer_size=512)
    memory = MemoryFrontier()
    rng = random.Random(23)
    _busy_sites(db, memory, 60, 150)
    big = [f"dept{i}" for i in range(4)]
    flying: deque[QueuedURL] = deque()
    pops = 0
    for step in range(400):
        pops += _fill_excluding(db, memory, flying, 8, step)
        if not flying:
            break
        done = flying.popleft() if rng.random() < 0.7 else flying.pop()
        hosts = [rng.choice(big) for _ in range(rng.randrange(3))]
        links = [(f"http://{h}/{step}-{j}", 0.5, 2, done.url, h, 1, 0) for j, h in enumerate(hosts)]
        for store in (db, memory):
            store.mark(done.url, F)
            store.add_many(links, merge=Merge.MAX)
        if step % 41 == 3 and flying:  # put back, as the engine's refill does
            back = flying.pop()
            for store in (db, memory):
                store.mark(back.url, Q)
    assert pops > 300
    db.close()


def test_single_url_pops_with_hosts_excluded_match_the_reference(tmp_path: Path) -> None:
    """One URL popped at a time with the hosts in flight excluded (a polite crawl of
    many hosts), answered in Python steps (``BufferOrder.best_one_excluding``): cash
    added to queued rows of hosts in flight and not (late rows that must win over the
    front, or lose because their host is excluded), runs of more than ``_STEPS`` busy
    entries at the front (the pop walks then), rows put back, scores that fall, and a
    buffer small enough to truncate hosts. Every pop equals the reference's."""
    db = IndexedFrontier(tmp_path / "f.db", buffer_size=256)
    memory = MemoryFrontier()
    rng = random.Random(29)
    urls = _busy_sites(db, memory, 40, 120)
    big = [f"dept{i}" for i in range(4)]
    flying: deque[QueuedURL] = deque()
    pops = 0
    for step in range(500):
        pops += _fill_excluding(db, memory, flying, 6, step)
        if not flying:
            break
        done = flying.popleft() if rng.random() < 0.7 else flying.pop()
        hosts = [rng.choice(big) for _ in range(rng.randrange(4))]
        links = [(f"http://{h}/{step}-{j}", 1.0, 2, done.url, h, 1, 0) for j, h in enumerate(hosts)]
        links += [(f"http://new{step}/", rng.choice([0.5, 1.0, 3.0]), 2, done.url, f"new{step}", 1, 0)]
        urls += [u for u, *_ in links]
        cash = [(rng.choice(urls), rng.choice([0.5, 2.0])) for _ in range(2)]
        if flying:  # cash on a URL of a host in flight: a late row the pop must pass over
            cash.append((f"http://{flying[0].host}/{rng.randrange(40)}", 5.0))
        for store in (db, memory):
            store.mark(done.url, F)
            store.add_many(links, merge=Merge.MAX)
            store.update_scores(cash, Merge.ADD)
        if step % 41 == 3 and flying:  # put back, as the engine's refill does
            back = flying.pop()
            for store in (db, memory):
                store.mark(back.url, Q)
        if step % 67 == 9:  # a score that falls: the buffer is tidied
            fall = [(rng.choice(urls), 0.25)]
            assert db.update_scores(fall, Merge.SET) == memory.update_scores(fall, Merge.SET)
    assert pops > 400
    db.close()


def _busy_sites(db: IndexedFrontier, memory: MemoryFrontier, per_site: int, small: int) -> list[str]:
    """Four big sites of ``per_site`` URLs each (``dept0``..``dept3``, taking turns) and
    ``small`` one-page hosts, all at 1.0, added to both stores; the URLs."""
    big = [f"dept{i}" for i in range(4)]
    items = [(f"http://{h}/{j}", 1.0, 1, None, h, 1, 0) for j in range(per_site) for h in big]
    items += [(f"http://site{k}/", 1.0, 1, None, f"site{k}", 1, 0) for k in range(small)]
    for store in (db, memory):
        store.add_many(items)
    return [u for u, *_ in items]


def _fill_excluding(
    db: IndexedFrontier, memory: MemoryFrontier, flying: deque[QueuedURL], width: int, step: int
) -> int:
    """One URL at a time, the hosts in flight excluded (1 per host), until ``width`` are
    in flight or none is left; each pop must equal the reference's. How many pops."""
    pops = 0
    while len(flying) < width:
        busy = {q.host for q in flying}
        got = db.pop(1, exclude_hosts=busy, max_per_host=1)
        assert got == memory.pop(1, exclude_hosts=busy, max_per_host=1), step
        pops += 1
        if not got:
            break
        flying.append(got[0])
    return pops


def test_a_pop_with_every_queued_host_excluded_is_empty(tmp_path: Path) -> None:
    """One site with all its URLs' host in flight (a polite one-site crawl asks this after
    most pages): the pop is empty; a host named twice counts once, and one other host
    with a queued URL is still found."""
    db = IndexedFrontier(tmp_path / "f.db", buffer_size=64)
    db.add_many([(f"http://a/{i}", 1.0, 0, None, "a", 1, 0) for i in range(5)])
    db.add_many([(f"http://b/{i}", 0.5, 0, None, "b", 1, 0) for i in range(5)])
    assert db.pop(3, exclude_hosts={"a", "b"}, max_per_host=2) == []
    assert db.pop(1, exclude_hosts=["a", "b", "c"]) == []
    got = db.pop(1, exclude_hosts=["a", "a"])  # a named twice: b's five URLs remain
    assert [q.url for q in got] == ["http://b/0"]
    assert db.count(Q) == 9
    db.close()
