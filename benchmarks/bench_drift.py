"""Drift of a long crawl: pages/s and CPU per page, first 10k pages against the last 10k.

    PYTHONPATH=. python benchmarks/bench_drift.py                       # 50k of 200k pages, opic
    PYTHONPATH=. python benchmarks/bench_drift.py --strategy bfs
    PYTHONPATH=. python benchmarks/bench_drift.py --pages 10000 --web-pages 40000 --hosts 400
    PYTHONPATH=. python benchmarks/bench_drift.py --profile /tmp/drift-prof   # py-spy, both windows

A generated web (``focuscrawl replay --generated``: 200,000 pages on 2,000
hosts by default, a child process) is crawled by ``python -m focuscrawl crawl``
(another child) with no delay, 16 requests in flight, 1 per host, robots.txt
obeyed, from the home pages of the largest hosts, until ``--pages`` URLs are
fetched. Every ``--interval`` seconds the benchmark reads the crawler's CPU time
(utime + stime of ``/proc/PID/stat``), its resident memory, the server's CPU
time and the number of lines of ``pages.jsonl`` (one per fetched URL); values
at a page count are interpolated between two samples. Printed:

* per slice of ``--slice`` pages: pages/s and crawler CPU ms per page;
* the first and the last ``--window`` pages (the first starts at the first
  line written, so start-up is not counted): pages/s, crawler CPU ms per page,
  server CPU ms per page, and last / first (the drift: 1.00 = none); the
  server's own last / first is printed as a control (its work per page is about
  the same in both windows, so it moves with the machine's load), and the
  crawler's drift divided by it;
* the whole run from process start to exit (CPU from the child's rusage).

``--profile DIR`` also runs ``py-spy record`` (non-blocking, raw collapsed
stacks) on the crawler during each of the two windows and prints the functions
whose samples per page grew most; profiling perturbs the timing, so take the
drift numbers from a run without it.
"""

from __future__ import annotations

import argparse
import bisect
import collections
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

from focuscrawl.replay.generated import GeneratedWeb
from focuscrawl.replay.process import ReplayProcess

ROOT = Path(__file__).resolve().parents[1]
_PROXY_VARS = ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "no_proxy", "NO_PROXY")
_TICK = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True, slots=True)
class Sample:
    t: float  # seconds since the crawler started
    cpu: float  # crawler CPU seconds (user + system)
    server: float  # server CPU seconds
    lines: int  # lines of pages.jsonl
    rss: int  # crawler resident set, bytes


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process (psutil), 0 if it is gone."""
    try:
        times = psutil.Process(pid).cpu_times()
    except psutil.Error:
        return 0.0
    return times.user + times.system


def rss_bytes(pid: int) -> int:
    """A process's resident set in bytes (psutil), 0 if it is gone."""
    try:
        return int(psutil.Process(pid).memory_info().rss)
    except psutil.Error:
        return 0


class LineCounter:
    """Lines of a growing file, reading only what was appended since the last call."""

    def __init__(self, path: Path) -> None:
        self.path, self.offset, self.lines = path, 0, 0

    def count(self) -> int:
        try:
            with self.path.open("rb") as fh:
                fh.seek(self.offset)
                data = fh.read()
        except FileNotFoundError:
            return 0
        # count complete lines only: a half-written one is counted once its newline is there
        end = data.rfind(b"\n") + 1
        self.lines += data.count(b"\n", 0, end)
        self.offset += end
        return self.lines


def at(samples: list[Sample], lines: int) -> tuple[float, float, float]:
    """(time, crawler CPU, server CPU) when pages.jsonl reached ``lines`` lines (interpolated)."""
    counts = [s.lines for s in samples]
    i = bisect.bisect_left(counts, lines)
    if i == 0:
        s = samples[0]
        return s.t, s.cpu, s.server
    if i == len(samples):
        s = samples[-1]
        return s.t, s.cpu, s.server
    a, b = samples[i - 1], samples[i]
    f = (lines - a.lines) / (b.lines - a.lines)
    return (
        a.t + f * (b.t - a.t),
        a.cpu + f * (b.cpu - a.cpu),
        a.server + f * (b.server - a.server),
    )


