"""Crawl throughput on the replay web: focuscrawl against Scrapy, same proxy, same archive.

    PYTHONPATH=. python benchmarks/bench_crawl.py                 # 3 rounds, 2,000 pages
    PYTHONPATH=. python benchmarks/bench_crawl.py --rounds 1 --profile /tmp/crawl.prof

One replay server (a child process) serves ``../shared/testweb/webkb.warc.gz``;
both crawlers run breadth-first from the four WebKB department home pages with
no delay, 16 connections and 1 per host, obeying robots.txt, until 2,000 URLs
have been fetched (any status). Each run is a fresh child process; the tools
alternate (and which one goes first alternates between rounds), so both see the
same machine load. Reported per tool, as the median of the rounds:

* wall pages/s: pages / (process start .. exit), start-up and shutdown included;
* crawl pages/s: pages / the crawl loop's own time (ours: ``run.json`` elapsed;
  Scrapy: spider opened .. last counted response).

``requests`` is what the replay server logged for the run (robots.txt included):
it shows both tools did comparable work. The Scrapy side is ``scrapy_spider.py``.
``--profile FILE`` also runs our crawler once under cProfile and prints the top
functions.
"""

from __future__ import annotations

import argparse
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from focuscrawl.demo import WEBKB_SEEDS as SEEDS
from focuscrawl.replay.process import ReplayProcess

ROOT = Path(__file__).resolve().parents[1]
TESTWEB = ROOT.parent / "shared" / "testweb"
_PROXY_VARS = ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "no_proxy", "NO_PROXY")


def child_env(proxy: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _PROXY_VARS}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    if proxy:  # Scrapy's HttpProxyMiddleware reads these (robots.txt requests included)
        env.update(http_proxy=proxy, https_proxy=proxy, no_proxy="")
    return env


def log_lines(path: Path) -> int:
    if not path.exists():
        return 0
    with path.open("rb") as fh:
        return sum(1 for _ in fh)


def ours_command(proxy: str, out: Path, max_pages: int) -> list[str]:
    return [
        "-m", "focuscrawl", "crawl", "--seeds", *SEEDS, "--out", str(out), "--strategy", "bfs",
        "--max-pages", str(max_pages), "--proxy", proxy, "--delay", "0", "--concurrency", "16",
        "--per-host", "1", "--quiet",
    ]  # fmt: skip


def run_ours(proxy: str, out: Path, max_pages: int) -> dict[str, Any]:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *ours_command(proxy, out, max_pages)],
        env=child_env(None), capture_output=True, text=True, check=False,
    )  # fmt: skip
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"focuscrawl failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    summary = json.loads((out / "run.json").read_text(encoding="utf-8"))["summary"]
    return {"pages": summary["fetched"], "html": summary["pages"], "wall": wall, "crawl": summary["elapsed"]}


def run_scrapy(proxy: str, out: Path, max_pages: int, pqueue: str) -> dict[str, Any]:
    command = [
        sys.executable, str(Path(__file__).with_name("scrapy_spider.py")), "--seeds", *SEEDS,
        "--out", str(out), "--max-pages", str(max_pages), "--pqueue", pqueue,
    ]  # fmt: skip
    start = time.perf_counter()
    done = subprocess.run(command, env=child_env(proxy), capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"scrapy failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    result = json.loads(lines[-1])
    return {"pages": result["pages"], "html": result["html"], "wall": wall, "crawl": result["crawl_elapsed"]}


def profile_ours(proxy: str, out: Path, max_pages: int, prof: Path, top: int) -> None:
    command = [sys.executable, "-m", "cProfile", "-o", str(prof), *ours_command(proxy, out, max_pages)]
    subprocess.run(command, env=child_env(None), capture_output=True, check=True)
    stats = pstats.Stats(str(prof))
    stats.sort_stats("tottime").print_stats(top)
    stats.sort_stats("cumulative").print_stats(top)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--archive", type=Path, default=TESTWEB / "webkb.warc.gz")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--max-pages", type=int, default=2000)
    ap.add_argument("--scrapy-pqueue", default="scrapy.pqueues.ScrapyPriorityQueue",
                    help="Scrapy's SCHEDULER_PRIORITY_QUEUE (default: strict breadth-first)")  # fmt: skip
    ap.add_argument("--profile", type=Path, help="also cProfile one run of ours into this file")
    ap.add_argument("--top", type=int, default=30, help="functions shown by --profile")
    args = ap.parse_args(argv)
    if not args.archive.exists():
        raise SystemExit(f"no archive {args.archive}")

    runs: dict[str, list[dict[str, Any]]] = {"focuscrawl": [], "scrapy": []}
    with tempfile.TemporaryDirectory(prefix="bench-crawl-") as tmp:
        work = Path(tmp)
        log = work / "requests.tsv"
        with ReplayProcess([args.archive], log_path=log) as web:
            print(f"replay: {web.urls} URLs at {web.proxy_url}; {os.cpu_count()} CPUs")
            tools = ["focuscrawl", "scrapy"]
            for rnd in range(args.rounds):
                for tool in tools if rnd % 2 == 0 else tools[::-1]:
                    out = work / f"{tool}-{rnd}"
                    before, load = log_lines(log), os.getloadavg()[0]
                    if tool == "focuscrawl":
                        result = run_ours(web.proxy_url, out, args.max_pages)
                    else:
                        result = run_scrapy(web.proxy_url, out, args.max_pages, args.scrapy_pqueue)
                    result["requests"] = log_lines(log) - before
                    result["load"] = load
                    runs[tool].append(result)
                    print(
                        f"round {rnd + 1} {tool:<10} {result['pages']} pages ({result['html']} HTML, "
                        f"{result['requests']} requests) wall {result['wall']:6.2f} s = "
                        f"{result['pages'] / result['wall']:6.1f} pages/s, crawl {result['crawl']:6.2f} s = "
                        f"{result['pages'] / result['crawl']:6.1f} pages/s, load {load:.2f}",
                        flush=True,
                    )
            if args.profile is not None:
                profile_ours(web.proxy_url, work / "profile", args.max_pages, args.profile, args.top)

    def median_rate(tool: str, key: str) -> float:
        return float(statistics.median(r["pages"] / r[key] for r in runs[tool]))

    print(f"\nmedian of {args.rounds} rounds, load average (1 min) now {os.getloadavg()[0]:.2f}; "
          "both tools ran alternately under the same conditions")  # fmt: skip
    for key, label in (("wall", "wall (start-up included)"), ("crawl", "crawl loop only")):
        ours, theirs = median_rate("focuscrawl", key), median_rate("scrapy", key)
        print(f"{label:<26} focuscrawl {ours:7.1f} pages/s   scrapy {theirs:7.1f} pages/s   "
              f"ratio {ours / theirs:5.2f}x")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
