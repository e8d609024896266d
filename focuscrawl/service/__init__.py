"""``focuscrawl serve``: crawls as a service.

One aiohttp server (:mod:`.app`) with a REST API described by an OpenAPI document,
``/metrics`` for Prometheus (:mod:`.metrics`) and a web UI (:mod:`.ui`); crawls run
as child processes over the run directories of one runs directory (:mod:`.crawls`),
requests are checked by the one parameter system (:mod:`.specs`), and each crawl's
pages get a full-text index (:mod:`.search`). :mod:`.security` keeps it to its own
machine and pages unless a token is given.
"""

from __future__ import annotations

import os
import socket
from pathlib import Path

from aiohttp import web

from focuscrawl.exceptions import ConfigError
from focuscrawl.service.app import make_app
from focuscrawl.service.context import Service
from focuscrawl.service.crawls import CrawlManager
from focuscrawl.service.reading import RunReaders
from focuscrawl.service.security import TOKEN_ENV, Guard, hosts_for, is_loopback

__all__ = ["build_service", "serve"]


def build_service(
    runs_dir: Path, *, host: str, port: int, token: str | None = None,
    models_dir: Path | None = None, extra_hosts: tuple[str, ...] = (), redis_url: str | None = None,
) -> Service:  # fmt: skip
    """The service of a server bound to ``host:port`` (a token is required off loopback)."""
    token = token or os.environ.get(TOKEN_ENV) or None
    loopback = is_loopback(host)
    if not loopback and not token:
        raise ConfigError(f"serve: --host {host} is not loopback: give a token (--token or "
                          f"{TOKEN_ENV}); anyone who reaches the port could start crawls")  # fmt: skip
    if token is not None and len(token) < 16:
        raise ConfigError("serve: the token must be 16 characters at least")
    manager = CrawlManager(runs_dir)
    guard = Guard(hosts=hosts_for(host, port) | {h.lower() for h in extra_hosts}, token=token)
    return Service(manager=manager, readers=RunReaders(manager.meta_root, manager.runs_dir),
                   guard=guard, models_dir=models_dir, public_only=not loopback,
                   redis_url=redis_url)  # fmt: skip


def serve(service: Service, sock: socket.socket) -> None:
    """Resume the crawls killed with the last server, then serve on ``sock`` (listening
    already) until SIGINT/SIGTERM; the crawls are stopped cleanly with the server (and
    resumed by the next one)."""
    resumed = service.manager.recover()
    if resumed:
        print(f"focuscrawl: resumed {', '.join(resumed)}", flush=True)
    app = make_app(service)

    async def stop_children(app: web.Application) -> None:
        import asyncio

        await asyncio.to_thread(service.manager.shutdown)

    app.on_shutdown.append(stop_children)
    # a request line up to 1 MB reaches the handlers (a 100 KB search query gets the
    # server's own one-line JSON error, not the HTTP parser's plain text)
    web.run_app(app, sock=sock, print=lambda text: print(text, flush=True),
                access_log=None, shutdown_timeout=5,
                max_line_size=1 << 20)  # fmt: skip
