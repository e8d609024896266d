"""The Redis frontier store: partitions and hash tags, commuting merges, namespaces, and
crawls on it that are the crawls of the default store (a real redis-server on loopback).

The store's behaviour against the reference is checked in tests/test_frontier_stores.py.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from redis.crc import key_slot

from focuscrawl.api import crawl
from focuscrawl.cli import main as cli_main
from focuscrawl.exceptions import ConfigError, FrontierError
from focuscrawl.frontier.factory import open_frontier
from focuscrawl.frontier.memory import MemoryFrontier
from focuscrawl.frontier.redis.store import RedisFrontier
from focuscrawl.replay.sample import SAMPLE_SEEDS
from focuscrawl.settings import load_settings
from focuscrawl.types import Merge, URLState
from tests.redis_server import RedisServer, redis_server_fixture  # noqa: F401 (the fixture)

CAT_KEYWORDS = {"name": "keyword", "keywords": ["cat", "cats", "kitten"]}


@pytest.fixture
def store(redis_server: RedisServer) -> Iterator[RedisFrontier]:
    db = RedisFrontier(redis_server.url, prefix=f"t{uuid.uuid4().hex[:12]}", partitions=16)
    yield db
    db.drop()
    db.close()


def _add(db: Any, url: str, score: float, **kw: Any) -> bool:
    kw.setdefault("depth", 1)
    kw.setdefault("parent", None)
    return bool(db.add(url, score, host=url.split("/")[2], **kw))


# -- layout ------------------------------------------------------------------------------


def test_every_key_carries_its_partition_tag(
    store: RedisFrontier, redis_server: RedisServer
) -> None:
    """Every key but the global ones is one partition's: one script, one slot (Cluster)."""
    hosts = [f"h{i}.example" for i in range(40)]
    for i, host in enumerate(hosts):
        _add(store, f"http://{host}/a", float(i), parent=f"http://{hosts[i - 1]}/a")
    store.ensure_columns(["cash"])
    store.update_values("cash", [(f"http://{h}/a", 1.0) for h in hosts], Merge.ADD)
    store.pop(7)
    client = redis.Redis.from_url(redis_server.url)
    keys = [k.decode() for k in client.scan_iter(match=f"{store.prefix}:*")]
    tags = {re.fullmatch(rf"{store.prefix}:\{{([^}}]*)\}}:.*", k).group(1) for k in keys}  # type: ignore[union-attr]
    assert f"{store.prefix}:m" in tags  # meta, counter, columns, layers
    partitions = tags - {f"{store.prefix}:m"}
    assert 1 < len(partitions) <= 16
    for tag in tags:  # Redis Cluster's slot of every key of a partition is the tag's
        assert {key_slot(k.encode()) for k in keys if f"{{{tag}}}" in k} == {key_slot(tag.encode())}
    client.close()


def test_pop_across_partitions_is_the_reference_order(store: RedisFrontier) -> None:
    """Interleaved priorities over many hosts (many partitions): the reference's greedy pop."""
    memory = MemoryFrontier()
    for db in (store, memory):
        for i in range(60):
            _add(db, f"http://h{i % 13}/{i}", float((i * 7) % 10), tier=i % 2)
    for kwargs in ({"max_per_host": 2}, {"exclude_hosts": {"h1", "h5"}}, {}):
        got = [(q.url, q.score, q.tier) for q in store.pop(9, **kwargs)]
        assert got == [(q.url, q.score, q.tier) for q in memory.pop(9, **kwargs)]


def test_reopen_finds_the_queues_again(store: RedisFrontier, redis_server: RedisServer) -> None:
    for i in range(20):
        _add(store, f"http://h{i % 5}/{i}", float(i), layer=i % 3)
    again = RedisFrontier(redis_server.url, prefix=store.prefix, partitions=3)
    assert again.partitions == 16  # the namespace keeps its own
    assert [q.url for q in again.pop(4, max_layer=1)] == [
        "http://h4/19", "http://h3/18", "http://h1/16", "http://h0/15",
    ]  # fmt: skip
    assert again.count(URLState.IN_FLIGHT) == 4
    again.close()


# -- merges commute: two writers on one URL ---------------------------------------------------


