"""A crawl shared by worker processes through Redis against one process (issue 25).

    python benchmarks/bench_workers.py                         # 3,000 pages, 1 round
    python benchmarks/bench_workers.py --pages 2000 --rounds 2 --tools one,workers-2

The real-Web workload of bench_realweb.py without its faults: one replay server (a
child process) serves the generated web of 200,000 pages on 2,000 hosts with 0.25 s
latency on every answer; every run starts from its first ten hosts' home pages,
breadth-first, one connection per host, 1 s between two requests to one host, and
stops at ``--pages`` URLs. Each run has a fresh ``redis-server`` on 127.0.0.1
(``--save ''``, no AOF):

* ``one``: ``focuscrawl crawl`` at its defaults (the crawl DB in the run directory);
* ``redis``: one process with ``--frontier redis://...`` (no workers);
* ``workers-N``: ``--frontier redis://... --workers N`` (N local worker processes).

Printed per run: URLs recorded (all workers), wall pages/s (start to exit, the
start of N processes included), crawl pages/s (URLs over the longest worker's
crawl time), CPU per URL of the crawler processes (all workers and the
coordinator) and of redis-server, and the smallest gap between two requests to one host in the server's
log (politeness: never below the delay, whatever N). On a machine with few cores
the workers share them with the replay server and Redis: the numbers say what N
processes give *here*; see the README's sizing for what a worker costs.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import psutil
from bench_realweb import DELAY, WEB, child_env, first_hosts

from focuscrawl.replay.process import ReplayProcess
from focuscrawl.replay.requestlog import read_log


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start_redis(directory: Path) -> tuple[subprocess.Popen[bytes], str]:
    binary = shutil.which("redis-server") or "/usr/bin/redis-server"
    port = _free_port()
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--dir", str(directory)],
        stdout=subprocess.DEVNULL,
    )  # fmt: skip
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc, f"redis://127.0.0.1:{port}/0"
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError("redis-server did not start")


def run_tool(
    tool: str, proxy: str, out: Path, pages: int, seeds: list[str], delay: float = DELAY
) -> dict[str, Any]:
    command = [
        sys.executable, "-m", "focuscrawl", "crawl", "--seeds", *seeds, "--out", str(out),
        "--strategy", "bfs", "--max-pages", str(pages), "--proxy", proxy, "--quiet",
        "--delay", str(delay), "--per-host", "1",
    ]  # fmt: skip
    redis_proc = None
    if tool != "one":
        redis_proc, url = start_redis(out.parent)
        command += ["--frontier", url]
        if tool.startswith("workers-"):
            command += ["--workers", tool.split("-", 1)[1]]
    start = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    redis_cpu = 0.0
    try:
        subprocess.run(command, check=True, env=child_env(None), stdout=subprocess.DEVNULL)
    finally:
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)  # the crawl's processes, workers too
        if redis_proc is not None:
            redis_cpu = _cpu_of(redis_proc.pid)
            redis_proc.terminate()
            redis_proc.wait()
    crawl_cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    files = sorted(out.glob("workers/*/pages.jsonl")) or [out / "pages.jsonl"]
    urls = sum(len(f.read_text(encoding="utf-8").splitlines()) for f in files)
    runs = sorted(out.glob("workers/*/run.json")) or [out / "run.json"]
    elapsed = max(json.loads(r.read_text())["summary"]["elapsed"] for r in runs)
    return {
        "urls": urls, "wall": urls / wall, "crawl": urls / elapsed if elapsed else 0.0,
        "cpu_ms": 1000 * crawl_cpu / max(urls, 1), "redis_ms": 1000 * redis_cpu / max(urls, 1),
    }  # fmt: skip


def _cpu_of(pid: int) -> float:
    """CPU seconds (user + system) a running process has used so far (psutil)."""
    times = psutil.Process(pid).cpu_times()
    return times.user + times.system


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=3000)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--tools", default="one,redis,workers-1,workers-2,workers-4")
    ap.add_argument("--cpu-bound", action="store_true",
                    help="no latency and no per-host delay: what the processes' CPU allows "
                         "(the real-Web workload is bound by politeness: hosts x 1/1.25 s)")  # fmt: skip
    args = ap.parse_args()
    tools = args.tools.split(",")
    seeds = first_hosts()
    results: dict[str, list[dict[str, Any]]] = {t: [] for t in tools}
    with tempfile.TemporaryDirectory(prefix="bench-workers-") as tmp:
        for rnd in range(args.rounds):
            for tool in tools:
                base = Path(tmp) / f"{tool}-{rnd}"
                base.mkdir()
                log = base / "requests.tsv"
                web = (
                    [a for a in WEB if a not in ("--latency", "*=0.25")] if args.cpu_bound else WEB
                )
                delay = 0.0 if args.cpu_bound else DELAY
                with ReplayProcess([], log_path=log, faults_args=web) as replay:
                    r = run_tool(tool, replay.proxy_url, base / "run", args.pages, seeds, delay)
                by_host: dict[str, list[float]] = {}
                for entry in read_log(log):
                    by_host.setdefault(entry.host, []).append(entry.time)
                gaps = [
                    b - a
                    for ts in by_host.values()
                    for a, b in zip(sorted(ts), sorted(ts)[1:], strict=False)
                ]
                r["min_gap"] = min(gaps) if gaps else float("nan")
                results[tool].append(r)
                print(f"round {rnd + 1} {tool:10s} {r['urls']:5d} URLs  wall {r['wall']:6.1f} pages/s  "
                      f"crawl {r['crawl']:6.1f} pages/s  CPU {r['cpu_ms']:.2f} ms/page (crawlers) "
                      f"+ {r['redis_ms']:.2f} (Redis)  min gap per host {r['min_gap']:.2f} s",
                      flush=True)  # fmt: skip
    print()
    for tool in tools:
        wall = statistics.median(r["wall"] for r in results[tool])
        crawl = statistics.median(r["crawl"] for r in results[tool])
        cpu = statistics.median(r["cpu_ms"] for r in results[tool])
        rcpu = statistics.median(r["redis_ms"] for r in results[tool])
        print(f"{tool:10s} median wall {wall:6.1f} pages/s  crawl {crawl:6.1f} pages/s  "
              f"CPU {cpu:.2f} ms/page + Redis {rcpu:.2f} ms/page")  # fmt: skip


if __name__ == "__main__":
    main()
