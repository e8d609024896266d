"""``focuscrawl replay``: serve WARC archives (or a generated web) as a web on 127.0.0.1;
the server and its options are :mod:`focuscrawl.replay.cli`'s."""

from __future__ import annotations

import argparse

from focuscrawl.commands import Command
from focuscrawl.replay import cli as replay_cli


def run(args: argparse.Namespace) -> int:
    return int(replay_cli.run(args))


COMMAND = Command(
    "replay", "serve WARC archives as a web on 127.0.0.1 (HTTP proxy)", replay_cli.add_arguments, run
)
