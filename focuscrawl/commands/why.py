"""``focuscrawl why RUN_DIR URL``: the URL's row in the crawl DB and every decision
that gave it a score (which parent, which equation term), from ``decisions.jsonl``
(:mod:`focuscrawl.why`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from focuscrawl.commands import Command


def why(run_dir: Path, url: str) -> str:
    """The explanation ``focuscrawl why`` prints: the URL's decisions, then its row."""
    from focuscrawl.why import explain_url  # the crawl's modules: only when run

    return str(explain_url(Path(run_dir), url)["text"])


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dir", type=Path)
    p.add_argument("url")


def run(args: argparse.Namespace) -> int:
    print(why(args.run_dir, args.url))
    return 0


COMMAND = Command(
    "why", "why a URL of a run has its priority: parents, equation terms", add_arguments, run
)
