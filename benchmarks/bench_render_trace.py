"""Where a render's CPU goes inside Chromium: the browser's own trace (issue 37).

    python benchmarks/bench_render_trace.py [--pages 200] [--contexts 8] [--top 40]

``bench_cdp.py`` gives the CPU a render by process, read from ``/proc``; this script
asks the browser itself, through the DevTools protocol's ``Tracing`` domain, which
tasks of which thread spent it. The pages are ``bench_cdp.py``'s script shells,
answered from memory by the same fetcher stand-in, rendered by the crawler's own
renderer (:class:`focuscrawl.fetch.render.browser.BrowserRenderer`) at the defaults,
after 30 renders to warm up. Reported, per render: the thread CPU time (the trace's
``tdur``) of each process's threads, and the trace events with the most CPU of their
own (their thread time less that of the events inside them), with the process and the
thread they ran on.

Tracing costs CPU itself (the tracing service's process is reported too), so the
totals are a little above ``bench_cdp.py``'s; what the trace tells is the split.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_cdp import MemoryFetcher, build_pages

from focuscrawl.fetch.render.browser import BrowserRenderer
from focuscrawl.fetch.render.fetcher import browser_path
from focuscrawl.settings import FetchSettings

CATEGORIES = ("toplevel", "blink", "v8", "loading", "navigation", "devtools.timeline", "ipc", "mojom", "benchmark")
WARM = 30


async def trace(pages: int, contexts: int) -> list[dict[str, Any]]:
    """The trace events of ``pages`` renders (after :data:`WARM` renders untraced)."""
    shells_by_url = build_pages(pages + WARM)
    settings = FetchSettings(render="always", render_contexts=contexts)
    browser = browser_path(settings)
    if browser is None:
        raise SystemExit("no headless Chromium on the PATH (apt-get install chromium-headless-shell)")
    renderer = BrowserRenderer(settings, MemoryFetcher(shells_by_url), browser)  # type: ignore[arg-type]
    shells = [r for u, r in shells_by_url.items() if u.endswith(".html")]
    slots = asyncio.Semaphore(contexts)

    async def one(result: Any) -> bytes:
        async with slots:
            return await renderer.render(result)

    events: list[dict[str, Any]] = []
    complete: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    try:
        renderer.warm()
        await asyncio.gather(*(one(r) for r in shells[:WARM]))
        pipe = renderer._pipe
        assert pipe is not None
        own = renderer._on_browser

        def on_browser(method: str, params: dict[str, Any]) -> None:
            if method == "Tracing.dataCollected":
                events.extend(params["value"])
            elif method == "Tracing.tracingComplete":
                complete.set_result(None)
            else:
                own(pipe, method, params)

        pipe.on(None, on_browser)
        config = {"includedCategories": list(CATEGORIES), "recordMode": "recordAsMuchAsPossible"}
        await pipe.send("Tracing.start", {"traceConfig": config, "transferMode": "ReportEvents"})
        doms = await asyncio.gather(*(one(r) for r in shells[WARM:]))
        await pipe.send("Tracing.end", {})
        await asyncio.wait_for(complete, 60.0)
    finally:
        await renderer.close()
    built = sum(1 for d in doms if b"<h1>page" in d)
    print(f"{len(doms)} renders traced ({built} built), {contexts} contexts, {len(events)} trace events; "
          f"load {os.getloadavg()[0]:.2f}")  # fmt: skip
    return events


def split(events: list[dict[str, Any]]) -> tuple[collections.Counter[tuple[str, str]], collections.Counter[tuple[str, str, str]]]:
    """Thread CPU (µs) by (process, thread) and CPU of their own (µs) by (process, thread, event)."""
    processes: dict[int, str] = {}
    threads: dict[tuple[int, int], str] = {}
    spans: dict[tuple[int, int], list[tuple[int, int, int, str]]] = collections.defaultdict(list)
    for e in events:
        if e.get("ph") == "M" and e.get("name") == "process_name":
            processes[e["pid"]] = e["args"]["name"]
        elif e.get("ph") == "M" and e.get("name") == "thread_name":
            threads[(e["pid"], e["tid"])] = e["args"]["name"]
        elif e.get("ph") == "X" and "dur" in e:
            spans[(e["pid"], e["tid"])].append((e["ts"], e["ts"] + e["dur"], e.get("tdur", e["dur"]), e["name"]))
    by_thread: collections.Counter[tuple[str, str]] = collections.Counter()
    own: collections.Counter[tuple[str, str, str]] = collections.Counter()
    for key, rows in spans.items():
        where = (processes.get(key[0], str(key[0])), threads.get(key, str(key[1])))
        rows.sort(key=lambda r: (r[0], -r[1]))
        inner = [0] * len(rows)
        stack: list[tuple[int, int]] = []  # (end, index) of the events open at this one's start
        for i, (start, end, cpu, _) in enumerate(rows):
            while stack and stack[-1][0] <= start:
                stack.pop()
            if stack:
                inner[stack[-1][1]] += cpu
            else:
                by_thread[where] += cpu
            stack.append((end, i))
        for i, (_, _, cpu, name) in enumerate(rows):
            own[(*where, name)] += cpu - inner[i]
    return by_thread, own


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pages", type=int, default=200, help="renders traced")
    parser.add_argument("--contexts", type=int, default=FetchSettings().render_contexts)
    parser.add_argument("--top", type=int, default=40, help="trace events listed")
    args = parser.parse_args(argv)
    events = asyncio.run(trace(args.pages, args.contexts))
    by_thread, own = split(events)
    print("\nthread CPU a render, ms (the trace's top-level events):")
    for (process, thread), us in by_thread.most_common():
        if us / args.pages >= 10:
            print(f"  {us / 1000 / args.pages:6.2f}  {process} / {thread}")
    print(f"  {sum(by_thread.values()) / 1000 / args.pages:6.2f}  in all")
    print(f"\nevents with the most CPU of their own, ms a render (top {args.top}):")
    for (process, thread, name), us in own.most_common(args.top):
        print(f"  {us / 1000 / args.pages:6.3f}  {process} / {thread}: {name}")


if __name__ == "__main__":
    main()
