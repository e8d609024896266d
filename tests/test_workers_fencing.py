"""A worker stalled past its leases on a real redis-server: once another worker has
taken one of its expired partitions, or retired it, nothing it sends afterwards is
committed, whatever moment it was stopped at (brief b50)."""

from __future__ import annotations

import time
import uuid

import pytest

from focuscrawl.types import URLState
from focuscrawl.workers.frontier import LeaseLost, WorkerFrontier
from focuscrawl.workers.handover import retire_dead
from tests.redis_server import RedisServer, redis_server_fixture  # noqa: F401

URL = "http://a.example/"


@pytest.mark.parametrize("fenced_by", ["partition-taken", "retired"])
def test_a_worker_stopped_after_its_lease_check_commits_nothing_once_fenced(
    fenced_by: str, redis_server: RedisServer
) -> None:
    """Worker A has popped and recorded URL; its commit finds its leases usable and A
    is stopped (SIGSTOP, a long pause) before its journal reaches Redis: the one
    window its own deadline cannot close. Its leases and heartbeat expire; B takes
    its partitions (A's URL in flight queued again, then popped by B), or retires it
    (its claim beyond its last commit back in the budget). A continued must commit
    nothing: its batch would mark fetched a URL B fetches too (recorded twice), and
    its pages were given back to the budget already. Restarted, A commits again."""
    prefix = f"t{uuid.uuid4().hex[:10]}"
    a = WorkerFrontier(redis_server.url, prefix=prefix, worker="a", lease_seconds=1)
    a.upkeep(delay=0.01)
    a.add(URL, 1.0, depth=0, parent=None, host="a.example")
    a.commit()
    assert [q.url for q in a.pop(5)] == [URL]
    a.mark(URL, URLState.FETCHED)  # recorded by A: kept back for its next commit
    engine = '{"stats": {"fetched": 1}}'
    a.set_meta("engine", engine)
    time.sleep(1.1)  # A is stopped past its leases and heartbeat
    b = WorkerFrontier(redis_server.url, prefix=prefix, worker="b", lease_seconds=30)
    try:
        if fenced_by == "partition-taken":
            b.upkeep(delay=0.01)  # A's partitions taken, its URL in flight queued again
            assert [q.url for q in b.pop(5)] == [URL]
        else:
            retire_dead(b)
        # A continued: its commit goes on from after its look at its leases
        with pytest.raises(LeaseLost, match="another worker"):
            a.outbox.commit()
        assert b.state(URL) == URLState.IN_FLIGHT  # (A's late mark would say FETCHED)
        assert b.outbox.journal_of("a").get("engine") is None  # its last commit's state kept
        again = WorkerFrontier(redis_server.url, prefix=prefix, worker="a", lease_seconds=30)
        try:
            again.upkeep(delay=0.01)
            again.set_meta("engine", engine)
            again.commit()  # restarted: not fenced any more
            assert again.outbox.engine == engine
        finally:
            again.close()
    finally:
        b.drop()
        a.close()
        b.close()


def test_a_worker_restarted_under_its_name_is_not_fenced_by_its_old_partitions(
    redis_server: RedisServer,
) -> None:
    """A's first run dies holding every partition; restarted (its name, from its run
    directory), A takes back its share only, and B takes the rest of what A's first
    run held, expired. B must not fence A: alive, it goes on committing (the fence is
    for a worker whose heartbeat expired, in the run B found dead)."""
    prefix = f"t{uuid.uuid4().hex[:10]}"
    first = WorkerFrontier(redis_server.url, prefix=prefix, worker="a", lease_seconds=1)
    first.upkeep(delay=0.01)
    assert len(first.owned) == first.partitions
    first.close()  # (dies: nothing given back)
    time.sleep(1.1)  # its leases and heartbeat expired
    again = WorkerFrontier(
        redis_server.url, prefix=prefix, worker="a", lease_seconds=30, expected=2
    )
    b = WorkerFrontier(redis_server.url, prefix=prefix, worker="b", lease_seconds=30, expected=2)
    try:
        again.upkeep(delay=0.01)
        b.upkeep(delay=0.01)  # the other half of A's first run's partitions
        assert b.counters["partitions_taken_over"] > 0
        again.add(URL, 1.0, depth=0, parent=None, host="a.example")
        again.commit()  # not fenced
        assert b.state(URL) == URLState.QUEUED
    finally:
        b.drop()
        again.close()
        b.close()


@pytest.mark.parametrize("what", ["pick:0", "end:0"])
def test_a_layers_lead_dies_with_its_worker(what: str, redis_server: RedisServer) -> None:
    """Worker A takes the lead of layer 0's pick (or end) and dies at that work, before
    the round moves on. Another worker, once it has retired A, leads it instead; A
    restarted under its name leads it again. Before, the lead was A's for ever: a
    layered crawl waited for it without end (seen: a commd crawl's second worker
    idle past 90 s at 'picked 1 selected 4', 0 pages)."""
    prefix = f"t{uuid.uuid4().hex[:10]}"
    a = WorkerFrontier(redis_server.url, prefix=prefix, worker="a", lease_seconds=1, layered=True)
    b = WorkerFrontier(redis_server.url, prefix=prefix, worker="b", lease_seconds=30, layered=True)
    try:
        assert a.progress.lead(what)
        a.close()  # (dies: its heartbeat expires)
        assert not b.progress.lead(what)  # A's while it may be alive
        again = WorkerFrontier(
            redis_server.url, prefix=prefix, worker="a", lease_seconds=30, layered=True
        )
        try:
            assert again.progress.lead(what)  # restarted: its own lead, done again
        finally:
            again.budget.alive(1)  # (it dies again, at once)
            again.close()
        time.sleep(1.1)
        retire_dead(b)
        assert b.progress.lead(what)
    finally:
        b.drop()
        b.close()


def test_a_worker_stopped_after_its_lease_check_pops_nothing_another_took(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A's look at its leases said yes, and A was stopped right after, past its leases;
    B took its partitions meanwhile. A continued pops nothing there: the URL it would
    take stays B's to fetch (before, A took it into flight, its commit then refused,
    and no one would queue it again: in flight for ever, the crawl never over)."""
    prefix = f"t{uuid.uuid4().hex[:10]}"
    a = WorkerFrontier(redis_server.url, prefix=prefix, worker="a", lease_seconds=1)
    a.upkeep(delay=0.01)
    a.add(URL, 1.0, depth=0, parent=None, host="a.example")
    a.commit()
    time.sleep(1.1)  # A is stopped past its leases and heartbeat
    b = WorkerFrontier(redis_server.url, prefix=prefix, worker="b", lease_seconds=30)
    try:
        b.upkeep(delay=0.01)  # every partition B's now
        monkeypatch.setattr(a.leases, "usable", lambda: True)  # (its look, before the stop)
        assert a.pop(5) == []
        assert b.state(URL) == URLState.QUEUED
        assert [q.url for q in b.pop(5)] == [URL]
    finally:
        b.drop()
        a.close()
        b.close()
