"""The duplicate detector's cost: CPU per page on real pages, and memory at 1M pages.

1. Every HTML page of an archive (WebKB by default) parsed as the crawler parses it,
   then each page's text checked against the index (fingerprint, LSH lookup, add):
   CPU per page of the check alone, and how many pages it found to be duplicates.
2. ``--pages N`` (1,000,000 by default) pages of synthetic text sketches added to one
   index with 60-character URLs: resident memory per page and the CPU per check at
   that size.

    python benchmarks/bench_dedup.py [--archive ../shared/testweb/webkb.warc.gz] [--pages 1000000]
"""

from __future__ import annotations

import argparse
import resource
import time
from pathlib import Path

import numpy as np

from focuscrawl.parse.duplicates import BINS, DuplicateIndex, Fingerprint, band_keys, fingerprint
from focuscrawl.relevance.examples import iter_archive_pages

HERE = Path(__file__).resolve().parent


def _rss_kib() -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def real_pages(archive: Path, rounds: int) -> None:
    pages = [(p.url, p.text) for p in iter_archive_pages(archive, only_ok=True)]
    words = sum(len(t.split()) for _, t in pages)
    best = float("inf")
    found = {}
    for _ in range(rounds):
        index = DuplicateIndex()
        start = time.process_time()
        found = {url: dup for url, text in pages if (dup := index.check(url, text)) is not None}
        best = min(best, time.process_time() - start)
    exact = sum(d.exact for d in found.values())
    print(f"{archive.name}: {len(pages)} pages, {words / max(len(pages), 1):.0f} words a page")
    print(f"  check: {best / len(pages) * 1e6:.1f} us CPU per page (best of {rounds} rounds)")
    print(f"  duplicates: {exact} exact, {len(found) - exact} near, {len(index)} pages indexed")


def at_scale(n: int) -> None:
    rng = np.random.default_rng(37)
    index = DuplicateIndex(max_pages=n)
    before = _rss_kib()
    start = time.process_time()
    batch = 100_000
    for lo in range(0, n, batch):
        sketches = rng.integers(0, 0xFFFF, size=(min(batch, n - lo), BINS), dtype=np.uint32)
        digests = rng.integers(0, 2**63, size=len(sketches))
        for i, (sketch, digest) in enumerate(zip(sketches, digests, strict=True)):
            fp = Fingerprint(int(digest), sketch, 100)
            _found, keys = index.find(fp)
            index.add(f"http://www.example-{(lo + i) % 5000}.org/some/path/to/page-{lo + i:09d}.html", fp, keys)
    build = time.process_time() - start
    rss = _rss_kib() - before
    probes = [fingerprint(" ".join(f"w{j * 7 + k}" for k in range(300))) for j in range(2000)]
    start = time.process_time()
    for fp in probes:
        index.find(fp)
    look = time.process_time() - start
    keys = time.process_time()
    for fp in probes:
        band_keys(fp.sketch)
    keys = time.process_time() - keys
    print(f"{n:,} pages indexed: {rss / 1024:.0f} MiB resident ({rss * 1024 / n:.0f} B a page, URLs of 60 B included)")
    print(f"  find + add while building: {build / n * 1e6:.1f} us CPU per page")
    print(f"  a lookup at {n:,} pages: {look / len(probes) * 1e6:.1f} us CPU ({keys / len(probes) * 1e6:.1f} us of it the band keys)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--archive", type=Path, default=HERE.parent.parent / "shared" / "testweb" / "webkb.warc.gz")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--pages", type=int, default=1_000_000)
    args = p.parse_args()
    real_pages(args.archive, args.rounds)
    if args.pages:
        at_scale(args.pages)


if __name__ == "__main__":
    main()
