"""``focuscrawl replay ARCHIVE.warc.gz [...] --port P``: serve archives as a web on loopback.

``focuscrawl replay --generated N_PAGES --hosts N_HOSTS --seed S`` serves a
generated web instead (:mod:`focuscrawl.replay.generated`), the same way.

Also runnable as ``python -m focuscrawl.commands.replay`` (``ReplayProcess`` does
that, so that a crawler and the server do not share one interpreter's GIL).
The first line on stdout is always
``replay: serving N URLs from K archives on http://127.0.0.1:PORT``.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

from focuscrawl.commands import Command
from focuscrawl.exceptions import FocuscrawlError
from focuscrawl.replay.changes import ChangePlan
from focuscrawl.replay.faults import FaultPlan
from focuscrawl.replay.generated import GeneratedWeb


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "archives", nargs="*", type=Path, metavar="ARCHIVE", help="WARC files to serve"
    )
    parser.add_argument(
        "--generated",
        type=int,
        metavar="N_PAGES",
        help="serve a generated web of N_PAGES pages instead of archives (deterministic from --seed)",
    )
    parser.add_argument(
        "--hosts", type=int, default=2000, help="hosts of the generated web (default: %(default)s)"
    )
    parser.add_argument("--host", default="127.0.0.1", help="loopback address to listen on")
    parser.add_argument(
        "--port", type=int, default=8080, help="port to listen on (0: any free port)"
    )
    parser.add_argument("--log", type=Path, metavar="FILE", help="append one TSV line per request")
    parser.add_argument(
        "--latency",
        action="append",
        default=[],
        metavar="HOST=SECONDS",
        help="delay every answer from HOST (a name or pattern such as * or *.org)",
    )
    parser.add_argument(
        "--fault",
        action="append",
        default=[],
        metavar="HOST[PATH]=KIND[:OPTION...]",
        help="inject a fault: KIND timeout|500|503|429|reset|slow|truncate; options "
        "p=PROB, first=N (first N requests of each URL), retry-after=S, chunk=B, pause=S",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of probabilistic faults and of the generated web"
    )
    parser.add_argument(
        "--change-share", type=float, default=0.0, metavar="SHARE",
        help="share of the archived pages that change after each visit (default: none)",
    )
    parser.add_argument(
        "--change-seed", type=int, default=0, help="seed of the choice of the changing pages"
    )
    parser.add_argument(
        "--ca-dir", type=Path, help="directory for the https CA (default: temporary)"
    )


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _fail(message: str) -> int:
    print(f"replay: error: {message}", file=sys.stderr, flush=True)
    return 2


async def _serve(args: argparse.Namespace, plan: FaultPlan, changes: ChangePlan | None) -> int:
    # the server (its TLS: cryptography, ~80 ms) only when one is run: every
    # ``focuscrawl`` command builds this module's parser
    from focuscrawl.replay.server import ReplayServer

    web = None
    if args.generated is not None:  # it takes the place of the archives: same server, same wire
        try:
            web = GeneratedWeb(args.generated, args.hosts, args.seed)
        except FocuscrawlError as exc:
            return _fail(str(exc))
    server = ReplayServer(
        args.archives,
        host=args.host,
        port=args.port,
        log_path=args.log,
        faults=plan,
        ca_dir=args.ca_dir,
        web=web,
        changes=changes,
    )
    try:
        await server.start()
    except FocuscrawlError as exc:
        return _fail(str(exc))
    except OSError as exc:
        return _fail(f"cannot listen on {args.host}:{args.port} ({exc.strerror or exc})")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    urls = len(server.web)
    print(
        f"replay: serving {urls} URLs from {len(server.archives)} archives on {server.proxy_url}",
        flush=True,
    )
    if isinstance(web, GeneratedWeb):
        print(
            f"replay: generated web of {web.pages} pages on {web.host_count} hosts, seed {web.seed}"
        )
        seeds = " ".join(web.home_urls(3))
        print(f"replay: seed URLs (the largest hosts' home pages): {seeds}", flush=True)
    print(f"replay: CA certificate for https tunnels: {server.ca_cert_path}", flush=True)
    try:
        await stop.wait()
    finally:
        await server.stop()
    return 0


def run(args: argparse.Namespace) -> int:
    """Serve until SIGINT or SIGTERM; 0 then, 2 on bad arguments or archives."""
    if not _is_loopback(args.host):
        return _fail(f"--host must be a loopback address, not {args.host!r}")
    if not 0 <= args.port <= 65535:
        return _fail(f"--port must be in 0..65535, not {args.port}")
    if args.generated is not None and args.archives:
        return _fail("give ARCHIVE files or --generated, not both")
    if args.generated is None and not args.archives:
        return _fail("give ARCHIVE files to serve, or --generated N_PAGES")
    for path in args.archives:
        if not Path(path).is_file():
            return _fail(f"{path}: no such archive")
    if args.change_share and args.generated is not None:
        return _fail("--change-share applies to archives, not to --generated")
    try:
        plan = FaultPlan.parse(args.latency, args.fault, seed=args.seed)
        changes = ChangePlan(args.change_share, args.change_seed) if args.change_share else None
    except FocuscrawlError as exc:
        return _fail(str(exc))
    try:
        return asyncio.run(_serve(args, plan, changes))
    except KeyboardInterrupt:  # a second Ctrl-C while stopping
        return 130


COMMAND = Command("replay", "serve WARC archives as a web on 127.0.0.1 (HTTP proxy)", add_arguments, run)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="focuscrawl replay", description=__doc__.splitlines()[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
