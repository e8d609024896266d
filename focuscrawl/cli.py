"""Command line: parse arguments and dispatch to a command of :mod:`focuscrawl.commands`.
Nothing else lives here.

Exit codes: 0 success, 1 error while running, 2 bad usage or configuration
(always with one clear line on stderr).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path

from focuscrawl import __version__
from focuscrawl.cli_args import Parser, add_verbosity, set_verbosity
from focuscrawl.commands import (
    Command,
    control,
    crawl,
    dashboard,
    demo,
    evaluate,
    export,
    model,
    refresh,
    replay,
    serve,
    simulate,
    strategies,
    why,
    worker,
)  # fmt: skip
from focuscrawl.exceptions import ConfigError, FocuscrawlError

# the subcommands, in the order of --help
COMMANDS: tuple[Command, ...] = (
    crawl.COMMAND,
    worker.COMMAND,
    why.COMMAND,
    control.COMMAND,
    simulate.COMMAND,
    refresh.COMMAND,
    replay.COMMAND,
    model.COMMAND,
    evaluate.EVAL,
    evaluate.EXPERIMENT,
    dashboard.COMMAND,
    export.COMMAND,
    serve.COMMAND,
    strategies.COMMAND,
    demo.COMMAND,
)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="focuscrawl", description="A focused web crawler.")
    parser.add_argument("-V", "--version", action="version", version=f"focuscrawl {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for command in COMMANDS:
        if command.own_parser:  # the rest of the line is the command's to parse
            p = sub.add_parser(command.name, help=command.help, add_help=False)
            p.add_argument("rest", nargs=argparse.REMAINDER)
        else:
            p = sub.add_parser(command.name, help=command.help, strict=True)
            command.add_arguments(p)
            add_verbosity(p)
        p.set_defaults(func=command.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    own = next((c for c in COMMANDS if c.own_parser and argv[:1] == [c.name]), None)
    if own is not None:  # its own parser, options included (--help)
        args = argparse.Namespace(func=own.run, rest=argv[1:], verbose=0)
    else:
        args = parser.parse_args(argv)
    set_verbosity(args.verbose)
    try:
        return int(args.func(args))
    except ConfigError as exc:
        print(f"focuscrawl: {exc}", file=sys.stderr)
        return 2
    except UnicodeDecodeError as exc:  # a binary file where text was expected, not caught above
        print(f"focuscrawl: an input file is not UTF-8 text ({exc.reason} at byte {exc.start})", file=sys.stderr)
        return 2
    except sqlite3.DatabaseError as exc:  # a damaged crawl.db, or a full disk under it
        where = f" in {args.out / 'crawl.db'}" if isinstance(getattr(args, "out", None), Path) else ""
        print(f"focuscrawl: the crawl DB failed{where}: {exc}", file=sys.stderr)
        return 1
    except FocuscrawlError as exc:
        print(f"focuscrawl: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("focuscrawl: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # output piped into head and the like: not an error
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - so that exit does not flush again
        return 0
    # after BrokenPipeError, which is one: a full disk, an output removed or made read-only
    except OSError as exc:
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"focuscrawl: {where}{exc.strerror or exc} (the crawl DB keeps the last commit:"
              " --resume once the cause is fixed)" if args.func is crawl.run else
              f"focuscrawl: {where}{exc.strerror or exc}", file=sys.stderr)  # fmt: skip
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
