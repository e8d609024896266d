"""What provenance costs: decisions.jsonl bytes and CPU per page, on and off.

    PYTHONPATH=. python benchmarks/bench_provenance.py [--pages 1000] [--rounds 3]

Simulated crawls (no network, so CPU is what differs) of Wikispeedia from the
'Cat' article with the keyword model, for best-first and OTIE; each setting runs
``--rounds`` times alternately with provenance on and off, and the medians of the
process CPU time per page are printed with the size of the decision log.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from focuscrawl.api import crawl

ROOT = Path(__file__).resolve().parents[1]
ARCHIVE = ROOT.parent / "shared" / "testweb" / "wikispeedia.warc.gz"
SEED = "http://schools-wikipedia.org/wp/c/Cat.htm"
MODEL = {"name": "keyword", "keywords": ["cat", "mammal", "species", "animal", "dog"]}


def one(strategy: str, pages: int, provenance: bool) -> tuple[float, int, int]:
    """(CPU seconds, pages fetched, decisions.jsonl bytes) of one simulated crawl."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        start = time.process_time()
        stats = crawl([SEED], out, strategy=strategy, model=MODEL, max_pages=pages,
                      archives=[ARCHIVE], provenance=provenance)  # fmt: skip
        cpu = time.process_time() - start
        log = out / "decisions.jsonl"
        return cpu, stats.fetched, log.stat().st_size if log.exists() else 0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--pages", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    one("bfs", 20, True)  # warm the archive index cache and the imports
    for strategy in ("best-first", "otie"):
        cpu: dict[bool, list[float]] = {True: [], False: []}
        size = 0
        fetched = 0
        for _ in range(args.rounds):
            for provenance in (True, False):
                seconds, fetched, nbytes = one(strategy, args.pages, provenance)
                cpu[provenance].append(seconds / fetched * 1000)
                size = max(size, nbytes)
        on, off = statistics.median(cpu[True]), statistics.median(cpu[False])
        print(f"{strategy:10s} {fetched} pages: decisions.jsonl {size / fetched / 1024:.2f} KiB/page; "
              f"CPU {on:.2f} ms/page with provenance, {off:.2f} without (+{on - off:.2f} ms, "
              f"{(on - off) / off * 100:+.0f} %)")  # fmt: skip


if __name__ == "__main__":
    main()
