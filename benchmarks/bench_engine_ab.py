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
The child's CPU is also split at the start of its event loop (a ``sitecustomize``
the benchmark puts first on the child's path wraps ``asyncio.run`` and notes the
process's CPU there and at its end): start-up (imports, opening the run) in seconds,
and the crawl loop's CPU per page, which is what a change to the per-page path costs
and what a longer crawl is made of.
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

# written as the child's sitecustomize: the CPU at the event loop's start and end
_MARKS = """
import asyncio, atexit, os, resource
_out = os.environ["FOCUSCRAWL_BENCH_MARKS"]
def _cpu():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime
_marks = []
_run = asyncio.run
def _marked(*a, **k):
    _marks.append(_cpu())
    try:
        return _run(*a, **k)
    finally:
        _marks.append(_cpu())
asyncio.run = _marked
atexit.register(lambda: open(_out, "w").write(" ".join(map(str, _marks[:1] + _marks[-1:]))))
"""

Run = tuple[float, float, float, float]  # pages/s, CPU ms/page, start-up s, loop CPU ms/page


def one(tree: Path, proxy: str, w: Workload, pages: int, extra: list[str]) -> Run:
    """(crawl-loop pages/s, CPU ms per page, start-up CPU s, crawl-loop CPU ms per page)
    of one crawl by the code in ``tree``."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "run"
        hook = Path(tmp) / "hook"
        hook.mkdir()
        (hook / "sitecustomize.py").write_text(_MARKS, encoding="utf-8")
        marks = Path(tmp) / "marks"
        cmd = [sys.executable, "-m", "focuscrawl", "crawl", "--seeds", *w.seeds, "--out", str(out),
               "--quiet", "--proxy", proxy, "--delay", "0", "--concurrency", "16",
               "--per-host", str(w.per_host), "--max-pages", str(pages or w.max_pages),
               "--allow-private", "127.0.0.1", *extra]  # fmt: skip
        before = os.times()
        # ``-m`` puts the working directory first on sys.path: run from the temporary
        # directory, or a run from a checkout's root crawls with that checkout's code
        # whatever PYTHONPATH says (both "trees" were then the same code)
        done = subprocess.run(
            cmd, cwd=tmp, check=False,
            env={**os.environ, "PYTHONPATH": f"{hook}{os.pathsep}{tree.resolve()}",
                 "FOCUSCRAWL_BENCH_MARKS": str(marks)},
            capture_output=True, text=True,
        )  # fmt: skip
        after = os.times()
        if done.returncode != 0:
            raise SystemExit(f"{tree}: the crawl failed: {done.stderr.strip()[-500:]}")
        summary = json.loads((out / "run.json").read_text(encoding="utf-8"))["summary"]
        cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
        loop, end = map(float, marks.read_text(encoding="utf-8").split())
        fetched = summary["fetched"]
        return fetched / summary["elapsed"], cpu / fetched * 1000, loop, (end - loop) / fetched * 1000


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
    results: dict[Path, list[Run]] = {t: [] for t in args.trees}
    with ReplayProcess([TESTWEB / w.archive]) as replay:
        for r in range(args.rounds):
            for tree in args.trees if r % 2 == 0 else reversed(args.trees):
                results[tree].append(one(tree, replay.proxy_url, w, args.pages, args.extra))
    for tree, runs in results.items():
        rate, cpu, start, loop = (statistics.median(x[i] for x in runs) for i in range(4))
        print(f"{tree}: {rate:.1f} pages/s crawl loop, {cpu:.2f} ms CPU per page; of it start-up "
              f"{start:.3f} s and crawl loop {loop:.3f} ms CPU per page (median of {len(runs)})")  # fmt: skip
    first, second = (results[t] for t in args.trees)

    def ratio(i: int) -> str:
        by_round = [b[i] / a[i] for a, b in zip(first, second, strict=True)]
        return f"{statistics.median(by_round):.3f} ({min(by_round):.3f}-{max(by_round):.3f})"

    print(f"second / first by round: pages/s {ratio(0)}, CPU per page {ratio(1)}, "
          f"start-up CPU {ratio(2)}, crawl-loop CPU per page {ratio(3)}")  # fmt: skip

if __name__ == "__main__":
    main()
