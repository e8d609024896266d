"""Command line: parse arguments, build objects, call the API. Nothing else lives here.

Exit codes: 0 success, 1 error while running, 2 bad usage or configuration
(always with one clear line on stderr).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import os
import signal
import sqlite3
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from focuscrawl.cli_args import Parser, add_verbosity, first_sentence, set_verbosity
from focuscrawl.exceptions import ConfigError, FocuscrawlError
from focuscrawl.urls import read_url_lines


def _seed_list(values: Sequence[str]) -> list[str]:
    """Seeds from URLs and/or files of URLs (one per line, # comments)."""
    seeds: list[str] = []
    for value in values:
        if "://" in value:
            seeds.append(value)
            continue
        if not Path(value).is_file():
            raise ConfigError(f"seed {value!r} is neither a URL nor a readable file")
        seeds.extend(read_url_lines(value))
    return seeds


def _default(section: str, name: str) -> str:
    """" (default: X)" with the settings' own default, for --help (the options default to
    None so that a config file's value is kept when the option is not given)."""
    from focuscrawl.settings import SECTIONS

    value = next(f.default for f in dataclasses.fields(SECTIONS[section]) if f.name == name)
    return f" (default: {value})"


def _add_crawl_arguments(p: argparse.ArgumentParser) -> None:
    d = _default
    p.add_argument("--seeds", nargs="+", default=[], metavar="URL|FILE", help="seed URLs or files of URLs")
    p.add_argument("--out", type=Path, required=True, help="run directory")
    p.add_argument("--config", type=Path, help="TOML file: [crawl] [fetch] [scope] [parse] [model] seeds=[...]")
    p.add_argument("--strategy", help="crawl strategy (see 'focuscrawl strategies')" + d("crawl", "strategy"))
    p.add_argument("--model", help="saved model directory, or a model name with defaults (default: none)")
    p.add_argument("--model-param", action="append", default=[], metavar="KEY=VALUE",
                   help="a [model] parameter, e.g. target=ja or threshold=0.3 (repeatable)")
    p.add_argument("--strategy-param", action="append", default=[], metavar="KEY=VALUE",
                   help="a strategy parameter, e.g. beta=0.25 (repeatable)")
    p.add_argument("--seed", type=int, help="random seed (ties, sampling); same seed, same crawl" + d("crawl", "seed"))
    p.add_argument("--max-pages", type=int, metavar="URLS",
                   help="URLs to fetch, every URL taken counting (404s and errors too), 0 = no limit"
                        + d("crawl", "max_pages"))  # fmt: skip
    p.add_argument("--proxy", help="HTTP proxy, e.g. the replay server http://127.0.0.1:8080")
    p.add_argument("--proxy-ca", help="CA certificate to trust for HTTPS through the proxy")
    p.add_argument("--delay", type=float, help="seconds between two requests to one host" + d("fetch", "delay"))
    p.add_argument("--concurrency", type=int, help="requests in flight" + d("fetch", "concurrency"))
    p.add_argument("--per-host", type=int, help="connections per host" + d("fetch", "per_host"))
    p.add_argument("--user-agent", help="User-Agent header" + d("fetch", "user_agent"))
    p.add_argument("--schedule", choices=["as-completed", "ordered"],
                   help="as-completed: results recorded as they arrive (fast on the real Web); "
                        "ordered: in the order taken, the same crawl for the same settings, seed "
                        "and web (default: ordered for simulate, as-completed for a live crawl)")
    p.add_argument("--window", type=int,
                   help="URLs taken and not yet recorded, 0 = the schedule's default "
                        "(32 ordered, 4 x concurrency as-completed)" + d("crawl", "window"))
    p.add_argument("--frontier", metavar="STORE|redis://HOST:PORT/DB",
                   help="the crawl DB store: indexed, sqlite, or a Redis server (one crawler "
                        "process for now; workers come later)" + d("crawl", "frontier"))  # fmt: skip
    p.add_argument("--fetch-list-size", type=int,
                   help="best-N-first batch size (0 = continuous)" + d("crawl", "fetch_list_size"))
    p.add_argument("--top-n", type=int, help="layered strategies: URLs per layer" + d("crawl", "top_n"))
    p.add_argument("--depth", type=int, help="layered strategies: number of layers" + d("crawl", "depth"))
    p.add_argument("--max-depth", type=int,
                   help="maximum link depth from a seed, -1 = no limit" + d("scope", "max_depth"))
    p.add_argument("--allow-private", action="append", default=None, metavar="HOST|CIDR",
                   help="allow a private/loopback address (the replay proxy is allowed automatically)")
    p.add_argument("--no-robots", action="store_true", help="ignore robots.txt (only for your own sites)")
    p.add_argument("--resume", action="store_true", help="continue the crawl in --out")
    p.add_argument("--json", action="store_true",
                   help="print the summary as one JSON object instead of the summary line")
    p.add_argument("--log-every", type=float, default=60.0, metavar="SECONDS",
                   help="when stderr is not a terminal: a progress line every SECONDS, 0 = none "
                        "(default: %(default)s)")  # fmt: skip


def _crawl_overrides(args: argparse.Namespace) -> dict[str, dict[str, Any]]:
    from focuscrawl.api import fetch_overrides

    fetch: dict[str, Any] = {
        "delay": args.delay,
        "concurrency": args.concurrency,
        "per_host": args.per_host,
        "user_agent": args.user_agent,
    }
    if args.no_robots:
        fetch["respect_robots"] = False
    fetch.update(fetch_overrides(args.proxy, args.allow_private or (), args.proxy_ca))
    crawl: dict[str, Any] = {
        "strategy": args.strategy,
        "max_pages": args.max_pages,
        "fetch_list_size": args.fetch_list_size,
        "schedule": args.schedule,
        "window": args.window,
        "top_n": args.top_n,
        "depth": args.depth,
        "seed": args.seed,
    }
    if args.frontier:  # a URL names the shared store's server
        shared = "://" in args.frontier
        crawl["frontier"] = "redis" if shared else args.frontier
        crawl["frontier_url"] = args.frontier if shared else None
    if args.strategy_param:
        crawl["strategy_params"] = dict(parse_param(p, "--strategy-param") for p in args.strategy_param)
    scope = {"max_depth": args.max_depth}
    overrides: dict[str, dict[str, Any]] = {"fetch": fetch, "crawl": crawl, "scope": scope}
    if args.model_param:
        overrides["model"] = dict(parse_param(p) for p in args.model_param)
    return overrides


def parse_param(text: str, option: str = "--model-param") -> tuple[str, Any]:
    """``key=value`` with a TOML value (number, boolean, array, quoted string) or a bare string.

    >>> parse_param("threshold=0.3"), parse_param("target=ja"), parse_param('keywords=["a", "b"]')
    (('threshold', 0.3), ('target', 'ja'), ('keywords', ['a', 'b']))
    """
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"{option} {text!r} is not KEY=VALUE")
    try:
        parsed: Any = tomllib.loads(f"v = {value.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        parsed = value.strip()
    return key.strip(), parsed


# what a run directory holds (the crawl's own files); anything else is the user's
RUN_FILES = frozenset({
    "run.json", "run.json.tmp", "crawl.db", "crawl.db-wal", "crawl.db-shm", "crawl.db-journal",
    "pages.jsonl", "corpus.warc.gz", "decisions.jsonl", "control.json", "control.json.tmp",
    "control.ack.json", "control.ack.json.tmp", "run.lock",
})  # fmt: skip


def _entries(path: Path) -> set[str] | None:
    """The names in directory ``path`` (None: no such directory)."""
    try:
        return {p.name for p in path.iterdir()}
    except (FileNotFoundError, NotADirectoryError):
        return None


def check_out_dir(out: Path, *, resume: bool) -> None:
    """One line where --out cannot be what the user meant: a resume without run.json (with
    the crawl DB there), a new crawl into a folder of other files."""
    names = _entries(out)
    if names is None:
        return
    if resume and "run.json" not in names and "crawl.db" in names:
        raise ConfigError(f"{out}: run.json is missing, though crawl.db holds a crawl; restore run.json "
                          "(the crawl's settings and seeds) to resume it, or start afresh in another --out")  # fmt: skip
    foreign = sorted(names - RUN_FILES)
    if not resume and foreign:
        shown = ", ".join(foreign[:3]) + (", ..." if len(foreign) > 3 else "")
        raise ConfigError(f"{out} holds files that are not a crawl's ({shown}); a new crawl needs "
                          "an empty or new --out")  # fmt: skip


def remove_failed_start(out: Path, before: set[str] | None) -> None:
    """Take back what a new crawl that failed before recording anything wrote (run.json,
    crawl.db...): else the next attempt is told to --resume a crawl that never ran."""
    pages = out / "pages.jsonl"
    if "pages.jsonl" not in (before or set()) and pages.exists() and pages.stat().st_size > 0:
        return  # pages were recorded: a crawl to resume
    made = (_entries(out) or set()) - (before or set())
    for name in made & RUN_FILES - {"run.lock"}:
        with contextlib.suppress(OSError):
            (out / name).unlink()
    if before is None:  # the directory itself was made by this attempt
        with contextlib.suppress(OSError):
            (out / "run.lock").unlink()
            out.rmdir()


def cmd_crawl(args: argparse.Namespace) -> int:
    """A crawl (or its resume), after :func:`check_out_dir`; a new crawl that fails before
    recording anything leaves no files behind."""
    check_out_dir(args.out, resume=args.resume)
    before = _entries(args.out)
    try:
        return _run_crawl(args)
    except FocuscrawlError:
        if not args.resume:
            remove_failed_start(args.out, before)
        raise


def _run_crawl(args: argparse.Namespace) -> int:
    from focuscrawl.api import open_crawl
    from focuscrawl.progress import ProgressView

    seeds = _seed_list(args.seeds)
    crawler = open_crawl(
        out_dir=args.out,
        seeds=seeds,
        config=args.config,
        overrides=_crawl_overrides(args),
        model=args.model,
        resume=args.resume,
        archives=getattr(args, "archive", None) or (),
    )
    tty = sys.stderr.isatty()
    quiet = args.verbose < 0
    view = ProgressView(
        enabled=not quiet and tty,
        max_pages=crawler.settings.crawl.max_pages,
        log_every=0.0 if quiet or tty else args.log_every,  # a log file or a pipe: lines
    )
    if view.enabled or view.log_every > 0:  # else nothing to show: no count per result
        crawler.on_progress = view.update

    signals = 0

    def on_signal() -> None:
        nonlocal signals
        signals += 1
        if signals == 1:
            print("focuscrawl: stopping; fetches in flight get 5 s (press Ctrl-C again to stop now)",
                  file=sys.stderr)  # fmt: skip
        crawler.request_stop(now=signals > 1)

    async def main() -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):  # non-Unix
                loop.add_signal_handler(sig, on_signal)
        async with crawler.fetcher:
            with view:
                await crawler.run()

    try:
        asyncio.run(main())
    finally:
        crawler.close()
    if args.json:
        summary = {"out": str(args.out), "interrupted": crawler.stopped, **crawler.stats.to_dict()}
        print(json.dumps(summary, ensure_ascii=False))
    else:
        print(view.summary_line(crawler.stats, args.out))
    return crawl_exit_code(crawler.stats, args.out, interrupted=crawler.stopped)


