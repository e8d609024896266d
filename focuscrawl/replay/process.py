"""Run the replay server in a child process, so crawler and server do not share a GIL.

with ReplayProcess([Path("webkb.warc.gz")], log_path=Path("requests.tsv")) as web:
    crawl(proxy=web.proxy_url, cafile=web.ca_cert_path)
"""

from __future__ import annotations

import contextlib
import os
import re
import select
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import IO

from focuscrawl.exceptions import FocuscrawlError
from focuscrawl.replay.tls import CA_CERT_NAME

_SERVING = re.compile(rb"^replay: serving (\d+) URLs from \d+ archives on (http://\S+):(\d+)\s*$")
# the package's parent directory, so that the child imports this very focuscrawl
_ROOT = Path(__file__).resolve().parents[2]


class ReplayProcess:
    """``python -m focuscrawl.commands.replay ARCHIVES --port 0 ...`` as a context manager."""

    def __init__(
        self,
        archives: Sequence[Path],
        log_path: Path | None = None,
        faults_args: Sequence[str] = (),
        *,
        host: str = "127.0.0.1",
        ca_dir: Path | None = None,
        startup_timeout: float = 120.0,
        stop_signal: int = signal.SIGTERM,
    ) -> None:
        self.archives = [Path(path) for path in archives]
        self.log_path = log_path
        self.faults_args = list(faults_args)
        self.host = host
        self.startup_timeout = startup_timeout
        self.stop_signal = stop_signal
        self.returncode: int | None = None
        self.port = 0
        self.urls = 0
        self._ca_dir = ca_dir
        self._tempdir: tempfile.TemporaryDirectory[str] | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None

    @property
    def proxy_url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def ca_cert_path(self) -> Path:
        if self._ca_dir is None:
            raise FocuscrawlError("the replay process is not started: no CA certificate yet")
        return self._ca_dir / CA_CERT_NAME

    @property
    def pid(self) -> int:
        return self._process.pid if self._process is not None else 0

    def start(self) -> None:
        if self._ca_dir is None:
            self._tempdir = tempfile.TemporaryDirectory(prefix="focuscrawl-replay-")
            self._ca_dir = Path(self._tempdir.name)
        command = [
            sys.executable,
            "-m",
            "focuscrawl.commands.replay",
            *map(str, self.archives),
            "--host",
            self.host,
            "--port",
            "0",
            "--ca-dir",
            str(self._ca_dir),
            *self.faults_args,
        ]
        if self.log_path is not None:
            command += ["--log", str(self.log_path)]
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(_ROOT), env.get("PYTHONPATH")]))
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in stop()
        self._process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=self._stderr, env=env
        )
        try:
            line = self._first_line()
        except BaseException:
            self.stop()
            raise
        match = _SERVING.match(line)
        if match is None:
            self.stop()
            raise FocuscrawlError(f"replay process: unexpected first line {line[:200]!r}")
        self.urls, self.port = int(match.group(1)), int(match.group(3))

    def _first_line(self) -> bytes:
        assert self._process is not None
        assert self._process.stdout is not None
        fd = self._process.stdout.fileno()
        deadline = time.monotonic() + self.startup_timeout
        data = b""
        while b"\n" not in data:
            left = deadline - time.monotonic()
            if left <= 0:
                raise FocuscrawlError(
                    f"replay process: no serving line within {self.startup_timeout:g} s"
                )
            poller = select.poll()  # (not select: a process may hold over 1,024 descriptors)
            poller.register(fd, select.POLLIN)
            ready = poller.poll(min(left, 0.5) * 1000)
            chunk = os.read(fd, 4096) if ready else b""
            if ready and not chunk:
                raise FocuscrawlError(f"replay process failed to start: {self._stderr_tail()}")
            data += chunk
        return data.split(b"\n", 1)[0]

    def _stderr_tail(self) -> str:
        if self._process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self._process.wait(timeout=5)
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        lines = self._stderr.read().decode("utf-8", "replace").strip().splitlines()
        return lines[-1] if lines else f"exit status {self._process and self._process.returncode}"

    def stop(self) -> None:
        """Stop the child (``stop_signal``, then SIGKILL after 10 s) and clean up."""
        process, self._process = self._process, None
        if process is not None:
            if process.poll() is None:
                process.send_signal(self.stop_signal)
                try:
                    process.wait(timeout=10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
            self.returncode = process.returncode
            if process.stdout is not None:
                process.stdout.close()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        if self._tempdir is not None:
            self._tempdir.cleanup()
            self._tempdir = None
            self._ca_dir = None

    def __enter__(self) -> ReplayProcess:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
