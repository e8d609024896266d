"""``focuscrawl export`` of a large crawl to Parquet, and the search index's cost per page.

Makes a crawl of ``--pages`` pages of a generated web (``focuscrawl replay
--generated``; BFS, no delay) unless ``--run`` names one, then times
``focuscrawl export RUN --format parquet`` (the command's own line: rows, seconds,
peak RSS of it and of its largest child) and, with ``--index``, the building of the
server's search index over the same run (CPU seconds per page: what the server spends
to index a crawl's pages, beside the crawl).

    python benchmarks/bench_export.py --pages 50000
    python benchmarks/bench_export.py --run /tmp/bench-export/run --index
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from focuscrawl.replay.generated import GeneratedWeb
from focuscrawl.replay.process import ReplayProcess

ROOT = Path(__file__).resolve().parents[1]


def make_run(pages: int, out: Path) -> None:
    web = GeneratedWeb(200_000, 2_000, 1)
    seeds = web.home_urls(20)
    generated = ["--generated", "200000", "--hosts", "2000", "--seed", "1"]
    with ReplayProcess([], faults_args=generated) as replay:
        started = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "focuscrawl", "crawl", "--out", str(out), "--strategy", "bfs",
             "--max-pages", str(pages), "--proxy", replay.proxy_url, "--delay", "0",
             "--concurrency", "64", "--per-host", "4", "-q", "--seeds", *seeds],
            check=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
        print(f"crawl: {pages:,} pages in {time.perf_counter() - started:.0f} s -> {out}", flush=True)


def export(run: Path, jobs: int | None) -> None:
    out = run.parent / "corpus.parquet"
    command = [sys.executable, "-m", "focuscrawl", "export", str(run), "--format", "parquet", "-o", str(out)]
    if jobs:
        command += ["--jobs", str(jobs)]
    started = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = subprocess.run(command, check=True, capture_output=True, text=True,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})  # fmt: skip
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    print(f"export: {result.stdout.strip()} (wall {time.perf_counter() - started:.1f} s, "
          f"CPU {cpu:.1f} s with its processes, {out.stat().st_size / 1e6:.0f} MB; "
          f"load {os.getloadavg()[0]:.1f})", flush=True)  # fmt: skip


def index(run: Path) -> None:
    from focuscrawl.service.search import SearchIndex

    with tempfile.TemporaryDirectory() as tmp:
        before = resource.getrusage(resource.RUSAGE_SELF)
        started = time.perf_counter()
        search = SearchIndex(Path(tmp) / "search.db", run)
        added = search.update()
        after = resource.getrusage(resource.RUSAGE_SELF)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        search.close()
    print(f"search index: {added:,} pages in {time.perf_counter() - started:.1f} s, "
          f"{cpu / max(added, 1) * 1000:.2f} ms of CPU per page", flush=True)  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=50_000)
    parser.add_argument("--run", type=Path, help="an existing run directory (no crawl made)")
    parser.add_argument("--jobs", type=int, default=None, help="export's --jobs")
    parser.add_argument("--index", action="store_true", help="time the search index too")
    args = parser.parse_args()
    run = args.run
    if run is None:
        run = Path(tempfile.mkdtemp(prefix="bench-export-")) / "run"
        make_run(args.pages, run)
    export(run, args.jobs)
    if args.index:
        index(run)
    return 0


if __name__ == "__main__":
    sys.exit(main())
