"""``focuscrawl control RUN_DIR KEY=VALUE...``: change a running crawl's strategy
parameters through its control channel (:mod:`focuscrawl.control`) and wait for its answer."""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from focuscrawl.commands import Command
from focuscrawl.control import wait_for_ack, withdraw_request, write_request
from focuscrawl.exceptions import ConfigError


def parse_assignments(items: list[str]) -> dict[str, Any]:
    """``["high=80", "tiers=false"]`` -> ``{"high": 80, "tiers": False}`` (JSON values, else text).

    >>> parse_assignments(["high=80", "tiers=false", "name=otie"])
    {'high': 80, 'tiers': False, 'name': 'otie'}
    """
    out: dict[str, Any] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"control: {item!r} is not key=value")
        try:
            out[key.strip()] = json.loads(value)
        except ValueError:
            out[key.strip()] = value
    return out


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("run_dir", type=Path)
    p.add_argument("assignments", nargs="+", metavar="KEY=VALUE")
    p.add_argument("--timeout", type=float, default=10.0,
                   help="seconds to wait for the crawl's answer, and for a crawl still starting "
                        "(default: %(default)s)")  # fmt: skip


def run(args: argparse.Namespace) -> int:
    # a crawl still starting (no run.json yet) is waited for within the same timeout
    deadline = time.monotonic() + args.timeout
    request_id = write_request(args.run_dir, parse_assignments(args.assignments), wait=args.timeout)
    ack = wait_for_ack(args.run_dir, request_id, timeout=max(0.0, deadline - time.monotonic()))
    if ack is None:
        # withdrawn: a request no crawl answered must not be applied by a later --resume
        withdrawn = withdraw_request(args.run_dir, request_id)
        print(f"focuscrawl: no answer to request {request_id} within {args.timeout:g} s (is the crawl "
              f"running?); {'withdrawn' if withdrawn else 'answered since'}", file=sys.stderr)  # fmt: skip
        return 1
    if not ack.get("ok"):
        raise ConfigError(str(ack.get("error", "refused")))
    print(f"request {request_id} applied")
    return 0


COMMAND = Command("control", "change a running crawl's strategy parameters", add_arguments, run)
