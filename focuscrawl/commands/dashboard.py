"""``focuscrawl dashboard RUN [RUN ...]``: serve the dashboard of :mod:`focuscrawl.dashboard`
on 127.0.0.1 (aiohttp): ``/`` the page, ``/fragment`` its live part, ``/api/runs`` the
numbers as JSON, to requests whose Host header is a loopback name or the address
listened on only (:func:`host_allowed`)."""

from __future__ import annotations

import argparse
import errno
import os
import socket
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from focuscrawl.commands import Command
from focuscrawl.dashboard import RunTail, render_fragment, render_page
from focuscrawl.evaluation.run import LabelJudge
from focuscrawl.exceptions import ConfigError


def host_allowed(host_header: str, listen_host: str = "127.0.0.1") -> bool:
    """Is ``Host`` one this server may answer: a loopback name or address, or the
    address it was told to listen on? A page of another site whose name was made to
    resolve to 127.0.0.1 (DNS rebinding) sends its own name and is refused.

    >>> [host_allowed(h) for h in ("127.0.0.1:8090", "localhost", "[::1]:8090", "evil.example:8090")]
    [True, True, True, False]
    >>> host_allowed("192.168.1.5:8090", listen_host="192.168.1.5"), host_allowed("x.example", "0.0.0.0")
    (True, False)
    """
    from focuscrawl.fetch.addresses import is_local_name, parse_ip

    host = host_header.strip().lower()
    if host.startswith("["):
        host = host[: host.find("]") + 1]
    elif host.count(":") == 1:
        host = host.split(":", 1)[0]
    ip = parse_ip(host)
    if (ip is not None and ip.is_loopback) or is_local_name(host):
        return True
    return bool(host) and host.strip("[]") == listen_host.strip("[]").lower() and listen_host not in ("0.0.0.0", "::")


def build_app(tails: Sequence[RunTail], every: float = 1.0, listen_host: str = "127.0.0.1") -> Any:
    """The aiohttp application (``/``, ``/fragment``, ``/api/runs``), answering only
    requests whose Host header passes :func:`host_allowed` (421 otherwise)."""
    from aiohttp import web

    @web.middleware
    async def check_host(request: web.Request, handler: Any) -> web.StreamResponse:
        if not host_allowed(request.headers.get("Host", ""), listen_host):
            return web.Response(status=421, text="focuscrawl dashboard: this Host is not served\n")
        response: web.StreamResponse = await handler(request)
        return response

    def refresh() -> None:
        for tail in tails:
            tail.update()

    async def page(_: web.Request) -> web.Response:
        refresh()
        return web.Response(text=render_page(tails, every), content_type="text/html")

    async def fragment(_: web.Request) -> web.Response:
        refresh()
        return web.Response(text=render_fragment(tails), content_type="text/html",
                            headers={"Cache-Control": "no-store"})  # fmt: skip

    async def api(_: web.Request) -> web.Response:
        refresh()
        return web.json_response({"runs": [t.snapshot() for t in tails]})

    app = web.Application(middlewares=[check_host])
    app.router.add_get("/", page)
    app.router.add_get("/fragment", fragment)
    app.router.add_get("/api/runs", api)
    return app


def tails_for(runs: Sequence[Path], labels: Path | None, relevant: Sequence[str]) -> list[RunTail]:
    """One tail per run directory, all judged by the same labels (if given)."""
    if bool(labels) != bool(relevant):
        raise ConfigError("dashboard: --labels and --relevant go together")
    judge = LabelJudge.from_file(labels, list(relevant)) if labels else None
    return [RunTail(Path(r), judge) for r in runs]


def serve(tails: Sequence[RunTail], host: str, port: int, every: float) -> None:
    """Serve until interrupted (Ctrl-C)."""
    from aiohttp import web

    if every <= 0:
        raise ConfigError("dashboard: --every must be > 0")
    sock = listen(host, port)  # the address first: its URL is printed once it is ours
    shown = f"[{host}]" if ":" in host else host
    print(f"dashboard of {len(tails)} run(s) at http://{shown}:{port}/ (Ctrl-C to stop)", flush=True)
    web.run_app(build_app(tails, every, host), sock=sock, print=None)


def listen(host: str, port: int, command: str = "dashboard") -> socket.socket:
    """A listening socket on ``host``:``port``, or one line saying why not (a port taken)."""
    try:
        family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
        return socket.create_server((host, port), family=family, reuse_port=False)
    except OSError as exc:
        taken = " (another program listens there: --port another)" if exc.errno == errno.EADDRINUSE else ""
        why = os.strerror(exc.errno) if exc.errno and exc.errno > 0 else (exc.strerror or str(exc))
        raise ConfigError(f"{command}: cannot listen on {host}:{port}: {why}{taken}") from None


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR")
    p.add_argument("--port", type=int, default=8090, help="port on --host (default: %(default)s)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on; requests are answered for loopback Host headers "
                        "and this address only (default: %(default)s)")  # fmt: skip
    p.add_argument("--every", type=float, default=1.0,
                   help="seconds between two renewals of the page (default: %(default)s)")
    p.add_argument("--labels", type=Path, help="a label file: harvest rate by an independent judge")
    p.add_argument("--relevant", action="append", default=[], metavar="SELECTOR",
                   help="which labelled pages are relevant, e.g. type=course (repeatable: all hold)")


def run(args: argparse.Namespace) -> int:
    serve(tails_for(args.runs, args.labels, args.relevant), args.host, args.port, args.every)
    return 0


COMMAND = Command("dashboard", "follow running (or finished) crawls live in a browser", add_arguments, run)