def test_two_clients_adding_cash_lose_nothing(
    store: RedisFrontier, redis_server: RedisServer
) -> None:
    """OPIC cash from two writers (two workers, next) adds up whatever the interleaving:
    the ADD is applied in the script, on the stored value, not read-modify-written."""
    other = RedisFrontier(redis_server.url, prefix=store.prefix)
    _add(store, "http://a/x", 0.25, merge=Merge.ADD)
    for i in range(50):
        writer = store if i % 2 else other
        _add(writer, "http://a/x", 0.5, merge=Merge.ADD, parent=f"http://b/{i}")
        writer.update_scores([("http://a/x", 0.25)], Merge.ADD)
    assert store.value("http://a/x", "score") == 0.25 + 50 * 0.75
    assert store.get("http://a/x").parent == "http://b/0"  # type: ignore[union-attr]
    assert len(store.parents("http://a/x")) == 50
    other.close()


def test_a_link_new_and_known_is_decided_in_the_script(
    store: RedisFrontier, redis_server: RedisServer
) -> None:
    other = RedisFrontier(redis_server.url, prefix=store.prefix)
    assert _add(store, "http://a/y", 1.0, merge=Merge.KEEP)
    assert not _add(other, "http://a/y", 9.0, merge=Merge.KEEP)  # known: KEEP keeps 1.0
    assert store.value("http://a/y", "score") == 1.0
    assert store.count() == 1
    assert store.count(URLState.QUEUED) == 1
    other.close()


def test_a_server_that_lost_its_scripts_gets_them_again(
    store: RedisFrontier, redis_server: RedisServer
) -> None:
    """After a restart (or SCRIPT FLUSH) every EVALSHA is refused, none applied: the
    script is loaded again and the calls sent again, each applied once."""
    _add(store, "http://a/1", 1.0, merge=Merge.ADD)
    client = redis.Redis.from_url(redis_server.url)
    client.script_flush()
    client.close()
    store.add_many(
        [(f"http://h{i}/x", 1.0, 1, None, f"h{i}", 1, 0) for i in range(20)]
        + [("http://a/1", 1.0, 1, None, "a", 1, 0)],
        merge=Merge.ADD,
    )
    assert store.value("http://a/1", "score") == 2.0
    assert store.count(URLState.QUEUED) == 21


def test_unknown_mark_and_column_are_one_line_errors(store: RedisFrontier) -> None:
    with pytest.raises(FrontierError, match="cannot mark unknown URL"):
        store.mark("http://nowhere/", URLState.FETCHED)
    with pytest.raises(FrontierError, match="unknown column 'c9'"):
        store.value("http://nowhere/", "c9")


def test_each_role_is_an_object_a_consumer_can_take(store: RedisFrontier) -> None:
    queue, columns, graph, journal = store.queue, store.columns, store.graph, store.journal
    assert queue.add("http://a/1", 1.0, depth=0, parent=None, host="a")
    assert queue.add("http://a/2", 0.5, depth=1, parent="http://a/1", host="a")
    assert columns.update_scores([("http://a/2", 3.0)], Merge.MAX) == 1
    assert graph.children("http://a/1") == ["http://a/2"]
    journal.set_meta("k", "v")
    assert [q.url for q in queue.pop(2)] == ["http://a/2", "http://a/1"]
    assert (store.get_meta("k"), store.count(URLState.IN_FLIGHT)) == ("v", 2)


def test_parents_false_keeps_first_parents_only(redis_server: RedisServer) -> None:
    db = RedisFrontier(redis_server.url, prefix=f"t{uuid.uuid4().hex[:12]}", parents=False)
    _add(db, "http://a/1", 1.0, parent="http://b/0")
    _add(db, "http://a/1", 1.0, parent="http://c/0")
    assert db.get("http://a/1").parent == "http://b/0"  # type: ignore[union-attr]
    with pytest.raises(FrontierError, match="keeps no parent edges"):
        db.children("http://b/0")
    with pytest.raises(FrontierError, match="created without parent edges"):
        RedisFrontier(redis_server.url, prefix=db.prefix, parents=True)
    db.drop()
    db.close()


def test_no_server_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(FrontierError, match=r"frontier redis://127\.0\.0\.1:1/0"):
        RedisFrontier("redis://127.0.0.1:1/0", prefix="x")