# what a skipped URL's reason means, for the line of a crawl that fetched nothing
_CAUSES = {
    "proxy": "the proxy could not reach the host (a host the replay server or archive does not hold?) "
             "or is not there (is --proxy right?)",
    "connect": "no connection (is --proxy right? is the network up?)",
    "dns": "the host name does not resolve",
    "ssl": "no TLS connection (--proxy-ca?)",
    "robots": "robots.txt disallows it",
    "blocked-address": "a private or loopback address (--allow-private)",
}  # fmt: skip


def crawl_exit_code(stats: Any, out: Path, *, interrupted: bool) -> int:
    """130 for an interrupted crawl (with how to resume), 1 if nothing could be fetched
    (with the cause), else 0."""
    if interrupted:
        print(f"focuscrawl: interrupted; continue with: focuscrawl crawl --out {out} --resume",
              file=sys.stderr)  # fmt: skip
        return 130
    if stats.fetched == 0 and stats.counters.get("recrawls_fetched", 0) == 0:
        causes = sorted(
            ((n, k) for k, n in stats.counters.items() if k.startswith(("skipped_", "error_")) and n),
            reverse=True,
        )
        why = ", ".join(f"{k.split('_', 1)[1]} ({n})" for n, k in causes[:3]) or "no seed was in scope"
        top = causes[0][1].split("_", 1)[1] if causes else ""
        meaning = f": {_CAUSES[top]}" if top in _CAUSES else ""
        again = ("; once the cause is fixed, --resume tries them again"
                 if top in ("proxy", "connect", "dns", "ssl") else "")  # fmt: skip
        print(f"focuscrawl: no page could be fetched: {why}{meaning}{again}", file=sys.stderr)
        return 1
    return 0


