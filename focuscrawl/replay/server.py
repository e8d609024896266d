"""Serve WARC archives as a web on loopback, as an HTTP forward proxy.

A crawler given ``--proxy http://127.0.0.1:PORT`` reaches ``http://any-host/path``
here: an archived URL gets its archived status, headers and body (the body
byte for byte as stored, whatever its charset); an unknown URL on a host that
has records gets 404 (so does ``/robots.txt`` when not archived); an unknown
host gets 502, as a DNS failure would. What is answered is decided by
:meth:`focuscrawl.replay.answer.ArchiveWeb.answer`, which a simulation's
archive transport calls too; this module only adds sockets, TLS, the request
log and faults. ``https://`` URLs come through
``CONNECT`` tunnels in which the server speaks TLS with a certificate from a
local CA (``ca_cert_path``). Raw asyncio streams rather than a framework,
because faults need low-level control: resets, hangs, trickled bodies.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import ssl
import tempfile
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType
from typing import Protocol
from urllib.parse import urlsplit, urlunsplit

from focuscrawl.exceptions import ConfigError
from focuscrawl.replay.answer import ArchiveWeb, ReplayAnswer
from focuscrawl.replay.archive import ArchiveIndex
from focuscrawl.replay.changes import ChangePlan
from focuscrawl.replay.faults import Fault, FaultPlan
from focuscrawl.replay.requestlog import LogEntry, RequestLog
from focuscrawl.replay.tls import LocalCA
from focuscrawl.replay.wire import (
    DEFAULT_PORTS,
    UNKNOWN_HOST,
    BadRequest,
    Request,
    read_request,
    request_url,
    reset_connection,
    simple_response,
)


class _LogFn(Protocol):
    def __call__(self, status: int, nbytes: int, note: str = "-") -> None: ...


class ReplayServer:
    """An HTTP forward proxy on loopback that answers from WARC archives."""

    def __init__(
        self,
        archives: Sequence[Path],
        host: str = "127.0.0.1",
        port: int = 0,
        log_path: Path | None = None,
        faults: FaultPlan | None = None,
        *,
        ca_dir: Path | None = None,
        index: ArchiveIndex | None = None,
        web: ArchiveWeb | None = None,
        changes: ChangePlan | None = None,
    ) -> None:
        self.archives = [Path(path) for path in archives]
        # "localhost" may resolve to ::1 and 127.0.0.1, each bound to its own free port
        self.host = "127.0.0.1" if host == "localhost" else host
        self.port = port
        self.log_path = None if log_path is None else Path(log_path)
        self.faults = faults if faults is not None else FaultPlan()
        # ``web``: what answers instead of the archives (a generated web); ``index``: the
        # archives' index built already; else it is built at start
        self.changes = changes  # pages that change between visits (archives only)
        self.web = web if web is not None else ArchiveWeb(index if index is not None else ArchiveIndex(), changes)
        self._prebuilt = index is not None or web is not None
        self._ca_dir = ca_dir
        self._tempdir: tempfile.TemporaryDirectory[str] | None = None
        self._ca: LocalCA | None = None
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._log = RequestLog(None)

    @property
    def proxy_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def ca_cert_path(self) -> Path:
        if self._ca is None:
            raise ConfigError("the replay server is not started: no CA certificate yet")
        return self._ca.cert_path

    async def start(self) -> None:
        if not self._prebuilt:
            self.web = ArchiveWeb(await asyncio.to_thread(ArchiveIndex.build, self.archives), self.changes)
        if self._ca_dir is None:
            self._tempdir = tempfile.TemporaryDirectory(prefix="focuscrawl-replay-ca-")
            self._ca_dir = Path(self._tempdir.name)
        try:
            self._ca = LocalCA(self._ca_dir)
            self._log = RequestLog(self.log_path)
            self._server = await asyncio.start_server(self._serve_connection, self.host, self.port)
        except BaseException:
            await self.stop()
            raise
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()
            self._server = None
        self._log.close()
        if self._tempdir is not None:
            self._tempdir.cleanup()
            self._tempdir = None
            self._ca_dir = None

    async def __aenter__(self) -> ReplayServer:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    @property
    def index(self) -> ArchiveIndex:
        return self.web.index

    def find(self, url: str) -> str | None:
        """The archived URL that answers a request for ``url``, if any."""
        return self.web.find(url)

    def knows_host(self, host: str) -> bool:
        return self.web.knows_host(host)

    async def _serve_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        peer = writer.get_extra_info("peername")
        client = int(peer[1]) if isinstance(peer, tuple) and len(peer) > 1 else 0
        tunnel: str | None = None
        try:
            while True:
                try:
                    request = await read_request(reader)
                except BadRequest:
                    await self._reply(writer, 400, "bad request", keep=False)
                    break
                if request is None:
                    break
                if request.method == "CONNECT" and tunnel is None:
                    tunnel = await self._connect(request, writer, client)
                    if tunnel is None:
                        break
                    continue
                if not await self._serve_request(request, reader, writer, client, tunnel):
                    break
        except (ConnectionError, ssl.SSLError, asyncio.IncompleteReadError, TimeoutError):
            pass  # the client went away; nothing to answer
        finally:
            if not writer.transport.is_closing():
                writer.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(writer.wait_closed(), 1.0)
            if task is not None:
                self._tasks.discard(task)

    def _write_reply(
        self,
        writer: asyncio.StreamWriter,
        status: int,
        text: str,
        keep: bool,
        extra: Sequence[tuple[str, str]] = (),
    ) -> int:
        """Queue a short answer of the proxy itself; the number of body bytes in it.

        Callers log before ``drain()``: a client that hangs up while the answer
        is in flight still made the request, and politeness checks must see it.
        """
        data, length = simple_response(status, text, keep, extra)
        writer.write(data)
        return length

    async def _reply(
        self,
        writer: asyncio.StreamWriter,
        status: int,
        text: str,
        keep: bool,
        extra: Sequence[tuple[str, str]] = (),
    ) -> int:
        length = self._write_reply(writer, status, text, keep, extra)
        await writer.drain()
        return length

    async def _connect(
        self, request: Request, writer: asyncio.StreamWriter, client: int
    ) -> str | None:
        """Answer ``CONNECT host:port``: open a TLS tunnel, or 502 for an unknown host."""
        host, _, port_text = request.target.rpartition(":")
        host = host.strip("[]").lower()
        if not host or not port_text.isdigit():
            await self._reply(writer, 400, "CONNECT needs host:port", keep=False)
            return None
        if not self.knows_host(host):
            sent = self._write_reply(writer, 502, f"unknown host {host}", keep=False, extra=(UNKNOWN_HOST,))
            self._log.write(LogEntry(request.time, client, "CONNECT", host, "", 502, sent))
            await writer.drain()
            return None
        assert self._ca is not None
        try:
            context = self._ca.context_for(host)
        except (ValueError, ssl.SSLError, OSError):
            await self._reply(writer, 502, f"no certificate for {host}", keep=False)
            return None
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await writer.drain()
        await writer.start_tls(context, ssl_handshake_timeout=30)
        return request.target

    async def _serve_request(
        self,
        request: Request,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        client: int,
        tunnel: str | None,
    ) -> bool:
        """Answer one request; True if the connection stays open."""
        keep = request.keep_alive()
        url = request_url(request, tunnel)
        try:
            parts = urlsplit(url or "")
            host = (parts.hostname or "").lower()
            port = parts.port
        except ValueError:
            host, port = "", None
        if url is None or not host:
            await self._reply(writer, 400, "bad request target or Host", keep=False)
            return False
        log_host = (
            host if port in (None, DEFAULT_PORTS.get(parts.scheme.lower())) else f"{host}:{port}"
        )
        path = urlunsplit(("", "", parts.path or "/", parts.query, ""))

        def log(status: int, nbytes: int, note: str = "-") -> None:
            self._log.write(
                LogEntry(request.time, client, request.method, log_host, path, status, nbytes, note)
            )

        delay = self.faults.latency_for(host)
        if delay > 0:
            await asyncio.sleep(delay)
        fault = self.faults.pick(host, path)
        if fault is not None and fault.kind in ("reset", "timeout", "500", "503", "429"):
            return await self._answer_fault(fault, reader, writer, keep, log)
        if request.method not in ("GET", "HEAD"):
            log(405, self._write_reply(writer, 405, f"{request.method} is not served", False))
            await writer.drain()
            return False

        answer = await self.web.answer(url, method=request.method, keep=keep, conditional=request.headers)
        return await self._send(answer, fault, writer, keep, log)

    async def _send(
        self,
        answer: ReplayAnswer,
        fault: Fault | None,
        writer: asyncio.StreamWriter,
        keep: bool,
        log: _LogFn,
    ) -> bool:
        """Write an answer, damaged by a body fault if one applies; True to keep going."""
        head, body = answer.head(), answer.body
        if not answer.archived or fault is None:
            log(answer.status, len(body))
            writer.write(head + body)
            await writer.drain()
            return keep
        if fault.kind == "truncate" and body:
            body = body[: len(body) // 2]
            log(answer.status, len(body), "truncate")
            writer.write(head + body)
            await writer.drain()
            return False
        if fault.kind == "slow":
            log(answer.status, len(body), "slow")
            writer.write(head)
            for start in range(0, len(body), fault.chunk):
                await writer.drain()
                await asyncio.sleep(fault.pause)
                writer.write(body[start : start + fault.chunk])
            await writer.drain()
            return keep
        log(answer.status, len(body))
        writer.write(head + body)
        await writer.drain()
        return keep

    async def _answer_fault(
        self,
        fault: Fault,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        keep: bool,
        log: _LogFn,
    ) -> bool:
        if fault.kind == "reset":
            log(0, 0, "reset")
            reset_connection(writer)
            return False
        if fault.kind == "timeout":
            log(0, 0, "timeout")
            # hold the connection, reading and dropping whatever comes, until the client gives up
            while await reader.read(65536):
                pass
            return False
        status = int(fault.kind)
        extra = [] if status == 500 else [("Retry-After", str(math.ceil(fault.retry_after)))]
        log(status, self._write_reply(writer, status, "injected fault", keep, extra), fault.kind)
        await writer.drain()
        return keep
