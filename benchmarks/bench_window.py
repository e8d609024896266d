"""The crawl DB's part of a long OPIC crawl: the engine's window loop, without the network.

    PYTHONPATH=. python benchmarks/bench_window.py                 # 50k pages of 200k on 2,000 hosts
    PYTHONPATH=. python benchmarks/bench_window.py --pages 20000 --web-pages 80000 --hosts 800
    PYTHONPATH=. python benchmarks/bench_window.py --strategy bfs

``bench_drift.py`` measures a whole crawl of a generated web over HTTP; this script
replays the same crawl's calls on the store alone, so that the store's share of
the drift is seen without the noise of the rest. A window of ``--window`` URLs is in
flight, at most ``--per-host`` of a host (1: a polite crawl), and results come back
in the order they were sent (the engine records the oldest fetch first). After each
result the window is topped up the way ``Crawler._refill`` does it: a pop that
excludes the hosts with no room left, capped at the least room of a host in flight.
Each fetched page (the generated web's links; none for a 404 or 301) is marked
FETCHED, and with ``opic`` its cash is split evenly over its out-links and the
virtual page (``Merge.ADD``) and reset to 0; with ``bfs`` every new URL gets the
score of breadth-first order. A commit every 50 pages.

Printed: CPU ms per page of the store calls by windows of 10,000 pages (pop, adds,
the rest) and last / first: the store's drift. The same arguments give the same
crawl: the script also prints a digest of the fetch order.
"""

from __future__ import annotations

import argparse
import collections
import hashlib
import os
import tempfile
import time
from pathlib import Path

from focuscrawl.frontier.indexed import IndexedFrontier
from focuscrawl.replay.generated import GeneratedWeb
from focuscrawl.types import Merge, QueuedURL, URLState

WINDOW_PAGES = 10_000


def host(url: str) -> str:
    return url.split("/", 3)[2]


def refill(
    frontier: IndexedFrontier,
    window: collections.deque[QueuedURL],
    inflight: collections.Counter[str],
    size: int,
    per_host: int,
) -> float:
    """Top the window up as the engine does; returns the CPU seconds of the pops."""
    cpu0 = time.process_time()
    want = size - len(window)
    while want > 0:
        blocked = {h for h, n in inflight.items() if n >= per_host}
        cap = per_host - max((n for n in inflight.values() if n < per_host), default=0)
        got = frontier.pop(want, exclude_hosts=blocked, max_per_host=cap)
        if not got:
            break
        count: collections.Counter[str] = collections.Counter()
        for i, queued in enumerate(got):
            count[queued.host] += 1
            inflight[queued.host] += 1
            window.append(queued)
            want -= 1
            if count[queued.host] == cap and inflight[queued.host] < per_host:
                for later in got[i + 1 :]:
                    frontier.mark(later.url, URLState.QUEUED)
                break
    return time.process_time() - cpu0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=50_000, help="pages to fetch")
    parser.add_argument("--web-pages", type=int, default=200_000)
    parser.add_argument("--hosts", type=int, default=2_000)
    parser.add_argument("--seed", type=int, default=0, help="seed of the generated web")
    parser.add_argument("--seeds", type=int, default=10, help="home pages of the largest hosts")
    parser.add_argument("--window", type=int, default=16, help="URLs in flight")
    parser.add_argument("--per-host", type=int, default=1)
    parser.add_argument("--strategy", choices=["opic", "bfs"], default="opic")
    args = parser.parse_args()
    web = GeneratedWeb(args.web_pages, args.hosts, args.seed)
    seeds = web.home_urls(args.seeds)
    order = hashlib.blake2b(digest_size=8)
    with tempfile.TemporaryDirectory() as tmp:
        frontier = IndexedFrontier(Path(tmp) / "crawl.db", parents=False)
        frontier.add_many([(u, 1.0 / len(seeds), 0, None, host(u), 1, 0) for u in seeds])
        window: collections.deque[QueuedURL] = collections.deque()
        inflight: collections.Counter[str] = collections.Counter()
        split = dict.fromkeys(("pop", "add", "rest"), 0.0)
        rows: list[dict[str, float]] = []
        done = 0
        bfs_score = 0.0
        wall0 = time.perf_counter()
        split["pop"] += refill(frontier, window, inflight, args.window, args.per_host)
        while window and done < args.pages:
            q = window.popleft()
            inflight[q.host] -= 1
            if not inflight[q.host]:
                del inflight[q.host]
            order.update(q.url.encode())
            found = web.page_of(q.url)
            links = []
            if found is not None and not found[1] and web.status_of(found[0]) == 200:
                links = [web.url_of(p) for p in web.links_of(found[0])]
            cpu0 = time.process_time()
            frontier.mark(q.url, URLState.FETCHED)
            cpu1 = time.process_time()
            if args.strategy == "opic":
                share = q.score / (len(links) + 1)
                items = [(u, share, q.depth + 1, q.url, host(u), 1, 0) for u in links]
                frontier.add_many(items, merge=Merge.ADD)
                cpu2 = time.process_time()
                frontier.update_scores([(q.url, 0.0)], Merge.SET)
            else:
                bfs_score -= 1e-6
                items = [(u, bfs_score, q.depth + 1, q.url, host(u), 1, 0) for u in links]
                frontier.add_many(items, merge=Merge.MAX)
                cpu2 = time.process_time()
            done += 1
            if done % 50 == 0:
                frontier.commit()
            cpu3 = time.process_time()
            split["add"] += cpu2 - cpu1
            split["rest"] += (cpu1 - cpu0) + (cpu3 - cpu2)
            split["pop"] += refill(frontier, window, inflight, args.window, args.per_host)
            if done % WINDOW_PAGES == 0:
                rows.append({k: 1000 * v / WINDOW_PAGES for k, v in split.items()})
                split = dict.fromkeys(split, 0.0)
        wall = time.perf_counter() - wall0
        queued = frontier.count(URLState.QUEUED)
        frontier.close()
    print(
        f"{args.strategy}: {done:,} pages of a generated {args.web_pages:,}-page, {args.hosts:,}-host"
        f" web; window {args.window}, {args.per_host} per host; {queued:,} URLs left queued;"
        f" {wall:.1f} s wall"
    )
    print("store CPU ms per page by 10k pages:   pop    adds    rest   total")
    for i, row in enumerate(rows):
        total = sum(row.values())
        print(
            f"  pages {i * WINDOW_PAGES:>6,}-{(i + 1) * WINDOW_PAGES:<6,}         "
            f"{row['pop']:6.3f}  {row['add']:6.3f}  {row['rest']:6.3f}  {total:6.3f}"
        )
    if len(rows) >= 2:
        first, last = sum(rows[0].values()), sum(rows[-1].values())
        print(f"drift (last / first)                  {last / first:.2f}")
    print(f"fetch order digest: {order.hexdigest()}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
