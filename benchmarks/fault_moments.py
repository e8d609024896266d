"""Faults at random moments of a live shared crawl (issue 40), a table per kind
(benchmarks/fault_audit.py reruns the fault tests and sweeps garbage over every key).

Each trial crawls a generated web through the replay server with two workers on a
redis-server of its own, hurts it at a random moment, then resumes the crawl
(``focuscrawl crawl --out X --resume``, at most ``--resumes`` times) until it ends
with exit status 0. Kinds:

- ``kill-worker``: SIGKILL one worker process.
- ``kill-crawl``: SIGKILL the crawl's whole process group (the seeder and workers).
- ``pause``: ``CLIENT PAUSE`` of Redis for 2-8 s.
- ``garbage``: a non-numeric value planted in a random field of a random hash under
  the crawl's prefix (or a random key made a string); the trial then counts only
  tracebacks and hangs (the planted value may stop every resume, as it should, with
  one line).

Per kind: trials, nothing lost (the pages.jsonl lines reach the budget), nothing
doubled (the pages.jsonl URLs unique), tracebacks (on any stderr), hangs (a run not
ended within ``--timeout`` s). Run from a checkout's root:

    python benchmarks/fault_moments.py                # 3 trials a kind, about 8 min
    python benchmarks/fault_moments.py --trials 1 --kinds pause,garbage
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import psutil  # noqa: E402
import redis  # noqa: E402

from focuscrawl.replay.generated import GeneratedWeb  # noqa: E402
from focuscrawl.replay.process import ReplayProcess  # noqa: E402
from tests.redis_server import RedisServer  # noqa: E402

KINDS = ("kill-worker", "kill-crawl", "pause", "garbage")
ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


def worker_urls(out: Path) -> list[str]:
    """The URLs of a shared crawl's workers' pages.jsonl lines (a torn last line: none)."""
    urls = []
    for path in sorted(out.glob("workers/*/pages.jsonl")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            with contextlib.suppress(ValueError, KeyError):  # a torn last line: no page
                urls.append(json.loads(line)["url"])
    return urls


def _workers(pid: int) -> list[int]:
    """The worker processes among ``pid``'s children (psutil)."""
    found = []
    with contextlib.suppress(psutil.Error):
        for child in psutil.Process(pid).children():
            with contextlib.suppress(psutil.Error):  # gone since the listing
                if any("worker" in part for part in child.cmdline()):
                    found.append(child.pid)
    return found


def _wait(proc: subprocess.Popen[bytes], timeout: float) -> tuple[int | None, str]:
    try:
        _, err = proc.communicate(timeout=timeout)
        return proc.returncode, err.decode(errors="replace")
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate()
        return None, err.decode(errors="replace")


def _hurt(kind: str, proc: subprocess.Popen[bytes], server: RedisServer, rng: random.Random) -> str:
    db = redis.Redis.from_url(server.url)
    try:
        if kind == "kill-worker":
            workers = _workers(proc.pid)
            if not workers:
                return "no worker alive"
            os.kill(rng.choice(workers), signal.SIGKILL)
        elif kind == "kill-crawl":
            os.killpg(proc.pid, signal.SIGKILL)
        elif kind == "pause":
            db.execute_command("CLIENT", "PAUSE", rng.randint(2000, 8000))
        elif kind == "garbage":
            keys = list(db.scan_iter(match="*fc:*", count=1000))
            if not keys:
                return "no keys yet"
            key = rng.choice(sorted(keys))
            if db.type(key) == b"hash" and (fields := db.hkeys(key)):
                db.hset(key, rng.choice(sorted(fields)), "not-a-number{")
            else:
                db.delete(key)
                db.set(key, "garbage\xff")
            return key.decode(errors="replace")
    finally:
        db.close()
    return ""


