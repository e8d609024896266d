"""A shared crawl does not trust what Redis says (issue 40): a forged dead worker's
journal cuts no directory but that worker's own, a stalled worker leaves nothing of
its fenced tail behind and asks no host it lost, a model is loaded only from files the
worker's own command line vouches for, a worker of another protocol is refused, and
the Redis password stays out of argv, files, stderr and the published run."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from focuscrawl.cli import main as cli_main
from focuscrawl.frontier.factory import write_marker
from focuscrawl.frontier.redis.keys import Keys
from focuscrawl.frontier.redis.store import RedisFrontier
from focuscrawl.replay.generated import GeneratedWeb
from focuscrawl.replay.process import ReplayProcess
from focuscrawl.types import URLState
from focuscrawl.workers import prepare_shared, publish_crawl
from focuscrawl.workers.frontier import WorkerFrontier
from focuscrawl.workers.handover import retire_dead
from tests.redis_server import RedisServer, redis_server_fixture  # noqa: F401

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


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": os.getcwd()}


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines()) if path.exists() else 0


def _records(run_dir: Path) -> list[dict[str, Any]]:
    rows = []
    for path in sorted((run_dir / "workers").glob("*/pages.jsonl")):
        rows += [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return rows


def _tree(directory: Path) -> dict[str, bytes]:
    return {str(p.relative_to(directory)): p.read_bytes()
            for p in sorted(directory.rglob("*")) if p.is_file()}  # fmt: skip


def _forge_dead_worker(url: str, prefix: str, name: str, run_dir: Path, state: dict[str, Any]) -> None:
    """What anyone who can write the crawl's keys can make: a worker ``name`` known to
    the crawl, its heartbeat long gone, its journal naming this machine and ``run_dir``."""
    db = redis.Redis.from_url(url)
    try:
        db.sadd(f"{prefix}:{{{prefix}:m}}:workers", name)
        db.hset(Keys(prefix).journal(name), mapping={
            "seq": 1, "host": socket.gethostname(), "dir": str(run_dir),
            "engine": json.dumps(state),
        })  # fmt: skip
    finally:
        db.close()


@pytest.mark.parametrize(
    "whose",
    ["one-process-crawl", "another-shared-crawl", "another-worker", "that-worker"],
)
def test_a_forged_dead_worker_cuts_back_only_its_own_directory(
    whose: str,
    web: GeneratedWeb,
    replay: ReplayProcess,
    redis_server: RedisServer,
    tmp_path: Path,
) -> None:
    """A dead worker's journal (in Redis) names a directory: the worker that retires it
    cuts that directory's files back only if its marker names this crawl and that
    worker; another crawl's finished directory stays byte for byte as it was."""
    finished = tmp_path / "finished"
    args = ["crawl", "--seeds", *web.home_urls(4), "--proxy", replay.proxy_url,
            "--out", str(finished), "--max-pages", "40", "--delay", "0", "--quiet"]  # fmt: skip
    assert cli_main(args) == 0
    prefix = f"t{uuid.uuid4().hex[:10]}"
    victim = finished
    if whose != "one-process-crawl":
        victim = tmp_path / "victim"
        shutil.copytree(finished, victim, ignore=shutil.ignore_patterns("crawl.db*", "run.lock"))
        crawl, worker = {
            "another-shared-crawl": ("fc:0123456789ab", "ghost"),
            "another-worker": (prefix, "someone-else"),
            "that-worker": (prefix, "ghost"),
        }[whose]
        write_marker(victim / "crawl.db", crawl, worker=worker)
    before = _tree(victim)
    first_line = len((victim / "pages.jsonl").read_bytes().split(b"\n", 1)[0]) + 1
    _forge_dead_worker(redis_server.url, prefix, "ghost", victim, {"pages_offset": first_line})
    live = WorkerFrontier(redis_server.url, prefix=prefix, worker="live", lease_seconds=30)
    try:
        retire_dead(live)
        assert live.counters["workers_retired"] == 1
        if whose == "that-worker":  # its own directory: cut back to its last commit
            assert _lines(victim / "pages.jsonl") == 1
            assert live.counters["dead_workers_cut_back"] == 1
        else:
            assert _tree(victim) == before
            assert live.counters["dead_workers_cut_back"] == 0
    finally:
        live.drop()
        live.close()


