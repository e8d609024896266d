"""What ``fetch.render`` costs: pages/s of a live crawl with ``never`` / ``auto`` /
``always`` on a generated web where 10 % of the pages are built by a script (issue 37).

    python benchmarks/bench_render.py [--rounds 3] [--contexts 2] [--realweb]
        [--browser /usr/bin/chromium-headless-shell,/usr/bin/chromium] [--by-process]

The web (written to a temporary WARC, served by the replay server in a child process):
``--hosts`` hosts of pages with ~200 words and 6 links each; a tenth of the pages
(``--share``) are shells (``<div id="root">`` and a script, served too, writing the
text and the links): ``auto`` renders those and only those. Each crawl is a fresh
``focuscrawl crawl`` child through the replay proxy (BFS, no delay, 16 connections,
4 per host) that runs until no page of the web is left to fetch: a crawl stopped by a
page budget cancels the pages still rendering (``cancelled_in_flight``), so ``auto``
would be measured on fewer renders than it met. The modes take turns within a round
and the order rotates between rounds, so all see the same machine load.

``--realweb``: the same web under real-Web conditions, as ``bench_realweb.py`` makes
them: the replay server waits 0.25 s before every answer (:data:`LATENCY`), 0.5 % of the
URLs never answer and 2 % trickle their body (:data:`STRAGGLERS`, drawn per URL, the
same in every run), and the crawler runs as users run it: its default politeness delay
and connections per host, 30 s for a fetch. The loopback figure (no latency, no delay)
is the crawler's CPU cost; this one is what a user waits for.

Reported per mode, median of the rounds: pages/s of the crawl loop (``run.json``
elapsed) and from start to exit, CPU ms per page of the crawler (the browser's
processes included: they are the crawler's children), pages rendered (the WARC's
``conversion`` records), and the peak
proportional resident memory (PSS) of the browser (every Chromium process under the
crawler, sampled every 0.25 s: ``--sample-every``) in total and per browser context (``fetch.render_contexts``). Then
``auto`` / ``never`` and ``always`` / ``never`` by round (the goal: ``auto`` at least
40 % of ``never``), and the CPU a render costs beyond a plain page (the mode's CPU less
``never``'s CPU a page for each of its pages, over the pages rendered).

``--browser A,B``: each rendering mode runs once with each browser (``fetch.browser``)
in every round, in turns, so browsers are compared A/B on the same load.
``--trees A,B``: every mode runs once with each source tree (a checkout of focuscrawl,
put first on the crawl's ``PYTHONPATH``) in every round, in turns: code compared A/B on
the same load (``auto`` of a tree against ``never`` of the same tree).
``--by-process``: the CPU a render costs in each process of the browser (``/proc``
deltas of every process under the crawler, sampled with the memory: the browser
process, its renderers, the GPU and network processes, Playwright's Node driver),
over the pages rendered, and the crawler's own process.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psutil
from warcio.warcwriter import WARCWriter

from focuscrawl.replay.process import ReplayProcess
from focuscrawl.replay.sample import _write
from focuscrawl.settings import FetchSettings

ROOT = Path(__file__).resolve().parents[1]
MODES = ("never", "auto", "always")
_PROXY_VARS = ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "no_proxy", "NO_PROXY")
LATENCY = ["--latency", "*=0.25"]
STRAGGLERS = ["--fault", "*=timeout:p=0.005", "--fault", "*=slow:p=0.02:chunk=1000:pause=1"]
_WORDS = ("the", "a", "of", "and", "kitten", "cat", "market", "river", "school", "energy", "report", "city")


def build_web(path: Path, hosts: int, per_host: int, share: float) -> tuple[Path, str, int]:
    """A WARC of ``hosts`` x ``per_host`` pages, ``share`` of them script-built;
    returns the archive, the seed and the number of script-built pages."""
    rng = random.Random(37)
    urls = [f"http://h{h}.render.example/p{i}.html" for h in range(hosts) for i in range(per_host)]
    seed = "http://h0.render.example/"
    shells = 0
    with open(path, "wb") as fh:
        writer = WARCWriter(fh, gzip=True, warc_version="WARC/1.1")
        headers = [("Date", "Mon, 01 Jun 2020 00:00:00 GMT")]

        def add(url: str, content_type: str, body: bytes) -> None:
            _write(writer, url, "200 OK", [*headers, ("Content-Type", content_type)], body)

        homes = " ".join(f'<a href="http://h{h}.render.example/p0.html">h{h}</a>' for h in range(hosts))
        add(seed, "text/html", f"<!DOCTYPE html><html><body>{homes}</body></html>".encode())
        for h in range(hosts):
            add(f"http://h{h}.render.example/robots.txt", "text/plain", b"User-agent: *\nDisallow:\n")
        for n, url in enumerate(urls):
            text = " ".join(rng.choice(_WORDS) for _ in range(200))
            links = " ".join(f'<a href="{u}">{u.rsplit("/", 1)[1]}</a>' for u in rng.sample(urls, 6))
            content = f"<h1>page {n}</h1><p>{text}</p>{links}"
            if rng.random() < share:
                shells += 1
                script = url.rsplit("/", 1)[0] + f"/static/p{n}.js"
                js = f"document.getElementById('root').innerHTML = {json.dumps(content)};"
                add(script, "application/javascript", js.encode())
                body = f'<div id="root"></div><script src="/static/p{n}.js"></script>'
            else:
                body = f"{content}<script>window.seen = 1;</script>"
            add(url, "text/html", f"<!DOCTYPE html><html><head><title>p{n}</title></head><body>{body}</body></html>".encode())
    return path, seed, shells


def _tree_pss(root: int) -> int:
    """Proportional resident KiB (PSS: a page shared by n processes counts 1/n in each)
    of every Chromium process under ``root`` (psutil)."""
    total = 0
    with contextlib.suppress(psutil.Error):
        for proc in psutil.Process(root).children(recursive=True):
            with contextlib.suppress(psutil.Error):  # gone since the listing
                if proc.name().startswith("chrom"):
                    total += proc.memory_full_info().pss // 1024
    return total



def _kind(proc: psutil.Process, root: int, name: str) -> str:
    """What a process under the crawler is, from its name and command line (Chromium
    rewrites its processes' command lines into one string: ``--type=`` is searched in it)."""
    if proc.pid == root:
        return "crawler (Python)"
    try:
        flags = " ".join(proc.cmdline())
    except psutil.Error:
        return "gone"
    if name.startswith("node"):
        return "Playwright's Node driver"
    if "--type=" not in flags:
        return "browser" if name.startswith("chrom") else f"other ({name})"
    kind = flags.split("--type=", 1)[1].split()[0]
    if kind == "utility":
        sub = flags.split("--utility-sub-type=", 1)[1].split()[0] if "--utility-sub-type=" in flags else "?"
        return "network process" if sub.startswith("network.") else f"utility ({sub})"
    return {"renderer": "renderers", "gpu-process": "GPU process", "zygote": "zygotes"}.get(kind, kind)


def _tree_cpu(root: int, seen: dict[int, tuple[str, float]], kinds: dict[tuple[int, str], str]) -> None:
    """Update ``seen`` (pid -> kind, CPU seconds so far) for ``root`` and every process
    under it; ``kinds`` keeps each (pid, name)'s kind (a name changes when a process execs)."""
    try:
        top = psutil.Process(root)
        procs = [top, *top.children(recursive=True)]
    except psutil.Error:
        return
    for proc in procs:
        with contextlib.suppress(psutil.Error):  # gone since the listing
            name, used = proc.name(), proc.cpu_times()
            if (proc.pid, name) not in kinds:
                kinds[proc.pid, name] = _kind(proc, root, name)
            kind = kinds[proc.pid, name]
            if kind == "gone" and proc.pid in seen:  # exiting (its command line unread, its name cut to
                kind = seen[proc.pid][0]  # 15 characters): still what it was
            seen[proc.pid] = (kind, used.user + used.system)


def _cpu_of(pid: int) -> float:
    try:
        used = psutil.Process(pid).cpu_times()
    except psutil.Error:
        return 0.0
    return float(used.user + used.system)


def run_mode(mode: str, args: argparse.Namespace, proxy: str, seed: str, out: Path, browser: str = "",
             tree: str = "", server: int = 0) -> dict[str, Any]:  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k not in _PROXY_VARS}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [tree or str(ROOT), os.environ.get("PYTHONPATH")]))
    env["FOCUSCRAWL_FETCH__RENDER"] = mode
    if browser:
        env["FOCUSCRAWL_FETCH__BROWSER"] = browser
    env["FOCUSCRAWL_FETCH__RENDER_CONTEXTS"] = str(args.contexts)
    command = [
        sys.executable, "-m", "focuscrawl", "crawl", "--seeds", seed, "--out", str(out), "--strategy", "bfs",
        "--max-pages", str(args.hosts * args.per_host * 2), "--proxy", proxy, "--concurrency", "16", "--quiet",
    ]  # fmt: skip
    if args.realweb:  # the crawler's own delay and connections per host
        env["FOCUSCRAWL_FETCH__FETCH_TIMEOUT"] = "30"
    else:
        command += ["--delay", "0", "--per-host", "4"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    served = _cpu_of(server) if server else 0.0
    start = time.perf_counter()
    # (the tree is the working directory too: ``python -m`` puts it first on sys.path)
    child = subprocess.Popen(command, env=env, cwd=tree or None, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = 0
    stop = threading.Event()
    seen: dict[int, tuple[str, float]] = {}
    kinds: dict[tuple[int, str], str] = {}

    def sample() -> None:
        nonlocal peak
        while not stop.wait(args.sample_every):
            peak = max(peak, _tree_pss(child.pid))
            if args.by_process:
                _tree_cpu(child.pid, seen, kinds)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, err = child.communicate()
    wall = time.perf_counter() - start
    stop.set()
    sampler.join()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    served = _cpu_of(server) - served if server else 0.0
    if child.returncode != 0:
        raise SystemExit(f"crawl ({mode}) failed ({child.returncode}): {err.decode(errors='replace')[-800:]}")
    summary = json.loads((out / "run.json").read_text(encoding="utf-8"))["summary"]
    counters = summary.get("counters", {})
    return {
        "pages": summary["fetched"], "crawl": summary["elapsed"], "wall": wall,
        "rendered": gzip.decompress((out / "corpus.warc.gz").read_bytes()).count(b"WARC-Type: conversion"),
        "failed": sum(v for k, v in counters.items() if k.startswith("render_failed")),
        "at_once": counters.get("render_settled_at_once", 0),
        "peak_kib": peak, "cpu": cpu, "server_cpu": served, "processes": list(seen.values()),
    }  # fmt: skip


def _variants(modes: list[str], browsers: list[str], trees: list[str]) -> list[tuple[str, str, str, str]]:
    """(label, mode, browser, tree): ``never`` once, each rendering mode once per browser;
    with several trees, each of those once per tree."""
    out = []
    for mode in modes:
        if mode == "never" or len(browsers) < 2:
            out.append((mode, mode, browsers[0] if browsers else ""))
            continue
        out += [(f"{mode}:{os.path.basename(b)}", mode, b) for b in browsers]
    if len(trees) < 2:
        return [(label, mode, browser, trees[0] if trees else "") for label, mode, browser in out]
    return [(f"{label}@{n}", mode, browser, tree) for n, tree in enumerate(trees) for label, mode, browser in out]


def _baseline(label: str) -> str:
    """The ``never`` run a label is compared with (the same tree's)."""
    return "never" + (label[label.index("@") :] if "@" in label else "")


def _by_process(label: str, rs: list[dict[str, Any]]) -> None:
    """CPU a render by kind of process (median over the rounds), and PSS a context."""
    kinds: dict[str, list[float]] = {}
    counts: dict[str, list[int]] = {}
    for r in rs:
        if not r["rendered"]:
            continue
        total: dict[str, float] = {}
        number: dict[str, int] = {}
        for kind, cpu in r["processes"]:
            total[kind] = total.get(kind, 0.0) + cpu
            number[kind] = number.get(kind, 0) + 1
        for kind, cpu in total.items():
            kinds.setdefault(kind, []).append(cpu / r["rendered"] * 1000)
            counts.setdefault(kind, []).append(number[kind])
    if not kinds:
        return
    print(f"  {label}: CPU a render by process (all of the process's CPU over the pages rendered; "
          f"the crawler's: all its CPU over the pages rendered too)")  # fmt: skip
    for kind in sorted(kinds, key=lambda k: -statistics.median(kinds[k])):
        ms = kinds[kind]
        print(f"    {kind:<28} {statistics.median(ms):6.1f} ms ({min(ms):.1f}-{max(ms):.1f}), "
              f"{max(counts[kind])} process(es)")  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--hosts", type=int, default=20)
    parser.add_argument("--per-host", type=int, default=60, help="pages of each host in the web")
    parser.add_argument("--share", type=float, default=0.1, help="share of script-built pages")
    contexts = FetchSettings().render_contexts
    parser.add_argument("--contexts", type=int, default=contexts, help=f"fetch.render_contexts (its default: {contexts})")
    parser.add_argument("--modes", default=",".join(MODES))
    parser.add_argument("--browser", default="", help="fetch.browser; several, comma-separated: compared A/B")
    # every 50 ms the sampling (PSS reads each Chromium process's smaps) took 0.6 s of CPU during
    # an auto crawl of 3.4 s, beside the crawl on the same two cores: auto was measured slower
    parser.add_argument("--sample-every", type=float, default=0.25, help="seconds between memory/CPU samples")
    parser.add_argument("--trees", default="", help="source trees of focuscrawl, comma-separated: compared A/B")
    parser.add_argument("--by-process", action="store_true", help="the CPU a render costs in each process")
    parser.add_argument("--realweb", action="store_true", help="latency, stragglers and the default delay")
    args = parser.parse_args(argv)
    modes = [m for m in args.modes.split(",") if m]
    variants = _variants(modes, [b for b in args.browser.split(",") if b], [t for t in args.trees.split(",") if t])
    labels = [label for label, _, _, _ in variants]
    with tempfile.TemporaryDirectory(prefix="bench-render-") as tmp:
        work = Path(tmp)
        archive, seed, shells = build_web(work / "render.warc.gz", args.hosts, args.per_host, args.share)
        runs: dict[str, list[dict[str, Any]]] = {label: [] for label in labels}
        faults = [*LATENCY, *STRAGGLERS] if args.realweb else []
        with ReplayProcess([archive], faults_args=faults) as web:
            total = args.hosts * args.per_host
            where = "real-Web conditions (0.25 s latency, stragglers, default delay)" if args.realweb else "loopback"
            print(f"web: {total} pages on {args.hosts} hosts, {shells} script-built ({shells / total:.1%}), {where}; "
                  f"every page reachable crawled, render_contexts {args.contexts}, {os.cpu_count()} CPUs")  # fmt: skip
            for r in range(args.rounds):
                order = variants[r % len(variants) :] + variants[: r % len(variants)]
                for label, mode, browser, tree in order:
                    out = work / f"{label.replace(':', '-').replace('@', '-')}-{r}"
                    res = run_mode(mode, args, web.proxy_url, seed, out, browser, tree, web.pid)
                    runs[label].append(res)
                    print(f"  round {r + 1} {label:>6}: {res['pages'] / res['crawl']:7.1f} pages/s crawl loop, "
                          f"{res['pages'] / res['wall']:7.1f} start to exit, {res['rendered']} rendered "
                          f"({res['failed']} failed, {res['at_once']} at once), browser peak {res['peak_kib'] / 1024:.0f} MiB, "
                          f"{res['cpu'] / res['pages'] * 1000:.2f} ms CPU a page (the server {res['server_cpu'] / res['pages'] * 1000:.2f})")  # fmt: skip
    print("\nmedians:")
    for label in labels:
        rs = runs[label]
        loop = statistics.median(r["pages"] / r["crawl"] for r in rs)
        wall = statistics.median(r["pages"] / r["wall"] for r in rs)
        peak = max(r["peak_kib"] for r in rs) / 1024
        cpu = statistics.median(r["cpu"] / r["pages"] * 1000 for r in rs)
        served = statistics.median(r["server_cpu"] / r["pages"] * 1000 for r in rs)
        per_context = f", {peak / args.contexts:.0f} MiB per context" if peak else ""
        print(f"  {label:>6}: {loop:7.1f} pages/s crawl loop, {wall:7.1f} start to exit, {cpu:.2f} ms CPU a page "
              f"(the server {served:.2f}); "
              f"browser peak PSS {peak:.0f} MiB{per_context}")  # fmt: skip
    for label in labels:
        base = _baseline(label)
        if label == base or base not in runs:
            continue
        ratios = [a["pages"] / a["crawl"] / (b["pages"] / b["crawl"]) for a, b in zip(runs[label], runs[base], strict=True)]
        walls = [a["pages"] / a["wall"] / (b["pages"] / b["wall"]) for a, b in zip(runs[label], runs[base], strict=True)]
        print(f"  {label}/{base} by round: crawl loop {statistics.median(ratios):.2f} "
              f"({min(ratios):.2f}-{max(ratios):.2f}) [{' '.join(f'{x:.2f}' for x in ratios)}], "
              f"start to exit {statistics.median(walls):.2f}")  # fmt: skip
        # a render's CPU: the mode's CPU less the plain crawl's CPU a page for every page, by round
        renders = [
            (a["cpu"] - b["cpu"] / b["pages"] * a["pages"]) / a["rendered"] * 1000
            for a, b in zip(runs[label], runs[base], strict=True) if a["rendered"]
        ]  # fmt: skip
        if renders:
            print(f"  {label}: {statistics.median(renders):.0f} ms CPU a render beyond a plain page "
                  f"({min(renders):.0f}-{max(renders):.0f}) [{' '.join(f'{x:.0f}' for x in renders)}]")  # fmt: skip
    if args.by_process:
        print("\nby process:")
        for label in labels:
            _by_process(label, runs[label])


if __name__ == "__main__":
    main()
