"""The shared crawl's fault audit (issue 40): how often each kind of fault was survived.

Two parts, both against real redis-servers and the replay server on 127.0.0.1:

1. **The fault tests, rerun.** Each test of ``tests/test_workers*.py`` that kills,
   stalls, forges or races is run ``--trials`` times (``pytest --full``); each one
   itself asserts that nothing was lost (every URL recorded once in the union of the
   workers' files) and nothing doubled. Printed: per kind, tests, runs, passed, failed.
2. **Garbage under the crawl's keys.** A small shared crawl is run, its keys saved;
   then for every kind of key (its name with the numbers taken out) and two kinds of
   garbage (the key replaced by a string; a hash's first field, or a key of another
   type, made text that is no number) the keys are restored, spoiled, and the crawl
   resumed. Counted: exit codes, tracebacks, hangs (90 s), and whether the pages
   recorded before are all still there, each once.

    python benchmarks/fault_audit.py                 # both parts, 3 trials (~15 min)
    python benchmarks/fault_audit.py --trials 1 --part garbage
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from fault_moments import worker_urls  # noqa: E402  (its one reader of the workers' pages: a torn last line is no page)

# kind -> the tests that make that fault (each asserts nothing lost, nothing doubled)
KINDS: dict[str, list[str]] = {
    "kills (kill -9 of a worker or the seeder, resume)": [
        "tests/test_workers.py::test_a_worker_killed_loses_nothing_and_writes_nothing_twice",
        "tests/test_workers.py::test_a_worker_killed_mid_layer_leaves_the_layers_as_they_were",
        "tests/test_workers.py::test_a_dead_worker_never_restarted_gives_its_claim_back",
        "tests/test_workers.py::test_a_dead_workers_claim_comes_back_once_and_fences_it",
        "tests/test_workers.py::test_a_dead_workers_journaled_batch_is_delivered_by_whoever_retires_it",
        "tests/test_workers.py::test_a_hosts_crawl_delay_holds_across_a_dead_workers_handover",
    ],
    "stalls (SIGSTOP past a lease, CLIENT PAUSE, signals)": [
        "tests/test_workers_trust.py::test_a_stalled_worker_leaves_no_tail_and_asks_no_host_it_lost",
        "tests/test_workers.py::test_a_late_renewal_holds_the_partitions_again_unless_another_took_them",
        "tests/test_workers.py::test_a_worker_that_lost_its_leases_does_not_commit",
        "tests/test_workers_faults.py::test_a_redis_paused_for_less_than_a_lease_stops_no_crawl",
        "tests/test_workers_faults.py::test_an_idle_worker_stops_on_a_signal_and_the_crawl_ends_exactly",
        "tests/test_workers_redis_faults.py::test_an_idle_worker_stopped_by_a_signal_then_resumed_adds_the_seeds",
    ],
    "Redis lost or back empty": [
        "tests/test_workers_faults.py::test_redis_lost_mid_crawl_is_one_line_a_worker_and_no_traceback",
        "tests/test_workers_faults.py::test_a_resume_after_redis_lost_the_crawl_is_one_line_and_publishes_nothing",
        "tests/test_workers_redis_faults.py::test_redis_back_empty_mid_crawl_is_one_line_and_resume_does_not_republish",
    ],
    "forged keys (dead worker, seeder, model path, protocol, garbage numbers)": [
        "tests/test_workers_trust.py::test_a_forged_dead_worker_cuts_back_only_its_own_directory",
        "tests/test_workers_trust.py::test_a_forged_model_path_in_redis_loads_no_pickle",
        "tests/test_workers_trust.py::test_a_worker_of_another_protocol_is_refused_in_one_line",
        "tests/test_workers_faults.py::test_a_seeder_key_set_by_hand_is_one_line",
        "tests/test_workers_redis_faults.py::test_numbers_spoiled_under_a_crawls_keys_are_one_line_naming_the_key",
    ],
    "races (joining early or late, handovers, batches delivered twice)": [
        "tests/test_workers_faults.py::test_a_worker_started_before_the_seeders_first_commit_stays_and_works",
        "tests/test_workers_faults.py::test_a_worker_joining_a_busy_crawl_takes_a_fair_share",
        "tests/test_workers.py::test_an_outbox_batch_delivered_twice_is_applied_once",
        "tests/test_workers.py::test_partitions_have_one_owner",
        "tests/test_workers.py::test_a_hosts_crawl_delay_holds_across_a_partition_handover",
        "tests/test_workers.py::test_workers_record_every_url_once_and_keep_politeness",
    ],
}


def rerun_tests(trials: int) -> None:
    nodes = [n for tests in KINDS.values() for n in tests]
    results: dict[str, Counter[str]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for trial in range(trials):
            xml = Path(tmp) / f"t{trial}.xml"
            subprocess.run([sys.executable, "-m", "pytest", "-q", "--full", "-p", "no:cacheprovider",
                            f"--junitxml={xml}", *nodes], cwd=ROOT, capture_output=True)  # fmt: skip
            for case in ET.parse(xml).getroot().iter("testcase"):
                name = case.get("name", "").split("[")[0]
                bad = case.find("failure") is not None or case.find("error") is not None
                skipped = case.find("skipped") is not None
                outcome = "failed" if bad else "skipped" if skipped else "passed"
                results.setdefault(name, Counter())[outcome] += 1
    print(f"\nThe fault tests, {trials} trial(s) each (each asserts nothing lost, nothing doubled):")
    print(f"{'kind':<72} {'tests':>5} {'runs':>5} {'passed':>6} {'failed':>6}")
    for kind, tests in KINDS.items():
        names = [t.split("::")[1] for t in tests]
        c: Counter[str] = Counter()
        for n in names:
            c.update(results.get(n, Counter()))
        print(f"{kind:<72} {len(tests):>5} {sum(c.values()):>5} {c['passed']:>6} {c['failed']:>6}")
        for n in names:
            if results.get(n, Counter())["failed"]:
                print(f"    failed: {n} ({results[n]['failed']} of {sum(results[n].values())})")


def garbage_sweep() -> None:
    import redis as redis_client

    from focuscrawl.replay.generated import GeneratedWeb
    from focuscrawl.replay.process import ReplayProcess
    from tests.redis_server import RedisServer

    base = Path(tempfile.mkdtemp(prefix="fault-audit-"))
    web = GeneratedWeb(300, 5, 3)
    server = RedisServer(base)
    db = redis_client.Redis.from_url(server.url)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    tally: Counter[str] = Counter()
    rows = []
    try:
        args = ["--generated", "300", "--hosts", "5", "--seed", "3"]
        with ReplayProcess([], log_path=base / "req.tsv", faults_args=args) as replay:
            out = base / "run"
            subprocess.run([sys.executable, "-m", "focuscrawl", "crawl", "--seeds", *web.home_urls(2),
                            "--proxy", replay.proxy_url, "--frontier", server.url, "--out", str(out),
                            "--delay", "0", "--workers", "1", "--max-pages", "30", "--quiet"],
                           env=env, capture_output=True, timeout=300, check=True)  # fmt: skip
            prefix = json.loads((out / "run.json").read_text())["crawl"]
            keys = sorted(k.decode() for k in db.scan_iter(match=f"{prefix}:*"))
            saved = {k: db.dump(k) for k in keys}
            shutil.copytree(out, base / "saved")
            before = worker_urls(out)
            kinds: dict[str, str] = {}
            for k in keys:
                kinds.setdefault(re.sub(r"\d+", "N", k[len(prefix):]), k)
            for key in kinds.values():
                for how in ("string", "hash"):
                    db.flushall()
                    shutil.rmtree(out)
                    shutil.copytree(base / "saved", out)
                    for k, v in saved.items():
                        db.restore(k, 0, v, replace=True)
                    kind = db.type(key).decode()
                    if how == "string":
                        db.delete(key)
                        db.set(key, "garbage\xff")
                    elif kind == "hash":
                        fields = db.hkeys(key)
                        if not fields:
                            continue
                        db.hset(key, fields[0], "not-a-number{")
                    else:
                        db.delete(key)
                        db.hset(key, "x", "y")
                    outcome = _resume(out, env)
                    after = worker_urls(out)
                    kept = Counter(after)
                    lost = sum(1 for u in before if kept[u] == 0)
                    doubled = sum(1 for n in kept.values() if n > 1)
                    tally["trials"] += 1
                    tally[outcome[0]] += 1
                    tally["lost"] += bool(lost)
                    tally["doubled"] += bool(doubled)
                    rows.append((key[len(prefix):], kind, how, *outcome, lost, doubled))
    finally:
        server.stop()
        shutil.rmtree(base, ignore_errors=True)
    print(f"\nGarbage under the crawl's keys: {len(rows)} trials ({len(rows) // 2} kinds of key x 2 kinds of garbage, "
          "each then `crawl --resume`):")  # fmt: skip
    for key, kind, how, outcome, code, lost, doubled in rows:
        print(f"  {key:<44} {kind:<5} -> {how:<6} {outcome:<9} exit {code!s:<4} lost {lost} doubled {doubled}")
    print(f"  total: {tally['trials']} trials; went on {tally['went-on']}, one line {tally['one-line']}, "
          f"traceback {tally['traceback']}, hang {tally['hang']}; trials with pages lost {tally['lost']}, "
          f"with pages doubled {tally['doubled']}")  # fmt: skip


def _resume(out: Path, env: dict[str, str]) -> tuple[str, int | None]:
    try:
        r = subprocess.run([sys.executable, "-m", "focuscrawl", "crawl", "--out", str(out), "--resume",
                            "--max-pages", "60", "--quiet"], env=env, capture_output=True, timeout=90,
                           text=True)  # fmt: skip
    except subprocess.TimeoutExpired:
        return "hang", None
    if "Traceback" in r.stderr:
        return "traceback", r.returncode
    return ("went-on" if r.returncode == 0 else "one-line"), r.returncode


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--trials", type=int, default=3, help="runs of each fault test (default: %(default)s)")
    p.add_argument("--part", choices=["tests", "garbage", "both"], default="both")
    args = p.parse_args()
    started = time.monotonic()
    if args.part in ("garbage", "both"):
        garbage_sweep()
    if args.part in ("tests", "both"):
        rerun_tests(args.trials)
    print(f"\n({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