def test_a_server_gone_mid_crawl_is_one_line(tmp_path: Path) -> None:
    server = RedisServer(tmp_path)
    db = RedisFrontier(server.url, prefix="gone", partitions=4)
    _add(db, "http://a/1", 1.0)
    server.stop()
    with pytest.raises(FrontierError, match=rf"^frontier {re.escape(server.url)}: "):
        db.pop(1)
    with pytest.raises(FrontierError, match=rf"^frontier {re.escape(server.url)}: "):
        list(db.iter_urls())


# -- the factory: crawl.frontier = "redis", a namespace per run directory ------------------


def test_factory_marker_names_one_namespace_per_run(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    settings = load_settings(
        None, {"crawl": {"frontier": "redis", "frontier_url": redis_server.url}}
    )
    a = open_frontier(settings, tmp_path / "a.db")
    b = open_frontier(settings, tmp_path / "b.db")
    _add(a, "http://a/1", 1.0)
    assert b.count() == 0  # two crawls on one Redis never share keys
    a.close()
    again = open_frontier(settings, tmp_path / "a.db")  # the marker finds the crawl again
    assert again.count() == 1
    marker = json.loads((tmp_path / "a.db").read_text())
    assert marker["prefix"].startswith("fc:")
    for db in (again, b):
        db.drop()  # type: ignore[attr-defined]
        db.close()
    sqlite_file = tmp_path / "c.db"
    sqlite_file.write_bytes(b"SQLite format 3\0")
    with pytest.raises(FrontierError, match="is not a Redis crawl's marker"):
        open_frontier(settings, sqlite_file)
    without_url = load_settings(None, {"crawl": {"frontier": "redis"}})
    with pytest.raises(ConfigError, match=r"needs crawl\.frontier_url"):
        open_frontier(without_url, tmp_path / "d.db")


# -- crawls on Redis are the crawls of the default store -------------------------------------------


def _pages(run: Path) -> list[dict[str, Any]]:
    with open(run / "pages.jsonl", encoding="utf-8") as fh:
        return [{k: v for k, v in json.loads(line).items() if k != "fetched_at"} for line in fh]


@pytest.mark.parametrize(
    ("strategy", "model", "extra"),
    [
        ("bfs", None, {}),
        ("best-first", CAT_KEYWORDS, {}),
        ("best-first", CAT_KEYWORDS, {"fetch_list_size": 8}),
        ("opic", None, {}),
        ("otie", CAT_KEYWORDS, {}),
        ("link-context", CAT_KEYWORDS, {}),
        ("genre", CAT_KEYWORDS, {}),
        ("commd", CAT_KEYWORDS, {}),
        ("opic-commd", CAT_KEYWORDS, {}),
    ],
    ids=["bfs", "best-first", "best-n", "opic", "otie", "link-context", "genre", "commd-layered",
         "opic-commd-layered"],
)  # fmt: skip
def test_simulated_crawl_on_redis_is_the_default_crawl(
    sample_archive: Path,
    tmp_path: Path,
    redis_server: RedisServer,
    strategy: str,
    model: dict[str, Any] | None,
    extra: dict[str, Any],
) -> None:
    """The ordered schedule over the sample web: the same pages in the same order, every
    field but the time stamp (OPIC's and OTIE's cash, ADD-merged in the scripts; genre's
    host and sibling updates; the layered strategies' pops by layer)."""
    runs = {}
    for name, frontier in (
        ("indexed", {}),
        ("redis", {"frontier": "redis", "frontier_url": redis_server.url}),
    ):
        runs[name] = tmp_path / name
        crawl(
            list(SAMPLE_SEEDS), runs[name], archives=[sample_archive], strategy=strategy,
            model=model, max_pages=40, schedule="ordered", **frontier, **extra,
        )  # fmt: skip
    assert _pages(runs["redis"]) == _pages(runs["indexed"])
    assert len(_pages(runs["redis"])) == 40  # the budget binds (the sample web: 54)
    run = json.loads((runs["redis"] / "run.json").read_text())
    assert run["settings"]["crawl"]["frontier"] == "redis"


def test_a_redis_killed_with_sigkill_keeps_every_acknowledged_change(tmp_path: Path) -> None:
    """appendonly yes, appendfsync always: the AOF holds every script that answered."""
    server = RedisServer(tmp_path, appendonly=True)
    try:
        db = RedisFrontier(server.url, prefix="aof", partitions=8)
        db.ensure_columns(["cash"])
        for i in range(30):
            _add(db, f"http://h{i % 7}/{i}", float(i), merge=Merge.ADD, parent=f"http://h0/{i - 1}")
        db.update_values("cash", [(f"http://h{i % 7}/{i}", 0.5) for i in range(30)], Merge.ADD)
        popped = [q.url for q in db.pop(5)]
        db.mark(popped[0], URLState.FETCHED)
        db.set_meta("engine", "after the mark")
        before = (list(db.iter_urls()), [db.count(s) for s in URLState], db.children("http://h0/3"))
        db.close()
        server.kill()
        server.start()
        again = RedisFrontier(server.url, prefix="aof")
        after = (
            list(again.iter_urls()),
            [again.count(s) for s in URLState],
            again.children("http://h0/3"),
        )
        assert after == before
        assert again.get_meta("engine") == "after the mark"
        assert again.value("http://h3/3", "cash") == 0.5
        assert again.requeue_in_flight() == 4
        assert [q.url for q in again.pop(4)] == popped[1:]
        again.close()
    finally:
        server.stop()


def test_a_crawl_runs_on_a_redis_cluster_node(sample_archive: Path, tmp_path: Path) -> None:
    """A one-node Redis Cluster refuses a script that touches keys of two slots (Redis 7):
    a whole simulated crawl on it, OPIC's cash and parent edges (genre) included."""
    server = RedisServer(tmp_path, cluster=True)
    try:
        client = redis.Redis.from_url(server.url)
        with pytest.raises(redis.ResponseError, match="slot"):  # the check is there
            client.eval("#!lua\nredis.call('SET', KEYS[1], 1) redis.call('SET', 'b', 1)", 1, "a")
        client.close()
        for strategy in ("opic", "genre"):
            out = tmp_path / strategy
            crawl(
                list(SAMPLE_SEEDS), out, archives=[sample_archive], strategy=strategy,
                model=CAT_KEYWORDS, max_pages=30, schedule="ordered", frontier="redis",
                frontier_url=server.url,
            )  # fmt: skip
            assert len(_pages(out)) == 30
    finally:
        server.stop()


def test_cli_frontier_option_and_resume(
    sample_archive: Path,
    tmp_path: Path,
    redis_server: RedisServer,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--frontier redis://...`` on the command line; a crawl stopped by its budget and
    resumed with a larger one: the same pages as the same on the default store."""
    base = ["simulate", "--archive", str(sample_archive), "--seeds", *SAMPLE_SEEDS,
            "--schedule", "ordered", "--quiet"]  # fmt: skip
    runs = {}
    for name, option in (("indexed", []), ("redis", ["--frontier", redis_server.url])):
        runs[name] = tmp_path / name
        assert cli_main([*base, "--out", str(runs[name]), "--max-pages", "25", *option]) == 0
        assert cli_main(["simulate", "--archive", str(sample_archive), "--out", str(runs[name]),
                         "--resume", "--max-pages", "40", "--quiet"]) == 0  # fmt: skip
    assert _pages(runs["redis"]) == _pages(runs["indexed"])
    assert len(_pages(runs["redis"])) == 40
    assert json.loads((runs["redis"] / "crawl.db").read_text())["prefix"].startswith("fc:")
    capsys.readouterr()
    code = cli_main([*base, "--out", str(tmp_path / "x"), "--frontier", "redis://127.0.0.1:1/0"])
    assert code == 1  # one line, and the failed start taken back (its marker too)
    assert capsys.readouterr().err.startswith("focuscrawl: frontier redis://127.0.0.1:1/0: ")
    assert not (tmp_path / "x" / "crawl.db").exists()


def test_the_partition_count_is_an_option_of_the_url(redis_server: RedisServer) -> None:
    """``?partitions=N`` makes a new namespace with N partitions; an existing one keeps its own."""
    prefix = f"t{uuid.uuid4().hex[:12]}"
    db = RedisFrontier(f"{redis_server.url}?partitions=64", prefix=prefix)
    assert db.partitions == 64
    _add(db, "http://a.example/", 1.0)
    again = RedisFrontier(f"{redis_server.url}?partitions=8", prefix=prefix)
    assert again.partitions == 64
    assert [q.url for q in again.pop(5)] == ["http://a.example/"]
    with pytest.raises(FrontierError, match="partitions='x'"):
        RedisFrontier(f"{redis_server.url}?partitions=x", prefix=f"t{uuid.uuid4().hex[:12]}")
    again.close()
    db.drop()
    db.close()
