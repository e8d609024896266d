"""``focuscrawl refresh RUN [--max-pages N]``: a finished crawl's pages visited again,
the likeliest to have changed first, each asked conditionally (focuscrawl.refresh)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from focuscrawl.commands import Command


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dir", type=Path)
    p.add_argument("--max-pages", type=int, default=None,
                   help="pages to visit again at most (default: all the run's pages)")  # fmt: skip
    p.add_argument("--delay", type=float, default=None, help="seconds between two requests to one host")
    p.add_argument("--proxy", default=None, help="another HTTP proxy than the crawl's")


def run(args: argparse.Namespace) -> int:
    from focuscrawl.commands.progress import skipped_text
    from focuscrawl.refresh import refresh

    fetch: dict[str, Any] = {}
    if args.delay is not None:
        fetch["delay"] = args.delay
    if args.proxy is not None:
        fetch["proxy"] = args.proxy
    done = refresh(args.run_dir, max_pages=args.max_pages, overrides={"fetch": fetch} if fetch else None)
    c = done.counters
    print(f"refresh {done.round} of {args.run_dir}: {done.revisits:,} pages visited again of "
          f"{done.planned:,} planned: {c['changed']:,} changed, {c['unchanged']:,} unchanged "
          f"({c['not_modified']:,} answered 304, {done.not_modified_share:.1%} of the re-visits); "
          f"{c['errors']:,} without an answer"
          + (f", {c['server_failed']:,} answered by a server failure (5xx, 429: no change known)"
             if c["server_failed"] else "")
          + skipped_text(c), file=sys.stdout)  # fmt: skip
    return 0


COMMAND = Command("refresh", "visit a finished crawl's pages again, asking conditionally", add_arguments, run)
