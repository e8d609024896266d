"""Where an ``auto`` crawl's time goes: one crawl of ``bench_render.py``'s web at a time,
timed from the inside (issue 37's speed goal).

    python benchmarks/render_timeline.py [--modes never,auto] [--rounds 2] [--buckets]

Each crawl is a fresh child process (``focuscrawl crawl`` in-process there, as
``bench_render.py`` runs it: BFS, no delay, 16 connections, 4 a host, through the replay
proxy) whose fetcher, renderer and pipe are wrapped to note when things happen. Reported
per crawl: the crawl loop's seconds and the crawler process's own CPU (``os.times``: its
children, the browser's processes, not included); when the browser's pool was ready;
when the first render ended and how many HTML fetches had ended by then; when the last
plain page and the last render ended; a render's median time from being handed to the
renderer to its DOM, and of it in its context (a tab got), and a script's fetch; the pipe's writes; how late the
event loop ran a 5 ms sleep. ``--buckets``: the same, every 0.25 s of the crawl.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench_render

from focuscrawl.fetch import fetcher as fetcher_module
from focuscrawl.fetch.render import browser as browser_module
from focuscrawl.fetch.render import pipe as pipe_module
from focuscrawl.replay.process import ReplayProcess

NOTES: dict[str, Any] = {"fetches": [], "subs": [], "renders": [], "contexts": [], "writes": [], "lags": [], "ready": None}


def _instrument(t0: list[float]) -> None:
    """Wrap the fetcher, the renderer and the pipe to note their times (this process only)."""
    render, fetch, warm, send, tab = (browser_module.BrowserRenderer.render, fetcher_module.HttpFetcher.fetch,
                                      browser_module.BrowserRenderer._warm, pipe_module.DevToolsPipe.send,
                                      browser_module.BrowserRenderer._tab)  # fmt: skip
    got: dict[Any, float] = {}  # a render's task -> when it got its tab

    async def timed_tab(self: Any) -> Any:
        found = await tab(self)
        got[asyncio.current_task()] = time.perf_counter() - t0[0]
        return found

    async def timed_render(self: Any, result: Any) -> bytes:
        start = time.perf_counter()
        try:
            return await render(self, result)
        finally:
            end = time.perf_counter() - t0[0]
            NOTES["renders"].append((start - t0[0], end))
            NOTES["contexts"].append(end - got.pop(asyncio.current_task(), end))

    async def timed_fetch(self: Any, url: str, *, any_type: bool = False, conditional: Any = None) -> Any:
        start = time.perf_counter()
        result = await fetch(self, url, any_type=any_type, conditional=conditional)
        NOTES["subs" if any_type else "fetches"].append((start - t0[0], time.perf_counter() - t0[0]))
        return result

    async def timed_warm(self: Any) -> None:
        await warm(self)
        NOTES["ready"] = time.perf_counter() - t0[0]

    async def timed_send(self: Any, method: str, params: Any = None, session: Any = None) -> Any:
        writer = self._writer
        if not getattr(writer, "_timed", False):
            write = writer.write

            def timed_write(data: bytes) -> None:
                start = time.perf_counter()
                write(data)
                NOTES["writes"].append(time.perf_counter() - start)

            writer.write, writer._timed = timed_write, True
        return await send(self, method, params, session)

    browser_module.BrowserRenderer.render = timed_render  # type: ignore[method-assign]
    fetcher_module.HttpFetcher.fetch = timed_fetch  # type: ignore[method-assign]
    browser_module.BrowserRenderer._warm = timed_warm  # type: ignore[method-assign]
    browser_module.BrowserRenderer._tab = timed_tab  # type: ignore[method-assign]
    pipe_module.DevToolsPipe.send = timed_send  # type: ignore[method-assign]


def one_crawl(mode: str, proxy: str, seed: str, out: str) -> dict[str, Any]:
    """One crawl in this process, timed; what :func:`report` prints."""
    t0 = [time.perf_counter()]
    _instrument(t0)
    run = asyncio.run

    def timed_run(main: Any, **kwargs: Any) -> Any:
        async def both() -> Any:
            async def lag() -> None:
                while True:
                    start = time.perf_counter()
                    await asyncio.sleep(0.005)
                    NOTES["lags"].append((start - t0[0], time.perf_counter() - start - 0.005))

            t0[0] = time.perf_counter()
            lagging = asyncio.ensure_future(lag())
            try:
                return await main
            finally:
                lagging.cancel()

        return run(both(), **kwargs)

    asyncio.run = timed_run
    os.environ["FOCUSCRAWL_FETCH__RENDER"] = mode
    from focuscrawl.cli import main

    argv = ["crawl", "--seeds", seed, "--out", out, "--strategy", "bfs", "--max-pages", "2400", "--proxy", proxy,
            "--concurrency", "16", "--quiet", "--delay", "0", "--per-host", "4"]  # fmt: skip
    before = os.times()
    main(argv)
    after = os.times()
    summary = json.loads((Path(out) / "run.json").read_text(encoding="utf-8"))["summary"]
    return {"mode": mode, "loop": summary["elapsed"], "pages": summary["fetched"],
            "cpu": after.user + after.system - before.user - before.system, **NOTES}  # fmt: skip


def _median(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0


def report(r: dict[str, Any], buckets: bool) -> None:
    ends = sorted(end for _, end in r["fetches"])
    renders = r["renders"]
    line = f"  {r['mode']:>5}: crawl loop {r['loop']:.2f} s, {r['pages']} pages, crawler CPU {r['cpu']:.2f} s"
    if renders:
        first = min(end for _, end in renders)
        last = max(end for _, end in renders)
        writes = sorted(r["writes"])
        line += (f"; browser ready at {r['ready'] or 0:.2f} s, first render ended at {first:.2f} s "
                 f"({sum(1 for e in ends if e < first)} HTML fetches ended by then), last HTML fetch {ends[-1]:.2f} s, "
                 f"last render {last:.2f} s; a render {_median([e - s for s, e in renders]) * 1000:.0f} ms from "
                 f"hand-off to DOM, {_median(r['contexts']) * 1000:.0f} ms of it in its context (medians), a script's fetch {_median([e - s for s, e in r['subs']]) * 1000:.1f} ms; "
                 f"{len(writes)} pipe writes, median {_median(writes) * 1e6:.0f} us, {sum(writes) * 1000:.0f} ms in all")  # fmt: skip
    lags = [lag for _, lag in r["lags"]]
    print(f"{line}; the loop late by {_median(lags) * 1000:.1f} ms (median)")
    if not buckets:
        return
    at = 0.0
    while at < r["loop"]:
        done = sum(1 for e in ends if at <= e < at + 0.25)
        rendered = sum(1 for _, e in renders if at <= e < at + 0.25)
        rendering = sum(1 for s, e in renders if s <= at + 0.125 < e)
        late = [lag for t, lag in r["lags"] if at <= t < at + 0.25]
        print(f"    {at:5.2f} s: {done:4d} HTML fetches ended, {rendered:3d} renders ended, {rendering:3d} handed "
              f"to the renderer, loop late {_median(late) * 1000:5.1f} ms (median)")  # fmt: skip
        at += 0.25


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--modes", default="never,auto")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--buckets", action="store_true", help="the timeline every 0.25 s")
    parser.add_argument("--one", nargs=4, metavar=("MODE", "PROXY", "SEED", "OUT"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:  # a child: one crawl, its notes as JSON on the last line
        result = one_crawl(*args.one)
        print(json.dumps(result))
        return
    modes = [m for m in args.modes.split(",") if m]
    env = {k: v for k, v in os.environ.items() if k not in bench_render._PROXY_VARS}
    with tempfile.TemporaryDirectory(prefix="render-timeline-") as tmp:
        archive, seed, shells = bench_render.build_web(Path(tmp) / "render.warc.gz", 20, 60, 0.1)
        print(f"bench_render.py's web: 1200 pages, {shells} script-built; load {os.getloadavg()[0]:.2f}")
        with ReplayProcess([archive]) as web:
            for n in range(args.rounds):
                for mode in modes[n % len(modes) :] + modes[: n % len(modes)]:
                    out = str(Path(tmp) / f"{mode}-{n}")
                    child = subprocess.run([sys.executable, __file__, "--one", mode, web.proxy_url, seed, out],
                                           env=env, capture_output=True, text=True, check=True)  # fmt: skip
                    report(json.loads(child.stdout.strip().splitlines()[-1]), args.buckets)
        print(f"load {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