def span(samples: list[Sample], lo: int, hi: int) -> dict[str, float]:
    t0, c0, s0 = at(samples, lo)
    t1, c1, s1 = at(samples, hi)
    pages = hi - lo
    wall = max(t1 - t0, 1e-9)
    return {
        "pages": pages,
        "wall": wall,
        "rate": pages / wall,
        "cpu_ms": 1000 * (c1 - c0) / pages,
        "server_ms": 1000 * (s1 - s0) / pages,
        "cpu_share": (c1 - c0) / wall,
    }


def child_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _PROXY_VARS}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return env


def crawl_command(args: argparse.Namespace, proxy: str, seeds: list[str], out: Path) -> list[str]:
    command = [
        sys.executable, "-m", "focuscrawl", "crawl", "--seeds", *seeds, "--out", str(out),
        "--strategy", args.strategy, "--max-pages", str(args.pages), "--proxy", proxy,
        "--delay", "0", "--concurrency", str(args.concurrency), "--per-host", "1", "--quiet",
    ]  # fmt: skip
    return command + list(args.crawl_arg)


class Profiler:
    """py-spy record on the crawler between two page counts (one file per window)."""

    def __init__(self, directory: Path, pid: int) -> None:
        self.directory, self.pid = directory, pid
        self.running: subprocess.Popen[bytes] | None = None
        self.files: dict[str, tuple[Path, int, int]] = {}  # name -> file, first page, last page
        self.name, self._from = "", 0

    def start(self, name: str, lines: int) -> None:
        path = self.directory / f"{name}.txt"
        command = ["py-spy", "record", "--pid", str(self.pid), "--format", "raw", "--nonblocking",
                   "--rate", "100", "-o", str(path)]  # fmt: skip
        self.running = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        self.name, self._from = name, lines

    def stop(self, lines: int) -> None:
        if self.running is None:
            return
        self.running.send_signal(signal.SIGINT)  # py-spy writes its file on Ctrl-C
        try:
            self.running.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.running.kill()
            self.running.wait()
        self.files[self.name] = (self.directory / f"{self.name}.txt", self._from, lines)
        self.running = None


def _function(frame: str) -> str:
    """``name (file:line)`` without its line, so that a function counts once."""
    head, colon, line = frame.rpartition(":")
    return f"{head})" if colon and line.rstrip(")").isdigit() else frame


def read_collapsed(path: Path) -> tuple[collections.Counter[str], collections.Counter[str]]:
    """(self samples, inclusive samples) per function of a py-spy raw file."""
    own: collections.Counter[str] = collections.Counter()
    incl: collections.Counter[str] = collections.Counter()
    if not path.exists():
        return own, incl
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        stack, _, number = line.rpartition(" ")
        if not number.isdigit():
            continue
        n = int(number)
        # a frame is "function (file:line)"; lines are dropped so a function counts once
        frames = [_function(frame) for frame in stack.split(";")]
        own[frames[-1]] += n
        for frame in set(frames):
            incl[frame] += n
    return own, incl


def report_profiles(
    files: dict[str, tuple[Path, int, int]], cpu_ms: dict[str, float], top: int
) -> None:
    """Functions by estimated CPU ms per page in each window, largest growth first.

    py-spy counts a sample whenever the thread is not idle, waiting for a CPU
    included, so on a loaded machine samples overstate CPU time; a function's
    share of the window's samples times the window's measured CPU ms per page
    is the estimate printed.
    """
    if set(files) != {"first", "last"}:
        print("profile: both windows were not recorded")
        return
    counts = {name: read_collapsed(path) for name, (path, _, _) in files.items()}
    for name, (path, lo, hi) in files.items():
        print(
            f"profile {name}: pages {lo}..{hi}, {sum(counts[name][0].values())} samples -> {path}"
        )
    for kind, index in (("self", 0), ("inclusive", 1)):
        est: dict[str, dict[str, float]] = {}
        for name in ("first", "last"):
            own = counts[name][0]
            total = max(1, sum(own.values()))
            est[name] = {f: n / total * cpu_ms[name] for f, n in counts[name][index].items()}
        first, last = est["first"], est["last"]
        growth = {f: last.get(f, 0.0) - first.get(f, 0.0) for f in set(first) | set(last)}
        print(f"\n{kind} CPU ms per page (share of py-spy samples x measured CPU ms per page)")
        print(f"{'first':>8} {'last':>8} {'growth':>8}  function")
        for f in sorted(growth, key=lambda f: -growth[f])[:top]:
            print(f"{first.get(f, 0.0):8.3f} {last.get(f, 0.0):8.3f} {growth[f]:+8.3f}  {f[:110]}")


