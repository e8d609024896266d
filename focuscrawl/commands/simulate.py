"""``focuscrawl simulate``: a crawl offline over WARC archives (no network, no waiting):
the crawl command with ``--archive``."""

from __future__ import annotations

import argparse
from pathlib import Path

from focuscrawl.commands import Command, crawl


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--archive", action="append", required=True, type=Path, metavar="WARC",
                   help="a WARC archive to crawl (repeatable); answers as `focuscrawl replay` would")  # fmt: skip
    crawl.add_arguments(p)


COMMAND = Command(
    "simulate", "run a crawl offline over WARC archives (no network, no waiting)", add_arguments, crawl.run
)
