"""Headless Chromium driven over the DevTools protocol (a websocket, aiohttp's client):
enough to load pages, run script in them and wait on what they show."""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from pathlib import Path
from typing import Any

import aiohttp


class Browser:
    """One headless Chromium with one page, for ``async with``."""

    def __init__(self, chromium: str, profile: Path) -> None:
        self.chromium = chromium
        self.profile = profile
        self.proc: asyncio.subprocess.Process | None = None
        self.session: aiohttp.ClientSession | None = None
        self.ws: aiohttp.ClientWebSocketResponse | None = None
        self._ids = itertools.count(1)

    async def __aenter__(self) -> Browser:
        self.proc = await asyncio.create_subprocess_exec(
            self.chromium, *["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
             "--no-first-run", "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--remote-debugging-port=0", "--remote-allow-origins=*",
             f"--user-data-dir={self.profile}", "about:blank"],
            stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
        )  # fmt: skip
        port_file = self.profile / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not (port_file.exists() and port_file.read_text().strip()):
            if time.monotonic() > deadline or self.proc.returncode is not None:
                raise AssertionError("chromium did not open its DevTools port")
            await asyncio.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        self.session = aiohttp.ClientSession()
        async with self.session.get(f"http://127.0.0.1:{port}/json/list") as answer:
            targets = await answer.json()
        page = next(t for t in targets if t.get("type") == "page")
        self.ws = await self.session.ws_connect(page["webSocketDebuggerUrl"], max_msg_size=0)
        await self.send("Page.enable")
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self.ws is not None:
            await self.ws.close()
        if self.session is not None:
            await self.session.close()
        if self.proc is not None:
            self.proc.terminate()
            try:
                await asyncio.wait_for(self.proc.wait(), 30)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()

    async def send(self, method: str, **params: Any) -> dict[str, Any]:
        assert self.ws is not None
        request_id = next(self._ids)
        await self.ws.send_str(json.dumps({"id": request_id, "method": method, "params": params}))
        while True:
            message = json.loads(await asyncio.wait_for(self.ws.receive_str(), 60))
            if message.get("id") == request_id:
                if "error" in message:
                    raise AssertionError(f"{method}: {message['error']}")
                return dict(message.get("result") or {})

    async def js(self, expression: str) -> Any:
        """The value of ``expression`` in the page (promises awaited)."""
        result = await self.send("Runtime.evaluate", expression=expression,
                                 returnByValue=True, awaitPromise=True)  # fmt: skip
        if "exceptionDetails" in result:
            raise AssertionError(f"{expression}: {result['exceptionDetails']}")
        return result.get("result", {}).get("value")

    async def goto(self, url: str) -> None:
        await self.send("Page.navigate", url=url)
        await self.wait(f"location.href === {json.dumps(url)} && document.readyState === 'complete'")

    async def wait(self, expression: str, within: float = 120.0) -> Any:
        """The first true value of ``expression``, evaluated again and again (a page that
        navigates meanwhile is waited for)."""
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            try:
                value = await self.js(expression)
            except AssertionError:  # the page was replaced while evaluating
                value = None
            if value:
                return value
            await asyncio.sleep(0.1)
        raise AssertionError(f"timed out waiting for {expression}")