def run(args: argparse.Namespace, work: Path) -> int:
    web = GeneratedWeb(args.web_pages, args.hosts, args.seed)
    seeds = web.home_urls(args.seeds)
    window = min(args.window, args.pages // 3)
    generated = [
        "--generated",
        str(args.web_pages),
        "--hosts",
        str(args.hosts),
        "--seed",
        str(args.seed),
    ]
    out = work / "run"
    samples: list[Sample] = []
    with ReplayProcess([], faults_args=generated) as replay:
        print(
            f"generated web: {args.web_pages} pages on {args.hosts} hosts (seed {args.seed}) at "
            f"{replay.proxy_url}; crawl {args.pages} pages, strategy {args.strategy}, "
            f"concurrency {args.concurrency}; {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.2f}",
            flush=True,
        )
        counter = LineCounter(out / "pages.jsonl")
        log = (work / "crawl.log").open("wb")
        started = time.perf_counter()
        server_cpu0 = cpu_seconds(replay.pid)
        child = subprocess.Popen(
            crawl_command(args, replay.proxy_url, seeds, out),
            env=child_env(), stdin=subprocess.DEVNULL, stdout=log, stderr=log,
        )  # fmt: skip
        profiler = Profiler(args.profile, child.pid) if args.profile else None
        status, usage = 0, None
        try:
            while True:
                pid, status, usage = os.wait4(child.pid, os.WNOHANG)
                if pid == child.pid:
                    break
                lines = counter.count()
                samples.append(
                    Sample(
                        time.perf_counter() - started,
                        cpu_seconds(child.pid),
                        cpu_seconds(replay.pid) - server_cpu0,
                        lines,
                        rss_bytes(child.pid),
                    )
                )
                if profiler is not None:
                    if "first" not in profiler.files and profiler.running is None and lines > 0:
                        profiler.start("first", lines)
                    elif (
                        profiler.running is not None
                        and profiler.name == "first"
                        and lines >= window
                    ):
                        profiler.stop(lines)
                    elif profiler.running is None and lines >= args.pages - window:
                        profiler.start("last", lines)
                time.sleep(args.interval)
        finally:
            if profiler is not None and profiler.running is not None:
                profiler.stop(counter.count())
            if child.returncode is None and usage is None:
                child.kill()
                os.wait4(child.pid, 0)
            child.returncode = os.waitstatus_to_exitcode(status)
            log.close()
        wall = time.perf_counter() - started
    if child.returncode != 0:
        tail = (work / "crawl.log").read_text(encoding="utf-8", errors="replace").strip()[-800:]
        raise SystemExit(f"crawl failed ({child.returncode}): {tail}")
    if not samples or samples[-1].lines < 2 * window:
        raise SystemExit(
            f"too few pages seen while sampling: {samples[-1].lines if samples else 0}"
        )
    # windows end at the last count seen while the crawler ran (its final flush at exit is
    # not timed), at the first sample that saw it: later samples are the shutdown
    total = samples[-1].lines
    samples = samples[: next(i for i, s in enumerate(samples) if s.lines >= total) + 1]
    first_line = next(s.lines for s in samples if s.lines > 0)

    summary = json.loads((out / "run.json").read_text(encoding="utf-8"))["summary"]
    print(f"crawl: {json.dumps({k: summary[k] for k in ('fetched', 'pages', 'errors', 'queued')})} "
          f"counters {json.dumps(summary.get('counters', {}))}")  # fmt: skip
    sizes = {p.name: p.stat().st_size for p in sorted(out.iterdir()) if p.is_file()}
    print("run files (bytes): " + ", ".join(f"{name} {size:,}" for name, size in sizes.items()))

    print(
        f"\nper {args.slice} pages: pages/s, crawler CPU ms per page, server CPU ms per page, RSS MB"
    )
    lo = first_line
    while lo < total:
        hi = min(total, (lo // args.slice + 1) * args.slice)
        s = span(samples, lo, hi)
        rss = max((x.rss for x in samples if lo <= x.lines <= hi), default=0) / 1e6
        print(f"  {lo:>7}..{hi:<7} {s['rate']:7.1f} pages/s  {s['cpu_ms']:6.3f} ms  "
              f"server {s['server_ms']:6.3f} ms  {rss:6.0f} MB")  # fmt: skip
        lo = hi

    first = span(samples, first_line, window)
    last = span(samples, total - window, total)
    print(f"\nwindow {window} pages   pages/s   CPU ms/page   CPU share   server ms/page")
    for name, s in (("first", first), ("last", last)):
        print(f"  {name:<5} {s['pages']:>6}  {s['rate']:8.1f}  {s['cpu_ms']:11.3f}  "
              f"{s['cpu_share']:9.2f}  {s['server_ms']:14.3f}")  # fmt: skip
    print(f"  drift (last / first): pages/s {last['rate'] / first['rate']:.3f}, "
          f"CPU per page {last['cpu_ms'] / first['cpu_ms']:.3f}")  # fmt: skip
    # the server does the same work per page in both windows, so its CPU per page moves
    # only with the machine (other processes sharing the cores inflate CPU time)
    if first["server_ms"] > 0 and last["server_ms"] > 0:
        machine = last["server_ms"] / first["server_ms"]
        print(f"  server CPU per page last / first {machine:.3f}; crawler drift over it "
              f"{last['cpu_ms'] / first['cpu_ms'] / machine:.3f}")  # fmt: skip
    assert usage is not None
    cpu = usage.ru_utime + usage.ru_stime
    pages = counter.count()
    print(f"whole run: {pages} pages in {wall:.1f} s = {pages / wall:.1f} pages/s (start-up and "
          f"shutdown included), CPU {cpu:.1f} s = {1000 * cpu / max(1, pages):.3f} ms per page, "
          f"max RSS {usage.ru_maxrss / 1e3:.0f} MB; load average now {os.getloadavg()[0]:.2f}")  # fmt: skip
    if profiler is not None:
        report_profiles(
            profiler.files, {"first": first["cpu_ms"], "last": last["cpu_ms"]}, args.top
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument(
        "--pages", type=int, default=50_000, help="pages to crawl (default: %(default)s)"
    )
    ap.add_argument("--web-pages", type=int, default=200_000, help="pages of the generated web")
    ap.add_argument("--hosts", type=int, default=2000, help="hosts of the generated web")
    ap.add_argument("--seed", type=int, default=1, help="seed of the generated web")
    ap.add_argument(
        "--seeds", type=int, default=10, help="crawl seeds: home pages of the N largest hosts"
    )
    ap.add_argument("--strategy", default="opic", help="crawl strategy, e.g. opic, otie, bfs")
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--window", type=int, default=10_000, help="pages in the first and last window")
    ap.add_argument("--slice", type=int, default=5_000, help="pages per line of the progress table")
    ap.add_argument("--interval", type=float, default=0.5, help="seconds between samples")
    ap.add_argument("--crawl-arg", action="append", default=[], metavar="ARG",
                    help="one more argument for the crawl command (repeatable), e.g. --crawl-arg=--per-host=2")  # fmt: skip
    ap.add_argument("--profile", type=Path, metavar="DIR", help="py-spy both windows into DIR")
    ap.add_argument("--top", type=int, default=25, help="functions shown by --profile")
    ap.add_argument("--keep", type=Path, metavar="DIR", help="keep the run directory here")
    args = ap.parse_args(argv)
    if args.pages < 3 or args.web_pages < args.hosts:
        raise SystemExit("need --pages >= 3 and --web-pages >= --hosts")
    if args.profile is not None:
        if shutil.which("py-spy") is None:
            raise SystemExit("--profile needs py-spy on PATH")
        args.profile.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench-drift-") as tmp:
        code = run(args, Path(tmp))
        if args.keep is not None:
            shutil.copytree(Path(tmp) / "run", args.keep, dirs_exist_ok=True)
        return code


if __name__ == "__main__":
    sys.exit(main())
