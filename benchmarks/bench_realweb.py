"""Crawl throughput under real-Web conditions: latency, hung requests and slow bodies (issue 24).

    python benchmarks/bench_realweb.py                       # faults and clean, 3,000 pages, 1 round
    python benchmarks/bench_realweb.py --pages 1000 --rounds 2 --tools focuscrawl,ordered

One replay server (a child process) serves a generated web of 200,000 pages on
2,000 hosts (``focuscrawl replay --generated 200000 --hosts 2000 --seed 1``) with
0.25 s latency on every answer, and, in the ``faults`` condition, 0.5 % of
requests hung (no answer until the client gives up) and 2 % slow bodies (1,000
bytes a second). Every crawler starts from the first ten hosts' home pages,
breadth-first, one connection per host, 1 s between two requests to one host,
30 s fetch and read timeouts, and stops at ``--pages`` responses:

* ``focuscrawl``: ``focuscrawl crawl --strategy bfs`` at its defaults (the
  as-completed schedule);
* ``ordered``: the same with ``--schedule ordered`` (the reproducible schedule:
  results recorded in the order taken, a window of ``crawl.window`` URLs);
* ``scrapy``: ``scrapy_spider.py`` with CONCURRENT_REQUESTS 256, 1 per domain,
  DOWNLOAD_DELAY 1, RANDOMIZE_DOWNLOAD_DELAY off, DOWNLOAD_TIMEOUT 30.

Every run has a server of its own, started afresh: the faults are drawn per URL
and per request of it since the server started, so each run meets the same
faulty URLs (with one server for all runs, a URL's second request in a later
run drew anew, and the runs differed by where their faults fell, which decides
a lot in a crawl of 12 s that starts from 10 hosts).

Printed per run: responses, crawl-loop pages/s (ours: ``run.json`` elapsed;
Scrapy: spider opened .. last counted response), wall pages/s, and the smallest
gap between two requests to one host in the server's log (politeness: never
below the delay). Then the medians, in the crawl loop and start to exit: per
tool, the faults' cost (faults / clean pages/s) and ours against Scrapy in each
condition. Tools take turns within a round.

``--trees A,B`` runs our crawler from other source trees too (an A/B of a
change: tool names ``focuscrawl@A``, ``focuscrawl@B``; each tree's
``PYTHONPATH``, the child run from a temporary directory).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from focuscrawl.replay.generated import GeneratedWeb
from focuscrawl.replay.process import ReplayProcess
from focuscrawl.replay.requestlog import read_log

ROOT = Path(__file__).resolve().parents[1]


def first_hosts(count: int = 10) -> list[str]:
    """The home pages of the generated web's first ``count`` hosts (site0000 .. site0009)."""
    web = GeneratedWeb(200_000, 2_000, 1)
    return [f"http://{name}/" for name in web.host_names[:count]]


WEB = ["--generated", "200000", "--hosts", "2000", "--seed", "1", "--latency", "*=0.25"]
FAULTS = ["--fault", "*=timeout:p=0.005", "--fault", "*=slow:p=0.02:chunk=1000:pause=1"]
_PROXY_VARS = ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "no_proxy", "NO_PROXY")
DELAY = 1.0


def child_env(proxy: str | None, tree: Path = ROOT) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _PROXY_VARS}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tree), os.environ.get("PYTHONPATH")]))
    # 30 s for a whole fetch, as for its reads (the workload)
    env["FOCUSCRAWL_FETCH__FETCH_TIMEOUT"] = "30"
    if proxy:
        env.update(http_proxy=proxy, https_proxy=proxy, no_proxy="")
    return env


