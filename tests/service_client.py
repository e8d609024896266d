"""A ``focuscrawl serve`` process for tests, and a small JSON client for it."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(check: Callable[[], Any], timeout: float = 120.0, what: str = "condition") -> Any:
    """``check()``'s first true value, asked again and again until ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


class Server:
    """``focuscrawl serve RUNS`` on a free port of 127.0.0.1 (or ``host``)."""

    def __init__(self, runs: Path, *args: str, host: str = "127.0.0.1", env: dict[str, str] | None = None) -> None:
        self.runs = runs
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.args = ["serve", str(runs), "--host", host, "--port", str(self.port), *args]
        self.env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
        self.proc: subprocess.Popen[bytes] | None = None
        self.output: Path = runs.parent / f"serve-{self.port}.log"

    def start(self) -> Server:
        self.runs.mkdir(parents=True, exist_ok=True)
        with open(self.output, "ab") as log:
            self.proc = subprocess.Popen([sys.executable, "-m", "focuscrawl", *self.args],
                                         stdout=log, stderr=subprocess.STDOUT, env=self.env)  # fmt: skip
        wait_for(self._up, 60, "the server to listen")
        return self

    def _up(self) -> bool:
        assert self.proc is not None
        if self.proc.poll() is not None:
            raise AssertionError(f"serve exited: {self.output.read_text()[-2000:]}")
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=1):
                return True
        except OSError:
            return False

    def stop(self, sig: str = "term") -> None:
        if self.proc is None:
            return
        if sig == "kill":
            self.proc.kill()
        else:
            self.proc.terminate()
        self.proc.wait(60)
        self.proc = None

    def __enter__(self) -> Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def call(self, method: str, path: str, body: Any = None, *, raw: bytes | None = None,
             headers: dict[str, str] | None = None) -> tuple[int, Any]:  # fmt: skip
        """(status, decoded JSON or text) of one request."""
        data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
        request = urllib.request.Request(self.base + path, data=data, method=method)
        if data is not None:
            request.add_header("Content-Type", "application/json")
        for key, value in (headers or {}).items():
            request.add_header(key, value)
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                status, text, ctype = answer.status, answer.read().decode(), answer.headers.get_content_type()
        except urllib.error.HTTPError as exc:
            status, text, ctype = exc.code, exc.read().decode(), exc.headers.get_content_type()
        return status, json.loads(text) if ctype == "application/json" else text

    def state(self, name: str) -> str:
        status, answer = self.call("GET", f"/api/crawls/{name}")
        assert status == 200, answer
        return str(answer["state"])

    def wait_state(self, name: str, *states: str, timeout: float = 120.0) -> str:
        return str(wait_for(lambda: (s := self.state(name)) in states and s, timeout, f"{name} {states}"))
