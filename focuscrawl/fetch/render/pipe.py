"""The DevTools protocol over a browser's pipe (``--remote-debugging-pipe``): the
browser reads commands from its descriptor 3 and writes answers and events to its
descriptor 4, each message JSON ended by a NUL byte. No port is opened: nothing but
the crawler can drive the browser.

One :class:`DevToolsPipe` per browser: :meth:`send` a command (to the browser, or to a
page's session with ``session``), :meth:`on` to receive a session's events. When the
browser goes away every command waiting, and every later one, raises
:class:`BrowserGone`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import signal
from collections.abc import Callable
from typing import Any

Handler = Callable[[str, dict[str, Any]], None]
_LIMIT = 1 << 28  # bytes of one message at most (a DOM serialised by value)


class BrowserError(Exception):
    """A command the browser refused (its error message)."""


class BrowserGone(BrowserError):
    """The browser exited, crashed or closed its pipe."""


class DevToolsPipe:
    """A browser process and the DevTools connection over its pipe."""

    def __init__(self, process: asyncio.subprocess.Process, reader: asyncio.StreamReader,
                 writer: asyncio.WriteTransport) -> None:  # fmt: skip
        self.process = process
        self._reader = reader
        self._writer = writer
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._handlers: dict[str | None, Handler] = {}
        self._gone = False
        self.when_gone: Callable[[], None] | None = None  # called once, as the browser goes
        self._reading = asyncio.ensure_future(self._read())

    @classmethod
    async def launch(cls, argv: list[str]) -> DevToolsPipe:
        """Start ``argv`` (a browser with ``--remote-debugging-pipe``) with the pipe on
        its descriptors 3 and 4, in a process group of its own (closed whole)."""
        command_read, command_write = os.pipe()
        answer_read, answer_write = os.pipe()
        # the pipe's ends come as the shell's stdin and stdout; it moves them to 3 and 4
        # and becomes the browser (Debian's launchers are shell scripts too: descriptors
        # pass through them)
        script = 'exec "$@" 3<&0 4>&1 </dev/null >/dev/null'
        try:
            process = await asyncio.create_subprocess_exec(
                "/bin/sh", "-c", script, "sh", *argv, stdin=command_read, stdout=answer_write,
                stderr=asyncio.subprocess.DEVNULL, start_new_session=True,
            )  # fmt: skip
        finally:
            os.close(command_read)
            os.close(answer_write)
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=_LIMIT)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(answer_read, "rb", buffering=0))
        writer, _ = await loop.connect_write_pipe(asyncio.Protocol, os.fdopen(command_write, "wb", buffering=0))
        return cls(process, reader, writer)

    @property
    def alive(self) -> bool:
        return not self._gone

    def on(self, session: str | None, handler: Handler | None) -> None:
        """Send ``session``'s events (the browser's: None) to ``handler`` (None: drop them)."""
        if handler is None:
            self._handlers.pop(session, None)
        else:
            self._handlers[session] = handler

    async def send(self, method: str, params: dict[str, Any] | None = None, session: str | None = None) -> dict[str, Any]:
        """The result of one command, or :class:`BrowserError`."""
        if self._gone:
            raise BrowserGone("browser closed")
        message: dict[str, Any] = {"id": next(self._ids), "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        answer = asyncio.get_running_loop().create_future()
        self._waiting[message["id"]] = answer
        try:
            self._writer.write(json.dumps(message).encode() + b"\0")
            result: dict[str, Any] = await answer
            return result
        finally:
            self._waiting.pop(message["id"], None)

    async def _read(self) -> None:
        try:
            while True:
                raw = await self._reader.readuntil(b"\0")
                message = json.loads(raw[:-1])
                if "id" in message:
                    answer = self._waiting.get(message["id"])
                    if answer is None or answer.done():
                        continue
                    if "error" in message:
                        answer.set_exception(BrowserError(str(message["error"].get("message", message["error"]))))
                    else:
                        answer.set_result(message.get("result") or {})
                elif (handler := self._handlers.get(message.get("sessionId"))) is not None:
                    handler(message.get("method", ""), message.get("params") or {})
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError, ValueError):
            pass
        finally:
            self._gone = True
            for answer in self._waiting.values():
                if not answer.done():
                    answer.set_exception(BrowserGone("browser closed"))
            if self.when_gone is not None:
                self.when_gone()

    async def close(self, grace: float = 5.0) -> None:
        """Ask the browser to close; its process group is killed if it has not within ``grace``."""
        if not self._gone:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.send("Browser.close"), grace)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.process.wait(), grace)
        # the browser's helpers (and a launcher script's child) share its process group
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.process.wait(), grace)
        self._writer.close()
        self._reading.cancel()
        with contextlib.suppress(BaseException):
            await self._reading
