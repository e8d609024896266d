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
    p.add_argument("--json", action="store_true", help="print the summary as one JSON object")


def run(args: argparse.Namespace) -> int:
    from focuscrawl.workers import Worker, open_worker
    from focuscrawl.workers.shared import joining_dir

    if args.out is None:  # (a container keeps its host name when restarted: resumed)
        args.out = joining_dir(args.runs, args.frontier, args.crawl, socket.gethostname())

    async def main(worker: Worker) -> None:
        stop_on_signals(worker.crawler, say=False)  # (the coordinator, if any, says it once)
        await worker.run()

    while True:  # opened again when claims came back after its own were used (Worker.run)
        worker = open_worker(
            args.frontier, args.out, crawl=args.crawl, lease_seconds=args.lease_seconds,
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