def run_tool(tool: str, proxy: str, out: Path, pages: int, seeds: list[str]) -> dict[str, Any]:
    start = time.perf_counter()
    name, _, tree = tool.partition("@")
    if name in ("focuscrawl", "ordered"):
        command = [
            sys.executable, "-m", "focuscrawl", "crawl", "--seeds", *seeds, "--out", str(out),
            "--strategy", "bfs", "--max-pages", str(pages), "--proxy", proxy, "--quiet",
            "--delay", str(DELAY), "--per-host", "1",
        ]  # fmt: skip
        if name == "ordered":
            command += ["--schedule", "ordered"]
        # (from the output's folder: ``-m`` puts the working directory first on sys.path)
        done = subprocess.run(
            command, env=child_env(None, Path(tree) if tree else ROOT), cwd=out.parent,
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        wall = time.perf_counter() - start
        if not (out / "run.json").exists():
            raise SystemExit(f"{tool} failed ({done.returncode}): {done.stderr.strip()[-800:]}")
        summary = json.loads((out / "run.json").read_text(encoding="utf-8"))["summary"]
        return {"pages": summary["fetched"], "crawl": summary["elapsed"], "wall": wall}
    command = [
        sys.executable, str(Path(__file__).with_name("scrapy_spider.py")), "--seeds", *seeds,
        "--out", str(out), "--max-pages", str(pages), "--concurrency", "256", "--per-host", "1",
        "--delay", str(DELAY), "--timeout", "30",
        "--pqueue", "scrapy.pqueues.DownloaderAwarePriorityQueue",
    ]  # fmt: skip
    done = subprocess.run(
        command, env=child_env(proxy), capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - start
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        raise SystemExit(f"scrapy failed ({done.returncode}): {done.stderr.strip()[-800:]}")
    result = json.loads(lines[-1])
    return {"pages": result["pages"], "crawl": result["crawl_elapsed"], "wall": wall}


def min_gap(log: Path) -> float:
    """The smallest gap between the starts of two requests to one host."""
    last: dict[str, float] = {}
    gap = float("inf")
    for entry in read_log(log):
        before = last.get(entry.host)
        if before is not None:
            gap = min(gap, entry.time - before)
        last[entry.host] = entry.time
    return gap


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--pages", type=int, default=3000)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument(
        "--tools", default="focuscrawl,scrapy", help="comma-separated: focuscrawl,ordered,scrapy"
    )
    ap.add_argument("--conditions", default="faults,clean")
    ap.add_argument("--trees", default="", help="comma-separated source trees of ours to A/B")
    args = ap.parse_args(argv)
    tools = args.tools.split(",")
    for tree in filter(None, args.trees.split(",")):
        tools.append(f"focuscrawl@{Path(tree).resolve()}")
        compileall.compile_dir(Path(tree) / "focuscrawl", quiet=1)
    conditions = args.conditions.split(",")
    compileall.compile_dir(ROOT / "focuscrawl", quiet=1)
    rates: dict[tuple[str, str], list[float]] = {}
    walls: dict[tuple[str, str], list[float]] = {}
    seeds = first_hosts()
    with tempfile.TemporaryDirectory(prefix="bench-realweb-") as tmp:
        if os.environ.get("BENCH_KEEP"):
            tmp = os.environ["BENCH_KEEP"]
        work = Path(tmp)
        for condition in conditions:
            extra = FAULTS if condition == "faults" else []
            print(f"\n== {condition}: {args.pages} pages, 1 per host, delay {DELAY} s; "
                  f"{os.cpu_count()} CPUs", flush=True)  # fmt: skip
            for rnd in range(args.rounds):
                order = tools[rnd % len(tools) :] + tools[: rnd % len(tools)]
                for number, tool in enumerate(order):
                    label = tool if "@" not in tool else f"{tool.split('@')[0]}@{Path(tool).name}"
                    run = work / f"{condition}-{rnd}-{number}"
                    run.mkdir(parents=True)
                    log = run / "requests.tsv"
                    with ReplayProcess([], log_path=log, faults_args=[*WEB, *extra]) as web:
                        r = run_tool(tool, web.proxy_url, run / "out", args.pages, seeds)
                    gap = min_gap(log)
                    rate = r["pages"] / r["crawl"]
                    rates.setdefault((tool, condition), []).append(rate)
                    walls.setdefault((tool, condition), []).append(r["pages"] / r["wall"])
                    print(f"round {rnd + 1} {label:<10} {r['pages']} responses, crawl "
                          f"{r['crawl']:7.2f} s = {rate:6.1f} pages/s, wall {r['pages'] / r['wall']:6.1f} "
                          f"pages/s, smallest gap to one host {gap:.3f} s, load "
                          f"{os.getloadavg()[0]:.1f}", flush=True)  # fmt: skip
    names = {
        tool: tool if "@" not in tool else f"{tool.split('@')[0]}@{Path(tool).name}"
        for tool in tools
    }
    for kind, samples in (("crawl-loop", rates), ("wall (start to exit)", walls)):
        print(f"\nmedian {kind} pages/s")
        med = {key: statistics.median(v) for key, v in samples.items()}
        for tool in tools:
            row = "  ".join(f"{c} {med[(tool, c)]:6.1f}" for c in conditions if (tool, c) in med)
            cost = ""
            if (tool, "faults") in med and (tool, "clean") in med:
                lost = 1 - med[(tool, "faults")] / med[(tool, "clean")]
                cost = f"  faults cost {100 * lost:5.1f} %"
            print(f"  {names[tool]:<10} {row}{cost}")
        for tool in tools:
            if tool == "scrapy":
                continue
            for c in conditions:
                if (tool, c) in med and ("scrapy", c) in med:
                    ratio = med[(tool, c)] / med[("scrapy", c)]
                    print(f"  {names[tool]}/scrapy {c}: {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