def _published(out: Path, homes: list[str], overrides: dict[str, Any]) -> str:
    """A shared crawl prepared in ``out`` and published for workers started by hand."""
    shared = prepare_shared(out, homes, workers=1, overrides=overrides)
    shared.lock.release()
    publish_crawl(shared.frontier_url, shared.prefix, shared.run)
    return shared.prefix


def _start_worker(url: str, prefix: str, out: Path, *extra: str) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "focuscrawl", "worker", "--frontier", url,
           "--crawl", prefix, "--out", str(out), "--quiet", *extra]  # fmt: skip
    return subprocess.Popen(cmd, stderr=subprocess.PIPE, env=_env())


def _wait_for(what: str, ready: Any, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout:.0f} s")
        time.sleep(0.02)


def _stopped(pid: int) -> bool:
    """Whether process ``pid`` is stopped (SIGSTOP taken)."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    return stat[stat.rindex(")") + 2] in "Tt"


def _local_ports(pid: int) -> set[int]:
    """The local ports of the TCP sockets process ``pid`` holds."""
    inodes = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            link = os.readlink(fd)
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[len("socket:[") : -1])
    ports = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[9] in inodes:
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def _lease_holders(url: str, prefix: str) -> Counter[str]:
    db = redis.Redis.from_url(url)
    try:
        parts = int(db.hget(f"{prefix}:{{{prefix}:m}}:conf", "partitions") or 0)
        pipe = db.pipeline(transaction=False)
        for p in range(parts):
            pipe.get(f"{prefix}:{{{prefix}:{p}}}:lease")
        return Counter((h or b"").decode() for h in pipe.execute())
    finally:
        db.close()


def _retire(url: str, prefix: str, name: str) -> None:
    """Worker ``name`` (stopped, its heartbeat expired) retired as a worker with nothing
    to do retires it: fenced, its claim back; its files are not cut back (it still
    holds its run directory)."""
    retirer = WorkerFrontier(url, prefix=prefix, worker="retirer", parents=False, lease_seconds=30)
    try:
        _wait_for(f"{name} retired", lambda: retire_dead(retirer) >= 0
                  and retirer.core.db.hget(f"{prefix}:{{{prefix}:m}}:retired", name) is not None)  # fmt: skip
        assert retirer.counters["dead_workers_cut_back"] == 0
    finally:
        retirer.budget.alive(0)
        retirer.close()


@pytest.mark.slow
@pytest.mark.parametrize("stall_after", [5, 30, 80, 150], ids=lambda n: f"after-{n}")
def test_a_stalled_worker_leaves_no_tail_and_asks_no_host_it_lost(
    stall_after: int,
    web: GeneratedWeb,
    replay: ReplayProcess,
    redis_server: RedisServer,
    tmp_path: Path,
) -> None:
    """Worker A (leases of 2 s) is stopped (SIGSTOP) mid-crawl; B takes every partition
    once A's leases expire, and A is retired (fenced, its claim back, its files left: it
    holds them). B is stopped in turn and A continued (SIGCONT): A finds
    itself fenced, sends no request at all (every host is B's now: the replay server's
    log shows none from A while B is stopped), cuts what it recorded since its last
    commit from its files and exits. B, continued, ends the crawl: every URL recorded
    once, the budget exactly reached, nothing left in flight."""
    out = tmp_path / "shared"
    budget = 1000  # (B must not be done before it is stopped in turn)
    overrides = {
        "crawl": {"strategy": "bfs", "max_pages": budget, "frontier": "redis",
                  "frontier_url": redis_server.url},
        "fetch": {"proxy": replay.proxy_url, "delay": DELAY, "concurrency": 16},
    }  # fmt: skip
    prefix = _published(out, web.home_urls(4), overrides)
    a_dir, b_dir = out / "workers" / "a", out / "workers" / "b"
    a = _start_worker(redis_server.url, prefix, a_dir, "--lease-seconds", "2")
    b: subprocess.Popen[bytes] | None = None
    try:
        _wait_for("A's first pages", lambda: _lines(a_dir / "pages.jsonl") >= stall_after)
        a.send_signal(signal.SIGSTOP)
        b = _start_worker(redis_server.url, prefix, b_dir, "--lease-seconds", "30")
        _wait_for("B's marker", lambda: (b_dir / "crawl.db").exists())
        b_name = json.loads((b_dir / "crawl.db").read_text())["worker"]
        _wait_for("B holding every partition",
                  lambda: set(_lease_holders(redis_server.url, prefix)) == {b_name})  # fmt: skip
        _retire(redis_server.url, prefix, json.loads((a_dir / "crawl.db").read_text())["worker"])
        b.send_signal(signal.SIGSTOP)
        _wait_for("B stopped", lambda: _stopped(b.pid))
        b_ports = _local_ports(b.pid)  # (B's requests sent before its stop are on these)
        continued = time.time()
        a.send_signal(signal.SIGCONT)
        a_code = a.wait(timeout=60)
        a_gone = time.time()
        b.send_signal(signal.SIGCONT)
        assert a_code != 0  # fenced: it says so and stops
        assert b.wait(timeout=120) == 0, b.stderr.read().decode() if b.stderr else ""
    finally:
        for proc in (a, b):
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGCONT)
                proc.kill()
                proc.wait()
    assert replay.log_path is not None
    from_a = [line for line in replay.log_path.read_text(encoding="utf-8").splitlines()
              if continued <= float(line.split("\t")[0]) <= a_gone
              and int(line.split("\t")[1]) not in b_ports]  # fmt: skip
    assert from_a == []
    rows = _records(out)
    urls = Counter(row["url"] for row in rows)
    assert max(urls.values()) == 1  # A's tail cut back: B fetched those URLs again
    assert len(rows) == budget
    store = RedisFrontier(redis_server.url, prefix=prefix, parents=False)
    try:
        marked = {q.url for s in (URLState.FETCHED, URLState.FAILED) for q in store.iter_urls(s)}
        assert store.count(URLState.IN_FLIGHT) == 0
    finally:
        store.close()
    assert set(urls) <= marked


@pytest.mark.parametrize("published", ["older", "newer", "before-the-check"])
def test_a_worker_of_another_protocol_is_refused_in_one_line(
    published: str, redis_server: RedisServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A crawl published by another protocol (an older or newer focuscrawl, or one from
    before the protocol was published) is not joined: one line, nothing written."""
    overrides = {"crawl": {"strategy": "bfs", "frontier": "redis",
                           "frontier_url": redis_server.url}}  # fmt: skip
    prefix = _published(tmp_path / "shared", ["http://a.example/"], overrides)
    db = redis.Redis.from_url(redis_server.url)
    meta = f"{prefix}:{{{prefix}:m}}:meta"
    try:
        if published == "before-the-check":  # as protocol 1 published it
            run = db.hget(meta, "crawl")
            db.hdel(meta, "protocol", "crawl")
            db.hset(meta, "run", run or b"")
        else:
            db.hset(meta, "protocol", {"older": 1, "newer": 3}[published])
    finally:
        db.close()
    capsys.readouterr()
    out = tmp_path / "joining"
    code = cli_main(["worker", "--frontier", redis_server.url, "--crawl", prefix, "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 2
    assert len(err.splitlines()) == 1
    assert "protocol" in err
    assert not out.exists()


def _every_value(url: str, password: str) -> bytes:
    """Every key and value in the Redis at ``url``, as bytes (whatever its type)."""
    db = redis.Redis.from_url(url, password=password)
    out = []
    try:
        for key in db.scan_iter(count=1000):
            out.append(key)
            kind = db.type(key)
            if kind == b"string":
                out.append(db.get(key) or b"")
            elif kind == b"hash":
                out += [x for kv in db.hgetall(key).items() for x in kv]
            elif kind == b"set":
                out += list(db.smembers(key))
            elif kind == b"zset":
                out += [m for m, _ in db.zrange(key, 0, -1, withscores=True)]
            elif kind == b"list":
                out += db.lrange(key, 0, -1)
    finally:
        db.close()
    return b"\n".join(out)


@pytest.mark.slow
@pytest.mark.parametrize("given_in", ["environment", "file"])
def test_the_redis_password_is_in_no_argv_file_stderr_or_published_key(
    given_in: str, web: GeneratedWeb, replay: ReplayProcess, tmp_path: Path
) -> None:
    """A crawl with two workers on a redis-server with ``--requirepass``, the password
    in FOCUSCRAWL_REDIS_PASSWORD (or a file it names): it is in no worker's
    /proc/PID/cmdline, no file of the run directory, not on stderr or stdout, and in
    no key or value in Redis."""
    password = f"pw-{uuid.uuid4().hex}"
    (tmp_path / "redis").mkdir()
    server = RedisServer(tmp_path / "redis", password=password)
    env = _env()
    if given_in == "file":
        (tmp_path / "secret").write_text(password + "\n", encoding="utf-8")
        env["FOCUSCRAWL_REDIS_PASSWORD_FILE"] = str(tmp_path / "secret")
    else:
        env["FOCUSCRAWL_REDIS_PASSWORD"] = password
    out = tmp_path / "shared"
    cmd = [sys.executable, "-m", "focuscrawl", "crawl", "--seeds", *web.home_urls(4),
           "--proxy", replay.proxy_url, "--frontier", server.url, "--out", str(out),
           "--workers", "2", "--max-pages", "80", "--delay", "0.05", "--strategy", "bfs"]  # fmt: skip
    # every Python process of the crawl writes its own /proc/self/cmdline to a log as it
    # starts (a sitecustomize first on its path): each argv is seen, however short-lived
    # the process (sampling /proc missed a worker that ended at once, under load)
    hook = tmp_path / "argv-hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        "import os\n"
        "with open('/proc/self/cmdline', 'rb') as f:\n"
        "    argv = f.read()\n"
        "fd = os.open(os.environ['FC_ARGV_LOG'], os.O_WRONLY | os.O_APPEND | os.O_CREAT)\n"
        "os.write(fd, argv.hex().encode() + b'\\n')\n"
        "os.close(fd)\n",
        encoding="utf-8",
    )
    env["PYTHONPATH"] = os.pathsep.join([str(hook), env["PYTHONPATH"]])
    env["FC_ARGV_LOG"] = str(tmp_path / "argv.log")
    try:
        crawl = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        stdout, stderr = crawl.communicate(timeout=180)
        assert crawl.returncode == 0, stderr.decode()
        log = (tmp_path / "argv.log").read_text(encoding="ascii").split()
        cmdlines = [bytes.fromhex(line) for line in log]
        workers = [c for c in cmdlines if b"\0worker\0" in c]
        assert len(workers) == 2, cmdlines
        secret = password.encode()
        assert not [c for c in cmdlines if secret in c]
        assert secret not in stdout + stderr
        leaks = [str(p) for p in out.rglob("*") if p.is_file() and secret in p.read_bytes()]
        assert leaks == []
        assert b"fc:" in _every_value(server.url, password)  # (the crawl's keys are read)
        assert secret not in _every_value(server.url, password)
        assert len(_records(out)) == 80
    finally:
        server.stop()


@pytest.mark.parametrize(
    "url",
    ["redis://:{pw}@127.0.0.1:{port}/0", "redis://crawler:{pw}@127.0.0.1:{port}/0",
     "redis://10.255.255.1:6379/0"],
    ids=["password-in-url", "user-and-password-in-url", "another-machine-no-password"],
)  # fmt: skip
def test_a_password_in_the_url_or_none_for_another_machine_is_refused(
    url: str,
    redis_server: RedisServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """One line, the password not in it, nothing written."""
    monkeypatch.delenv("FOCUSCRAWL_REDIS_PASSWORD", raising=False)
    monkeypatch.delenv("FOCUSCRAWL_REDIS_PASSWORD_FILE", raising=False)
    url = url.format(pw="s3cret-word", port=redis_server.port)
    out = tmp_path / "shared"
    capsys.readouterr()
    code = cli_main(["crawl", "--seeds", "http://a.example/", "--frontier", url,
                     "--out", str(out), "--workers", "2"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 or code == 1
    assert len(err.splitlines()) == 1, err
    assert "s3cret-word" not in err
    assert "password" in err
    assert not out.exists()


class _Payload:
    """What a crafted classifier.pkl holds: unpickled, it writes ``marker``."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Any, ...]:
        return (Path.write_text, (self.marker, "the payload ran"))


def _crafted_model(directory: Path, marker: Path) -> Path:
    directory.mkdir()
    (directory / "model.json").write_text(json.dumps({"model": "classifier"}), encoding="utf-8")
    (directory / "classifier.json").write_text("{}", encoding="utf-8")
    (directory / "classifier.pkl").write_bytes(pickle.dumps(_Payload(marker), protocol=4))
    return directory


@pytest.mark.parametrize(
    ("forged", "digest"),
    [("path", False), ("model_dir", False), ("path", True)],
    ids=["model.path", "classifier-model_dir", "model.path-with-a-digest"],
)
def test_a_forged_model_path_in_redis_loads_no_pickle(
    forged: str, digest: bool, redis_server: RedisServer, tmp_path: Path
) -> None:
    """The crawl's model table in Redis rewritten to name a crafted pickle (that would
    write a marker file): the worker refuses in one line, before unpickling anything,
    with or without the digest of the crawl's real model on its command line."""
    from focuscrawl.workers.trust import model_digest

    marker = tmp_path / "pwned"
    evil = _crafted_model(tmp_path / "evil-model", marker)
    overrides = {"crawl": {"strategy": "bfs", "frontier": "redis",
                           "frontier_url": redis_server.url}}  # fmt: skip
    model = {"name": "keyword", "keywords": ["market", "river"]}
    shared = prepare_shared(tmp_path / "shared", ["http://a.example/"], workers=1,
                            overrides=overrides, model=model)  # fmt: skip
    shared.lock.release()
    prefix = shared.prefix
    publish_crawl(shared.frontier_url, prefix, shared.run)
    real = model_digest(json.loads(json.dumps(shared.run["settings"], default=str)))
    assert real is not None
    db = redis.Redis.from_url(redis_server.url)
    meta = f"{prefix}:{{{prefix}:m}}:meta"
    try:
        run = json.loads(db.hget(meta, "crawl") or b"{}")
        run["settings"]["model"] = (
            {"path": str(evil)} if forged == "path" else {"name": "classifier", "model_dir": str(evil)}
        )
        db.hset(meta, "crawl", json.dumps(run))
    finally:
        db.close()
    out = tmp_path / "joining"
    extra = ["--model-digest", real] if digest else []
    worker = _start_worker(redis_server.url, prefix, out, *extra)
    _, err = worker.communicate(timeout=60)
    assert worker.returncode == 2, err.decode()
    assert len(err.decode().splitlines()) == 1
    assert "model" in err.decode()
    assert not marker.exists()


def test_local_workers_load_a_model_that_reads_files_by_its_digest(
    web: GeneratedWeb,
    replay: ReplayProcess,
    redis_server: RedisServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A crawl whose model reads a file (a topic file, relative to the config): its
    local workers get the model's digest on their command line and load it; the line
    that says how more join gives it; a worker joining without it is refused."""
    (tmp_path / "topic.toml").write_text('[model]\nkeywords = ["market", "river"]\n')
    config = tmp_path / "crawl.toml"
    config.write_text('[model]\nname = "keyword"\ntopic = "topic.toml"\n')
    out = tmp_path / "shared"
    capsys.readouterr()
    code = cli_main(["crawl", "--config", str(config), "--seeds", *web.home_urls(2),
                     "--proxy", replay.proxy_url, "--frontier", redis_server.url,
                     "--out", str(out), "--workers", "1", "--max-pages", "20",
                     "--delay", "0", "--strategy", "bfs"])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 0, err
    assert " --model-digest " in err
    assert len(_records(out)) == 20
    prefix = json.loads((out / "run.json").read_text())["crawl"]
    code = cli_main(["worker", "--frontier", redis_server.url, "--crawl", prefix,
                     "--out", str(tmp_path / "joining")])  # fmt: skip
    assert code == 2
    assert "--model-digest" in capsys.readouterr().err
