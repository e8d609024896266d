"""The parse path's CPU per page from two source trees, side by side (issue 36's
speed check): what reading a page's manners costs.

    python benchmarks/bench_parse_ab.py /path/to/old/tree /path/to/new/tree [--rounds 8]

Every HTML page of the WebKB archive is parsed as the recorder does, in a child
process per tree and round with its own ``PYTHONPATH``: ``page_from_fetch`` (the
links-only parse bfs and OPIC get, and the full parse of a strategy or model that
reads text), then, where the tree has them, the page's manners
(``MannersPolicy.read``) and the links it follows (``MannersPolicy.followed``).
The trees alternate (and which goes first alternates between rounds); printed:
each tree's median CPU us per page, and the median over rounds of new / old
within a round (the machine drifts between rounds more than within one). An old
tree: ``git archive main | tar -x -C /tmp/old``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

TESTWEB = Path(__file__).resolve().parents[2] / "shared" / "testweb"

CHILD = r"""
import json, sys, time
from collections import Counter
from focuscrawl.parse.html import page_from_fetch
from focuscrawl.replay.archive import iter_responses
from focuscrawl.settings import FetchSettings
from focuscrawl.types import FetchResult
try:
    from focuscrawl.parse.manners import NONE, MannersPolicy
except ImportError:
    MannersPolicy = None
results = []
for r in iter_responses(sys.argv[1]):
    ctype = r.header("content-type")
    if r.status == 200 and "html" in ctype.lower():
        results.append(FetchResult(r.url, r.url, status=200, body=r.body, content_type=ctype,
                                   headers=dict(r.headers)))
policy = MannersPolicy(FetchSettings(), Counter()) if MannersPolicy else None
out = {}
for links_only in (True, False):
    for result in results[:50]:  # warm the caches as a crawl's first pages do
        page_from_fetch(result, links_only=links_only)
    start = time.process_time()
    for _ in range(int(sys.argv[2])):
        for result in results:
            page = page_from_fetch(result, links_only=links_only)
            if policy is not None:
                manners = policy.read(page)
                policy.followed(page.links, manners, Counter())
    cpu = time.process_time() - start
    out["links-only" if links_only else "full"] = 1e6 * cpu / (len(results) * int(sys.argv[2]))
print(json.dumps(out))
"""


def _run(tree: Path, archive: Path, repeat: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    out = subprocess.run([sys.executable, "-c", CHILD, str(archive), str(repeat)], env=env,
                         check=True, capture_output=True, text=True)  # fmt: skip
    result: dict[str, float] = json.loads(out.stdout)
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("old", type=Path)
    ap.add_argument("new", type=Path)
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=1, help="passes over the pages per child")
    ap.add_argument("--archive", type=Path, default=TESTWEB / "webkb.warc.gz")
    args = ap.parse_args()
    runs: dict[str, list[dict[str, float]]] = {"old": [], "new": []}
    for i in range(args.rounds):
        order = ("old", "new") if i % 2 == 0 else ("new", "old")
        for name in order:
            runs[name].append(_run(getattr(args, name), args.archive, args.repeat))
        print(f"round {i + 1}: " + "  ".join(
            f"{name} {runs[name][-1]['links-only']:.0f}/{runs[name][-1]['full']:.0f} us" for name in ("old", "new")
        ), flush=True)  # fmt: skip
    for mode in ("links-only", "full"):
        old = [r[mode] for r in runs["old"]]
        new = [r[mode] for r in runs["new"]]
        ratio = statistics.median(n / o for n, o in zip(new, old, strict=True))
        print(f"{mode}: old {statistics.median(old):.1f} us/page, new {statistics.median(new):.1f} us/page, "
              f"new/old by round {ratio:.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
