"""One browser context of the renderer's pool, its page (a tab), and the page being
rendered in it: what the renderer knows of it, and its answers to the page's requests."""

from __future__ import annotations

import asyncio
import base64
from dataclasses import dataclass, field
from typing import Any

from focuscrawl.fetch.render.pipe import DevToolsPipe
from focuscrawl.types import FetchResult

_ANSWER_HEADERS = ("content-type", "cache-control", "location")


@dataclass(eq=False)
class Tab:
    """One browser context and its page, and the page being rendered in it."""

    context: str
    target: str
    session: str
    generation: int  # the browser it belongs to
    result: FetchResult | None = None
    busy: int = 0  # its requests under way
    last: float = 0.0  # when the last of them started or ended
    subs: set[asyncio.Task[Any]] = field(default_factory=set)
    shown: str = ""  # the navigation (loader id) whose document the page shows
    stopped: set[str] = field(default_factory=set)  # navigations whose document stopped loading
    changed: asyncio.Event = field(default_factory=asyncio.Event)  # one stopped loading, or a crash
    crashed: bool = False
    renders: int = 0  # pages it rendered

    def broken(self) -> None:
        """The page crashed, or its browser went away: a render waiting on it stops."""
        self.crashed = True
        self.changed.set()

    async def fail(self, pipe: DevToolsPipe, request_id: str, reason: str) -> None:
        await pipe.send("Fetch.failRequest", {"requestId": request_id, "errorReason": reason}, self.session)

    async def fulfill(self, pipe: DevToolsPipe, request_id: str, result: FetchResult) -> None:
        headers = [{"name": k, "value": v} for k, v in result.headers.items() if k.lower() in _ANSWER_HEADERS]
        if result.content_type and not any(h["name"].lower() == "content-type" for h in headers):
            headers.append({"name": "Content-Type", "value": result.content_type})
        await pipe.send("Fetch.fulfillRequest", {
            "requestId": request_id, "responseCode": result.status or 200, "responseHeaders": headers,
            "body": base64.b64encode(result.body).decode("ascii"),
        }, self.session)  # fmt: skip
