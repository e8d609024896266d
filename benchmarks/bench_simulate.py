"""Simulation against a live crawl through the replay server: same settings, same archive.

    PYTHONPATH=. python benchmarks/bench_simulate.py                 # 1 round, three settings
    PYTHONPATH=. python benchmarks/bench_simulate.py --rounds 3 --fast-pages 2000 --polite-pages 1000

Both crawls run breadth-first from the four WebKB department home pages with
16 connections and 1 per host, obeying robots.txt, each in a fresh child
process: ``focuscrawl crawl --proxy`` against a ``focuscrawl replay`` child
process, and ``focuscrawl simulate --archive`` (no sockets, virtual clock).
Three settings:

* ``--delay 0`` on ``--fast-pages`` pages: what the crawler's own work costs
  (parsing, scoring, the crawl DB, the WARC), which a simulation also does;
* the default delay (1 s per host) on ``--polite-pages`` pages, all hosts:
  breadth-first soon spreads over hundreds of hosts, so politeness costs the
  live crawl little;
* the default delay on ``--site-pages`` pages of the four department sites
  only (``[scope] allow_hosts``): a site crawl, where the live crawl waits on
  politeness and the simulation does not.

Reported per setting and mode (median of the rounds): pages / the crawl loop's
own time (``run.json`` elapsed) and pages / the process's wall time (start-up,
archive indexing and shutdown included), and simulate over live for both.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from focuscrawl.demo import WEBKB_SEEDS as SEEDS
from focuscrawl.replay.process import ReplayProcess

ROOT = Path(__file__).resolve().parents[1]
TESTWEB = ROOT.parent / "shared" / "testweb"
_PROXY_VARS = ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "no_proxy", "NO_PROXY")


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _PROXY_VARS}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return env


def run(
    command: list[str], out: Path, max_pages: int, delay: float | None, config: Path | None
) -> dict[str, Any]:
    """One crawl in a child process; its pages and times."""
    options = [
        "--seeds", *SEEDS, "--out", str(out), "--strategy", "bfs", "--max-pages", str(max_pages),
        "--concurrency", "16", "--per-host", "1", "--quiet",
    ]  # fmt: skip
    if delay is not None:
        options += ["--delay", str(delay)]
    if config is not None:
        options += ["--config", str(config)]
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "focuscrawl", *command, *options],
        env=child_env(), capture_output=True, text=True, check=False,
    )  # fmt: skip
    wall = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{command[0]} failed ({done.returncode}): {done.stderr.strip()[-500:]}")
    summary = json.loads((out / "run.json").read_text(encoding="utf-8"))["summary"]
    return {"pages": summary["fetched"], "wall": wall, "crawl": summary["elapsed"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--archive", type=Path, default=TESTWEB / "webkb.warc.gz")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--fast-pages", type=int, default=2000, help="budget with --delay 0")
    ap.add_argument("--polite-pages", type=int, default=1000, help="budget, default delay")
    ap.add_argument("--site-pages", type=int, default=200, help="budget, default delay, 4 sites")
    args = ap.parse_args(argv)
    if not args.archive.exists():
        raise SystemExit(f"no archive {args.archive}")

    results: dict[tuple[str, str], list[dict[str, Any]]] = {}
    with tempfile.TemporaryDirectory(prefix="bench-simulate-") as tmp:
        work = Path(tmp)
        sites = work / "sites.toml"
        hosts = ", ".join(f'"{seed.split("/")[2]}"' for seed in SEEDS)
        sites.write_text(f"[scope]\nallow_hosts = [{hosts}]\n", encoding="utf-8")
        settings: list[tuple[str, float | None, int, Path | None]] = [
            ("delay 0", 0.0, args.fast_pages, None),
            ("default delay", None, args.polite_pages, None),
            ("4 sites", None, args.site_pages, sites),
        ]
        with ReplayProcess([args.archive]) as web:
            print(f"replay: {web.urls} URLs at {web.proxy_url}; {os.cpu_count()} CPUs", flush=True)
            modes = {
                "live": ["crawl", "--proxy", web.proxy_url],
                "simulate": ["simulate", "--archive", str(args.archive)],
            }
            for rnd in range(args.rounds):
                for label, delay, pages, config in settings:
                    order = list(modes) if rnd % 2 == 0 else list(modes)[::-1]
                    for mode in order:
                        out = work / f"{mode}-{label.replace(' ', '-')}-{rnd}"
                        load = os.getloadavg()[0]
                        result = run(modes[mode], out, pages, delay, config)
                        results.setdefault((label, mode), []).append(result)
                        print(
                            f"round {rnd + 1} {label:<13} {mode:<8} {result['pages']:5d} pages: "
                            f"crawl {result['crawl']:7.2f} s = {result['pages'] / result['crawl']:7.1f} "
                            f"pages/s, wall {result['wall']:7.2f} s = "
                            f"{result['pages'] / result['wall']:7.1f} pages/s, load {load:.2f}",
                            flush=True,
                        )

    def rate(label: str, mode: str, key: str) -> float:
        return float(statistics.median(r["pages"] / r[key] for r in results[(label, mode)]))

    print(f"\nmedian of {args.rounds} round(s); load average (1 min) now {os.getloadavg()[0]:.2f}")
    for label, _, pages, _ in settings:
        for key in ("crawl", "wall"):
            live, sim = rate(label, "live", key), rate(label, "simulate", key)
            print(
                f"{label:<13} ({pages:5d} pages) {key:<5}  simulate {sim:7.1f} pages/s   "
                f"live {live:7.1f} pages/s   ratio {sim / live:6.1f}x"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
