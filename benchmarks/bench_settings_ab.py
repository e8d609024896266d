"""Two (or more) settings of our crawler against each other, alternating, on one replay web.

    python benchmarks/bench_settings_ab.py --workload wikispeedia --rounds 8 \\
        builder: inline:FOCUSCRAWL_CRAWL__WARC_BUILDER=false
    python benchmarks/bench_settings_ab.py --workload webkb provenance: \\
        none:FOCUSCRAWL_CRAWL__PROVENANCE=false

Each argument is ``LABEL:`` followed by comma-separated ``NAME=VALUE`` environment
settings (``FOCUSCRAWL_<SECTION>__<FIELD>``, see ``focuscrawl.settings``); an empty
list is the defaults. The crawl is ``bench_crawl.py``'s (bfs, no delay, 16
connections, robots.txt obeyed) through one replay server; the settings take
turns, their order reversed every other round, so a drift of the machine's speed
(large here: up to 1.5x within an hour) falls on both alike. Per setting, the
medians over the rounds of: pages/s of the crawl loop and of the whole process,
and the CPU of the crawler's own process per page (``RUSAGE_SELF`` at its exit:
start-up included, child processes such as the WARC builder not).
"""

from __future__ import annotations

import argparse
import compileall
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_crawl import ROOT, TESTWEB, WORKLOADS, child_env, ours_command

from focuscrawl.replay.process import ReplayProcess

# the crawler, reporting its own CPU (user + system) on exit into the file named by argv[1]
_RUN = (
    "import atexit, resource, sys\n"
    "def _cpu(path=sys.argv[1]):\n"
    "    r = resource.getrusage(resource.RUSAGE_SELF)\n"
    "    with open(path, 'w') as fh:\n"
    "        fh.write(repr(r.ru_utime + r.ru_stime))\n"
    "atexit.register(_cpu)\n"
    "sys.argv = ['focuscrawl', *sys.argv[2:]]\n"
    "from focuscrawl.cli import main\n"
    "sys.exit(main())\n"
)


def parse_setting(text: str) -> tuple[str, dict[str, str]]:
    label, sep, rest = text.partition(":")
    if not sep or not label:
        raise SystemExit(f"{text!r}: give LABEL:NAME=VALUE,... (or LABEL: for the defaults)")
    env = {}
    for item in filter(None, rest.split(",")):
        name, eq, value = item.partition("=")
        if not eq:
            raise SystemExit(f"{item!r}: give NAME=VALUE")
        env[name] = value
    return label, env


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("settings", nargs="+", metavar="LABEL:NAME=VALUE,...")
    ap.add_argument("--workload", choices=list(WORKLOADS), default="wikispeedia")
    ap.add_argument("--rounds", type=int, default=8)
    args = ap.parse_args(argv)
    settings = [parse_setting(s) for s in args.settings]
    w = WORKLOADS[args.workload]
    compileall.compile_dir(ROOT / "focuscrawl", quiet=1)  # as an installed package is
    rows: dict[str, list[tuple[float, float, float]]] = {label: [] for label, _ in settings}
    with ReplayProcess([TESTWEB / w.archive]) as web, tempfile.TemporaryDirectory() as tmp:
        for rnd in range(args.rounds):
            for label, extra in settings if rnd % 2 == 0 else settings[::-1]:
                out, cpu_file = Path(tmp) / f"{label}-{rnd}", Path(tmp) / "cpu"
                command = ours_command(w, web.proxy_url, str(out))[2:]  # without "-m focuscrawl"
                start = time.perf_counter()
                done = subprocess.run(
                    [sys.executable, "-c", _RUN, str(cpu_file), *command],
                    env={**child_env(None), **extra}, capture_output=True, text=True, check=False,
                )  # fmt: skip
                wall = time.perf_counter() - start
                if done.returncode != 0:
                    raise SystemExit(f"{label} failed: {done.stderr.strip()[-500:]}")
                summary = json.loads((out / "run.json").read_text(encoding="utf-8"))["summary"]
                pages = summary["fetched"]
                cpu = float(cpu_file.read_text())
                rows[label].append((pages / summary["elapsed"], pages / wall, 1000 * cpu / pages))
                print(f"round {rnd + 1} {label:>12}: crawl {rows[label][-1][0]:6.1f} pages/s, "
                      f"CPU {rows[label][-1][2]:.3f} ms/page", flush=True)  # fmt: skip
    print(f"\n{args.workload}, medians of {args.rounds} rounds ({ROOT.name}):")
    for label, runs in rows.items():
        crawl, wall, cpu = (statistics.median(r[i] for r in runs) for i in range(3))
        print(f"  {label:>12}: crawl loop {crawl:6.1f} pages/s, wall {wall:6.1f} pages/s, "
              f"crawler process CPU {cpu:.3f} ms/page")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
