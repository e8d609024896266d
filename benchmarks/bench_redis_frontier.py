"""Benchmark the Redis frontier store on one Redis core.

    PYTHONPATH=. python benchmarks/bench_redis_frontier.py              # 1,000,000 URLs
    PYTHONPATH=. python benchmarks/bench_redis_frontier.py --n 100000 --partitions 256
    PYTHONPATH=. python benchmarks/bench_redis_frontier.py --url redis://127.0.0.1:6379/0

Starts its own ``redis-server`` (no persistence) on a free loopback port unless
``--url`` names one (the namespace it makes there is deleted at the end). Prints:

(a) inserts: ``--n`` new URLs over 5000 hosts of skewed sizes, added as a crawl adds
    out-links (``add_many`` of 30 links with their parent, as for OTIE/OPIC: first
    parents only), new links per second, and Redis CPU per link;
(b) link updates: pages of 30 out-links to *known* URLs with ``Merge.ADD`` (OPIC cash
    arriving), per second and Redis CPU per update;
(c) pops: fetch lists of 16 (``max_per_host=2``, three busy hosts excluded) and of 1,
    µs per popped URL (wall; Redis CPU too), each URL then marked FETCHED;
(d) memory: ``INFO memory`` used_memory after the inserts minus before, per queued URL.

``--listpack N``: the server's ``zset-max-listpack-entries`` set to N (and
``zset-max-listpack-value`` to 128) first, so that hosts of up to N queued URLs keep
them in a compact listpack instead of a skiplist (a server setting, not the store's).

Wall time is the client's (Python, one process, one connection: round trips
included); Redis CPU (``INFO cpu``, user + sys of the server) is what one Redis core
spends, the figure that bounds many workers sharing one Redis.
"""

from __future__ import annotations

import argparse
import hashlib
import random
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import redis

from focuscrawl.frontier.redis.store import PARTITIONS, RedisFrontier
from focuscrawl.types import Merge, URLState

N_HOSTS = 5000


def host_index(i: int) -> int:
    """Skewed host sizes: low host numbers hold many more URLs than high ones."""
    x = int.from_bytes(hashlib.blake2b(b"h%d" % i, digest_size=4).digest(), "little") / 2**32
    return int(N_HOSTS * x * x)


def url_of(i: int) -> tuple[str, str]:
    host = f"www.host{host_index(i)}.example"
    return f"https://{host}/section/{i % 97}/page-{i}.html", host


def redis_cpu(client: Any) -> float:
    info = client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def start_server(directory: Path) -> tuple[subprocess.Popen[bytes], str]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    binary = shutil.which("redis-server") or "/usr/bin/redis-server"
    args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
    args += ["--appendonly", "no", "--dir", str(directory)]
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    for _ in range(500):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.02)
    return process, f"redis://127.0.0.1:{port}/0"


def run(url: str, n: int, partitions: int, pages: int, listpack: int) -> None:
    client = redis.Redis.from_url(url)
    if listpack:
        client.config_set("zset-max-listpack-entries", listpack)
        client.config_set("zset-max-listpack-value", 128)
    prefix = f"bench{uuid.uuid4().hex[:8]}"
    store = RedisFrontier(url, prefix=prefix, partitions=partitions, parents=False)
    rng = random.Random(1)
    mem0 = int(client.info("memory")["used_memory"])

    # (a) inserts, as out-links of pages: 30 new links a page
    cpu0, t0 = redis_cpu(client), time.perf_counter()
    for start in range(0, n, 30):
        parent = url_of(start - 1)[0] if start else None
        items = []
        for i in range(start, min(start + 30, n)):
            u, host = url_of(i)
            items.append((u, rng.random(), 1, parent, host, 1, 0))
        store.add_many(items, merge=Merge.ADD, layer=0)
    wall, cpu = time.perf_counter() - t0, redis_cpu(client) - cpu0
    queued = store.count(URLState.QUEUED)
    mem = int(client.info("memory")["used_memory"]) - mem0
    print(f"(a) inserts: {n:,} URLs in {wall:.1f} s: {n / wall:,.0f} new links/s (client wall); "
          f"Redis CPU {cpu / n * 1e6:.1f} µs/link = {n / max(cpu, 1e-9):,.0f} links/s on one core")  # fmt: skip
    print(f"(d) memory: {mem / queued:.0f} bytes per queued URL ({queued:,} queued, "
          f"used_memory +{mem / 2**20:.0f} MiB)")  # fmt: skip

    # (b) updates of known URLs: OPIC cash arriving (Merge.ADD), 30 links a page
    updates = pages * 30
    cpu0, t0 = redis_cpu(client), time.perf_counter()
    for _ in range(pages):
        parent = url_of(rng.randrange(n))[0]
        items = []
        for _ in range(30):
            u, host = url_of(rng.randrange(n))
            items.append((u, 0.01, 2, parent, host, 1, 0))
        store.add_many(items, merge=Merge.ADD)
    wall, cpu = time.perf_counter() - t0, redis_cpu(client) - cpu0
    print(f"(b) link updates (ADD to known URLs): {updates / wall:,.0f}/s (client wall); Redis CPU "
          f"{cpu / updates * 1e6:.1f} µs/update = {updates / max(cpu, 1e-9):,.0f} updates/s on one core")  # fmt: skip

    # (c) pops: fetch lists of 16 and of 1, each URL marked FETCHED afterwards
    busy = [url_of(i)[1] for i in range(3)]
    for size, lists in ((16, max(pages // 4, 50)), (1, max(pages, 200))):
        popped, pop_wall, cpu0 = 0, 0.0, redis_cpu(client)
        for _ in range(lists):
            t0 = time.perf_counter()
            got = store.pop(size, exclude_hosts=busy, max_per_host=2)
            pop_wall += time.perf_counter() - t0
            popped += len(got)
            for q in got:
                store.mark(q.url, URLState.FETCHED)
        cpu = redis_cpu(client) - cpu0  # marks included
        print(f"(c) pop of {size:2d}: {pop_wall / popped * 1e6:.0f} µs per popped URL (client wall, "
              f"{popped:,} URLs); Redis CPU with the marks {cpu / popped * 1e6:.1f} µs/URL")  # fmt: skip
    store.drop()
    store.close()
    client.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="URLs inserted (default: 1M)")
    parser.add_argument("--partitions", type=int, default=PARTITIONS)
    parser.add_argument("--pages", type=int, default=2000, help="pages of 30 link updates in (b)")
    parser.add_argument("--url", help="a running Redis (default: start one)")
    parser.add_argument("--listpack", type=int, default=0, metavar="N",
                        help="zset-max-listpack-entries of the server (default: its own, 128)")  # fmt: skip
    args = parser.parse_args()
    process = None
    with tempfile.TemporaryDirectory() as tmp:
        url = args.url
        if url is None:
            process, url = start_server(Path(tmp))
        try:
            listpack = f", zset listpacks up to {args.listpack}" if args.listpack else ""
            print(f"Redis frontier, {args.n:,} URLs, {args.partitions} partitions{listpack}, {url}")
            run(url, args.n, args.partitions, args.pages, args.listpack)
        finally:
            if process is not None:
                process.terminate()
                process.wait()


if __name__ == "__main__":
    main()
