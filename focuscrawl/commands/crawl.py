"""``focuscrawl crawl``: run (or ``--resume``) a crawl, with a progress view, Ctrl-C as a
clean stop, a summary line and an exit code that says what happened.

The run directory is checked first (:func:`check_out_dir`) and a new crawl that failed
before recording anything takes back what it wrote, under the run directory's lock
(:meth:`~focuscrawl.output.lock.RunLock.take_back`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import re
import signal
import sys
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from focuscrawl.commands import Command
from focuscrawl.commands.progress import ProgressView, summary_text
from focuscrawl.exceptions import ConfigError, FocuscrawlError
from focuscrawl.output.lock import RUN_FILES
from focuscrawl.settings import SECTIONS, read_run_json
from focuscrawl.urls import read_seed_file


def _seed_list(values: Sequence[str]) -> list[str]:
    """Seeds from URLs and/or files of URLs (one per line, # comments)."""
    seeds: list[str] = []
    for value in values:
        if "://" in value:
            seeds.append(value)
            continue
        if not Path(value).is_file():
            raise ConfigError(f"seed {value!r} is neither a URL nor a readable file")
        seeds.extend(read_seed_file(value))
    return seeds


def _default(section: str, name: str) -> str:
    """" (default: X)" with the settings' own default, for --help (the options default to
    None so that a config file's value is kept when the option is not given)."""
    value = next(f.default for f in dataclasses.fields(SECTIONS[section]) if f.name == name)
    return f" (default: {value})"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``crawl`` (and of ``simulate``, which adds ``--archive``)."""
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
    p.add_argument("--patience", type=float, metavar="Q",
                   help="while URLs are in flight, leave queued a URL scoring below Q x the best "
                        "score in flight (a focused crawl finding its good URLs one by one); "
                        "0 = off" + d("crawl", "patience"))
    p.add_argument("--frontier", metavar="STORE|redis://HOST:PORT/DB",
                   help="the crawl DB store: indexed, or a Redis server (shared by "
                        "--workers, and by `focuscrawl worker` on other machines)"
                        + d("crawl", "frontier"))  # fmt: skip
    p.add_argument("--workers", type=int, metavar="N",
                   help="with --frontier redis://...: N local worker processes share the crawl "
                        "(each its own run directory under OUT/workers/); more join with "
                        "`focuscrawl worker` (default: one process, no workers)")  # fmt: skip
    p.add_argument("--filter", action="append", default=None, metavar="NAME[:KEY=VALUE,...]",
                   help="a link filter, e.g. language:target=ja or language:target=ja,rule=any "
                        "(repeatable, applied in order; see `focuscrawl strategies`)")
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
    p.add_argument("--force", action="store_true",
                   help="with --resume: go on with another strategy, model, schedule or "
                        "live/simulated (recorded in run.json as a second segment)")  # fmt: skip
    p.add_argument("--json", action="store_true",
                   help="print the summary as one JSON object instead of the summary line")
    p.add_argument("--log-every", type=float, default=60.0, metavar="SECONDS",
                   help="when stderr is not a terminal: a progress line every SECONDS, 0 = none "
                        "(default: %(default)s)")  # fmt: skip


def _crawl_overrides(args: argparse.Namespace) -> dict[str, Any]:
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
        "patience": args.patience,
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
    overrides: dict[str, Any] = {"fetch": fetch, "crawl": crawl, "scope": scope}
    if args.model_param:
        overrides["model"] = dict(parse_param(p) for p in args.model_param)
    if args.filter:
        overrides["filters"] = [parse_filter(text) for text in args.filter]
    return overrides


def parse_filter(text: str) -> dict[str, Any]:
    """``NAME`` or ``NAME:KEY=VALUE,KEY=VALUE`` as a ``[[filters]]`` table; a value may hold
    commas (a list) up to the next ``KEY=``.

    >>> parse_filter("language:target=ja,ko,rule=any")
    {'name': 'language', 'target': 'ja,ko', 'rule': 'any'}
    >>> parse_filter("host-blacklist")
    {'name': 'host-blacklist'}
    """
    name, _, rest = text.partition(":")
    if not name.strip():
        raise ConfigError(f"--filter {text!r}: give a filter's name, e.g. --filter language:target=ja")
    table: dict[str, Any] = {"name": name.strip()}
    for item in re.split(r",(?=\s*[A-Za-z_][\w-]*\s*=)", rest) if rest.strip() else []:
        key, value = parse_param(item, f"--filter {name}")
        table[key] = value
    return table


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


def run(args: argparse.Namespace) -> int:
    """A crawl (or its resume), after :func:`check_out_dir`; a new crawl that fails before
    recording anything takes back the files it wrote (:meth:`RunLock.take_back`)."""
    if args.force and not args.resume:
        raise ConfigError("--force goes with --resume (it lets a resume change the crawl's strategy, model...)")
    check_out_dir(args.out, resume=args.resume)
    return _run_crawl(args)


def _run_shared(args: argparse.Namespace) -> int:
    """``--workers N``: the crawl published in Redis, N local workers run to its end."""
    from focuscrawl.workers import prepare_shared, run_shared

    if getattr(args, "archive", None):
        raise ConfigError("--workers: a simulation runs in one process (no --archive)")
    shared = prepare_shared(
        args.out, _seed_list(args.seeds), workers=args.workers, config=args.config,
        overrides=_crawl_overrides(args), model=args.model, resume=args.resume,
    )  # fmt: skip
    try:
        if args.verbose >= 0:
            print(f"focuscrawl: shared crawl {shared.prefix} on {shared.frontier_url}: "
                  f"{shared.workers} workers; more join with: focuscrawl worker --frontier "
                  f"{shared.frontier_url} --crawl {shared.prefix} --out DIR{shared.join_args}",
                  file=sys.stderr)  # fmt: skip
        summary = run_shared(args.out, shared.workers, frontier_url=shared.frontier_url,
                             prefix=shared.prefix, run=shared.run)  # fmt: skip
    except FocuscrawlError:
        if not args.resume:
            shared.lock.take_back()  # (under the lock, released below)
        raise
    finally:
        shared.lock.release()
    if args.json:
        print(json.dumps({"out": str(args.out), **summary}, ensure_ascii=False))
    else:  # the one-machine crawl's line, from the merged summary
        print(summary_text(summary, args.out, workers=shared.workers))
    if read_finished(args.out):
        return 0
    # workers stopped by the Ctrl-C (or SIGTERM) passed on to them: 130, as one process's
    # crawl (this was 1, the status of a failure, for an interrupted shared crawl)
    codes = read_run_json(args.out / "run.json").get("worker_exit_codes") or []
    return 130 if 130 in codes and all(code in (0, 130) for code in codes) else 1


def _is_shared(out: Path) -> bool:
    from focuscrawl.workers import is_shared

    return is_shared(out)


def read_finished(out: Path) -> bool:
    return bool(read_run_json(out / "run.json").get("finished"))


def _run_crawl(args: argparse.Namespace) -> int:
    from focuscrawl.api import open_crawl

    if getattr(args, "workers", None) is not None or (args.resume and _is_shared(args.out)):
        return _run_shared(args)
    seeds = _seed_list(args.seeds)
    crawler = open_crawl(
        out_dir=args.out,
        seeds=seeds,
        config=args.config,
        overrides=_crawl_overrides(args),
        model=args.model,
        resume=args.resume,
        archives=getattr(args, "archive", None) or (),
        force=args.force,
    )
    before = _finished_summary(args.out) if args.resume else None
    tty = sys.stderr.isatty()
    quiet = args.verbose < 0
    view = ProgressView(
        enabled=not quiet and tty,
        max_pages=crawler.settings.crawl.max_pages,
        log_every=0.0 if quiet or tty else args.log_every,  # a log file or a pipe: lines
    )
    if view.enabled or view.log_every > 0:  # else nothing to show: no count per result
        crawler.on_progress = view.update

    async def main() -> None:
        stop_on_signals(crawler, say=True)
        async with crawler.fetcher:
            with view:
                await crawler.run()

    failed = False
    try:
        asyncio.run(main())
    except FocuscrawlError:
        failed = True
        raise
    finally:
        crawler.close(failed=failed)
    done_before = before is not None and not crawler.stopped and crawler.stats.fetched == before
    if args.json:
        summary = {"out": str(args.out), "interrupted": crawler.stopped, **crawler.stats.to_dict()}
        print(json.dumps({**summary, "finished_before": True} if done_before else summary, ensure_ascii=False))
    elif done_before:
        again = " ".join(["focuscrawl", "simulate" if getattr(args, "archive", None) else "crawl",
                          *(f"--archive {a}" for a in getattr(args, "archive", None) or ())])  # fmt: skip
        print(finished_line(crawler.stats, crawler.settings.crawl.max_pages, args.out, again))
    else:
        print(view.summary_line(crawler.stats, args.out))
    return crawl_exit_code(crawler.stats, args.out, interrupted=crawler.stopped)


def _finished_summary(out: Path) -> int | None:
    """The URLs a finished crawl in ``out`` fetched (None: not finished)."""
    run = read_run_json(out / "run.json")
    return int((run.get("summary") or {}).get("fetched") or 0) if run.get("finished") else None


def finished_line(stats: Any, budget: int, out: Path, again: str = "focuscrawl crawl") -> str:
    """What a resume of a finished crawl that took no URL says, instead of a summary
    line as if it had crawled: that it was finished, and how to crawl more (``again``:
    the command that resumes it)."""
    if stats.queued == 0:
        why = "nothing was left in its queue (every URL in scope was taken)"
        more = "a new crawl with other seeds or a wider scope crawls more"
    else:
        why = f"its budget of {budget:,} URLs was spent" if budget > 0 else "it was finished"
        more = (f"to crawl more, resume with a budget above {stats.fetched:,}: "
                f"{again} --out {out} --resume --max-pages {2 * max(stats.fetched, 1)}")  # fmt: skip
    return (f"{out}: the crawl was finished already ({stats.fetched:,} URLs fetched, "
            f"{stats.queued:,} queued): {why}; nothing crawled now; {more}")  # fmt: skip


def stop_on_signals(crawler: Any, *, say: bool) -> None:
    """SIGINT and SIGTERM stop ``crawler`` cleanly (a second one: at once), in the running
    loop; ``say``: one line on stderr at the first (a worker's coordinator says it)."""
    signals = 0

    def on_signal() -> None:
        nonlocal signals
        signals += 1
        if signals == 1 and say:
            print("focuscrawl: stopping; requests under way get 5 s (press Ctrl-C again to stop now)",
                  file=sys.stderr)  # fmt: skip
        crawler.request_stop(now=signals > 1)

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):  # non-Unix
            loop.add_signal_handler(sig, on_signal)


# what a skipped URL's reason means, for the line of a crawl that fetched nothing
_CAUSES = {
    "proxy": "the proxy could not reach the host or is not there (is --proxy right?)",
    "connect": "no connection (is --proxy right? is the network up?)",
    "dns": "the host name does not resolve (simulate, replay: the archive holds no page of the host)",
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


COMMAND = Command("crawl", "run (or --resume) a crawl", add_arguments, run)