def cmd_why(args: argparse.Namespace) -> int:
    from focuscrawl.why import why

    print(why(args.run_dir, args.url))
    return 0


def cmd_control(args: argparse.Namespace) -> int:
    from focuscrawl.control import parse_assignments, wait_for_ack, withdraw_request, write_request

    request_id = write_request(args.run_dir, parse_assignments(args.assignments))
    ack = wait_for_ack(args.run_dir, request_id, timeout=args.timeout)
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


def cmd_replay(args: argparse.Namespace) -> int:
    from focuscrawl.replay import cli as replay_cli

    return int(replay_cli.run(args))


def cmd_model(args: argparse.Namespace) -> int:
    from focuscrawl.relevance import cli as model_cli

    return model_cli.main(args.model_args)


def cmd_strategies(args: argparse.Namespace) -> int:
    from focuscrawl.relevance.base import MODELS
    from focuscrawl.strategies.base import STRATEGIES, params_table
    from focuscrawl.strategies.filters import FILTERS

    rows: list[dict[str, Any]] = []
    for name in STRATEGIES.names():
        cls = STRATEGIES.get(name)
        doc = cls.__doc__ or sys.modules[cls.__module__].__doc__
        rows.append({"kind": "strategy", "name": name, "description": first_sentence(doc),
                     "params": params_table(cls.Params)})  # fmt: skip
    for name in FILTERS.names():
        flt = FILTERS.get(name)
        rows.append({"kind": "filter", "name": name, "description": first_sentence(flt.__doc__)})
    for name in MODELS.names():
        cls = MODELS.get(name)
        doc = sys.modules[cls.__module__].__doc__ or cls.__doc__
        rows.append({"kind": "model", "name": name, "description": first_sentence(doc)})
    if args.json:
        print(json.dumps(rows, indent=1, ensure_ascii=False, default=str))
        return 0
    for row in rows:
        print(f"{row['kind']:9s} {row['name']:22s} {row['description']}")
        if row.get("params"):
            print(" " * 33 + ", ".join(f"{k}={v!r}" for k, v in row["params"].items()))
    return 0


