"""Benchmark a crawl DB store at a million queued URLs.

    PYTHONPATH=. python benchmarks/bench_frontier.py            # 1,000,000 URLs
    PYTHONPATH=. python benchmarks/bench_frontier.py --n 100000
    PYTHONPATH=. python benchmarks/bench_frontier.py --parents  # a DB that keeps edges

Measures (a) insert rate, (b) an OTIE-like mixed workload: rounds of 1000 cash
updates (``Merge.ADD`` of small positive amounts on random known URLs) and a pop of
50 (the three busiest hosts excluded, ``max_per_host=2``), the popped URLs marked
FETCHED and the DB committed every ``--commit-every`` rounds (default: every round,
i.e. every 50 popped URLs), commits included in the time. An op is one score update
or one popped URL; wall and CPU time are both given (the machine may be shared:
CPU time is steadier), with the load average. (c) Resident memory from
/proc/self/status: the whole process (VmRSS, VmHWM) and its growth per queued URL.
(d) DB file size per URL. (e) Time to reopen the DB (the indexed store loads its
arrays). (f) A page-shaped OTIE/OPIC workload (issue 11): fetch lists of 16 pops,
each fetched page marked FETCHED, its cash (score) split over 30 out-links (20
already known, 10 new, each with a parent edge and a link count) added with
``Merge.ADD``, its own cash set to 0, the fetched page of highest cash looked up once
per fetch list (``top``), a commit every 50 pages. An op is one out-link or one
popped URL. Targets: >= 50k ops/s (b), >= 150k ops/s (f), <= 150 B/URL resident.

The store is opened as a crawl opens it for OTIE and OPIC, whose strategies read no
parent edges (``Strategy.needs_parents`` False): every out-link is still handed
over with its parent and link count, the store keeps the first parent of each URL
and drops the rest. ``--parents`` opens it as for a strategy that reads them
(genre): every edge is stored.

``--split``: (f)'s CPU time also by store call (pop, top, mark, add_many,
update_scores, commit), in µs per page, to see where a change of (f) comes from.

(g) with ``--drift-pages N`` (e.g. 50000): the same page loop from an empty store
(10 seeds, every page adding 10 new URLs), ms of CPU per page in windows of 10,000
pages: the store's part of the drift of a long crawl (last / first window).

URLs are derived from their index, so the script itself keeps nothing per URL.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from focuscrawl.frontier.indexed import IndexedFrontier
from focuscrawl.types import Merge, URLState

N_HOSTS = 5000


def host_index(i: int) -> int:
    """Skewed host sizes: low host numbers hold many more URLs than high ones."""
    x = int.from_bytes(hashlib.blake2b(b"h%d" % i, digest_size=4).digest(), "little") / 2**32
    return int(N_HOSTS * x * x)


def host_of(i: int) -> str:
    return f"www.site{host_index(i)}.example.org"


def url_of(i: int) -> str:
    """A realistic URL: ~30-char host, 40-80-char path."""
    digest = hashlib.blake2b(b"u%d" % i, digest_size=32).hexdigest()
    length = 40 + i * 7919 % 41
    path = f"/articles/{digest[:6]}/{digest[6:]}-{digest}"[: length - 5] + ".html"
    return f"https://{host_of(i)}{path}"


def status(field: str) -> int:
    """A memory field of /proc/self/status, in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field} in /proc/self/status")


def open_store(kind: str, path: Path, cache_mb: int | None, parents: bool) -> Any:
    return IndexedFrontier(path, parents=parents)


