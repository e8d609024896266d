"""``focuscrawl serve RUNS_DIR``: the REST API, /metrics and the web UI over the crawls
of one runs directory (see :mod:`focuscrawl.service`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from focuscrawl.commands import Command
from focuscrawl.exceptions import ConfigError


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("runs_dir", type=Path, nargs="?", default=Path("runs"),
                   help="where the crawls' run directories are (default: %(default)s)")  # fmt: skip
    p.add_argument("--host", default="127.0.0.1",
                   help="address to bind (default: %(default)s; another needs a token)")  # fmt: skip
    p.add_argument("--port", type=int, default=8321, help="port (default: %(default)s)")
    p.add_argument("--token", help="the token clients give (default: $FOCUSCRAWL_TOKEN); "
                                   "required off loopback")  # fmt: skip
    p.add_argument("--models", type=Path, default=None, metavar="DIR",
                   help="trained models (one directory each) that the start form offers")  # fmt: skip
    p.add_argument("--redis", metavar="redis://HOST:PORT/DB", default=None,
                   help="the Redis of shared crawls (a request's \"workers\": N); workers on "
                        "other machines join with `focuscrawl worker --frontier URL`")  # fmt: skip
    p.add_argument("--allow-host", action="append", default=[], metavar="HOST:PORT",
                   help="another name clients reach the server by (a proxy's; Host header check)")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    try:
        import jinja2  # noqa: F401
        import prometheus_client  # noqa: F401
    except ImportError as exc:
        raise ConfigError(f"serve: needs {exc.name} (pip install 'focuscrawl[serve]')") from None
    from focuscrawl.service import build_service, serve

    if not 0 < args.port < 65536:
        raise ConfigError(f"serve: --port {args.port}: not a port")
    if args.redis is not None and not args.redis.startswith(("redis://", "rediss://", "unix://")):
        raise ConfigError(f"serve: --redis {args.redis!r}: not a redis:// URL")
    if args.models is not None and not args.models.is_dir():
        raise ConfigError(f"serve: --models {args.models}: no such directory")
    service = build_service(args.runs_dir, host=args.host, port=args.port, token=args.token,
                            models_dir=args.models, extra_hosts=tuple(args.allow_host),
                            redis_url=args.redis)  # fmt: skip
    # the address before anything starts: on a port taken the server used to resume its
    # killed crawls, then fail to bind and leave them interrupted (exit 1, aiohttp's line)
    from focuscrawl.commands.dashboard import listen

    serve(service, listen(args.host, args.port, "serve"))
    return 0


COMMAND = Command("serve", "crawls as a service: REST API, /metrics, web UI", add_arguments, run)
