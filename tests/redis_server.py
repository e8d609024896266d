"""A real redis-server on a free 127.0.0.1 port for the tests, started and stopped here.

A test module takes the session's server with
``from tests.redis_server import redis_server_fixture  # noqa: F401`` and an argument
named ``redis_server``.

Where ``redis-server`` is not installed the tests that need it skip, except in CI
(``CI`` set), where they fail: a CI run must not pass by skipping the Redis store.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class RedisServer:
    """``redis-server`` in its own directory; ``url`` is ``redis://127.0.0.1:PORT/0``."""

    def __init__(
        self,
        directory: Path,
        *,
        appendonly: bool = False,
        cluster: bool = False,
        own_slots: bool = True,
        password: str | None = None,
    ) -> None:
        binary = shutil.which("redis-server") or (
            "/usr/bin/redis-server" if Path("/usr/bin/redis-server").exists() else None
        )
        if binary is None:
            if os.environ.get("CI"):
                pytest.fail("CI: redis-server is not installed (apt-get install redis-server)")
            pytest.skip("redis-server is not installed")
        self.port = _free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.directory = directory
        args = [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", ""]
        args += ["--dir", str(directory), "--appendonly", "yes" if appendonly else "no"]
        self.password = password
        if password is not None:  # (a client needs it: FOCUSCRAWL_REDIS_PASSWORD)
            args += ["--requirepass", password]
        if appendonly:  # every acknowledged write on disk: a SIGKILL loses none
            args += ["--appendfsync", "always"]
        if cluster:  # a one-node Redis Cluster holding every slot: scripts are slot-checked
            args += ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"]
            self.bus_port = _free_port()  # (port + 10000 may be > 65535)
            args += ["--cluster-port", str(self.bus_port)]
        self._args = args
        self._log = (directory / "redis.log").open("ab")
        self.start()
        if cluster and own_slots:
            self._own_every_slot(time.monotonic() + 60)

    def start(self) -> None:
        """Start the server (again: same port, same directory, its AOF read back)."""
        self.process = subprocess.Popen(self._args, stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60  # only a hang's bound (a loaded machine starts slowly)
        while True:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    break
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    log = (self.directory / "redis.log").read_text(errors="replace")
                    raise RuntimeError(f"redis-server did not start: {log[-500:]}") from None
                time.sleep(0.02)
        client = redis.Redis(port=self.port, password=self.password)
        deadline = time.monotonic() + 60  # only a hang's bound (a loaded machine starts slowly)
        while client.info("persistence").get("loading"):  # the AOF read back first
            if time.monotonic() > deadline:
                raise RuntimeError("redis-server: still loading its data")
            time.sleep(0.02)
        client.close()

    def kill(self) -> None:
        """SIGKILL: the server dies at once, as in a crash."""
        self.process.kill()
        self.process.wait()

    def _own_every_slot(self, deadline: float) -> None:
        client = redis.Redis(port=self.port)
        client.execute_command("CLUSTER", "ADDSLOTSRANGE", 0, 16383)
        while b"cluster_state:ok" not in client.execute_command("CLUSTER", "INFO"):
            if time.monotonic() > deadline:
                raise RuntimeError("redis-server: the one-node cluster never became ok")
            time.sleep(0.05)
        client.close()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if not self._log.closed:
            self._log.close()


class RedisCluster3:
    """A Redis Cluster of three primaries on 127.0.0.1, the slots split in thirds;
    ``url`` names the first node (a cluster client finds the others)."""

    def __init__(self, directory: Path) -> None:
        self.nodes: list[RedisServer] = []
        try:
            for i in range(3):
                (directory / f"node{i}").mkdir(parents=True)
                self.nodes.append(
                    RedisServer(directory / f"node{i}", cluster=True, own_slots=False)
                )
            bounds = [(0, 5460), (5461, 10922), (10923, 16383)]
            clients = [redis.Redis(port=node.port) for node in self.nodes]
            for client, (low, high) in zip(clients, bounds, strict=True):
                client.execute_command("CLUSTER", "ADDSLOTSRANGE", low, high)
            for client in clients:  # every node told of every other: no wait for gossip
                for node in self.nodes:
                    client.execute_command("CLUSTER", "MEET", "127.0.0.1", node.port, node.bus_port)
            deadline = time.monotonic() + 60
            while not all(
                b"cluster_state:ok" in c.execute_command("CLUSTER", "INFO") for c in clients
            ):
                if time.monotonic() > deadline:
                    raise RuntimeError("redis-server: the three-node cluster never became ok")
                time.sleep(0.05)
            for client in clients:
                client.close()
        except BaseException:
            self.stop()
            raise
        self.url = self.nodes[0].url

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()


@pytest.fixture(scope="session", name="redis_server")
def redis_server_fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """One redis-server for the test session (no persistence); tests use their own prefixes."""
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    try:
        yield server
    finally:
        server.stop()
