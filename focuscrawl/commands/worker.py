"""``focuscrawl worker``: join a shared crawl (published in Redis by ``focuscrawl crawl
--frontier redis://... --workers N``) from this machine, into a run directory of its own."""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import sys
from pathlib import Path

from focuscrawl.commands import Command
from focuscrawl.commands.crawl import stop_on_signals


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--frontier", required=True, metavar="redis://HOST:PORT/DB",
                   help="the Redis that holds the shared crawl")  # fmt: skip
    p.add_argument("--crawl", metavar="PREFIX",
                   help="which shared crawl (its key prefix, as `focuscrawl crawl --workers` "
                        "prints it); needed only when that Redis holds more than one")  # fmt: skip
    where = p.add_mutually_exclusive_group(required=True)
    where.add_argument("--out", type=Path,
                       help="this worker's run directory (its WARC, pages.jsonl...); an existing "
                            "one is resumed: its files cut back to its last commit")  # fmt: skip
    where.add_argument("--runs", type=Path, metavar="RUNS",
                       help="the runs directory the crawl's coordinator (or `focuscrawl serve "
                            "RUNS`) writes to, seen here: this worker's directory is "
                            "RUNS/NAME/workers/HOSTNAME, beside the crawl's own workers")  # fmt: skip
    p.add_argument("--lease-seconds", type=float, default=30.0, metavar="SECONDS",
                   help="how long this worker's partitions wait for it if it dies, before "
                        "another worker takes them (default: %(default)s)")  # fmt: skip
    p.add_argument("--model-digest", metavar="SHA256",
                   help="the digest of the crawl's model, as `focuscrawl crawl --workers` "
                        "prints it: needed when the model reads files (a saved model, a topic "
                        "file...), which a worker loads only if they match it")  # fmt: skip
    p.add_argument("--wait", action="store_true",
                   help="no shared crawl being crawled: wait for one (said once) rather than "
                        "exit 2; with --runs, once it ends wait for the next (a standby "
                        "worker, as compose.yaml's); Ctrl-C or SIGTERM stops it")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")


_WAIT_POLL = 2.0  # seconds between two looks for a crawl to join (--wait)


def run(args: argparse.Namespace) -> int:
    # --wait: for a crawl to be crawled; with --runs and no --crawl, one after another
    standby = args.wait and args.runs is not None and args.crawl is None
    resumed = args.out is not None and (args.out / "crawl.db").exists()  # (its crawl named there)
    joined: set[str] = set()  # (the crawls this process worked on, ended)
    while True:
        crawl = _awaited(args, joined) if args.wait and not resumed else args.crawl
        code = _join(args, crawl)
        if code or not standby or crawl is None:
            return code
        joined.add(crawl)
        args.out = None  # (the next crawl's directory)


def _awaited(args: argparse.Namespace, joined: set[str]) -> str:
    """The crawl to join, waited for while there is none (said once per wait)."""
    import time

    from focuscrawl.workers.shared import NoCrawlToJoin, chosen_crawl

    said = False
    while True:
        try:
            return chosen_crawl(args.frontier, args.crawl, running=True, skip=joined)
        except NoCrawlToJoin as exc:
            if not said and args.verbose >= 0:
                print(f"focuscrawl: worker: {exc}; waiting for one (Ctrl-C to stop)",
                      file=sys.stderr, flush=True)  # fmt: skip
            said = True
        time.sleep(_WAIT_POLL)


def _join(args: argparse.Namespace, crawl: str | None) -> int:
    from focuscrawl.workers import Worker, open_worker
    from focuscrawl.workers.shared import joining_dir

    if args.out is None:  # (a container keeps its host name when restarted: resumed)
        args.out = joining_dir(args.runs, args.frontier, crawl, socket.gethostname())

    async def main(worker: Worker) -> None:
        stop_on_signals(worker.crawler, say=False)  # (the coordinator, if any, says it once)
        await worker.run()

    while True:  # opened again when claims came back after its own were used (Worker.run)
        worker = open_worker(
            args.frontier, args.out, crawl=crawl, lease_seconds=args.lease_seconds,
            model_digest=args.model_digest,
        )  # fmt: skip
        crawler = worker.crawler
        try:
            asyncio.run(main(worker))
        finally:
            worker.close()
        if not worker.more:
            break
    stats = crawler.stats
    if args.json:
        print(json.dumps({"out": str(args.out), "worker": worker.name, "interrupted": crawler.stopped,
                          **stats.to_dict()}, ensure_ascii=False))  # fmt: skip
    elif args.verbose >= 0:
        print(f"worker {worker.name}: {stats.fetched} URLs fetched, {stats.relevant} relevant"
              f" -> {args.out}", file=sys.stderr)  # fmt: skip
    if crawler.stopped:
        print(f"focuscrawl: worker interrupted; continue with: focuscrawl worker --frontier "
              f"{args.frontier} --out {args.out}", file=sys.stderr)  # fmt: skip
        return 130
    return 0


COMMAND = Command(
    "worker", "join a shared crawl (Redis) as one more worker process", add_arguments, run
)
