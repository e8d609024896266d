"""The search index's added CPU per page of a crawl, as ``focuscrawl serve`` builds it.

A WebKB crawl (``bench_crawl.py``'s: bfs, no delay, 16 connections, through one
replay server) is run again and again, the index off and on in turns (their order
reversed every other round, so a drift of the machine's speed falls on both). With
the index on, a thread of this process does what the server's background task does:
:meth:`SearchIndex.update` once a second while the crawl runs, and once more at its
end. Reported per round: the crawl's CPU per page (its process and its children,
from ``wait4``), the index thread's CPU per page (``time.thread_time``), and the
index's share: its CPU over the crawl's CPU of the same round with the index off.
The issue's budget: under 10 %.

    python benchmarks/bench_service_index.py --rounds 4
    python benchmarks/bench_service_index.py --rounds 2 --max-pages 500
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from bench_crawl import TESTWEB, WORKLOADS, Workload, child_env, ours_command

from focuscrawl.replay.process import ReplayProcess
from focuscrawl.service.search import SearchIndex

_EVERY = 1.0  # seconds between two updates (the server's index_every)


def crawl(w: Workload, proxy: str, out: Path, index_db: Path | None) -> tuple[float, float, int]:
    """One crawl: (its CPU seconds, the index's CPU seconds, the pages indexed)."""
    proc = subprocess.Popen([sys.executable, *ours_command(w, proxy, out)], env=child_env(None))
    done = threading.Event()
    result = [0.0, 0]

    def follow() -> None:
        assert index_db is not None
        started = time.thread_time()
        index = SearchIndex(index_db, out)
        added = 0
        while not done.wait(_EVERY):
            added += index.update()
        added += index.update()
        index.close()
        result[:] = [time.thread_time() - started, added]

    thread = threading.Thread(target=follow) if index_db is not None else None
    if thread is not None:
        thread.start()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    done.set()
    if thread is not None:
        thread.join()
    if proc.returncode != 0:
        raise SystemExit(f"crawl exited {proc.returncode}")
    return usage.ru_utime + usage.ru_stime, float(result[0]), int(result[1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--max-pages", type=int, help="override the workload's page count")
    args = ap.parse_args()
    w = WORKLOADS["webkb"]
    if args.max_pages:
        w = Workload(w.archive, w.seeds, w.per_host, args.max_pages)
    shares, ratios = [], []
    with tempfile.TemporaryDirectory(prefix="bench-index-") as tmp, ReplayProcess([TESTWEB / w.archive]) as replay:
        for r in range(args.rounds):
            cpu: dict[str, float] = {}
            order = ("off", "on") if r % 2 == 0 else ("on", "off")
            for mode in order:
                out = Path(tmp) / f"r{r}-{mode}"
                db = Path(tmp) / f"r{r}.db" if mode == "on" else None
                crawl_cpu, index_cpu, indexed = crawl(w, replay.proxy_url, out, db)
                pages = len((out / "pages.jsonl").read_bytes().splitlines())
                cpu[mode] = crawl_cpu / pages
                if mode == "on":
                    cpu["index"] = index_cpu / max(indexed, 1)
                    on_pages = indexed
            share = cpu["index"] / cpu["off"]
            shares.append(share)
            ratios.append((cpu["on"] + cpu["index"]) / cpu["off"])
            print(f"round {r + 1} ({order[0]} first): crawl {cpu['off'] * 1000:.2f} ms CPU/page off, "
                  f"{cpu['on'] * 1000:.2f} on; index {cpu['index'] * 1000:.2f} ms CPU/page "
                  f"({on_pages:,} pages indexed): {share:.1%} of the crawl's CPU; "
                  f"crawl + index over crawl alone {ratios[-1]:.3f}", flush=True)  # fmt: skip
    print(f"index share of the crawl's CPU per page: median {statistics.median(shares):.1%} "
          f"({min(shares):.1%}-{max(shares):.1%}, {len(shares)} rounds); whole ratio median "
          f"{statistics.median(ratios):.3f}; budget < 10 %")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
