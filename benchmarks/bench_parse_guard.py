"""How long one hostile page holds the event loop in the parser, with and without the
nesting guard (focuscrawl.parse.guard), and what the guard costs on real pages.

Hostile pages are parsed by ``page_from_fetch`` (what the engine calls, on its
event loop) while a 1 ms ticker runs on the same loop: the longest gap between
two ticks is how long every other fetch stood still. Without the guard the
parser is timed on smaller pages only (it is quadratic: minutes at full size).
Real pages: every page of the WebKB archive (or the generated sample web), parsed
with and without the guard; the pages whose links or text differ are counted.

    python benchmarks/bench_parse_guard.py [--archive ../shared/testweb/webkb.warc.gz]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from unittest import mock

from focuscrawl.parse import guard, html
from focuscrawl.replay.archive import iter_responses
from focuscrawl.replay.sample import build_sample_archive
from focuscrawl.types import FetchResult

TESTWEB = Path(__file__).resolve().parents[2] / "shared" / "testweb"

# name -> page of about `size` bytes
HOSTILE: dict[str, Callable[[int], str]] = {
    "nested <div><span> (the issue's 200k levels, 2.2 MB)": lambda size: "<div><span>" * (size // 11),
    "misnested <em>x10 <div> </em>x10": lambda size: ("<em>" * 10 + "<div>" + "</em>" * 10) * (size // 95),
    "nested <ul><li>": lambda size: "<ul><li>x" * (size // 9),
    "stray </div> then nested <div>": lambda size: "</div>" * (size // 22) + "<div>" * (size // 22),
    "<a href> links to one target": lambda size: '<a href="/x">x</a>' * (size // 18),
}


def _result(body: str) -> FetchResult:
    data = ("<!DOCTYPE html><html><body>" + body).encode()
    return FetchResult("http://h.org/", "http://h.org/", status=200, body=data, content_type="text/html")


async def _stall(result: FetchResult) -> tuple[float, int]:
    """The longest gap between ticks of a 1 ms ticker while the page is parsed on the loop."""
    gaps: list[float] = []
    stop = asyncio.Event()

    async def ticker() -> None:
        last = time.perf_counter()
        while not stop.is_set():
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0.01)
    page = html.page_from_fetch(result)
    await asyncio.sleep(0.01)
    stop.set()
    await task
    return max(gaps), len(page.links)


def _unguarded() -> mock._patch[Callable[..., guard.Guarded]]:
    return mock.patch.object(html, "guard_html", lambda text: guard.Guarded(text, 0, None))


def hostile(sizes: list[int], unguarded_sizes: list[int]) -> None:
    print("hostile page                                          size     guarded stall   unguarded")
    for name, make in HOSTILE.items():
        for size in sizes:
            stall, links = asyncio.run(_stall(_result(make(size))))
            print(f"{name:52s} {size / 1e6:4.1f} MB  {stall * 1000:8.0f} ms", end="")
            print(f"   ({links} links)")
        for size in unguarded_sizes:
            with _unguarded():
                t0 = time.perf_counter()
                html.page_from_fetch(_result(make(size)))
                took = time.perf_counter() - t0
            print(f"{'':52s} {size / 1e6:4.2f} MB  {'':>8s}      {took * 1000:8.0f} ms unguarded")


def real(archive: Path) -> None:
    """Each page parsed with and without the guard, alternately (so that load changes and
    warm caches fall on both alike); pages whose links or text differ are counted."""
    records = [r for r in iter_responses(archive) if "html" in (r.content_type or "")]
    results = [
        FetchResult(r.url, r.url, status=200, body=r.body, content_type=r.content_type or "text/html")
        for r in records
    ]
    timings = {"guarded": 0.0, "unguarded": 0.0}
    changed = 0
    unguarded = _unguarded()
    for result in results:
        outputs = {}
        for label in ("guarded", "unguarded"):
            if label == "unguarded":
                unguarded.start()
            t0 = time.perf_counter()
            page = html.page_from_fetch(result)
            timings[label] += time.perf_counter() - t0
            if label == "unguarded":
                unguarded.stop()
            outputs[label] = (tuple(link.url for link in page.links), page.text)
        changed += outputs["guarded"] != outputs["unguarded"]
    size = sum(len(r.body) for r in results) / 1e6
    print(f"\n{archive.name}: {len(results)} HTML pages, {size:.1f} MB")
    for label, took in timings.items():
        print(f"  {label:9s}: {took:6.2f} s, {len(results) / took:7.0f} pages/s")
    overhead = timings["guarded"] / timings["unguarded"] - 1
    print(f"  guard overhead {overhead:+.1%}; pages whose links or text changed: {changed}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--archive", type=Path, default=TESTWEB / "webkb.warc.gz")
    parser.add_argument("--sizes", type=float, nargs="+", default=[2.2, 5.0], help="MB")
    parser.add_argument("--unguarded-sizes", type=float, nargs="+", default=[0.05, 0.1, 0.2], help="MB")
    parser.add_argument("--real-only", action="store_true", help="only the real pages")
    args = parser.parse_args()
    if not args.real_only:
        hostile([int(s * 1e6) for s in args.sizes], [int(s * 1e6) for s in args.unguarded_sizes])
    archive = args.archive
    if not archive.exists():
        archive = build_sample_archive(Path(tempfile.mkdtemp()) / "sample.warc.gz")
    real(archive)


if __name__ == "__main__":
    main()