def build(frontier: Any, n: int, rng: random.Random) -> float:
    """Add n queued URLs in batches (like pages' out-links); return URLs/s."""
    batch_size = 10_000
    elapsed = 0.0
    for lo in range(0, n, batch_size):
        items = []
        parent: str | None = None
        for i in range(lo, min(lo + batch_size, n)):
            if i % 20 == 0:  # a page with 20 new out-links
                parent = url_of(rng.randrange(i)) if i else None
            items.append((url_of(i), rng.random(), 1 + i % 7, parent, host_of(i), 1, 0))
        start = time.perf_counter()
        frontier.add_many(items, merge=Merge.MAX)
        if (lo // batch_size) % 10 == 9 or lo + batch_size >= n:
            frontier.commit()
        elapsed += time.perf_counter() - start
    return n / elapsed


def mixed(
    frontier: Any, n: int, rounds: int, commit_every: int, rng: random.Random
) -> dict[str, float]:
    """Rounds of 1000 ADD updates + pop 50 + marks (+ commit); frontier calls timed only."""
    sizes: dict[int, int] = {}
    for i in range(0, n, max(n // 20_000, 1)):
        sizes[host_index(i)] = sizes.get(host_index(i), 0) + 1
    busy = [f"www.site{h}.example.org" for h, _ in sorted(sizes.items(), key=lambda kv: -kv[1])[:3]]
    stats = dict.fromkeys(["updates", "popped", "wall", "cpu", "update", "pop", "commit"], 0.0)
    for r in range(rounds):
        batch = [(url_of(rng.randrange(n)), rng.random() * 0.01) for _ in range(1000)]
        wall0, cpu0 = time.perf_counter(), time.process_time()
        frontier.update_scores(batch, Merge.ADD)
        cpu1 = time.process_time()
        taken = frontier.pop(50, exclude_hosts=busy, max_per_host=2)
        for q in taken:
            frontier.mark(q.url, URLState.FETCHED)
        cpu2 = time.process_time()
        if r % commit_every == commit_every - 1 or r == rounds - 1:
            frontier.commit()
        cpu3 = time.process_time()
        stats["wall"] += time.perf_counter() - wall0
        stats["cpu"] += cpu3 - cpu0
        stats["update"] += cpu1 - cpu0
        stats["pop"] += cpu2 - cpu1
        stats["commit"] += cpu3 - cpu2
        stats["updates"] += len(batch)
        stats["popped"] += len(taken)
    return stats


def fetched(
    frontier: Any, q: Any, fresh: int, done: int, rng: random.Random
) -> tuple[float, int, int]:
    """One fetched page of the OTIE/OPIC loop: its cash split over 20 known and 10 new
    out-links (parent edge, link count), marked FETCHED, its cash set to 0, a commit
    every 50 pages. The CPU time of the frontier calls, the next new URL, the link count."""
    links = [url_of(rng.randrange(fresh)) for _ in range(20)]
    links += [url_of(i) for i in range(fresh, fresh + 10)]
    share = q.score / len(links)
    items = [
        (u, share, q.depth + 1, q.url, host_of_url(u), 1 + j % 3, 0) for j, u in enumerate(links)
    ]
    cpu0 = time.process_time()
    frontier.mark(q.url, URLState.FETCHED)
    frontier.add_many(items, merge=Merge.ADD)
    frontier.update_scores([(q.url, 0.0)], Merge.SET)
    if (done + 1) % 50 == 0:
        frontier.commit()
    return time.process_time() - cpu0, fresh + 10, len(items)


def pages(frontier: Any, n: int, count: int, rng: random.Random) -> dict[str, float]:
    """OTIE/OPIC-shaped page loop (see the module docstring); CPU time of frontier calls."""
    stats = dict.fromkeys(["pages", "links", "cpu", "wall"], 0.0)
    fresh = n  # the next new URL's index
    done = 0
    while done < count:
        wall0, cpu0 = time.perf_counter(), time.process_time()
        taken = frontier.pop(16, max_per_host=2)
        frontier.top("score", URLState.FETCHED)
        cpu = time.process_time() - cpu0
        if not taken:
            break
        for q in taken:
            page_cpu, fresh, links = fetched(frontier, q, fresh, done, rng)
            done += 1
            cpu += page_cpu
            stats["links"] += links
        stats["cpu"] += cpu
        stats["wall"] += time.perf_counter() - wall0
        stats["pages"] += len(taken)
    frontier.commit()
    return stats


def drift(pages_total: int, store: str, parents: bool, path: Path) -> list[float]:
    """(g): ms CPU per page of the OTIE-shaped loop, by windows of 10,000 pages."""
    rng = random.Random(2)
    frontier = open_store(store, path, None, parents)
    frontier.add_many([(url_of(i), 1.0, 0, None, host_of(i), 1, 0) for i in range(10)])
    fresh, done, cpu, windows = 10, 0, 0.0, []
    while done < pages_total:
        cpu0 = time.process_time()
        taken = frontier.pop(16, max_per_host=2)
        frontier.top("score", URLState.FETCHED)
        cpu += time.process_time() - cpu0
        if not taken:
            break
        for q in taken:
            page_cpu, fresh, _ = fetched(frontier, q, fresh, done, rng)
            done += 1
            cpu += page_cpu
            if done % 10_000 == 0:
                windows.append(cpu / 10)  # ms per page over 10,000 pages
                cpu = 0.0
    frontier.close()
    return windows


class Split:
    """The store, its (f) calls timed one by one (CPU time per method name)."""

    CALLS = ("pop", "top", "mark", "add_many", "update_scores", "commit")

    def __init__(self, store: Any) -> None:
        self.store = store
        self.cpu = dict.fromkeys(self.CALLS, 0.0)

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.store, name)
        if name not in self.CALLS:
            return method

        def timed(*args: Any, **kwargs: Any) -> Any:
            cpu0 = time.process_time()
            try:
                return method(*args, **kwargs)
            finally:
                self.cpu[name] += time.process_time() - cpu0

        return timed


def host_of_url(url: str) -> str:
    return url.split("/", 3)[2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="queued URLs to build")
    parser.add_argument("--rounds", type=int, default=200, help="mixed-workload rounds")
    parser.add_argument("--commit-every", type=int, default=1, help="rounds per commit")
    parser.add_argument(
        "--cache-mb", type=int, default=None, help="(unused: the plain SQLite store is gone)"
    )
    parser.add_argument("--store", choices=["indexed"], default="indexed")
    parser.add_argument("--pages", type=int, default=3000, help="(f) pages; 0: skip it")
    parser.add_argument(
        "--parents", action="store_true", help="keep every parent edge (as for genre)"
    )
    parser.add_argument("--drift-pages", type=int, default=0, help="(g) pages; 0: skip it")
    parser.add_argument("--split", action="store_true", help="(f) also by store call")
    args = parser.parse_args()
    rng = random.Random(1)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "frontier.db"
        frontier = open_store(args.store, path, args.cache_mb, args.parents)
        rss0 = status("VmRSS")
        insert_rate = build(frontier, args.n, rng)
        rss1 = status("VmRSS")
        queued = frontier.count(URLState.QUEUED)
        size = sum(p.stat().st_size for p in Path(tmp).iterdir())
        s = mixed(frontier, args.n, args.rounds, args.commit_every, rng)
        rss2, peak = status("VmRSS"), status("VmHWM")
        split = Split(frontier) if args.split else None
        p = pages(split or frontier, args.n, args.pages, rng) if args.pages else None
        frontier.close()
        del frontier
        start = time.perf_counter()
        frontier = open_store(args.store, path, args.cache_mb, args.parents)
        load = time.perf_counter() - start
        frontier.close()
        windows = drift(args.drift_pages, args.store, args.parents, Path(tmp) / "drift.db")
    ops = s["updates"] + s["popped"]
    edges = "every parent edge" if args.parents else "first parents (no strategy reads edges)"
    print(f"store                  : {args.store}, keeping {edges}")
    print(f"queued URLs            : {queued:,} on {N_HOSTS:,} hosts (cache_mb={args.cache_mb})")
    print(f"(a) insert rate        : {insert_rate:,.0f} URLs/s")
    print(
        f"(b) mixed workload     : {ops / s['wall']:,.0f} ops/s wall, {ops / s['cpu']:,.0f} ops per"
        f" CPU-second ({s['updates']:,.0f} ADD updates + {s['popped']:,.0f} popped, commit every"
        f" {args.commit_every} round(s)); CPU split: updates {s['update']:.2f} s,"
        f" pop+mark {s['pop']:.2f} s, commit {s['commit']:.2f} s"
    )
    print(
        f"(c) resident memory    : {rss2 / queued:,.1f} B per queued URL for the whole process"
        f" (VmRSS {rss2 / 2**20:.1f} MiB, peak VmHWM {peak / 2**20:.1f} MiB);"
        f" growth {(rss2 - rss0) / queued:,.1f} B/URL ({(rss1 - rss0) / queued:,.1f} after build)"
    )
    print(f"(d) DB size per URL    : {size / queued:,.1f} B ({size / 2**20:.1f} MiB incl. WAL)")
    print(f"(e) reopen             : {load:.2f} s")
    if p is not None and p["pages"]:
        ops = p["links"] + p["pages"]
        print(
            f"(f) OTIE-shaped pages  : {ops / p['cpu']:,.0f} ops per CPU-second,"
            f" {ops / p['wall']:,.0f} ops/s wall ({p['pages']:,.0f} pages,"
            f" {p['links']:,.0f} out-links; {1000 * p['cpu'] / p['pages']:.2f} ms CPU per page)"
        )
        if split is not None:
            parts = ", ".join(f"{k} {1e6 * v / p['pages']:.1f}" for k, v in split.cpu.items())
            print(f"    by call, µs per page: {parts}")
    if len(windows) >= 2:
        print(
            f"(g) drift              : {' '.join(f'{w:.3f}' for w in windows)} ms CPU per page"
            f" by 10k pages from an empty store; last / first {windows[-1] / windows[0]:.2f}"
        )
    print(f"load average           : {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("targets                : >= 50,000 ops/s (b), >= 150,000 ops/s (f), <= 150 B/URL RSS")


if __name__ == "__main__":
    main()
