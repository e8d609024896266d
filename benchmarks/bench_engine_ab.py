"""Our crawler from two source trees, side by side: what a change costs per page.

    python benchmarks/bench_engine_ab.py /path/to/old/checkout /path/to/new/checkout [--rounds 4]

One replay server serves the workload (``--workload``, those of ``bench_crawl.py``:
WebKB by default, from the four department seeds, 2,000 pages, 1 per host; or
Wikispeedia, 3,000 pages, 16 per host); each tree crawls it breadth-first (no delay,
16 connections) in a child process with its own ``PYTHONPATH``, the trees
alternating (and which goes first alternating between rounds). Printed per tree:
median crawl-loop pages/s (``run.json`` elapsed) and median CPU ms per page of the
child process; then the median over rounds of the second tree's figures over the
first's within a round (the machine drifts between rounds more than within one).
Each tree's modules are compiled to bytecode first: where ``PYTHONDONTWRITEBYTECODE``
is set (as on the development machine) every child would otherwise compile the whole
package from source, and a tree with more or longer modules would look slower per page
by its compile time, which an installed package never pays.
Extra arguments after ``--`` go to ``focuscrawl crawl`` (e.g. ``--config x.toml``).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_crawl import TESTWEB, WORKLOADS, Workload

from focuscrawl.replay.process import ReplayProcess


def one(tree: Path, proxy: str, w: Workload, pages: int, extra: list[str]) -> tuple[float, float]:
    """(crawl-loop pages/s, CPU ms per page) of one crawl by the code in ``tree``."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        cmd = [sys.executable, "-m", "focuscrawl", "crawl", "--seeds", *w.seeds, "--out", str(out),
               "--quiet", "--proxy", proxy, "--delay", "0", "--concurrency", "16",
               "--per-host", str(w.per_host), "--max-pages", str(pages or w.max_pages),
               "--allow-private", "127.0.0.1", *extra]  # fmt: skip
        before = os.times()
        # ``-m`` puts the working directory first on sys.path: run from the temporary
        # directory, or a run from a checkout's root crawls with that checkout's code
        # whatever PYTHONPATH says (both "trees" were then the same code)
        done = subprocess.run(
            cmd, env={**os.environ, "PYTHONPATH": str(tree.resolve())}, cwd=tmp, check=False,
            capture_output=True, text=True,
        )  # fmt: skip
        after = os.times()
        if done.returncode != 0:
            raise SystemExit(f"{tree}: the crawl failed: {done.stderr.strip()[-500:]}")
        summary = json.loads((out / "run.json").read_text(encoding="utf-8"))["summary"]
        cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
        return summary["fetched"] / summary["elapsed"], cpu / summary["fetched"] * 1000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("trees", nargs=2, type=Path)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--workload", choices=sorted(WORKLOADS), default="webkb")
    ap.add_argument("--pages", type=int, default=0, help="0: the workload's")
    ap.add_argument("extra", nargs="*")
    args = ap.parse_args()
    w = WORKLOADS[args.workload]
    for tree in args.trees:  # the code each child will import is the tree's own
        where = subprocess.run(
            [sys.executable, "-c", "import focuscrawl; print(focuscrawl.__file__)"],
            env={**os.environ, "PYTHONPATH": str(tree.resolve())}, cwd=tempfile.gettempdir(),
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        if not Path(where).resolve().is_relative_to(tree.resolve()):
            raise SystemExit(f"{tree}: the crawl would import focuscrawl from {where}")
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(where).parent)],
                       check=True, stdout=subprocess.DEVNULL)  # fmt: skip
    results: dict[Path, list[tuple[float, float]]] = {t: [] for t in args.trees}
    with ReplayProcess([TESTWEB / w.archive]) as replay:
        for r in range(args.rounds):
            for tree in args.trees if r % 2 == 0 else reversed(args.trees):
                results[tree].append(one(tree, replay.proxy_url, w, args.pages, args.extra))
    for tree, runs in results.items():
        rate = statistics.median(x for x, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        print(f"{tree}: {rate:.1f} pages/s crawl loop, {cpu:.2f} ms CPU per page (median of {len(runs)})")
    first, second = (results[t] for t in args.trees)
    rates = [b[0] / a[0] for a, b in zip(first, second, strict=True)]
    cpus = [b[1] / a[1] for a, b in zip(first, second, strict=True)]
    print(f"second / first by round: pages/s {statistics.median(rates):.3f} "
          f"({min(rates):.3f}-{max(rates):.3f}), CPU per page {statistics.median(cpus):.3f} "
          f"({min(cpus):.3f}-{max(cpus):.3f})")  # fmt: skip


if __name__ == "__main__":
    main()
