"""What the server's handlers share (the API's and the UI's alike)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from aiohttp import web

from focuscrawl.service.crawls import CrawlManager
from focuscrawl.service.reading import RunReaders
from focuscrawl.service.security import Guard
from focuscrawl.service.specs import check_name


@dataclass
class Service:
    """What the handlers share: the crawls, their readers, where models are, the guard."""

    manager: CrawlManager
    readers: RunReaders
    guard: Guard
    models_dir: Path | None = None
    public_only: bool = False
    redis_url: str | None = None  # where shared crawls keep their frontier
    index_every: float = 1.0

    def known(self, request: web.Request) -> str:
        name = check_name(request.match_info["name"])
        self.manager.spec(name)  # 404 for a crawl that is not there
        return name


SERVICE = web.AppKey("service", Service)