def trial(kind: str, seed: int, args: argparse.Namespace, base: Path, proxy: str) -> dict:
    rng = random.Random(seed)
    web = GeneratedWeb(args.pages_in_web, args.hosts, 5)
    work = base / f"{kind}-{seed}"
    (work / "redis").mkdir(parents=True)
    server = RedisServer(work / "redis")
    out = work / "run"
    cmd = [sys.executable, "-m", "focuscrawl", "crawl", "--seeds", *web.home_urls(4),
           "--proxy", proxy, "--frontier", server.url, "--out", str(out), "--workers", "2",
           "--max-pages", str(args.budget), "--delay", "0.02", "--strategy", "bfs", "--quiet"]  # fmt: skip
    row = {"kind": kind, "tracebacks": 0, "hang": False, "note": ""}
    try:
        proc = subprocess.Popen(
            cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV, start_new_session=True
        )
        # the fault at a random moment once the workers run (pages.jsonl is flushed at the
        # commits, every 500 results: its lines cannot time a 150-page crawl)
        deadline = time.monotonic() + args.timeout
        while proc.poll() is None and time.monotonic() < deadline and not list(out.glob("workers/*/run.json")):
            time.sleep(0.02)
        time.sleep(rng.uniform(0.05, 1.5))
        if proc.poll() is None:
            row["note"] = _hurt(kind, proc, server, rng) or f"{kind} done"
            row["hurt"] = True
        else:
            row["note"] = "ended before the fault"
            row["hurt"] = False
        rc, err = _wait(proc, args.timeout)
        row["tracebacks"] += err.count("Traceback")
        row["hang"] = rc is None
        for _ in range(args.resumes):
            if rc == 0:
                break
            resume = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "focuscrawl",
                    "crawl",
                    "--out",
                    str(out),
                    "--resume",
                    "--quiet",
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                env=ENV,
                start_new_session=True,
            )
            rc, err = _wait(resume, args.timeout)
            row["tracebacks"] += err.count("Traceback")
            row["hang"] = row["hang"] or rc is None
        urls = worker_urls(out)
        row["ended"] = rc == 0
        row["lost"] = len(set(urls)) < args.budget
        row["doubled"] = len(urls) != len(set(urls))
        row["pages"] = len(urls)
        if rc != 0 and err.strip():
            row["note"] += " | " + err.strip().splitlines()[-1][:120]
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--trials", type=int, default=3, help="trials a kind (3)")
    parser.add_argument(
        "--kinds", default=",".join(KINDS), help="comma-separated, of " + ", ".join(KINDS)
    )
    parser.add_argument("--budget", type=int, default=150, help="pages a crawl (150)")
    parser.add_argument("--pages-in-web", type=int, default=1500)
    parser.add_argument("--hosts", type=int, default=20)
    parser.add_argument(
        "--resumes", type=int, default=3, help="resumes at most after the fault (3)"
    )
    parser.add_argument(
        "--timeout", type=float, default=120.0, help="a run not ended by then is a hang (120 s)"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("-v", "--verbose", action="store_true", help="a line per trial")
    args = parser.parse_args()
    kinds = [k for k in args.kinds.split(",") if k]
    base = Path(tempfile.mkdtemp(prefix="fault-audit-"))
    rows = []
    faults = ["--generated", str(args.pages_in_web), "--hosts", str(args.hosts), "--seed", "5"]
    try:
        with ReplayProcess([], log_path=base / "req.tsv", faults_args=faults) as replay:
            for kind in kinds:
                for i in range(args.trials):
                    row = trial(kind, args.seed * 1000 + i, args, base, replay.proxy_url)
                    rows.append(row)
                    if args.verbose:
                        print(json.dumps(row), flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)
    print(f"{'kind':12} {'trials':>6} {'hurt':>5} {'ended':>6} {'nothing lost':>13} {'nothing doubled':>16} "
          f"{'tracebacks':>10} {'hangs':>6}")  # fmt: skip
    for kind in kinds:
        mine = [r for r in rows if r["kind"] == kind]
        full = kind != "garbage"
        print(f"{kind:12} {len(mine):6} {sum(r.get('hurt', False) for r in mine):5} {sum(r['ended'] for r in mine):6} "
              f"{sum(not r['lost'] for r in mine) if full else '-':>13} "
              f"{sum(not r['doubled'] for r in mine):>16} "
              f"{sum(r['tracebacks'] > 0 for r in mine):>10} {sum(r['hang'] for r in mine):>6}")  # fmt: skip


if __name__ == "__main__":
    main()
