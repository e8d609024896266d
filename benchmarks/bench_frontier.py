"""Benchmark the SQLite crawl DB at a million queued URLs.

    PYTHONPATH=. python benchmarks/bench_frontier.py            # 1,000,000 URLs
    PYTHONPATH=. python benchmarks/bench_frontier.py --n 100000

Measures (a) insert rate, (b) a mixed workload of OTIE-like cash updates
(``Merge.ADD`` on random URLs, 1000 per round) and pops of 50 (three busiest hosts
excluded, ``max_per_host=2``; popped URLs are then marked FETCHED and the DB is
committed every 10 rounds, as the engine does), in ops/s where an op is one score
update or one popped URL, (c) resident memory per queued URL (VmRSS after building
minus before, over N) and (d) DB file size per URL. Targets: >= 50k ops/s and
<= 150 B/URL resident.

URLs are derived from their index, so the script itself keeps nothing per URL.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import tempfile
import time
from pathlib import Path

from focuscrawl.frontier.sqlite import SqliteFrontier
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


def rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS in /proc/self/status")


def build(frontier: SqliteFrontier, n: int, rng: random.Random) -> float:
    """Add n queued URLs in batches (like pages' out-links); return URLs/s."""
    batch_size = 10_000
    elapsed = 0.0
    for lo in range(0, n, batch_size):
        items = []
        parent: str | None = None
        for i in range(lo, min(lo + batch_size, n)):
            if i % 20 == 0:  # a page with 20 new out-links
                parent = url_of(rng.randrange(i)) if i else None
            items.append((url_of(i), rng.random(), 1 + i % 7, parent, host_of(i)))
        start = time.perf_counter()
        frontier.add_many(items, merge=Merge.MAX)
        if (lo // batch_size) % 10 == 9 or lo + batch_size >= n:
            frontier.commit()
        elapsed += time.perf_counter() - start
    return n / elapsed


def mixed(
    frontier: SqliteFrontier, n: int, rounds: int, rng: random.Random
) -> tuple[float, float, int, int]:
    """Rounds of 1000 ADD updates + pop 50; returns (ops/s wall, ops/s CPU, updates, popped).

    Only the frontier calls are timed (not the making of URLs); CPU time is given
    too because the benchmark machine may be shared.
    """
    sizes: dict[int, int] = {}
    for i in range(0, n, max(n // 20_000, 1)):
        sizes[host_index(i)] = sizes.get(host_index(i), 0) + 1
    busy = [f"www.site{h}.example.org" for h, _ in sorted(sizes.items(), key=lambda kv: -kv[1])[:3]]
    updates = popped = 0
    wall = cpu = 0.0
    for r in range(rounds):
        batch = [(url_of(rng.randrange(n)), rng.random() * 0.01) for _ in range(1000)]
        wall0, cpu0 = time.perf_counter(), time.process_time()
        frontier.update_scores(batch, Merge.ADD)
        taken = frontier.pop(50, exclude_hosts=busy, max_per_host=2)
        for q in taken:
            frontier.mark(q.url, URLState.FETCHED)
        if r % 10 == 9 or r == rounds - 1:
            frontier.commit()
        wall += time.perf_counter() - wall0
        cpu += time.process_time() - cpu0
        updates += len(batch)
        popped += len(taken)
    return (updates + popped) / wall, (updates + popped) / cpu, updates, popped


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="queued URLs to build")
    parser.add_argument("--rounds", type=int, default=100, help="mixed-workload rounds")
    parser.add_argument("--cache-mb", type=int, default=16)
    args = parser.parse_args()
    rng = random.Random(1)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "frontier.db"
        frontier = SqliteFrontier(path, cache_mb=args.cache_mb)
        rss0 = rss_bytes()
        insert_rate = build(frontier, args.n, rng)
        rss1 = rss_bytes()
        queued = frontier.count(URLState.QUEUED)
        size = sum(p.stat().st_size for p in Path(tmp).iterdir())
        ops, ops_cpu, updates, popped = mixed(frontier, args.n, args.rounds, rng)
        rss2 = rss_bytes()
        frontier.close()
    print(f"queued URLs            : {queued:,} on {N_HOSTS:,} hosts (cache_mb={args.cache_mb})")
    print(f"(a) insert rate        : {insert_rate:,.0f} URLs/s")
    print(
        f"(b) mixed workload     : {ops:,.0f} ops/s wall, {ops_cpu:,.0f} ops per CPU-second "
        f"({updates:,} ADD updates + {popped:,} popped)"
    )
    print(
        f"(c) RSS per queued URL : {(rss1 - rss0) / queued:,.1f} B "
        f"(+{(rss1 - rss0) / 2**20:.1f} MiB after build, +{(rss2 - rss0) / 2**20:.1f} MiB after mixed)"
    )
    print(f"(d) DB size per URL    : {size / queued:,.1f} B ({size / 2**20:.1f} MiB incl. WAL)")
    print("targets                : >= 50,000 ops/s, <= 150 B/URL RSS")


if __name__ == "__main__":
    main()
