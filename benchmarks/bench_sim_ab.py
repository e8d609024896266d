"""Two source trees on one simulated crawl: what a change costs, with the machine's drift divided out.

    python benchmarks/bench_sim_ab.py OLD_CHECKOUT . --workload webkb --rounds 6
    python benchmarks/bench_sim_ab.py OLD . --time focuscrawl.frontier.indexed.queue:IndexedQueue.pop

Each tree runs ``focuscrawl simulate`` (no sockets, virtual clock: the same
pages in the same order every time) breadth-first over a workload of
``bench_crawl.py`` in a fresh child process with its own ``PYTHONPATH``, the trees
alternating and which goes first alternating between rounds. The WARC builder is
off (``crawl.warc_builder``), so that all the work is in the one process measured.

On this 2-core machine the speed of the same code drifts by up to 2x between
runs, more than most changes, so two figures divide it out:

* the second tree's CPU over the first's *within each round* (the two runs of a
  round are seconds apart): median and range over the rounds;
* with ``--time MODULE:QUALNAME``, the share of the child's CPU spent in that
  function (``time.process_time`` around each call, nested calls counted once
  per timed function): a share is measured inside one run, so the machine's speed
  cancels out. Median over the rounds.

An A/A run (one tree twice) shows the noise. Over 4 rounds of WebKB here the ratio
by round was 0.991 (0.981-1.004) in a quiet hour and 0.986 (0.855-1.107) in a noisy
one, where the share of ``IndexedFrontier.pop`` was 18.4 % and 18.3 %.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

_CHILD = "--child"


def child(spec: dict[str, Any]) -> None:
    """Run one simulated crawl in this process, timing the named functions; print JSON."""
    spent: dict[str, float] = dict.fromkeys(spec["time"], 0.0)
    depth: dict[str, int] = dict.fromkeys(spec["time"], 0)
    for name in spec["time"]:
        module_name, qualname = name.split(":", 1)
        owner: Any = importlib.import_module(module_name)
        *path, attr = qualname.split(".")
        for part in path:
            owner = getattr(owner, part)
        original = getattr(owner, attr)

        def timed(*args: Any, _f: Any = original, _n: str = name, **kwargs: Any) -> Any:
            depth[_n] += 1
            start = time.process_time()
            try:
                return _f(*args, **kwargs)
            finally:
                depth[_n] -= 1
                if not depth[_n]:  # a recursive or re-entrant call is counted once
                    spent[_n] += time.process_time() - start

        setattr(owner, attr, timed)
    import focuscrawl
    from focuscrawl.cli import main

    start = time.process_time()
    with tempfile.TemporaryDirectory() as tmp:
        code = main([*spec["argv"], "--out", str(Path(tmp) / "run"), "--quiet"])
        run = json.loads((Path(tmp) / "run" / "run.json").read_text(encoding="utf-8"))
    total = time.process_time() - start
    print(json.dumps({"code": code, "cpu": total, "pages": run["summary"]["fetched"],
                      "shares": {n: s / total for n, s in spent.items()},
                      "package": focuscrawl.__file__}))  # fmt: skip


def simulate_argv(workload: str, pages: int) -> list[str]:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_crawl import TESTWEB, WORKLOADS

    w = WORKLOADS[workload]
    return [
        "simulate", "--archive", str(TESTWEB / w.archive), "--seeds", *w.seeds,
        "--strategy", "bfs", "--max-pages", str(pages or w.max_pages), "--delay", "0",
        "--per-host", str(w.per_host), "--concurrency", "16",
    ]  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("trees", nargs=2, type=Path)
    ap.add_argument("--workload", choices=["webkb", "wikispeedia"], default="webkb")
    ap.add_argument("--pages", type=int, default=0, help="0: the workload's")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--time", action="append", default=[], metavar="MODULE:QUALNAME",
                    help="report the share of CPU in this function (repeatable)")  # fmt: skip
    args = ap.parse_args()
    spec = {"argv": simulate_argv(args.workload, args.pages), "time": args.time}
    runs: dict[Path, list[dict[str, Any]]] = {tree: [] for tree in args.trees}
    for rnd in range(args.rounds):
        for tree in args.trees if rnd % 2 == 0 else reversed(args.trees):
            env = {**os.environ, "PYTHONPATH": str(tree.resolve()),
                   "FOCUSCRAWL_CRAWL__WARC_BUILDER": "false"}  # fmt: skip
            done = subprocess.run(
                [sys.executable, __file__, _CHILD, json.dumps(spec)],
                env=env, capture_output=True, text=True, check=False,
            )  # fmt: skip
            lines = [x for x in done.stdout.splitlines() if x.startswith("{")]
            if done.returncode or not lines:
                raise SystemExit(f"{tree}: the crawl failed: {done.stderr.strip()[-500:]}")
            result = json.loads(lines[-1])
            if not Path(result["package"]).resolve().is_relative_to(tree.resolve()):
                raise SystemExit(f"{tree}: the child imported {result['package']}, not the tree's")
            runs[tree].append(result)
    print(f"{args.workload}, simulated bfs, {args.rounds} rounds (the trees alternating)")
    for tree, results in runs.items():
        cpu = statistics.median(1000 * r["cpu"] / r["pages"] for r in results)
        shares = "".join(
            f", {name.rsplit(':', 1)[1]} {100 * statistics.median(r['shares'][name] for r in results):.1f} %"
            for name in args.time
        )
        print(f"  {tree}: {cpu:.3f} ms CPU per page (median){shares}")
    first, second = (runs[t] for t in args.trees)
    ratios = sorted(
        (b["cpu"] / b["pages"]) / (a["cpu"] / a["pages"]) for a, b in zip(first, second, strict=True)
    )
    print(f"  second / first CPU per page by round: median {statistics.median(ratios):.3f}"
          f" (range {ratios[0]:.3f}-{ratios[-1]:.3f})")  # fmt: skip


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == _CHILD:
        child(json.loads(sys.argv[2]))
    else:
        main()