def cmd_dashboard(args: argparse.Namespace) -> int:
    from focuscrawl.dashboard import serve, tails_for

    serve(tails_for(args.runs, args.labels, args.relevant), args.host, args.port, args.every)
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from focuscrawl.demo import run_demo

    return run_demo(args.out, max_pages=args.max_pages)


def cmd_eval(args: argparse.Namespace) -> int:
    from focuscrawl.evaluation import cli as eval_cli

    return eval_cli.run_eval(args)


def cmd_experiment(args: argparse.Namespace) -> int:
    from focuscrawl.evaluation import cli as eval_cli

    return eval_cli.run_experiment(args)


def build_parser() -> argparse.ArgumentParser:
    from focuscrawl import __version__

    parser = Parser(prog="focuscrawl", description="A focused web crawler.")
    parser.add_argument("-V", "--version", action="version", version=f"focuscrawl {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)

    p = sub.add_parser("crawl", help="run (or --resume) a crawl")
    _add_crawl_arguments(p)
    p.set_defaults(func=cmd_crawl)

    p = sub.add_parser("why", help="why a URL of a run has its priority: parents, equation terms")
    p.add_argument("run_dir", type=Path)
    p.add_argument("url")
    p.set_defaults(func=cmd_why)

    p = sub.add_parser("control", help="change a running crawl's strategy parameters")
    p.add_argument("run_dir", type=Path)
    p.add_argument("assignments", nargs="+", metavar="KEY=VALUE")
    p.add_argument("--timeout", type=float, default=10.0,
                   help="seconds to wait for the crawl's answer (default: %(default)s)")
    p.set_defaults(func=cmd_control)

    p = sub.add_parser(
        "simulate", help="run a crawl offline over WARC archives (no network, no waiting)"
    )
    p.add_argument("--archive", action="append", required=True, type=Path, metavar="WARC",
                   help="a WARC archive to crawl (repeatable); answers as `focuscrawl replay` would")
    _add_crawl_arguments(p)
    p.set_defaults(func=cmd_crawl)

    p = sub.add_parser("replay", help="serve WARC archives as a web on 127.0.0.1 (HTTP proxy)")
    from focuscrawl.replay import cli as replay_cli

    replay_cli.add_arguments(p)
    p.set_defaults(func=cmd_replay)

    # the model commands import every model (scikit-learn, trafilatura...): built only when used
    p = sub.add_parser("model", help="train, score and evaluate relevance models", add_help=False)
    p.add_argument("model_args", nargs=argparse.REMAINDER)
    p.set_defaults(func=cmd_model)

    from focuscrawl.evaluation import cli as eval_cli

    p = sub.add_parser("eval", help="metrics of a run against an independent judge (labels)")
    eval_cli.add_eval_arguments(p)
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("experiment", help="strategies x topics x repetitions -> results + report")
    eval_cli.add_experiment_arguments(p)
    p.set_defaults(func=cmd_experiment)

    p = sub.add_parser("dashboard", help="follow running (or finished) crawls live in a browser")
    p.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR")
    p.add_argument("--port", type=int, default=8090, help="port on --host (default: %(default)s)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on; requests are answered for loopback Host headers "
                        "and this address only (default: %(default)s)")  # fmt: skip
    p.add_argument("--every", type=float, default=1.0,
                   help="seconds between two renewals of the page (default: %(default)s)")
    p.add_argument("--labels", type=Path, help="a label file: harvest rate by an independent judge")
    p.add_argument("--relevant", action="append", default=[], metavar="SELECTOR",
                   help="which labelled pages are relevant, e.g. type=course (repeatable: all hold)")
    p.set_defaults(func=cmd_dashboard)

    p = sub.add_parser("strategies", help="list strategies and models")
    p.add_argument("--json", action="store_true", help="as a JSON list")
    p.set_defaults(func=cmd_strategies)

    p = sub.add_parser("demo", help="replay a test web, crawl it focused and breadth-first, compare")
    p.add_argument("--out", type=Path, default=Path("demo-run"),
                   help="directory of the demo's runs, replaced by each demo (default: %(default)s)")
    p.add_argument("--max-pages", type=int, default=300,
                   help="budget of each of the two crawls (default: %(default)s)")
    p.set_defaults(func=cmd_demo)
    for name, p in sub.choices.items():
        if name != "model":  # (its own parser has them)
            add_verbosity(p)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser()
    if argv[:1] == ["model"]:  # its own parser, options included (--help)
        args = argparse.Namespace(func=cmd_model, model_args=argv[1:], verbose=0)
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
              " --resume once the cause is fixed)" if args.func is cmd_crawl else
              f"focuscrawl: {where}{exc.strerror or exc}", file=sys.stderr)  # fmt: skip
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
